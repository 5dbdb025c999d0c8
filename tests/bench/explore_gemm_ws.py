"""Issue 18, gemm: does a warp-specialised tile beat cuBLAS where ours does not? (an exploration).

    python tests/bench/explore_gemm_ws.py [--shapes 127x4096x4096,1024x4096x4096] [--out explore_gemm_ws.json]

Nsight Compute (tests/bench/ncu_misses.py, session 9) shows the gemm shapes we miss run a warp-specialised cuBLAS
kernel (a producer warpgroup feeding two consumers). ``gemm_tma_kernel``'s persistent, flattened loop is not
partitioned by Triton's Hopper warp specialisation; a plain one-tile-per-program loop is: compiled for sm_90 with
``tl.range(..., warp_specialize=True)`` and 4 warps, Triton 3.6 and 3.9 both launch 12 warps with ``setmaxnreg``
(checked on the CPU, 2026-12-01). This script times that kernel (``ws_gemm_kernel`` below, TMA device descriptors,
fp32 accumulation, no masks: TMA zero-fills and clips) over a few tiles, beside torch.matmul and ``gemm``, every
config checked against an fp32 product first (the warp-specialised prefill loop was wrong when masked, so nothing
is trusted unchecked). do_bench median, L2 flushed. Needs a CUDA GPU.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import triton
import triton.language as tl

SHAPES = "127x4096x4096,127x11008x4096,1024x4096x4096,1024x6144x4096,1024x5120x13824,4096x4096x4096"
# (BLOCK_M, BLOCK_N, BLOCK_K, stages); 4 warps declared (the pass adds the producer and a second consumer)
CONFIGS = ((128, 128, 64, 3), (128, 128, 64, 4), (128, 256, 64, 3), (64, 64, 64, 6), (64, 128, 64, 5),
           (64, 64, 128, 4), (128, 64, 64, 5))


@triton.jit
def ws_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, WARP_SPEC: tl.constexpr):
    """c = a @ b for row-major a (M, K), b (K, N), c (M, N), 16-bit; one BLOCK_M x BLOCK_N tile per program."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    om = tl.program_id(0) * BLOCK_M
    on = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WARP_SPEC):
        acc = tl.dot(a_desc.load([om, ki * BLOCK_K]), b_desc.load([ki * BLOCK_K, on]), acc)
    c_desc.store([om, on], acc.to(c_ptr.dtype.element_ty))


def ws_gemm(a, b, c, bm, bn, bk, stages, warp_spec=True):
    M, K = a.shape
    N = b.shape[1]
    ws_gemm_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn))](a, b, c, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                                            WARP_SPEC=warp_spec, num_warps=4, num_stages=stages)
    return c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--out", default="explore_gemm_ws.json")
    ap.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: a smoke test under the interpreter
    args = ap.parse_args(argv)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from triton.testing import do_bench

    from tritondbg.kernels import gemm as G
    from tritondbg.kernels._launch import ensure_allocator

    dev = torch.device(args.device)
    if dev.type == "cuda":
        ensure_allocator()
    dtype = getattr(torch, args.dtype)
    rows, t0 = [], time.time()
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        g = torch.Generator(device=dev).manual_seed(0)
        a = torch.randn(M, K, device=dev, generator=g).to(dtype)
        b = (torch.randn(K, N, device=dev, generator=g) / K ** 0.5).to(dtype)
        ref = a.float() @ b.float()
        scale = ref.abs().max().item()

        def row(name, fn):
            r = dict(M=M, N=N, K=K, name=name, us=None)
            try:
                r["rel_err"] = (fn().float() - ref).abs().max().item() / scale
                if r["rel_err"] < 1e-2:
                    r["us"] = do_bench(fn, warmup=10, rep=40) * 1e3 if dev.type == "cuda" else 0.0
                else:
                    r["error"] = "wrong result"
            except Exception as e:  # noqa: BLE001 - a config that does not compile or launch is a row
                r["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
            rows.append(r)
            return r

        torch_r = row("torch.matmul", lambda: a @ b)
        ours_r = row("gemm", lambda: G.gemm(a, b))
        line = [f"{M}x{N}x{K}: torch {torch_r['us']:.1f} us, gemm {ours_r['us']:.1f} us"
                if torch_r["us"] is not None and ours_r["us"] is not None else f"{M}x{N}x{K}"]
        for bm, bn, bk, st in CONFIGS:
            c = torch.empty(M, N, device=dev, dtype=dtype)
            r = row(f"ws {bm}x{bn}x{bk} s{st}", lambda bm=bm, bn=bn, bk=bk, st=st, c=c: ws_gemm(a, b, c, bm, bn, bk, st))
            line.append(f"{bm}x{bn}x{bk}s{st} " + (f"{r['us']:.1f}" if r["us"] is not None else r.get("error", "")[:40]))
        print(" | ".join(line), flush=True)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), triton=triton.__version__, torch=torch.__version__,
                gpu=torch.cuda.get_device_name() if dev.type == "cuda" else "cpu", seconds=round(time.time() - t0),
                command="python tests/bench/explore_gemm_ws.py " + " ".join(sys.argv[1:] if argv is None else argv))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    print(json.dumps(meta))
    wrong = [r for r in rows if r.get("error") == "wrong result"]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
