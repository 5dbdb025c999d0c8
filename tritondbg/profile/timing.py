"""Kernel timing: median, p20 and p80 in milliseconds.

- GPU: ``triton.testing.do_bench`` (CUDA events, L2 flushed before every launch, warmup 25 ms, rep 100 ms),
  the way Triton's own autotuner measures configs; optionally ``do_bench_cudagraph`` (the launches replayed
  from a CUDA graph), which removes the ~5-20 us of Python launch overhead that dominates tiny kernels.
- Interpreter: wall-clock time of each launch (``perf_counter``). It measures the CPU interpreter running
  every program one after another, not anything a GPU would do.
"""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable

QUANTILES = (0.5, 0.2, 0.8)


def summarize(samples_ms: list[float], method: str) -> dict[str, Any]:
    """Median/p20/p80 of wall-clock samples (ms)."""
    xs = sorted(samples_ms)
    if not xs:
        return {"median_ms": None, "p20_ms": None, "p80_ms": None, "n": 0, "method": method}

    def q(p: float) -> float:  # linear interpolation, like torch.quantile (do_bench uses it)
        pos = p * (len(xs) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    return {"median_ms": statistics.median(xs), "p20_ms": q(0.2), "p80_ms": q(0.8), "n": len(xs),
            "method": method}


def graph_bench(fn: Callable[[], Any], **kw) -> Any:
    """``triton.testing.do_bench_cudagraph(fn, **kw)`` on a side stream (it captures on the current stream, which
    must not be the legacy default stream), after everything queued on the device ran: that stream does not wait
    for the caller's, and ``fn``'s first call would read inputs still being written and write memory the caller's
    queued work still uses (kernels/_autotune.py's ``gpu_time_bench`` says what that did)."""
    import torch
    import triton.testing

    torch.cuda.synchronize()
    with torch.cuda.stream(torch.cuda.Stream()):
        return triton.testing.do_bench_cudagraph(fn, **kw)


def time_gpu(fn: Callable[[], Any], *, cuda_graph: bool = False, warmup_ms: int = 25,
             rep_ms: int = 100) -> dict[str, Any]:
    """``fn``'s GPU time by do_bench (or do_bench_cudagraph): median, p20, p80 in ms."""
    import triton.testing

    if cuda_graph:
        q = graph_bench(fn, rep=rep_ms, quantiles=list(QUANTILES))
        method = "triton.testing.do_bench_cudagraph"
    else:
        q = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=list(QUANTILES))
        method = "triton.testing.do_bench"
    median, p20, p80 = (float(v) for v in q)
    return {"median_ms": median, "p20_ms": p20, "p80_ms": p80, "n": None, "method": method}


class WallClock:
    """Collects wall-clock samples: ``with clock: fn()`` (the interpreter's timing)."""

    def __init__(self):
        self.samples_ms: list[float] = []
        self._t0 = 0.0

    def __enter__(self) -> "WallClock":
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.samples_ms.append((time.perf_counter() - self._t0) * 1e3)

    def summary(self, method: str = "perf_counter (interpreter wall clock)") -> dict[str, Any]:
        return summarize(self.samples_ms, method)
