"""Issue 18, gemm at small M (17..128 rows, LLM weights): which split-K decode-kernel configs beat the tiled
kernels and torch.matmul, shape by shape (an exploration: its output decides the small-M rule in kernels/gemm.py).

    python tests/bench/explore_gemm_small_m.py [--m 17,48,127] [--dtype bfloat16] [--out explore.json]

For each (M, N, K): torch.matmul, ``gemm`` (today's rule), ``gemm_tiled`` (the tiled kernels' autotuned pick)
and fp8_gemm's one-launch split-K decode kernel launched directly with each candidate config
(DEC_BLOCK_M x DEC_BLOCK_N x DEC_BLOCK_K x SPLIT_K, warps, stages), every one checked against torch first.
do_bench median (L2 flushed); one JSON row per (shape, candidate). Needs a CUDA GPU.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

# the sweep's N/K pairs (tests/bench/sweep_h200.py GEMM_NK)
NK = ((4096, 4096), (11008, 4096), (4096, 11008), (13824, 5120), (5120, 13824), (14336, 4096), (6144, 4096))


def fp8_candidates(M: int, K: int):
    """fp8 decode: one mma tile of 16 / 32 / 64 tokens holding M (and the CUDA-core GEMV for M = 1), 128..512-byte
    K steps, 3..5 stages where they fit."""
    bm = max(16, 1 << (M - 1).bit_length())
    for bn, bk, sk in itertools.product((64, 128), (128, 256, 512), (1, 2, 4, 8)):
        if sk * bk > K:
            continue
        smem = (bn + bm) * bk
        for stages in (3, 4, 5):
            if smem * stages <= 200 * 1024:
                yield dict(DEC_BLOCK_M=bm, DEC_BLOCK_N=bn, DEC_BLOCK_K=bk, SPLIT_K=sk, USE_DOT=True, num_warps=4,
                           num_stages=stages)
    if M == 1:
        for bn, bk, sk in itertools.product((32, 64), (128, 256), (2, 4, 8)):
            yield dict(DEC_BLOCK_M=1, DEC_BLOCK_N=bn, DEC_BLOCK_K=bk, SPLIT_K=sk, USE_DOT=False, num_warps=4,
                       num_stages=1)


def candidates(M: int, K: int):
    bms = sorted({max(16, min(128, 1 << (M - 1).bit_length())), 64} - ({64} if M <= 32 else set()))
    for bm, bn, bk, sk in itertools.product(bms, (64, 128), (64, 128), (1, 2, 3, 4, 8)):
        if sk * bk > K or (bm == 128 and sk in (1, 8)):  # 128 tokens: 32..64 tiles x 1 or 8 splits never fit
            continue
        smem = (bn + bm) * bk * 2
        stages = 4 if smem * 4 <= 160 * 1024 else 3
        # 128-token tiles: 8 warps (4 warps spilled on sm_90: kernels/_splitk.py WIDE_DECODE_CONFIGS)
        for warps in ((8,) if bm == 128 else (4,)):
            yield dict(DEC_BLOCK_M=bm, DEC_BLOCK_N=bn, DEC_BLOCK_K=bk, SPLIT_K=sk, USE_DOT=True, num_warps=warps,
                       num_stages=stages)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", default="17,48,127")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--nk", default="", help="N:K,... (default: the sweep's LLM shapes)")
    ap.add_argument("--out", default="explore_gemm_small_m.json")
    ap.add_argument("--rep", type=int, default=40)
    ap.add_argument("--cands", default="", help="fp8 only: BN:BK:SPLIT:STAGES,... mma candidates to try instead of "
                    "the full list (the token tile holds M; each compile costs ~1 s)")
    args = ap.parse_args(argv)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from triton.testing import do_bench

    from tritondbg.kernels import fp8_gemm as F8
    from tritondbg.kernels import gemm as G

    dtype = getattr(torch, args.dtype)
    nks = [tuple(int(v) for v in p.split(":")) for p in args.nk.split(",") if p] or NK
    kern = F8.fp8_gemm_decode_kernel.fn
    one = torch.ones((), device="cuda", dtype=torch.float32)
    rows = []
    t_start = time.time()
    for M in (int(m) for m in args.m.split(",")):
        for N, K in nks:
            g = torch.Generator(device="cuda").manual_seed(0)
            a = torch.randn(M, K, device="cuda", generator=g).to(dtype)
            fp8 = dtype.itemsize == 1
            # fp8: b K-major (the .t() of an (N, K) weight), as torch._scaled_mm wants it
            b = (torch.randn(N, K, device="cuda", generator=g).to(dtype).t() if fp8 else
                 torch.randn(K, N, device="cuda", generator=g).to(dtype))
            out_dtype = torch.bfloat16 if fp8 else dtype
            ref = (a.float() @ b.float())
            scale = ref.abs().max().item()

            def row(name, fn, config=None):
                try:
                    out = fn()
                    err = (out.float() - ref).abs().max().item() / scale
                    ms = do_bench(fn, warmup=5, rep=args.rep)
                except Exception as e:  # noqa: BLE001 - a config that does not compile is a row
                    err, ms = None, None
                    config = {**(config or {}), "error": f"{type(e).__name__}: {str(e)[:100]}"}
                r = dict(M=M, N=N, K=K, dtype=args.dtype, name=name, us=None if ms is None else ms * 1e3,
                         rel_err=err, config=config)
                rows.append(r)
                return r

            if fp8:
                base = row("torch._scaled_mm", lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                                         out_dtype=out_dtype))
                cur = til = row("fp8_gemm", lambda: F8.fp8_gemm(a, b, one, one))
                read = row("bare read of b", lambda: b.sum(dtype=torch.float32))  # not a product: err is noise
            else:
                base = row("torch.matmul", lambda: a @ b)
                cur = row("gemm", lambda: G.gemm(a, b))
                if cur["us"] is not None and M <= G.SPLITK_MAX_M:  # the decode config gemm's autotuner picked
                    cur["config"] = {k: v for k, v in F8.fp8_gemm_decode_kernel.best_config.all_kwargs().items()
                                     if k.startswith("DEC_") or k in ("SPLIT_K", "num_warps", "num_stages")}
                til = row("gemm_tiled", lambda: G.gemm_tiled(a, b))
            best = None
            cands = (fp8_candidates if fp8 else candidates)(M, K)
            if fp8 and args.cands:
                cands = [dict(DEC_BLOCK_M=max(16, 1 << (M - 1).bit_length()), DEC_BLOCK_N=bn, DEC_BLOCK_K=bk,
                              SPLIT_K=sk, USE_DOT=True, num_warps=4, num_stages=st)
                         for bn, bk, sk, st in (tuple(int(v) for v in c.split(":")) for c in args.cands.split(","))]
            for cfg in cands:
                bm, bn, sk = cfg["DEC_BLOCK_M"], cfg["DEC_BLOCK_N"], cfg["SPLIT_K"]
                tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
                ws = torch.empty(sk * M * N, device="cuda", dtype=torch.float32)
                cnt = torch.zeros(tiles, device="cuda", dtype=torch.int32)
                c = torch.empty(M, N, device="cuda", dtype=out_dtype)

                def fn(cfg=cfg, ws=ws, cnt=cnt, c=c, tiles=tiles, sk=sk):
                    kern[(tiles, sk)](a, b, c, one, one, ws, cnt, M, N, K, a.stride(0), a.stride(1),
                                      b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                      SCALE_A_ROWS=False, SCALE_B_COLS=False, **cfg)
                    return c

                r = row("splitk", fn, cfg)
                if r["us"] is not None and r["rel_err"] is not None and r["rel_err"] < 1e-2:
                    if best is None or r["us"] < best["us"]:
                        best = r
            b_us = base["us"]
            if fp8:
                print(f"bare read of b (a sum, not the product): {read['us']:.1f} us")
            print(f"M={M:4d} N={N:5d} K={K:5d}: torch {b_us:7.1f} us | gemm {cur['us']:7.1f} ({b_us / cur['us']:.2f}x)"
                  + (f" {cur['config']}" if not fp8 and cur.get("config") else "")
                  + f" | tiled {til['us']:7.1f} ({b_us / til['us']:.2f}x) | best split-K "
                  + (f"{best['us']:7.1f} ({b_us / best['us']:.2f}x) {best['config']}" if best else "none"),
                  flush=True)
            del a, b, ref
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), gpu=torch.cuda.get_device_name(), triton=triton.__version__,
                torch=torch.__version__, command="python tests/bench/explore_gemm_small_m.py " + " ".join(
                    sys.argv[1:] if argv is None else argv), seconds=round(time.time() - t_start))
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    print(f"# wrote {args.out} ({len(rows)} rows, {meta['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
