"""Zoo: a store mask off by one (``<=``): the tail program writes one element past the end of y."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def copy_buggy(x_ptr,  # *fp32 (n,), read
               y_ptr,  # *fp32 (n,), written
               n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, x + 1.0, mask=offs <= n)  # BUG: out_of_bounds


@triton.jit
def copy_twin(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + offs, x + 1.0, mask=offs < n)


def _launch(kernel):
    def launch(x):
        y = torch.empty_like(x)
        kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
        return y
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float() + 1.0


_CASES = [Case("tiny", params=dict(n=300))]
buggy = Scenario("buggy", make_inputs, _launch(copy_buggy), reference, _CASES, kernels=[copy_buggy])
twin = Scenario("twin", make_inputs, _launch(copy_twin), reference, _CASES, kernels=[copy_twin])
