"""A program whose kernel makes a NaN (`python nonfinite.py nan`) or a meant -inf (`python nonfinite.py inf`):
the replay of its capture must name the op that made the NaN (an error) and the Inf only as a warning."""
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def rms_kernel(x_ptr, y_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + tl.program_id(0) * n + offs, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n - shift)  # shift > mean(x^2): sqrt of a negative, NaN
    tl.store(y_ptr + tl.program_id(0) * n + offs, x * rstd, mask=mask)


@triton.jit
def log_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.log(tl.load(x_ptr + offs, mask=mask, other=1.0)), mask=mask)  # log(0) = -inf


if __name__ == "__main__":
    x = torch.randn(3, 40)
    y = torch.empty_like(x)
    if sys.argv[1] == "nan":
        rms_kernel[(3,)](x, y, 40, 100.0, BLOCK=64)
    else:
        x = torch.tensor([0.0, 1.0, 2.0, 0.5])
        y = torch.empty_like(x)
        log_kernel[(1,)](x, y, 4, BLOCK=8)
    print("nan" if torch.isnan(y).any() else "finite" if torch.isfinite(y).all() else "inf")
