from tritondbg import Case, Scenario
from tritondbg.kernels import gemm as K

import torch

# The tiny cases pin the 16x16x32 (GROUP_M=4) config under the interpreter: M=67 -> 5 tile-rows (one full
# group of 4 and a partial group of 1), N=45 -> 3 tile-cols with a 13-column tail, K=91 -> 3 K-steps with
# a 27-deep tail. 15 programs x 3 steps run in well under a second on the CPU. K=91 and N=45 are not
# multiples of 8 (strides not 16-byte aligned): these run the pointer kernel gemm_kernel.
_TINY = dict(M=67, N=45, K=91)
_TINY_CONFIG = dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=32)
# The tiny_tma cases have 8-aligned K and N, so they run the persistent TMA kernel gemm_tma_kernel (the
# interpreter implements tensor descriptors): M=67 -> 5 tile-rows (a full and a partial GROUP_M group, a
# 3-row tail), N=40 -> 3 tile-cols (an 8-column tail: the second store half of the last column is entirely
# outside and clipped), K=88 -> 3 K steps with a 24-deep tail (zero-filled by the descriptor). 15 tiles on
# the interpreter's 4 persistent programs.
_TINY_TMA = dict(M=67, N=40, K=88)


def make_inputs(case, dtype, device, generator):
    p = case.params
    M, N, Kd = p["M"], p["N"], p["K"]
    if p.get("a_transposed", False):
        # a as an (M, K) view of a (K, M) row-major tensor: strides (1, M).
        a = torch.randn(Kd, M, generator=generator, device="cpu").to(device=device, dtype=dtype).t()
    else:
        a = torch.randn(M, Kd, generator=generator, device="cpu").to(device=device, dtype=dtype)
    if p.get("b_transposed", False):
        # b as a (K, N) view of an (N, K) row-major tensor (an nn.Linear weight): strides (1, K).
        b = torch.randn(N, Kd, generator=generator, device="cpu").to(device=device, dtype=dtype).t()
    else:
        b = torch.randn(Kd, N, generator=generator, device="cpu").to(device=device, dtype=dtype)
    return dict(a=a, b=b, activation=p.get("activation"))


def baseline(a, b, activation=None):
    """torch.matmul (+ activation) at the input dtype"""
    c = a @ b
    if activation == "gelu":
        return torch.nn.functional.gelu(c, approximate="tanh")
    if activation == "silu":
        return torch.nn.functional.silu(c)
    return c


SCENARIO = Scenario(
    name="gemm",
    description="c = act(a @ b), fp16/bf16 with fp32 accumulation, grouped tile ordering, fused gelu/silu; "
                "persistent TMA kernel on sm_90+ for aligned operands, pointer kernel otherwise",
    make_inputs=make_inputs,
    launch=K.gemm,
    reference=K.reference,
    baseline=baseline,
    kernels=[K.gemm_kernel, K.gemm_tma_kernel],
    flops=lambda case, dtype: K.flops(**case.params),
    bytes=lambda case, dtype: K.bytes_moved(**case.params, dtype=dtype),
    cases=[
        Case("tiny", params=dict(_TINY), dtypes=("float16", "bfloat16"), config=_TINY_CONFIG,
             description="odd M/N/K: masks on M, N and the K tail, a partial GROUP_M group"),
        Case("tiny_gelu", params=dict(_TINY, activation="gelu"), dtypes=("float16",), config=_TINY_CONFIG,
             description="fused tanh-approximation GELU epilogue"),
        Case("tiny_silu", params=dict(_TINY, activation="silu"), dtypes=("float16",), config=_TINY_CONFIG,
             description="fused SiLU epilogue"),
        Case("tiny_bt", params=dict(_TINY, b_transposed=True), dtypes=("float16", "bfloat16"),
             config=_TINY_CONFIG, description="b passed as a .t() view (strides (1, K)): explicit strides"),
        Case("tiny_tma", params=dict(_TINY_TMA), dtypes=("float16", "bfloat16"), config=_TINY_CONFIG,
             description="8-aligned K and N: TMA kernel; odd M, N and K tails, partial GROUP_M group, 4 programs"),
        Case("tiny_tma_gelu", params=dict(_TINY_TMA, activation="gelu"), dtypes=("float16", "bfloat16"),
             config=_TINY_CONFIG, description="TMA kernel, fused tanh-approximation GELU on the subtiled epilogue"),
        Case("tiny_tma_silu", params=dict(_TINY_TMA, activation="silu"), dtypes=("float16",), config=_TINY_CONFIG,
             description="TMA kernel, fused SiLU epilogue"),
        Case("tiny_tma_bt", params=dict(_TINY_TMA, b_transposed=True), dtypes=("float16", "bfloat16"),
             config=_TINY_CONFIG, description="TMA kernel, b as the .t() view of an (N, K) tensor: B_TRANS"),
        Case("tiny_tma_at", params=dict(M=72, N=40, K=88, a_transposed=True, b_transposed=True),
             dtypes=("bfloat16",), config=_TINY_CONFIG,
             description="TMA kernel, a and b both transposed views (M=72: 8-aligned leading stride of a.t())"),
        Case("tiny_tma_tail", params=dict(M=48, N=32, K=160, activation="gelu"), dtypes=("float16",),
             config=_TINY_CONFIG,
             description="TMA kernel's split tail: 6 tiles on 4 programs, the 2-tile last round's 5 K steps "
                         "split 3 + 2 over the idle programs, GELU once on the fixed-order sum"),
        Case("square_4096", params=dict(M=4096, N=4096, K=4096), dtypes=("bfloat16", "float16"),
             interpret=False),
        Case("square_8192", params=dict(M=8192, N=8192, K=8192), dtypes=("bfloat16", "float16"),
             interpret=False),
        Case("square_8192_gelu", params=dict(M=8192, N=8192, K=8192, activation="gelu"), dtypes=("bfloat16",),
             interpret=False, description="MLP up-projection with fused GELU"),
        # LLM shapes (issue 18; the full set: tests/bench/sweep_h200.py --only gemm)
        Case("decode_m1_11008x4096", params=dict(M=1, N=11008, K=4096, b_transposed=True), dtypes=("bfloat16",),
             interpret=False, perf_timing="graph",
             description="one token through Llama-2-7B's MLP up-projection (nn.Linear weight): the read of b"),
        Case("llm_m127_4096x11008", params=dict(M=127, N=4096, K=11008), dtypes=("bfloat16",), interpret=False,
             description="odd M through Llama-2-7B's MLP down-projection"),
        Case("llm_m4096_14336x4096", params=dict(M=4096, N=14336, K=4096), dtypes=("bfloat16",),
             interpret=False, description="Mistral-7B MLP up-projection, 4096 tokens"),
    ],
)
