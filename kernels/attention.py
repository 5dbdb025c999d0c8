"""Flash attention forward (prefill) and flash-decoding (one query per sequence over a KV cache).

Prefill: ``attention(q, k, v, causal=False, sm_scale=None) -> o``
    o[b, h] = softmax(q[b, h] @ k[b, h // G]^T * sm_scale + mask) @ v[b, h // G]
    q: (B, H, N_Q, D); k, v: (B, H_KV, N_KV, D) with H % H_KV == 0 (G = H // H_KV, grouped-query attention;
    H_KV == H is plain multi-head attention); o: (B, H, N_Q, D) contiguous, dtype of q.
    Any strides with a contiguous last dim are accepted, so a (B, N, H, D) tensor can be passed as
    ``x.transpose(1, 2)`` without a copy.
    causal: query i sees keys j <= i + (N_KV - N_Q) (bottom-right aligned, as flash-attn >= 2.1; with
    N_Q == N_KV the usual lower triangle). A query row that sees no key at all (causal with N_Q > N_KV)
    gets an output of 0, as in flash-attn, never NaN.
    One program per (BLOCK_M query rows, batch*head); the KV loop is split into an unmasked body (blocks
    every row of the tile fully sees) and a masked part (the causal diagonal and the N_KV tail), so the
    body carries no mask arithmetic.

Decode: ``attention_decode(q, k_cache, v_cache, seq_lens=None, sm_scale=None, num_splits=None) -> o``
    q: (B, H, D); k_cache, v_cache: (B, H_KV, S_max, D), any strides with a contiguous last dim (a
    (B, S_max, H_KV, D) cache can be passed as ``cache.transpose(1, 2)``); seq_lens: optional (B,) int
    tensor, sequence b attends to cache positions [0, seq_lens[b]) (values are clamped to [0, S_max]; a
    length of 0 gives an output of 0); o: (B, H, D), dtype of q.
    Stage 1 splits each sequence's KV range into NUM_SPLITS chunks (chunk = cdiv(seq_len, NUM_SPLITS)
    rounded up to BLOCK_N, so short sequences keep every split busy and trailing splits may be empty);
    program (b*h, split) writes the chunk's normalised partial output (fp32) and its log-sum-exp (log2
    units, -inf for an empty chunk) to a workspace of B*H*NUM_SPLITS*(D+1) fp32. Stage 2 merges the
    splits with weights exp2(lse_s - max_s lse_s); empty splits get weight 0 (no -inf - -inf).
    With NUM_SPLITS == 1, stage 1 writes o directly and stage 2 is skipped.
    num_splits=None picks a split count that fills the GPU with ~4 waves of programs
    (see ``_decode_num_splits``).

Design limits: head dim D must be a power of two in 16..128 (a constexpr); fp16, bf16 and fp32 inputs
(fp32 uses IEEE fp32 dots in prefill, not TF32, so it matches an fp32 reference to ~1e-5). Prefill
tiles keep a BLOCK_M x D query tile and K/V BLOCK_N x D tiles on chip (<= 224 KB shared memory for
128 x 128 x D=128 bf16 with 3 stages). Offsets of batch/head bases are 64-bit, so caches over 2^31
elements are fine.

Measured on an H200 (Triton 3.6, torch 2.11, bf16, D=128): prefill B=4 H=32 N=4096 runs at 484 TFLOP/s
(non-causal, 2.27 ms) and 424 TFLOP/s (causal, 1.30 ms), 0.80x torch SDPA (cuDNN/flash); both pick
BLOCK 128x128, 8 warps, 3 stages. Decode: 2.6-3.9 TB/s against cuDNN's 3.7-4.6 TB/s (numbers at
``_decode_num_splits``); eager calls also pay ~100 us of Python/launch overhead (2 launches + autotuner),
so time decode inside a CUDA graph.

Numerics: scores, softmax statistics and the output accumulator are fp32. sm_scale (default 1/sqrt(D))
is folded with log2(e) into a single multiplier so the softmax uses exp2. Keys outside the sequence (or
above the causal diagonal) are set to -inf BEFORE the row max; running maxima that are still -inf are
replaced by 0 only where they are subtracted, so fully masked rows give p = 0, l = 0 and o = 0.
In prefill, P is cast to V's dtype (fp16/bf16) before the P @ V dot, as flash-attn does (the tensor cores
take 16-bit operands; the rounding error of P is <= 2^-9 relative for bf16).
"""
from __future__ import annotations

import functools
import math

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634  # log2(e): exp(x) == exp2(x * LOG2E)

_SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
_SUPPORTED_HEAD_DIMS = (16, 32, 64, 128)

# --------------------------------------------------------------------------------------------------------
# Prefill
# --------------------------------------------------------------------------------------------------------

# Hopper (H100/H200) heuristics: BLOCK_M 128 lets two warpgroups (num_warps=8) each issue 64-row wgmma;
# BLOCK_N 64..128 amortises the online-softmax rescale; with D=128 bf16 a 128x128 tile of K or V is 32 KB,
# so 3 stages of K and V plus Q is ~224 KB (fits the 227 KB limit), 128x64 allows 4 stages. The 64-row
# configs help short sequences / few heads (more programs for 132 SMs). The 16x16 config is for very
# short sequences (N <= 128, where big tiles are mostly padding) and for the CPU interpreter; it is pruned
# for longer sequences.
_PREFILL_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=2),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 16, "BLOCK_N": 16}, num_warps=2, num_stages=2),
]


_SMEM_LIMIT = 232448  # bytes of shared memory one program may use on H100/H200 (227 KB)


def _prune_prefill_configs(configs, named_args, **kwargs):
    """Autotune-time pruning (correctness never depends on it: every config is correct for any shape).
    - Sequences longer than 128: drop the 16x16 config (cannot win there; timing it costs autotune time).
    - D > 64: drop 128-row tiles on 4 warps (acc + scores need > 255 registers/thread: measured 224 B of
      spills at D=128 for 128x64).
    - Drop configs whose Q tile + num_stages K/V tiles exceed shared memory (fp32 with D=128), which would
      only fail to launch; smem = elt * D * (BLOCK_M + 2 * BLOCK_N * num_stages) (matches the compiler's
      229376 B for bf16 D=128 128x128x3)."""
    args = dict(named_args)
    args.update(kwargs)
    n_q = args.get("N_Q", 0)
    d = args.get("HEAD_DIM", 128)
    q = args.get("Q")
    elt = q.element_size() if hasattr(q, "element_size") else 2
    kept = []
    for c in configs:
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        if n_q > 128 and bm < 64:
            continue
        if d > 64 and bm >= 128 and c.num_warps < 8:
            continue
        if elt * d * (bm + 2 * bn * c.num_stages) > _SMEM_LIMIT:
            continue
        kept.append(c)
    return kept or [min(configs, key=lambda c: c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"])]


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q,
                    k_base,  # *K of this (batch, kv head): row n at k_base + n * stride_kn
                    v_base,  # *V of this (batch, kv head)
                    stride_kn, stride_vn,
                    offs_m, offs_n, offs_d,
                    lo, hi,  # KV positions [lo, hi) processed here; lo is a multiple of BLOCK_N
                    N_KV, diag_off, qk_scale,
                    BLOCK_N: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr,
                    DOT_PRECISION: tl.constexpr):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k_ptrs = k_base + cols[:, None] * stride_kn + offs_d[None, :]
        v_ptrs = v_base + cols[:, None] * stride_vn + offs_d[None, :]
        if MASKED:
            k = tl.load(k_ptrs, mask=cols[:, None] < N_KV, other=0.0)
        else:
            k = tl.load(k_ptrs)  # unmasked body: every key of the block is < N_KV
        qk = tl.dot(q, tl.trans(k), input_precision=DOT_PRECISION)  # [BLOCK_M, BLOCK_N] fp32
        if MASKED:
            keep = cols[None, :] < N_KV
            if CAUSAL:
                keep = keep & (cols[None, :] <= offs_m[:, None] + diag_off)
            # -inf BEFORE the max, so padded / future keys never raise the running max
            qk = tl.where(keep, qk * qk_scale, float("-inf"))
        else:
            qk = qk * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        # a row with no visible key yet keeps m = -inf; subtract 0 there instead (p = 0, alpha = 0, no NaN)
        m_sub = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.math.exp2(qk - m_sub[:, None])
        alpha = tl.math.exp2(m_i - m_sub)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if MASKED:
            v = tl.load(v_ptrs, mask=cols[:, None] < N_KV, other=0.0)
        else:
            v = tl.load(v_ptrs)
        acc = tl.dot(p.to(v.dtype), v, acc, input_precision=DOT_PRECISION)
        m_i = m_new
    return acc, l_i, m_i


@triton.autotune(configs=_PREFILL_CONFIGS, key=["N_Q", "N_KV", "HEAD_DIM", "CAUSAL"],
                 prune_configs_by={"early_config_prune": _prune_prefill_configs})
@triton.jit
def _attn_fwd_kernel(Q,  # *q (B, H, N_Q, D), read; last dim contiguous
                     K,  # *k (B, H_KV, N_KV, D), read; last dim contiguous
                     V,  # *v (B, H_KV, N_KV, D), read; last dim contiguous
                     O,  # *o (B, H, N_Q, D), written
                     stride_qb, stride_qh, stride_qm,
                     stride_kb, stride_kh, stride_kn,
                     stride_vb, stride_vh, stride_vn,
                     stride_ob, stride_oh, stride_om,
                     H, GROUP,  # query heads; query heads per kv head (H // H_KV)
                     N_Q, N_KV,
                     qk_scale,  # sm_scale * log2(e)
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, DOT_PRECISION: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = (pid_bh // H).to(tl.int64)
    h = pid_bh % H
    hk = (h // GROUP).to(tl.int64)
    h = h.to(tl.int64)
    q_base = Q + b * stride_qb + h * stride_qh
    k_base = K + b * stride_kb + hk * stride_kh
    v_base = V + b * stride_vb + hk * stride_vh
    o_base = O + b * stride_ob + h * stride_oh

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m[:, None] < N_Q
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :], mask=row_ok, other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    if CAUSAL:
        diag_off = N_KV - N_Q  # row i sees keys j <= i + diag_off
        m_first = pid_m * BLOCK_M
        m_last = tl.minimum(m_first + BLOCK_M, N_Q) - 1  # last real row of the tile
        # keys [0, full_hi) are visible to every row of the tile: no mask needed there
        full_hi = tl.maximum(tl.minimum(m_first + diag_off + 1, N_KV), 0)
        full_hi = (full_hi // BLOCK_N) * BLOCK_N
        # keys [full_hi, hi) straddle the diagonal or the N_KV tail; keys >= hi are invisible to all rows
        hi = tl.maximum(tl.minimum(m_last + diag_off + 1, N_KV), 0)
    else:
        diag_off = 0
        full_hi = (N_KV // BLOCK_N) * BLOCK_N
        hi = N_KV

    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                    offs_m, offs_n, offs_d, 0, full_hi, N_KV, diag_off, qk_scale,
                                    BLOCK_N, False, CAUSAL, DOT_PRECISION)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_base, v_base, stride_kn, stride_vn,
                                    offs_m, offs_n, offs_d, full_hi, hi, N_KV, diag_off, qk_scale,
                                    BLOCK_N, True, CAUSAL, DOT_PRECISION)

    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # rows that saw no key: acc == 0, output 0
    o = acc / l_safe[:, None]
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :], o.to(O.dtype.element_ty), mask=row_ok)


def _check_common(name, t, ndim):
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dims, got shape {tuple(t.shape)}")
    if t.dtype not in _SUPPORTED_DTYPES:
        raise ValueError(f"{name} dtype {t.dtype} not supported (float16, bfloat16, float32)")
    if t.stride(-1) != 1:
        raise ValueError(f"{name} must be contiguous in its last (head) dim, got strides {t.stride()}")


def check_prefill_args(q, k, v):
    """Validate prefill arguments (shapes, GQA heads, dtypes, devices, head dim); returns (B, H, N_Q, D, H_KV,
    N_KV). Shared with the prefill variants under trial in tests/bench/variants/."""
    _check_common("q", q, 4)
    _check_common("k", k, 4)
    _check_common("v", v, 4)
    B, H, N_Q, D = q.shape
    Bk, H_KV, N_KV, Dk = k.shape
    if k.shape != v.shape:
        raise ValueError(f"k and v shapes differ: {tuple(k.shape)} vs {tuple(v.shape)}")
    if Bk != B or Dk != D:
        raise ValueError(f"k/v shape {tuple(k.shape)} does not match q shape {tuple(q.shape)} (batch, head dim)")
    if H_KV == 0 or H % H_KV != 0:
        raise ValueError(f"query heads H={H} must be a multiple of kv heads H_KV={H_KV}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k, v dtypes differ: {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k, v devices differ: {q.device}, {k.device}, {v.device}")
    if D not in _SUPPORTED_HEAD_DIMS:
        raise ValueError(f"head dim {D} not supported; use one of {_SUPPORTED_HEAD_DIMS}")
    return B, H, N_Q, D, H_KV, N_KV


def attention(q, k, v, causal=False, sm_scale=None):
    """Flash-attention forward. q (B, H, N_Q, D), k/v (B, H_KV, N_KV, D) -> o (B, H, N_Q, D)."""
    B, H, N_Q, D, H_KV, N_KV = check_prefill_args(q, k, v)
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    o = torch.empty((B, H, N_Q, D), device=q.device, dtype=q.dtype)
    if o.numel() == 0:
        return o
    if N_KV == 0:
        return o.zero_()
    grid = lambda meta: (triton.cdiv(N_Q, meta["BLOCK_M"]), B * H)
    _attn_fwd_kernel[grid](
        q, k, v, o,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        o.stride(0), o.stride(1), o.stride(2),
        H, H // H_KV, N_Q, N_KV, float(sm_scale) * LOG2E,
        HEAD_DIM=D, CAUSAL=bool(causal), DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
    )
    return o


# --------------------------------------------------------------------------------------------------------
# Decode (flash-decoding)
# --------------------------------------------------------------------------------------------------------

# Decode is memory-bound (1 FMA per loaded K/V element): a [BLOCK_N, D] tile per iteration gives 16-byte
# vector loads along D and BLOCK_N*D*2*2 bytes per tile pair (32 KB for 64 x 128 bf16). LOOP_STAGES > 1
# prefetches the next LOOP_STAGES-1 tile pairs into shared memory with cp.async (64 x 128 bf16, 3 stages:
# 65 KB of smem measured, so 3 programs per SM); LOOP_STAGES = 1 keeps plain register loads (1 KB smem,
# ~96 registers: more programs per SM hide the latency instead). 32-token tiles suit short chunks; 128-token tiles with 8
# warps suit long chunks (fewer loop iterations).
_DECODE_CONFIGS = [
    triton.Config({"BLOCK_N": 32, "LOOP_STAGES": 4}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_N": 64, "LOOP_STAGES": 3}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_N": 64, "LOOP_STAGES": 1}, num_warps=4, num_stages=1),
    triton.Config({"BLOCK_N": 128, "LOOP_STAGES": 2}, num_warps=8, num_stages=2),
    triton.Config({"BLOCK_N": 128, "LOOP_STAGES": 1}, num_warps=8, num_stages=1),
]


@triton.autotune(configs=_DECODE_CONFIGS, key=["S_MAX", "HEAD_DIM", "NUM_SPLITS"])
@triton.jit
def _attn_decode_split_kernel(Q,  # *q (B, H, D), read; last dim contiguous
                              K,  # *k_cache (B, H_KV, S_MAX, D), read; last dim contiguous
                              V,  # *v_cache (B, H_KV, S_MAX, D), read; last dim contiguous
                              SEQ_LENS,  # *int32 (B,), read if HAS_SEQ_LENS
                              O_PART,  # *fp32 (B*H, NUM_SPLITS, D) workspace, written (unless SINGLE_SPLIT)
                              LSE_PART,  # *fp32 (B*H, NUM_SPLITS) workspace, written (unless SINGLE_SPLIT)
                              O,  # *o (B, H, D), written only if SINGLE_SPLIT
                              stride_qb, stride_qh,
                              stride_kb, stride_kh, stride_ks,
                              stride_vb, stride_vh, stride_vs,
                              stride_ob, stride_oh,
                              H, GROUP, S_MAX, NUM_SPLITS,
                              qk_scale,  # sm_scale * log2(e)
                              HEAD_DIM: tl.constexpr, HAS_SEQ_LENS: tl.constexpr, SINGLE_SPLIT: tl.constexpr,
                              BLOCK_N: tl.constexpr, LOOP_STAGES: tl.constexpr):
    pid_bh = tl.program_id(0)
    split = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    hk = h // GROUP
    if HAS_SEQ_LENS:
        seq_len = tl.load(SEQ_LENS + b)
        seq_len = tl.minimum(tl.maximum(seq_len, 0), S_MAX)
    else:
        seq_len = S_MAX
    # chunk per split, rounded up to whole tiles: trailing splits of short sequences may be empty
    chunk = tl.cdiv(tl.cdiv(seq_len, NUM_SPLITS), BLOCK_N) * BLOCK_N
    start = split * chunk
    end = tl.minimum(start + chunk, seq_len)

    b64 = b.to(tl.int64)
    hk64 = hk.to(tl.int64)
    k_base = K + b64 * stride_kb + hk64 * stride_kh
    v_base = V + b64 * stride_vb + hk64 * stride_vh
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + b64 * stride_qb + h.to(tl.int64) * stride_qh + offs_d).to(tl.float32)
    q = q * qk_scale  # fold scale and log2(e) into q once: D multiplies instead of one per key

    m_i = tl.max(tl.full([BLOCK_N], float("-inf"), dtype=tl.float32), 0)  # fp32 scalar -inf
    l_i = tl.sum(tl.zeros([BLOCK_N], dtype=tl.float32), 0)  # fp32 scalar 0
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    # loop_stages > 1 asks the software pipeliner to prefetch K/V tiles with cp.async; a loop without
    # tl.dot is not pipelined unless asked per loop like this
    for start_n in tl.range(start, end, BLOCK_N, num_stages=LOOP_STAGES):
        cols = start_n + offs_n
        kv_ok = cols < end
        k = tl.load(k_base + cols[:, None] * stride_ks + offs_d[None, :], mask=kv_ok[:, None], other=0.0)
        s = tl.sum(q[None, :] * k.to(tl.float32), 1)  # [BLOCK_N] scores, log2 units
        s = tl.where(kv_ok, s, float("-inf"))  # before the max
        # every iteration has >= 1 valid key (start_n < end), so m_new is finite: no -inf - -inf
        m_new = tl.maximum(m_i, tl.max(s, 0))
        p = tl.math.exp2(s - m_new)
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 0)
        v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :], mask=kv_ok[:, None], other=0.0)
        acc = acc * alpha + tl.sum(p[:, None] * v.to(tl.float32), 0)
        m_i = m_new

    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # empty chunk: acc == 0, partial output 0
    o = acc / l_safe
    if SINGLE_SPLIT:
        tl.store(O + b64 * stride_ob + h.to(tl.int64) * stride_oh + offs_d, o.to(O.dtype.element_ty))
    else:
        part = pid_bh.to(tl.int64) * NUM_SPLITS + split
        tl.store(O_PART + part * HEAD_DIM + offs_d, o)
        lse = tl.where(l_i > 0.0, m_i + tl.math.log2(l_safe), float("-inf"))  # log2-sum-exp2 of the chunk
        tl.store(LSE_PART + part, lse)


@triton.jit
def _attn_decode_reduce_kernel(O_PART,  # *fp32 (B*H, NUM_SPLITS, D) workspace, read
                               LSE_PART,  # *fp32 (B*H, NUM_SPLITS) workspace, read
                               O,  # *o (B, H, D), written
                               stride_ob, stride_oh,
                               H, NUM_SPLITS,
                               HEAD_DIM: tl.constexpr, SPLITS_P2: tl.constexpr):  # SPLITS_P2 >= NUM_SPLITS
    pid_bh = tl.program_id(0)
    b = (pid_bh // H).to(tl.int64)
    h = (pid_bh % H).to(tl.int64)
    offs_s = tl.arange(0, SPLITS_P2)
    offs_d = tl.arange(0, HEAD_DIM)
    s_ok = offs_s < NUM_SPLITS
    part = pid_bh.to(tl.int64) * NUM_SPLITS + offs_s
    lse = tl.load(LSE_PART + part, mask=s_ok, other=float("-inf"))
    m = tl.max(lse, 0)
    m = tl.where(m == float("-inf"), 0.0, m)  # all splits empty (seq_len 0): weights 0, output 0
    w = tl.math.exp2(lse - m)  # empty split: exp2(-inf) = 0
    o_s = tl.load(O_PART + part[:, None] * HEAD_DIM + offs_d[None, :], mask=s_ok[:, None], other=0.0)
    num = tl.sum(w[:, None] * o_s, 0)
    den = tl.sum(w, 0)
    den = tl.where(den == 0.0, 1.0, den)
    tl.store(O + b * stride_ob + h * stride_oh + offs_d, (num / den).to(O.dtype.element_ty))


def _num_sms(device) -> int:
    """Streaming multiprocessors of the device (132 on an H200; also the stand-in on the CPU)."""
    if device.type == "cpu":
        return 132
    return _num_sms_of(device.type, device.index or 0)


@functools.lru_cache(maxsize=None)
def _num_sms_of(device_type: str, index: int) -> int:
    # cached: the driver's property query costs ~1 ms of CPU per call (measured on the H200), more than
    # a whole decode step's GPU time
    try:
        props = triton.runtime.driver.active.utils.get_device_properties(index)
        return int(props["multiprocessor_count"])
    except Exception:  # pragma: no cover - any backend without the query
        return 132


def _decode_num_splits(batch_heads: int, kv_len: int, num_sms: int, waves: int = 4,
                       min_chunk: int = 256, max_splits: int = 64) -> int:
    """Splits per (batch, head) so that batch_heads * splits ~= waves * num_sms programs, each chunk
    keeping >= min_chunk tokens (below that the partial write and the merge cost more than they save).
    E.g. H200 (132 SMs), H=32, D=128 bf16: B=1 -> 17 splits, B=8 -> 3, B=32 -> 1 (1024 programs already).
    Measured on an H200 (CUDA-graph timing, Triton 3.6): B=1/8k: 51 us at 17 splits (best 45 us at 12,
    213 us at 1; cuDNN 36 us); B=1/32k: 169 us (best 147 at 12); B=8/32k: 1094 us (best 1086 at 24,
    1251 at 1; cuDNN 925); B=32/4k: 566 us (best at 1 split; cuDNN 465)."""
    if batch_heads <= 0 or kv_len <= 0:
        return 1
    want = triton.cdiv(waves * num_sms, batch_heads)
    return max(1, min(want, kv_len // min_chunk, max_splits))


def attention_decode(q, k_cache, v_cache, seq_lens=None, sm_scale=None, num_splits=None):
    """Flash-decoding. q (B, H, D), k/v cache (B, H_KV, S_max, D), seq_lens (B,) or None -> o (B, H, D)."""
    _check_common("q", q, 3)
    _check_common("k_cache", k_cache, 4)
    _check_common("v_cache", v_cache, 4)
    B, H, D = q.shape
    Bk, H_KV, S_MAX, Dk = k_cache.shape
    if k_cache.shape != v_cache.shape:
        raise ValueError(f"k_cache and v_cache shapes differ: {tuple(k_cache.shape)} vs {tuple(v_cache.shape)}")
    if Bk != B or Dk != D:
        raise ValueError(f"cache shape {tuple(k_cache.shape)} does not match q shape {tuple(q.shape)} "
                         "(expected (B, H_KV, S_max, D); pass a (B, S_max, H_KV, D) cache as cache.transpose(1, 2))")
    if H_KV == 0 or H % H_KV != 0:
        raise ValueError(f"query heads H={H} must be a multiple of kv heads H_KV={H_KV}")
    if not (q.dtype == k_cache.dtype == v_cache.dtype):
        raise ValueError(f"q, k_cache, v_cache dtypes differ: {q.dtype}, {k_cache.dtype}, {v_cache.dtype}")
    if not (q.device == k_cache.device == v_cache.device):
        raise ValueError(f"q, k_cache, v_cache devices differ: {q.device}, {k_cache.device}, {v_cache.device}")
    if D not in _SUPPORTED_HEAD_DIMS:
        raise ValueError(f"head dim {D} not supported; use one of {_SUPPORTED_HEAD_DIMS}")
    if seq_lens is not None:
        if not isinstance(seq_lens, torch.Tensor):
            seq_lens = torch.tensor(list(seq_lens), dtype=torch.int32, device=q.device)
        if seq_lens.shape != (B,):
            raise ValueError(f"seq_lens must have shape ({B},), got {tuple(seq_lens.shape)}")
        if seq_lens.dtype.is_floating_point or seq_lens.dtype.is_complex or seq_lens.dtype == torch.bool:
            raise ValueError(f"seq_lens must be an integer tensor, got {seq_lens.dtype}")
        if seq_lens.device != q.device:
            raise ValueError(f"seq_lens is on {seq_lens.device}, q on {q.device}")
        seq_lens = seq_lens.to(torch.int32).contiguous()
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    if num_splits is None:
        num_splits = _decode_num_splits(B * H, S_MAX, _num_sms(q.device))
    num_splits = int(num_splits)
    if num_splits < 1:
        raise ValueError(f"num_splits must be >= 1, got {num_splits}")

    o = torch.empty((B, H, D), device=q.device, dtype=q.dtype)
    if o.numel() == 0:
        return o
    if S_MAX == 0:
        return o.zero_()
    single = num_splits == 1
    if single:  # stage 1 writes o directly; the workspace pointers are unused
        o_part, lse_part = o, o
    else:
        o_part = torch.empty((B * H, num_splits, D), device=q.device, dtype=torch.float32)
        lse_part = torch.empty((B * H, num_splits), device=q.device, dtype=torch.float32)
    seq_arg = seq_lens if seq_lens is not None else o  # dummy pointer when HAS_SEQ_LENS is False
    _attn_decode_split_kernel[(B * H, num_splits)](
        q, k_cache, v_cache, seq_arg, o_part, lse_part, o,
        q.stride(0), q.stride(1),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        o.stride(0), o.stride(1),
        H, H // H_KV, S_MAX, num_splits, float(sm_scale) * LOG2E,
        HEAD_DIM=D, HAS_SEQ_LENS=seq_lens is not None, SINGLE_SPLIT=single,
    )
    if not single:
        _attn_decode_reduce_kernel[(B * H,)](
            o_part, lse_part, o, o.stride(0), o.stride(1), H, num_splits,
            HEAD_DIM=D, SPLITS_P2=triton.next_power_of_2(num_splits), num_warps=4,
        )
    return o


# --------------------------------------------------------------------------------------------------------
# References, flops, bytes
# --------------------------------------------------------------------------------------------------------

def _masked_softmax(s):
    """Softmax over the last dim; rows that are all -inf give 0 (not NaN), as the kernels do."""
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isinf(m) & (m < 0), torch.zeros_like(m), m)
    e = torch.exp(s - m)
    l = e.sum(dim=-1, keepdim=True)
    return e / torch.where(l == 0, torch.ones_like(l), l)


def reference(q, k, v, causal=False, sm_scale=None, **_):
    """Prefill reference: manual softmax(q k^T * scale + mask) v in fp32 (one batch at a time to bound memory)."""
    B, H, N_Q, D = q.shape
    H_KV, N_KV = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    out = torch.empty((B, H, N_Q, D), device=q.device, dtype=torch.float32)
    if causal:
        i = torch.arange(N_Q, device=q.device)[:, None]
        j = torch.arange(N_KV, device=q.device)[None, :]
        visible = j <= i + (N_KV - N_Q)
    for b in range(B):
        qf = q[b].float()
        kf = k[b].float().repeat_interleave(H // H_KV, dim=0)
        vf = v[b].float().repeat_interleave(H // H_KV, dim=0)
        s = torch.matmul(qf, kf.transpose(-1, -2)) * scale
        if causal:
            s = s.masked_fill(~visible, float("-inf"))
        out[b] = torch.matmul(_masked_softmax(s), vf)
    return out


def reference_decode(q, k_cache, v_cache, seq_lens=None, sm_scale=None, **_):
    """Decode reference: per sequence, manual softmax over cache positions [0, seq_lens[b]) in fp32."""
    B, H, D = q.shape
    H_KV, S_MAX = k_cache.shape[1], k_cache.shape[2]
    scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    kf = k_cache.float().repeat_interleave(H // H_KV, dim=1)
    vf = v_cache.float().repeat_interleave(H // H_KV, dim=1)
    s = torch.einsum("bhd,bhsd->bhs", q.float(), kf) * scale
    if seq_lens is not None:
        lens = torch.as_tensor(seq_lens, device=q.device).to(torch.int64).clamp(0, S_MAX)
        pos = torch.arange(S_MAX, device=q.device)[None, None, :]
        s = s.masked_fill(pos >= lens[:, None, None], float("-inf"))
    return torch.einsum("bhs,bhsd->bhd", _masked_softmax(s), vf)


def _decode_tokens(B, S, seq_lens):
    """KV tokens attended per head, summed over the batch."""
    if seq_lens is None:
        return B * S
    return sum(min(max(int(x), 0), S) for x in seq_lens)


def flops(B, H, D, N=None, N_KV=None, causal=False, S=None, seq_lens=None, **_):
    """Prefill: 4*B*H*N_Q*N_KV*D (QK^T and PV, 2 flops per MAC), halved for causal (the usual convention;
    for N_Q != N_KV the exact count of visible pairs). Decode (S given): 4*H*D*sum(seq_lens)."""
    if S is not None:
        return 4.0 * H * D * _decode_tokens(B, S, seq_lens)
    n_kv = N if N_KV is None else N_KV
    pairs = N * n_kv
    if causal:
        if n_kv == N:
            pairs = N * N / 2
        else:
            off = n_kv - N
            pairs = sum(min(max(i + off + 1, 0), n_kv) for i in range(N))
    return 4.0 * B * H * pairs * D


def bytes_moved(B, H, D, dtype, N=None, N_KV=None, S=None, seq_lens=None, H_KV=None, **_):
    """Minimal DRAM traffic: read q, k, v once and write o (decode: only the first seq_lens[b] cache rows
    are read; the split workspace, B*H*splits*(D+1)*4*2 bytes, is not counted)."""
    es = torch.empty((), dtype=dtype).element_size()
    h_kv = H if H_KV is None else H_KV
    if S is not None:
        return float(es * (2 * B * H * D + 2 * h_kv * D * _decode_tokens(B, S, seq_lens)))
    n_kv = N if N_KV is None else N_KV
    return float(es * B * D * (2 * H * N + 2 * h_kv * n_kv))
