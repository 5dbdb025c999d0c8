"""Zoo: a residual add that reads its output buffer as if it held the residual: ``out`` comes from
``torch.empty_like`` (it should have been ``residual.clone()``). What the load reads is never written by anyone.
The twin reads the same uninitialized buffer but keeps those lanes out of the result (``tl.where``): no finding."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def add_into_buggy(x_ptr,    # *fp32/bf16 (n,), read
                   out_ptr,  # *same (n,), read and written
                   n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    acc = tl.load(out_ptr + offs, mask=m, other=0.0)  # BUG: uninit
    tl.store(out_ptr + offs, acc + x, mask=m)


@triton.jit
def add_into_twin(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    old = tl.load(out_ptr + offs, mask=m, other=0.0)  # read, then discarded lane by lane: not a bug
    tl.store(out_ptr + offs, tl.where(offs >= 0, x + x, old), mask=m)


def _launch(kernel):
    def launch(x):
        out = torch.empty_like(x)
        kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x + x


_CASES = [Case("tiny", params=dict(n=100), dtypes=("float32", "bfloat16"))]
buggy = Scenario("buggy", make_inputs, _launch(add_into_buggy), reference, _CASES, kernels=[add_into_buggy])
twin = Scenario("twin", make_inputs, _launch(add_into_twin), reference, _CASES, kernels=[add_into_twin])
