"""Autotuners of a library's own, copied from old Triton (AutoGPTQ's ``CustomizedTritonAutoTuner``, GPTQ-for-LLaMa's
and exllama's ``custom_autotune``): no ``triton.runtime.Autotuner``, but a kernel object launched with
``kernel[grid](...)`` that carries the jit function in ``.fn`` and ``triton.Config`` s in ``.configs``, and
benchmarks in its own ``run`` (``triton.testing.do_bench``: NaN from the CPU stand-in, so ``min`` kept the first
config by luck, and a GPU under ``tritondbg ir``).

``adapter(obj)`` presents one as a Triton ``Autotuner`` (``Lookalike``, one per object): its configs, key and
``reset_to_zero`` (names, from the object's indices), its own ``prune_configs``. Everything that pins
(``pinning.Pinning``, ``ir``'s decider, the sweeps, program mode's launch records) then treats it as Triton's:
``configs.find_autotuner`` returns the adapter, and while a tritondbg run decides configs
(``configs.every_autotuner_run``) the object's own ``run`` is sent to it (``redirected``). With one config pinned,
the adapter launches it as Triton's Autotuner does (no benchmark; the object's ``reset_to_zero`` is done by the
pinning, as for Triton's); with several (a GPU run that pins nothing) the object's own run decides.
"""
from __future__ import annotations

from typing import Any, Callable

# how far down a kernel object's ``.fn`` chain (autotuner -> heuristics ... -> the jit function) tritondbg looks:
# mamba's layer_norm backward stacks five @triton.heuristics under its autotuner (a walk of 4 missed it, helper-90)
FN_CHAIN = 64

_ADAPTERS: dict[int, tuple[Any, Any]] = {}  # id(object) -> (object, its Lookalike); the object kept alive with it
_CLASS = None


def _kernel_below(fn) -> bool:
    """Whether ``fn`` is a launchable jit function (or a heuristics wrapper of one): down its ``.fn`` chain, a plain
    function, and no Triton Autotuner (that one is found itself: a wrapper over it tunes nothing of its own)."""
    from triton.runtime.autotuner import Autotuner

    for _ in range(FN_CHAIN):
        if fn is None or not hasattr(fn, "run") or isinstance(fn, Autotuner):
            return False
        inner = getattr(fn, "fn", None)
        if hasattr(inner, "__code__"):
            return True
        fn = inner
    return False


def is_lookalike(obj) -> bool:
    """A kernel object that tunes like Triton's Autotuner without being one: a jit function in ``.fn``, a non-empty
    list of ``triton.Config`` in ``.configs``."""
    import triton
    from triton.runtime.autotuner import Autotuner

    if obj is None or isinstance(obj, (Autotuner, type)) or _torchs(type(obj)):
        return False
    try:
        configs = getattr(obj, "configs", None)
        fn = getattr(obj, "fn", None)
    except Exception:  # noqa: BLE001 - an object whose attributes refuse to be read: not one
        return False
    return (isinstance(configs, (list, tuple)) and len(configs) > 0
            and all(isinstance(c, triton.Config) for c in configs) and _kernel_below(fn))


def _torchs(cls) -> bool:
    """torch's own kernel objects (Inductor's CachingAutotuner: ``.fn``, ``.configs`` and a run of its own) are
    followed by ``program/inductor.py``, not adapted (the CI run of session 43: adapting it broke every compiled
    model's launch)."""
    return (getattr(cls, "__module__", "") or "").split(".")[0] == "torch"


def adapter(obj):
    """The ``Lookalike`` of ``obj`` (the same one each time), or None when ``obj`` is no lookalike autotuner."""
    entry = _ADAPTERS.get(id(obj))
    if entry is not None and entry[0] is obj:
        return entry[1]
    if not is_lookalike(obj):
        return None
    tuner = _lookalike_class()(obj)
    _ADAPTERS[id(obj)] = (obj, tuner)
    if _DEPTH[0] > 0:  # a block in effect: the object's class is sent to its adapter too
        _redirect(type(obj))
    return tuner


def _names(obj, names_attr: str, index_attr: str, arg_names: list[str]) -> list[str]:
    """Argument names the object keeps as names (``key``) or as indices (``key_idx``, old Triton's)."""
    names = getattr(obj, names_attr, None)
    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        return [n for n in names if n in arg_names]
    index = getattr(obj, index_attr, None)
    if isinstance(index, (list, tuple)):
        return [arg_names[i] for i in index if isinstance(i, int) and 0 <= i < len(arg_names)]
    return []


def _lookalike_class():
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    from triton.runtime.autotuner import Autotuner

    class Lookalike(Autotuner):
        """A lookalike autotuner (``wrapped``) as Triton's Autotuner: see the module docstring."""

        def __init__(self, obj):
            fn = obj.fn
            arg_names = list(getattr(obj, "arg_names", None) or getattr(fn, "arg_names", None) or ())
            key = _names(obj, "keys", "key_idx", arg_names) or _names(obj, "key", "key_idx", arg_names)
            reset = _names(obj, "reset_to_zero", "reset_idx", arg_names)
            super().__init__(fn, arg_names, list(obj.configs), key, reset or None, None)
            self.wrapped = obj

        def prune_configs(self, kwargs):
            """The object's own pruning (its early_config_prune, perf_model + top_k, as it applies them)."""
            own = getattr(self.wrapped, "prune_configs", None)
            if own is None:
                return list(self.configs)
            saved = getattr(self.wrapped, "nargs", None)
            self.wrapped.nargs = self.nargs
            try:
                return list(own(kwargs))
            finally:
                self.wrapped.nargs = saved

        def run(self, *args, **kwargs):
            if len(self.configs) > 1:  # nothing pinned (a GPU run): the object decides, as without tritondbg
                result = own_run(type(self.wrapped))(self.wrapped, *args, **kwargs)
                self.best_config = getattr(self.wrapped, "best_config", None)
                self.configs_timings = getattr(self.wrapped, "configs_timings", None)
                return result
            try:
                return super().run(*args, **kwargs)   # the one config, launched as Triton's Autotuner launches it
            finally:
                self.wrapped.best_config = self.best_config

    _CLASS = Lookalike
    return _CLASS


# --- sending the objects' own run to their adapters while a tritondbg run decides configs ---

_REDIRECTED: list[tuple[Any, Callable]] = []  # (class whose run is sent to the adapters, its own run)
_DEPTH = [0]  # blocks in effect (begin / end): the redirections last until the outermost ends


def own_run(cls) -> Callable:
    """``cls``'s run as the library wrote it (under any redirection of ours)."""
    run = cls.run
    while getattr(run, "_lookalike_own", None) is not None:
        run = run._lookalike_own
    return run


def _triton_own() -> tuple:
    """Triton's own kernel objects with a run (jit function, interpreted function, autotuner, heuristics)."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    out: tuple = (Autotuner, Heuristics, JITFunction)
    try:
        from triton.runtime.interpreter import InterpretedFunction

        out += (InterpretedFunction,)
    except Exception:  # noqa: BLE001 - an interpreter-less build
        pass
    return out


def _redirect(cls) -> None:
    """Send ``obj.run`` of ``cls`` (through the class that defines the run it uses) to the object's adapter until
    the outermost block ends; an object that is no lookalike runs its own."""
    owner = next((base for base in cls.__mro__ if "run" in vars(base)), None)
    if owner is None or issubclass(owner, _triton_own()) or _torchs(owner) or any(owner is c for c, _ in _REDIRECTED):
        return
    original = vars(owner)["run"]

    def run(obj, *args, **kwargs):
        tuner = adapter(obj)
        if tuner is None:
            return original(obj, *args, **kwargs)
        return tuner.run(*args, **kwargs)

    run._lookalike_own = original
    owner.run = run
    _REDIRECTED.append((owner, original))


def begin() -> Callable[[], None]:
    """From now on, until the returned ``end`` is called: the run of every class whose objects may be lookalikes
    (each ``KernelInterface`` subclass with a run of its own that is not Triton's, those defined later included,
    and the class of each object adapted) goes to the object's adapter. ``end`` holds what it needs itself: program
    mode ends the block while the interpreter shuts down, when this module's globals may be gone."""
    from triton.runtime.jit import KernelInterface

    redirected, depth = _REDIRECTED, _DEPTH

    def end() -> None:
        depth[0] -= 1
        if depth[0] > 0:
            return
        if previous is not None:
            KernelInterface.__init_subclass__ = previous
        elif "__init_subclass__" in vars(KernelInterface):
            del KernelInterface.__init_subclass__
        while redirected:
            owner, original = redirected.pop()
            owner.run = original

    depth[0] += 1
    previous = vars(KernelInterface).get("__init_subclass__")
    if depth[0] > 1:
        return end
    todo = list(KernelInterface.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if "run" in vars(cls):
            _redirect(cls)
    for obj, _ in list(_ADAPTERS.values()):
        _redirect(type(obj))

    def __init_subclass__(cls, **kwargs):
        # a library imported while the block is in effect (program mode: AutoGPTQ after tritondbg attached)
        if previous is not None:
            previous.__get__(None, cls)(**kwargs)
        else:
            super(KernelInterface, cls).__init_subclass__(**kwargs)
        if "run" in vars(cls):
            _redirect(cls)

    KernelInterface.__init_subclass__ = classmethod(__init_subclass__)
    return end
