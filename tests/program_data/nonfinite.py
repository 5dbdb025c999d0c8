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


@triton.jit
def lse_kernel(x_ptr, out_ptr, rows, valid, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr):
    """sglang's grouped decode, cut down: splits past ``valid`` write nothing (their reducer skips them), and the
    padded head rows make -inf - -inf = NaN in lanes the store masks off."""
    split = tl.program_id(0)
    if split < valid:
        r = tl.arange(0, BLOCK_H)
        c = tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + r[:, None] * BLOCK_N + c[None, :], mask=r[:, None] < rows, other=0.0)
        s = tl.where(r[:, None] < rows, x, float("-inf"))
        e_max = tl.full([BLOCK_H], float("-inf"), tl.float32)
        m = tl.maximum(tl.max(s, 1), e_max)
        scale = tl.exp(e_max - m)  # -inf - -inf: NaN in the padded rows
        lse = m + tl.log(tl.sum(tl.exp(s - m[:, None]), 1)) + scale * 0.0
        tl.store(out_ptr + split * BLOCK_H + r, lse.to(out_ptr.dtype.element_ty), mask=r < rows)


if __name__ == "__main__":
    x = torch.randn(3, 40)
    y = torch.empty_like(x)
    if sys.argv[1].startswith("skipped"):
        x = torch.randn(4, 16)
        y = torch.empty(3, 16, dtype=getattr(torch, sys.argv[1].split(":")[1]))
        lse_kernel[(3,)](x, y, 4, 1, BLOCK_H=16, BLOCK_N=16)
        print("ok" if torch.allclose(y[0, :4].float(), torch.logsumexp(x, 1), atol=1e-2) else "wrong")
        sys.exit(0)
    if sys.argv[1] == "nan":
        rms_kernel[(3,)](x, y, 40, 100.0, BLOCK=64)
    else:
        x = torch.tensor([0.0, 1.0, 2.0, 0.5])
        y = torch.empty_like(x)
        log_kernel[(1,)](x, y, 4, BLOCK=8)
    print("nan" if torch.isnan(y).any() else "finite" if torch.isfinite(y).all() else "inf")
