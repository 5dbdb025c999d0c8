"""flash-linear-attention's fused recurrent Simple GLA forward (``fla.ops.simple_gla.fused_recurrent_simple_gla``).

Source: fla/ops/simple_gla/fused_recurrent.py and fla/ops/common/fused_recurrent.py (pip install fla-core);
license: MIT (Songlin Yang, Yu Zhang, Zhiyuan Li and contributors). A real linear-attention kernel: per head a
K x V state S_t = exp(g_t) S_{t-1} + k_t^T v_t, output o_t = scale * q_t S_t, with a head-wise log-decay gate g.
K and V are odd (masked state tiles); the final state is checked too.
Run: tritondbg interpret tests/third_party/fla_simple_gla.py --case all
"""
import torch
from _common import ALL, no_grad, randn

from tritondbg import Case, Scenario
from fla.ops.common.fused_recurrent import fused_recurrent_fwd_kernel
from fla.ops.simple_gla import fused_recurrent_simple_gla


def make_inputs(case, dtype, device, generator):
    B, T, H, K, V = (case.params[k] for k in ("B", "T", "H", "K", "V"))
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, generator=generator) + 2.0)
    return dict(q=randn(generator, B, T, H, K, dtype=dtype, device=device),
                k=randn(generator, B, T, H, K, dtype=dtype, device=device),
                v=randn(generator, B, T, H, V, dtype=dtype, device=device),
                g=g.to(device=device, dtype=torch.float32))


@no_grad
def launch(q, k, v, g):
    return fused_recurrent_simple_gla(q, k, v, g=g, output_final_state=True)


def reference(q, k, v, g):
    B, T, H, K = q.shape
    V = v.shape[-1]
    scale = K ** -0.5
    S = torch.zeros(B, H, K, V)
    out = torch.empty(B, T, H, V)
    for t in range(T):
        S = S * g[:, t].float().exp()[..., None, None] + k[:, t].float()[..., :, None] * v[:, t].float()[..., None, :]
        out[:, t] = scale * torch.einsum("bhk,bhkv->bhv", q[:, t].float(), S)
    return out, S


simple_gla = Scenario(name="fla_simple_gla", description="fla fused_recurrent_simple_gla forward (o and final state)",
                      make_inputs=make_inputs, launch=launch, reference=reference,
                      kernels=[fused_recurrent_fwd_kernel],
                      cases=[Case("tiny", params=dict(B=2, T=7, H=2, K=12, V=10), dtypes=ALL)])
