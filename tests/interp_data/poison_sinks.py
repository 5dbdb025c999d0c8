"""Undefined lanes (a masked load without other=) that decide a store's mask or a gather's addresses, and the
correct twin that and-s the load's own mask in (``m & (x > 0)``: real wherever m is False)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def mask_from_undefined(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)  # MARK: mask_load
    tl.store(y_ptr + offs, 1.0, mask=x > 0)  # MARK: mask_store


@triton.jit
def mask_anded(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, 1.0, mask=m & (x > 0))


@triton.jit
def gather_from_undefined(idx_ptr, x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs, mask=offs < n)  # MARK: idx_load
    v = tl.load(x_ptr + idx)  # MARK: gather
    tl.store(y_ptr + offs, v, mask=offs < n)


@triton.jit
def gather_then_atomic(idx_ptr, x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    idx = tl.load(idx_ptr + offs, mask=offs < n)
    v = tl.load(x_ptr + idx)
    tl.atomic_add(y_ptr + offs, v)  # MARK: atomic_oob (no mask, 16 lanes into 10: its own offsets, not undefined)


def _x(case, dtype, device, generator):
    return dict(x=torch.randn(10, generator=generator).to(device=device, dtype=dtype))


def _masked(kernel):
    def launch(x):
        y = torch.zeros(10, dtype=torch.float32, device=x.device)
        kernel[(1,)](x, y, 10, BLOCK=16)
        return y
    return launch


def _gather_inputs(case, dtype, device, generator):
    return dict(idx=torch.randint(0, 30, (10,), generator=generator, dtype=torch.int32).to(device),
                x=torch.randn(30, generator=generator).to(device=device, dtype=dtype))


def _gather(idx, x):
    y = torch.zeros(10, dtype=torch.float32, device=x.device)
    gather_from_undefined[(1,)](idx, x, y, 10, BLOCK=16)
    return y


_CASES = [Case("tiny", params={})]
mask = Scenario("mask", _x, _masked(mask_from_undefined), lambda x: (x > 0).float(), _CASES,
                kernels=[mask_from_undefined])
mask_twin = Scenario("mask_twin", _x, _masked(mask_anded), lambda x: (x > 0).float(), _CASES, kernels=[mask_anded])
gather = Scenario("gather", _gather_inputs, _gather, lambda idx, x: x.float()[idx.long()], _CASES,
                  kernels=[gather_from_undefined])


def _gather_atomic(idx, x):
    y = torch.zeros(10, dtype=torch.float32, device=x.device)
    gather_then_atomic[(1,)](idx, x, y, 10, BLOCK=16)
    return y


gather_atomic = Scenario("gather_atomic", _gather_inputs, _gather_atomic, lambda idx, x: x.float()[idx.long()], _CASES,
                         kernels=[gather_then_atomic])
