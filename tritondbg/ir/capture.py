"""Run a scenario's launch wrapper on CPU tensors and compile every kernel it launches for a GPU target.

Nothing is launched and no GPU is needed. While the wrapper runs:
- Triton's active driver is a stub that reports the requested target (``driver.set_active``, in 3.6 and 3.9),
  so ``JITFunction.run`` builds its binder for that target;
- ``JITFunction.run`` is called with ``warmup=True``: Triton itself binds the real arguments, specialises them
  (dtypes, 16-byte divisibility of pointers and ints, ints equal to 1 become constexprs), packs the options and
  compiles through the compile cache, exactly as a GPU launch does, then returns before launching;
- ``Autotuner.run`` (and a subclass's own ``run``) runs the one config that ``decision.Decider`` picked (no
  benchmark), so wrappers that read ``best_config`` afterwards (fp8_gemm's split-K reduce) see it;
- the cache's ``get_group`` checks each file of a hit (``integrity``): a damaged entry (a truncated PTX, a cut
  metadata json) is named on stderr, its files removed and the kernel compiled again into a fresh entry.
The grid is evaluated with the bound arguments, as Triton would before launching.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import io
import itertools
import os
import re
import sys
import tempfile
import time
import traceback
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from tritondbg.configs import autotuners, call_kwargs, config_dict, every_autotuner_run, kernel_name, past_tuner
from tritondbg.errors import UsageError
from tritondbg.ir.integrity import checked_cache
from tritondbg.standin import TargetDriver, answering_as


class CaptureError(Exception):
    """The launch wrapper or the compiler failed; the message is one readable paragraph."""


class NothingLaunched(CaptureError):
    """The case ran to its end without launching a Triton kernel (a wrapper's early return on an empty input)."""


@dataclass
class Launch:
    """One kernel launch the wrapper made, compiled for the target (``compiled`` None when not selected)."""

    kernel: str
    fn: Any
    grid: list[int] | None
    config: dict[str, Any] | None          # autotuned: the config run; else the launch options passed
    config_source: str
    compiled: Any = None                   # triton CompiledKernel
    cache_hit: bool | None = None          # Triton's compile cache answered (None: its in-process cache did)
    compile_s: float = 0.0
    events: list[dict] = field(default_factory=list)


class StubDriver(TargetDriver):
    """Triton's active driver during a capture: the chosen target, no device, no stream (see tritondbg.standin);
    the device's torch device (cpu) and properties are the stand-in's (fla asks for the shared memory per block),
    anything that needs a GPU (a launch, a benchmark) is refused."""

    def __init__(self, arch):
        super().__init__(arch.gpu_target())
        from tritondbg.standin import StandinDriver

        answers = StandinDriver(arch)
        self.utils = answers.utils
        self.get_active_torch_device = answers.get_active_torch_device

    def _missing(self, name: str) -> Exception:
        return CaptureError(f"the launch asked Triton's driver for {name!r}, which needs a GPU; `tritondbg ir` only "
                            "compiles (no launch, no benchmark)")


_GENERATIONS = itertools.count(1)
_generation = [0]                            # the capture running now (or last)
_handed_out: "weakref.WeakSet[Warmed]" = weakref.WeakSet()   # every Warmed given to host code


class Warmed:
    """What ``kernel.warmup(...)`` and ``kernel[grid](...)`` return under ``tritondbg ir``: the kernel compiled
    for the target (None: a kernel the request does not select), with what host code reads of it (Triton's
    tutorial 02 reads ``n_regs`` and ``metadata.shared`` to size its grid): ``n_regs`` / ``n_spills`` from the
    cubin (cuobjdump; AMD: the compiler's metadata), handles never loaded (``_init_handles`` does nothing: there
    is no device), a launch through it a no-op (``ir`` launches nothing).

    Libraries keep what ``kernel[grid](...)`` returned and launch later calls of the same signature through it,
    without ``JITFunction.run`` (flag_gems' ``libentry``: ``kernel[grid](*args)``; memoised ``warmup()``
    kernels): within one capture that launch is the compiled one again. A later capture of the same process
    (``--all-configs``, ``--diff``) clears such caches first (``forget_handed_out``), since their kernel was
    compiled for another config or target; one it could not clear is refused in one line."""

    def __init__(self, compiled, kernel: str = ""):
        self._compiled = compiled
        self._usage = None
        self._kernel = kernel
        self._generation = _generation[0]
        _handed_out.add(self)

    def __getattr__(self, name):
        if name in ("n_regs", "n_spills"):
            return self._resources()[name]
        return getattr(self._compiled, name)

    def _resources(self) -> dict:
        if self._usage is None:
            meta = getattr(self._compiled, "metadata", None)
            regs, spills = getattr(meta, "num_regs", 0) or 0, getattr(meta, "num_spills", 0) or 0
            cubin = getattr(self._compiled, "asm", {}).get("cubin")
            if cubin:
                from tritondbg.ir.stages import cubin_usage

                try:
                    usage = cubin_usage(cubin)
                    regs, spills = usage.get("REG", regs), usage.get("STACK", spills)
                except Exception:  # noqa: BLE001 - no cuobjdump here: the placeholders
                    pass
            self._usage = {"n_regs": regs, "n_spills": spills}
        return self._usage

    def _init_handles(self):
        pass

    def __getitem__(self, grid):
        if self._generation != _generation[0]:
            raise CaptureError(
                f"the launch wrapper launched {self._kernel or 'a kernel'} through a compiled kernel it kept from "
                "an earlier compile in this process (a library's cache of compiled kernels) that tritondbg could "
                "not clear; --all-configs and --diff need a fresh compile per variant: run one `tritondbg ir` per "
                "variant instead")
        return lambda *args, **kwargs: None


def forget_handed_out() -> None:
    """Start a new capture: drop the entries of host-side caches (dicts, directly or through a tuple) that hold
    a ``Warmed`` of an earlier capture, so the wrapper goes through ``JITFunction.run`` again and compiles for
    this capture's config and target. Namespaces (a module's or an object's ``__dict__``) are left alone: a
    kernel kept there is refused when launched (``Warmed.__getitem__``)."""
    _generation[0] = next(_GENERATIONS)
    stale = list(_handed_out)
    _handed_out.clear()
    if not stale:
        return
    ids = {id(w) for w in stale}
    tuples = []
    for holder in gc.get_referrers(*stale):
        if isinstance(holder, dict):
            _drop_entries(holder, ids)
        elif isinstance(holder, tuple):
            tuples.append(holder)
    if tuples:
        ids = {id(t) for t in tuples}
        for holder in gc.get_referrers(*tuples):
            if isinstance(holder, dict):
                _drop_entries(holder, ids)


def _drop_entries(d: dict, ids: set[int]) -> None:
    keys = [k for k, v in d.items() if id(v) in ids]
    if not keys or any(getattr(o, "__dict__", None) is d for o in gc.get_referrers(d)):
        return
    for k in keys:
        d.pop(k, None)


def _bound(fn, args, kwargs) -> dict[str, Any]:
    """The kernel's parameters by name, as JITFunction.run passes them to a grid callable."""
    named = {p.name: p.default for p in fn.params if p.has_default}
    named.update(zip(fn.arg_names, args))
    named.update({k: v for k, v in kwargs.items() if k in named or k in fn.arg_names})
    return named


def _grid(fn, grid, args, kwargs) -> list[int] | None:
    try:
        g = grid(_bound(fn, args, kwargs)) if callable(grid) else grid
        g = [int(x) for x in g]
    except Exception:  # noqa: BLE001 - the grid is informative only
        return None
    return g + [1] * (3 - len(g))


_LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


@contextlib.contextmanager
def intercepted(arch, decider, launches: list[Launch], select: Callable[[str], bool] | None,
                tuners=()) -> Iterator[None]:
    """Patch Triton for the duration of one capture (see the module docstring); restores everything after."""
    from triton import knobs
    from triton.runtime.jit import JITFunction

    target = arch.gpu_target()
    tuned: list[tuple[str, dict, str]] = []   # stack: (kernel name, config dict, source) of the running autotuner
    events: list[dict] = []

    original_jit_run = JITFunction.run
    previous_listener = getattr(knobs.compilation, "listener", None)

    def listener(*, src, metadata, metadata_group, times, cache_hit, **kw):
        events.append({"cache_hit": bool(cache_hit), "group": dict(metadata_group)})
        if previous_listener is not None:  # a single slot other tools use too: chain, never overwrite
            previous_listener(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                              cache_hit=cache_hit, **kw)

    def tuner_run(original_tuner_run, tuner, *args, **kwargs):
        name = kernel_name(tuner)
        chosen, source = decider.decide(tuner, name, args, kwargs)
        saved = tuner.configs
        tuner.configs = [chosen]   # one config: the autotuner runs it without benchmarking (3.6 and 3.9)
        tuned.append((name, config_dict(chosen), source))
        try:
            return original_tuner_run(tuner, *args, **kwargs)
        finally:
            tuner.configs = saved
            tuned.pop()

    past: dict[str, tuple[dict, str]] = {}  # kernel name -> the config put in a launch past its autotuner

    def put_in(tuner, fn, args, kwargs):  # (configs.past_tuner: vLLM's launch_autotuned)
        name = kernel_name(tuner)
        if tuned and tuned[-1][0] == name:
            return kwargs
        chosen, source = decider.decide(tuner, name, args, call_kwargs(tuner, kwargs))
        past[name] = (config_dict(chosen), f"{source}; launched past its autotuner, with a config the caller kept: "
                                           "this config put in its place")
        return {**kwargs, **chosen.all_kwargs()}

    def jit_run(fn, *args, grid, warmup, **kwargs):
        name = fn.__name__
        if tuned and tuned[-1][0] == name:
            config, source = tuned[-1][1], tuned[-1][2]
        elif name in past:
            config, source = past.pop(name)
        else:
            # the compile options the wrapper passed: Triton's common ones, then any a backend takes that is no
            # kernel argument (AMD's waves_per_eu / matrix_instr_nonkdim / kpack: helper-51 saw them compiled in
            # but not named)
            params = set(getattr(fn, "arg_names", ()) or ())
            config = {k: kwargs[k] for k in _LAUNCH_OPTIONS if kwargs.get(k) is not None}
            config.update((k, v) for k, v in kwargs.items()
                          if k not in params and k not in config and v is not None and not callable(v))
            source = "launch options of the wrapper" if config else "Triton's defaults (not autotuned)"
        launch = Launch(kernel=name, fn=fn, grid=_grid(fn, grid, args, kwargs), config=config, config_source=source)
        launches.append(launch)
        if select is not None and not select(name) and not warmup:  # warmup(): the host reads the compiled kernel
            return Warmed(None, name)
        del events[:]
        t0 = time.perf_counter()
        captured = io.StringIO()
        native: list[str] = []
        try:
            # Triton prints the whole PTX on a ptxas failure and MLIR/LLVM print diagnostics on fd 2: keep both
            # out of the way; on a failure they go to a log file, on success they are passed on to stderr.
            with contextlib.redirect_stdout(captured), _fd2_captured(native):
                kernel = original_jit_run(fn, *args, grid=grid, warmup=True, **kwargs)
        except CaptureError:
            raise
        except TypeError as exc:
            if _binding_error(exc):  # the launch's arguments, not the compiler: where the launch is
                raise CaptureError(_launch_error(name, exc)) from exc
            raise CaptureError(_compile_error(fn, target, exc, captured.getvalue(), "".join(native))) from exc
        except Exception as exc:
            raise CaptureError(_compile_error(fn, target, exc, captured.getvalue(), "".join(native))) from exc
        if captured.getvalue() or native:   # e.g. TRITON_DUMP_PTXAS_LOG=1: pass it on, to stderr
            sys.stderr.write(captured.getvalue() + "".join(native))
        launch.compile_s = time.perf_counter() - t0
        launch.compiled = kernel
        launch.events = list(events)
        launch.cache_hit = events[-1]["cache_hit"] if events else None
        return Warmed(kernel, name)   # launched through again (libraries keep it): a no-op, as this launch

    forget_handed_out()   # a library cache of an earlier capture's kernels would skip JITFunction.run
    JITFunction.run = jit_run
    knobs.compilation.listener = listener
    try:
        # Autotuner subclasses with a run of their own (FlagGems' LibTuner benchmarks there) are pinned too
        with every_autotuner_run(lambda original: functools.partial(tuner_run, original)), \
                past_tuner(tuners, put_in), answering_as(arch, StubDriver(arch)), checked_cache():
            yield
    finally:
        JITFunction.run = original_jit_run
        knobs.compilation.listener = previous_listener


@contextlib.contextmanager
def _fd2_captured(sink: list[str]) -> Iterator[None]:
    """Redirect file descriptor 2 (what C++ code such as MLIR and LLVM writes to) into ``sink``."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):   # no real fd 2 (embedded): capture nothing
        yield
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            sink.append(tmp.read().decode("utf-8", errors="replace"))


# lines that say only that something failed; the first other error line says what
_GENERIC = ("Failures have been detected while processing an MLIR pass pipeline", "PassManager::run failed",
            "Internal Triton PTX codegen error", "please share the reproducer")
_ERROR_LINE = re.compile(r"(?:^|\W)(?:error|fatal)\s*:", re.IGNORECASE)


def first_meaningful_line(fn, exc: BaseException, log: str) -> str:
    """One line saying why a compile failed: ``file:line: message`` for a Triton CompilationError, else the
    first error/fatal line of the exception or of what the compiler printed, else the exception's first line."""
    node, message = getattr(exc, "node", None), getattr(exc, "error_message", None)
    inner, within = exc, ""
    while not message and node is not None and getattr(inner, "__cause__", None) is not None:
        # raised inside a function the kernel called (tl.sum on a None): the message is the innermost one's,
        # the line the kernel's own
        inner = inner.__cause__
        message = getattr(inner, "error_message", None) or (None if hasattr(inner, "node") else
                                                            f"{type(inner).__name__}: {inner}")
        called = re.search(r"^def (\w+)\(", str(getattr(inner, "src", "") or inner), re.MULTILINE)
        within = f"in {called.group(1)}(): " if called and hasattr(inner, "node") else within
    if message and node is not None and hasattr(node, "lineno"):
        text = str(message).strip().splitlines()[-1]
        text = within + re.sub(r"^(\w+)\((['\"])(.*)\2\)$", r"\1: \3", text)  # AttributeError("x"): the repr
        cause = inner.__cause__
        if cause is not None and str(cause).strip().splitlines()[-1:] == [text]:
            text = f"{type(cause).__name__}: {text}"  # "(triton.language.float16)" alone says little
        if isinstance(cause, KeyError):  # a libdevice function with no version for these dtypes
            from tritondbg.interp.libdevice import explain_refusal

            said = explain_refusal(_source_line(fn, node.lineno), text)
            text = said or text
        from tritondbg import missing_return, stray_comma

        found = missing_return.compile_hint(exc, fn)  # a None from a jit helper that forgot its `return`
        found = found or stray_comma.compile_hint(exc, fn)  # or a 1-tuple from `x = value,`
        inside = helper_site(fn, exc)
        head = f"{inside[0]}:{inside[1]}: " if inside else _def_line(fn, node.lineno)
        return head + (f"{text}; {found}" if found else text)
    for line in (str(exc) + "\n" + log).splitlines():
        line = line.strip()
        if _ERROR_LINE.search(line) and not any(g in line for g in _GENERIC):
            return line
    for line in log.splitlines():  # MLIR's note on which pass failed, when its error line only says one did
        if "Pipeline failed while executing" in line:
            return line.strip().split(": reproducer generated")[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def helper_site(fn, exc: BaseException) -> tuple[str, int] | None:
    """(file, line) of the line in a jit helper the kernel calls (or a helper of it) where a compile error was
    raised, or None where it was raised in the kernel's own code or the helper cannot be found by name from the
    kernel's globals (helper-155: a loop-carried bf16 in Thunder's cross-entropy helper was told at the kernel's
    call of it). Triton nests a CompilationError per call, each with the callee's source and node."""
    import ast

    from tritondbg.missing_return import _python_function, _resolve, kernel_line

    scope = getattr(getattr(fn, "fn", None), "__globals__", None) or {}
    found, inner, at = None, exc, getattr(exc, "node", None)
    while getattr(inner, "__cause__", None) is not None and isinstance(at, ast.AST):
        inner = inner.__cause__
        node = getattr(inner, "node", None)
        called = re.search(r"^def (\w+)\(", str(getattr(inner, "src", "") or ""), re.MULTILINE)
        if node is None or not hasattr(node, "lineno") or not called:
            continue
        # the callee as the caller's call at ``at`` names it (``f``, ``H.f``): missing_return's resolution
        py = next((p for c in ast.walk(at) if isinstance(c, ast.Call)
                   for p in [_python_function(_resolve(c.func, scope))]
                   if p is not None and p.__name__ == called.group(1)), None)
        if py is None or (getattr(py, "__module__", None) or "").split(".")[0] == "triton":
            break  # Triton's own (tl.sum raising over a None a helper returned): the caller's line says more
        found = kernel_line(py, node.lineno) or found
        scope, at = getattr(py, "__globals__", None) or {}, node
    return found


def _binding_error(exc: TypeError) -> bool:
    """Triton's argument binder refusing the launch's arguments (a constexpr not passed, an unknown keyword)."""
    text = str(exc)
    return "dynamic_func()" in text and ("required positional argument" in text or "unexpected keyword" in text)


def _launch_error(name: str, exc: TypeError) -> str:
    """``launching K at file:line failed: TypeError: K() missing ...``: it said "compiling K for cuda:90 failed:
    ... dynamic_func() missing ...", with no line (the binder is Triton's generated function)."""
    from tritondbg.errors import not_users_file

    site = next((f for f in reversed(traceback.extract_stack()[:-2]) if not not_users_file(f.filename)), None)
    at = f" at {site.filename}:{site.lineno}" if site is not None else ""
    return f"launching {name}{at} failed: TypeError: {str(exc).replace('dynamic_func()', f'{name}()')}"


def _def_line(fn, lineno: int) -> str:
    """``file:line: `` of line ``lineno`` (1 = the ``def`` line, as Triton counts) of a kernel, or ""."""
    from tritondbg.missing_return import kernel_line

    where = kernel_line(getattr(fn, "fn", None), lineno)
    return f"{where[0]}:{where[1]}: " if where else ""


def _source_line(fn, lineno: int) -> str:
    """The text of line ``lineno`` (Triton's count) of a kernel, or ""."""
    import linecache

    from tritondbg.missing_return import kernel_line

    where = kernel_line(getattr(fn, "fn", None), lineno)
    return linecache.getline(where[0], where[1]) if where else ""


_log_dir: str | None = None  # where a failed compile's full log goes (``logs_in``); None: the temporary folder


@contextlib.contextmanager
def logs_in(folder: str | None) -> Iterator[None]:
    """A failed compile's full log is written in ``folder`` while the block runs (``ir --out DIR``, ``check --out
    DIR``: a run keeps what it wrote in one place, a CI job's artifact); None, or a folder that cannot be
    written: the temporary folder."""
    global _log_dir
    old, _log_dir = _log_dir, os.path.abspath(os.path.expanduser(folder)) if folder else None
    try:
        yield
    finally:
        _log_dir = old


def _write_log(name: str, text: str) -> str | None:
    """``text`` in ``tritondbg-compile-<name>-<hash of text>.log`` in the ``logs_in`` folder, else the temporary
    folder: its path, or None when neither takes it. The same failure compiled again is the same file (a CI
    rerunning a failing check left one more log in /tmp each time)."""
    import hashlib

    digest = hashlib.sha1(text.encode(errors="replace")).hexdigest()[:12]
    for folder in dict.fromkeys((_log_dir, None)):
        try:
            folder = folder or tempfile.gettempdir()
            os.makedirs(folder, exist_ok=True)
            path = os.path.join(folder, f"tritondbg-compile-{name}-{digest}.log")
            fd, partial = tempfile.mkstemp(prefix=".tritondbg-compile-", suffix=".partial", dir=folder)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(partial, path)  # (two processes writing one log: whole either way)
            return path
        except OSError:
            continue
    return None


def _compile_error(fn, target, exc: BaseException, printed: str, native: str) -> str:
    """One line for a failed compile, naming a file that keeps everything it printed."""
    name = fn.__name__
    # the name --arch takes (sm_90, gfx942), not Triton's "cuda:90"
    where = f"sm_{target.arch}" if target.backend == "cuda" else str(target.arch)
    log = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)) + "\n" + native + "\n" + printed
    path = _write_log(name, f"compiling {name} for {where}\n\n{log}")
    kept = f" (full log: {path})" if path else ""
    line = first_meaningful_line(fn, exc, native + printed)
    from tritondbg.errors import version_hint

    hint = version_hint(line)  # (helper-155: interpret said what to do about tl.make_block_ptr under 3.9, ir did not)
    line = f"{line}; {hint}" if hint and hint not in line else line
    m = re.search(r"Keyword argument (\w+) was specified but unrecognised", line)
    if m:  # (helper-62: a reproducer captured on sm_90 with maxnreg, compiled for gfx942)
        line += (f": {m.group(1)} is a launch option {where}'s backend does not take (the launch, or the reproducer "
                 "captured on another GPU, passes it)")
    return f"compiling {name} for {where} failed: {line}{kept}"


def _entries(cache_dir: str) -> set[str]:
    try:
        return set(os.listdir(cache_dir))
    except OSError:
        return set()


def case_inputs(scenario, case, dtype: str) -> dict:
    """The case's inputs, built on the CPU (seed 0); a ``make_inputs`` that raises is said as `check` says it
    (``case/dtype: make_inputs `f` (FILE:LINE) raised KeyError: 't' at FILE:LINE``), not as a tool error."""
    import torch

    from tritondbg.errors import ScenarioCodeError
    from tritondbg.runner import build_inputs, torch_dtype

    try:
        return build_inputs(scenario, case, torch_dtype(dtype), "cpu", torch.Generator().manual_seed(0))
    except ScenarioCodeError as exc:
        raise CaptureError(f"{case.name}/{dtype}: {exc}") from exc


def capture(scenario, case, dtype: str, arch, decider, select: Callable[[str], bool] | None = None,
            inputs: dict | None = None) -> list[Launch]:
    """Run the case's launch wrapper on CPU ``inputs`` (built here when None) under ``intercepted``, return the
    launches. Nothing is launched, so one set of inputs serves several captures of a case (an ``--all-configs``
    sweep): building a GPU-size case's inputs costs far more than a cache hit (attention prefill: ~1.2 s)."""
    from tritondbg.runner import kernel_error_message

    if inputs is None:
        inputs = case_inputs(scenario, case, dtype)
    launches: list[Launch] = []
    before = _entries(decider.cache_dir)
    with intercepted(arch, decider, launches, select, autotuners(scenario.kernels).values()):
        try:
            scenario.launch_for(case)(**inputs)
        except BaseException as exc:
            # a failed compile leaves the empty key folder Triton made for it: remove only such new, empty ones
            for name in _entries(decider.cache_dir) - before:
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(decider.cache_dir, name))
            if isinstance(exc, Exception):  # a Ctrl-C that came back as another error (a ptxas it stopped)
                from tritondbg import stops

                stops.reraise(exc)
            if isinstance(exc, (CaptureError, UsageError)) or not isinstance(exc, Exception):
                raise
            raise CaptureError(f"the launch wrapper of {scenario.name} (case {case.name}, {dtype}) failed on CPU "
                               f"tensors: {kernel_error_message(exc, scenario)}") from exc
    if not launches:
        raise NothingLaunched(f"{scenario.name} case {case.name} ({dtype}) launched no Triton kernel")
    return launches
