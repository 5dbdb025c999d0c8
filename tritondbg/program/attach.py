"""Attach to every Triton launch of the running process: the one mechanism of program mode.

How another command uses it (in the process that runs the kernels; ``tritondbg.program.launcher`` starts a
user's program with this module imported before the program's first import)::

    from tritondbg.program import attach

    class Timer(attach.Observer):
        def wants(self, fn):                  # cheap, per kernel object; False = the launch runs untouched
            return True
        def around(self, launch, proceed):    # launch: attach.Launch (name, args, grid, config, call site)
            t0 = time.perf_counter()
            try:
                return proceed()              # the real launch (compiled or interpreted)
            finally:
                record(launch.name, time.perf_counter() - t0)

    attach.add_observer(Timer())              # installs the patches with the first observer
    ...
    attach.remove_observer(obs)               # uninstalls them with the last one

    # a Triton hook (launch_enter_hook, jit_post_compile_hook, ...) added beside other tools' hooks:
    undo = attach.chain_hook(triton.knobs.runtime, "launch_enter_hook", my_hook)
    undo()                                    # removes only what was added

Where the launch is seen. Triton's hook chains do not give what capture and the sanitizers need: the
interpreter calls none of ``launch_enter_hook`` / ``launch_exit_hook`` / ``jit_post_compile_hook`` (3.6 and
3.9), and in compiled mode ``launch_enter_hook`` gets the compiled kernel's metadata, not the bound arguments
before and after the launch. So the launch itself is wrapped: ``JITFunction.run`` (compiled; also Gluon
kernels, a subclass) and ``InterpretedFunction.run`` (interpreter), class attributes with the same
signature ``run(*args, grid, warmup, **kwargs)`` on 3.6 and 3.9. ``Autotuner.run`` is wrapped to know the
config that ran, and ``Autotuner._bench`` so that benchmark launches are not reported as the program's.
Triton's own hooks are used beside that through ``chain_hook``: a ``HookChain`` (3.5+: ``.add``/``.remove``)
gets ours added; a single slot (``jit_post_compile_hook`` on 3.6/3.9, every hook on 3.4) holding another
tool's hook gets a small chain that calls theirs first, then ours, and detaching puts theirs back (or, when
something replaced the chain meanwhile, only turns ours off). Compiled mode records each kernel's compile
options through ``jit_post_compile_hook`` (``compile_info``) and, from 3.8, the autotuner's decision and
timings through ``knobs.autotuning.listener`` (``autotune_info``; on 3.6 the config comes from the wrapper).

This module imports neither torch nor triton at import time (it is imported at the child's startup).
"""
from __future__ import annotations

import inspect
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from tritondbg.configs import FN_CHAIN, Withdrawn, in_trial, not_applicable_reason
from tritondbg.errors import not_users_file
from tritondbg.interp.frames import site_name
from tritondbg.program import stacks
from tritondbg.program.kernel_names import display_name
from tritondbg.program.stacks import describe_site, user_stack

_observers: list["Observer"] = []
_saved: dict[str, Any] = {}
class _Local(threading.local):
    """Per thread: ``bench`` (autotuner benchmark depth), ``tuners`` (Autotuner.run stack). Class defaults:
    a missing thread-local attribute read through getattr(..., default) costs an exception (~4 us)."""

    bench = 0
    tuners = None


_local = _Local()
_signatures: dict[int, inspect.Signature] = {}
_undo_hooks: list[Callable[[], None]] = []
compile_info: dict[str, dict[str, Any]] = {}   # "module.qualname" -> compile options (compiled mode)
autotune_info: dict[str, dict[str, Any]] = {}  # qualname -> the autotuner's decision (Triton >= 3.8, compiled)
_launches: dict[int, int] = {}                 # id(kernel) -> launches seen (every launch, wanted or not)
after_launch: list = [None]  # called after each launch (child.checkpoint: the counts written as launches go)
_fns: dict[int, Any] = {}                      # id(kernel) -> kernel


class Observer:
    """Sees launches: ``wants(fn)`` (fast, per kernel object) then ``around(launch, proceed)``."""

    def wants(self, fn) -> bool:
        return True

    def around(self, launch: "Launch", proceed: Callable[[], Any]) -> Any:
        return proceed()

    def tuner_enter(self, fn, tuner, args: tuple, kwargs: dict) -> None:
        """An autotuner over kernel ``fn`` (one this observer wants) was called with ``args`` / ``kwargs``: before
        it benchmarks (its timed runs write the outputs first) and before its hooks run."""


@dataclass
class Launch:
    """One launch of a ``@triton.jit`` kernel by the program (autotuner benchmark runs excluded)."""

    fn: Any                          # the JITFunction / InterpretedFunction launched
    name: str                        # the kernel function's __name__
    qualname: str
    module: str
    file: str                        # where the kernel is defined
    line: int
    args: dict[str, Any]             # kernel parameter -> value (defaults applied, constexprs included)
    options: dict[str, Any]          # launch options that are not parameters (num_warps, num_stages, ...)
    grid: Any                        # as passed: a tuple or a callable of the bound arguments
    config: Any = None               # the triton.Config the autotuner chose, when an autotuner launched it
    configs: tuple = ()              # every config that autotuner lists (a reproducer replays any of them)
    interpreted: bool = False
    stack: list[tuple[str, int, str]] = field(default_factory=list)  # user frames, innermost first
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def call_site(self) -> tuple[str, int, str] | None:
        return self.stack[0] if self.stack else None

    def resolved_grid(self) -> tuple[int, int, int]:
        grid = self.grid
        if callable(grid):
            grid = grid({**self.args, **self.options})
        grid = tuple(int(g) for g in grid)
        return (grid + (1, 1, 1))[:3]


# ---------------------------------------------------------------------------------------------------------
# observers
# ---------------------------------------------------------------------------------------------------------

def add_observer(obs: Observer) -> Observer:
    """Register ``obs`` for every later launch; the first observer installs the patches."""
    if not _observers:
        install()
    _observers.append(obs)
    return obs


def remove_observer(obs: Observer) -> None:
    if obs in _observers:
        _observers.remove(obs)
    if not _observers:
        uninstall()


def matches(fn, patterns) -> bool:
    """Whether a launched kernel is one ``--kernel`` names: a glob on its name or qualified name (no patterns:
    every kernel). The one rule interpret's checker and capture apply."""
    if not patterns:
        return True
    import fnmatch

    name = getattr(fn, "__name__", None) or fn.fn.__name__  # Inductor's kernels may have dropped ``fn.fn``
    qual = getattr(fn, "__qualname__", None) or name
    names = [name, qual]
    inner = getattr(fn, "fn", None)
    if inner is not None and getattr(inner, "__code__", None) is not None:
        from tritondbg.program.kernel_names import display_name, module_name

        # the name the summary prints (helper-143: two modules' _attn_fwd, "--kernel _attn_fwd__attn_qk_int8_per_
        # block_causal matched none of ... _attn_fwd__attn_qk_int8_per_block_causal"), and NAME__MODULE for any
        # kernel, the one that kept the bare name too
        names += [display_name(inner), module_name(inner)]
    return any(fnmatch.fnmatchcase(n, p) for n in names for p in patterns)


def counts() -> dict[str, int]:
    """Kernel name (``display_name``) -> launches seen while attached (every launch, observed or not)."""
    out: dict[str, int] = {}
    for key, n in list(_launches.items()):
        fn = _fns.get(key)
        inner = getattr(fn, "fn", None)
        if inner is not None and getattr(inner, "__code__", None) is not None:
            name = display_name(inner)
        else:
            name = getattr(fn, "__name__", None) or getattr(inner, "__name__", "?")
        out[name] = out.get(name, 0) + n
    return out


def installed() -> bool:
    return bool(_saved)


# ---------------------------------------------------------------------------------------------------------
# Triton hooks: add beside other tools', remove only ours
# ---------------------------------------------------------------------------------------------------------

class _Chained:
    """A single hook slot that held another tool's hook: call theirs, then ours (theirs' result is kept)."""

    def __init__(self, previous, ours):
        self.previous, self.ours = previous, ours

    def __call__(self, *args, **kwargs):
        result = self.previous(*args, **kwargs) if self.previous is not None else None
        if self.ours is not None:
            ours = self.ours(*args, **kwargs)
            result = result if result is not None else ours
        return result


def chain_hook(owner, attr: str, fn: Callable) -> Callable[[], None]:
    """Add ``fn`` to the hook ``owner.attr`` (e.g. ``triton.knobs.runtime, "launch_enter_hook"``) without
    removing what is there; returns a function that removes only ``fn``."""
    current = getattr(owner, attr, None)
    if hasattr(current, "add") and hasattr(current, "remove"):       # HookChain (Triton >= 3.5)
        current.add(fn)

        def undo():
            current.remove(fn)
            now = getattr(owner, attr, None)
            if now is not current and hasattr(now, "remove"):
                now.remove(fn)
        return undo
    chained = _Chained(current, fn)
    setattr(owner, attr, chained)

    def undo_slot():
        if getattr(owner, attr, None) is chained:
            setattr(owner, attr, chained.previous)
        else:                       # another tool wrapped our chain since: leave it, only turn ours off
            chained.ours = None
    return undo_slot


def _post_compile(*, key=None, repr=None, fn=None, compile=None, **_):
    """jit_post_compile_hook: remember the compile options of each kernel (compiled mode only)."""
    try:
        jit = getattr(fn, "jit_function", None)
        name = f"{getattr(fn, 'module', '?')}.{getattr(fn, 'name', '?')}"
        info = {k: compile.get(k) for k in ("num_warps", "num_stages", "num_ctas", "enable_fp_fusion")
                if compile and k in compile}
        info["repr"] = repr
        compile_info[name] = info
        if jit is not None:
            compile_info.setdefault(getattr(jit, "__name__", name), info)
    except Exception:  # noqa: BLE001 - a hook must never break the program's compile
        pass
    return None


def _autotuned(*, fn=None, key=None, best_config=None, configs_timings=None, duration=None, cache_hit=None, **_):
    """knobs.autotuning.listener (3.8+): the autotuner's decision, timings included."""
    try:
        name = getattr(getattr(fn, "fn", None), "__qualname__", "?")
        autotune_info[name] = {"key": repr(key), "best_config": repr(best_config), "cache_hit": cache_hit,
                               "duration_s": duration,
                               "timings_ms": {repr(c): t for c, t in (configs_timings or {}).items()}}
    except Exception:  # noqa: BLE001
        pass


# ---------------------------------------------------------------------------------------------------------
# the launch wrapper
# ---------------------------------------------------------------------------------------------------------

def _signature(fn) -> inspect.Signature:
    sig = _signatures.get(id(fn))
    if sig is None:
        sig = _signatures[id(fn)] = inspect.signature(fn.fn)
    return sig


def _make_launch(fn, args, kwargs, grid, interpreted: bool) -> Launch:
    sig = _signature(fn)
    params = {k: v for k, v in kwargs.items() if k in sig.parameters}
    options = {k: v for k, v in kwargs.items() if k not in sig.parameters}
    bound = sig.bind_partial(*args, **params)
    bound.apply_defaults()
    inner = fn.fn
    code = getattr(inner, "__code__", None)
    tuners = _local.tuners
    config, configs, extra = None, (), {}
    if tuners:
        tuner = tuners[-1]
        base = tuner
        for _ in range(FN_CHAIN):       # Autotuner -> (Heuristics ->) the kernel
            base = getattr(base, "fn", None)
            if base is fn:
                from tritondbg.configs import heuristics_in, listed_configs

                config, configs = getattr(tuner, "best_config", None), tuple(listed_configs(tuner))
                extra["heuristics"] = heuristics_in(tuner.fn)  # under the autotuner: they follow its config
                given = set(getattr(config, "kwargs", None) or {})
                given |= {n for h in extra["heuristics"] for n in getattr(h, "values", {})}
                # the program's keyword arguments: an early_config_prune may read them from its **kwargs
                extra["by_name"] = [k for k in params if k not in given]
                break
    return Launch(fn=fn, name=display_name(inner), qualname=getattr(inner, "__qualname__", "?"),
                  module=getattr(inner, "__module__", "?"), file=_tidy_path(code.co_filename) if code else "?",
                  line=code.co_firstlineno if code else 0, args=dict(bound.arguments), options=options,
                  grid=grid, config=config, configs=configs, interpreted=interpreted, stack=user_stack(), extra=extra)


def _tidy_path(file: str) -> str:
    """A kernel's file with ``..`` folded away where that names the same file (a program that put
    ``scripts/../fa`` on sys.path: helper-137 read ``scripts/../fa/...`` in captures.json beside ``fa/...``)."""
    tidy = os.path.normpath(file)
    try:
        return tidy if tidy == file or os.path.samefile(tidy, file) else file
    except OSError:  # <string>, a file gone since: as Python named it
        return file


def observe(key: int, fn, make_launch: Callable[[], "Launch | None"], launch: Callable[[], Any]) -> Any:
    """One launch of kernel ``fn`` (``key``: a stable id of the launching object): counted, then ``launch()`` run
    through the observers that want ``fn``, which see ``make_launch()`` (built only when one does; None: the launch
    runs unobserved). The one path for ``JITFunction.run`` and torch.compile's launches (``inductor.py``)."""
    n = _launches.get(key)
    if n is None:
        if not _launches:  # the program's first launch: tritondbg's modules are loaded now
            from tritondbg.program import tracebacks

            tracebacks.hide_from_pytest()
        _fns[key], n = fn, 0
    _launches[key] = n + 1
    try:
        return _through_observers(fn, make_launch, launch)
    except Withdrawn as exc:  # a default config tried and refused (tl.static_assert): the program never made it
        _launches[key] = n
        raise exc.error
    finally:
        if after_launch[0] is not None:
            after_launch[0]()


def _through_observers(fn, make_launch, launch):
    if len(_observers) == 1:
        if not _observers[0].wants(fn):
            return launch()
        chain = list(_observers)
    else:
        chain = [o for o in _observers if o.wants(fn)]
        if not chain:
            return launch()
    seen = make_launch()
    if seen is None:
        return launch()

    def call(i: int):
        if i == len(chain):
            if not in_trial():
                return launch()
            try:
                return launch()
            except Exception as exc:
                if not_applicable_reason(exc) is None:
                    raise
                raise Withdrawn(exc) from exc
        return chain[i].around(seen, lambda: call(i + 1))
    return call(0)


def _wrap_run(orig, interpreted: bool):
    def run(self, *args, grid, warmup, **kwargs):
        if warmup or not _observers or _local.bench:
            return orig(self, *args, grid=grid, warmup=warmup, **kwargs)
        # keyed by id: the JITFunction's __hash__ hashes its source key
        launch = lambda: orig(self, *args, grid=grid, warmup=warmup, **kwargs)  # noqa: E731
        if interpreted:  # numpy's "invalid value encountered in divide" named the interpreter's own line for a
            launch = _interpreted(launch)  # 0/0 in lanes the kernel never stores, under every program feature
        return observe(id(self), self, lambda: _make_launch(self, args, kwargs, grid, interpreted), launch)

    run.__wrapped__ = orig
    run._tritondbg = True
    return run


def _interpreted(launch):
    """numpy quiet, and programs that wait for each other stopped with a message (the sanitizers' spin watch, alone
    where they do not run: ``capture`` hung on a grid-wide barrier)."""
    def run():
        import numpy as np

        from tritondbg.interp.spins import Spins

        with np.errstate(over="ignore", invalid="ignore", divide="ignore"), Spins().active(None, None, None):
            return launch()
    return run


def _tuned_fn(tuner):
    """The kernel under an autotuner (through @triton.heuristics wrappers), or None."""
    base = tuner
    for _ in range(FN_CHAIN):
        base = getattr(base, "fn", None)
        if isinstance(base, _KERNEL_TYPES):
            return base
    return None


_KERNEL_TYPES: tuple = ()  # JITFunction (and InterpretedFunction): set by ``install``


def _wrap_tuner_run(orig):
    def run(self, *args, **kwargs):
        stack = _local.tuners
        if stack is None:
            stack = _local.tuners = []
        if not stack and _observers and not _local.bench:
            fn = _tuned_fn(self)
            for obs in _observers if fn is not None else ():
                if obs.wants(fn):
                    try:
                        obs.tuner_enter(fn, self, args, kwargs)
                    except Exception as exc:  # noqa: BLE001 - an observer must never stop the program
                        print(f"tritondbg: {type(obs).__name__}.tuner_enter: {type(exc).__name__}: {exc}",
                              file=sys.stderr)
        stack.append(self)
        try:
            return orig(self, *args, **kwargs)
        finally:
            stack.pop()

    run.__wrapped__ = orig
    return run


def _wrap_bench(orig):
    def _bench(self, *args, **kwargs):
        _local.bench += 1
        try:
            return orig(self, *args, **kwargs)
        finally:
            _local.bench -= 1

    _bench.__wrapped__ = orig
    return _bench


def install() -> None:
    """Patch the launch paths and add our Triton hooks (idempotent)."""
    if _saved:
        return
    import triton
    from triton.runtime import autotuner as A
    from triton.runtime import jit as J

    global _KERNEL_TYPES
    targets = [(J.JITFunction, "run", lambda o: _wrap_run(o, False))]
    _KERNEL_TYPES, stacks.kernel_interface = (J.JITFunction,), (J.KernelInterface,)
    try:
        from triton.runtime import interpreter as I

        targets.append((I.InterpretedFunction, "run", lambda o: _wrap_run(o, True)))
        _KERNEL_TYPES += (I.InterpretedFunction,)
    except Exception:  # noqa: BLE001 - an interpreter-less build: compiled launches only
        pass
    targets.append((A.Autotuner, "run", _wrap_tuner_run))
    if hasattr(A.Autotuner, "_bench"):
        targets.append((A.Autotuner, "_bench", _wrap_bench))
    for cls, attr, wrap in targets:
        orig = cls.__dict__[attr]
        wrapper = wrap(orig)
        _saved[(cls, attr)] = (orig, wrapper)
        setattr(cls, attr, wrapper)
    from tritondbg.program import inductor

    inductor.install()  # torch.compile's kernels (compiled mode: they never call JITFunction.run)
    knobs = getattr(triton, "knobs", None)
    runtime = getattr(knobs, "runtime", None)
    if runtime is not None and hasattr(runtime, "jit_post_compile_hook"):
        _undo_hooks.append(chain_hook(runtime, "jit_post_compile_hook", _post_compile))
    tuning = getattr(knobs, "autotuning", None)
    # Triton >= 3.8 (before: Autotuner.run's wrapper). Not under the interpreter: with a listener set, 3.9's
    # Autotuner.run looks for a JITFunction under an InterpretedFunction and fails.
    if tuning is not None and hasattr(tuning, "listener") and not getattr(runtime, "interpret", False):
        _undo_hooks.append(chain_hook(tuning, "listener", _autotuned))


def uninstall() -> None:
    """Undo ``install``: our class patches and only the hooks we added. A patch another tool put over ours
    stays (ours under it passes launches straight through once no observer is left)."""
    for (cls, attr), (orig, wrapper) in list(_saved.items()):
        if cls.__dict__.get(attr) is wrapper:
            setattr(cls, attr, orig)
    _saved.clear()
    from tritondbg.program import inductor

    inductor.uninstall()
    while _undo_hooks:
        _undo_hooks.pop()()


def current_test() -> str | None:
    """The pytest test running the launch (``PYTEST_CURRENT_TEST``: "path::name[params] (call)"), or None: pytest
    captures the finding's line of a test that passes, and the call site is often a library's frame."""
    if "_pytest.runner" not in sys.modules:  # a program a test started inherits the variable: not its own test
        return None
    value = os.environ.get("PYTEST_CURRENT_TEST")
    return value.rsplit(" (", 1)[0] if value else None


def say_interrupted(launch, index: int, exc: BaseException | None = None, frame=None,
                    how: str = "interrupted") -> None:
    """One line: the kernel line and program the interpreter was running when the user pressed Ctrl-C (``exc``)
    or SIGTERM ended the program (``frame``: where the signal landed; a CI timeout ends a stuck run so). Where it
    was: frames.interrupted_at, as a timeout's place (watchdog.where)."""
    from tritondbg.interp.findings import nth as _nth
    from tritondbg.interp.frames import interrupted_at
    from tritondbg.program import child

    nth = _nth(index + 1)  # ``index``: launches of it before this one
    where, pid, between = interrupted_at(exc, frame)
    try:  # a line of its own, not glued to a line the program left open (pytest's progress dots, helper-82)
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        pass
    lead = "\n" if exc is not None else ""  # Ctrl-C: the terminal's "^C" and an open line before it

    if between:  # the interpreter's loop over the grid, between programs
        child.say(f"{lead}tritondbg: {how} in {launch.name} (its {nth} launch), between two programs of its grid (at "
                  f"pid {pid if pid is not None else '?'}, the one that had just run or was about to) "
                  f"[launched from {describe_site(launch.stack)}]")
        return
    if where is None:  # not in kernel code: the builder's program id is still the previous launch's last one
        child.say(f"{lead}tritondbg: {how} in {launch.name} (its {nth} launch), outside its kernel code (its arguments "
                  f"being copied in or out, its grid being set up, or tritondbg checking what it did) [launched from {describe_site(launch.stack)}]")
        return
    at = f" at {site_name(where[0])}:{where[1]}"
    child.say(f"{lead}tritondbg: {how} in {launch.name}{at}, pid {pid if pid is not None else '?'} (its "
              f"{nth} launch) [launched from {describe_site(launch.stack)}]")


def sigint_hid_in(exc: BaseException, launch, index: int, since: float) -> bool:
    """Whether a Ctrl-C that came during the launch (``since``: its start) surfaced as ``exc``, another exception
    (numpy's C code turns a KeyboardInterrupt raised inside it into a TypeError, which Triton's interpreter wraps as
    an InterpreterError; helper-132: a capture's reproducer then said the launch failed with that TypeError). Then
    it is said as an interrupt, and the caller raises KeyboardInterrupt."""
    from tritondbg.program import child

    if isinstance(exc, KeyboardInterrupt) or not child._exits().sigint_since(since):
        return False
    say_interrupted(launch, index, exc)
    return True


_SAID_OUTSIDE: list = []


def say_terminated_outside(frame, how: str = "terminated (SIGTERM)") -> None:
    """One line where SIGTERM (a --timeout) ended the program outside any launch: the program's own line it was on
    (the innermost frame that is not Python's, a library's or tritondbg's), else nothing (helper-122: "timed out"
    with no place, after the program had printed its last line)."""
    from tritondbg.program import child  # (loaded already: the program's bootstrap)

    if _SAID_OUTSIDE:  # (interpret's checker and capture's capturer may both listen: one line)
        return
    mp = sys.modules.get("multiprocessing")
    if child._exits().forked() or mp is not None and mp.parent_process() is not None:
        return  # a worker its pool ended (Pool.__exit__ terminates them; helper-132); a --timeout: the program says it
    _SAID_OUTSIDE.append(True)
    f = frame
    while f is not None and not_users_file(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return
    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        pass
    child.say(f"tritondbg: {how} outside any launch, in the program at {site_name(f.f_code.co_filename)}:"
              f"{f.f_lineno} ({f.f_code.co_name})")
