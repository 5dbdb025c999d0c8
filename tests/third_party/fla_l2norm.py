"""flash-linear-attention's L2 normalisation forward (``fla.modules.norm.l2norm.l2norm_fwd``), from ``fla-core``.

Source: fla/modules/norm/l2norm.py (pip install fla-core); license: MIT (Songlin Yang, Yu Zhang, Zhiyuan Li and
contributors). The q/k normalisation of the delta-rule models. D <= 512 takes the blocked kernel (autotuned over
BT and num_warps), D > 512 the row kernel.
Run: tritondbg interpret tests/third_party/fla_l2norm.py --case all
"""
import torch
from _common import ALL, randn

from tritondbg import Case, Scenario
from fla.modules.norm.l2norm import l2norm_fwd, l2norm_fwd_kernel, l2norm_fwd_kernel_row


def make_inputs(case, dtype, device, generator):
    return dict(x=randn(generator, *case.params["shape"], dtype=dtype, device=device))


def launch(x):
    return l2norm_fwd(x, 1e-6)[0]


def reference(x):
    xf = x.float()
    return xf * torch.rsqrt((xf * xf).sum(-1, keepdim=True) + 1e-6)


l2norm = Scenario(name="fla_l2norm", description="fla l2norm_fwd", make_inputs=make_inputs, launch=launch,
                  reference=reference, kernels=[l2norm_fwd_kernel, l2norm_fwd_kernel_row],
                  cases=[Case("tiny", params=dict(shape=(3, 7, 45)), dtypes=ALL),
                         Case("row_kernel", params=dict(shape=(3, 600)), dtypes=ALL)])
