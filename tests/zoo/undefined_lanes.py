"""Zoo: a row sum over a masked load without ``other=``: the masked-off lanes are undefined on the GPU.
Plain TRITON_INTERPRET reads them as 0 and passes; tritondbg fills them with poison (NaN)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def rowsum_buggy(x_ptr,  # *fp32 (M, N), read
                 s_ptr,  # *fp32 (M,), written (x may be bf16: summed in fp32)
                 N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N)  # BUG: poison
    tl.store(s_ptr + row, tl.sum(x.to(tl.float32), axis=0))


@triton.jit
def rowsum_twin(x_ptr, s_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.store(s_ptr + row, tl.sum(x.to(tl.float32), axis=0))


def _launch(kernel):
    def launch(x):
        s = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
        kernel[(x.shape[0],)](x, s, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]))
        return s
    return launch


def make_inputs(case, dtype, device, generator):
    p = case.params
    return dict(x=torch.randn(p["M"], p["N"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float().sum(dim=-1)


_CASES = [Case("tiny", params=dict(M=3, N=100), dtypes=("float32", "bfloat16"), atol=0.3)]
buggy = Scenario("buggy", make_inputs, _launch(rowsum_buggy), reference, _CASES, kernels=[rowsum_buggy])
twin = Scenario("twin", make_inputs, _launch(rowsum_twin), reference, _CASES, kernels=[rowsum_twin])
