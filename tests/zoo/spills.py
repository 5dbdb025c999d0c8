"""Zoo (resources gate): a row normalisation that keeps a 16384-wide fp32 row live in one warp: 512 values
per thread, more than the 255 registers a thread has, so ptxas spills to local memory. The twin spreads the
row over 16 warps (32 values per thread). Both are correct; only the compiled resources differ."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def rownorm_kernel(x_ptr,  # *fp32 (M, N), read
                   out_ptr,  # *fp32 (M, N), written
                   N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
    scale = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + 1e-6)
    tl.store(out_ptr + row * N + cols, x * scale, mask=mask)


def _launch(num_warps):
    def launch(x):
        out = torch.empty_like(x)
        M, N = x.shape
        rownorm_kernel[(M,)](x, out, N, BLOCK=16384, num_warps=num_warps)  # BUG: resources when num_warps=1
        return out
    return launch


def make_inputs(case, dtype, device, generator):
    p = case.params
    return dict(x=torch.randn(p["M"], p["N"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    x = x.float()
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + 1e-6)


_CASES = [Case("tiny", params=dict(M=3, N=5000))]
buggy = Scenario("buggy", make_inputs, _launch(1), reference, _CASES, kernels=[rownorm_kernel])
twin = Scenario("twin", make_inputs, _launch(16), reference, _CASES, kernels=[rownorm_kernel])
