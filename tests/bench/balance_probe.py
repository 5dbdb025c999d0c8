"""Do the weight-read-bound kernels lose time to uneven programs per SM? (issue 18: fp8 decode, decode attention)

fp8_gemm at M = 1 / 16, N = K = 8192 runs 128 tiles x 2 splits = 256 equal programs, and attention_decode at
B8 H32 KV1024 256 (batch, head) programs: 1.94 per SM on the H200's 132, so 124 SMs hold two and 8 hold one.
If an SM's share of the memory traffic is bound by what its own programs keep in flight, the launch lasts as
long as two programs, 3% more than an even spread. The probe grows the problem to exactly two programs per SM
(N = 8448: 132 tiles x 2 splits; H = 33: 264 programs) and times each kernel beside the bare read of the same
bytes and torch's op. Same time for 3% more bytes: the imbalance costs that 3%; time growing with the bytes, as
the bare read's: it costs nothing.

    python tests/bench/balance_probe.py [--rounds 3] [--out balance_probe.json]

do_bench median (L2 flushed), ``--rounds`` rotated rounds, min and max of the rounds printed. Needs a CUDA GPU.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _runs import meta, rotated_rounds, save  # noqa: E402

PIN = dict(DEC_BLOCK_M=16, DEC_BLOCK_N=64, DEC_BLOCK_K=256, SPLIT_K=2, USE_DOT=True, num_warps=4, num_stages=4)


def _read(x):
    """A zero-argument callable: the bare read of ``x``, as the sweep's "bare read of b" row (read as int32, 64 KiB a
    program, 8 warps)."""
    import torch
    import triton

    import read_floor

    flat = x.reshape(-1).view(torch.int32)
    blk = 16384
    out = torch.empty(triton.cdiv(flat.numel(), blk), device=x.device, dtype=torch.float32)
    return lambda: read_floor._read_sum[(out.numel(),)](flat, out, flat.numel(), BLOCK=blk, num_warps=8)


def _fp8_calls(M: int, N: int, K: int) -> dict:
    import torch
    import triton

    from tritondbg.kernels import _splitk as SK
    from tritondbg.kernels import fp8_gemm as F8

    one = torch.ones((), device="cuda")
    a = (torch.randn(M, K, device="cuda") / 4).to(torch.float8_e4m3fn)
    w = (torch.randn(N, K, device="cuda") / 4).to(torch.float8_e4m3fn)
    b = w.t()
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    ws, cnt = SK._buffers_for(M, N, a.device)
    grid = (triton.cdiv(N, PIN["DEC_BLOCK_N"]), PIN["SPLIT_K"])
    kernel = SK.fp8_gemm_decode_kernel.fn

    def pinned():
        kernel[grid](a, b, c, one, one, ws, cnt, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                     c.stride(0), c.stride(1), SCALE_A_ROWS=False, SCALE_B_COLS=False, **PIN)

    F8.fp8_gemm(a, b, one, one)  # autotune outside the timing
    return {"fp8_gemm": lambda: F8.fp8_gemm(a, b, one, one), "decode kernel, 64x256 2 splits": pinned,
            "torch._scaled_mm": lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
            "bare read of b": _read(w)}


def _decode_calls(B: int, H: int, S: int, D: int) -> dict:
    import torch
    import torch.nn.functional as F

    from tritondbg.kernels import attention as A

    q = torch.randn(B, H, D, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    kv = torch.stack((k, v))
    q4 = q.unsqueeze(2)
    A.attention_decode(q, k, v)
    return {"attention_decode": lambda: A.attention_decode(q, k, v),
            "sdpa default": lambda: F.scaled_dot_product_attention(q4, k, v),
            "bare read of k, v": _read(kv)}


def main(argv=None) -> int:
    t0 = time.time()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="balance_probe.json")
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    problems = [(f"fp8 {M}x{N}x8192", N * 8192, lambda M=M, N=N: _fp8_calls(M, N, 8192))
                for M in (1, 16) for N in (8192, 8448)]
    problems += [(f"decode B8 H{H} KV1024 D128", 8 * H * 1024 * 128 * 4, lambda H=H: _decode_calls(8, H, 1024, 128))
                 for H in (32, 33)]
    rows = []
    for name, nbytes, make in problems:
        calls = make()
        names = list(calls)
        times = rotated_rounds(calls, args.rounds)
        print(f"{name} ({nbytes / 2**20:.0f} MiB read)")
        for k in names:
            med = statistics.median(times[k])
            print(f"  {med:7.2f} us ({min(times[k]):.2f} .. {max(times[k]):.2f})  {nbytes / med / 1e6:5.2f} TB/s  {k}")
            rows.append(dict(problem=name, bytes=nbytes, name=k, us=times[k], median_us=med))
        del calls
        torch.cuda.empty_cache()
    # the verdict per kernel: time ratio of the grown problem over the base one, against the byte ratio
    by = {(r["problem"], r["name"]): r["median_us"] for r in rows}
    print("grown / base time (bytes grow 3.1%):")
    for base, grown in ((f"fp8 {m}x8192x8192", f"fp8 {m}x8448x8192") for m in (1, 16)):
        for k in ("fp8_gemm", "decode kernel, 64x256 2 splits", "torch._scaled_mm", "bare read of b"):
            print(f"  {base:20s} {k:32s} {by[(grown, k)] / by[(base, k)]:.3f}")
    for k in ("attention_decode", "sdpa default", "bare read of k, v"):
        base, grown = "decode B8 H32 KV1024 D128", "decode B8 H33 KV1024 D128"
        print(f"  {base:20s} {k:32s} {by[(grown, k)] / by[(base, k)]:.3f}")
    save(args.out, meta(t0, "tests/bench/balance_probe.py", argv), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
