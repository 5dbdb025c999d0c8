"""Liger-Kernel GEGLU forward (gelu_tanh(a) * b), imported from the installed ``liger_kernel`` package.

Source: liger_kernel/ops/geglu.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
Run: tritondbg interpret tests/third_party/liger_geglu.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from liger_kernel.ops.geglu import LigerGELUMulFunction, _geglu_tanh_forward_kernel


def make_inputs(case, dtype, device, generator):
    M, N = case.params["M"], case.params["N"]
    return dict(a=randn(generator, M, N, dtype=dtype, device=device),
                b=randn(generator, M, N, dtype=dtype, device=device))


@no_grad
def launch(a, b):
    return LigerGELUMulFunction.apply(a, b)


def reference(a, b):
    return torch.nn.functional.gelu(a.float(), approximate="tanh") * b.float()


geglu = Scenario(name="liger_geglu", description="Liger-Kernel geglu forward (tanh approximation)",
                 make_inputs=make_inputs, launch=launch, reference=reference, kernels=[_geglu_tanh_forward_kernel],
                 cases=[Case("tiny", params=dict(M=7, N=45), dtypes=ALL),
                        Case("wide", params=dict(M=3, N=300), dtypes=ALL)])
