"""A user's pytest file of Triton kernels with two planted bugs (test_program.py runs it under
`tritondbg interpret -- python -m pytest`). Not collected by the project's suite (no test_ prefix)."""
import torch
import triton
import triton.language as tl


@triton.jit
def shift_copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, x, mask=offs <= n)  # planted bug: off by one, stores one element past the end


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x))  # planted bug: every program writes out[0] (should be out_ptr + pid)


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def test_shift_copy():
    x = torch.arange(20, dtype=torch.float32)
    y = torch.empty(20)
    shift_copy_kernel[(3,)](x, y, 20, BLOCK=8)
    assert torch.equal(x, y)


def test_row_sum():
    x = torch.ones(3, 8)
    out = torch.zeros(3)
    row_sum_kernel[(3,)](x, out, 8, BLOCK=8)
    assert out[0] == 8


def test_double():
    x = torch.arange(10, dtype=torch.float32)
    y = torch.empty(10)
    double_kernel[(2,)](x, y, 10, BLOCK=8)
    assert torch.equal(y, 2 * x)
