from tritondbg import Case, Scenario
from tritondbg.kernels import fp8_gemm as K

import torch

# Tiny cases pin one listed config per kernel under the interpreter (the case configs name the kernel they are
# for: BLOCK_*/GROUP_M belong to fp8_gemm_kernel, DEC_BLOCK_*/SPLIT_K/USE_DOT to fp8_gemm_decode_kernel).
# tiny, tiny_rowcol (M > 64: fp8_gemm_kernel, 16x32x64 tiles, GROUP_M=4): M=97 -> 7 tile-rows (a full group
#   of 4 and a partial one of 3), N=53 -> 2 tile-cols (21-col tail), K=200 -> 4 K-steps, the last 8 deep.
# tiny_tma, tiny_tma_kn_rowcol (M > 64 with TMA-describable operands: fp8_gemm_tma_kernel, same pinned tiles):
#   M=97, N=48, K=208 (16-byte rows) -> 7 x 2 = 14 tiles walked by the interpreter's 4 persistent programs,
#   4 K-steps, the last 16 deep (TMA zero-fills the K tail); b K-major (B_TRANS) / row-major.
# tiny_splitk, tiny_splitk_rowcol (decode kernel, 16 tokens x 32 columns x 64 of K, SPLIT_K=4): K=300 ->
#   k_per_split = cdiv(300, 256) * 64 = 128: splits [0,128) and [128,256) take 2 full steps, [256,300) only a
#   44-deep tail step, [384,...) is empty (a zero partial); M=3 (13 of 16 token columns masked), N=40 (one
#   full 32-column tile + an 8-column tail); the last-arriving split of each tile reduces and scales.
_FP8 = ("float8_e4m3fn",)


def _pin(tuner, **cfg):
    """A case config naming one listed config of ``tuner`` exactly (checked at import)."""
    if not any(all(c.kwargs.get(k) == v for k, v in cfg.items()) for c in tuner.configs):
        raise ValueError(f"fp8_gemm scenario: no listed config matches {cfg}")
    return cfg


_LARGE = _pin(K.fp8_gemm_kernel, BLOCK_M=16, BLOCK_N=32, BLOCK_K=64, GROUP_M=4)
_pin(K.fp8_gemm_tma_kernel, **_LARGE)  # the same keys pin the TMA kernel's twin (tiny_tma*)
_DEC_DOT = _pin(K.fp8_gemm_decode_kernel, DEC_BLOCK_M=16, DEC_BLOCK_N=32, DEC_BLOCK_K=64, SPLIT_K=4, USE_DOT=True)
_DEC_DOT64 = _pin(K.fp8_gemm_decode_kernel, DEC_BLOCK_M=64, DEC_BLOCK_N=32, DEC_BLOCK_K=64, SPLIT_K=4,
                  USE_DOT=True)
_DEC_FMA = _pin(K.fp8_gemm_decode_kernel, DEC_BLOCK_M=1, DEC_BLOCK_N=32, DEC_BLOCK_K=64, SPLIT_K=4,
                USE_DOT=False)


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
    description="c = (a @ b) * scale_a * scale_b, fp8 e4m3 in, bf16 out; decode (M <= 64): one-launch split-K "
                "reduced in a fixed order by the last-arriving split (deterministic)",
    make_inputs=make_inputs,
    launch=K.fp8_gemm,
    reference=K.reference,
    baseline=baseline,
    kernels=[K.fp8_gemm_kernel, K.fp8_gemm_tma_kernel, K.fp8_gemm_decode_kernel],
    # The 256x128x128 config spills 4 registers (16 B stack at 255 registers: 4 LDL + 4 STL in the sm_90 SASS
    # with Triton 3.9, 2 words with 3.6; `tritondbg ir fp8_gemm --case square_8192
    # --config BLOCK_M=256,BLOCK_N=128,BLOCK_K=128 --stats`) and was the fastest at 8192^3 on the H200
    # (982 TFLOP/s, tritondbg profile, 2026-11-29, before its unused split-K branch was removed): tolerate it.
    # The decode kernel spills nothing in any config (3.6 and 3.9).
    limits={"max_spills": 4},
    flops=lambda case, dtype: K.flops(**case.params),
    bytes=lambda case, dtype: K.bytes_moved(**case.params, dtype=dtype),
    cases=[
        Case("tiny", params=dict(M=97, N=53, K=200), dtypes=_FP8, config=_LARGE,
             description="large-M kernel (M > 64): odd M/N/K, per-tensor scales, partial GROUP_M group"),
        Case("tiny_tma", params=dict(M=97, N=48, K=208, b_layout="nk"), dtypes=_FP8, config=_LARGE,
             description="large-M TMA kernel (persistent, 4 programs under the interpreter), b K-major, "
                         "K tail zero-filled by TMA"),
        Case("tiny_tma_kn_rowcol", params=dict(M=97, N=48, K=208, rowcol_scales=True), dtypes=_FP8,
             config=_LARGE, description="large-M TMA kernel with a row-major b (interpreter; on a GPU the "
                         "pointer kernel, _fp8_tma.ROW_MAJOR_B), per-row/column scales"),
        Case("tiny_splitk", params=dict(M=3, N=40, K=300, b_layout="nk"), dtypes=_FP8, config=_DEC_DOT,
             description="decode split-K (mma): K tail inside the last split, an empty split, last-arrival "
                         "reduction"),
        Case("tiny_rowcol", params=dict(M=97, N=53, K=200, rowcol_scales=True), dtypes=_FP8, config=_LARGE,
             description="large-M kernel, per-row scale_a (M, 1) and per-column scale_b (N,)"),
        Case("tiny_splitk_rowcol", params=dict(M=3, N=40, K=300, rowcol_scales=True), dtypes=_FP8,
             config=_DEC_DOT, description="decode, per-row/column scales applied by the last-arriving split"),
        # per-tensor scales: the torch baseline (_scaled_mm) rejects M=1 row/column scales (a (1, 1) scale_a
        # reads as per-tensor next to a per-column scale_b); all-configs runs this config on the rowcol case.
        Case("tiny_m1_gemv", params=dict(M=1, N=40, K=300, b_layout="nk"), dtypes=_FP8, config=_DEC_FMA,
             description="decode GEMV (CUDA-core) path, M=1, same K split as tiny_splitk"),
        Case("tiny_m37", params=dict(M=37, N=53, K=200), dtypes=_FP8, config=_DEC_DOT64,
             description="decode 64-token tile, M=37, N=53 (2 tiles, 21-column tail), K=200: splits of 64, "
                         "64, 64, 8"),
        Case("square_8192", params=dict(M=8192, N=8192, K=8192, b_layout="nk"), dtypes=_FP8, interpret=False,
             description="compute-bound, b K-major (nn.Linear weight layout)"),
        Case("square_8192_kn", params=dict(M=8192, N=8192, K=8192), dtypes=_FP8, interpret=False,
             perf_floor=0.2,  # 0.29x _scaled_mm on the H200 (2026-11-29): kept to show the layout's cost
             description="same with a row-major (K, N) b: shows the cost of the non-K-major layout"),
        Case("decode_m1", params=dict(M=1, N=8192, K=8192, b_layout="nk"), dtypes=_FP8, interpret=False,
             description="single-token decode: memory-bound on b (64 MiB), one-launch split-K"),
        Case("decode_m16", params=dict(M=16, N=8192, K=8192, b_layout="nk"), dtypes=_FP8, interpret=False,
             description="16-token decode batch"),
    ],
)
