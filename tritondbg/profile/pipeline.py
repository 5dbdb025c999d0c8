"""Profile kernels x cases x dtypes into one run folder and one run record.

Per case (scenario x case x dtype):
1. ``runner.run_case`` with the profile instrument: builds the inputs, checks the output against the
   reference, and watches the first launch (inside an NVTX range + record_function) for autotune decisions.
2. GPU: the kernel and torch's version of the same work timed by ``do_bench`` (outside the trace: its L2
   flushes and hundreds of launches would bury the trace). Interpreter: timed by wall clock in step 3.
3. A torch.profiler session (CPU, + CUDA on a GPU; record_shapes) around ``--iters`` launches, each in its
   NVTX range + record_function, then the torch version under ``record_function("torch: ...")``; the case's
   profile record goes into the trace as metadata (key ``tritondbg``). One trace file per case, named
   ``<kernel>-<case>-<dtype>.<ns>.pt.trace.json``: the PyTorch Profiler plugin shows each as a worker.
   The trace then gets the autotune decisions as events on an "autotune" track and a ``distributedInfo``
   (rank = the case's index in the run: HTA keys traces by rank, so one rank per case keeps them all), and
   the case's launch timeline is read back from it into the record.
Then the roofline, the TensorBoard summaries, ``report.html`` and ``tritondbg/record.json`` are written and the
folder committed. Run folder layout: only trace files (``*.json``) at the top, each with a rank, so Holistic
Trace Analysis can open the folder; tritondbg's own JSON lives under ``tritondbg/``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from tritondbg import loader, runner, selection
from tritondbg.configs import parse_config
from tritondbg.pinning import plan
from tritondbg.errors import UsageError
from tritondbg.profile.autotune import AutotuneWatch
from tritondbg.profile.nvtx_ranges import LaunchRange, nvtx_state, range_message, range_name
from tritondbg.profile import trace_events
from tritondbg.profile.session import (PARTIAL, RunFolder, cuda_tool_attached, reraise_if_terminated, trace_session,
                                       worker_name)
from tritondbg.profile.summary import INTERPRETER_NOTE, derive
from tritondbg.record import CaseResult, RunRecord, environment
from tritondbg.scenario import Case, Scenario

# Launches per case when not given: the interpreter takes 10-400 ms a launch for the bundled tiny cases;
# on a GPU the trace needs enough launches to show steady state, while do_bench does the timing.
DEFAULT_ITERS = {"interpret": 3, "compiled": 20}
DEFAULT_WARMUP = {"interpret": 1, "compiled": 10}


@dataclasses.dataclass
class Options:
    iters: int
    warmup: int
    seed: int = 0
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    cuda_graph: bool = False
    peak_source: str = "measured"


class ProfileInstrument(runner.Instrument):
    """Around the first launch of a case: keeps the inputs, an NVTX range, and watches the autotuner."""

    name = "profile"

    def __init__(self, scenario: Scenario, dtype: str, interpret: bool):
        self.scenario, self.dtype, self.interpret = scenario, dtype, interpret
        self.watch = AutotuneWatch(scenario.kernels)
        self.inputs: dict | None = None

    @contextlib.contextmanager
    def active(self, scenario, case, inputs):
        self.inputs = inputs
        rng = LaunchRange(f"{range_name(scenario.name, case.name, self.dtype)} (first launch)",
                          range_message(scenario.name, case.name, self.dtype, {}, inputs, phase="first launch"))
        with self.watch.watching(listen=not self.interpret), rng:
            yield

    def finish(self, result: CaseResult, out, expected) -> None:
        prof = result.extra.setdefault("profile", {})
        prof["autotune"] = self.watch.decisions(result.config, result.config_source, interpret=self.interpret)


def choose_mode(force_interpret: bool) -> str:
    """Compiled on a CUDA GPU, else the interpreter."""
    import torch

    return "interpret" if force_interpret or not torch.cuda.is_available() else "compiled"


def select(scenario: Scenario, case: str | None, dtype: str | None, interpret: bool) -> list[tuple[Case, list[str]]]:
    """The cases to profile: as named; by default on a GPU the scenario's first GPU-size case (a tiny
    shape says nothing about speed), under the interpreter its ``tiny`` case."""
    if case is None and not interpret:
        gpu = [c for c in scenario.cases if not c.interpret]
        cases = gpu[:1] or selection.select_cases(scenario, None, interpret=False)
    else:
        cases = selection.select_cases(scenario, case, interpret=interpret)
    return [(c, selection.select_dtypes(c, dtype)) for c in cases]


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def _torch_side(scenario: Scenario, case: Case, inputs: dict) -> tuple[Callable[[], Any], str, str]:
    """torch's version of the same work: the scenario's baseline, else its (accuracy) reference."""
    if scenario.baseline is not None:
        doc = (scenario.baseline.__doc__ or scenario.baseline.__name__).strip().splitlines()[0]
        return (lambda: scenario.baseline(**inputs)), doc, "baseline"
    ref = scenario.reference_for(case)
    return (lambda: ref(**inputs)), "reference (accuracy reference, often fp32: not torch's fastest)", "reference"


def _time_torch(fn, label, kind, *, interpret, cuda_graph, scenario, case, inputs):
    """Check torch's version runs (falling back from a failing baseline to the reference), time it on a GPU."""
    from tritondbg.profile.timing import time_gpu

    info: dict[str, Any] = {"label": label, "kind": kind}
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - e.g. torch._scaled_mm on a CPU or an unsupported shape
        info["baseline_error"] = _one_line(exc)
        ref = scenario.reference_for(case)
        fn = (lambda: ref(**inputs))
        info.update(label="reference (the baseline failed)", kind="reference")
    if not interpret:
        try:
            info.update(time_gpu(fn, cuda_graph=cuda_graph))
        except Exception as exc:  # noqa: BLE001 - no torch time is a missing column, not a failed case
            info["error"] = _one_line(exc)
            return None, info
    return fn, info


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def profile_case(scenario: Scenario, case: Case, dtype: str, *, device: str, interpret: bool, opts: Options,
                 folder: RunFolder, peaks: dict | None, rank: tuple[int, int] = (0, 1)) -> CaseResult:
    """Check, time and trace one case; its CaseResult carries everything in ``extra["profile"]``."""
    inst = ProfileInstrument(scenario, dtype, interpret)
    result = runner.run_case(scenario, case, dtype, device=device, seed=opts.seed, config=opts.config,
                             instruments=[inst])
    prof = result.extra.setdefault("profile", {})
    prof["timing"] = "interpreter" if interpret else "gpu"
    if interpret:
        prof["note"] = INTERPRETER_NOTE
    inputs, inst.inputs = inst.inputs, None
    if result.status == "error":
        reraise_if_terminated(RuntimeError(result.message))
    if result.status == "error" or inputs is None:
        prof["skipped"] = "the launch raised: nothing to time or trace"
        return result
    pinning = plan(scenario.kernels, case.config, opts.config, interpret=interpret)
    rng = LaunchRange(range_name(scenario.name, case.name, dtype),
                      range_message(scenario.name, case.name, dtype, result.config, inputs))
    prof["nvtx"] = {**rng.describe(), **nvtx_state()}
    # On a GPU with nothing pinned, Pinning's Autotuner.run patch would only add Python work to every timed
    # launch (a few us: visible in do_bench for launch-bound kernels); the autotuner's cache answers anyway.
    pin = pinning.active() if interpret or pinning.pins else contextlib.nullcontext()
    try:
        with pin:
            _time_and_trace(scenario, case, dtype, result, inputs, rng, device=device, interpret=interpret,
                            opts=opts, folder=folder, peaks=peaks, rank=rank)
    except Exception as exc:  # noqa: BLE001 - a later launch failing is this case's result, not the end of the run
        reraise_if_terminated(exc)
        result.status = "error"
        result.message = f"while timing/tracing: {runner.kernel_error_message(exc, scenario)}"
        prof["skipped"] = result.message
    return result


def _time_and_trace(scenario: Scenario, case: Case, dtype: str, result: CaseResult, inputs: dict,
                    rng: LaunchRange, *, device: str, interpret: bool, opts: Options, folder: RunFolder,
                    peaks: dict | None, rank: tuple[int, int] = (0, 1)) -> None:
    import torch

    from tritondbg.profile.timing import WallClock, time_gpu

    prof = result.extra["profile"]
    launch = scenario.launch_for(case)

    def kernel_fn():
        return launch(**inputs)

    if not interpret:
        prof["kernel"] = time_gpu(kernel_fn, cuda_graph=opts.cuda_graph)
    torch_fn, prof["torch"] = _time_torch(*_torch_side(scenario, case, inputs), interpret=interpret,
                                          cuda_graph=opts.cuda_graph, scenario=scenario, case=case, inputs=inputs)
    for _ in range(opts.warmup):
        kernel_fn()
    _sync(device)
    kclock, tclock = WallClock(), WallClock()
    torch_range = f"torch: {range_name(scenario.name, case.name, dtype)} ({prof['torch']['label']})"
    traced = rng.recording()  # inside the session: NVTX range + record_function
    with trace_session(folder.path, worker_name(scenario.name, case.name, dtype), cuda=not interpret) as session:
        for _ in range(opts.iters):
            with kclock, traced:
                kernel_fn()
        _sync(device)
        if torch_fn is not None:
            for _ in range(opts.iters):
                with tclock, torch.autograd.profiler.record_function(torch_range):
                    torch_fn()
            _sync(device)
        if interpret:
            prof["kernel"] = kclock.summary()
            if torch_fn is not None:
                prof["torch"].update(tclock.summary("perf_counter (torch on the CPU)"))
        prof["launches_traced"] = opts.iters
        prof["metrics"] = derive(result, peaks)
        session.add_metadata("tritondbg", trace_metadata(result))
    prof["trace"] = session.file
    if session.warnings:
        prof["profiler_warnings"] = session.warnings
    if session.file:  # the autotune track and a rank for HTA, then the launches for the report's timeline
        trace = trace_events.add_to_trace(folder.path / (session.file + PARTIAL), prof.get("autotune") or [],
                                          label=range_name(scenario.name, case.name, dtype), rank=rank)
        prof["timeline"] = trace_events.launch_timeline(trace, rng.name, torch_range if torch_fn else None)


def trace_metadata(result: CaseResult) -> dict[str, Any]:
    """What the trace carries about its case: an exporter of the record."""
    from tritondbg import __version__

    prof = result.extra.get("profile", {})
    meta = {"tool": f"tritondbg {__version__}", "timing": prof.get("timing"), "note": prof.get("note", ""),
            "kernel": result.kernel, "case": result.case, "dtype": result.dtype, "params": result.params,
            "check": result.status, "config": result.config, "config_source": result.config_source,
            "kernel_time_ms": prof.get("kernel"), "torch_time_ms": prof.get("torch"),
            "metrics": prof.get("metrics"), "autotune": prof.get("autotune", []), "nvtx": prof.get("nvtx")}
    return meta


def _peaks(mode: str, source: str) -> dict | None:
    if mode != "compiled":
        return None
    from tritondbg.profile.peaks import gpu_peaks

    try:
        return gpu_peaks(source)
    except Exception as exc:  # noqa: BLE001 - no peak figures is a missing column, not a failed profile
        return {"source": "unavailable", "device": "?", "figures": {}, "error": f"{type(exc).__name__}: {exc}"}


def profile(targets: Sequence[str], *, all_kernels: bool = False, case: str | None = None,
            dtype: str | None = None, iters: int | None = None, warmup: int | None = None,
            out_dir: str | None = None, config: str | None = None, seed: int = 0, cuda_graph: bool = False,
            peak_source: str = "measured", force_interpret: bool = False, command: str = "profile",
            progress: Callable[[str], None] | None = None) -> RunRecord:
    """Profile the kernels; returns the record (``record.extra["profile"]["run_dir"]`` is the run folder).
    ``progress`` gets one line per case as it finishes (the console prints them to stderr)."""
    import time

    from tritondbg import __version__
    from tritondbg.commands.execute import run_folder
    from tritondbg.profile import report, roofline, tensorboard
    from tritondbg.record import record_path

    names = list(targets)
    if all_kernels:
        names = loader.bundled_names() + [t for t in names if t not in loader.bundled_names()]
    if not names:
        raise UsageError("name a KERNEL to profile (see `tritondbg list`) or pass --all")
    mode = choose_mode(force_interpret)
    interpret = mode == "interpret"
    runner.set_mode(mode)
    device = runner.default_device(mode)
    requested = parse_config(config)
    work = []
    for name in names:  # resolve every name, case, dtype and --config before any work
        scenario = loader.load(name)
        plan(scenario.kernels, None, requested, interpret=interpret)
        work.append((scenario, select(scenario, case, dtype, interpret)))
    opts = Options(iters=iters or DEFAULT_ITERS[mode], warmup=DEFAULT_WARMUP[mode] if warmup is None else warmup,
                   seed=seed, config=requested, cuda_graph=cuda_graph, peak_source=peak_source)
    stem = "all" if all_kernels else "+".join(Path(n.split("::")[0]).stem for n in names)
    peaks = _peaks(mode, peak_source)
    record = RunRecord(command=command)
    total = sum(len(dtypes) for _, cases in work for _, dtypes in cases)
    with RunFolder(run_folder(out_dir, "profile", stem)) as folder, _said_if_interrupted(record, total):
        for scenario, cases in work:
            for c, dtypes in cases:
                for dt in dtypes:
                    t0 = time.perf_counter()
                    r = profile_case(scenario, c, dt, device=device, interpret=interpret, opts=opts,
                                     folder=folder, peaks=peaks, rank=(len(record.results), total))
                    record.results.append(r)
                    if progress is not None:
                        progress(progress_line(r, len(record.results), total, time.perf_counter() - t0))
        note = INTERPRETER_NOTE if interpret else ""
        record.environment = environment()
        record.tool_version = __version__
        record.extra["profile"] = {
            "run_dir": str(folder.final), "mode": mode, "timing": "interpreter" if interpret else "gpu",
            "note": note, "peaks": peaks, "iters": opts.iters, "warmup": opts.warmup, "cuda_graph": cuda_graph,
            "activities": ["cpu"] + ([] if interpret or cuda_tool_attached() else ["cuda"]),
            "cuda_tool_attached": cuda_tool_attached(), "nvtx": nvtx_state(),
            "traces": [r.extra["profile"]["trace"] for r in record.results if r.extra["profile"].get("trace")],
        }
        png = roofline.draw(record, folder.path / "roofline.png", peaks, note)
        record.extra["profile"]["roofline"] = png.name if png else None
        record.extra["profile"]["report"] = report.REPORT_NAME
        record.extra["record_path"] = str(record_path(folder.final))
        record.extra["profile"]["tensorboard"] = tensorboard.write(record, folder.path, png)
        report.write(record, folder.path)
        record.save(record_path(folder.path))
        folder.commit()
    return record


@contextlib.contextmanager
def _said_if_interrupted(record: RunRecord, total: int):
    """Ctrl-C during a profile: one line saying how far it got and that its unfinished run folder is removed
    (click's own word was "aborted")."""
    try:
        yield
    except KeyboardInterrupt:
        print(f"tritondbg profile: interrupted after {len(record.results)} of {total} case(s); the "
              "unfinished run folder was removed (a profile's traces, report and record are written together)",
              file=sys.stderr)
        raise


def progress_line(r: CaseResult, done: int, total: int, secs: float) -> str:
    """``[3/18] gemm:square_4096:bfloat16 ok 0.21 ms (12.4 s)``: one line per profiled case."""
    from tritondbg.profile.summary import fmt_time

    med = ((r.extra.get("profile") or {}).get("kernel") or {}).get("median_ms")
    status = "ok" if r.status == "pass" else r.status
    took = f"{secs:.1f} s" if secs >= 0.1 else f"{secs * 1e3:.0f} ms"  # a fast case never reads "0.0 s"
    return f"[{done}/{total}] {r.kernel}:{r.case}:{r.dtype} {status} {fmt_time(med)} ({took} of wall time)"
