"""check_data (resources gate): a launch wrapper with two code paths. Short rows go to a small kernel; wide rows
to a kernel that keeps a 16384-wide fp32 row in one warp (512 values per thread: ptxas spills). A gate that
compiles only the first case never sees the second kernel."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def short_rows(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row * N + cols, x * 2.0, mask=cols < N)


@triton.jit
def wide_rows(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    s = tl.sum(x * x, axis=0)
    tl.store(out_ptr + row * N + cols, x * 2.0 + s * 0.0, mask=cols < N)


def launch(x):
    out = torch.empty_like(x)
    M, N = x.shape
    if N <= 64:
        short_rows[(M,)](x, out, N, BLOCK=64)
    else:
        wide_rows[(M,)](x, out, N, BLOCK=16384, num_warps=1)  # BUG: resources (spills)
    return out


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["M"], case.params["N"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float() * 2.0


two_paths = Scenario("two_paths", make_inputs, launch, reference,
                     [Case("short", params=dict(M=2, N=40)), Case("wide", params=dict(M=2, N=5000))],
                     kernels=[short_rows, wide_rows])
