"""flash-linear-attention's chunked RWKV-7 forward (``fla.ops.rwkv7.chunk_rwkv7``, the DPLR delta rule).

Source: fla/ops/rwkv7/chunk.py and fla/ops/generalized_delta_rule/dplr/ (pip install fla-core); license: MIT (Songlin
Yang, Yu Zhang, Zhiyuan Li and contributors). Per head a K x V state with a diagonal-plus-low-rank transition:
S_t = S_{t-1} * exp(w_t)[:, None] + k_t^T v_t + b_t^T (a_t S_{t-1}), o_t = scale * r_t S_t, in chunks (the intra-chunk
kernel, a WY representation, the state and output kernels). The intra-chunk kernel calls ``gather``, which
fla.ops.utils.op binds to ``tl.gather`` itself: a name the plain interpreter leaves unpatched ("Did you forget to add
triton.jit ?"). T = 20 is not a multiple of the 16-token chunk.
Run: tritondbg interpret tests/third_party/fla_rwkv7.py --case all
"""
import torch
from _common import no_grad, randn

from tritondbg import Case, Scenario
from fla.ops.generalized_delta_rule.dplr.chunk_A_fwd import chunk_dplr_fwd_A_kernel_intra_sub_intra
from fla.ops.rwkv7 import chunk_rwkv7


def make_inputs(case, dtype, device, generator):
    B, T, H, K = (case.params[k] for k in ("B", "T", "H", "K"))
    a = -torch.nn.functional.normalize(torch.randn(B, T, H, K, generator=generator), dim=-1)
    b = -a * torch.rand(B, T, H, 1, generator=generator)
    w = -torch.rand(B, T, H, K, generator=generator)  # log decay in (-1, 0]
    return dict(r=randn(generator, B, T, H, K, dtype=dtype, device=device), w=w.to(device=device, dtype=dtype),
                k=randn(generator, B, T, H, K, dtype=dtype, device=device),
                v=randn(generator, B, T, H, K, dtype=dtype, device=device),
                a=a.to(device=device, dtype=dtype), b=b.to(device=device, dtype=dtype))


@no_grad
def launch(r, w, k, v, a, b):
    return chunk_rwkv7(r, w=w, k=k, v=v, a=a, b=b, scale=r.shape[-1] ** -0.5, output_final_state=True)


def reference(r, w, k, v, a, b):
    B, T, H, K = r.shape
    V = v.shape[-1]
    r, w, k, v, a, b = (t.float() for t in (r, w, k, v, a, b))
    S = torch.zeros(B, H, K, V)
    out = torch.empty(B, T, H, V)
    for t in range(T):
        aS = torch.einsum("bhk,bhkv->bhv", a[:, t], S)
        S = S * w[:, t].exp()[..., None] + k[:, t][..., None] * v[:, t][..., None, :] + b[:, t][..., None] * aS[..., None, :]
        out[:, t] = K ** -0.5 * torch.einsum("bhk,bhkv->bhv", r[:, t], S)
    return out, S


rwkv7 = Scenario(name="fla_rwkv7", description="fla chunk_rwkv7 forward (o and final state)",
                 make_inputs=make_inputs, launch=launch, reference=reference,
                 kernels=[chunk_dplr_fwd_A_kernel_intra_sub_intra],
                 cases=[Case("tiny", params=dict(B=1, T=20, H=2, K=16), dtypes=("bfloat16",)),
                        # fp32 through TF32 dots (tl.dot's default precision, on the GPU and under tritondbg)
                        Case("tiny_tf32", params=dict(B=1, T=20, H=2, K=16), dtypes=("float32",), atol=1e-2,
                             rtol=1e-2)])
