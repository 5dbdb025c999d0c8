"""A launch wrapper in a module of its own (not the scenario file, not a *_kernel.py): its errors name its line."""
import torch
import triton
import triton.language as tl


@triton.jit
def needs_block(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch_without_block(x):
    y = torch.empty_like(x)
    needs_block[(1,)](x, y, x.numel())  # MISSING: BLOCK is not passed
    return y
