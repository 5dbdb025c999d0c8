"""Does asking the L2 to evict a read-once stream first make it faster under do_bench's flushed L2? (issue 18)

do_bench zeroes a 256 MB buffer before each timed call: the call starts with the 50 MB L2 full of DIRTY lines, and
every line a plain read allocates evicts one of them (a write-back to DRAM that competes with the read).
``eviction_policy="evict_first"`` (PTX ``createpolicy.fractional.L2::evict_first`` + ``.L2::cache_hint``) marks the
stream's own lines as the first to go, so once a set holds one of them the stream replaces its own clean lines.

    python tests/bench/evict_ab.py [--out evict_ab.json]          # GPU

A plain read of 64 / 128 MiB (one 8 KiB block per program, a sum per program) and a 64 MiB copy, each with the
load's policy none / evict_first / evict_last, then the torch baselines of the bundled streaming kernels
(torch._scaled_mm at M = 1 / 16, N = K = 8192; torch.matmul at M = 1 / 17; SDPA decode). do_bench median (L2
flushed) and CUDA-graph median (no flush).

H200, Triton 3.6, session 16 (tests/bench/runs/s16_evict_ab.json): the 64 MiB read 25.3 -> 22.4 us with
evict_first (128 MiB 42.8 -> 39.1; graph times equal; the copy unchanged: its stores dirty the L2 anyway). The
bundled kernels did not gain: their K/V and weight loads are cp.async (pipelined), and Triton 3.6 drops the hint
from cp.async (3.9 keeps it: ``cp.async.cg.shared.global.L2::cache_hint`` in the PTX). With the hint on those
loads (a temporary patch, measured in fresh processes and not kept) fp8_gemm 1x8192x8192 was 27.9 / 28.6 us
without / with, attention_decode B8 KV1k 47.0 / 46.2; their plain-load configs (where the hint does reach
the load on 3.6) were 1.4-2x slower (fp8 GEMV 52.3 / 47.4 us, decode BLOCK_N 128 x 1 stage 79.3 / 73.6 us).
"""
from __future__ import annotations

import argparse
import sys
import time

import torch
import triton
import triton.language as tl

import _runs

POLICIES = ("", "evict_first", "evict_last")


@triton.jit
def _read_sum(x_ptr, out_ptr, BLOCK: tl.constexpr, EV: tl.constexpr):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK), eviction_policy=EV)
    tl.store(out_ptr + pid, tl.sum(x.to(tl.float32), axis=0))


@triton.jit
def _copy(x_ptr, y_ptr, BLOCK: tl.constexpr, EV: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, eviction_policy=EV))


def _times(fn) -> dict:
    from triton.testing import do_bench, do_bench_cudagraph

    fn()
    torch.cuda.synchronize()
    bench = do_bench(fn, warmup=25, rep=200, return_mode="median")
    with torch.cuda.stream(torch.cuda.Stream()):
        graph = do_bench_cudagraph(fn, rep=100, return_mode="median")
    return dict(bench_us=round(bench * 1e3, 2), graph_us=round(graph * 1e3, 2))


def part_read() -> list:
    rows = []
    blk = 4096  # bf16: 8 KiB per program
    for mib in (64, 128):
        x = torch.randn(mib * 1024 * 1024 // 2, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(x.numel() // blk, device="cuda", dtype=torch.float32)
        y = torch.empty_like(x)
        for ev in POLICIES:
            rows.append(dict(part="read", what=f"read {mib} MiB", policy=ev or "none",
                             **_times(lambda ev=ev: _read_sum[(x.numel() // blk,)](x, out, BLOCK=blk, EV=ev))))
            print(rows[-1], flush=True)
        if mib == 64:
            for ev in POLICIES:
                rows.append(dict(part="read", what="copy 64 MiB", policy=ev or "none",
                                 **_times(lambda ev=ev: _copy[(x.numel() // blk,)](x, y, BLOCK=blk, EV=ev))))
                print(rows[-1], flush=True)
    return rows


def part_baselines() -> list:
    import torch.nn.functional as F

    rows = []
    g = torch.Generator(device="cuda").manual_seed(0)
    for M in (1, 16):
        a = (torch.randn(M, 8192, device="cuda", generator=g) / 4).to(torch.float8_e4m3fn)
        b = (torch.randn(8192, 8192, device="cuda", generator=g) / 4).to(torch.float8_e4m3fn).t()
        sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda")
        rows.append(dict(part="baseline", what=f"fp8_gemm {M}x8192x8192", name="torch._scaled_mm", **_times(
            lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))))
        print(rows[-1], flush=True)
    for M, N, K in ((1, 14336, 4096), (17, 6144, 4096), (17, 14336, 4096)):
        a = torch.randn(M, K, device="cuda", generator=g, dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", generator=g, dtype=torch.bfloat16) / K ** 0.5
        rows.append(dict(part="baseline", what=f"gemm {M}x{N}x{K}", name="torch.matmul", **_times(lambda: a @ b)))
        print(rows[-1], flush=True)
    for B, H, HK, S in ((8, 32, 32, 1024), (8, 32, 32, 32768), (1, 32, 8, 32768)):
        q = torch.randn(B, H, 1, 128, device="cuda", generator=g, dtype=torch.bfloat16)
        k = torch.randn(B, HK, S, 128, device="cuda", generator=g, dtype=torch.bfloat16)
        v = torch.randn_like(k)
        rows.append(dict(part="baseline", what=f"attention_decode B{B} H{H}/{HK} KV{S}", name="sdpa default",
                         **_times(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=HK != H))))
        print(rows[-1], flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="evict_ab.json")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    t0 = time.time()
    rows = part_read() + part_baselines()
    _runs.save(args.out, _runs.meta(t0, "tests/bench/evict_ab.py", argv), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
