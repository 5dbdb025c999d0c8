"""`a and b` / `a or b` on blocks (helper-63: xformers' rope_padded): element-wise, as compiled Triton computes them,
in the kernel and in a @triton.jit helper it calls."""
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def _inside(x, lo, hi):
    return lo < x and x <= hi


@triton.jit
def band(x_ptr, y_ptr, n, lo, hi, HELPER: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o, mask=o < n, other=0.0)
    if HELPER:
        inside = _inside(x, lo, hi)
    else:
        inside = lo < x and x <= hi or x > 100.0
    tl.store(y_ptr + o, tl.where(inside, 1.0, 0.0), mask=o < n)


def launch(x, helper):
    y = torch.empty_like(x)
    band[(triton.cdiv(x.numel(), 32),)](x, y, x.numel(), -0.5, 0.5, HELPER=helper, BLOCK=32)
    return y


s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.randn(101, generator=generator) * 2,
             helper=case.params["helper"]), launch,
             lambda x, helper: ((x > -0.5) & (x <= 0.5) | (not helper) & (x > 100.0)).float(),
             [Case("inline", params=dict(helper=False), dtypes=("float32",)),
              Case("helper", params=dict(helper=True), dtypes=("float32",))], kernels=[band])
