"""Issue 18, the prefill autotuner's timer: does it rank configs as the sweep and the perf gate time them, and does
it pick the same config in every process? (an exploration: its output decides the prefill autotuner's timer,
``gpu_time_bench`` in kernels/_autotune.py).

    python tests/bench/explore_prefill_timer.py [--shapes 7,1,8] [--procs 3] [--out explore_prefill_timer.json]

For each shape (indices into tests/bench/sweep_h200.py's PREFILL) and each config the autotuner's prune keeps,
pinned (``_attention(..., config=)``): ``graph`` = ``do_bench_cudagraph`` (the autotuner's timer today: GPU time,
L2 warm), ``flushed`` = ``graph_time_flushed`` (below: GPU time, L2 evicted before each call),
``do_bench`` = ``triton.testing.do_bench`` of the whole call (L2 flushed: what the sweep and the perf gate time).
Each timer twice, to see its own spread. Then ``--procs`` fresh processes per timer run the autotuner on the
shape and print their picks (``flushed``: the autotuner's timer replaced by graph_time_flushed). Needs a CUDA
GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
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



def _inputs(torch, shape):
    B, H, HKV, N, D, causal = shape
    gen = torch.Generator(device="cuda").manual_seed(0)
    mk = lambda h: torch.randn(B, h, N, D, device="cuda", generator=gen, dtype=torch.bfloat16)  # noqa: E731
    return mk(H), mk(HKV), mk(HKV), causal


def _pick(index: int, timer: str) -> int:
    """Child process: autotune shape ``index`` with ``timer`` and print the pick as one JSON line."""
    import torch

    sys.path.insert(0, HERE)
    import sweep_h200 as sw

    from tritondbg.kernels import attention as A

    if timer == "flushed":
        A._attn_fwd_kernel._do_bench = graph_time_flushed  # Triton 3.6 / 3.9 keep the timer there
    q, k, v, causal = _inputs(torch, sw.PREFILL[index])
    A.attention(q, k, v, causal=causal)
    torch.cuda.synchronize()
    cfg = A._attn_fwd_kernel.best_config
    print(json.dumps(dict(pick=_tag(cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"], cfg.num_warps, cfg.num_stages,
                                    cfg.kwargs["WARP_SPEC"]))))
    return 0


def _tag(bm, bn, w, s, ws):
    return f"{bm}x{bn} w{w} s{s}" + (" ws" if ws else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="7,1,8", help="indices into sweep_h200.PREFILL")
    ap.add_argument("--procs", type=int, default=3, help="fresh processes per timer that autotune each shape")
    ap.add_argument("--out", default="explore_prefill_timer.json")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)  # INDEX:TIMER
    args = ap.parse_args(argv)
    if args.child:
        index, timer = args.child.split(":")
        return _pick(int(index), timer)
    import torch
    from triton.testing import do_bench, do_bench_cudagraph

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    sys.path.insert(0, HERE)
    import _runs
    import sweep_h200 as sw

    from tritondbg.kernels import attention as A

    rows, t_start = [], time.time()
    for index in (int(i) for i in args.shapes.split(",")):
        shape = sw.PREFILL[index]
        B, H, HKV, N, D, causal = shape
        name = f"B{B} H{H}/{HKV} N{N} D{D}" + (" causal" if causal else "")
        q, k, v, causal = _inputs(torch, shape)
        named = dict(Q=q, N_Q=N, N_KV=N, HEAD_DIM=D, CAUSAL=causal, TMA=True)
        kept = A._prune_prefill_configs(A._PREFILL_CONFIGS, named)
        print(f"{name}: {len(kept)} configs", flush=True)
        for cfg in kept:
            tag = _tag(cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"], cfg.num_warps, cfg.num_stages,
                       cfg.kwargs["WARP_SPEC"])
            run = lambda cfg=cfg: A._attention(q, k, v, causal, None, None, config=cfg)  # noqa: E731
            r = dict(shape=name, config=tag)
            try:
                run()
                torch.cuda.synchronize()
                for i in (1, 2):
                    r[f"graph{i}"] = do_bench_cudagraph(run, rep=50) * 1e3
                    r[f"flushed{i}"] = graph_time_flushed(run) * 1e3
                    r[f"do_bench{i}"] = do_bench(run, warmup=10, rep=60) * 1e3
            except Exception as e:  # noqa: BLE001 - one row that says so
                r["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"
                torch.cuda.synchronize()
            rows.append(r)
            print("  " + tag.ljust(18) + (r.get("error") or "  ".join(
                f"{t} {r[t + '1']:7.1f} / {r[t + '2']:7.1f}" for t in ("graph", "flushed", "do_bench"))), flush=True)
        ok = [r for r in rows if r["shape"] == name and "error" not in r]
        for t in ("graph", "flushed", "do_bench"):
            best = min(ok, key=lambda r: r[t + "1"])["config"] if ok else None
            print(f"  fastest by {t}: {best}", flush=True)
        del q, k, v
        torch.cuda.empty_cache()
        for timer in ("graph", "flushed"):
            picks = []
            for _ in range(args.procs):
                p = subprocess.run([sys.executable, __file__, "--child", f"{index}:{timer}"], capture_output=True,
                                   text=True, timeout=300)
                line = (p.stdout.strip().splitlines() or [""])[-1]
                picks.append(json.loads(line)["pick"] if p.returncode == 0 and line.startswith("{")
                             else f"error: {p.stderr.strip()[-200:]}")
            rows.append(dict(shape=name, timer=timer, picks=picks))
            print(f"  autotuner picks with {timer}: {picks}", flush=True)
    _runs.save(args.out, _runs.meta(t_start, "tests/bench/explore_prefill_timer.py", argv), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
