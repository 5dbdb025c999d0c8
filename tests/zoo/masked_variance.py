"""Zoo: a row variance that sums the padded lanes: ``x - mean`` is not re-masked, so each of the
BLOCK_N - N padded lanes adds mean^2 (wrong on the GPU and the CPU alike; the finding says where)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def var_buggy(x_ptr,  # *fp32/bf16 (M, N), read
              v_ptr,  # *fp32 (M,), written: biased variance of each row
              N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    mean = tl.sum(x, axis=0) / N
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / N  # BUG: masked_reduction
    tl.store(v_ptr + row, var)


@triton.jit
def var_twin(x_ptr, v_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(cols < N, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    tl.store(v_ptr + row, var)


def _launch(kernel):
    def launch(x):
        v = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
        kernel[(x.shape[0],)](x, v, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]))
        return v
    return launch


def make_inputs(case, dtype, device, generator):
    p = case.params
    return dict(x=(torch.randn(p["M"], p["N"], generator=generator) + 3.0).to(device=device, dtype=dtype))


def reference(x):
    return x.float().var(dim=-1, unbiased=False)


# 100 columns in a 128 block, row mean 3; in bf16 too (the sums run in fp32 and round to bf16, as on the GPU)
_CASES = [Case("tiny", params=dict(M=3, N=100), dtypes=("float32", "bfloat16"))]
buggy = Scenario("buggy", make_inputs, _launch(var_buggy), reference, _CASES, kernels=[var_buggy])
twin = Scenario("twin", make_inputs, _launch(var_twin), reference, _CASES, kernels=[var_twin])
