"""A script laid out like Triton's tutorials: no ``__main__`` guard, the device asked of Triton's driver at
import, the kernel launched and the results printed at module level. ``MARK`` (an environment variable) names a
file the wrapper and the module-level code append a line to: a reproducer loading the kernel must run neither."""
import os

import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()
SCALE = 3.0
if DEVICE.type == "cuda":
    BLOCK = 128
else:
    BLOCK = 64


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, alpha * x + y, mask=m)


def axpy(x, y):
    with open(os.environ["MARK"], "a") as f:
        f.write("launch\n")
    out = torch.empty_like(x)
    n = x.numel()
    axpy_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, SCALE, BLOCK=BLOCK)
    return out


torch.manual_seed(0)
x = torch.rand(1000, device=DEVICE)
y = torch.rand(1000, device=DEVICE)
out = axpy(x, y)
with open(os.environ["MARK"], "a") as f:
    f.write("ran\n")
print("max diff", (out - (SCALE * x + y)).abs().max().item())

if __name__ == "__main__":
    @triton.jit
    def negate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # defined in the main block, as quick scripts do
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=m), mask=m)

    neg = torch.empty_like(x)
    negate_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, neg, x.numel(), BLOCK=BLOCK)
    with open(os.environ["MARK"], "a") as f:
        f.write("main\n")
