"""Liger-Kernel DyT (dynamic tanh: gamma * tanh(alpha * x) + beta) forward, imported from ``liger_kernel``.

Source: liger_kernel/ops/dyt.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
Its forward kernel is autotuned (BLOCK_N x num_warps x num_stages): `--all-configs` runs each config.
Run: tritondbg interpret tests/third_party/liger_dyt.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from liger_kernel.ops.dyt import LigerDyTFunction, _dyt_fwd_kernel


def make_inputs(case, dtype, device, generator):
    M, N = case.params["M"], case.params["N"]
    return dict(x=randn(generator, M, N, dtype=dtype, device=device),
                alpha=torch.tensor([0.7], dtype=dtype, device=device),
                gamma=randn(generator, N, dtype=dtype, device=device, scale=0.1, shift=1.0),
                beta=randn(generator, N, dtype=dtype, device=device, scale=0.1))


@no_grad
def launch(x, alpha, gamma, beta):
    return LigerDyTFunction.apply(x, alpha, gamma, beta)


def reference(x, alpha, gamma, beta):
    return gamma.float() * torch.tanh(alpha.float() * x.float()) + beta.float()


dyt = Scenario(name="liger_dyt", description="Liger-Kernel dyt forward (autotuned)", make_inputs=make_inputs,
               launch=launch, reference=reference, kernels=[_dyt_fwd_kernel],
               cases=[Case("tiny", params=dict(M=3, N=45), dtypes=ALL)])
