"""Liger-Kernel softmax forward, imported from the installed ``liger_kernel`` package (not copied).

Source: liger_kernel/ops/softmax.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
Run: tritondbg interpret tests/third_party/liger_softmax.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from liger_kernel.ops.softmax import (LigerSoftmaxFunction, _softmax_multi_block_forward_kernel,
                                      _softmax_single_block_forward_kernel)


def make_inputs(case, dtype, device, generator):
    return dict(x=randn(generator, case.params["M"], case.params["N"], dtype=dtype, device=device, scale=3.0))


@no_grad
def launch(x):
    return LigerSoftmaxFunction.apply(x)


def reference(x):
    return torch.softmax(x.float(), dim=-1)


softmax = Scenario(name="liger_softmax", description="Liger-Kernel softmax forward", make_inputs=make_inputs,
                   launch=launch, reference=reference,
                   kernels=[_softmax_single_block_forward_kernel, _softmax_multi_block_forward_kernel],
                   cases=[Case("tiny", params=dict(M=5, N=93), dtypes=ALL),
                          Case("rows", params=dict(M=17, N=10), dtypes=ALL)])
