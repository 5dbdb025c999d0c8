"""Zoo: a bug only some autotune configs expose. The column loop has no mask, which is right only when
BLOCK divides N: the case pins BLOCK=64 (N=192) and passes; ``--all-configs`` shows BLOCK=128 reading
into the next row and, for the last row, past the end of x."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario

_CONFIGS = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})]


@triton.autotune(configs=_CONFIGS, key=["N"])
@triton.jit
def rowsum_buggy(x_ptr,  # *fp32 (M, N), read
                 s_ptr,  # *fp32 (M,), written
                 N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        acc += tl.load(x_ptr + row * N + start + cols)  # BUG: out_of_bounds
    tl.store(s_ptr + row, tl.sum(acc, axis=0))


@triton.autotune(configs=_CONFIGS, key=["N"])
@triton.jit
def rowsum_twin(x_ptr, s_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        acc += tl.load(x_ptr + row * N + start + cols, mask=start + cols < N, other=0.0)
    tl.store(s_ptr + row, tl.sum(acc, axis=0))


def _launch(kernel):
    def launch(x):
        s = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
        kernel[(x.shape[0],)](x, s, x.shape[1])
        return s
    return launch


def make_inputs(case, dtype, device, generator):
    p = case.params
    return dict(x=torch.randn(p["M"], p["N"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float().sum(dim=-1)


_CASES = [Case("tiny", params=dict(M=4, N=192), config=dict(BLOCK=64), atol=1e-3)]
buggy = Scenario("buggy", make_inputs, _launch(rowsum_buggy), reference, _CASES, kernels=[rowsum_buggy])
twin = Scenario("twin", make_inputs, _launch(rowsum_twin), reference, _CASES, kernels=[rowsum_twin])
