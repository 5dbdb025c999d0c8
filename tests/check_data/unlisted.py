"""check_data (all-configs and resources gates): a launch that runs two autotuned kernels the scenario does not
list in ``kernels=`` (as fla's chunk_simple_gla, whose wrappers launch their own kernels). The gates must find
them as ``interpret`` does: ``unlisted`` gets the verdicts of ``listed``, its twin that lists them.

- ``rownorm_tuned``: its num_warps=1 config keeps a 16384-wide fp32 row in one warp and spills; the autotuner
  can pick num_warps=16, which does not: resources passes, naming the spill.
- ``copy_tuned``: its BLOCK=128 config is wrong (the programs step by 64, so half the elements are never
  written); the first config, BLOCK=64, is right, so correctness passes and only all-configs fails.
"""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.autotune(configs=[triton.Config({}, num_warps=1), triton.Config({}, num_warps=16)], key=["N"])
@triton.jit
def rownorm_tuned(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
    scale = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + 1e-6)
    tl.store(out_ptr + row * N + cols, x * scale, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=1), triton.Config({"BLOCK": 128}, num_warps=1)],
                 key=["n"])
@triton.jit
def copy_tuned(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * 64 + tl.arange(0, BLOCK)  # BUG: steps by 64 whatever BLOCK is
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch(x):
    out, y = torch.empty_like(x), torch.zeros_like(x)  # unwritten elements stay 0
    M, N = x.shape
    rownorm_tuned[(M,)](x, out, N, BLOCK=16384)
    copy_tuned[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
    return out, y


def make_inputs(case, dtype, device, generator):
    p = case.params
    return dict(x=torch.randn(p["M"], p["N"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    x = x.float()
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + 1e-6), x


_CASES = [Case("tiny", params=dict(M=2, N=5000))]
unlisted = Scenario("unlisted", make_inputs, launch, reference, _CASES)
listed = Scenario("listed", make_inputs, launch, reference, _CASES, kernels=[rownorm_tuned, copy_tuned])
