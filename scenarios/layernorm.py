"""Scenario: row LayerNorm forward (kernels/layernorm.py), single-block and looped (long-row) paths."""
import torch

from tritondbg import Case, Scenario
from tritondbg.kernels import layernorm as K


def make_inputs(case, dtype, device, generator):
    p = case.params
    M, N = p["M"], p["N"]
    # offset: a row mean far from 0 checks that the variance is centred (no E[x^2] - E[x]^2 cancellation)
    x = torch.randn(M, N, generator=generator, device="cpu") * 2.0 + p.get("offset", 0.0)
    weight = 1.0 + 0.1 * torch.randn(N, generator=generator, device="cpu")
    bias = 0.1 * torch.randn(N, generator=generator, device="cpu")
    inputs = dict(
        x=x.to(device=device, dtype=dtype),
        weight=weight.to(device=device, dtype=dtype),
        bias=bias.to(device=device, dtype=dtype) if p.get("bias", True) else None,
        eps=1e-5,
    )
    if "row_config" in p:  # forces a config of the rule's (kernels/_rows.py)
        inputs["config"] = p["row_config"]
    if "max_block_n" in p:  # forces the looped kernel on a short row
        inputs["max_block_n"] = p["max_block_n"]
    return inputs


def baseline(x, weight, bias, eps=1e-5, **_):
    """torch F.layer_norm"""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


_ALL = ("float32", "float16", "bfloat16")
_HALF = ("float16", "bfloat16")

SCENARIO = Scenario(
    name="layernorm",
    description="row LayerNorm forward, fp32 statistics; one program per row, looped (Welford) for long rows",
    make_inputs=make_inputs,
    launch=K.layernorm,
    reference=K.reference,
    baseline=baseline,
    kernels=[K.layernorm_fwd_kernel, K.layernorm_fwd_looped_kernel, K.layernorm_fwd_split_kernel],
    flops=lambda case, dtype: K.flops(**case.params),
    bytes=lambda case, dtype: K.bytes_moved(**case.params, dtype=dtype),
    cases=[
        # 777 columns in a 1024 block: 247 padded lanes must stay out of mean and variance.
        Case("tiny", params=dict(M=7, N=777, offset=3.0), dtypes=_ALL,
             description="single-block path, N not a power of 2, row mean 3"),
        # 4 rows per program (the rule's tile for short rows of a large input): 7 rows = 1 full tile + 3 rows
        Case("tiny_rows", params=dict(M=7, N=777, row_config=("single", 1024, 4, 4), offset=3.0), dtypes=_ALL,
             description="several rows per program, the last tile partial"),
        Case("tiny_no_bias", params=dict(M=3, N=100, bias=False), dtypes=_ALL, description="bias=None"),
        # max_block_n=128: 777 = 6 * 128 + 9, six full chunks and a 9-column tail; offset 50 checks Welford.
        Case("tiny_looped", params=dict(M=5, N=777, max_block_n=128, offset=50.0), dtypes=_ALL,
             description="looped path (forced by max_block_n), tail chunk, large row mean"),
        # 300 = 256 + 44 of a 64-column tail: the split kernel (the rule uses it for 4097..6144 columns)
        Case("tiny_split", params=dict(M=3, N=300, row_config=("split", 256, 1, 4), offset=3.0), dtypes=_ALL,
             description="row as two power-of-two blocks (head unmasked, tail masked)"),
        Case("h200_8192x8192", params=dict(M=8192, N=8192), dtypes=_HALF, interpret=False),
        Case("h200_16384x4096", params=dict(M=16384, N=4096), dtypes=_HALF, interpret=False),
        Case("h200_4096x1024", params=dict(M=4096, N=1024), dtypes=_HALF, interpret=False,
             # launch-bound: 8 MiB moves in a few us of GPU time, while a Triton launch costs 24-50 us of Python
             # on the H200 VMs against ~15 us for torch's C++ op (do_bench: 0.27-0.64x on 2026-11-29, varying
             # with the VM): the perf gate compares GPU times (CUDA graph)
             perf_timing="graph"),
        # Row lengths that are not powers of two (issue 18; every length: tests/bench/sweep_h200.py --only
        # layernorm): 1000 (16-byte vectors only through the VEC hint, 4 rows per program), 5120 (single pass,
        # 37% padded lanes), 11008 (looped).
        Case("h200_32768x1000", params=dict(M=32768, N=1000), dtypes=("bfloat16",), interpret=False),
        Case("h200_6553x5120", params=dict(M=6553, N=5120), dtypes=("bfloat16",), interpret=False),
        Case("h200_3048x11008", params=dict(M=3048, N=11008), dtypes=("bfloat16",), interpret=False),
        # 65536 columns > 16384: the looped kernel at full size (4 chunks per row, pass 2 from L2).
        Case("h200_long_rows", params=dict(M=1024, N=65536), dtypes=("bfloat16",), interpret=False,
             description="looped path at H200 scale"),
    ],
)
