"""`tritondbg profile -- CMD`, tritondbg's side: run the program attached (tritondbg.program.launcher, feature
``profile``: tritondbg/profile/program.py in the program), then build the same run folder as a scenario
profile from what it wrote: the traces at the top (one per process, with the autotune track and a rank),
``tritondbg/record.json`` (one CaseResult per Triton kernel, ``case = "program"``), TensorBoard summaries and
report.html, plus the per-kernel table (``record.extra["profile"]["program"]["kernels"]``): launches, total and
mean GPU time, share of the program's GPU time, achieved bytes/s from the tensor sizes.
"""
from __future__ import annotations

import glob
import json
import os
import shlex
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from tritondbg.record import RECORD_DIR, UNCHECKED, CaseResult, RunRecord, record_path

# "median" and "achieved" are both of the median traced launch (achieved: its tensor bytes / that time), as the
# record, the report and TensorBoard give them; "total" is every traced launch's (the mean stays in the record)
KERNEL_COLUMNS = ["kernel", "launches", "total", "median", "share", "achieved", "autotune"]


def profile_program(cmd: Sequence[str], *, out_dir: str | None = None, skip: int = 0, active: int | None = None,
                    interpret: bool | None = None, progress: Callable[[str], None] | None = None,
                    timeout: float | None = None) -> tuple[int, RunRecord | None]:
    """Run ``cmd`` attached and profiled; returns (the program's exit status, the run record). ``timeout``:
    seconds before the program is stopped (launcher.run: SIGTERM, then SIGKILL; status 124), its trace kept."""
    from tritondbg import __version__
    from tritondbg.commands.execute import run_folder
    from tritondbg.profile import report, tensorboard
    from tritondbg.profile.session import RunFolder
    from tritondbg.program import launcher, modes

    command = "profile -- " + shlex.join(cmd)
    launcher.resolve(list(cmd), "profile")  # bad usage / not found: before any folder exists
    if interpret is None:
        interpret = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0") or not modes.gpu_visible()
    with RunFolder(run_folder(out_dir, "profile", "program")) as folder:
        tool_dir = folder.path / RECORD_DIR
        tool_dir.mkdir()
        cfg = {"run_dir": str(tool_dir), "trace_dir": str(folder.path), "features": ["profile"], "skip": skip,
               "active": active, "command": "tritondbg " + command}
        if progress:
            window = (f" {skip}..{skip + active - 1}" if active else f" from launch {skip}" if skip else
                      ", or the steps of the program's own torch.profiler session if it starts one")
            progress(f"running: {shlex.join(cmd)}  (profiled: every Triton launch{window})")
        prefetch = _prefetch_report_imports()
        t0 = time.monotonic()
        rc = launcher.run(list(cmd), cfg, interpret=interpret, timeout=timeout)
        t_exit = time.monotonic()
        if prefetch is not None:  # its imports are the report's: ended before the report, never cut at the exit
            prefetch.join(60)
        wall_s = t_exit - t0
        record = build_record(folder.path, command=command, exit_status=rc, interpret=interpret,
                              final_dir=folder.final)
        prog = record.extra["profile"]["program"]
        prog["wall_s"] = wall_s  # the program attached, start to exit
        record.tool_version = __version__
        record.extra["profile"]["run_dir"] = str(folder.final)
        record.extra["profile"]["report"] = report.REPORT_NAME
        record.extra["record_path"] = str(record_path(folder.final))
        record.extra["profile"]["tensorboard"] = tensorboard.write(record, folder.path, None)
        report.write(record, folder.path)
        # tritondbg's own time after the program: reading its traces, TensorBoard, report.html
        prog["report_s"] = time.monotonic() - t_exit
        prog["overhead"] = breakdown(prog["processes"], t0, t_exit, prog["report_s"])
        record.save(record_path(folder.path))
        folder.commit()
    return rc, record


# What the report after the program imports (torch for TensorBoard's summaries: ~1.5 s; matplotlib for the
# roofline): on a machine with cores to spare, imported while the program runs, not after it.
_PREFETCH = ("torch.utils.tensorboard", "matplotlib.figure", "matplotlib.backends.backend_agg")
PREFETCH_MIN_CORES = 8


def _prefetch_report_imports():
    """Import the report's heavy modules in a daemon thread while the program runs, when the machine has at least
    PREFETCH_MIN_CORES cores (on fewer, the import would take CPU time from the program being measured). Returns the
    thread, which the caller joins before its report (a daemon thread cut down mid-import at the exit can abort the
    process), or None."""
    if (os.cpu_count() or 1) < PREFETCH_MIN_CORES or os.environ.get("TRITONDBG_NO_PREFETCH"):
        return None
    import threading

    def work():
        import importlib

        for mod in _PREFETCH:
            try:
                importlib.import_module(mod)
            except Exception:  # noqa: BLE001 - the report imports it again and says what failed
                pass

    thread = threading.Thread(target=work, name="tritondbg-prefetch", daemon=True)
    thread.start()
    return thread


def _opener(path):
    """``open``, or ``gzip.open`` for a ``.gz`` trace (torch's tensorboard_trace_handler(use_gzip=True))."""
    if str(path).endswith((".gz", ".gz.partial")):
        import gzip

        return gzip.open
    return open


def _load(path: str) -> dict | None:
    try:
        with _opener(path)(path, "rt") as f:
            return json.load(f)
    except (OSError, ValueError, EOFError):
        return None


def build_record(run_dir: Path, *, command: str, exit_status: int, interpret: bool,
                 final_dir: Path | None = None) -> RunRecord:
    """The run record from the program's files in ``run_dir`` (traces still named ``*.partial`` or not); the
    traces get the autotune track and a rank here (each read and written once)."""
    from tritondbg.profile import trace_events
    from tritondbg.profile.summary import derive
    from tritondbg.profile.timing import summarize
    from tritondbg.record import environment

    rec = RunRecord(command=command, environment=environment())
    for mod in ("torch", "triton"):  # the program imported them, tritondbg's process did not
        if rec.environment.get(mod) is None:
            try:
                from importlib.metadata import version

                rec.environment[mod] = version(mod)
            except Exception:  # noqa: BLE001 - a version is a nicety
                pass
    rec.environment["TRITON_INTERPRET"] = "1" if interpret else ""
    kernels_table: list[dict[str, Any]] = []
    traces, processes = [], []
    totals_all: dict[str, dict[str, float]] = {}
    per_process = []
    for path in sorted(glob.glob(str(run_dir / RECORD_DIR / "program-*.json"))):
        data = _load(path)
        if not data:
            continue
        names = data.get("traces") or ([data["trace"]] if data.get("trace") else [])
        loaded = [(n, t) for n, t in ((n, _read_trace(run_dir, n)) for n in names) if t is not None]
        totals: dict[str, dict[str, float]] = {}
        source = "cpu"
        for _, trace in loaded:
            t_totals, t_source = trace_events.kernel_totals(trace, data["kernels"])
            source = "gpu" if t_source == "gpu" else source
            for name, t in t_totals.items():
                acc = totals.setdefault(name, {"launches": 0, "total_us": 0.0, "durs_us": []})
                acc["launches"] += t["launches"]
                acc["total_us"] += t["total_us"]
                acc["durs_us"] += t.get("durs_us", [])
        traces += [n for n, _ in loaded]
        per_process.append((data, loaded, totals, source))
        window = dict(data.get("window") or {})
        processes.append({"pid": data["pid"], "trace": data.get("trace"), "traces": [n for n, _ in loaded],
                          "launches_seen": data["launches_seen"], "window": window,
                          "traced_launches": sum(k.get("traced", 0) for k in data["kernels"].values()),
                          "timing": source, "profiler_warnings": data.get("warnings", []),
                          "notes": data.get("notes", []), "overhead": overhead(data)})
        for name, t in totals.items():
            acc = totals_all.setdefault(name, {"launches": 0, "total_us": 0.0})
            acc["launches"] += t["launches"]
            acc["total_us"] += t["total_us"]
    gpu = any(source == "gpu" for _, _, _, source in per_process)
    _finish_traces(run_dir, per_process, command=command, gpu=gpu, final_dir=final_dir)
    triton_names = {n for data, _, _, _ in per_process for n in data["kernels"]}
    # share of the program's GPU time: every GPU kernel in the trace (torch's too); under the interpreter the
    # CPU time of the Triton launches only
    program_us = sum(t["total_us"] for n, t in totals_all.items() if gpu or n in triton_names)
    several = len(per_process) > 1  # one result per (process, kernel): the case names the process
    for data, loaded, totals, source in per_process:
        for name, k in data["kernels"].items():
            t = totals.get(name, {"launches": 0, "total_us": 0.0})
            mean_ms = t["total_us"] / t["launches"] / 1e3 if t["launches"] else None
            decisions = [d for d in data["decisions"] if d["kernel"] == name]
            dtype = ",".join(k.get("dtypes") or []) or k.get("dtype") or "-"
            case = f"program-pid{data['pid']}" if several else "program"
            r = CaseResult(kernel=name, case=case, dtype=dtype, device="cuda" if gpu else "cpu",
                           mode="interpret" if data["interpreted"] else "compiled", seed=0,
                           params={"pid": data["pid"], "shapes": k.get("shapes"), "defined": f"{k['file']}:{k['line']}"})
            if k.get("errors"):  # its time includes launches that did not finish
                r.status = "error"
                r.message = (f"interrupted during a launch ({k['error']})" if k.get("interrupted") else
                             f"{k['errors']} of its {k['launches']} launch(es) raised {k['error']}")
                r.message += ": the time shown includes the unfinished launch(es)"
            else:  # a program's launches have no reference: profiling checks nothing
                r.status, r.message = UNCHECKED, "not checked: a program's launches have no reference"
            r.config = {name: decisions[0]["winner"]} if decisions else {}
            r.config_source = {name: decisions[0]["source"]} if decisions else {}
            r.bytes = k["bytes"] / k["traced"] if k.get("traced") else None
            timeline = None
            for _, trace in loaded:  # the first trace that has this kernel's launches
                timeline = trace_events.launch_timeline(trace, name, gpu_name=name)
                if timeline["launches"]:
                    break
            # median / p20 / p80 over the traced launches (a mean would let one cold or autotuning launch
            # move the figure the table and TensorBoard call a median)
            kernel_t = summarize([d / 1e3 for d in t.get("durs_us", [])],
                                 "torch.profiler: each traced launch's " + (
                                     "GPU kernel time" if source == "gpu" else "CPU time (interpreter)"))
            kernel_t["mean_ms"] = mean_ms
            r.extra["profile"] = {
                "timing": "gpu" if source == "gpu" else "interpreter", "autotune": decisions,
                "kernel": kernel_t,
                "trace": data.get("trace"), "timeline": timeline,
            }
            r.extra["profile"]["metrics"] = derive(r, None)
            rec.results.append(r)
            kernels_table.append({
                "kernel": name, "label": name, "pid": data["pid"], "pids": [data["pid"]],
                "defined": f"{k['file']}:{k['line']}", "durs_ms": sorted(d / 1e3 for d in t.get("durs_us", [])),
                "launches": k["launches"], "traced": k["traced"],
                "timed_launches": t["launches"], "total_ms": t["total_us"] / 1e3, "mean_ms": mean_ms,
                "median_ms": kernel_t.get("median_ms"),
                "share": t["total_us"] / program_us if program_us else None,
                "gbps": r.extra["profile"]["metrics"]["gbps"], "bytes_per_launch": r.bytes,
                "autotune": ", ".join(sorted({d["source"] for d in decisions})) or "-"})
    kernels_table = _across_processes(kernels_table)
    kernels_table.sort(key=lambda row: -row["total_ms"])
    others = sorted(((n, t) for n, t in totals_all.items() if n not in triton_names),
                    key=lambda nt: -nt[1]["total_us"])
    note = "" if gpu else ("interpreter: times are the CPU running TRITON_INTERPRET=1 launches, not GPU "
                           "performance")
    rec.extra["profile"] = {
        "mode": "compiled" if gpu else "interpret", "timing": "gpu" if gpu else "interpreter", "note": note,
        "peaks": None, "traces": traces,
        "program": {"command": command, "exit_status": exit_status, "processes": processes,
                    "window": window_summary(processes, _untraced(run_dir / RECORD_DIR, processes)),
                    "kernels": kernels_table, "program_ms": program_us / 1e3,
                    "other_kernels": [{"kernel": n, "launches": t["launches"], "total_ms": t["total_us"] / 1e3}
                                      for n, t in others[:20]]},
    }
    return rec


def _across_processes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One table row per kernel (name and the line that defines it) however many of the program's processes
    launched it (``pytest -n 2``'s workers, torchrun's ranks): launches and times summed, the median over every
    traced launch, ``pids`` and the label saying how many processes (helper-132: one row per worker's pid). Each
    process keeps its own result in the record (TensorBoard, report's cases)."""
    from tritondbg.profile.timing import summarize

    merged: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        key = (row["kernel"], row["defined"])
        if key not in merged:
            merged[key] = row
            continue
        m = merged[key]
        bytes_all = sum((r["bytes_per_launch"] or 0) * r["traced"] for r in (m, row))
        for f in ("launches", "traced", "timed_launches", "total_ms"):
            m[f] += row[f]
        for f in ("share",):
            m[f] = None if m[f] is None or row[f] is None else m[f] + row[f]
        m["pids"] += row["pids"]
        m["durs_ms"] = sorted(m["durs_ms"] + row["durs_ms"])
        m["mean_ms"] = m["total_ms"] / m["timed_launches"] if m["timed_launches"] else None
        m["median_ms"] = summarize(m["durs_ms"], "")["median_ms"]
        m["bytes_per_launch"] = bytes_all / m["traced"] if m["traced"] and bytes_all else m["bytes_per_launch"]
        m["gbps"] = (m["bytes_per_launch"] / (m["median_ms"] * 1e-3) / 1e9
                     if m["bytes_per_launch"] and m["median_ms"] else m["gbps"])
        m["autotune"] = ", ".join(sorted({a for r in (m, row) for a in r["autotune"].split(", ") if a != "-"})) or "-"
    for m in merged.values():
        del m["durs_ms"]  # (not into the record: one number per launch)
        if len(m["pids"]) > 1:
            m["label"] = f"{m['kernel']} ({len(m['pids'])} processes)"
    return list(merged.values())


def breakdown(processes: list[dict], t_start: float, t_exit: float, report_s: float) -> dict[str, Any]:
    """Where tritondbg's time went: the first process of the program (the one tritondbg started) plus the
    report. ``start_s``: loading tritondbg in the program and attaching (profiler start included); ``exit_s``:
    stopping the profiler, exporting the trace, writing program-<pid>.json; ``python_start_s`` and
    ``teardown_s`` are the interpreter's own start and end (a plain run pays them too)."""
    first = min(processes, key=lambda p: p["overhead"]["phases"].get("bootstrap", float("inf")), default=None)
    if first is None or "bootstrap" not in first["overhead"]["phases"]:
        return {"report_s": report_s, "started_at": t_start, "exited_at": t_exit}
    o = first["overhead"]
    ph = o["phases"]
    start = sum(v for v in (o["bootstrap_s"], o["attach_s"]) if v is not None)
    out = {"start_s": start, "bootstrap_s": o["bootstrap_s"], "attach_s": o["attach_s"],
           "session_start_s": o["session_start_s"], "per_launch_us": o["per_launch_us"],
           "launches": first["launches_seen"], "launches_s": o["launches_s"], "first_launch_s": o["first_launch_s"],
           "window_edges_s": o.get("window_edges_s"),
           "exit_s": o["exit_s"],
           "profiler_stop_s": o["profiler_stop_s"], "export_s": o["export_s"], "report_s": report_s,
           "python_start_s": ph["bootstrap"] - t_start,
           "teardown_s": t_exit - ph["json_written"] if "json_written" in ph else None,
           "processes": len(processes), "started_at": t_start, "exited_at": t_exit}
    out["total_s"] = start + (o["launches_s"] or 0) + (o["exit_s"] or 0) + report_s
    return out


def overhead_line(o: dict[str, Any]) -> str | None:
    """The breakdown in one console line."""
    if "start_s" not in o:
        return None

    def s(v):
        return "-" if v is None else f"{v:.2f} s"

    per = "-" if o["per_launch_us"] is None else f"{o['per_launch_us']:.1f} us"
    # the first launch pays one-time imports (and a session start): the per-launch figure is the others'
    edges = f", the profiler's start and stop in the window's edge launches {s(o['window_edges_s'])}" \
        if o.get("window_edges_s") else ""
    launches = (f"{o['launches']} launch(es) {s(o['launches_s'])} (the first {s(o.get('first_launch_s'))}{edges}, "
                f"then {per} each)" if o.get("first_launch_s") is not None and o["launches"] and o["launches"] > 1
                else f"{per}/launch x {o['launches']} = {s(o['launches_s'])}")
    return (f"tritondbg's own time: start {s(o['start_s'])} (attach + profiler start {s(o['attach_s'])}), "
            f"{launches}, exit {s(o['exit_s'])} (profiler stop "
            f"{s(o['profiler_stop_s'])}, trace export {s(o['export_s'])}), report {s(o['report_s'])}")


def _read_trace(run_dir: Path, name: str) -> dict | None:
    from tritondbg.profile.session import PARTIAL

    for candidate in (run_dir / (name + PARTIAL), run_dir / name):
        if candidate.is_file():
            return _load(str(candidate))
    return None


def _finish_traces(run_dir: Path, per_process, *, command: str = "", gpu: bool = False,
                   final_dir: Path | None = None) -> None:
    """Each trace gets its process's autotune track, a rank and tritondbg's metadata (``"tritondbg"``: the tool,
    the timing, the command, the process; ``profile KERNEL``'s traces carry it too), its ``traceName`` pointing
    at its final name, and is written back once. HTA keys the traces of
    a folder by rank (one replaces another of the same rank): the traces without a distributed rank of their
    own (several processes: pytest-xdist workers, a launcher's children; several cycles of the program's
    profiler schedule) are numbered 0..N-1 in order; a process started with RANK keeps it."""
    from tritondbg.profile import trace_events
    from tritondbg.profile.session import PARTIAL

    todo = []
    for data, loaded, _, _ in per_process:
        for name, trace in loaded:
            if data.get("decisions") and not any(e.get("cat") == trace_events.AUTOTUNE_NAME
                                                 for e in trace.get("traceEvents", [])):
                trace.setdefault("traceEvents", []).extend(trace_events.autotune_events(
                    data["decisions"], trace_events._first_ts(trace), label="program"))
            todo.append((data, name, trace))

    def own_rank(trace) -> bool:  # a distributed program's trace (torch.distributed was initialized)
        info = trace.get("distributedInfo")
        return isinstance(info, dict) and "rank" in info and info.get("backend") != "none"

    unranked = [trace for data, _, trace in todo if not data.get("rank") and not own_rank(trace)]
    for i, trace in enumerate(unranked):
        trace["distributedInfo"] = {"backend": "none", "rank": i, "world_size": len(unranked)}
    from tritondbg import __version__

    for data, name, trace in todo:
        if data.get("rank"):
            trace_events.ensure_rank(trace, *data["rank"])
        trace["tritondbg"] = json.dumps({
            "tool": f"tritondbg {__version__}", "timing": "gpu" if gpu else "interpreter", "command": command,
            "pid": data.get("pid"), "kernels": sorted(data.get("kernels") or {}),
            "note": "" if gpu else "interpreter: CPU times of TRITON_INTERPRET=1 launches, not GPU performance"})
        if isinstance(trace.get("traceName"), str):  # the run folder's and the file's names once committed
            trace["traceName"] = str((final_dir or run_dir) / name)
        for candidate in (run_dir / (name + PARTIAL), run_dir / name):
            if candidate.is_file():
                try:
                    text = json.dumps(trace, allow_nan=False)
                except ValueError:  # a NaN in the profiler's own numbers: keep the trace as it is
                    text = json.dumps(trace)
                with _opener(candidate)(candidate, "wt") as f:
                    f.write(text)
                break


def _untraced(record_dir: Path, processes: list[dict]) -> dict[str, int]:
    """Launches of the program's processes that wrote a launch summary but no profile (forked workers, whose
    profiler session is the parent's; a process killed before its profiler could stop): {"launches", "processes"}."""
    traced = {p.get("pid") for p in processes}
    launches = count = 0
    for path in glob.glob(str(record_dir / "summary-*.json")):
        data = _load(path) or {}
        n = sum((data.get("launches") or {}).values())
        if data.get("pid") not in traced and n:
            launches, count = launches + n, count + 1
    return {"launches": launches, "processes": count}


def window_summary(processes: list[dict], untraced: dict | None = None) -> dict[str, Any]:
    """What was traced: tritondbg's window (``launches A..B``) or the program's own profiler session
    (``program schedule``: the cycles and steps seen), over every process; ``untraced``: launches in processes
    with no profile (``_untraced``), counted in "launches"."""
    sources = sorted({(p.get("window") or {}).get("source") or "launches" for p in processes})
    cycles = [c for p in processes for c in (p.get("window") or {}).get("cycles", [])]
    untraced = untraced or {"launches": 0, "processes": 0}
    return {"source": ", ".join(sources) if sources else None, "cycles": cycles,
            "steps": sorted({s for c in cycles for s in c.get("steps", [])}),
            "launches": sum(p["launches_seen"] for p in processes) + untraced["launches"],
            "traced": sum(p.get("traced_launches", 0) for p in processes), "untraced": untraced}


def window_text(window: dict[str, Any]) -> str | None:
    """What was traced, in one line (console and report.html)."""
    if not window or window.get("launches") is None:
        return None
    if not window["launches"]:
        return "traced: no Triton launch ran"
    text = f"traced: {window['traced']} of {window['launches']} Triton launches ({window.get('source')}"
    if window.get("cycles"):
        steps = window.get("steps") or []
        text += f": {len(window['cycles'])} trace(s), one per cycle of the program's profiler"
        if "program schedule" in (window.get("source") or ""):
            text += f", steps {steps[0]}..{steps[-1]}" if steps else ", no step with a Triton launch"
    untraced = window.get("untraced") or {}
    if untraced.get("launches"):
        text += (f"; {untraced['launches']} in {untraced['processes']} process(es) with no trace: forked workers "
                 "(their profiler session is the parent's) or a process killed before it could stop its profiler")
    return text + ")"


def overhead(data: dict) -> dict[str, Any]:
    """Where tritondbg's time went in one process of the program (seconds, from its phase stamps)."""
    ph = data.get("phases") or {}

    def span(a, b):
        return round(ph[b] - ph[a], 6) if a in ph and b in ph else None

    seen = data.get("launches_seen") or 0
    own_s = (data.get("own_ns") or 0) / 1e9
    first_s = (data.get("first_launch_ns") or 0) / 1e9
    # the profiler's start and (with --active) stop at the window's edges happen inside a launch: not per launch
    edges = 0.0
    if "session_begin" in ph and ph["session_begin"] > ph.get("attach_ready", 0):  # started inside a launch
        edges += span("session_begin", "session_started") or 0.0
        if ph.get("profiler_stopping", 0) < ph.get("exit", 0):  # stopped at the window's end, not at exit
            edges += span("profiler_stopping", "profiler_stopped") or 0.0
    # per launch: the launches after the first (the first one pays one-time imports and perhaps a session start)
    per_launch = (max(own_s - first_s - edges, 0.0) / (seen - 1) * 1e6 if seen > 1
                  else (own_s * 1e6 if seen else None))
    return {"bootstrap_s": span("bootstrap", "child_loaded"), "attach_s": span("attach_start", "attach_ready"),
            "session_start_s": span("session_begin", "session_started"),
            "per_launch_us": None if per_launch is None else round(per_launch, 3),
            "first_launch_s": round(first_s, 6), "launches_s": round(own_s, 6), "window_edges_s": round(edges, 6),
            "exit_s": span("exit", "json_written"), "profiler_stop_s": span("profiler_stopping", "profiler_stopped"),
            "export_s": span("profiler_stopped", "trace_exported"), "phases": ph}


def kernel_cells(row: dict[str, Any]) -> list[str]:
    """One row of the per-kernel table (console and report)."""
    from tritondbg.profile.summary import fmt_time

    if not row.get("timed_launches"):  # every launch outside the traced window: no time, not "0.0 us"
        return [row.get("label", row["kernel"]), str(row["launches"]), "- (not traced)", "-", "-", "-",
                row["autotune"]]
    share = "-" if row["share"] is None else f"{100 * row['share']:.1f}%"
    gbps = "-" if row["gbps"] is None else f"{row['gbps']:.4g} GB/s"
    return [row.get("label", row["kernel"]), str(row["launches"]), fmt_time(row["total_ms"]),
            fmt_time(row.get("median_ms")), share, gbps, row["autotune"]]
