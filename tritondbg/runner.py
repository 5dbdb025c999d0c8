"""The runner: owns interpreted vs compiled execution, runs a scenario's cases, returns a RunRecord.

TRITON_INTERPRET is read when ``@triton.jit`` is *applied*, i.e. when a kernel module is imported. So the
runner sets the mode before it imports any scenario (``set_mode``), and refuses to switch modes in a process
that already imported kernels the other way (the CLI runs one mode per process; tests use one per session).
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from collections.abc import Mapping
from typing import Any, Sequence

from tritondbg import loader, stops
from tritondbg.callables import describe_callable, exit_error, library_frame, raised_message, statement
from tritondbg.compare import Named, compare, return_names, tolerance
from tritondbg.configs import autotuners, not_applicable_reason, parse_config
from tritondbg.pinning import plan
from tritondbg.errors import ModeError, PytestCalled, ScenarioCodeError, UsageError, pytest_outcome
from tritondbg.record import CaseResult, RunRecord, environment
from tritondbg.scenario import Case, Scenario
from tritondbg.selection import select_cases, select_runs

MODES = ("interpret", "compiled")
_mode: str | None = None


def set_mode(mode: str, arch: str | None = None) -> None:
    """Choose interpreted or compiled execution for this process, before any kernel module is imported.

    Interpreted runs get the CPU stand-in for the GPU (``tritondbg.standin``) that host code asks about:
    ``arch`` (e.g. "sm_80") is the target it reports; None keeps the one installed, else sm_90."""
    global _mode
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
    current = _mode or _mode_from_env_if_loaded()
    if current is not None and current != mode:
        raise ModeError(f"this process already runs kernels in {current} mode; "
                        f"{mode} mode needs a fresh process (TRITON_INTERPRET is read at import)")
    os.environ["TRITON_INTERPRET"] = "1" if mode == "interpret" else "0"
    # Triton 3.9 warns when unset (its default flips in 3.10); pin today's default so runs are comparable.
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    _mode = mode
    if mode == "compiled":
        from tritondbg.kernels import _launch

        _launch.verify_new_launchers(True)  # run/check: a bundled kernel's new cached launcher is checked once
    if mode == "interpret":
        from tritondbg import standin
        from tritondbg.interp import shims

        shims.install()
        standin.install(arch or standin.current())


def _mode_from_env_if_loaded() -> str | None:
    """If kernel modules were already imported (by a test or a user's script), the env decided their mode."""
    loaded = any(name.startswith(("tritondbg.kernels.", "tritondbg.scenarios.", "tritondbg_user_"))
                 for name in sys.modules)
    if not loaded:
        return None
    return "interpret" if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0") else "compiled"


def current_mode() -> str | None:
    return _mode


def torch_dtype(name: str):
    import torch

    return getattr(torch, name)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


class ScenarioExit(RuntimeError):
    """``os._exit`` called by a scenario's code: refused while tritondbg runs it (the process would end with no
    report and the exit status the code chose, 0 included)."""


def _refuse(code=0):
    raise ScenarioExit(f"os._exit({code!r}) called: scenario code must return (or raise), not end the process")


@contextlib.contextmanager
def _refuse_os_exit():
    """Refuse ``os._exit`` in the thread that runs the scenario's code; another thread's goes through (the
    watchdog's thread ends a process stuck past its --timeout so, exit 124)."""
    import threading

    real, runner_thread = os._exit, threading.get_ident()

    def refuse(code=0):
        if threading.get_ident() != runner_thread:
            real(code)
        _refuse(code)

    os._exit = refuse
    try:
        yield
    except BaseException as exc:
        called = pytest_outcome(exc)
        if called is None:
            raise
        # the traceback ends at the user's call: pytest's own frame is no "library frame" worth naming
        raise PytestCalled(f"{called} called outside a pytest test: the case did not run").with_traceback(
            _without_pytest_frames(exc.__traceback__)) from None
    finally:
        os._exit = real


def _without_pytest_frames(tb):
    """``tb`` cut before its first frame in pytest's own package."""
    marker = os.sep + "_pytest" + os.sep
    keep, t = None, tb
    while t is not None and marker not in t.tb_frame.f_code.co_filename:
        keep, t = t, t.tb_next
    if keep is not None:
        keep.tb_next = None
    return tb if keep is not None else None


def kernel_error_message(exc: BaseException, scenario: Scenario) -> str:
    """One line for an exception raised while launching: the innermost frame in a kernel or scenario file, and the
    innermost frame of a library it called, where that lies deeper."""
    exc = exit_error(exc)
    files = {os.path.realpath(scenario.source)} if scenario.source else set()
    where, shown = "", None
    frames = traceback.extract_tb(exc.__traceback__)
    for frame in reversed(frames):
        fname = os.path.realpath(frame.filename)
        if fname in files or "/kernels/" in fname or fname.endswith(("_kernel.py", "_kernels.py")):
            where, shown = f"{frame.filename}:{frame.lineno}: ", frame
            break
    if shown is None:  # a launch wrapper in a module of the user's the scenario imports (a missing constexpr)
        from tritondbg.errors import not_users_file

        shown = next((f for f in reversed(frames) if not not_users_file(f.filename)), None)
        where = f"{shown.filename}:{shown.lineno}: " if shown is not None else ""
    cause = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    text = str(cause).strip().splitlines() or [statement(cause)]
    deeper = library_frame(exc.__traceback__, shown) if shown is not None else ""
    from tritondbg import missing_return, stray_comma

    found = missing_return.compile_hint(exc)  # compiled mode: a jit helper that forgot its `return`
    found = found or stray_comma.compile_hint(exc)  # or a stray comma's 1-tuple
    return f"{where}{type(cause).__name__}: {text[0] if text else ''}{deeper}{'; ' + found if found else ''}".strip()


class Instrument:
    """Something that watches a launch (sanitizers, the stepper, the profiler) and adds findings to the result.

    ``active(scenario, case, inputs)`` is entered around the launch (after the reference ran);
    ``finish(result, out, expected)`` runs after the comparison (``out`` is None when the launch raised) and
    may append to ``result.findings`` (dicts with at least ``kind`` and ``message``) or ``result.extra``.
    A finding with ``"severity": "error"`` (the default) makes the case fail.
    """

    name = "instrument"

    def active(self, scenario: Scenario, case: Case, inputs: dict):
        return contextlib.nullcontext()

    def finish(self, result: CaseResult, out, expected) -> None:
        pass


def _reraise_interrupt(exc: BaseException) -> None:
    """An exception raised while an interrupt was unwinding (Ctrl-C, SIGTERM, the watchdog's ``Timeout``: the
    BaseExceptions that are not SystemExit) replaced it: an instrument's or the user's cleanup that failed on a
    kernel cut short. Raise the interrupt again, so that a run stopped at its deadline is an error of the run,
    never the kernel's own failure (a timed-out check item once came back FAIL instead of error in CI)."""
    seen = set()
    ctx = exc.__context__
    while ctx is not None and id(ctx) not in seen:
        seen.add(id(ctx))
        if not isinstance(ctx, (Exception, SystemExit)) and pytest_outcome(ctx) is None:  # (PytestCalled's)
            raise ctx
        ctx = ctx.__context__


def _enter_all(stack, instruments, scenario, case, inputs):
    for inst in instruments:
        stack.enter_context(inst.active(scenario, case, inputs))


def _excuse_layout(result: CaseResult, excused: dict) -> None:
    """A mismatch only in outputs the scenario says cannot be compared (``Scenario.not_comparable``) is a warning
    naming them: the run passes on what it could check (the other outputs, the sanitizers)."""
    failed = [e.name for e in result.errors if not e.passed]
    if not failed or not all(name in excused for name in failed):
        return
    result.status, result.message = "pass", ""
    result.extra["not_compared"] = {name: excused[name]["why"] for name in failed}
    for name in failed:
        result.findings.append({"kind": "not_compared", "severity": "warning", "tensor": name,
                                "file": excused[name].get("file"), "line": excused[name].get("line"),
                                "message": excused[name]["why"]})


def _apply_findings(result: CaseResult) -> None:
    errors = [f for f in result.findings if f.get("severity", "error") == "error"]
    if errors and result.status == "pass":
        result.status = "fail"
        kinds = sorted({f.get("kind", "?") for f in errors})
        result.message = f"{len(errors)} finding(s): {', '.join(kinds)}"


NOTHING_RETURNED = "launch returned None: nothing to compare; did the wrapper forget `return`?"


def _not_tensors(role: str, fn, value) -> str | None:
    """Why ``value`` (a launch's or reference's result) cannot be compared, or None when it can. An item that is
    None is left to the pairing (compare.pairs): None on both sides is skipped, on one side an error."""
    import torch

    from tritondbg.compare import _as_list

    if value is None:
        return NOTHING_RETURNED if role == "launch" else \
            f"reference {describe_callable(fn)} returned None: nothing to compare against; did it forget `return`?"
    items = _as_list(value)
    for v in items:
        if v is not None and not isinstance(v, torch.Tensor):
            return (f"{role} {describe_callable(fn)} returned {type(v).__name__}, not a tensor (or a "
                    "tuple/list/dict of tensors)")
    if not items:
        return f"{role} {describe_callable(fn)} returned an empty {type(value).__name__}: nothing to compare"
    if all(v is None for v in items):
        return (f"{role} {describe_callable(fn)} returned a {type(value).__name__} of None only: nothing to compare"
                + ("; did a helper forget `return`?" if role == "launch" else ""))
    return None


def copy_inputs(value):
    """A private copy of a case's inputs for one callable (launch, reference, baseline): an in-place kernel must
    not hand the next one changed inputs. Tensors keep their strides and storage offset; containers are
    rebuilt; other values are shared."""
    import torch

    if isinstance(value, torch.Tensor):
        with torch.no_grad():
            copy = value.clone()
            if copy.stride() != value.stride() or value.storage_offset():
                # a view with gaps or an offset: copy its whole storage, keep the same view of it
                try:
                    copy = value.new_empty(0).set_(value.untyped_storage().clone(), value.storage_offset(),
                                                   value.size(), value.stride())
                except (RuntimeError, TypeError):
                    pass
        if value.requires_grad and value.is_leaf:
            copy.requires_grad_(True)
        return copy
    if isinstance(value, dict):
        return {k: copy_inputs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_inputs(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(copy_inputs(v) for v in value)
    return value


def run_case(scenario: Scenario, case: Case, dtype: str, *, device: str, seed: int,
             config: dict[str, Any] | None = None, instruments: Sequence[Instrument] = (),
             pinned: Any = None, reference: bool = True) -> CaseResult:
    """Build inputs, run the reference and the kernel (each on its own copy of the inputs), compare.
    Never raises for a kernel failure or a broken scenario callable (make_inputs, reference, launch).

    ``pinned``: an exact triton.Config to run for every autotuned kernel (all-configs sweeps); ``reference``
    False: the launch alone, nothing compared (the determinism gate compares two launches)."""
    from tritondbg import watchdog
    from tritondbg.program import cpu_device

    with watchdog.activity(kernel=scenario.name, case=case.name, dtype=dtype), \
            cpu_device.serving(_mode == "interpret"):  # a library's "cuda" tensors, on the CPU (no GPU here)
        result = _run_case(scenario, case, dtype, device=device, seed=seed, config=config, instruments=instruments,
                           pinned=pinned, use_reference=reference)
        if _poisoned_outputs(result):
            from tritondbg.program.filler_rerun import quietly

            with quietly():  # (a run again: not printed, not traced; helper-148)
                again = _run_case(scenario, case, dtype, device=device, seed=seed, config=config, instruments=(),
                                  pinned=pinned, use_reference=reference)
            _undefined_as_zero(result, again)
        return result


_POISONING = ("poison", "out_of_bounds")  # findings whose lanes the sanitizers fill with NaN


def _poisoned_outputs(result: CaseResult) -> bool:
    """A mismatch with NaN where the reference is finite, beside a finding whose lanes the sanitizers filled with
    NaN: whether the kernel is right apart from those lanes is asked of a run without them."""
    return (result.status == "fail" and any(e.nonfinite for e in result.errors)
            and any(f.get("kind") in _POISONING and f.get("severity", "error") == "error" for f in result.findings))


def _undefined_as_zero(result: CaseResult, plain: CaseResult) -> None:
    """The outputs of the same case run without the sanitizers (the plain interpreter reads 0 where a masked load
    leaves lanes undefined, as today's compiled code does): helper-70's scattermoe replay said "5328/5328
    mismatched, got nan" for a kernel whose only fault is loads without other= (it matches with 0 there)."""
    if plain.status == "error" or not plain.errors:
        return
    result.extra["undefined_as_zero"] = {e.name: {"passed": e.passed, "mismatched": e.mismatched, "numel": e.numel}
                                         for e in plain.errors}


def build_inputs(scenario, case, tdtype, device, generator) -> Mapping:
    """``scenario.make_inputs(case, tdtype, device, generator)``; ScenarioCodeError with one line naming the callable
    and the user's line when it raised (or called ``sys.exit``), or returned no dict (it would surface as the
    reference's "argument after ** must be a mapping"). Every command builds a case's inputs here, so `ir` says
    what `check` says."""
    try:
        with _refuse_os_exit():
            inputs = scenario.make_inputs(case, tdtype, device, generator)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken scenario: one line naming the callable
        _reraise_interrupt(exc)
        raise ScenarioCodeError(raised_message("make_inputs", scenario.make_inputs, exc)) from exc
    if not isinstance(inputs, Mapping):
        raise ScenarioCodeError(f"make_inputs {describe_callable(scenario.make_inputs)} returned "
                                f"{type(inputs).__name__}, not a dict of argument name -> value (the launch and the "
                                "reference take them by name)")
    return inputs


def _run_case(scenario, case, dtype, *, device, seed, config, instruments, pinned, use_reference=True) -> CaseResult:
    import torch

    interpret = _mode == "interpret"
    tdtype = torch_dtype(dtype)
    pinning = plan(scenario.kernels, case.config, config or {}, interpret=interpret, exact=pinned)
    result = CaseResult(kernel=scenario.name, case=case.name, dtype=dtype, mode=_mode or "?", device=device,
                        seed=seed, params=dict(case.params))
    if scenario.flops:
        result.flops = float(scenario.flops(case, tdtype))
    if scenario.bytes:
        result.bytes = float(scenario.bytes(case, tdtype))
    generator = torch.Generator().manual_seed(seed)
    try:
        inputs = build_inputs(scenario, case, tdtype, device, generator)
    except ScenarioCodeError as exc:  # a broken scenario: a result naming the callable
        result.status, result.message = "error", str(exc)
        return result
    reference = scenario.reference_for(case)
    use_reference = use_reference and not scenario.nothing_to_compare
    t0 = time.perf_counter()
    try:
        with _refuse_os_exit():
            expected = reference(**copy_inputs(inputs)) if use_reference else None
    except (Exception, SystemExit) as exc:  # noqa: BLE001
        _reraise_interrupt(exc)
        result.status, result.message = "error", raised_message("reference", reference, exc)
        return result
    result.reference_s = time.perf_counter() - t0
    bad_ref = _not_tensors("reference", reference, expected) if use_reference else None
    if bad_ref:
        result.status, result.message = "error", bad_ref
        return result
    out = None
    launch = scenario.launch_for(case)
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(_refuse_os_exit())
            if interpret:  # numpy's "overflow encountered in cast" named tritondbg's own line; nan_inf names the op
                import numpy as np

                stack.enter_context(np.errstate(over="ignore", invalid="ignore", divide="ignore"))
            stack.enter_context(pinning.active())
            _enter_all(stack, instruments, scenario, case, inputs)
            if interpret:
                from tritondbg.interp import guard

                guard.reset()  # what it keeps out from here on is this case's (the sanitizers report their own)
            t0 = time.perf_counter()
            out = launch(**inputs)
            _sync(device)
            result.wall_s = time.perf_counter() - t0
    except (Exception, SystemExit) as exc:  # a kernel failure (or a sys.exit) is a result, not a crash of the tool
        if getattr(exc, "ends_run", False):  # the user quit pdb at a breakpoint: the whole run stops
            raise
        _reraise_interrupt(exc)
        stops.reraise(exc)  # Ctrl-C / SIGTERM that came back as another error (numpy's shape parsing): a stop
        result.status, result.message = "error", kernel_error_message(exc, scenario)
        reason = not_applicable_reason(exc)
        if reason:  # e.g. the config fails its own tl.static_assert: the compiler would refuse it
            result.extra["not_applicable"] = reason
        out = None
    if interpret:
        _guarded_lanes(result)
    result.config, result.config_source = pinning.used, pinning.sources
    if pinning.skipped:  # default configs passed over because they fail their own tl.static_assert
        result.extra["configs_not_applicable"] = pinning.skipped
    if result.status != "error":
        # (a reproducer of a launch that did not finish has no outputs by design: said below, not as the launch
        # function's "empty dict", a name of tritondbg's own: helper-66)
        bad_out = None if scenario.nothing_to_compare else _not_tensors("launch", launch, out)
        if bad_out:  # nothing was compared: never a pass
            result.status, result.message = "error", bad_out
            out = None
        elif type(out) is tuple and len(out) > 1:  # named as the wrapper's `return o, lse` names them
            names = return_names(launch, len(out))
            out = Named(out, names) if names else out
    if out is not None and use_reference:
        _compare_into(result, out, expected, dtype, case, f"launch {describe_callable(launch)}",
                      per_output=bool(getattr(scenario, "reference_is_capture", False)))
        if result.status == "fail" and scenario.explain_mismatch is not None:
            why = scenario.explain_mismatch(out, expected)
            if why:
                result.message = f"{result.message}; {why}"
        if result.status == "fail" and scenario.not_comparable is not None:
            _excuse_layout(result, scenario.not_comparable(out, expected))
    elif scenario.nothing_to_compare and result.status != "error":  # it ran to its end: still no verdict on it
        result.status, result.message = "error", f"nothing to compare: {scenario.nothing_to_compare}; " \
            f"this run of it finished"
    for inst in instruments:
        inst.finish(result, out, expected)
    if scenario.launch_findings is not None and out is not None:
        result.findings += scenario.launch_findings()
    from tritondbg.interp.findings import stop_last

    stop_last(result.findings)
    _apply_findings(result)
    return result


def compare_outputs(out, expected, dtype: str, case: Case, who: str = "kernel", per_output: bool = False) -> list:
    """ErrorStats of each output, at the case's tolerance (its ``atol`` / ``rtol``, else its dtype's). With
    ``per_output`` (a capture's replay, whose case dtype only labels the launch) and no tolerance the case sets,
    each output at its own dtype's: an fp8 quantising kernel's fp32 scales are held to fp32's, not fp8's."""
    atol, rtol = tolerance(dtype, case.atol, case.rtol)
    if not per_output or case.atol is not None or case.rtol is not None:
        return compare(out, expected, atol, rtol, who)
    from tritondbg.compare import TOLERANCES, pairs

    errors = []
    for name, o, r in pairs(out, expected, who):
        own = str(getattr(o, "dtype", "")).replace("torch.", "")
        o_atol, o_rtol = TOLERANCES.get(own, (atol, rtol))
        errors += compare({name: o}, {name: r}, o_atol, o_rtol, who)
    return errors


def _compare_into(result: CaseResult, out, expected, dtype: str, case: Case, who: str = "kernel",
                  per_output: bool = False) -> None:
    try:
        result.errors = compare_outputs(out, expected, dtype, case, who, per_output)
    except ValueError as exc:
        result.status, result.message = "error", str(exc)
        return
    if not all(e.passed for e in result.errors):
        result.status = "fail"
        worst = max(result.errors, key=lambda e: e.mismatched)
        result.message = (f"{worst.mismatched}/{worst.numel} elements of {worst.name} outside "
                          f"atol={worst.atol:g} rtol={worst.rtol:g}")


def default_device(mode: str) -> str:
    if mode == "interpret":
        return "cpu"
    import torch

    if not torch.cuda.is_available():
        raise UsageError("compiled mode needs a CUDA GPU and none is visible; use `tritondbg interpret` on a CPU")
    return "cuda"


def _guarded_lanes(result: CaseResult) -> None:
    """Lanes the memory guard kept out of memory outside every tensor, with no sanitizer to say so (the correctness
    gate, ``--no-sanitize``): an error at each line (``guard.kept_findings``), and the case is not a pass."""
    from tritondbg.interp import frames, guard

    kept = guard.where()
    result.findings += guard.kept_findings()
    if kept and result.status == "pass":
        (op, file, line), more = next(iter(kept)), len(kept) - 1
        result.status = "fail"
        result.message = (f"the memory guard kept lanes of a {op} out of bounds at {frames.site_name(file)}:{line}"
                          + (f" and {more} more line(s)" if more else "") + " (out_of_bounds): not a pass")


def run(target: str, *, mode: str = "interpret", cases: str | None = None, dtype: str | None = None,
        config: str | dict | None = None, seed: int = 0, command: str = "",
        instruments: Sequence[Instrument] = (), arch: str | None = None, on_result=None) -> RunRecord:
    """Run a scenario's selected cases x dtypes in one mode and return the record of the run.

    ``arch``: the target the interpreter's CPU stand-in reports to host code (default sm_90); ``on_result(result)``
    is called as each case finishes."""
    return Run(target, mode=mode, cases=cases, dtype=dtype, config=config, seed=seed, command=command,
               instruments=instruments, arch=arch).run(on_result)


class Run:
    """A run planned: the scenario loaded, its cases x dtypes chosen and every name checked (bad usage before any
    work). ``run(on_result)`` runs them in order into ``record``, calling ``on_result(result)`` as each finishes.
    A run cut short (SIGINT, SIGTERM, a timeout) ends with ``stop``: the case that was running and the ones not
    started become errors that say so, so ``record`` keeps what finished and is never a pass."""

    def __init__(self, target: str, *, mode: str = "interpret", cases: str | None = None, dtype: str | None = None,
                 config: str | dict | None = None, seed: int = 0, command: str = "",
                 instruments: Sequence[Instrument] = (), arch: str | None = None):
        set_mode(mode, arch)
        self.device = default_device(mode)
        from tritondbg.program import cpu_device

        self._moved_before = cpu_device.moved()  # CUDA requests served on the CPU by this run (from here on)
        self.scenario = loader.load(target)
        self.config = parse_config(config) if isinstance(config, str) or config is None else dict(config)
        selected = select_cases(self.scenario, cases, interpret=(mode == "interpret"))
        self.planned = select_runs(selected, dtype)  # all names checked first
        if self.config and not autotuners(self.scenario.kernels) and self.planned:
            # --config for a kernel the scenario does not list (one a library defines inside a function, as
            # torchao's blockwise fp8 gemm): the autotuned kernels the first case launches, found by running it
            from tritondbg.discover import with_launched_kernels

            self.scenario = with_launched_kernels(self.scenario, self.planned[:1], device=self.device, seed=seed)
        # validate --config keys and values up front (one clear line, exit 2)
        plan(self.scenario.kernels, None, self.config, interpret=(mode == "interpret"))
        self.seed, self.instruments = seed, instruments
        self.record = RunRecord(command=command or f"{mode} {target}")
        self._running: tuple[int, float] | None = None  # (index into planned, perf_counter at its start)

    def run(self, on_result=None) -> RunRecord:
        results = self.record.results
        for i in range(len(results), len(self.planned)):
            case, dt = self.planned[i]
            self._running = (i, time.perf_counter())
            result = run_case(self.scenario, case, dt, device=self.device, seed=self.seed, config=self.config,
                              instruments=self.instruments)
            results.append(result)  # one step: a signal lands before it (unfinished) or after (finished)
            if on_result is not None:
                on_result(result)
            stops.reraise()  # a stop a case swallowed whole (caught inside the user's code): the run ends here
        self._running = None
        return self._complete()

    def started_case(self) -> float:
        """perf_counter at the start of the case running now (now, when none is)."""
        return self._running[1] if self._running is not None else time.perf_counter()

    def stop(self, by: str, why: str, *, running: str | None = None) -> list[CaseResult]:
        """End a run cut short by ``by`` (SIGINT, SIGTERM, timeout): each planned case without a result gets an
        error result, ``running`` (default: "``why`` after N s, before it finished") for the one that was
        running, "not run: ``why`` before it started" for the rest. Returns those results (once)."""
        results = self.record.results
        unfinished = []
        for i in range(len(results), len(self.planned)):
            case, dt = self.planned[i]
            if self._running is not None and self._running[0] == i:
                took = time.perf_counter() - self._running[1]
                message = running or f"{why} after {took:.1f} s, before it finished"
            else:
                message = f"not run: {why} before it started"
            unfinished.append(CaseResult(kernel=self.scenario.name, case=case.name, dtype=dt, mode=_mode or "?",
                                         device=self.device, seed=self.seed, params=dict(case.params),
                                         status="error", message=message, extra={"interrupted": by}))
        results.extend(unfinished)
        self._running = None
        self.record.extra["interrupted"] = True
        self.record.extra["interrupted_by"] = by
        self._complete()
        return unfinished

    def _complete(self) -> RunRecord:
        record = self.record
        try:
            record.environment = environment()
        except Exception:  # noqa: BLE001 - a run cut short still keeps its record
            record.environment = record.environment or {}
        record.extra["scenario_source"] = self.scenario.source
        from tritondbg.program import cpu_device

        if cpu_device.moved() > self._moved_before:
            record.extra["cuda_on_cpu"] = cpu_device.moved() - self._moved_before
        from tritondbg import __version__

        record.tool_version = __version__
        return record
