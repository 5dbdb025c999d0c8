"""A program written for several GPUs (a tensor on cuda:1, set_device(2), torch.cuda.device(3), Triton's own
device interface's set_device(4)) run without one:
each is served on the CPU, the one device there, and the run's note names the ordinals."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(a_ptr + i, mask=i < n) + tl.load(b_ptr + i, mask=i < n), mask=i < n)


a = torch.ones(8, device="cuda:0")
b = torch.ones(8, device="cuda:1")
torch.cuda.set_device(2)
with torch.cuda.device(3):
    out = torch.empty(8, device=torch.device("cuda", 1))
triton.runtime.driver.active.get_device_interface().set_device(4)
add_kernel[(1,)](a, b, out, 8, BLOCK=8)
print("sum", out.sum().item())
