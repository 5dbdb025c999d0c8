"""A library's bf16 check that reads torch.version.cuda (lmdeploy's is_bf16_supported): None on torch's CPU build,
so without a GPU the program takes its fp16 path; the run's note names the line that read it."""
import torch
import triton
import triton.language as tl


def is_bf16_supported():
    return torch.version.cuda is not None and torch.cuda.get_device_capability()[0] >= 8  # READS


@triton.jit
def double(x_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)


dtype = torch.bfloat16 if is_bf16_supported() else torch.float16
x = torch.ones(16, device="cuda", dtype=dtype)
double[(1,)](x, 16, BLOCK=16)
print("dtype", dtype, x[0].item())
