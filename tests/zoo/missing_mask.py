"""Zoo: a load without a mask. The tail program reads past the end of x; plain TRITON_INTERPRET passes."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def scale_buggy(x_ptr,  # *fp32 (n,), read
                y_ptr,  # *fp32 (n,), written
                n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # BUG: out_of_bounds
    tl.store(y_ptr + offs, x * 2.0, mask=offs < n)


@triton.jit
def scale_twin(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2.0, mask=offs < n)


def _launch(kernel):
    def launch(x):
        y = torch.empty_like(x)
        kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
        return y
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float() * 2.0


_CASES = [Case("tiny", params=dict(n=1000))]  # 4 programs of 256; the last has 24 live lanes
buggy = Scenario("buggy", make_inputs, _launch(scale_buggy), reference, _CASES, kernels=[scale_buggy])
twin = Scenario("twin", make_inputs, _launch(scale_twin), reference, _CASES, kernels=[scale_twin])
