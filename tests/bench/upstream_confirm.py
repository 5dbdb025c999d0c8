"""Do the upstream bugs tritondbg reported on the CPU show on a GPU? (sessions 41-42, helper-48's findings)

1. torchao's int8 scaled matmul (``torchao/kernel/intmm_triton.py``) launches its kernel with
   ``EVEN_K=(K % 2 == 0)``: for an even K that is not a multiple of BLOCK_K the K-tail loads go unmasked
   (tritondbg: out_of_bounds at intmm_triton.py:229/230). On a GPU the tail reads the next row of ``a`` and
   rows past the end of ``b``: the products of those lanes land in the output.
2. The same kernel multiplies its int32 accumulator by an fp16 scale (line 252): the product is fp16, so any
   |a @ b| above 65504 becomes inf (tritondbg: nan_inf there).
3. gemlite's A16W4 kernels load the scales and zeros without a mask where N is not a multiple of BLOCK_N
   (tritondbg: out_of_bounds on the scales loads). The store is masked, so the output is right; only
   compute-sanitizer with torch's caching allocator off can see the read (``--memcheck``).

Run on the GPU machine (torchao / gemlite import from ``PYTHONPATH``):

    python tests/bench/upstream_confirm.py              # value checks (1, 2) and gemlite's output
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python tests/bench/upstream_confirm.py --only gemlite

On the CPU the same script runs under ``tritondbg interpret -- python tests/bench/upstream_confirm.py`` (CUDA
served on the CPU, sanitizers on every launch). Session 42, on the CPU (torchao 0.18.0, Triton 3.9):
out_of_bounds at intmm_triton.py:229/230 in exactly the 10 launches whose K is not a multiple of BLOCK_K (none
for K = 128, 4096); every fp16-scale launch gives inf where |a @ b| > 65504 (e.g. 944 of 4096 outputs at
64x100x64), fp32 scales none.

Session 43, on the H200 (Triton 3.6, torch 2.11; `tests/bench/runs/s43_gpu.sh`, output in
`tests/bench/runs/s43_upstream.txt`): all three confirmed.
1. K = 100 (EVEN_K=True, K % BLOCK_K = 4 / 36): 3919 / 4044 of 4096 outputs wrong with fp32 scales; K = 128 and
   4096: 0 wrong. K = 4098 gave 0 wrong: there the tail's extra lanes read zeros past b (fresh memory), which
   is luck, not a mask.
2. fp16 scales: inf in exactly the outputs where |a @ b| > 65504 (e.g. 1180 of the 1181 at 64x128x64).
3. gemlite's outputs right (max err 0.0009-0.0013), and compute-sanitizer memcheck reports "Invalid __global__
   read of size 8 bytes ... gemv_revsplitK_kernels.py:345 ... 1 bytes after the nearest allocation of size 48
   bytes": the unmasked scales/zeros load.
"""
import argparse
import sys

import torch


def torchao_ktail(dev: str) -> list[str]:
    """int_scaled_matmul_kernel with configs pinned (torchao's own search benchmarks ~960 configs)."""
    import triton
    from torchao.kernel.intmm_triton import int_scaled_matmul_kernel

    lines = []
    g = torch.Generator().manual_seed(0)
    for (M, K, N) in ((64, 100, 64), (64, 128, 64), (37, 4098, 200), (37, 4096, 200)):  # 128, 4096: controls
        for bk in (32, 64):
            cfg = triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": bk, "GROUP_M": 8}, num_stages=2,
                                num_warps=4)
            a = torch.randint(-128, 128, (M, K), generator=g, dtype=torch.int8).to(dev)
            b = torch.randint(-128, 128, (K, N), generator=g, dtype=torch.int8).to(dev)
            for sdt in (torch.float32, torch.float16):
                s = (torch.rand(M, 1, generator=g) * 1e-3 + 1e-4).to(dev, sdt)
                c = torch.empty(M, N, device=dev, dtype=sdt)
                int_scaled_matmul_kernel(a, b, s, c, cfg)
                exact = (a.double() @ b.double()) * s.double()
                wrong = ((c.double() - exact).abs() > 1e-2 * exact.abs() + 1e-3).sum().item()
                inf = torch.isinf(c).sum().item()
                acc_over = ((a.double() @ b.double()).abs() > 65504).sum().item()
                lines.append(f"torchao int_scaled_matmul M={M} K={K} N={N} BLOCK_K={bk} scales={str(sdt)[6:]}: "
                             f"EVEN_K={K % 2 == 0} (K % BLOCK_K = {K % bk}); {wrong}/{M * N} outputs wrong, {inf} inf "
                             f"(|a@b| > 65504 at {acc_over})")
    return lines


def gemlite_a16w4(dev: str) -> list[str]:
    from gemlite import DType, GemLiteLinear

    lines = []
    g = torch.Generator().manual_seed(0)
    for (M, K, N) in ((1, 256, 192), (3, 256, 192), (16, 256, 200), (127, 512, 96)):
        W_q = torch.randint(0, 16, (N, K), generator=g, dtype=torch.uint8).to(dev)
        scales = (torch.rand(N, K // 64, generator=g) * 0.01).to(dev, torch.float16)
        zeros = torch.full((N, K // 64), 8.0).to(dev, torch.float16)
        lin = GemLiteLinear(4, group_size=64, in_features=K, out_features=N, input_dtype=DType.FP16,
                            output_dtype=DType.FP16)
        lin.pack(W_q, scales, zeros, None)
        x = torch.randn(M, K, generator=g).to(dev, torch.float16)
        y = lin(x)
        W = (W_q.float() - zeros.float().repeat_interleave(64, 1)) * scales.float().repeat_interleave(64, 1)
        err = (y.float() - x.float() @ W.t()).abs().max().item()
        lines.append(f"gemlite A16W4 M={M} K={K} N={N}: max err {err:.4f}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=("torchao", "gemlite"))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("upstream_confirm.py: needs a GPU, or `tritondbg interpret -- python tests/bench/upstream_confirm.py` "
              "(CUDA served on the CPU)", file=sys.stderr)
        return 2
    dev = "cuda"
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name() if torch.cuda.is_available() else '-'}")
    for name, fn in (("torchao", torchao_ktail), ("gemlite", gemlite_a16w4)):
        if args.only in (None, name):
            for line in fn(dev):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
