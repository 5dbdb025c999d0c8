"""A kernel with an unmasked load and store, launched 4 times (helper-62: the same findings printed for every launch)."""
import torch, triton, triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x_ptr + o, tl.load(x_ptr + o) + 1)  # no mask

for i in range(4):
    x = torch.zeros(10, device="cuda")
    k[(1,)](x, 10, BLOCK=16)
print("done")
