"""Console output: a short verdict per launch, coloured on a terminal and plain when piped."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console

from tritondbg.configs import config_str
from tritondbg.record import RunRecord


def _console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _fmt_time(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def print_record(record: RunRecord, path: Path | None = None) -> None:
    con = _console()
    for r in record.results:
        mark = {"pass": "[green]PASS[/]", "fail": "[red]FAIL[/]", "error": "[red]ERROR[/]"}[r.status]
        head = f"{mark} {r.kernel} case={r.case} dtype={r.dtype} mode={r.mode}"
        if r.mode == "interpret":
            head += f" ({_fmt_time(r.wall_s)} on the CPU interpreter)"
        else:
            head += f" ({_fmt_time(r.wall_s)} incl. compile/autotune)"
        con.print(head)
        for kernel, cfg in r.config.items():
            con.print(f"  config {kernel}: {config_str(cfg)}  [dim]({r.config_source.get(kernel, '')})[/]")
        for e in r.errors:
            verdict = "ok" if e.passed else f"[red]{e.mismatched}/{e.numel} mismatched[/]"
            con.print(f"  {e.name} {tuple(e.shape)}: max abs err {e.max_abs:.3g}, max rel err {e.max_rel:.3g} "
                      f"(atol={e.atol:g}, rtol={e.rtol:g}) {verdict}")
            if not e.passed:
                con.print(f"    worst at {tuple(e.worst_index)}: got {e.worst_out:.6g}, expected {e.worst_ref:.6g}"
                          + (f"; {e.nonfinite} NaN/Inf where the reference is finite" if e.nonfinite else ""))
        if r.message and r.status != "pass":
            con.print(f"  [red]{r.message}[/]")
    n_pass = sum(r.passed for r in record.results)
    summary = f"{n_pass}/{len(record.results)} passed"
    con.print(("[green]" if record.passed else "[red]") + summary + "[/]"
              + (f"  record: {path}" if path else ""))


def print_catalog(entries: list[dict]) -> None:
    """One block per kernel: description, cases (GPU-only ones marked), autotune configs."""
    con = _console()
    for e in entries:
        con.print(f"[bold]{e['name']}[/]  {e['description']}")
        width = max(len(c["name"]) for c in e["cases"])
        for c in e["cases"]:
            params = " ".join(f"{k}={v}" for k, v in c["params"].items())
            where = "cpu+gpu" if c["interpret"] else "gpu    "
            con.print(f"  {c['name']:<{width}}  {where}  {','.join(c['dtypes'])}  [dim]{params}[/]")
        for kernel, cs in e["configs"].items():
            con.print(f"  autotune {kernel}: {len(cs)} configs")
            for c in cs:
                con.print(f"    {config_str(c)}")
        con.print()
