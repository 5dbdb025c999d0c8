"""How fast can anything read a 64 / 128 MiB input under do_bench? (issue 7: the fp8 decode and B1 decode-attention targets)

Times, on one CUDA GPU, the same calls three ways:
  do_bench      triton.testing.do_bench (the issue's method): before each call it zeroes a 256 MB buffer to
                flush the L2, so the call starts with the L2 full of that buffer's DIRTY lines;
  clean-cold    the same loop, but after the zeroing a 128 MB buffer is read (untimed), so the L2 holds clean
                lines: the call still starts cold, without write-backs to pay;
  graph         do_bench_cudagraph (no flush: part of the input may stay in the 50 MB L2 between replays).
Rows: an empty launch (1 program, one store), a plain Triton read of 64 MiB (per-program partial sums),
torch._scaled_mm and tritondbg's fp8_gemm at M = 1 and 16, N = K = 8192 (b K-major, 64 MiB of e4m3); then a
plain read of 128 MiB beside decode attention B1 H32 KV8k D128 bf16 (128 MiB of K + V): tritondbg's
attention_decode, SDPA's default backend and SDPA's flash backend.

    python tests/bench/read_floor.py
"""
from __future__ import annotations

import statistics
import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench, do_bench_cudagraph


@triton.jit
def _one_store(out_ptr):
    tl.store(out_ptr, 1.0)


@triton.jit
def _read_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


def clean_cold(fn, reps=200):
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    clean = torch.ones(128 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for _ in range(10):
        fn()
    for i in range(reps):
        flush.zero_()
        clean.sum()  # reading 128 MB replaces the dirty lines by clean ones (write-backs happen here)
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(start, end))


def graph(fn):
    with torch.cuda.stream(torch.cuda.Stream()):
        return do_bench_cudagraph(fn, rep=100, return_mode="median")


def main() -> int:
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from tritondbg.kernels.fp8_gemm import fp8_gemm

    out = torch.empty(4096, dtype=torch.float32, device="cuda")
    w_bytes = 8192 * 8192
    x = torch.randint(-100, 100, (w_bytes // 4,), dtype=torch.int32, device="cuda")  # 64 MiB
    BLOCK = 16384
    rows = [("empty launch (1 program)", lambda: _one_store[(1,)](out), 0),
            ("Triton read of 64 MiB", lambda: _read_sum[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(),
                                                                                              BLOCK=BLOCK, num_warps=8), w_bytes)]
    gen = torch.Generator(device="cuda").manual_seed(0)
    w = (torch.randn(8192, 8192, device="cuda", generator=gen) / 4).to(torch.float8_e4m3fn)  # (N, K)
    one = torch.ones((), device="cuda")
    for m in (1, 16):
        a = (torch.randn(m, 8192, device="cuda", generator=gen) / 4).to(torch.float8_e4m3fn)
        rows.append((f"torch._scaled_mm M={m}", lambda a=a: torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16), w_bytes))
        rows.append((f"tritondbg fp8_gemm M={m}", lambda a=a: fp8_gemm(a, w.t(), one, one), w_bytes))
    x2 = torch.randint(-100, 100, (2 * w_bytes // 4,), dtype=torch.int32, device="cuda")  # 128 MiB
    rows.append(("Triton read of 128 MiB", lambda: _read_sum[(triton.cdiv(x2.numel(), BLOCK),)](
        x2, out, x2.numel(), BLOCK=BLOCK, num_warps=8), 2 * w_bytes))
    from kernels_h200 import baselines  # the SDPA calls the kernel table times (tests/bench/kernels_h200.py)

    from tritondbg.kernels.attention import attention_decode

    q = torch.randn(1, 32, 128, device="cuda", generator=gen, dtype=torch.bfloat16)
    kc, vc = (torch.randn(1, 32, 8192, 128, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in "kv")
    rows.append(("tritondbg attention_decode B1 KV8k", lambda: attention_decode(q, kc, vc), 2 * w_bytes))
    for name, fn in baselines("attention", {"q": q, "k_cache": kc, "v_cache": vc}).items():
        rows.append((f"{name.replace('sdpa', 'SDPA')} B1 KV8k", fn, 2 * w_bytes))
    print(f"{torch.cuda.get_device_name()}, Triton {triton.__version__}, torch {torch.__version__}")
    print(f"| call | do_bench | clean-cold | graph | do_bench TB/s | clean-cold TB/s |\n|---|---|---|---|---|---|")
    for name, fn, nbytes in rows:
        fn()
        torch.cuda.synchronize()
        t_db, t_cc, t_g = do_bench(fn, warmup=50, rep=300), clean_cold(fn), graph(fn)
        bw = lambda t: f"{nbytes / t / 1e9:.2f}" if nbytes else "-"
        print(f"| {name} | {t_db * 1e3:.1f} us | {t_cc * 1e3:.1f} us | {t_g * 1e3:.1f} us | {bw(t_db)} | {bw(t_cc)} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
