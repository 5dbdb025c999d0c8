"""flash-linear-attention's chunk-local cumulative sum (``fla.ops.utils.cumsum.chunk_local_cumsum_scalar``).

Source: fla/ops/utils/cumsum.py (pip install fla-core); license: MIT (Songlin Yang, Yu Zhang, Zhiyuan Li and
contributors). The gate cumsum every chunked linear-attention kernel of fla runs first: within each chunk of
``chunk_size`` time steps, per batch and head. T is odd so the last chunk is partial. Autotuned (num_warps).
Run: tritondbg interpret tests/third_party/fla_cumsum.py --case all
"""
import torch
from _common import ALL, randn

from tritondbg import Case, Scenario
from fla.ops.utils.cumsum import chunk_local_cumsum_scalar, chunk_local_cumsum_scalar_kernel


def make_inputs(case, dtype, device, generator):
    B, T, H = case.params["B"], case.params["T"], case.params["H"]
    return dict(g=randn(generator, B, T, H, dtype=dtype, device=device), chunk=case.params["chunk"],
                reverse=case.params.get("reverse", False))


def launch(g, chunk, reverse):
    return chunk_local_cumsum_scalar(g, chunk, reverse=reverse)


def reference(g, chunk, reverse):
    B, T, H = g.shape
    x = g.float()
    out = torch.empty_like(x)
    for start in range(0, T, chunk):
        part = x[:, start:start + chunk]
        out[:, start:start + chunk] = part.flip(1).cumsum(1).flip(1) if reverse else part.cumsum(1)
    return out


cumsum = Scenario(name="fla_cumsum", description="fla chunk_local_cumsum_scalar (fp32 output)",
                  make_inputs=make_inputs, launch=launch, reference=reference,
                  kernels=[chunk_local_cumsum_scalar_kernel],
                  cases=[Case("tiny", params=dict(B=2, T=21, H=3, chunk=8), dtypes=ALL),
                         Case("reverse", params=dict(B=1, T=13, H=2, chunk=4, reverse=True), dtypes=ALL)])
