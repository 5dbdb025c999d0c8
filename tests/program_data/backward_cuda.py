"""A custom autograd Function whose backward allocates on "cuda" and launches a Triton kernel (helper-63:
bitsandbytes' SwitchBackLinear): the autograd engine runs backward with no torch function mode, so the CPU
stand-in did not serve it ("Torch not compiled with CUDA enabled")."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * s, mask=o < n)


def _scaled(x, s):
    y = torch.empty(x.shape, device="cuda", dtype=x.dtype)  # as libraries write it
    scale[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), s, BLOCK=64)
    return y


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return _scaled(x, 2.0)

    @staticmethod
    def backward(ctx, g):
        return _scaled(g.contiguous(), 2.0)


x = torch.randn(100, device="cuda", requires_grad=True)
Twice.apply(x).sum().backward()
assert torch.equal(x.grad, torch.full_like(x, 2.0)), x.grad
print("OK")
