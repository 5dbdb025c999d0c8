"""flash-linear-attention's chunked retention forward (``fla.ops.retention.chunk_retention``).

Source: fla/ops/retention/chunk.py, fla/ops/simple_gla/chunk.py, fla/ops/common/chunk_h.py and chunk_o.py (pip
install fla-core); license: MIT (Songlin Yang, Yu Zhang, Zhiyuan Li and contributors). The chunked form of
retention: per head a fixed decay gamma_h = 1 - 2^(-5 - h), the state S_t = gamma_h S_{t-1} + k_t^T v_t carried
from chunk to chunk (chunk_fwd_kernel_h), the output o_t = scale * q_t S_t from the inter- and intra-chunk parts
(chunk_fwd_kernel_o). Its chunk loop uses the induction variable as a tensor (``i_t.to(tl.int64)``), which the plain
interpreter's Python ints refuse. T = 70 is not a multiple of the 64-token chunk; K and V are odd.
Run: tritondbg interpret tests/third_party/fla_retention.py --case all
"""
import torch
from _common import no_grad, randn

from tritondbg import Case, Scenario
from fla.ops.common.chunk_h import chunk_fwd_kernel_h
from fla.ops.common.chunk_o import chunk_fwd_kernel_o
from fla.ops.retention import chunk_retention


def make_inputs(case, dtype, device, generator):
    B, T, H, K, V = (case.params[k] for k in ("B", "T", "H", "K", "V"))
    return dict(q=randn(generator, B, T, H, K, dtype=dtype, device=device),
                k=randn(generator, B, T, H, K, dtype=dtype, device=device),
                v=randn(generator, B, T, H, V, dtype=dtype, device=device))


@no_grad
def launch(q, k, v):
    return chunk_retention(q, k, v, output_final_state=True)


def reference(q, k, v):
    B, T, H, K = q.shape
    V = v.shape[-1]
    scale = K ** -0.5
    gamma = 1 - 2.0 ** (-5.0 - torch.arange(H, dtype=torch.float32))
    S = torch.zeros(B, H, K, V)
    out = torch.empty(B, T, H, V)
    for t in range(T):
        S = S * gamma[None, :, None, None] + k[:, t].float()[..., :, None] * v[:, t].float()[..., None, :]
        out[:, t] = scale * torch.einsum("bhk,bhkv->bhv", q[:, t].float(), S)
    return out, S


retention = Scenario(name="fla_retention", description="fla chunk_retention forward (o and final state)",
                     make_inputs=make_inputs, launch=launch, reference=reference,
                     kernels=[chunk_fwd_kernel_h, chunk_fwd_kernel_o],
                     cases=[Case("tiny", params=dict(B=1, T=70, H=2, K=24, V=20), dtypes=("float16", "bfloat16")),
                            # fp32 through TF32 dots (fla's tl.dot at the default precision: 10 mantissa bits, on
                            # the GPU and under tritondbg): fp16's tolerance
                            Case("tiny_tf32", params=dict(B=1, T=70, H=2, K=24, V=20), dtypes=("float32",),
                                 atol=1e-2, rtol=1e-2)])
