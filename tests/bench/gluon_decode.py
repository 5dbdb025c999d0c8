"""The Gluon fp8 decode kernel (kernels/_gluon_decode.py) beside fp8_gemm's pick, torch._scaled_mm and the bare read.

    python tests/bench/gluon_decode.py [--shapes 1x8192x8192,16x8192x8192] [--cands 128:16:1,128:8:2]
                                       [--rounds 3] [--out gluon_decode.json]

Each candidate (BLOCK_K:STAGES:SPLIT_K; SPLIT_K "auto" sizes it as the race does, "sk" is the stream-K walk) is
built, checked against
fp8_gemm's reference (fp32 product; max error within 2^-6 of the largest output: WRONG, not timed), then timed with
do_bench (median, L2 flushed) in ``--rounds`` rotated rounds beside fp8_gemm (whatever serves it: its race's pick
once the race has run), torch._scaled_mm and the bare read of the weight. Needs an sm_90 GPU.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _runs import meta, save  # noqa: E402

SHAPES = "1x8192x8192,16x8192x8192,32x8192x8192,64x8192x8192,1x4096x4096,16x14336x4096,8x4096x14336"


def _cands(text: str | None):
    from tritondbg.kernels import _gluon_decode as D

    if not text:
        return D.CANDIDATES
    out = []
    for item in text.split(","):
        bk, stages, split = item.split(":")
        out.append((int(bk), int(stages),
                    split if split == "auto" else D.STREAM if split in ("sk", D.STREAM) else int(split)))
    return tuple(out)


def main(argv=None) -> int:
    t0 = time.time()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--cands", default=None, help="BLOCK_K:STAGES:SPLIT_K,... (default: the race's candidates)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="gluon_decode.json")
    args = ap.parse_args(argv)
    import torch
    import triton
    from triton.testing import do_bench

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    if torch.cuda.get_device_capability() != (9, 0):
        print("needs an sm_90 GPU (the Gluon decode kernel is Hopper's)", file=sys.stderr)
        return 2
    import read_floor
    from tritondbg.kernels import _gluon_decode as D
    from tritondbg.kernels import fp8_gemm as F8

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    one = torch.ones((), device="cuda")
    rows = []
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        a = (torch.randn(M, K, device="cuda") / 4).to(torch.float8_e4m3fn)
        w = (torch.randn(N, K, device="cuda") / 4).to(torch.float8_e4m3fn)
        b = w.t()
        ref = F8.reference(a, b, one, one).float()
        tol = 2.0 ** -6 * float(ref.abs().max())
        calls = {"fp8_gemm": lambda: F8.fp8_gemm(a, b, one, one),
                 "torch._scaled_mm": lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)}
        F8.fp8_gemm(a, b, one, one)  # its autotuner and race, outside the timing
        x = w.view(torch.int32).reshape(-1)
        out = torch.empty(triton.cdiv(x.numel(), 16384), dtype=torch.float32, device="cuda")
        calls["bare read of b"] = lambda: read_floor._read_sum[(out.numel(),)](x, out, x.numel(), BLOCK=16384,
                                                                              num_warps=8)
        for cfg in D.expand(M, N, K, sms, _cands(args.cands)):
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            try:
                plan = D.build(cfg, a, b, c, one, one)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - a candidate that fails is a line
                print(f"{shape} {D.name(cfg)}: FAILED {type(e).__name__}: {str(e).splitlines()[-1][:200]}")
                rows.append(dict(shape=shape, name=D.name(cfg), error=str(e)[-300:]))
                continue
            err = float((c.float() - ref).abs().max())
            c2 = torch.full_like(c, float("nan"))
            plan(a, b, c2, one, one)  # the cached launcher's path
            same = bool(torch.equal(c, c2))
            if not err <= tol or not same:
                print(f"{shape} {D.name(cfg)}: WRONG (max err {err:.3g}, tol {tol:.3g}; launcher bits same: {same})")
                rows.append(dict(shape=shape, name=D.name(cfg), wrong=err, same=same))
                continue
            calls[D.name(cfg)] = lambda plan=plan, c=c: plan(a, b, c, one, one)
        names = list(calls)
        times = {k: [] for k in names}
        for r in range(args.rounds):
            for k in names[r % len(names):] + names[:r % len(names)]:
                times[k].append(do_bench(calls[k], warmup=10, rep=60) * 1e3)
        base = statistics.median(times["torch._scaled_mm"])
        print(f"{shape}  (fp8_gemm serves: {F8.ws_decision(a, b, one, one) and F8.ws_decision(a, b, one, one)['pick']})")
        for k in sorted(names, key=lambda k: statistics.median(times[k])):
            med = statistics.median(times[k])
            print(f"  {med:7.2f} us ({min(times[k]):.2f} .. {max(times[k]):.2f})  {base / med:5.2f}x  {k}")
            rows.append(dict(shape=shape, name=k, us=times[k], median_us=med))
        del calls
        torch.cuda.empty_cache()
    save(args.out, meta(t0, "tests/bench/gluon_decode.py", argv), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
