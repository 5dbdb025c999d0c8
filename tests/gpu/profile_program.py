"""A program whose time is in Triton kernels, for `tritondbg profile -- CMD` and its comparison with Proton.

    python tests/gpu/profile_program.py [--steps N]        # on the GPU: 64M-element add, 8192x8192 softmax and
                                                           # layernorm (fp16), a 4096^3 bf16 gemm, per step
    tritondbg profile -- python tests/gpu/profile_program.py --steps 20
    proton -n /tmp/prog tests/gpu/profile_program.py --steps 20     # Proton on the same program
Without a GPU (TRITON_INTERPRET=1) it runs tiny shapes so the CPU tests can profile it under the interpreter.
The add and gemm kernels are autotuned: the first step benchmarks their configs.
It prints its own wall time (``script_s``: from its first line, imports included, to its end; ``main_s``: main()
alone, tensors, launches and the final synchronize), what the GPU test compares with and without tritondbg.
"""
import time

_T0 = time.perf_counter()  # before torch/triton are imported (tritondbg attaches when triton is imported)

import argparse  # noqa: E402
import os  # noqa: E402

import torch  # noqa: E402

from tritondbg.kernels.add import add  # noqa: E402
from tritondbg.kernels.gemm import gemm  # noqa: E402
from tritondbg.kernels.layernorm import layernorm  # noqa: E402
from tritondbg.kernels.softmax import softmax  # noqa: E402


def main() -> None:
    t_main = time.perf_counter()
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args()
    gpu = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") in ("", "0")
    dev = "cuda" if gpu else "cpu"
    n, rows, cols, mnk = (1 << 26, 8192, 8192, 4096) if gpu else (1000, 3, 40, 16)
    x = torch.randn(n, device=dev)
    y = torch.randn(n, device=dev)
    h = torch.randn(rows, cols, device=dev, dtype=torch.float16 if gpu else torch.float32)
    w, b = torch.randn(cols, device=dev, dtype=h.dtype), torch.randn(cols, device=dev, dtype=h.dtype)
    a = torch.randn(mnk, mnk, device=dev, dtype=torch.bfloat16 if gpu else torch.float16)
    bm = torch.randn(mnk, mnk, device=dev, dtype=a.dtype)
    for _ in range(args.steps):
        add(x, y)
        softmax(h)
        layernorm(h, w, b)
        gemm(a, bm)
    if gpu:
        torch.cuda.synchronize()
    end = time.perf_counter()
    print(f"profile_program: {args.steps} steps on {dev}; main_s={end - t_main:.6f} script_s={end - _T0:.6f}")


if __name__ == "__main__":
    main()
