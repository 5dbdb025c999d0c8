"""tl.max / tl.min over a masked load padded with other=0.0, on data of one sign: the padding wins."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def row_max(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.max(x, axis=0))


@triton.jit
def row_min(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.min(x, axis=0))


def _launch(kernel):
    def launch(x):
        out = torch.empty(1, dtype=torch.float32, device=x.device)
        kernel[(1,)](x, out, x.numel(), BLOCK=16)
        return out
    return launch


def _negative(case, dtype, device, generator):
    return dict(x=(-1.0 - torch.rand(10, generator=generator)).to(device=device, dtype=dtype))


def _positive(case, dtype, device, generator):
    return dict(x=(1.0 + torch.rand(10, generator=generator)).to(device=device, dtype=dtype))


_CASES = [Case("tiny", params={})]
max_pad = Scenario("max_pad", _negative, _launch(row_max), lambda x: x.float().max().reshape(1), _CASES,
                   kernels=[row_max])
min_pad = Scenario("min_pad", _positive, _launch(row_min), lambda x: x.float().min().reshape(1), _CASES,
                   kernels=[row_min])
