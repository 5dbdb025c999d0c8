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

from tritondbg.record import RECORD_DIR, CaseResult, RunRecord, record_path

KERNEL_COLUMNS = ["kernel", "launches", "total", "mean", "share", "achieved", "autotune"]


def profile_program(cmd: Sequence[str], *, out_dir: str | None = None, skip: int = 0, active: int | None = None,
                    interpret: bool | None = None, progress: Callable[[str], None] | None = None
                    ) -> tuple[int, RunRecord | None]:
    """Run ``cmd`` attached and profiled; returns (the program's exit status, the run record)."""
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
            progress(f"running: {shlex.join(cmd)}  (profiled: every Triton launch"
                     + (f" {skip}..{skip + active - 1}" if active else f" from launch {skip}" if skip else "") + ")")
        t0 = time.perf_counter()
        rc = launcher.run(list(cmd), cfg, interpret=interpret)
        wall_s = time.perf_counter() - t0
        record = build_record(folder.path, command=command, exit_status=rc, interpret=interpret)
        record.extra["profile"]["program"]["wall_s"] = wall_s  # the program attached, start to exit
        record.tool_version = __version__
        record.extra["profile"]["run_dir"] = str(folder.final)
        record.extra["profile"]["report"] = report.REPORT_NAME
        record.extra["record_path"] = str(record_path(folder.final))
        record.extra["profile"]["tensorboard"] = tensorboard.write(record, folder.path, None)
        report.write(record, folder.path)
        # tritondbg's own time after the program: reading its traces, TensorBoard, report.html
        record.extra["profile"]["program"]["report_s"] = time.perf_counter() - t0 - wall_s
        record.save(record_path(folder.path))
        folder.commit()
    return rc, record


def _load(path: str) -> dict | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def build_record(run_dir: Path, *, command: str, exit_status: int, interpret: bool) -> RunRecord:
    """The run record from the program's files in ``run_dir`` (traces still named ``*.partial`` or not)."""
    from tritondbg.profile import trace_events
    from tritondbg.profile.session import PARTIAL
    from tritondbg.profile.summary import derive
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
        trace = {}
        if data.get("trace"):
            for candidate in (run_dir / (data["trace"] + PARTIAL), run_dir / data["trace"]):
                if candidate.is_file():
                    trace = json.loads(candidate.read_text())
                    break
            traces.append(data["trace"])
        totals, source = trace_events.kernel_totals(trace, data["kernels"])
        per_process.append((data, trace, totals, source))
        processes.append({"pid": data["pid"], "trace": data.get("trace"), "launches_seen": data["launches_seen"],
                          "window": data["window"], "timing": source,
                          "profiler_warnings": data.get("warnings", []), "notes": data.get("notes", [])})
        for name, t in totals.items():
            acc = totals_all.setdefault(name, {"launches": 0, "total_us": 0.0})
            acc["launches"] += t["launches"]
            acc["total_us"] += t["total_us"]
    _rank_processes(run_dir, per_process)
    gpu = any(source == "gpu" for _, _, _, source in per_process)
    triton_names = {n for data, _, _, _ in per_process for n in data["kernels"]}
    # share of the program's GPU time: every GPU kernel in the trace (torch's too); under the interpreter the
    # CPU time of the Triton launches only
    program_us = sum(t["total_us"] for n, t in totals_all.items() if gpu or n in triton_names)
    for data, trace, totals, source in per_process:
        for name, k in data["kernels"].items():
            t = totals.get(name, {"launches": 0, "total_us": 0.0})
            mean_ms = t["total_us"] / t["launches"] / 1e3 if t["launches"] else None
            decisions = [d for d in data["decisions"] if d["kernel"] == name]
            r = CaseResult(kernel=name, case="program", dtype=k.get("dtype") or "-", device="cuda" if gpu else "cpu",
                           mode="interpret" if data["interpreted"] else "compiled", seed=0,
                           params={"pid": data["pid"], "shapes": k.get("shapes"), "defined": f"{k['file']}:{k['line']}"})
            r.config = {name: decisions[0]["winner"]} if decisions else {}
            r.config_source = {name: decisions[0]["source"]} if decisions else {}
            r.bytes = k["bytes"] / k["traced"] if k.get("traced") else None
            r.extra["profile"] = {
                "timing": "gpu" if source == "gpu" else "interpreter", "autotune": decisions,
                "kernel": {"median_ms": mean_ms, "p20_ms": None, "p80_ms": None, "n": t["launches"],
                           "method": "torch.profiler: mean " + ("GPU kernel time" if source == "gpu" else
                                                                "CPU time of the launch (interpreter)")},
                "trace": data.get("trace"),
                "timeline": trace_events.launch_timeline(trace, name, gpu_name=name) if trace else None,
            }
            r.extra["profile"]["metrics"] = derive(r, None)
            rec.results.append(r)
            kernels_table.append({
                "kernel": name, "pid": data["pid"], "launches": k["launches"], "traced": k["traced"],
                "timed_launches": t["launches"], "total_ms": t["total_us"] / 1e3, "mean_ms": mean_ms,
                "share": t["total_us"] / program_us if program_us else None,
                "gbps": r.extra["profile"]["metrics"]["gbps"], "bytes_per_launch": r.bytes,
                "autotune": ", ".join(sorted({d["source"] for d in decisions})) or "-"})
    kernels_table.sort(key=lambda row: -row["total_ms"])
    others = sorted(((n, t) for n, t in totals_all.items() if n not in triton_names),
                    key=lambda nt: -nt[1]["total_us"])
    note = "" if gpu else ("interpreter: times are the CPU running TRITON_INTERPRET=1 launches, not GPU "
                           "performance")
    rec.extra["profile"] = {
        "mode": "compiled" if gpu else "interpret", "timing": "gpu" if gpu else "interpreter", "note": note,
        "peaks": None, "traces": traces,
        "program": {"command": command, "exit_status": exit_status, "processes": processes,
                    "kernels": kernels_table, "program_ms": program_us / 1e3,
                    "other_kernels": [{"kernel": n, "launches": t["launches"], "total_ms": t["total_us"] / 1e3}
                                      for n, t in others[:20]]},
    }
    return rec


def _rank_processes(run_dir: Path, per_process) -> None:
    """Several processes (pytest-xdist workers, a launcher's children) without a distributed rank of their own
    each got rank 0: number them, so HTA keeps every process's trace (it keys traces by rank)."""
    from tritondbg.profile.session import PARTIAL

    ours = [(data, trace) for data, trace, _, _ in per_process
            if trace and (trace.get("distributedInfo") or {}).get("backend") == "none"]
    if len(ours) < 2:
        return
    for i, (data, trace) in enumerate(ours):
        trace["distributedInfo"].update(rank=i, world_size=len(ours))
        for candidate in (run_dir / (data["trace"] + PARTIAL), run_dir / data["trace"]):
            if candidate.is_file():
                candidate.write_text(json.dumps(trace, allow_nan=False))
                break


def kernel_cells(row: dict[str, Any]) -> list[str]:
    """One row of the per-kernel table (console and report)."""
    from tritondbg.profile.summary import fmt_time

    share = "-" if row["share"] is None else f"{100 * row['share']:.1f}%"
    gbps = "-" if row["gbps"] is None else f"{row['gbps']:.4g} GB/s"
    return [row["kernel"], str(row["launches"]), fmt_time(row["total_ms"]), fmt_time(row["mean_ms"]), share, gbps,
            row["autotune"]]
