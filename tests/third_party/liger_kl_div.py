"""Liger-Kernel KL divergence loss forward, imported from the installed ``liger_kernel`` package (not copied).

Source: liger_kernel/ops/kl_div.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
Run: tritondbg interpret tests/third_party/liger_kl_div.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from liger_kernel.ops.kl_div import LigerKLDivLossFunction, _kldiv_kernel_forward


def make_inputs(case, dtype, device, generator):
    M, V = case.params["M"], case.params["V"]
    y_pred = torch.log_softmax(torch.randn(M, V, generator=generator), -1).to(device=device, dtype=dtype)
    y_true = torch.softmax(torch.randn(M, V, generator=generator), -1).to(device=device, dtype=dtype)
    return dict(y_pred=y_pred, y_true=y_true, reduction=case.params["reduction"])


@no_grad
def launch(y_pred, y_true, reduction):
    return LigerKLDivLossFunction.apply(y_pred, y_true, reduction, False, 1e-10)


def reference(y_pred, y_true, reduction):
    return torch.nn.functional.kl_div(y_pred.float(), y_true.float(), reduction=reduction)


kl_div = Scenario(name="liger_kl_div", description="Liger-Kernel kl_div forward", make_inputs=make_inputs,
                  launch=launch, reference=reference, kernels=[_kldiv_kernel_forward],
                  cases=[Case("tiny", params=dict(M=5, V=71, reduction="batchmean"), dtypes=ALL),
                         Case("none", params=dict(M=3, V=33, reduction="none"), dtypes=ALL)])
