"""Zoo (determinism gate): a kernel that claims bitwise determinism but seeds its tiny jitter (stochastic
rounding, say) from a per-call counter. Both runs pass allclose; two identical runs differ bit for bit."""
import itertools

import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario

_calls = itertools.count()


@triton.jit
def scale_kernel(x_ptr,  # *fp32 (n,), read
                 out_ptr,  # *fp32 (n,), written
                 n, seed, JITTER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask, other=0.0) * 2.0
    if JITTER:
        y += (tl.rand(seed, offs) - 0.5) * 1e-6  # BUG: determinism (seed changes every call)
    tl.store(out_ptr + offs, y, mask=mask)


def _launch(jitter):
    def launch(x):
        out = torch.empty_like(x)
        n = x.numel()
        scale_kernel[(triton.cdiv(n, 256),)](x, out, n, next(_calls) if jitter else 0, JITTER=jitter, BLOCK=256)
        return out
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return 2.0 * x.float()


_CASES = [Case("tiny", params=dict(n=1000), atol=1e-5)]
buggy = Scenario("buggy", make_inputs, _launch(True), reference, _CASES, kernels=[scale_kernel])
twin = Scenario("twin", make_inputs, _launch(False), reference, _CASES, kernels=[scale_kernel])
