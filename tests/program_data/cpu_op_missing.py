"""A torch op whose CPU kernel lacks the dtype ("median_cpu" not implemented for 'Bool'): under the stand-in the
program's "cuda" tensor is on the CPU, and the error gets tritondbg's line saying why. (The first such op,
helper-62's torch.histc of int32 in triton_kernels' routing_torch, now counts on a float copy:
cpu_fallbacks.integer_histc.)"""
import triton
import torch
x = torch.tensor([True, False, True], device="cuda")
print(torch.median(x))
