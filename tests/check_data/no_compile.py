"""check_data (resources gate): a kernel whose compile fails (a tl.static_assert on its constexpr): the gate
FAILs with one line naming the case and the kernel's file and line."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def neg_block(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK < 0, "BLOCK must be negative")  # BUG: never compiles
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)


def launch(x):
    out = torch.empty_like(x)
    neg_block[(1,)](x, out, x.numel(), BLOCK=64)
    return out


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(40, generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float()


no_compile = Scenario("no_compile", make_inputs, launch, reference, [Case("tiny")], kernels=[neg_block])
