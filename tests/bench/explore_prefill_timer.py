"""Issue 18, the prefill autotuner's timer: does it rank configs as the sweep and the perf gate time them, and does
it pick the same config in every process? (an exploration: its output decides ``AUTOTUNE_TIMER`` in
kernels/attention.py).

    python tests/bench/explore_prefill_timer.py [--shapes 7,1,8] [--procs 3] [--out explore_prefill_timer.json]

For each shape (indices into tests/bench/sweep_h200.py's PREFILL) and each config the autotuner's prune keeps,
pinned (``_attention(..., config=)``): ``graph`` = ``do_bench_cudagraph`` (the autotuner's timer today: GPU time,
L2 warm), ``flushed`` = ``graph_time_flushed`` (kernels/_autotune.py: GPU time, L2 evicted before each call),
``do_bench`` = ``triton.testing.do_bench`` of the whole call (L2 flushed: what the sweep and the perf gate time).
Each timer twice, to see its own spread. Then ``--procs`` fresh processes per timer run the autotuner on the
shape and print their picks. Needs a CUDA GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


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

    A.AUTOTUNE_TIMER = timer
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
    import triton
    from triton.testing import do_bench, do_bench_cudagraph

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    sys.path.insert(0, HERE)
    import sweep_h200 as sw

    from tritondbg.kernels import attention as A
    from tritondbg.kernels._autotune import graph_time_flushed

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
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), gpu=torch.cuda.get_device_name(), triton=triton.__version__,
                torch=torch.__version__, seconds=round(time.time() - t_start, 1),
                command="python tests/bench/explore_prefill_timer.py " + " ".join(sys.argv[1:] if argv is None else argv))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
