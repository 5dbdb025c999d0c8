"""Zoo: a grid sized with floor division (``n // BLOCK``) instead of ``triton.cdiv``: the tail of the output is
never written. Its elements hold whatever ``torch.empty_like`` gave: zeros on a CPU more often than not, the last
tensor's bytes on the GPU. tritondbg reports the output elements no launch wrote, at the launch that was handed
the output (fp32 and bf16)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def scale_kernel(x_ptr,    # *fp32/bf16 (n,), read
                 out_ptr,  # *same (n,), written: 2 * x
                 n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


def buggy_launch(x):
    out = torch.empty_like(x)
    scale_kernel[(x.numel() // 64,)](x, out, x.numel(), BLOCK=64)  # BUG: uninit
    return out


def twin_launch(x):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


def make_inputs(case, dtype, device, generator):
    x = torch.randn(case.params["n"], generator=generator) * 100
    return dict(x=x.to(device=device, dtype=dtype))


def reference(x):
    return x * 2


_CASES = [Case("tiny", params=dict(n=1000), dtypes=("float32", "bfloat16"))]
buggy = Scenario("buggy", make_inputs, buggy_launch, reference, _CASES, kernels=[scale_kernel])
twin = Scenario("twin", make_inputs, twin_launch, reference, _CASES, kernels=[scale_kernel])
