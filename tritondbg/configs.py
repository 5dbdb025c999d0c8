"""Autotune configs: find autotuners, parse ``--config K=V,...``, match and pin one config per kernel.

Under the interpreter the autotuner cannot benchmark ("0 active drivers" on a CPU-only machine), so the
runner pins exactly one config: the one asked for, else the case's, else the first one left after the
kernel's own early pruning. The choice is recorded and printed. On a GPU, configs are pinned only when asked.
"""
from __future__ import annotations

import ast
import contextlib
import threading
from typing import Any, Callable, Iterator

from tritondbg import lookalike
from tritondbg.lookalike import FN_CHAIN
from tritondbg.errors import UsageError

# Launch options a triton.Config carries besides its kwargs.
CONFIG_ATTRS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def parse_config(text: str | None) -> dict[str, Any]:
    """``"BLOCK_M=64,num_warps=4"`` -> ``{"BLOCK_M": 64, "num_warps": 4}``; values parsed as Python literals."""
    if not text:
        return {}
    out: dict[str, Any] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad --config item {item!r}: expected KEY=VALUE[,KEY=VALUE...]")
        try:
            out[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            out[key.strip()] = value.strip()
    return out


def config_dict(config) -> dict[str, Any]:
    """A triton.Config as a flat dict: its kwargs plus the launch options that are set."""
    d = dict(config.kwargs)
    for attr in CONFIG_ATTRS:
        value = getattr(config, attr, None)
        if value is not None and not (attr == "num_ctas" and value == 1):  # 1 CTA is the norm: keep it quiet
            d[attr] = value
    return d


def config_str(d: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in d.items())


def find_autotuner(obj):
    """The Autotuner inside a kernel object (through @triton.heuristics wrappers), or None. A library's own
    autotuner that is no Triton Autotuner (AutoGPTQ's) is found as its adapter (``lookalike``)."""
    from triton.runtime.autotuner import Autotuner

    seen = 0
    while obj is not None and seen < FN_CHAIN:
        if isinstance(obj, Autotuner):
            return obj
        tuner = lookalike.adapter(obj)
        if tuner is not None:
            return tuner
        obj = getattr(obj, "fn", None)
        seen += 1
    return None


def jit_function(obj):
    """The jit function under autotuner / heuristics wrappers (the object whose ``.fn`` is a plain Python
    function: a JITFunction, or the interpreter's InterpretedFunction), or None."""
    for _ in range(FN_CHAIN):
        inner = getattr(obj, "fn", None)
        if inner is None:
            return None
        if hasattr(inner, "__code__"):
            return obj
        obj = inner
    return None


def heuristics_in(obj) -> list:
    """The @triton.heuristics wrappers along a kernel object's ``fn`` chain (``obj`` included), outermost first."""
    out, seen = [], 0
    while obj is not None and seen < FN_CHAIN:
        if isinstance(getattr(obj, "values", None), dict):
            out.append(obj)
        obj = getattr(obj, "fn", None)
        seen += 1
    return out


def kernel_name(obj) -> str:
    """The name of the @triton.jit function at the bottom of a kernel object."""
    seen = 0
    while hasattr(obj, "fn") and seen < FN_CHAIN:
        obj = obj.fn
        seen += 1
    return getattr(obj, "__name__", repr(obj))


def autotuners(kernels) -> dict[str, Any]:
    """kernel name -> Autotuner, for the kernels of a scenario that are autotuned."""
    out = {}
    for k in kernels:
        tuner = find_autotuner(k)
        if tuner is not None:
            out[kernel_name(k)] = tuner
    return out


def _matches(config, wanted: dict[str, Any]) -> bool:
    d = config_dict(config)
    return all(k in d and d[k] == v for k, v in wanted.items())


def autotune_key(tuner, args: tuple, kwargs: dict) -> tuple | None:
    """The key Triton 3.6-3.9's ``Autotuner.run`` files this call under (the key arguments, then every argument's
    dtype); None when it cannot be computed (another autotuner)."""
    try:
        given = {**dict(zip(tuner.arg_names, args)), **kwargs}
        given = {k: v for k, v in given.items() if k in tuner.arg_names}
        key = [given[k] for k in tuner.keys if k in given]
        key += [str(v.dtype) for v in given.values() if hasattr(v, "dtype")]
        return tuple(key)
    except Exception:  # noqa: BLE001
        return None


def cached_config(tuner, args: tuple, kwargs: dict):
    """The config ``tuner``'s cache already holds for this call (a key tuned before, or a table the program
    loaded into it: DeepSpeed's autotune cache), which the autotuner runs without timing; None without one."""
    cache = getattr(tuner, "cache", None)
    if not isinstance(cache, dict) or not cache or len(getattr(tuner, "configs", ())) <= 1:
        return None
    key = autotune_key(tuner, args, kwargs)
    try:
        return cache.get(key) if key is not None else None
    except TypeError:  # an unhashable key argument
        return None


def known_keys(tuner) -> set[str]:
    keys = set(CONFIG_ATTRS)
    for c in tuner.configs:
        keys.update(c.kwargs)
    return keys


def choose(tuner, name: str, wanted: dict[str, Any], *, strict: bool):
    """The config of ``tuner`` matching the ``wanted`` values (those of its keys).

    strict (``--config`` from the user): no listed config matches -> UsageError naming the valid ones.
    not strict (a case's config): build the config from the first listed one updated with the values.
    Returns None when ``wanted`` names none of this kernel's keys.
    """
    import triton

    mine = {k: v for k, v in wanted.items() if k in known_keys(tuner)}
    if not mine:
        return None
    for c in tuner.configs:
        if _matches(c, mine):
            return c
    if strict:
        raise UsageError(f"no config of {name} has {config_str(mine)}; {_listing(tuner.configs, mine)}")
    base = config_dict(tuner.configs[0])
    base.update(mine)
    kwargs = {k: v for k, v in base.items() if k not in CONFIG_ATTRS}
    attrs = {k: v for k, v in base.items() if k in CONFIG_ATTRS}
    return triton.Config(kwargs, **attrs)


LISTED_MAX = 12  # configs a refusal of --config lists one by one; past that, the values each key takes


def _listing(configs, wanted: dict[str, Any]) -> str:
    """The valid choices, in one readable line: each config when there are few, else the values of each key (the
    keys asked for first): xformers' 98 configs made a line of 9 KB (helper-53)."""
    if len(configs) <= LISTED_MAX:
        return "its configs: " + "; ".join(config_str(config_dict(c)) for c in configs)
    values: dict[str, list] = {}
    for c in configs:
        for k, v in config_dict(c).items():
            if v not in values.setdefault(k, []):
                values[k].append(v)
    keys = [k for k in wanted if k in values] + [k for k in values if k not in wanted]
    order = lambda v: (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))  # noqa: E731 - numbers by value
    shown = "; ".join(f"{k} in {', '.join(str(v) for v in sorted(values[k], key=order))}" for k in keys)
    return f"its {len(configs)} configs take {shown}"


def choose_requested(tuners: dict[str, Any], requested: dict[str, Any]) -> dict[str, Any]:
    """``--config`` for each autotuned kernel (name -> its listed config matching the values of its keys, or
    None). A kernel with no match keeps its usual decision when another kernel of the scenario has one: the
    kernels of one scenario share key names (attention's prefill and decode kernels both have BLOCK_N and
    num_warps) and a case launches only some of them. No kernel with a match: UsageError naming the configs."""
    out, errors = {}, []
    for name, tuner in tuners.items():
        try:
            out[name] = choose(tuner, name, requested, strict=True) if requested else None
        except UsageError as exc:
            out[name] = None
            errors.append(exc)
    if errors and not any(c is not None for c in out.values()):
        raise errors[0]
    return out


def check_keys(tuners: dict[str, Any], wanted: dict[str, Any]) -> None:
    """Every key of ``--config`` must belong to at least one autotuned kernel of the scenario."""
    if not wanted:
        return
    if not tuners:
        raise UsageError("--config given but this scenario has no autotuned kernel")
    all_keys = set().union(*(known_keys(t) for t in tuners.values()))
    unknown = sorted(set(wanted) - all_keys)
    if unknown:
        raise UsageError(f"unknown config key(s) {', '.join(unknown)}; valid keys: {', '.join(sorted(all_keys))}")


def _own_run_classes(base) -> list:
    """``base`` and each of its subclasses (at any depth) that defines its own ``run``."""
    out, todo = [base], list(base.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if "run" in vars(cls) and cls not in out:
            out.append(cls)
    return out


@contextlib.contextmanager
def every_autotuner_run(make: Callable[[Callable], Callable]) -> Iterator[None]:
    """Replace ``Autotuner.run``, and the ``run`` of every Autotuner subclass that defines its own, by
    ``make(that class's run)`` for a block. A library's subclass may benchmark in its own ``run`` without ever
    calling ``Autotuner.run`` (FlagGems' ``LibTuner``: "asked Triton's driver for 'get_device_interface'" under
    `tritondbg ir`, a GPU benchmark under the interpreter); one that calls ``super().run`` (fla's
    ``CachedAutotuner``) is handled once, at its own ``run``: the inner call goes straight to Triton's. A library's
    own autotuner that is no Autotuner (AutoGPTQ's) is sent to its adapter meanwhile (``lookalike.begin``), an
    Autotuner subclass with a run of its own: replaced as theirs are."""
    from triton.runtime.autotuner import Autotuner

    inside: set[int] = set()   # tuners running inside a replaced run now

    def guarded(original):
        replaced = make(original)

        def run(tuner, *args, **kwargs):
            if id(tuner) in inside:
                return original(tuner, *args, **kwargs)
            inside.add(id(tuner))
            try:
                return replaced(tuner, *args, **kwargs)
            finally:
                inside.discard(id(tuner))
        return run

    saved = {cls: vars(cls)["run"] for cls in _own_run_classes(Autotuner)}
    for cls, original in saved.items():
        cls.run = guarded(original)
    had_hook = "__init_subclass__" in vars(Autotuner)
    previous_hook = vars(Autotuner).get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        # a subclass defined inside the block (program mode pins for the program's life, and FlagGems defines its
        # LibTuner when the program imports it): its own run is replaced too, or it benchmarked on the CPU
        if previous_hook is not None:
            previous_hook.__get__(None, cls)(**kwargs)
        else:
            super(Autotuner, cls).__init_subclass__(**kwargs)
        if "run" in vars(cls) and cls not in saved:
            saved[cls] = vars(cls)["run"]
            cls.run = guarded(saved[cls])

    Autotuner.__init_subclass__ = classmethod(__init_subclass__)
    end_lookalikes = lookalike.begin()
    _DECIDING.append(make)
    try:
        yield
    finally:
        _DECIDING.pop()
        end_lookalikes()
        if had_hook:
            Autotuner.__init_subclass__ = previous_hook
        else:
            del Autotuner.__init_subclass__
        for cls, original in saved.items():
            cls.run = original


def call_kwargs(tuner, kwargs: dict) -> dict:
    """A launch's keyword arguments without the keys its autotuner's configs set: what the autotuner itself is
    called with (its pruner is)."""
    keys = known_keys(tuner)
    return {k: v for k, v in kwargs.items() if k not in keys}


@contextlib.contextmanager
def past_tuner(tuners, put_in: Callable) -> Iterator[None]:
    """While the block runs, a launch of an autotuned kernel's jit function that does not come through its
    autotuner (a host-side cache of the config it picked: vLLM's ``launch_autotuned`` keeps ``best_config``
    per key and then launches ``kernel.fn[grid](**kwargs, **config.all_kwargs())``) gets its keyword arguments
    from ``put_in(tuner, fn, args, kwargs)``: the config a pin or a sweep asks for, not the cached one (every
    config of a sweep ran the cached config, and the sweep said the case never launched the kernel)."""
    patched = []
    for tuner in tuners:
        fn = jit_function(tuner)
        if fn is None or "run" in vars(fn):
            continue

        def run(*args, grid, warmup, _fn=fn, _tuner=tuner, **kwargs):
            return type(_fn).run(_fn, *args, grid=grid, warmup=warmup, **put_in(_tuner, _fn, args, kwargs))
        fn.run = run  # an instance attribute: fn[grid](...) and the autotuner's self.fn.run(...) both call it
        patched.append(fn)
    try:
        yield
    finally:
        for fn in patched:
            vars(fn).pop("run", None)


class Withdrawn(BaseException):
    """A launch tried as one of several default candidates (``trial``) that refused its config (its own
    ``tl.static_assert``): the program never made it, so observers of launches (capture, interpret's checker)
    leave it out. ``error``: the exception the launch raised. A BaseException, so that an observer's ``except
    Exception`` passes it on; ``attach.observe`` turns it back into ``error`` for the pinning to try the next."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


_TRIAL = threading.local()


def in_trial() -> bool:
    """Whether the launch being made now is a default candidate that another may replace (``Withdrawn``)."""
    return bool(getattr(_TRIAL, "on", False))


@contextlib.contextmanager
def trial(on: bool) -> Iterator[None]:
    saved, _TRIAL.on = in_trial(), on
    try:
        yield
    finally:
        _TRIAL.on = saved


LISTED: dict[int, list] = {}  # id(autotuner) -> its own configs, while a pin has put one in their place
_DEFAULTS: dict[int, tuple[Any, str]] = {}  # id(autotuner) -> (Config, source) a launch asks for (default_pin)
_DECIDING: list = []  # one entry per every_autotuner_run block in effect


def listed_configs(tuner) -> list:
    """The configs ``tuner`` lists, also during a pinned launch (which lists only the pinned one meanwhile)."""
    return list(LISTED.get(id(tuner), tuner.configs) or ())


def deciding() -> bool:
    """Whether a tritondbg run or compile decides the configs of autotuned launches now (``Pinning`` /
    ``ir``'s decider): a launch through an autotuner then runs one config, never a benchmark."""
    return bool(_DECIDING)


@contextlib.contextmanager
def default_pin(tuner, config, source: str) -> Iterator[None]:
    """``tuner`` runs ``config`` during the block, unless the run chose another for it (a sweep, ``--config``):
    what a reproducer asks for, its launch's captured config."""
    _DEFAULTS[id(tuner)] = (config, source)
    try:
        yield
    finally:
        _DEFAULTS.pop(id(tuner), None)


def default_for(tuner) -> tuple[Any, str] | None:
    return _DEFAULTS.get(id(tuner))


def made_up(listed, tried) -> bool:
    """Whether an autotuner's pruning returned configs of its own: one of ``tried`` (its ``prune_configs``) equals
    no ``listed`` config by value (gemlite's pruner adds NUM_STAGES and clamps block sizes to the shape). The
    configs that can run are then those, not the listed ones."""
    have = [config_dict(c) for c in listed]
    return any(config_dict(c) not in have for c in tried)


def distinct(configs) -> list:
    """``configs`` without the repeats (by value; a pruner that clamps blocks to the shape makes equal ones)."""
    out, seen = [], []
    for c in configs:
        d = config_dict(c)
        if d not in seen:
            seen.append(d)
            out.append(c)
    return out


class NotApplicable(Exception):
    """A config that cannot be run here for a reason of its own, not a wrong answer (a reproducer that has no
    grid for it)."""


def not_applicable_reason(exc: BaseException) -> str | None:
    """Why a config cannot run at all (its own ``tl.static_assert``, a compile-time resource limit), or None
    when ``exc`` is an ordinary failure. Such a config is one the compiler would refuse, not a wrong answer."""
    import linecache
    import traceback

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, NotApplicable):
            return str(exc)
        frames = traceback.extract_tb(exc.__traceback__)
        for i, frame in enumerate(frames):
            if frame.name == "_new_static_assert":   # Triton's interpreter runs tl.static_assert as a plain assert
                where = frames[i - 1] if i else frame
                line = linecache.getline(where.filename, where.lineno).strip()
                msg = str(exc).strip()
                return f"tl.static_assert fails at {where.filename}:{where.lineno}: {line}" + (f" ({msg})" if msg else "")
        name = type(exc).__name__
        text = str(exc)
        # compiled mode: the compiler's own words for the same (Triton's autotuner skips exactly these)
        if name in ("OutOfResources", "CompileTimeAssertionFailure") or (
                name == "CompilationError" and "static_assert" in text.lower()):
            return f"{name}: {text.strip().splitlines()[-1] if text.strip() else ''}"
        exc = exc.__cause__ or exc.__context__
    return None


def nothing_to_sweep(scenario) -> str | None:
    """Why --all-configs has nothing to sweep in ``scenario``, known without running it (``spin has no autotune
    configs``): no kernel it lists is autotuned and no autotuned kernel can be reached from its launch wrappers
    (``autotuner_reachable``); None when it may have one (the sweep runs the cases to find those they launch).
    The one rule of the all-configs gate's skip and of ``interpret --all-configs``'s one-config run, both before
    any case runs (a kernel that hangs spent the gate's whole --timeout looking for launched autotuners)."""
    kernels = list(scenario.kernels)
    if autotuners(kernels):
        return None
    roots = [scenario.launch, *(c.launch for c in scenario.cases if c.launch is not None), *kernels]
    if autotuner_reachable(roots) is not False:
        return None
    names = list(dict.fromkeys(kernel_name(k) for k in kernels))
    return f"{', '.join(names) or 'the launch'} {'have' if len(names) > 1 else 'has'} no autotune configs"


# packages whose modules a search for a scenario's autotuners does not enter: their kernels are not the user's
_NOT_SEARCHED = frozenset({"torch", "triton", "tritondbg", "numpy", "_pytest", "pytest", "xdist", "rich", "click"})


def autotuner_reachable(roots, limit: int = 20000) -> bool | None:
    """Whether an autotuned kernel (a Triton Autotuner or a lookalike) can be reached from ``roots`` (a scenario's
    launch wrappers and kernels) without running anything: through the functions' modules, closures and
    ``functools.partial`` s, and the module-level names of those modules (a wrapper calling a library's wrapper
    reaches the library's module). False: none (a kernel without autotune configs: nothing to sweep); True: one;
    None: more than ``limit`` objects to look at, or an import a wrapper makes only when it runs cannot be seen
    (callers run the launch to find out)."""
    import functools
    import sys
    import types

    from tritondbg.interp.globals_check import closure_values

    stdlib = getattr(sys, "stdlib_module_names", frozenset())

    def searched(module_name) -> bool:
        name = str(module_name or "")
        top = name.split(".")[0]
        if name == "tritondbg.kernels" or name.startswith("tritondbg.kernels."):  # the bundled kernels
            return True
        return bool(top) and top not in _NOT_SEARCHED and top not in stdlib

    def names(namespace: dict) -> list:  # a module's (or a function's globals') names that may lead to a kernel
        if id(namespace) in seen or not searched(namespace.get("__name__")):
            return []
        seen.add(id(namespace))
        return [v for v in list(namespace.values())
                if isinstance(v, (types.FunctionType, types.ModuleType, functools.partial, type, dict, list, tuple,
                                  set, frozenset)) or hasattr(v, "fn") or hasattr(v, "run")]

    todo, seen, n = list(roots), set(), 0
    while todo:
        obj = todo.pop()
        if obj is None or id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool)):
            continue
        seen.add(id(obj))
        n += 1
        if n > limit:
            return None
        try:
            if find_autotuner(obj) is not None:
                return True
            if isinstance(obj, types.ModuleType):
                todo += names(vars(obj))
                continue
            if isinstance(obj, functools.partial):
                todo += [obj.func, *obj.args, *obj.keywords.values()]
                continue
            if isinstance(obj, types.MethodType):  # (``Function.apply``: its class's own methods too)
                todo += [obj.__func__, obj.__self__]
                continue
            if isinstance(obj, dict):  # a dispatch table (``{dtype: kernel}``)
                todo += list(obj.values())
                continue
            if isinstance(obj, (list, tuple, set, frozenset)):
                todo += list(obj)
                continue
            if isinstance(obj, type):  # a class's methods (an autograd Function's forward / backward)
                if searched(obj.__module__):
                    todo += [getattr(v, "__func__", v) for v in vars(obj).values()]
                continue
            if isinstance(obj, types.FunctionType):
                if searched(obj.__module__) and _names_autotune(obj.__code__):
                    return None  # an autotuner made when it runs: only running it tells
                todo += list(closure_values(obj).values())
                todo.append(getattr(obj, "__wrapped__", None))
                todo += [d for d in obj.__defaults__ or () if callable(d)]
                todo += names(obj.__globals__)  # its module's names (a module loaded outside sys.modules too)
                if searched(obj.__module__):  # a module the function imports when it runs
                    for name in _imports_in(obj):
                        if name in sys.modules:
                            todo.append(sys.modules[name])
                        elif searched(name):  # not imported yet: what it holds cannot be seen
                            return None
                continue
            inner = getattr(obj, "fn", None)  # a jit function (or heuristics wrapper): the Python function in it
            if inner is not None and inner is not obj:
                todo.append(inner)
            module = sys.modules.get(getattr(obj, "__module__", None) or "")
            if module is None and not isinstance(obj, type):
                module = sys.modules.get(getattr(type(obj), "__module__", "") or "")
            if module is not None:
                todo.append(module)
        except Exception:  # noqa: BLE001 - an object that refuses to be looked at: unknown, run to find out
            return None
    return False


def _names_autotune(code) -> bool:
    """Whether a function's code (its nested functions' included) names ``autotune``."""
    return "autotune" in code.co_names or any(_names_autotune(c) for c in code.co_consts if isinstance(c, type(code)))


def _imports_in(fn) -> list[str]:
    """The modules ``fn``'s body (and the functions defined in it) imports, as absolute names."""
    import dis
    import importlib.util

    package = fn.__globals__.get("__package__") or ""
    names, codes = [], [fn.__code__]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if hasattr(c, "co_code")]
        level = 0
        for ins in dis.get_instructions(code):
            if ins.opname in ("LOAD_CONST", "LOAD_SMALL_INT") and isinstance(ins.argval, int):
                level = ins.argval
            elif ins.opname == "IMPORT_NAME":
                name = ins.argval
                if level:
                    try:
                        name = importlib.util.resolve_name("." * level + name, package)
                    except (ImportError, ValueError):
                        continue
                names.append(name)
    return names
