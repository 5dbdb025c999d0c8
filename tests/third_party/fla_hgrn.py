"""flash-linear-attention's chunked HGRN forward (``fla.ops.hgrn.chunk_hgrn``).

Source: fla/ops/hgrn/chunk.py (pip install fla-core); license: MIT (Songlin Yang, Yu Zhang and contributors). A
gated linear recurrence per channel, h_t = exp(g_t) * h_{t-1} + x_t, computed in 128-step chunks
(chunk_hgrn_fwd_kernel_h, then chunk_hgrn_fwd_kernel_o carries the chunks' states). Its time loop masks a block of
channels with a scalar comparison (``mask & ((i_t * BT + i) < T)``), whose int32-tagged result Triton 3.9's plain
interpreter refuses as a load mask. T = 19 and D = 24 are not powers of two.
Run: tritondbg interpret tests/third_party/fla_hgrn.py --case all
"""
import torch
from _common import no_grad, randn

from tritondbg import Case, Scenario
from fla.ops.hgrn import chunk_hgrn
from fla.ops.hgrn.chunk import chunk_hgrn_fwd_kernel_h, chunk_hgrn_fwd_kernel_o


def make_inputs(case, dtype, device, generator):
    B, T, D = (case.params[k] for k in ("B", "T", "D"))
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, D, generator=generator) + 1.0)
    return dict(x=randn(generator, B, T, D, dtype=dtype, device=device), g=g.to(device=device, dtype=dtype))


@no_grad
def launch(x, g):
    return chunk_hgrn(x, g, output_final_state=True)


def reference(x, g):
    B, T, D = x.shape
    h = torch.zeros(B, D)
    out = torch.empty(B, T, D)
    for t in range(T):
        h = g[:, t].float().exp() * h + x[:, t].float()
        out[:, t] = h
    return out, h


hgrn = Scenario(name="fla_hgrn", description="fla chunk_hgrn forward (o and final state)",
                make_inputs=make_inputs, launch=launch, reference=reference,
                kernels=[chunk_hgrn_fwd_kernel_h, chunk_hgrn_fwd_kernel_o],
                cases=[Case("tiny", params=dict(B=2, T=19, D=24), dtypes=("float32", "bfloat16"))])
