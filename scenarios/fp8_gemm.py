from tritondbg import Case, Scenario
from tritondbg.kernels import fp8_gemm as K

import torch

# Tiny cases pin the 16x32x64 configs (GROUP_M=4) under the interpreter.
# tiny:        M=37 -> 3 tile-rows (partial group), N=53 -> 2 tile-cols (21-col tail), K=200 -> 4 K-steps with
#              an 8-deep tail; SPLIT_K=1, so the main kernel applies the scales and writes c itself.
# tiny_splitk: SPLIT_K=4, K=300 -> K_SPLIT = cdiv(300, 256) * 64 = 128: splits [0,128) and [128,256) take 2
#              full steps, [256,300) 1 step with a 44-deep tail, [384,...) is empty (writes zeros);
#              M=3 (13 of 16 rows masked), N=40 (8-col tail); the reduction kernel applies the scales.
_FP8 = ("float8_e4m3fn",)


def make_inputs(case, dtype, device, generator):
    p = case.params
    M, N, Kd = p["M"], p["N"], p["K"]
    a = torch.randn(M, Kd, generator=generator, device="cpu").to(device=device, dtype=dtype)
    if p.get("b_layout", "kn") == "nk":
        # b as a (K, N) view of an (N, K) row-major weight: K-major, the fast layout for Hopper fp8 wgmma.
        b = torch.randn(N, Kd, generator=generator, device="cpu").to(device=device, dtype=dtype).t()
    else:
        b = torch.randn(Kd, N, generator=generator, device="cpu").to(device=device, dtype=dtype)
    if p.get("rowcol_scales", False):
        # per-row of a / per-column of b, in [0.25, 1.25)
        scale_a = (0.25 + torch.rand(M, 1, generator=generator, device="cpu")).to(device=device)
        scale_b = (0.25 + torch.rand(N, generator=generator, device="cpu")).to(device=device)
    else:
        scale_a = torch.tensor(0.5, dtype=torch.float32).to(device=device)    # shape ()
        scale_b = torch.tensor([0.25], dtype=torch.float32).to(device=device)  # shape (1,)
    return dict(a=a, b=b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)


def baseline(a, b, scale_a, scale_b, out_dtype=torch.bfloat16, **_):
    """torch._scaled_mm"""
    # _scaled_mm wants b column-major (K-major): the row-major (K, N) cases pay a transposing copy here.
    b_cm = b if b.stride(0) == 1 else b.t().contiguous().t()
    sa = scale_a.float().reshape(-1)
    sb = scale_b.float().reshape(-1)
    sa = sa.reshape(()) if sa.numel() == 1 else sa.reshape(-1, 1)
    sb = sb.reshape(()) if sb.numel() == 1 else sb.reshape(1, -1)
    return torch._scaled_mm(a, b_cm, scale_a=sa, scale_b=sb, out_dtype=out_dtype)


SCENARIO = Scenario(
    name="fp8_gemm",
    description="c = (a @ b) * scale_a * scale_b, fp8 e4m3 in, bf16 out, split-K with a deterministic reduction",
    make_inputs=make_inputs,
    launch=K.fp8_gemm,
    reference=K.reference,
    baseline=baseline,
    kernels=[K.fp8_gemm_kernel, K.splitk_reduce_kernel],
    # The 256x128x128 config spills 4 registers (16 B stack, 3 LDL + 3 STL in the sm_90 SASS at 255 registers,
    # `tritondbg ir fp8_gemm --case square_8192 --config BLOCK_M=256,BLOCK_N=128,BLOCK_K=128,SPLIT_K=1 --stats`)
    # and is still the fastest at 8192^3 on the H200 (982 TFLOP/s, tritondbg profile, 2026-11-29): tolerate it.
    limits={"max_spills": 4},
    flops=lambda case, dtype: K.flops(**case.params),
    bytes=lambda case, dtype: K.bytes_moved(**case.params, dtype=dtype),
    cases=[
        Case("tiny", params=dict(M=37, N=53, K=200), dtypes=_FP8,
             config=dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=64, SPLIT_K=1),
             description="odd M/N/K, per-tensor scales, direct (SPLIT_K=1) epilogue"),
        Case("tiny_splitk", params=dict(M=3, N=40, K=300, b_layout="nk"), dtypes=_FP8,
             config=dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=64, SPLIT_K=4),
             description="split-K: K tail inside the last split, an empty split, workspace + reduction"),
        Case("tiny_rowcol", params=dict(M=37, N=53, K=200, rowcol_scales=True), dtypes=_FP8,
             config=dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=64, SPLIT_K=1),
             description="per-row scale_a (M, 1) and per-column scale_b (N,)"),
        Case("tiny_splitk_rowcol", params=dict(M=3, N=40, K=300, rowcol_scales=True), dtypes=_FP8,
             config=dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=64, SPLIT_K=4),
             description="per-row/column scales applied by the split-K reduction kernel"),
        Case("square_8192", params=dict(M=8192, N=8192, K=8192, b_layout="nk"), dtypes=_FP8, interpret=False,
             description="compute-bound, b K-major (nn.Linear weight layout)"),
        Case("square_8192_kn", params=dict(M=8192, N=8192, K=8192), dtypes=_FP8, interpret=False,
             description="same with a row-major (K, N) b: shows the cost of the non-K-major layout"),
        Case("decode_m1", params=dict(M=1, N=8192, K=8192, b_layout="nk"), dtypes=_FP8, interpret=False,
             description="single-token decode: memory-bound on b (64 MiB), split-K"),
        Case("decode_m16", params=dict(M=16, N=8192, K=8192, b_layout="nk"), dtypes=_FP8, interpret=False,
             description="16-token decode batch"),
    ],
)
