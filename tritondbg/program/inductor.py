"""TorchInductor's Triton kernels (``torch.compile``) as program-mode launches.

Inductor launches a compiled kernel through ``CachingAutotuner.run`` -> its launcher -> the C launcher; it never
calls ``JITFunction.run``, which ``attach`` wraps, so ``capture -- CMD`` and ``profile -- CMD`` on a GPU saw none
of a compiled model's kernels (0 launches, exit 0; profile listed them as "torch's"). Triton's
``launch_enter_hook`` fires for them but carries neither arguments nor grid, and fires for Inductor's benchmark
launches alike. So ``CachingAutotuner.run`` is wrapped (compiled mode): a call that is not a benchmark run
resolves its launcher as ``run`` does (compile, autotune to one config, coordinate descent: Inductor times its
configs on clones of the arguments it mutates, so the bytes before the launch stay the program's), then goes
through the observers as a ``attach.Launch``: the kernel's parameters bound to the arguments, the config's
constexprs (XBLOCK, R0_BLOCK, ...), the grid Inductor computes, the compile options it gives ``triton.compile``.
Under the interpreter ``CachingAutotuner.run`` calls ``self.fn[grid](...)`` (an ``InterpretedFunction``), which
``attach`` already sees: nothing to do here.

A generated module cannot be imported on a machine without a GPU (``triton_helpers.set_driver_to_gpu()`` at
import): ``standalone_source`` keeps its imports and the ``@triton.jit`` function, which a capture saves as the
reproducer's source (``tritondbg interpret`` / ``ir`` run it on the CPU).
Installed when ``torch._inductor.runtime.triton_heuristics`` is imported (it imports triton while it loads: the
class does not exist yet when ``attach`` installs).
"""
from __future__ import annotations

import ast
import os
import sys
import types
from typing import Any

MODULE = "torch._inductor.runtime.triton_heuristics"
_saved: dict[str, Any] = {}
_sources: dict[str, str | None] = {}


def install(module: str = MODULE) -> None:
    """Wrap ``CachingAutotuner.run`` now if Inductor's runtime is loaded; when it is being loaded (it imports
    triton, and tritondbg attaches inside triton's import: the class is not defined yet), when the import ends;
    else when it is imported."""
    mod = sys.modules.get(module)
    if mod is not None and hasattr(mod, "CachingAutotuner"):
        _wrap_loaded(mod)
    elif mod is not None:
        _when_loaded(module)
    elif not _hooks():
        from tritondbg.program.child import AfterImport

        sys.meta_path.insert(0, AfterImport(module, _wrap_loaded))


class _Parent(types.ModuleType):
    """The class of the loading module's package while it loads: the import system sets the finished module as
    an attribute of its package (``setattr(parent, child, module)``, Python 3.8 to 3.13), which wraps it."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        child = _saved.get("pending")
        if child is not None and name == child and hasattr(value, "CachingAutotuner"):
            object.__setattr__(self, "__class__", types.ModuleType)
            _saved.pop("pending", None)
            _wrap_loaded(value)  # never raises into the import system


def _when_loaded(module: str) -> None:
    parent_name, _, child = module.rpartition(".")
    parent = sys.modules.get(parent_name)
    if parent is None or type(parent) is not types.ModuleType:
        return  # a package with a class of its own: leave it (its kernels are not followed)
    _saved["pending"] = child
    parent.__class__ = _Parent


def uninstall() -> None:
    for f in _hooks():
        sys.meta_path.remove(f)
    for m in list(sys.modules.values()):
        if type(m) is _Parent:
            object.__setattr__(m, "__class__", types.ModuleType)
    _saved.pop("pending", None)
    saved = _saved.pop("run", None)
    if saved is not None:
        cls, orig, wrapper = saved
        if cls.__dict__.get("run") is wrapper:
            cls.run = orig


def _wrap_loaded(module) -> None:
    try:
        _wrap(module)
    except Exception as exc:  # noqa: BLE001 - never stop the program
        print(f"tritondbg: cannot follow torch.compile's Triton kernels: {type(exc).__name__}: {exc}", file=sys.stderr)


def _hooks() -> list:
    from tritondbg.program.child import AfterImport

    return [f for f in sys.meta_path if isinstance(f, AfterImport) and f.then is _wrap_loaded]


def _wrap(mod) -> None:
    if "run" in _saved:
        return
    cls = mod.CachingAutotuner
    orig = cls.__dict__["run"]

    def run(self, *args, stream, benchmark_run=False, **kwargs):
        from tritondbg.program import attach

        if benchmark_run or getattr(self, "triton_interpret", False) or not attach._observers or attach._local.bench:
            return orig(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
        return attach.observe(id(self), self.fn, lambda: _launch_or_none(self, args),
                              lambda: orig(self, *args, stream=stream, **kwargs))

    run.__wrapped__ = orig
    run._tritondbg = True
    cls.run = run
    _saved["run"] = (cls, orig, run)


def _launch_or_none(tuner, args):
    try:
        return _launch(tuner, args)
    except Exception as exc:  # noqa: BLE001 - a torch version this does not know: the launch runs unobserved
        _note_once(f"a torch.compile kernel ({getattr(tuner.fn, '__name__', '?')}) could not be followed: "
                   f"{type(exc).__name__}: {exc}")
        return None


_noted: set = set()


def _note_once(text: str) -> None:
    if text in _noted:
        return
    _noted.add(text)
    print(f"tritondbg: {text}", file=sys.stderr)


def _launcher(tuner, args):
    """The launcher ``CachingAutotuner.run`` is about to use (compiled and autotuned here, as it would be)."""
    if len(tuner.launchers) != 1:
        if not tuner.launchers:
            tuner.precompile()
        if len(tuner.launchers) > 1:
            tuner.autotune_to_one_config(*args)
    if not getattr(tuner.launchers[0].config, "found_by_coordesc", False) \
            and tuner.inductor_meta.get("coordinate_descent_tuning", False):
        tuner.launchers = [tuner.coordinate_descent_tuning(tuner.launchers[0], *args)]
    return tuner.launchers[0]


def _launch(tuner, args):
    from triton.runtime.jit import JITFunction

    from tritondbg.program import attach, stacks

    cfg = _launcher(tuner, args).config
    values, grid = tuner._interpret_args_grid(args, cfg)  # Inductor's own: the args without constexprs, the grid
    fn = tuner.fn
    constexprs = {p.num for p in getattr(fn, "params", ()) if getattr(p, "is_constexpr", False)}
    names = [n for i, n in enumerate(tuner.triton_meta["signature"]) if n not in cfg.kwargs and i not in constexprs]
    bound = dict(zip(names, values))
    bound.update(cfg.kwargs)
    try:
        options = dict(tuner._create_compile_options(cfg, tuner._create_compile_meta(cfg)))
    except Exception:  # noqa: BLE001 - another torch: the config's own options
        options = {"num_warps": cfg.num_warps, "num_stages": cfg.num_stages}
    options = {k: v for k, v in options.items() if k in LAUNCH_OPTIONS}
    name = tuner.inductor_meta.get("kernel_name") or getattr(fn, "__name__", "?")
    path = getattr(tuner, "filename", None) or "?"
    source = standalone_source(path, getattr(fn, "__name__", name)) if isinstance(fn, JITFunction) else None
    return attach.Launch(fn=fn, name=getattr(fn, "__name__", name), qualname=getattr(fn, "__name__", name),
                         module=GENERATED_MODULE, file=path, line=_def_line(path, name), args=bound,
                         options=options, grid=tuple(int(g) for g in grid), config=cfg, interpreted=False,
                         stack=stacks.user_stack(), extra={"inductor": True, "standalone_source": source})


# the compile options a launch takes as keywords on every backend (a reproducer passes them to ``kernel[grid]``)
LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "debug")
GENERATED_MODULE = "torchinductor_generated"  # not importable: a reproducer loads the saved source


def _def_line(path: str, name: str) -> int:
    try:
        with open(path) as f:
            for i, text in enumerate(f, 1):
                if text.startswith(f"def {name}("):
                    return i
    except OSError:
        pass
    return 0


def standalone_source(path: str, name: str) -> str | None:
    """The generated module's imports and its ``@triton.jit`` function ``name`` (Inductor's decorators and the
    GPU driver call dropped): a module that imports on a CPU machine. None when the file does not parse."""
    cache_key = f"{path}::{name}"
    if cache_key in _sources:
        return _sources[cache_key]
    text = None
    try:
        with open(path) as fh:
            tree = ast.parse(fh.read())
        body = []
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                body.append(node)
            elif isinstance(node, ast.FunctionDef) and node.name == name:
                node.decorator_list = [d for d in node.decorator_list if "triton_heuristics" not in ast.unparse(d)]
                body.append(node)
        if any(isinstance(n, ast.FunctionDef) for n in body):
            tree.body = body
            text = (f"# {name}, generated by TorchInductor ({path}); tritondbg kept the imports and the kernel\n"
                    + ast.unparse(tree) + "\n")
    except (OSError, SyntaxError, ValueError):
        text = None
    _sources[cache_key] = text
    return text


def is_generated(path: str) -> bool:
    """Whether ``path`` is a module Inductor generated (its cache folder): plumbing, not the user's code."""
    base = os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(path))))
    return base.startswith("torchinductor_") or os.environ.get("TORCHINDUCTOR_CACHE_DIR", "\0") in path


def compile_note(launches: dict, interpreted: bool) -> str | None:
    """A line for a process where torch.compile compiled graphs and no Triton kernel was launched, saying why
    (else the run read as a program without kernels)."""
    utils = sys.modules.get("torch._dynamo.utils")
    try:
        graphs = int(utils.counters["stats"]["unique_graphs"]) if utils is not None else 0
    except (AttributeError, KeyError, TypeError, ValueError):
        graphs = 0
    if not graphs or sum(launches.values()):
        return None
    if interpreted:
        return (f"{COMPILE_NOTE} compiled {graphs} graph(s) and none launched a Triton kernel: on the CPU Inductor "
                "writes C++ kernels; with `torch._inductor.config.cpu_backend = \"triton\"` in the program they "
                "are Triton kernels, and run here under the interpreter")
    return (f"{COMPILE_NOTE} compiled {graphs} graph(s) and none of their Triton kernels was launched from Python "
            "(CUDA graphs of mode=\"reduce-overhead\" and AOTInductor launch without it): tritondbg sees launches "
            "made through Python only")


COMPILE_NOTE = "torch.compile"
