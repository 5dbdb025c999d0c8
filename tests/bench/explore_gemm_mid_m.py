"""Issue 18, gemm at mid M (1024 / 4096 rows, LLM weights, and 4096^3): does the TMA kernel's split tail
(kernels/gemm.py TAIL_SPLIT_MAX, ``_split_tail_sum``) remove the partial last round, and which tile wins with
it? At small M (``--m 127,256``: fewer tiles than SMs) the same rule is plain split-K, timed beside ``gemm``'s
split-K decode kernel (row ``gemm``, M <= SPLITK_MAX_M). An exploration: its output decides TMA_CONFIGS,
TAIL_SPLIT_MAX and SPLITK_MAX_M.

    python tests/bench/explore_gemm_mid_m.py [--m 1024,4096] [--dtype bfloat16] [--out explore_mid.json]

For each (M, N, K): torch.matmul; ``gemm_tiled`` (the TMA kernel) with the split tail off (TAIL_SPLIT_MAX = 1: the kernel before
issue 18's change, autotuned) and on (autotuned); then gemm_tma_kernel launched directly with each TMA config
of >= 128x128 tiles, tail off and on, and with a few tiles outside TMA_CONFIGS (``EXTRA``: 256x128, ...),
tail on. Every row is checked against an fp32 product first (rel. err < 1e-2 of
the output's largest value, else the row is marked wrong and not timed). do_bench median, L2 flushed. Prints
one line per shape (tiles, rounds, the tail's split) and writes every row as JSON. Needs a CUDA GPU (exit 2
without one); about 2 minutes on an H200.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

# the sweep's N/K pairs (tests/bench/sweep_h200.py GEMM_NK); 4096^3 is added for M = 4096
NK = ((4096, 4096), (11008, 4096), (4096, 11008), (13824, 5120), (5120, 13824), (14336, 4096), (6144, 4096))
GELU = ((1024, 5120, 13824),)  # also timed with the fused GELU (the tail applies the activation itself)
# Candidates outside TMA_CONFIGS, pinned with the tail on. sm_90 compile-only (Triton 3.9, bf16): 256x128x64 w8
# s4 159 regs / 224 KiB, s3 176 KiB; 128x256x64 GROUP_M 16 s4 171 / 224 KiB; 128x128x128 w8 s3 90 / 208 KiB;
# 128x128x64 w8 s5 90 / 176 KiB; no spills.
EXTRA = ((256, 128, 64, 8, 8, 4), (256, 128, 64, 8, 8, 3), (128, 256, 64, 16, 8, 4), (128, 128, 128, 8, 8, 3),
         (128, 128, 64, 8, 8, 5))


def tail_split(tiles: int, sms: int, k_steps: int, most: int) -> int:
    """The kernel's rule (gemm_tma_kernel, ``n_split``), for the printout: K splits per tail tile, 1 = none."""
    tail = tiles % sms
    ways = min(sms // max(tail, 1), most, k_steps)
    return ways if tail > 0 and ways > 1 else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", default="1024,4096")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--nk", default="", help="N:K,... (default: the sweep's LLM shapes)")
    ap.add_argument("--out", default="explore_gemm_mid_m.json")
    ap.add_argument("--rep", type=int, default=30)
    ap.add_argument("--no-pinned", action="store_true", help="only torch and gemm with the tail off / on")
    ap.add_argument("--extra", default="", help="BM:BN:BK:GROUP_M:WARPS:STAGES[:SUBTILE[:CTAS]],... pinned beside EXTRA "
                    "(e.g. narrow deep-pipelined tiles for small M)")
    ap.add_argument("--only-extra", action="store_true", help="pin only the --extra configs (not TMA_CONFIGS, EXTRA)")
    ap.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: a smoke test under the interpreter
    args = ap.parse_args(argv)
    import torch
    import triton

    if args.device == "cuda" and not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from triton.testing import do_bench

    from tritondbg.kernels import gemm as G

    dev = torch.device(args.device, torch.cuda.current_device()) if args.device == "cuda" else torch.device("cpu")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    dtype = getattr(torch, args.dtype)
    nks = [tuple(int(v) for v in p.split(":")) for p in args.nk.split(",") if p] or NK
    shapes = [(M, N, K, None) for M in (int(m) for m in args.m.split(",")) for N, K in nks]
    if 4096 in {s[0] for s in shapes} and not args.nk:
        shapes.append((4096, 4096, 4096, None))
    shapes += [(M, N, K, "gelu") for M, N, K in GELU if not args.nk and M in {s[0] for s in shapes}]
    sms = G._num_sms(dev)
    most = G.TAIL_SPLIT_MAX
    listed = not args.no_pinned and not args.only_extra
    pinned_cfgs = [] if not listed else [(c, (1, G.TAIL_SPLIT_MAX)) for c in G.TMA_CONFIGS
                                         if c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] >= 128 * 128]
    extra = [tuple(int(v) for v in e.split(":")) for e in args.extra.split(",") if e]
    if not args.no_pinned and args.device == "cuda":
        pinned_cfgs += [(triton.Config(dict(BLOCK_M=e[0], BLOCK_N=e[1], BLOCK_K=e[2], GROUP_M=e[3],
                                            EPILOGUE_SUBTILE=bool(e[6]) if len(e) > 6 else True),
                                       num_warps=e[4], num_stages=e[5], num_ctas=e[7] if len(e) > 7 else 1),
                         (G.TAIL_SPLIT_MAX,))
                        for e in (extra if args.only_extra else list(EXTRA) + extra)]
    if dev.type == "cuda":
        G._ensure_allocator()
    ws, cnt = G._tail_buffers(dev, sms)
    rows = []
    t_start = time.time()

    for M, N, K, act in shapes:
        g = torch.Generator(device=dev).manual_seed(0)
        a = torch.randn(M, K, device=dev, generator=g).to(dtype)
        b = (torch.randn(K, N, device=dev, generator=g) / K ** 0.5).to(dtype)
        ref = G.reference(a, b, act)
        scale = ref.abs().max().item()

        def row(name, fn, config=None):
            r = dict(M=M, N=N, K=K, act=act, dtype=args.dtype, name=name, config=config, us=None, rel_err=None)
            try:
                r["rel_err"] = (fn().float() - ref).abs().max().item() / scale
                if r["rel_err"] < 1e-2:
                    r["us"] = do_bench(fn, warmup=5, rep=args.rep) * 1e3
                else:
                    r["error"] = "wrong result"
            except Exception as e:  # noqa: BLE001 - a config that does not compile or launch is a row
                r["error"] = f"{type(e).__name__}: {str(e)[:120]}"
            rows.append(r)
            return r

        def gemm_with(tail_max):
            def fn():
                return G.gemm_tiled(a, b, act)
            G.TAIL_SPLIT_MAX = tail_max
            G._PLANS.clear()  # the cached launchers do not key on TAIL_SPLIT_MAX
            try:
                r = row(f"gemm tail<={tail_max}", fn)
                r["config"] = {**G.gemm_tma_kernel.best_config.all_kwargs()} if r["us"] else None
            finally:
                G.TAIL_SPLIT_MAX = most
                G._PLANS.clear()
            return r

        base = row("torch.matmul", (lambda: a @ b) if act is None else
                   (lambda: torch.nn.functional.gelu(a @ b, approximate="tanh")))
        # gemm's own rule (the split-K decode kernel where it applies)
        rule = row("gemm", lambda: G.gemm(a, b)) if M <= G.SPLITK_MAX_M and act is None else None
        off = gemm_with(1)
        on = gemm_with(most)
        best = None
        for cfg, tails in pinned_cfgs:
            bm, bn = cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"]
            tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
            for tail in tails:
                c = torch.empty(M, N, device=dev, dtype=dtype)

                # a cluster of num_ctas CTAs is one program: the persistent grid has sms // num_ctas of them
                units = sms // max(1, cfg.num_ctas)

                def fn(cfg=cfg, tail=tail, c=c, tiles=tiles, units=units):
                    G.gemm_tma_kernel.fn[(G.tma_programs(M, N, K, cfg.kwargs, units, tail),)](
                        a, b, c, ws, cnt, M, N, K, a.stride(0), b.stride(0), A_TRANS=False, B_TRANS=False,
                        ACTIVATION=act, NUM_SMS=units, TAIL_SPLIT=tail, num_warps=cfg.num_warps,
                        num_stages=cfg.num_stages, num_ctas=cfg.num_ctas, **cfg.kwargs)
                    return c

                split = tail_split(tiles, sms, triton.cdiv(K, cfg.kwargs["BLOCK_K"]), tail)
                r = row(f"pinned tail<={tail}", fn, dict(cfg.all_kwargs(), tiles=tiles, split=split))
                if r["us"] is not None and (best is None or r["us"] < best["us"]):
                    best = r
        t = base["us"]

        def fmt(r):
            if r.get("us") and t:
                return f"{r['us']:8.1f} us {t / r['us']:.2f}x"
            return f"{'-':>8} ({r.get('error', '')[:40]})"

        k = on.get("config") or {}
        tiles = (triton.cdiv(M, k["BLOCK_M"]) * triton.cdiv(N, k["BLOCK_N"])) if k else 0
        split = tail_split(tiles, sms, triton.cdiv(K, k["BLOCK_K"]), most) if k else 1
        pick = (f"{k['BLOCK_M']}x{k['BLOCK_N']} w{k['num_warps']} s{k['num_stages']}: {tiles} tiles = "
                f"{tiles / sms:.2f} rounds, split {split}") if k else ""
        bcfg = best["config"] if best else {}
        bdesc = (f"{bcfg['BLOCK_M']}x{bcfg['BLOCK_N']} w{bcfg['num_warps']} s{bcfg['num_stages']} {best['name']}"
                 if best else "")
        print(f"{M:5d}x{N:5d}x{K:5d}{' gelu' if act else '     '} torch {fmt(base) if t is None else f'{t:8.1f} us'} | "
              f"{'gemm ' + fmt(rule) + ' | ' if rule else ''}tail off {fmt(off)} | "
              f"tail on {fmt(on)} [{pick}] | best pinned {fmt(best) if best else '-'} [{bdesc}]", flush=True)
        del a, b, ref
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), triton=triton.__version__, torch=torch.__version__,
                gpu=torch.cuda.get_device_name() if dev.type == "cuda" else "cpu", sms=sms,
                command="python tests/bench/explore_gemm_mid_m.py " + " ".join(sys.argv[1:] if argv is None else argv),
                seconds=round(time.time() - t_start))
    ok = [r for r in rows if r["name"] == f"gemm tail<={most}" and r["us"]]
    ratios = sorted(next(b["us"] for b in rows if b["name"] == "torch.matmul" and (b["M"], b["N"], b["K"], b["act"])
                         == (r["M"], r["N"], r["K"], r["act"])) / r["us"] for r in ok)
    if ratios:
        meta["gemm_vs_torch"] = dict(min=round(ratios[0], 3), median=round(ratios[len(ratios) // 2], 3))
        print(f"# gemm (tail on) / torch.matmul: min {ratios[0]:.2f}x, median {ratios[len(ratios) // 2]:.2f}x "
              f"over {len(ratios)} shapes")
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    print(f"# wrote {args.out} ({len(rows)} rows, {meta['seconds']} s)")
    wrong = [r for r in rows if r.get("error") == "wrong result"]
    if wrong:
        print(f"# {len(wrong)} WRONG rows: " + "; ".join(f"{r['M']}x{r['N']}x{r['K']} {r['name']} {r['config']}"
                                                        for r in wrong[:5]), file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
