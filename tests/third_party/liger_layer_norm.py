"""Liger-Kernel LayerNorm forward, imported from the installed ``liger_kernel`` package (not copied).

Source: liger_kernel/ops/layer_norm.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
Run: tritondbg interpret tests/third_party/liger_layer_norm.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from liger_kernel.ops.layer_norm import LigerLayerNormFunction, _layer_norm_forward_kernel


def make_inputs(case, dtype, device, generator):
    M, N = case.params["M"], case.params["N"]
    return dict(x=randn(generator, M, N, dtype=dtype, device=device),
                w=randn(generator, N, dtype=dtype, device=device, scale=0.1, shift=1.0),
                b=randn(generator, N, dtype=dtype, device=device, scale=0.1), eps=1e-5)


@no_grad
def launch(x, w, b, eps):
    return LigerLayerNormFunction.apply(x, w, b, eps)


def reference(x, w, b, eps):
    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), eps)


layer_norm = Scenario(name="liger_layer_norm", description="Liger-Kernel layer_norm forward",
                      make_inputs=make_inputs, launch=launch, reference=reference,
                      kernels=[_layer_norm_forward_kernel],
                      cases=[Case("tiny", params=dict(M=6, N=77), dtypes=ALL),
                             Case("rows", params=dict(M=13, N=130), dtypes=ALL)])
