"""A torch op with a CUDA kernel and no CPU one for the dtype (helper-62: triton_kernels' routing_torch, torch.histc
on int32): under the stand-in the program's "cuda" tensor is on the CPU."""
import triton
import torch
x = torch.randint(0, 5, (20,), dtype=torch.int32, device="cuda")
print(torch.histc(x, bins=5, min=0, max=4))
