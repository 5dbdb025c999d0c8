"""Liger-Kernel RMSNorm forward, imported from the installed ``liger_kernel`` package (not copied).

Source: liger_kernel/ops/rms_norm.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
Run: tritondbg interpret tests/third_party/liger_rms_norm.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from liger_kernel.ops.rms_norm import LigerRMSNormFunction, _rms_norm_forward_kernel


def make_inputs(case, dtype, device, generator):
    M, N = case.params["M"], case.params["N"]
    return dict(x=randn(generator, M, N, dtype=dtype, device=device),
                w=randn(generator, N, dtype=dtype, device=device, scale=0.1, shift=1.0), eps=1e-6)


@no_grad
def launch(x, w, eps):
    return LigerRMSNormFunction.apply(x, w, eps, 0.0, "llama", False)


def reference(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype).float() * w.float()


rms_norm = Scenario(name="liger_rms_norm", description="Liger-Kernel rms_norm forward (llama casting)",
                    make_inputs=make_inputs, launch=launch, reference=reference, kernels=[_rms_norm_forward_kernel],
                    cases=[Case("tiny", params=dict(M=5, N=97), dtypes=ALL),
                           Case("rows", params=dict(M=11, N=33), dtypes=ALL)])
