"""A library's bf16 check that reads torch.version.cuda (lmdeploy's is_bf16_supported): None on torch's CPU build,
so without a GPU the program took its fp16 path; the stand-in answers a CUDA version, and the run's note names the
line that read it. ``torch.__version__`` beside it: a test suite's ``version.parse(torch.version.cuda)``."""
from packaging import version
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
print("parsed", version.parse(torch.version.cuda) >= version.parse("11.0"))
x = torch.ones(16, device="cuda", dtype=dtype)
double[(1,)](x, 16, BLOCK=16)
print("dtype", dtype, x[0].item())
