"""Zoo (agreement gate, GPU): a kernel whose result depends on whether ``a * b - c`` is contracted into one FMA.
The GPU build (Triton's default ``enable_fp_fusion=True``: ptxas fuses the multiply and the subtract) computes the
exact rounding error of ``a * b``; the interpreter rounds ``a * b`` first, as the source reads, and gets 0. Each
is right for its own arithmetic; they disagree by far more than the case tolerance, which the agreement gate
exists to catch (a compensated sum or an error-free product breaks or works depending on this). The twin
launches with ``enable_fp_fusion=False``. Not yet run on the GPU (written in session 31 without device time)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def residual_kernel(a_ptr,  # *fp32 (n,), read
                    b_ptr,  # *fp32 (n,), read
                    p_ptr,  # *fp32 (n,), read: fl(a * b), rounded on the host
                    out_ptr,  # *fp32 (n,), written: the rounding error of a * b, in units of 2**-24 * |p|
                    n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1.0)
    b = tl.load(b_ptr + offs, mask=mask, other=1.0)
    p = tl.load(p_ptr + offs, mask=mask, other=1.0)
    err = a * b - p  # BUG: agreement (one FMA on the GPU: the exact error; 0 in the interpreter)
    tl.store(out_ptr + offs, err / tl.abs(p) * 16777216.0, mask=mask)


def _launch(fusion):
    def launch(a, b, p):
        out = torch.empty_like(a)
        n = a.numel()
        residual_kernel[(triton.cdiv(n, 256),)](a, b, p, out, n, BLOCK=256, enable_fp_fusion=fusion)
        return out
    return launch


def make_inputs(case, dtype, device, generator):
    n = case.params["n"]
    a = (torch.rand(n, generator=generator) + 0.5).to(dtype)
    b = (torch.rand(n, generator=generator) + 0.5).to(dtype)
    return dict(a=a.to(device), b=b.to(device), p=(a * b).to(device))  # fp32 products, rounded once


def reference(a, b, p):
    return torch.zeros_like(a)  # what the source computes when a * b is rounded before the subtraction


_CASES = [Case("tiny", params=dict(n=1000), dtypes=("float32",))]
buggy = Scenario("buggy", make_inputs, _launch(True), reference, _CASES, kernels=[residual_kernel])
twin = Scenario("twin", make_inputs, _launch(False), reference, _CASES, kernels=[residual_kernel])
