"""The roofline figure: each profiled case at (FLOP per byte, achieved TFLOP/s), log-log, under the GPU's
measured (or spec-sheet) bandwidth slope and compute roofs; drawn with matplotlib, as SVG for report.html
and PNG for TensorBoard's Images tab.

Labels never overlap: each point is a numbered marker (kernel filled, torch's version of the same work
hollow with the same number) and the numbers are explained in a table (kernel, case, dtype, figures):
``legend_rows`` for the report's HTML table, drawn beside the plot in the PNG. A number goes to the first
of a few positions around its marker that does not collide with a label already placed (``place_labels``).
"""
from __future__ import annotations

import io
import math
import re
from pathlib import Path
from typing import Any

from tritondbg.record import RunRecord

_COLORS = {"float32": "#1f77b4", "float16": "#2ca02c", "bfloat16": "#d62728", "float8_e4m3fn": "#9467bd"}
_OTHER = "#7f7f7f"
_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float8_e4m3fn": "fp8"}
# label offsets tried around a marker, in points (right, up-right, down-right, up, down, left, ...)
_OFFSETS = [(7, -4), (7, 5), (7, -13), (-3, 8), (-3, -17), (-16, -4), (-16, 6), (-16, -13), (12, 14),
            (12, -22), (-22, 14), (-22, -22)]
_FONT_PT = 8.0


def available() -> bool:
    """matplotlib is installed (a dependency; a broken install costs the figures, not the profile)."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def points(record: RunRecord) -> list[dict[str, Any]]:
    """Cases with both FLOPs and bytes and a time: the kernel's point and, when timed, torch's; ``n`` is
    the case's number in the legend table (shared by its two points)."""
    pts, n = [], 0
    for r in record.results:
        prof = r.extra.get("profile", {})
        med = (prof.get("kernel") or {}).get("median_ms")
        if not (r.flops and r.bytes and med):
            continue
        n += 1
        base = {"n": n, "kernel": r.kernel, "case": r.case, "dtype": r.dtype, "x": r.flops / r.bytes,
                "label": f"{r.kernel}:{r.case}:{_SHORT.get(r.dtype, r.dtype)}"}
        pts.append({**base, "y": r.flops / (med * 1e-3) / 1e12, "torch": False})
        tms = (prof.get("torch") or {}).get("median_ms")
        if tms:
            pts.append({**base, "y": r.flops / (tms * 1e-3) / 1e12, "torch": True})
    return pts


def legend_rows(record: RunRecord) -> list[dict[str, Any]]:
    """One row per numbered case: number, kernel, case, dtype, FLOP/byte, TFLOP/s of the kernel and torch."""
    rows: dict[int, dict[str, Any]] = {}
    for p in points(record):
        row = rows.setdefault(p["n"], {"n": p["n"], "kernel": p["kernel"], "case": p["case"], "dtype": p["dtype"],
                                       "intensity": p["x"], "tflops": None, "torch_tflops": None})
        row["torch_tflops" if p["torch"] else "tflops"] = p["y"]
    return list(rows.values())


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(anchors: list[tuple[float, float]], sizes: list[tuple[float, float]],
                 obstacles: list[tuple[float, float, float, float]] = ()) -> list[tuple[float, float]]:
    """Offsets (points) for labels of ``sizes`` (w, h in points) at ``anchors`` (display points), chosen so no
    two label boxes overlap each other or an obstacle box (markers), when any candidate allows it."""
    placed: list[tuple[float, float, float, float]] = list(obstacles)
    out = []
    for (ax, ay), (w, h) in zip(anchors, sizes):
        choice = None
        for dx, dy in _OFFSETS:
            box = (ax + dx, ay + dy, ax + dx + w, ay + dy + h)
            if not any(_overlap(box, o) for o in placed):
                choice = (dx, dy)
                break
        if choice is None:  # crowded: stack it above the highest label near this anchor
            top = max([o[3] for o in placed if abs(o[0] - ax) < 40] + [ay])
            choice = (_OFFSETS[0][0], top - ay + 1)
        dx, dy = choice
        placed.append((ax + dx, ay + dy, ax + dx + w, ay + dy + h))
        out.append(choice)
    return out


def _decades(lo: float, hi: float) -> tuple[float, float]:
    return 10.0 ** math.floor(math.log10(lo)), 10.0 ** math.ceil(math.log10(hi))


def figure(record: RunRecord, peaks: dict[str, Any] | None, note: str = "", *, table: bool = False):
    """The roofline as a matplotlib Figure (no pyplot: no global state); None without points. ``table``
    draws the numbered legend beside the plot (for the PNG; the report has an HTML table)."""
    from matplotlib.figure import Figure

    pts = points(record)
    if not pts:
        return None
    figures = (peaks or {}).get("figures") or {}
    bw = figures.get("bandwidth")
    dtypes = sorted({p["dtype"] for p in pts})
    roofs = {dt: figures[dt] / 1e12 for dt in dtypes if figures.get(dt)} if bw else {}
    xs = [p["x"] for p in pts] + [figures[dt] / bw for dt in roofs]
    ys = [p["y"] for p in pts] + list(roofs.values())
    x0, x1 = _decades(min(xs) / 2, max(xs) * 4)
    y0, y1 = _decades(min(ys) / 2, max(ys) * 2)
    if bw:
        y0 = min(y0, 10.0 ** math.floor(math.log10(bw * x0 / 1e12)))

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=(11.5 if table else 8.0, 5.2), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)  # a real canvas: draw() below lays the figure out, so the label placement is final
    if table:
        ax, tax = fig.subplots(1, 2, width_ratios=[2.3, 1])
    else:
        ax, tax = fig.subplots(), None
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.grid(True, which="major", color="#e0e0e0", linewidth=0.8)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of DRAM traffic)")
    ax.set_ylabel("achieved TFLOP/s")
    title = "roofline" + (f": {peaks['device']}, peaks {peaks['source']}" if peaks else "")
    ax.set_title(title + (f"\n{note}" if note else ""), fontsize=10, color="black", loc="left")
    for dt, peak in roofs.items():
        ridge = peak * 1e12 / bw
        line_x = [x0] + ([ridge] if x0 < ridge < x1 else []) + [x1]
        line_y = [min(peak, bw * x / 1e12) for x in line_x]
        ax.plot(line_x, line_y, color=_COLORS.get(dt, _OTHER), linewidth=1.6,
                label=f"{_SHORT.get(dt, dt)} roof {peak:.0f} TFLOP/s")
    if bw:
        ax.plot([], [], color="black", linewidth=0, label=f"DRAM {bw / 1e12:.2f} TB/s (the slope)")
    for p in pts:
        c = _COLORS.get(p["dtype"], _OTHER)
        ax.plot([p["x"]], [p["y"]], marker="o", markersize=7, linestyle="none", color=c,
                markerfacecolor="white" if p["torch"] else c, markeredgewidth=1.5)
    ax.plot([], [], marker="o", linestyle="none", color=_OTHER, label="Triton kernel (number: table)")
    ax.plot([], [], marker="o", linestyle="none", color=_OTHER, markerfacecolor="white", label="torch, same work")
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)

    # numbers beside the markers, placed in display space so that none overlaps another or a marker
    fig.canvas.draw()  # layout first: the data-to-display transform is final after it
    to_pt = 72.0 / fig.dpi
    anchors = [tuple(v * to_pt for v in ax.transData.transform((p["x"], p["y"]))) for p in pts]
    sizes = [(0.62 * _FONT_PT * len(str(p["n"])) + 2, _FONT_PT + 1) for p in pts]
    markers = [(x - 4.5, y - 4.5, x + 4.5, y + 4.5) for x, y in anchors]
    for p, (dx, dy) in zip(pts, place_labels(anchors, sizes, markers)):
        ax.annotate(str(p["n"]), (p["x"], p["y"]), xytext=(dx, dy), textcoords="offset points",
                    fontsize=_FONT_PT, color=_COLORS.get(p["dtype"], _OTHER), va="bottom", ha="left",
                    fontweight="normal" if p["torch"] else "bold", zorder=5,
                    bbox={"boxstyle": "square,pad=0.05", "fc": "white", "ec": "none", "alpha": 0.85})
    if tax is not None:
        tax.axis("off")
        rows = legend_rows(record)
        cells = [[str(r["n"]), r["kernel"], r["case"], _SHORT.get(r["dtype"], r["dtype"]),
                  _fmt(r["tflops"]), _fmt(r["torch_tflops"])] for r in rows]
        t = tax.table(cellText=cells, colLabels=["#", "kernel", "case", "dtype", "TFLOP/s", "torch"],
                      loc="upper left", cellLoc="left")
        t.auto_set_font_size(False)
        t.set_fontsize(8.5)
        t.auto_set_column_width(list(range(6)))
        t.scale(1.0, 1.25)
    return fig


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.3g}"


def svg(record: RunRecord, peaks: dict[str, Any] | None, note: str = "") -> str | None:
    """The roofline as an inline ``<svg>`` element (text as paths: no font needed), or None."""
    if not available():
        return None
    fig = figure(record, peaks, note)
    return None if fig is None else svg_of(fig)


def svg_of(fig) -> str:
    """A Figure as an inline ``<svg>`` (no XML prolog, no external reference)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "tritondbg"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)  # RDF/creator block: nothing to show
    return text[text.index("<svg"):]


def draw(record: RunRecord, path: Path, peaks: dict[str, Any] | None, note: str = "") -> Path | None:
    """Write the roofline PNG (plot + numbered table) to ``path``; None when no case has FLOPs, bytes and a time."""
    if not available():
        return None
    fig = figure(record, peaks, note, table=True)
    if fig is None:
        return None
    path = Path(path)
    fig.savefig(path, format="png", dpi=100)
    return path
