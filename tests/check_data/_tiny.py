"""A tiny correct kernel the check_data scenarios share: y = x + 1."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


def launch(x):
    y = torch.empty_like(x)
    add_one[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params.get("n", 100), generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float() + 1.0
