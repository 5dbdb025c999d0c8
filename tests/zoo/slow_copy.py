"""Zoo (perf gate, GPU): a copy that moves one element per loop step in a single-warp program: correct, and
far below torch's copy. The twin copies a 1024-wide block per step with vectorised loads."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def copy_scalar_kernel(x_ptr,  # *fp32 (n,), read
                       out_ptr,  # *fp32 (n,), written
                       n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    for i in range(0, BLOCK):  # BUG: perf (one element per iteration)
        if start + i < n:
            tl.store(out_ptr + start + i, tl.load(x_ptr + start + i))


@triton.jit
def copy_block_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def slow(x):
    out = torch.empty_like(x)
    copy_scalar_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64, num_warps=1)
    return out


def fast(x):
    out = torch.empty_like(x)
    copy_block_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024, num_warps=4)
    return out


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float().clone()


def baseline(x):
    return x.clone()


_CASES = [Case("tiny", params=dict(n=300)), Case("big", params=dict(n=1 << 24), interpret=False)]
buggy = Scenario("buggy", make_inputs, slow, reference, _CASES, kernels=[copy_scalar_kernel], baseline=baseline)
twin = Scenario("twin", make_inputs, fast, reference, _CASES, kernels=[copy_block_kernel], baseline=baseline)
