"""The launch timeline of one profiled case (matplotlib): each traced launch's CPU range (NVTX range +
record_function), the GPU kernels the trace saw (on a GPU) and torch's version of the same work, on one time
axis. Drawn from ``CaseResult.extra["profile"]["timeline"]`` (read out of the trace by trace_events.py).
"""
from __future__ import annotations

from typing import Any

_ROWS = (("launches", "Triton launch (CPU)", "#1f77b4"), ("gpu_kernels", "GPU kernels", "#2ca02c"),
         ("torch", "torch, same work (CPU)", "#ff7f0e"))


def figure(timeline: dict[str, Any] | None, title: str = ""):
    """A Figure with one row per kind of event; None when the timeline has no event."""
    from matplotlib.figure import Figure

    if not timeline:
        return None
    rows = [(key, label, color) for key, label, color in _ROWS if timeline.get(key)]
    if not rows:
        return None
    fig = Figure(figsize=(8.0, 0.5 + 0.45 * len(rows)), dpi=100, layout="constrained")
    ax = fig.subplots()
    end = 0.0
    for i, (key, _, color) in enumerate(rows):
        spans = [(float(e[0]), max(float(e[1]), 1e-3)) for e in timeline[key]]
        end = max([end] + [a + b for a, b in spans])
        ax.broken_barh(spans, (i - 0.35, 0.7), facecolors=color, edgecolors="black", linewidth=0.3)
    ax.set_yticks(range(len(rows)), [label for _, label, _ in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(0, end * 1.02 or 1.0)
    unit = timeline.get("unit", "us")
    ax.set_xlabel(f"time from the first traced launch ({unit})", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_axisbelow(True)  # grid lines behind the bars
    ax.grid(True, axis="x", color="#e0e0e0", linewidth=0.6)
    if title:
        ax.set_title(title, fontsize=9, loc="left")
    return fig
