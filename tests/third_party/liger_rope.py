"""Liger-Kernel rotary position embedding forward, imported from the installed ``liger_kernel`` package.

Source: liger_kernel/ops/rope.py (pip install liger-kernel); license: BSD-2-Clause (Liger-Kernel authors).
q, k: (batch, heads, seq, head_dim) with 3 query heads and 1 kv head (grouped) on purpose (pads to 4 and 1).
Run: tritondbg interpret tests/third_party/liger_rope.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from liger_kernel.ops.rope import LigerRopeFunction, _triton_rope


def make_inputs(case, dtype, device, generator):
    B, H, KH, S, D = (case.params[k] for k in ("B", "H", "KH", "S", "D"))
    pos = torch.arange(S, dtype=torch.float32)[:, None]
    inv = 1.0 / (10000 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    ang = torch.cat([pos * inv, pos * inv], dim=-1)[None]            # (1, S, D)
    return dict(q=randn(generator, B, H, S, D, dtype=dtype, device=device),
                k=randn(generator, B, KH, S, D, dtype=dtype, device=device),
                cos=ang.cos().to(device=device, dtype=dtype), sin=ang.sin().to(device=device, dtype=dtype))


@no_grad
def launch(q, k, cos, sin):
    return LigerRopeFunction.apply(q, k, cos, sin)


def reference(q, k, cos, sin):
    def rot(x):
        half = x.shape[-1] // 2
        return torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    c, s = cos.float()[:, None], sin.float()[:, None]
    qf, kf = q.float(), k.float()
    return qf * c + rot(qf) * s, kf * c + rot(kf) * s


rope = Scenario(name="liger_rope", description="Liger-Kernel rope forward (q and k rotated in place)",
                make_inputs=make_inputs, launch=launch, reference=reference, kernels=[_triton_rope],
                cases=[Case("tiny", params=dict(B=2, H=3, KH=1, S=5, D=12), dtypes=ALL),
                       Case("heads", params=dict(B=1, H=5, KH=5, S=3, D=20), dtypes=ALL)])
