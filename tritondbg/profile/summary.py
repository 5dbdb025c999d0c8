"""Derived figures (throughput, % of peak, ratio to torch) computed into the record, and the summary rows
the console table, the JSON output and the TensorBoard text read.
"""
from __future__ import annotations

from typing import Any

from tritondbg.record import UNCHECKED, CaseResult, RunRecord

INTERPRETER_NOTE = ("interpreter timings: the CPU running TRITON_INTERPRET=1 program by program, "
                    "not GPU performance")
# Without GPU peaks, call a case compute-bound from this many FLOP per byte: the H200's bf16 ridge point is
# 989e12 / 4.8e12 = 206 FLOP/B, an A100's 156; elementwise and normalization kernels sit below 10.
_COMPUTE_BOUND_INTENSITY = 50.0


def derive(result: CaseResult, peaks: dict[str, Any] | None) -> dict[str, Any]:
    """Throughput, bound, % of peak and speed ratio to torch for one profiled case (added to its record)."""
    prof = result.extra.get("profile", {})
    med = (prof.get("kernel") or {}).get("median_ms")
    d: dict[str, Any] = {"tflops": None, "gbps": None, "intensity": None, "bound": None, "pct_of_peak": None,
                         "peak": None, "speedup_vs_torch": None}
    if not med:
        return d
    secs = med * 1e-3
    if result.flops:
        d["tflops"] = result.flops / secs / 1e12
    if result.bytes:
        d["gbps"] = result.bytes / secs / 1e9
    if result.flops and result.bytes:
        d["intensity"] = result.flops / result.bytes
    figures = (peaks or {}).get("figures") or {}
    peak_flops, peak_bw = figures.get(result.dtype), figures.get("bandwidth")
    if d["intensity"] is not None and peak_flops and peak_bw:
        d["bound"] = "compute" if d["intensity"] > peak_flops / peak_bw else "memory"
    elif d["intensity"] is not None:
        d["bound"] = "compute" if d["intensity"] >= _COMPUTE_BOUND_INTENSITY else "memory"
    elif d["tflops"] is not None or d["gbps"] is not None:
        d["bound"] = "compute" if d["gbps"] is None else "memory"
    if d["bound"] == "compute" and peak_flops and d["tflops"] is not None:
        d["pct_of_peak"], d["peak"] = 100 * d["tflops"] * 1e12 / peak_flops, f"{result.dtype} FLOP/s"
    elif d["bound"] == "memory" and peak_bw and d["gbps"] is not None:
        d["pct_of_peak"], d["peak"] = 100 * d["gbps"] * 1e9 / peak_bw, "DRAM bandwidth"
    torch_ms = (prof.get("torch") or {}).get("median_ms")
    if torch_ms:
        d["speedup_vs_torch"] = torch_ms / med
    return d


def winner_text(result: CaseResult) -> str:
    from tritondbg.configs import config_str

    return "; ".join(f"{config_str(cfg)}" for cfg in result.config.values())


def rows(record: RunRecord) -> list[dict[str, Any]]:
    """One summary row per kernel x case x dtype."""
    out = []
    for r in record.results:
        prof = r.extra.get("profile", {})
        k = prof.get("kernel") or {}
        t = prof.get("torch") or {}
        m = prof.get("metrics") or {}
        out.append({
            "kernel": r.kernel, "case": r.case, "dtype": r.dtype, "status": r.status, "message": r.message,
            "config": winner_text(r), "median_ms": k.get("median_ms"), "p20_ms": k.get("p20_ms"),
            "p80_ms": k.get("p80_ms"), "timing": k.get("method"), "tflops": m.get("tflops"),
            "gbps": m.get("gbps"), "bound": m.get("bound"), "pct_of_peak": m.get("pct_of_peak"),
            "torch": t.get("label"), "torch_ms": t.get("median_ms"), "speedup_vs_torch": m.get("speedup_vs_torch"),
            "trace": prof.get("trace"), "interpreter": prof.get("timing") == "interpreter",
        })
    return out


def fmt_time(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms < 1:
        return f"{ms * 1e3:.1f} us"
    if ms < 1000:
        return f"{ms:.2f} ms"
    return f"{ms / 1e3:.2f} s"


def fmt_throughput(row: dict[str, Any]) -> str:
    if row["bound"] == "compute" and row["tflops"] is not None:
        return f"{row['tflops']:.3g} TFLOP/s"
    if row["gbps"] is not None:
        return f"{row['gbps']:.4g} GB/s"
    if row["tflops"] is not None:
        return f"{row['tflops']:.3g} TFLOP/s"
    return "-"


def table_cells(row: dict[str, Any]) -> list[str]:
    """The cells of one row of the summary table (console and TensorBoard text alike)."""
    pct = "-" if row["pct_of_peak"] is None else f"{row['pct_of_peak']:.0f}%"
    # under the interpreter the ratio is the CPU interpreter against torch's CPU op, from a few samples: no GPU
    # speed, and read as one ("0.00x") it misleads; the record keeps it (``vs_torch_note`` says so)
    ratio = "-" if row["speedup_vs_torch"] is None or row.get("interpreter") else f"{row['speedup_vs_torch']:.2f}x"
    status = {"pass": "ok", UNCHECKED: "-"}.get(row["status"], row["status"])
    return [row["kernel"], row["case"], row["dtype"], status, fmt_time(row["median_ms"]), fmt_throughput(row),
            pct, ratio, fmt_time(row["torch_ms"]), row["config"] or "-"]


HEADERS = ["kernel", "case", "dtype", "check", "median", "throughput", "% of peak", "vs torch", "torch",
           "config"]


def vs_torch_note(record: RunRecord) -> str:
    """The summary's footnote on its "vs torch" column."""
    if record.extra.get("profile", {}).get("timing") == "interpreter" or any(
            r.extra.get("profile", {}).get("timing") == "interpreter" for r in record.results):
        return ("'vs torch' not shown under the interpreter: the CPU interpreting the kernel against torch's CPU op "
                "is no GPU speed (the record keeps that CPU ratio)")
    return "'vs torch' = torch time / kernel time (above 1x the kernel is faster)"


def markdown(record: RunRecord) -> str:
    """The summary as a Markdown table (TensorBoard's Text tab renders it)."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in table_cells(row)) + " |" for row in rows(record)]
    note = record.extra.get("profile", {}).get("note")
    return ("**" + note + "**\n\n" if note else "") + "\n".join(lines) + "\n\n" + vs_torch_note(record)
