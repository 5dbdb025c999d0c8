"""Zoo (determinism gate): a sum whose programs each add their block's partial into one float with tl.atomic_add.
On a GPU the programs run in any order, so the float sum rounds differently from run to run; the interpreter ran
them in grid order every time and the gate passed. Its twin writes one partial per program and sums them on the
host in a fixed order."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def partial_sum_kernel(x_ptr,  # *fp32 (n,), read
                       out_ptr,  # *fp32 (1,) (atomic) or (programs,) (twin), written
                       n, ATOMIC: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0)
    if ATOMIC:
        tl.atomic_add(out_ptr, part)  # BUG: determinism (float atomics add in the order programs finish)
    else:
        tl.store(out_ptr + pid, part)


def _launch(atomic):
    def launch(x):
        n, block = x.numel(), 64
        programs = triton.cdiv(n, block)
        out = torch.zeros(1 if atomic else programs, dtype=torch.float32, device=x.device)
        partial_sum_kernel[(programs,)](x, out, n, ATOMIC=atomic, BLOCK=block)
        return out if atomic else out.sum().reshape(1)
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=(torch.randn(case.params["n"], generator=generator) * 1e3).to(device=device, dtype=dtype))


def reference(x):
    return x.double().sum().float().reshape(1)


_CASES = [Case("tiny", params=dict(n=20000), atol=1.0, rtol=1e-3)]
buggy = Scenario("buggy", make_inputs, _launch(True), reference, _CASES, kernels=[partial_sum_kernel])
twin = Scenario("twin", make_inputs, _launch(False), reference, _CASES, kernels=[partial_sum_kernel])
