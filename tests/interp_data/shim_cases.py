"""Scenarios for the interpreter shims' tests: prints, device_assert, a kernel exception, a wild pointer,
scalar arguments used as tensors and a libdevice call. Lines the tests look for carry a ``# MARK: name``."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from tritondbg import Case, Scenario


@triton.jit
def print_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.static_print("BLOCK =", BLOCK)  # MARK: static_print
    tl.device_print("first", offs)  # MARK: device_print
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def assert_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_assert(offs < 6, "offs out of range")  # MARK: device_assert
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def error_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = x + tl.arange(0, 2 * BLOCK)  # MARK: kernel_error
    tl.store(y_ptr + offs, y, mask=offs < n)


@triton.jit
def wild_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + 1_000_000_000, mask=offs < n, other=0.0)  # MARK: wild_load
    tl.store(y_ptr + offs - 1_000_000_000, x, mask=offs < n)  # MARK: wild_store


@triton.jit
def scalar_kernel(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    e = eps.to(tl.float32)  # MARK: scalar_to
    tl.store(y_ptr + offs, libdevice.rsqrt(x * x + e), mask=offs < n)  # MARK: libdevice


def _copy_launch(kernel):
    def launch(x):
        y = torch.empty_like(x)
        kernel[(triton.cdiv(x.numel(), 4),)](x, y, x.numel(), BLOCK=4)
        return y
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def _copy(x):
    return x.float()


def _scalar_launch(x):
    y = torch.empty_like(x)
    scalar_kernel[(triton.cdiv(x.numel(), 4),)](x, y, x.numel(), 1e-3, BLOCK=4)
    return y


_CASES = [Case("tiny", params=dict(n=10))]
prints = Scenario("prints", make_inputs, _copy_launch(print_kernel), _copy, _CASES, kernels=[print_kernel])
device_assert = Scenario("device_assert", make_inputs, _copy_launch(assert_kernel), _copy, _CASES,
                         kernels=[assert_kernel])
kernel_error = Scenario("kernel_error", make_inputs, _copy_launch(error_kernel), _copy, _CASES, kernels=[error_kernel])
wild = Scenario("wild", make_inputs, _copy_launch(wild_kernel), _copy, _CASES, kernels=[wild_kernel])
scalar_args = Scenario("scalar_args", make_inputs, _scalar_launch, lambda x: torch.rsqrt(x.float() ** 2 + 1e-3),
                       _CASES, kernels=[scalar_kernel])
