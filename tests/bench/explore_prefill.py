"""Issue 18, prefill attention: every candidate config pinned, shape by shape, beside SDPA flash (an exploration: its
output decides ``_PREFILL_CONFIGS`` in kernels/attention.py).

    python tests/bench/explore_prefill.py [--out explore_prefill.json] [--shapes sweep|quick|2,3,6]

For each sweep shape (tests/bench/sweep_h200.py's PREFILL): SDPA flash, ``attention`` (today's autotuned pick,
named) and ``_attn_fwd_kernel`` launched directly with each candidate config (today's list plus the extra tiles
below), each checked against SDPA flash first. Times are CUDA-graph medians (GPU time: these shapes are not
launch-bound). Needs a CUDA GPU.
"""
from __future__ import annotations

import argparse
import math
import sys
import time

# (BLOCK_M, BLOCK_N, warps, stages, warp_spec): tried beside today's list
EXTRA = [
    (128, 128, 4, 3, True), (128, 128, 4, 4, True),
    (128, 128, 8, 4), (128, 64, 8, 3), (64, 128, 4, 3), (64, 64, 4, 4),
    (256, 64, 8, 3), (256, 128, 8, 2), (128, 256, 8, 2),
]


def _configs(A, D, elt=2):
    seen, out = set(), []
    for c in A._PREFILL_CONFIGS:
        t = (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages, c.kwargs["WARP_SPEC"])
        if t[0] >= 64 and t not in seen:
            seen.add(t)
            out.append(t)
    for t in EXTRA:
        t = t + (False,) * (5 - len(t))
        if t not in seen:
            seen.add(t)
            out.append(t)
    bm_ok = []
    for bm, bn, w, s, ws in out:
        if elt * D * ((2 if ws else 1) * bm + 2 * bn * s) > A._SMEM_LIMIT:
            continue
        bm_ok.append((bm, bn, w, s, ws))
    return bm_ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="explore_prefill.json")
    ap.add_argument("--shapes", default="sweep", help="sweep, quick, or indices into the sweep's PREFILL list (2,3,6)")
    args = ap.parse_args(argv)
    import torch
    import triton
    from triton.testing import do_bench_cudagraph

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import _runs
    import kernels_h200 as kh
    import sweep_h200 as sw

    from tritondbg.kernels import attention as A

    dev = torch.device("cuda")
    rows = []
    if args.shapes in ("sweep", "quick"):
        shapes = sw.PREFILL_QUICK if args.shapes == "quick" else sw.PREFILL
    else:
        shapes = [sw.PREFILL[int(i)] for i in args.shapes.split(",")]
    t_start = time.time()
    for B, H, HKV, N, D, causal in shapes:
        gen = torch.Generator(device=dev).manual_seed(0)
        q = torch.randn(B, H, N, D, device=dev, generator=gen, dtype=torch.bfloat16)
        k = torch.randn(B, HKV, N, D, device=dev, generator=gen, dtype=torch.bfloat16)
        v = torch.randn(B, HKV, N, D, device=dev, generator=gen, dtype=torch.bfloat16)
        name = f"B{B} H{H}/{HKV} N{N} D{D}" + (" causal" if causal else "")
        flash = kh.baselines("attention", dict(q=q, k=k, v=v, causal=causal))["sdpa flash"]
        ref = flash()
        t_flash = do_bench_cudagraph(flash, rep=100)
        ours = lambda: A.attention(q, k, v, causal=causal)  # noqa: E731
        ours()
        t_ours = do_bench_cudagraph(ours, rep=100)
        picked = {str(kk): str(vv) for kk, vv in A._attn_fwd_kernel.cache.items()}
        print(f"{name}: flash {t_flash * 1e3:.1f} us, ours {t_ours * 1e3:.1f} us ({t_flash / t_ours:.2f}x)", flush=True)
        rows.append(dict(shape=name, what="sdpa flash", us=t_flash * 1e3))
        rows.append(dict(shape=name, what="ours (autotuned)", us=t_ours * 1e3, ratio=t_flash / t_ours,
                         picked=picked))
        for bm, bn, w, s, ws in _configs(A, D):
            cfg = triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, WARP_SPEC=ws), num_warps=w, num_stages=s)
            run = lambda cfg=cfg: A._attention(q, k, v, causal, None, None, config=cfg)  # noqa: E731
            tag = f"{bm}x{bn} w{w} s{s}" + (" ws" if ws else "")
            try:
                o = run()
                torch.cuda.synchronize()
                err = (o.float() - ref.float()).abs().max().item()
                ok = err <= 2e-2 + 2e-2 * ref.float().abs().max().item() and not math.isnan(err)
                t = do_bench_cudagraph(run, rep=60) if ok else float("nan")
            except Exception as e:  # noqa: BLE001 - out of resources etc.: one row that says so
                print(f"  {tag}: {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
                rows.append(dict(shape=name, what=tag, error=f"{type(e).__name__}"))
                torch.cuda.synchronize()
                continue
            print(f"  {tag}: {t * 1e3:.1f} us ({t_flash / t:.2f}x flash){'' if ok else f' WRONG err {err:.3g}'}",
                  flush=True)
            rows.append(dict(shape=name, what=tag, us=t * 1e3, ratio=t_flash / t, ok=ok))
        del q, k, v
        torch.cuda.empty_cache()
    _runs.save(args.out, _runs.meta(t_start, "tests/bench/explore_prefill.py"), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
