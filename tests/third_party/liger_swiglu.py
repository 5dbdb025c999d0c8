"""Liger-Kernel SwiGLU forward (silu(a) * b), imported from the installed ``liger_kernel`` package (not copied).

Source: liger_kernel/ops/swiglu.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
Run: tritondbg interpret tests/third_party/liger_swiglu.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from liger_kernel.ops.swiglu import LigerSiLUMulFunction, _swiglu_forward_kernel


def make_inputs(case, dtype, device, generator):
    M, N = case.params["M"], case.params["N"]
    return dict(a=randn(generator, M, N, dtype=dtype, device=device),
                b=randn(generator, M, N, dtype=dtype, device=device))


@no_grad
def launch(a, b):
    return LigerSiLUMulFunction.apply(a, b)


def reference(a, b):
    return torch.nn.functional.silu(a.float()) * b.float()


swiglu = Scenario(name="liger_swiglu", description="Liger-Kernel swiglu forward", make_inputs=make_inputs,
                  launch=launch, reference=reference, kernels=[_swiglu_forward_kernel],
                  cases=[Case("tiny", params=dict(M=7, N=45), dtypes=ALL),
                         Case("wide", params=dict(M=3, N=300), dtypes=ALL)])
