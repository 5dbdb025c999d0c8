"""The profile run on screen: the interpreter warning, autotune decisions, the summary table, where to look."""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from tritondbg.configs import config_str
from tritondbg.profile import peaks as peaks_mod
from tritondbg.program import launcher
from tritondbg.profile.summary import HEADERS, fmt_time, rows, table_cells, vs_torch_note
from tritondbg.record import UNCHECKED, RunRecord


def _decision_lines(d: dict[str, Any]) -> list[str]:
    key = f" key=({', '.join(d['key'])})" if d.get("key") else ""
    head = f"autotune {d['kernel']}{key}: {d['source']}" + (f" ({d['calls']} calls)" if d.get("calls", 1) > 1 else "")
    if not d["timed"]:
        return [f"{head}; ran {config_str(d['winner'])} [dim](untimed: {d['note']})[/]"]
    timed = [e for e in d["configs"] if e["status"] == "timed"]
    failed = [e for e in d["configs"] if e["status"] == "failed"]
    lines = [f"{head}; {len(timed)} timed, {len(failed)} failed, {len(d['pruned'])} pruned"
             + (f", {d['bench_s']:.1f} s" if d.get("bench_s") else "") + (" (cache hit)" if d["cache_hit"] else "")]
    for e in sorted(d["configs"], key=lambda e: (e["p50_ms"] is None, e["p50_ms"] or 0)):
        if e["status"] == "timed":
            t = fmt_time(e["p50_ms"]) + (f" (p20 {fmt_time(e['p20_ms'])}, p80 {fmt_time(e['p80_ms'])})"
                                         if e["p20_ms"] is not None else "")
        else:
            t = e["status"] + (f" ({e['reason']})" if e.get("reason") else "")
        mark = "[green]*[/]" if e["winner"] else " "
        lines.append(f"  {mark} {config_str(e['config'])}: {t}")
    if d.get("note"):
        lines.append(f"  [dim]{d['note']}[/]")
    return lines


def print_profile(record: RunRecord) -> None:
    """Everything a person needs after `tritondbg profile`."""
    con = Console(highlight=False)
    if not con.is_terminal:  # piped or captured: rich would squeeze the table into 80 columns
        con = Console(highlight=False, width=200)
    info = record.extra.get("profile", {})
    if info.get("note"):
        con.print(f"[bold yellow]Note: {info['note']}.[/]")
    decisions: dict[str, list[str]] = {}  # decision text -> the dtypes it was made for (one line for all)
    for r in record.results:
        for d in r.extra.get("profile", {}).get("autotune", []):
            text = "\n".join(_decision_lines(d))
            decisions.setdefault(f"{r.kernel}:{r.case}\0{text}", []).append(r.dtype)
    for k, dtypes in decisions.items():
        where, text = k.split("\0", 1)
        con.print(f"[bold]{where}:{','.join(dtypes)}[/] {text}")
    for r in record.results:
        prof = r.extra.get("profile", {})
        if r.status not in ("pass", UNCHECKED):
            con.print(f"[red]{r.kernel}:{r.case}:{r.dtype} {r.status}: {r.message}[/]")
        if prof.get("torch", {}).get("baseline_error"):
            con.print(f"[dim]{r.kernel}:{r.case}:{r.dtype}: torch baseline failed "
                      f"({prof['torch']['baseline_error']}); timed the reference instead[/]")
    table = Table(title="interpreter timings (not GPU performance)" if info.get("note") else "profile")
    for h in HEADERS:
        table.add_column(h, justify="right" if h in ("median", "throughput", "% of peak", "vs torch", "torch")
                         else "left")
    for row in rows(record):
        table.add_row(*table_cells(row))
    con.print(table)
    con.print(f"[dim]{peaks_mod.describe(info.get('peaks'))}; {vs_torch_note(record)}[/]")
    for line in view_lines(record):
        con.print(line, soft_wrap=True)


def view_lines(record: RunRecord) -> list[str]:
    """Where the run is and the exact commands to look at it (the real --out, not a default)."""
    from pathlib import Path

    info = record.extra.get("profile", {})
    run_dir = info.get("run_dir")
    if not run_dir:
        return []
    lines = [f"run folder: {run_dir}  (traces with an autotune track, TensorBoard summaries, "
             + ("roofline.png, " if info.get("roofline") else "") + "tritondbg/record.json)"]
    if info.get("report"):
        lines.append(f"report: {Path(run_dir) / info['report']}  (one self-contained file, works offline)")
    lines.append(f"view: tensorboard --logdir {Path(run_dir).parent} --host 127.0.0.1  (Scalars, HParams, Text, "
                 "Images work offline; the PyTorch Profiler tab needs internet)")
    lines.append("traces: open a .pt.trace.json in the Perfetto UI (ui.perfetto.dev), or the folder with HTA's "
                 "TraceAnalysis(trace_dir=...)")
    return lines


def print_program(record: RunRecord) -> None:
    """`tritondbg profile -- CMD`: the autotune decisions, the per-kernel table, where to look."""
    from tritondbg.profile.program_run import KERNEL_COLUMNS, kernel_cells

    # stderr: stdout is the program's (interpret / capture -- CMD write theirs there too); long lines are not
    # broken mid-sentence when piped (soft wrap), the table keeps a fixed width
    con = Console(highlight=False, stderr=True, soft_wrap=True)
    if not con.is_terminal:
        con = Console(highlight=False, stderr=True, soft_wrap=True, width=200)
    info = record.extra.get("profile", {})
    prog = info["program"]
    if info.get("note"):
        con.print(f"[bold yellow]Note: {info['note']}.[/]")
    for r in record.results:
        for d in r.extra.get("profile", {}).get("autotune", []):
            lines = _decision_lines(d)
            if d.get("cache_hits"):
                lines[0] += f"; then {d['cache_hits']} launch(es) from the autotuner's cache"
            con.print("\n".join(lines))
    title = (f"Triton kernels of the program ({'GPU' if info['timing'] == 'gpu' else 'interpreter'} time "
             f"{fmt_time(prog['program_ms'])} in all)")
    table = Table(title=title)
    for h in KERNEL_COLUMNS:
        table.add_column(h, justify="left" if h in ("kernel", "autotune") else "right")
    for row in prog["kernels"]:
        table.add_row(*kernel_cells(row))
    con.print(table)
    if prog["other_kernels"]:
        top = ", ".join(f"{o['kernel'][:40]} {fmt_time(o['total_ms'])}" for o in prog["other_kernels"][:3])
        con.print(f"[dim]other GPU kernels (torch's): {top}[/]")
    if info["timing"] == "gpu":
        con.print("[dim]median: of the traced launches' GPU times; share: of the program's GPU time (every kernel, "
                  "torch's too); achieved: the tensors' bytes per launch / the median (an upper bound of the "
                  "traffic)[/]")
    else:
        con.print("[dim]median: of the traced launches' interpreter times; share: of the Triton launches' interpreter "
                  "time; achieved: tensor bytes per launch / the median (not GPU figures)[/]")
    for proc in prog.get("processes", []):
        for note in proc.get("notes", []):
            con.print(f"[yellow]note: {note}[/]")
    from tritondbg.profile.program_run import overhead_line, window_text

    traced = window_text(prog.get("window") or {})
    if traced:
        con.print(traced)
    if prog.get("wall_s") is not None:
        report = f"; reading its traces and writing the report took {prog['report_s']:.2f} s" \
            if prog.get("report_s") is not None else ""
        con.print(f"[dim]the program ran {prog['wall_s']:.2f} s attached (process start to exit){report}[/]")
    line = overhead_line(prog.get("overhead") or {})
    if line:
        con.print(f"[dim]{line}[/]")
    for r in record.results:
        if r.status == "error":
            con.print(f"[red]{r.kernel}: {r.message}[/]")
    con.print("[dim]profiling checks nothing: `tritondbg interpret -- CMD` runs these launches under the "
              "sanitizers[/]")
    if prog["exit_status"]:
        con.print(f"[red]the program {launcher.ended(prog['exit_status'])}[/]")
    for line in view_lines(record):
        con.print(line, soft_wrap=True)
