"""The timer the bundled kernels' autotuners use (``triton.autotune(..., do_bench=autotune_bench)``).

On a GPU it is Triton's default (``driver.active.get_benchmarker()``, i.e. ``triton.testing.do_bench``).
Under the interpreter (``TRITON_INTERPRET=1``) it times nothing and gives every config 0 ms, so the first
config left after pruning runs, the choice ``tritondbg interpret`` makes. Triton's default would ask for a
GPU driver and fail on a machine without one ("0 active drivers"), and on one with a GPU it would time numpy,
running every config many times on the CPU.
"""
import triton


def interpreting() -> bool:
    return bool(getattr(triton.knobs.runtime, "interpret", False))


def autotune_bench(kernel_call, quantiles=None):
    if interpreting():
        return [0.0] * len(quantiles) if quantiles else 0.0
    return triton.runtime.driver.active.get_benchmarker()(kernel_call, quantiles=quantiles)


_FLUSH: dict = {}  # device index -> int8 buffer of twice the L2 (zeroed to evict the L2 before a timed call)


def _flush_buffer(torch):
    index = torch.cuda.current_device()
    buf = _FLUSH.get(index)
    if buf is None:
        l2 = getattr(torch.cuda.get_device_properties(index), "L2_cache_size", 0) or (64 << 20)
        buf = _FLUSH[index] = torch.empty(2 * l2, dtype=torch.int8, device=f"cuda:{index}")
    return buf


def graph_time_flushed(kernel_call, quantiles=None, calls: int = 10, reps: int = 12):
    """GPU time of ``kernel_call`` with the L2 evicted before each call, without its host cost (ms, or the
    ``quantiles`` of it): a CUDA graph of ``calls`` x (zero a buffer twice the L2's size, call) is replayed
    ``reps`` times, each replay followed by a graph of the ``calls`` flushes alone, whose time is subtracted.
    What ``triton.testing.do_bench`` (the sweep, the perf gate) measures on a GPU-bound call, with no launch
    overhead in it; ``do_bench_cudagraph`` keeps the L2 warm between calls, which favours configs differently
    on inputs about the L2's size."""
    import torch

    buf = _flush_buffer(torch)
    kernel_call()
    torch.cuda.synchronize()
    graphs = []
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for with_call in (True, False):
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(calls):
                    buf.zero_()
                    if with_call:
                        kernel_call()
            graphs.append(g)
    torch.cuda.synchronize()
    both, flush = graphs
    both.replay()  # warm-up replay
    events = [[torch.cuda.Event(enable_timing=True) for _ in range(3)] for _ in range(reps)]
    for e0, e1, e2 in events:
        e0.record()
        both.replay()
        e1.record()
        flush.replay()
        e2.record()
    torch.cuda.synchronize()
    times = sorted(max(e0.elapsed_time(e1) - e1.elapsed_time(e2), 0.0) / calls for e0, e1, e2 in events)
    if quantiles:
        return [times[min(len(times) - 1, int(q * len(times)))] for q in quantiles]
    return times[len(times) // 2]
