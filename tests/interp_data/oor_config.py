"""A tiled product whose 256-wide config reads past its 32x32 inputs (no masks) and needs more shared memory than
any GPU has (two 256x256 fp16 tiles for its dot): the autotuner skips that config on a GPU (OutOfResources), so the
all-configs gate under the interpreter leaves it out, as not applicable (helper-108: GPTQModel)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=4, num_stages=2),
                          triton.Config({"BLOCK": 256}, num_warps=4, num_stages=2)], key=["n"])
@triton.jit
def tile_mm(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * n + r[None, :])  # unmasked: past the end where BLOCK > n
    b = tl.load(b_ptr + r[:, None] * n + r[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + r[:, None] * n + r[None, :], c.to(tl.float16), mask=(r[:, None] < n) & (r[None, :] < n))


def make(case, dtype, device, generator):
    return dict(a=torch.randn(32, 32, generator=generator).to(device=device, dtype=torch.float16),
                b=torch.randn(32, 32, generator=generator).to(device=device, dtype=torch.float16))


def launch(a, b):
    c = torch.empty_like(a)
    tile_mm[(1,)](a, b, c, 32)
    return c


oor = Scenario("oor", make, launch, lambda a, b: (a.float() @ b.float()).half(),
               [Case("tiny", params={}, dtypes=("float16",))], kernels=[tile_mm])
