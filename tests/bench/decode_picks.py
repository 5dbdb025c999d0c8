"""fp8_gemm's decode path: which config its autotuner picks, and how each candidate times afterwards.

    python tests/bench/decode_picks.py [--m 1,16,32] [--nk 8192:8192] [--rounds 3] [--out decode_picks.json]

Per (M, N, K): fp8_gemm's first call (the autotuner times every config its pruning keeps, with Triton's do_bench),
then its pick and the autotuner's own timings, then every kept config launched directly in ``--rounds`` rotated
do_bench rounds (L2 flushed), beside torch._scaled_mm. Shows whether a slow pick is the timer's noise or a config
that is slow. Needs a CUDA GPU.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _runs import meta, rotated_rounds, save  # noqa: E402


def main(argv=None) -> int:
    t0 = time.time()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", default="1,16,32")
    ap.add_argument("--nk", default="8192:8192")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="decode_picks.json")
    args = ap.parse_args(argv)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from tritondbg.configs import config_dict
    from tritondbg.kernels import _splitk as SK
    from tritondbg.kernels import fp8_gemm as F8

    tuner = SK.fp8_gemm_decode_kernel
    one = torch.ones((), device="cuda")
    rows = []
    for M in (int(m) for m in args.m.split(",")):
        for N, K in (tuple(int(v) for v in p.split(":")) for p in args.nk.split(",")):
            a = (torch.randn(M, K, device="cuda") / 4).to(torch.float8_e4m3fn)
            b = (torch.randn(N, K, device="cuda") / 4).to(torch.float8_e4m3fn).t()
            F8.fp8_gemm(a, b, one, one)
            pick = config_dict(tuner.best_config)
            tuned = {json.dumps(config_dict(c)): t for c, t in getattr(tuner, "configs_timings", {}).items()}
            ws, cnt = SK._buffers_for(M, N, a.device)
            c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            kept = SK._prune_decode_configs(tuner.configs, dict(M=M, N=N, K=K, a_ptr=a))
            calls = {}
            for cfg in kept:
                kw = dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
                grid = (triton.cdiv(M, kw["DEC_BLOCK_M"]) * triton.cdiv(N, kw["DEC_BLOCK_N"]), kw["SPLIT_K"])
                calls[json.dumps(config_dict(cfg))] = (lambda kw=kw, grid=grid: tuner.fn[grid](
                    a, b, c, one, one, ws, cnt, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1), SCALE_A_ROWS=False, SCALE_B_COLS=False, **kw))
            calls["torch._scaled_mm"] = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                                 out_dtype=torch.bfloat16)
            calls["fp8_gemm"] = lambda: F8.fp8_gemm(a, b, one, one)
            times = rotated_rounds(calls, args.rounds)
            print(f"M={M} N={N} K={K}: autotuner's pick {pick}")
            for k in sorted(times, key=lambda k: min(times[k])):
                t = times[k]
                mark = " <- pick" if k == json.dumps(pick) else ""
                own = tuned.get(k)
                own_s = f"  autotuner: {own[0] * 1e3:.1f}" if isinstance(own, (list, tuple)) else ""
                print(f"  {min(t):6.1f} .. {max(t):6.1f} us  {k}{own_s}{mark}")
                rows.append(dict(M=M, N=N, K=K, name=k, us=t, pick=k == json.dumps(pick),
                                 autotuner_ms=list(own) if isinstance(own, (list, tuple)) else own))
    save(args.out, meta(t0, "tests/bench/decode_picks.py", argv), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
