"""Zoo: a race between programs: each program stores its partial sum to out[0] (the last one wins)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def sum_buggy(x_ptr,    # *fp32 (n,), read
              out_ptr,  # *fp32 (1,), written by every program
              n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    partial = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.store(out_ptr, partial)  # BUG: race


@triton.jit
def sum_twin(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    partial = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    tl.atomic_add(out_ptr, partial)


def _launch(kernel):
    def launch(x):
        out = torch.zeros(1, dtype=torch.float32, device=x.device)
        kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
        return out
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float().sum().reshape(1)


_CASES = [Case("tiny", params=dict(n=500), atol=1e-3)]
buggy = Scenario("buggy", make_inputs, _launch(sum_buggy), reference, _CASES, kernels=[sum_buggy])
twin = Scenario("twin", make_inputs, _launch(sum_twin), reference, _CASES, kernels=[sum_twin])
