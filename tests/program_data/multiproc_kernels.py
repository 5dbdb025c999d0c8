"""Kernels of tests/program_data/multiproc.py (a module of their own: its main process need not import triton)."""
import triton
import triton.language as tl


@triton.jit
def inc_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MASKED:
        v = tl.load(x_ptr + offs, mask=offs < n)
    else:
        v = tl.load(x_ptr + offs)  # BUG when MASKED is False: lanes past n read out of bounds
    tl.store(y_ptr + offs, v, mask=offs < n)
