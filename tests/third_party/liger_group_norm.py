"""Liger-Kernel GroupNorm forward, imported from the installed ``liger_kernel`` package (not copied).

Source: liger_kernel/ops/group_norm.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
Run: tritondbg interpret tests/third_party/liger_group_norm.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from liger_kernel.ops.group_norm import LigerGroupNormFunction, _group_norm_forward_kernel


def make_inputs(case, dtype, device, generator):
    B, C, G, H = (case.params[k] for k in ("B", "C", "G", "H"))
    return dict(x=randn(generator, B, C, H, dtype=dtype, device=device),
                w=randn(generator, C, dtype=dtype, device=device, scale=0.1, shift=1.0),
                b=randn(generator, C, dtype=dtype, device=device, scale=0.1), groups=G, eps=1e-6)


@no_grad
def launch(x, w, b, groups, eps):
    return LigerGroupNormFunction.apply(x, w, b, x.shape[1], groups, eps)


def reference(x, w, b, groups, eps):
    return torch.nn.functional.group_norm(x.float(), groups, w.float(), b.float(), eps)


group_norm = Scenario(name="liger_group_norm", description="Liger-Kernel group_norm forward",
                      make_inputs=make_inputs, launch=launch, reference=reference,
                      kernels=[_group_norm_forward_kernel],
                      cases=[Case("tiny", params=dict(B=2, C=6, G=3, H=13), dtypes=ALL),
                             Case("one_group", params=dict(B=3, C=5, G=1, H=7), dtypes=ALL)])
