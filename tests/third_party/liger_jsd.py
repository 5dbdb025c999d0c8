"""Liger-Kernel generalized Jensen-Shannon divergence forward, imported from the installed ``liger_kernel``.

Source: liger_kernel/ops/jsd.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
Inputs and targets are log-probabilities; the loss is summed and divided by the number of rows.
Run: tritondbg interpret tests/third_party/liger_jsd.py --case all
"""
import torch
from _common import ALL, no_grad

from tritondbg import Case, Scenario
from liger_kernel.ops.jsd import LigerJSDFunction, _jsd_kernel


def make_inputs(case, dtype, device, generator):
    M, V = case.params["M"], case.params["V"]
    x = torch.log_softmax(torch.randn(M, V, generator=generator), -1).to(device=device, dtype=dtype)
    t = torch.log_softmax(torch.randn(M, V, generator=generator), -1).to(device=device, dtype=dtype)
    return dict(x=x, t=t, beta=case.params["beta"])


@no_grad
def launch(x, t, beta):
    return LigerJSDFunction.apply(x, t, None, beta, -100)


def reference(x, t, beta):
    q, p = x.float().exp(), t.float().exp()        # q: the model's, p: the target's
    if beta == 0.0:
        loss = (p * (t.float() - x.float())).sum()
    elif beta == 1.0:
        loss = (q * (x.float() - t.float())).sum()
    else:
        m = beta * p + (1 - beta) * q
        loss = (beta * p * (p.log() - m.log()) + (1 - beta) * q * (q.log() - m.log())).sum()
    return loss / x.shape[0]


jsd = Scenario(name="liger_jsd", description="Liger-Kernel jsd forward", make_inputs=make_inputs, launch=launch,
               reference=reference, kernels=[_jsd_kernel],
               cases=[Case("tiny", params=dict(M=5, V=71, beta=0.5), dtypes=ALL),
                      Case("forward_kl", params=dict(M=3, V=33, beta=0.0), dtypes=ALL)])
