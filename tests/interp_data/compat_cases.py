"""Scenarios for tests/test_interp_compat.py, run with the sanitizers: FlagGems' patterns under tritondbg's
interpreter (a jit helper reading ``dtype.value``; ``StridedBuffer`` launch arguments, a flipped one included)
with torch dtypes in ``Case(dtypes=...)``."""
import math

import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def get_dtype_min(dtype):
    dtype_ = dtype.value  # FlagGems' utils/limits.py
    if dtype_.is_floating():
        value: tl.constexpr = float("-inf")
        return value
    if dtype_.is_int_signed():
        width: tl.constexpr = dtype_.int_bitwidth
        value: tl.constexpr = -1 * 2 ** (width - 1)
        return value


@triton.jit
def rowmax_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * N + offs, mask=offs < N, other=get_dtype_min(x_ptr.type.element_ty))
    tl.store(out_ptr + tl.program_id(0), tl.max(x, 0))


def _rowmax_inputs(case, dtype, device, generator):
    if dtype.is_floating_point:
        x = torch.randn(3, 100, generator=generator)
    else:
        x = torch.randint(-1000, -1, (3, 100), generator=generator)
    return dict(x=x.to(device=device, dtype=dtype))


def _rowmax(x):
    out = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
    rowmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=128)
    return out


rowmax = Scenario("rowmax", _rowmax_inputs, _rowmax, lambda x: x.max(1).values,
                  [Case("tiny", dtypes=[torch.float32, torch.int32])], kernels=[rowmax_kernel])


class StridedBuffer:
    """FlagGems' StridedBuffer, reduced (see tests/test_interp_compat.py)."""

    def __init__(self, base, shape, strides, offset=0):
        self._base, self.dtype, self.offset = base, base.dtype, offset
        self.shape, self._strides, self.device = tuple(shape), tuple(strides), base.device
        self._data_ptr = base.data_ptr() + base.element_size() * offset

    def stride(self):
        return self._strides

    def numel(self):
        return math.prod(self.shape)

    def element_size(self):
        return self.dtype.itemsize

    def data_ptr(self):
        return self._data_ptr


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, sx0, sx1, sy0, sy1, so0, so1, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    rn = tl.arange(0, BN)[None, :]
    mask = (rm < M) & (rn < N)
    x = tl.load(x_ptr + rm * sx0 + rn * sx1, mask=mask)
    y = tl.load(y_ptr + rm * sy0 + rn * sy1, mask=mask)
    tl.store(out_ptr + rm * so0 + rn * so1, x + y, mask=mask)


def _add_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(9, 13, generator=generator).to(device=device, dtype=dtype),
                y=torch.randn(9, 13, generator=generator).to(device=device, dtype=dtype))


def _add_flip(x, y):
    """x + y.flip(1), FlagGems' way: every operand a StridedBuffer, y's with a negative stride."""
    M, N = x.shape
    out = torch.empty_like(x)
    xs = StridedBuffer(x, x.shape, x.stride())
    ys = StridedBuffer(y, y.shape, (y.stride(0), -y.stride(1)), offset=N - 1)
    outs = StridedBuffer(out, out.shape, out.stride())
    add_kernel[(triton.cdiv(M, 4),)](xs, ys, outs, *xs.stride(), *ys.stride(), *outs.stride(), M, N, BM=4, BN=16)
    return out


add_flip = Scenario("add_flip", _add_inputs, _add_flip, lambda x, y: x.float() + y.float().flip(1),
                    [Case("tiny", dtypes=[torch.float32, torch.bfloat16])], kernels=[add_kernel])
