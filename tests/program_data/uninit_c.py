"""A kernel that reads its torch.empty output (beta = 0 times whatever C holds: helper-66, FlashInfer's gemm with c=None):\nunder capture every output is the uninitialized mark, and the replay's comparison with it checks nothing."""
import torch, triton, triton.language as tl


@triton.jit
def axpby(x_ptr, c_ptr, n, beta, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    tl.store(c_ptr + o, tl.load(x_ptr + o, mask=m) * 2 + beta * tl.load(c_ptr + o, mask=m), mask=m)


x = torch.ones(10, device="cuda")
c = torch.empty(10, device="cuda")  # the library's default c: beta = 0 times whatever the memory holds
axpby[(1,)](x, c, 10, 0.0, BLOCK=16)
print("nan", int(torch.isnan(c).sum()))
