"""In-place smoothing x[i] = (x[i] + x[i + 1]) / 2 by blocks: each program reads the first element of the next
block, which the next program overwrites. Right in grid order (the interpreter's), wrong when a GPU runs the
next program first: the determinism gate's reversed run shows it, by more than rounding."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def smooth_inplace(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    here = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    right = tl.load(x_ptr + tl.minimum(offs + 1, n - 1), mask=offs < n, other=0.0)
    tl.store(x_ptr + offs, 0.5 * (here + right), mask=offs < n)


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(40, generator=generator).to(device=device, dtype=dtype))


def launch(x):
    y = x.clone()
    smooth_inplace[(triton.cdiv(40, 8),)](y, 40, BLOCK=8)
    return y


def reference(x):
    x = x.float()
    return 0.5 * (x + torch.cat([x[1:], x[-1:]]))


buggy = Scenario("buggy", make_inputs, launch, reference, [Case("tiny", params={})], kernels=[smooth_inplace])
