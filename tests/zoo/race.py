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


@triton.jit
def copy_two_sites(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """y = x, each program its block; program 1 also zeroes program 0's block from another store."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0), mask=offs < n)
    if pid == 1:
        tl.store(y_ptr + offs - BLOCK, tl.zeros((BLOCK,), tl.float32))  # BUG: race (with the store above)


def _copy(x):
    y = torch.empty_like(x)
    copy_two_sites[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
    return y


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
# the race between two different store lines: each pid reported with the line it stored from
two_sites = Scenario("two_sites", make_inputs, _copy, lambda x: x.float(), _CASES, kernels=[copy_two_sites])
