"""Scenario for kernels/attention.py: flash-attention prefill and flash-decoding (decode cases override
launch/reference with ``attention_decode`` / ``reference_decode``; ``tiny_ptr`` launches the prefill's pointer
path, which GPUs without TMA run)."""
import torch

from tritondbg import Case, Scenario
from tritondbg.kernels import attention as K


def make_inputs(case, dtype, device, generator):
    p = case.params
    B, H, D = p["B"], p["H"], p["D"]
    h_kv = p.get("H_KV", H)

    def randn(*shape):
        return torch.randn(*shape, generator=generator, device="cpu").to(device=device, dtype=dtype)

    if "S" in p:  # decode: one query per sequence over a (B, H_KV, S, D) cache
        seq_lens = p.get("seq_lens")
        if p.get("layout") == "bshd":  # a (B, S, H_KV, D) cache, passed as its (B, H_KV, S, D) view
            k_cache, v_cache = (randn(B, p["S"], h_kv, D).transpose(1, 2) for _ in "kv")
        else:
            k_cache, v_cache = randn(B, h_kv, p["S"], D), randn(B, h_kv, p["S"], D)
        if seq_lens is not None and p.get("poison"):  # slots past a sequence's length hold NaN
            for b, n in enumerate(seq_lens):
                k_cache[b, :, max(n, 0):] = float("nan")
                v_cache[b, :, max(n, 0):] = float("nan")
        return dict(
            q=randn(B, H, D),
            k_cache=k_cache,
            v_cache=v_cache,
            seq_lens=None if seq_lens is None else torch.tensor(seq_lens, dtype=torch.int32, device=device),
            num_splits=p.get("num_splits"),
        )
    n_kv = p.get("N_KV", p["N"])
    return dict(
        q=randn(B, H, p["N"], D),
        k=randn(B, h_kv, n_kv, D),
        v=randn(B, h_kv, n_kv, D),
        causal=p.get("causal", False),
    )


def baseline(q, k=None, v=None, causal=False, k_cache=None, v_cache=None, **_):
    """torch SDPA"""
    # Timing only: decode attends over the whole cache (seq_lens ignored); causal uses SDPA's top-left
    # alignment. The work is the same as the kernel's up to those masks.
    sdpa = torch.nn.functional.scaled_dot_product_attention
    if k_cache is not None:
        gqa = k_cache.shape[1] != q.shape[1]
        return sdpa(q[:, :, None, :], k_cache, v_cache, enable_gqa=gqa)[:, :, 0, :]
    return sdpa(q, k, v, is_causal=causal, enable_gqa=k.shape[1] != q.shape[1])


def _decode(name, params, dtypes, config=None, interpret=True, description=""):
    return Case(name, params=params, dtypes=dtypes, config=config, interpret=interpret,
                launch=K.attention_decode, reference=K.reference_decode, description=description)


# The odd GPU prefill cases (perf_timing="graph") cover code paths the interpreter cannot reach (TMA clipping,
# warp specialisation, GQA tails); at these sizes a call is launch-bound: on the H200 VM ~110 us of Python
# (autotuner, JIT binding, four host TMA descriptors) against ~20 us of GPU (tests/bench/host_cost.py,
# 2026-11-29), so the perf gate compares GPU times (CUDA graph) there.


SCENARIO = Scenario(
    name="attention",
    description="flash-attention forward (prefill, causal or not) and flash-decoding over a KV cache",
    make_inputs=make_inputs,
    launch=K.attention,
    reference=K.reference,
    baseline=baseline,
    kernels=[K._attn_fwd_kernel, K._attn_decode_kernel],
    flops=lambda case, dtype: K.flops(**case.params),
    bytes=lambda case, dtype: K.bytes_moved(**case.params, dtype=dtype),
    cases=[
        # ---- prefill, CPU interpreter: N=77 leaves a 13-row query tail and a 13-key KV tail with 16x16 tiles
        Case("tiny", params=dict(B=1, H=2, N=77, D=64, causal=False),
             dtypes=("float16", "bfloat16", "float32"), config=dict(BLOCK_M=16, BLOCK_N=16),
             description="non-causal, N not a multiple of the tile"),
        Case("tiny_causal", params=dict(B=1, H=2, N=77, D=64, causal=True),
             dtypes=("float16", "bfloat16", "float32"), config=dict(BLOCK_M=16, BLOCK_N=16),
             description="causal: unmasked body, diagonal tiles and the KV tail"),
        Case("tiny_causal_9heads", params=dict(B=3, H=3, N=77, D=64, causal=True), dtypes=("float16",),
             config=dict(BLOCK_M=16, BLOCK_N=16),
             description="9 (batch, head) pairs: the causal launch order's full group of 8 heads and a group of 1"),
        Case("tiny_d128", params=dict(B=1, H=2, N=33, D=128, causal=True),
             dtypes=("float16",), config=dict(BLOCK_M=16, BLOCK_N=16),
             description="head dim 128, causal, N=33 (one-row tail tile)"),
        Case("tiny_cross_gqa", params=dict(B=2, H=4, H_KV=2, N=40, N_KV=21, D=32, causal=True),
             dtypes=("float16", "bfloat16"), config=dict(BLOCK_M=16, BLOCK_N=16),
             description="N_Q > N_KV causal (bottom-right: the first 19 query rows see no key, output 0), "
                         "grouped-query heads"),
        Case("tiny_even_ws", params=dict(B=1, H=4, H_KV=2, N=45, N_KV=64, D=64, causal=False),
             dtypes=("bfloat16",), config=dict(BLOCK_M=16, BLOCK_N=16, WARP_SPEC=True),
             description="non-causal, N_KV a multiple of the tile: the warp-specialised configs' single unmasked "
                         "loop (device-side TMA descriptors), a 13-row query tail"),
        Case("tiny_ptr", params=dict(B=1, H=2, N=77, D=64, causal=True),
             dtypes=("float16",), config=dict(BLOCK_M=16, BLOCK_N=16), launch=K._attention_ptr,
             description="the pointer path (GPUs without TMA): causal, query and key tails"),
        # ---- decode, CPU interpreter
        _decode("decode_tiny", dict(B=2, H=3, S=1000, D=64, seq_lens=[1000, 513], num_splits=4),
                ("float16", "bfloat16", "float32"), config=dict(BLOCK_N=64, LOOP_STAGES=3),
                description="4 splits, odd cache length; the 513-token sequence leaves split 3 empty (64-token tiles)"),
        _decode("decode_tiny_ragged", dict(B=4, H=4, H_KV=2, S=301, D=128, seq_lens=[301, 40, 1, 0], num_splits=5),
                ("float16", "bfloat16"), config=dict(BLOCK_N=64, LOOP_STAGES=3),
                description="5 splits (non-power-of-two merge), empty splits, a length-0 sequence (output 0), GQA"),
        _decode("decode_tiny_bshd_nan", dict(B=3, H=4, H_KV=2, S=333, D=64, seq_lens=[333, 70, 129], num_splits=3,
                                            layout="bshd", poison=True), ("bfloat16", "float16", "float32"),
                description="a (B, S, H_KV, D) cache, NaN past each length; ragged chunk ends (TMA + masked tail)"),
        _decode("decode_tiny_bshd_nan_mha", dict(B=2, H=3, S=200, D=32, seq_lens=[7, 190], num_splits=2,
                                                layout="bshd", poison=True), ("bfloat16",),
                config=dict(BLOCK_N=64, LOOP_STAGES=3, ROW_STATE=True),
                description="as above, one query head per KV head (the CUDA-core path, per-row state)"),
        _decode("decode_tiny_gqa4_single", dict(B=2, H=8, H_KV=2, S=100, D=32, seq_lens=[100, 0], num_splits=1),
                ("float32", "bfloat16"), config=dict(BLOCK_N=32, LOOP_STAGES=3),
                description="GQA group of 4 (tensor-core path, padded to 16 rows), one split (direct store), "
                            "a length-0 sequence"),
        _decode("decode_tiny_many_splits", dict(B=2, H=8, H_KV=2, S=672, D=32, seq_lens=[672, 600], num_splits=21),
                ("bfloat16", "float32"), config=dict(BLOCK_N=32, LOOP_STAGES=3),
                description="21 splits of 32 tokens (the longest merge of the cases: a max that moves late rescales "
                            "the sums); 600 tokens: the last 2 splits empty, the 19th ragged"),
        # ---- realistic H200 shapes (compiled only)
        Case("prefill_b4_h32_n4k_d128", params=dict(B=4, H=32, N=4096, D=128, causal=False),
             dtypes=("bfloat16",), interpret=False),
        Case("prefill_b4_h32_n4k_d128_causal", params=dict(B=4, H=32, N=4096, D=128, causal=True),
             dtypes=("bfloat16",), interpret=False),
        # odd D=128 shapes for what the interpreter cannot reach (128-row TMA tails, GQA, warp specialisation
        # next to masked shapes); small, ~1 ms each on the H200
        Case("prefill_gqa_odd_d128", params=dict(B=2, H=8, H_KV=2, N=1000, N_KV=777, D=128, causal=False),
             dtypes=("bfloat16",), interpret=False, perf_timing="graph",
             description="GQA 4:1, N_Q=1000 / N_KV=777: query and key tails"),
        Case("prefill_gqa_ws_tail_d128", params=dict(B=2, H=8, H_KV=2, N=1000, N_KV=1024, D=128, causal=False),
             dtypes=("bfloat16",), interpret=False, perf_timing="graph",
             description="GQA, N_KV a multiple of every BLOCK_N: the warp-specialised configs with a query tail "
                         "(TMA-clipped O store)"),
        Case("prefill_gqa_odd_d128_causal", params=dict(B=2, H=8, H_KV=2, N=1000, N_KV=1100, D=128, causal=True),
             dtypes=("bfloat16",), interpret=False, perf_timing="graph",
             description="GQA, causal with N_KV > N_Q (diagonal offset 100, not a multiple of the tile)"),
        Case("prefill_cross_d128_causal", params=dict(B=1, H=16, N=1100, N_KV=1000, D=128, causal=True),
             dtypes=("bfloat16", "float16"), interpret=False, perf_timing="graph",
             description="causal with N_Q > N_KV: the first 100 query rows see no key (output 0)"),
        _decode("decode_b1_h32_kv8k_d128", dict(B=1, H=32, S=8192, D=128), ("bfloat16",), interpret=False),
        _decode("decode_b8_h32_kv32k_d128", dict(B=8, H=32, S=32768, D=128), ("bfloat16",), interpret=False),
        _decode("decode_b32_h32_kv4k_d128", dict(B=32, H=32, S=4096, D=128), ("bfloat16",), interpret=False),
        _decode("decode_b8_h32_hkv8_kv32k_d128", dict(B=8, H=32, H_KV=8, S=32768, D=128), ("bfloat16",),
                interpret=False, description="GQA group 4 (padded to 16 mma rows): K/V of a KV head read once"),
    ],
)
