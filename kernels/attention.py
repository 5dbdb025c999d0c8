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

Decode: ``attention_decode(q, k_cache, v_cache, seq_lens=None, sm_scale=None, num_splits=None) -> o``
    q: (B, H, D); k_cache, v_cache: (B, H_KV, S_max, D), any strides with a contiguous last dim (a
    (B, S_max, H_KV, D) cache can be passed as ``cache.transpose(1, 2)``); seq_lens: optional (B,) integer
    tensor, sequence b attends to cache positions [0, seq_lens[b]) (values are clamped to [0, S_max]; a
    length of 0 gives an output of 0); num_splits: KV chunks per sequence (None: ``_decode_num_splits``);
    o: (B, H, D) contiguous, dtype of q.

Limits: head dim D a power of two in 16..128 (a constexpr); fp16, bf16 and fp32 (fp32 uses IEEE fp32 dots,
not TF32, so it matches an fp32 reference to ~1e-5). Batch/head offsets are 64-bit.

Prefill design. One program per (BLOCK_M query rows, batch*head); online softmax in exp2 with sm_scale*log2(e)
folded into one multiplier, applied to the row max of the raw scores (so ``s * scale - m`` is one FFMA per
score; ``tl.min`` when sm_scale < 0). Hidden keys get -inf (+inf for a negative scale) BEFORE the max, with
one compare + one select per score (no branch); a max still -inf is replaced by 0 where it is subtracted,
so rows with no visible key give l = 0 and o = 0.
- Loads: on Hopper and newer (and under the interpreter, which emulates descriptors) tiles move by TMA.
  LOADS=1: rank-4 host descriptors over the (B, H, N, D) tensors, block [1, 1, BLOCK, D] (set per config by
  an autotune pre-hook); TMA zero-fills rows past N and clips the O store, so tails need no mask. LOADS=2:
  per-program rank-2 device descriptors (``tl.make_tensor_descriptor``), used only by the warp-specialised
  loop (with host descriptors Triton 3.6 miscompiles the Q load of a warp-specialised kernel and 3.9
  rejects it); they need ``triton.set_allocator`` (set here when the caller has none). LOADS=0: plain
  pointers, for GPUs without TMA (sm < 90, AMD) and as the fallback for inputs TMA cannot read (base or
  strides not 16-byte aligned).
- KV loop: an unmasked body (keys every row of the tile sees) and a masked part (the causal diagonal and the
  N_KV tail). Causal programs run longest first over groups of HEAD_GROUP = 8 heads: the longest tile of each
  head of the group, then the next longest, ... (the group's K/V, 16 MB at D=128 N=4096, stay in L2). Head
  after head (HEAD_GROUP=0), the last head's longest tile started near the end and ran alone: on the H200
  the grouped order was 1.6-2.8% faster for every causal config at B4 H32 N4096 (tests/bench/kernels_h200.md,
  session 5).
- Warp specialisation (``tl.range(..., warp_specialize=True)``, configs with WARP_SPEC and 4 warps): Triton's
  Hopper pass builds 1 producer (TMA) + 2 consumer warpgroups of 64 rows. The pass accepts only ONE loop
  with dots in the kernel, so a warp-specialised program runs a single loop. It is used ONLY when that loop
  is unmasked (non-causal and N_KV % BLOCK_N == 0, constexpr EVEN_KV): the masked single loop compiled
  but gave wrong results on the H200 (Triton 3.6, 2026-11-29: causal B4 H32 N4096 D128 bf16, 2,154,377 of
  67,108,864 outputs outside atol = rtol = 0.02; the interpreter ignores warp_specialize and cannot see it).
  ``_prune_prefill_configs`` drops WARP_SPEC configs for causal or uneven N_KV, and the kernel itself runs
  the two-loop path when such a config is pinned, so every config is correct for every shape. The same holds
  for D < 128: at D = 64 several warp-specialised configs gave NaN outputs on the H200 (Triton 3.6,
  2026-11-30, ``tests/bench/explore_prefill.py``). And unmasked at D = 128 too (session 55, an H100, Triton 3.6,
  ``python tests/bench/contended_attention.py``, ``tests/bench/runs/s55_contended.txt``): 128x64 s3 and s4 gave
  wrong outputs at B4 H32 N4096 D128 bf16 in 20 of 20 runs alone (right at B1 H4 N512), 128x128 s2 in the one
  run beside six processes loading the GPU (right in 20 alone), and the autotuner, timing under that load, picked
  one of them (session 53 saw the same in 8 pytest workers). The three 4-warp warp-specialised configs are gone
  from the autotuner's list; on Hopper the Gluon kernel (below) is the warp-specialised path, raced and checked.

Hopper: a signature's first call also races the warp-specialised Gluon kernel (kernels/_attention_gluon.py, for
contiguous 16-bit inputs with D 64 or 128) against the tl path above (kernels/_attention_race.py); the winner
serves the signature's later calls. On the H200 it took D = 128 from 1.42-1.57x SDPA flash to 1.63-1.78x
(tests/bench/sweep_h200.md, session 13).

Decode design: kernels/_attention_decode.py (flash-decoding in one launch, split KV, deterministic merge).

Measured on an H200 after the merge (Triton 3.6, torch 2.11, bf16, D=128, H=32, 2026-11-29;
tests/bench/kernels_h200.md): prefill B4 N4096 2041 us = 539 TFLOP/s, 1.59x SDPA flash (previous kernel 1.45x);
causal 1223 us, 1.45x flash (non-specialised TMA configs; previous 1.40x); 1210 us, 1.48x, with the grouped
causal order (2026-11-30). Decode, 2026-11-30 with the split
rule of ``_decode_num_splits``: B8 KV32k 963 us = 4.46 TB/s (1.00x SDPA default = cuDNN, 1.81x flash), B32 KV4k
488 us (1.00x / 1.80x), B1 KV8k 47.7 us under do_bench, 35.8 us of GPU time (1.05x / 1.22x; 50.9 / 40.5 us with
the earlier 16 splits). Small prefill shapes were launch-bound: ~110 us of Python per call (autotuner,
argument binding, four host descriptors) against ~17 us of GPU at B2 H8 N1000. A call with an earlier call's
signature now goes through a cached launcher (``_PrefillPlan``): 27 us of host time per call on the H200 VM
against SDPA flash's 37 (2026-12-01, tests/bench/host_cost.py --baselines). The prefill autotuner times configs
on the GPU alone (``gpu_time_bench``, kernels/_autotune.py).
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ._attention_common import (_SMEM_LIMIT, _SUPPORTED_DTYPES, _SUPPORTED_HEAD_DIMS, LOG2E,  # noqa: F401
                                TensorDescriptor, _check_common, _tma_ok, _tma_target, check_prefill_args)
# the decode kernel and its host side (kernels/_attention_decode.py), re-exported: the scenario, tests, benchmarks
from ._attention_decode import (_DECODE_CONFIGS, _PLANS, _attn_decode_kernel, _decode_num_splits,  # noqa: F401
                                _load_bucket, _num_sms, _pristine, attention_decode, check_decode_args)
from . import _attention_race as _AR, _launch, _race
# the references and the cost model (kernels/_attention_reference.py), re-exported: the scenario and benchmarks
from ._attention_reference import bytes_moved, flops, reference, reference_decode  # noqa: F401
from ._autotune import gpu_time_bench
from ._launch import ensure_allocator as _ensure_allocator

# --------------------------------------------------------------------------------------------------------
# Prefill
# --------------------------------------------------------------------------------------------------------

def _set_block_shapes(nargs):
    """Autotune pre-hook: the host descriptors' block shape must match the config's tile sizes (it is part
    of the kernel's specialisation, tensordesc<bf16[1, 1, 128, 128]>)."""
    bm, bn, d = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["HEAD_DIM"]
    for name, rows in (("QD", bm), ("OD", bm), ("KD", bn), ("VD", bn)):
        desc = nargs[name]
        if TensorDescriptor is not None and isinstance(desc, TensorDescriptor):
            desc.block_shape = [1, 1, rows, d]


def _prefill_cfg(bm, bn, warps, stages, ws=False):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "WARP_SPEC": ws}, num_warps=warps, num_stages=stages,
                         pre_hook=_set_block_shapes)


# Registers per thread (Triton 3.6 / 3.9) and shared memory for sm_90, bf16, B4 H32 N4096 D128 (non-causal; causal
# within 10 registers); no config spills where pruning keeps it. `tritondbg ir` without a recorded decision shows
# the first config left after pruning.
_PREFILL_CONFIGS = [
    # (no 4-warp warp-specialised config: 128x64 s3 / s4 gave wrong outputs at B4 H32 N4096 D128 on an H100, 20 of
    # 20 runs, and 128x128 s2 under load from other processes; Triton 3.6, session 55: module docstring)
    # two warpgroups x 64 rows, loads issued by all warps
    _prefill_cfg(128, 128, 8, 3),           # 231 / 223, 230,400 B
    _prefill_cfg(128, 128, 8, 2),           # 231 / 211, 164,864 B
    _prefill_cfg(128, 64, 8, 4),            # 151 / 151, 164,864 B
    # short sequences / many small programs
    _prefill_cfg(64, 64, 4, 3),             # 151 / 151, 115,712 B
    # D = 64 (issue 18, H200 2026-11-30, tests/bench/explore_prefill.py, B4 H32 N4096 bf16): 64x128 w4 s3 1297 us
    # non-causal (1.41x SDPA flash; the autotuner's 64x64 pick 1384 us), 128x128 w4 s3 689 us causal (1.42x; the
    # pick 739 us). D <= 64 only (_prune_prefill_configs).
    _prefill_cfg(64, 128, 4, 3),
    _prefill_cfg(128, 128, 4, 3),
    # N <= 128 and the CPU interpreter; the WARP_SPEC twin runs the device-descriptor single loop there
    # (warp_specialize itself is ignored with 2 warps and by the interpreter)
    _prefill_cfg(16, 16, 2, 2),
    _prefill_cfg(16, 16, 2, 2, ws=True),
]


def _prune_prefill_configs(configs, named_args, **kwargs):
    """Autotune-time pruning. Correctness never depends on it (the kernel falls back to the two-loop path
    whenever a WARP_SPEC config meets a masked loop); it drops what cannot win, cannot launch, or would be
    unsafe to time:
    - WARP_SPEC configs unless the single loop is unmasked: TMA, not CAUSAL and N_KV % BLOCK_N == 0 (the same
      test as the EVEN_KV heuristic). Masked, the warp-specialised loop was measured wrong on the H200 with
      Triton 3.6 (module docstring); elsewhere such a config would only duplicate its non-WS twin.
    - 4-warp WARP_SPEC configs also need 16-bit inputs and D = 128 (the pass splits the tile over two wgmma
      consumer warpgroups; fp32 uses IEEE dots, not wgmma). At D = 64 the H200 (Triton 3.6, 2026-11-30,
      tests/bench/explore_prefill.py, B4 H32 N4096 non-causal bf16) gave NaN outputs for 128x64 s3/s4 and
      128x128 s3/s4 (128x128 s2 was right): never offered there. Pinned on a masked shape anyway, they run the
      two-loop path on 4 warps, which spills at D=128 (12-180 words on sm_90): correct, but slow.
    - non-specialised 4-warp configs with a 128-wide tile side only for D <= 64: 128-row tiles spill at
      D = 128, and 64x128 measured 1.24-1.25x flash there against 1.42-1.50x for the configs the autotuner
      picks (H200, session 8, tests/bench/runs/s8_explore_prefill.txt).
    - N_Q > 128: tiles under 64 rows. fp32: tiles up to 64x64 (fp32 operands: 1362 spilled words at
      128x128, D=64).
    - Q tile + num_stages K/V tiles must fit shared memory: elt * D * (BLOCK_M + 2 * BLOCK_N * stages); the
      warp-specialised kernel also keeps a BLOCK_M x D staging tile for the O store."""
    args = dict(named_args)
    args.update(kwargs)
    n_q, n_kv = args.get("N_Q", 0), args.get("N_KV", 0)
    d = args.get("HEAD_DIM", 128)
    tma, causal = args.get("TMA", True), args.get("CAUSAL", False)
    q = args.get("Q")
    elt = q.element_size() if hasattr(q, "element_size") else 2
    kept = []
    for c in configs:
        bm, bn, ws = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["WARP_SPEC"]
        if ws and (not tma or causal or n_kv % bn != 0):
            continue
        if ws and c.num_warps == 4 and (elt != 2 or d < 128):
            continue
        if not ws and c.num_warps == 4 and max(bm, bn) >= 128 and d > 64:
            continue
        if n_q > 128 and bm < 64:
            continue
        if elt == 4 and bm * bn > 64 * 64:
            continue
        if elt * d * ((2 if ws else 1) * bm + 2 * bn * c.num_stages) > _SMEM_LIMIT:
            continue
        kept.append(c)
    return kept or [min(configs, key=lambda c: (c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"], c.kwargs["WARP_SPEC"]))]


@triton.jit
def _load_tile(src,  # LOADS 0: *T of row 0 of this (b, h); 1: host 4-D descriptor; 2: device 2-D descriptor
               b, h, row,  # batch, head, first row of the tile
               stride_n, offs_r, offs_d, n_rows,
               BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr, LOADS: tl.constexpr, MASKED: tl.constexpr):
    """One [BLOCK, HEAD_DIM] tile of rows row..row+BLOCK-1; rows >= n_rows read as 0 (TMA zero-fills)."""
    if LOADS == 1:
        x = src.load([b, h, row, 0]).reshape(BLOCK, HEAD_DIM)
    elif LOADS == 2:
        x = src.load([row, 0])
    else:
        rows = row + offs_r
        ptrs = src + rows[:, None] * stride_n + offs_d[None, :]
        if MASKED:
            x = tl.load(ptrs, mask=rows[:, None] < n_rows, other=0.0)
        else:
            x = tl.load(ptrs)  # unmasked body: every row of the tile is < n_rows
    return x


@triton.jit
def _attn_inner(acc, l_i, m_i, q, k_src, v_src, b, hk, stride_kn, stride_vn,
                offs_m, offs_n, offs_d,
                lo, hi,  # KV positions [lo, hi) processed here; lo is a multiple of BLOCK_N
                N_KV, diag_off, qk_scale,
                BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr,
                NEG_SCALE: tl.constexpr, LOADS: tl.constexpr, WARP_SPEC: tl.constexpr,
                DOT_PRECISION: tl.constexpr):
    """Online softmax over KV blocks [lo, hi). MASKED: apply the N_KV tail (and causal) mask to every block.
    The body has no runtime branch on purpose: Triton's Hopper warp specialisation gives up on a loop
    holding an scf.if."""
    # Masking works on the raw scores: a hidden key gets -inf (+inf when sm_scale < 0, so that scaling
    # turns it into -inf), which never raises the row max; then p = exp2(s * scale - m) is 0 there.
    if NEG_SCALE:
        MASK_VALUE: tl.constexpr = float("inf")
    else:
        MASK_VALUE: tl.constexpr = float("-inf")
    if MASKED:
        # last visible key of each row (the N_KV tail folded in): one compare + one select per score
        if CAUSAL:
            last_key = tl.minimum(offs_m + diag_off, N_KV - 1)
        else:
            last_key = tl.zeros_like(offs_m) + (N_KV - 1)
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WARP_SPEC):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = _load_tile(k_src, b, hk, start_n, stride_kn, offs_n, offs_d, N_KV, BLOCK_N, HEAD_DIM, LOADS, MASKED)
        qk = tl.dot(q, k.T, input_precision=DOT_PRECISION)  # [BLOCK_M, BLOCK_N] fp32, raw scores
        if MASKED:
            qk = tl.where(offs_n[None, :] <= (last_key - start_n)[:, None], qk, MASK_VALUE)
        # Row max of the raw scores, scaled once per row; then qk * scale - m is one FFMA per score.
        if NEG_SCALE:
            m_new = tl.maximum(m_i, tl.min(qk, 1) * qk_scale)
        else:
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        if MASKED:
            # a row with no visible key yet keeps m = -inf; subtract 0 there (p = 0, alpha = 0, no NaN)
            m_sub = tl.where(m_new == float("-inf"), 0.0, m_new)
        else:
            m_sub = m_new  # every key visible to every row: finite from the first block on
        p = tl.math.exp2(qk * qk_scale - m_sub[:, None])
        alpha = tl.math.exp2(m_i - m_sub)  # first block: exp2(-inf) = 0
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = _load_tile(v_src, b, hk, start_n, stride_vn, offs_n, offs_d, N_KV, BLOCK_N, HEAD_DIM, LOADS, MASKED)
        acc = tl.dot(p.to(v.dtype), v, acc, input_precision=DOT_PRECISION)
        m_i = m_new
    return acc, l_i, m_i


# LOAD (the autotuner's key only): the grid's 128-row tiles per SM, bucketed as decode's (_load_bucket), so B1 and
# B32 of one sequence length are tuned apart: a tile that fills the GPU at B1 is not the one for a full grid.
@triton.autotune(configs=_PREFILL_CONFIGS,
                 key=["N_Q", "N_KV", "HEAD_DIM", "CAUSAL", "TMA", "HEAD_GROUP", "LOAD"],
                 prune_configs_by={"early_config_prune": _prune_prefill_configs}, do_bench=gpu_time_bench)
@triton.heuristics({"EVEN_KV": lambda args: args["N_KV"] % args["BLOCK_N"] == 0})
@triton.jit(do_not_specialize=["LOAD"])
def _attn_fwd_kernel(Q,  # *q (B, H, N_Q, D), read; last dim contiguous (LOADS 0 and 2)
                     K,  # *k (B, H_KV, N_KV, D), read (LOADS 0 and 2)
                     V,  # *v (B, H_KV, N_KV, D), read (LOADS 0 and 2)
                     O,  # *o (B, H, N_Q, D), written (LOADS 0 and 2)
                     QD, KD, VD, OD,  # host TMA descriptors of q, k, v, o (LOADS 1; else unused)
                     stride_qb, stride_qh, stride_qm,
                     stride_kb, stride_kh, stride_kn,
                     stride_vb, stride_vh, stride_vn,
                     stride_ob, stride_oh, stride_om,
                     H, GROUP,  # query heads; query heads per kv head (H // H_KV)
                     N_Q, N_KV,
                     LOAD,  # the autotuner's key only (above)
                     qk_scale,  # sm_scale * log2(e)
                     HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, NEG_SCALE: tl.constexpr,
                     DOT_PRECISION: tl.constexpr, TMA: tl.constexpr,
                     HEAD_GROUP: tl.constexpr,  # causal launch order (0: per head; see below)
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WARP_SPEC: tl.constexpr,
                     EVEN_KV: tl.constexpr):  # N_KV % BLOCK_N == 0 (heuristic)
    # The warp-specialised single loop only where it needs no mask (module docstring: masked, it was wrong on
    # the H200 with Triton 3.6); a WARP_SPEC config pinned on a masked shape runs the two-loop path below.
    # D = 128 only: at D = 64 it gave NaN on the H200 with Triton 3.6 (_prune_prefill_configs' docstring)
    WS_LOOP: tl.constexpr = WARP_SPEC and TMA and EVEN_KV and not CAUSAL and HEAD_DIM >= 128
    # device descriptors for the warp-specialised loop, host descriptors otherwise, pointers without TMA
    LOADS: tl.constexpr = (2 if WS_LOOP else 1) if TMA else 0
    n_m = tl.cdiv(N_Q, BLOCK_M)
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    if CAUSAL:
        if HEAD_GROUP > 0:
            # launch order (m fastest) -> (tile, head) in groups of HEAD_GROUP heads: the longest tile of each
            # head of the group, then the next longest, ... (the last group may be smaller)
            lin = pid_m + pid_bh * n_m
            first = (lin // (HEAD_GROUP * n_m)) * HEAD_GROUP
            size = tl.minimum(tl.num_programs(1) - first, HEAD_GROUP)
            r = lin - first * n_m
            pid_bh = first + r % size
            pid_m = r // size
        pid_m = n_m - 1 - pid_m  # longest tiles first
    b = pid_bh // H
    h = pid_bh % H
    hk = h // GROUP
    # 64-bit (batch, head) offsets: caches over 2^31 elements are fine
    q_base = Q + b.to(tl.int64) * stride_qb + h.to(tl.int64) * stride_qh
    k_base = K + b.to(tl.int64) * stride_kb + hk.to(tl.int64) * stride_kh
    v_base = V + b.to(tl.int64) * stride_vb + hk.to(tl.int64) * stride_vh
    o_base = O + b.to(tl.int64) * stride_ob + h.to(tl.int64) * stride_oh
    if LOADS == 2:
        # per-(b, h) 2-D descriptors: rows past N_Q / N_KV read 0 and are not stored
        q_src = tl.make_tensor_descriptor(q_base, shape=[N_Q, HEAD_DIM], strides=[stride_qm, 1],
                                          block_shape=[BLOCK_M, HEAD_DIM])
        k_src = tl.make_tensor_descriptor(k_base, shape=[N_KV, HEAD_DIM], strides=[stride_kn, 1],
                                          block_shape=[BLOCK_N, HEAD_DIM])
        v_src = tl.make_tensor_descriptor(v_base, shape=[N_KV, HEAD_DIM], strides=[stride_vn, 1],
                                          block_shape=[BLOCK_N, HEAD_DIM])
        o_dst = tl.make_tensor_descriptor(o_base, shape=[N_Q, HEAD_DIM], strides=[stride_om, 1],
                                          block_shape=[BLOCK_M, HEAD_DIM])
    elif LOADS == 1:
        q_src, k_src, v_src, o_dst = QD, KD, VD, OD
    else:
        q_src, k_src, v_src, o_dst = q_base, k_base, v_base, o_base

    m_first = pid_m * BLOCK_M
    offs_m = m_first + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = _load_tile(q_src, b, h, m_first, stride_qm, tl.arange(0, BLOCK_M), offs_d, N_Q, BLOCK_M, HEAD_DIM,
                   LOADS, True)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    if CAUSAL:
        diag_off = N_KV - N_Q  # row i sees keys j <= i + diag_off
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

    if WS_LOOP:
        # ONE unmasked loop over [0, N_KV): the Hopper WS pass handles a single specialised loop and nothing
        # with dots outside it (a second loop crashes it)
        acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_src, v_src, b, hk, stride_kn, stride_vn,
                                    offs_m, offs_n, offs_d, 0, N_KV, N_KV, diag_off, qk_scale,
                                    BLOCK_N, HEAD_DIM, False, CAUSAL, NEG_SCALE, LOADS, True, DOT_PRECISION)
    else:
        # unmasked body, then the masked diagonal / tail blocks
        acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_src, v_src, b, hk, stride_kn, stride_vn,
                                    offs_m, offs_n, offs_d, 0, full_hi, N_KV, diag_off, qk_scale,
                                    BLOCK_N, HEAD_DIM, False, CAUSAL, NEG_SCALE, LOADS, False, DOT_PRECISION)
        acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_src, v_src, b, hk, stride_kn, stride_vn,
                                    offs_m, offs_n, offs_d, full_hi, hi, N_KV, diag_off, qk_scale,
                                    BLOCK_N, HEAD_DIM, True, CAUSAL, NEG_SCALE, LOADS, False, DOT_PRECISION)

    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # rows that saw no key: acc == 0, output 0
    o = (acc * (1.0 / l_safe)[:, None]).to(q.dtype)
    if LOADS == 1:
        o_dst.store([b, h, m_first, 0], o.reshape(1, 1, BLOCK_M, HEAD_DIM))
    elif LOADS == 2:
        o_dst.store([m_first, 0], o)
    else:
        tl.store(o_dst + offs_m[:, None] * stride_om + offs_d[None, :], o, mask=offs_m[:, None] < N_Q)



# Causal launch order (module docstring): longest tiles first over groups of this many heads; 0 = head after
# head, each head's tiles longest first.
_HEAD_GROUP = 8


_PREFILL_PLANS: dict = {}  # call signature -> _PrefillPlan (the steady state: a cached launcher)
_PREFILL_CHECKED: set = set()  # (signature, config) whose launcher already ran once under tritondbg run/check
_PREFILL_ARGS = ("Q", "K", "V", "O", "QD", "KD", "VD", "OD")  # the kernel's leading arguments, passed per call


def attention(q, k, v, causal=False, sm_scale=None):
    """Flash-attention forward. q (B, H, N_Q, D), k/v (B, H_KV, N_KV, D) -> o (B, H, N_Q, D).

    A call with the signature (shapes, strides, dtypes, devices, causal, sm_scale) of an earlier CUDA call
    reuses its compiled kernel and config through a cached launcher (kernels/_launch.py): the autotuner,
    Triton's binder and four ``TensorDescriptor`` validations cost ~100 us of Python a call on the H200 VM,
    as much as the GPU time of a B8 H16 N1000 causal prefill."""
    try:
        sig = _prefill_sig(q, k, v, causal, sm_scale)
        plan = _PREFILL_PLANS.get(sig)
    except (AttributeError, TypeError):  # not tensors, unhashable arguments: the checks below say what
        sig = plan = None
    if plan is not None and _launch.pristine(plan.kernel) and _launch.aligned(q, k, v) \
            and not (_launch.PINNED and isinstance(plan, _AR.GluonPlan)):  # a pinned tl config runs, not a raced plan
        o = q.new_empty(q.shape)  # contiguous, as the first call's
        plan.launch(q, k, v, o)
        return o
    guard = _launch.device_guard(q)
    if guard is not None:  # q on another GPU than the current one: launch there, as torch ops do
        with guard:
            return attention(q, k, v, causal, sm_scale)
    o = _attention(q, k, v, causal, sm_scale, use_tma=None, sig=sig)
    # Hopper: the warp-specialised Gluon kernel against the tl path, once per signature (kernels/_attention_race.py)
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else sm_scale
    if sig is not None and o.numel() and k.shape[2] and "_attn_fwd_kernel" not in _launch.PINNED \
            and _AR.eligible(q, k, v, scale):
        tl_plan = _PREFILL_PLANS.get(sig)
        steady = (lambda: tl_plan.launch(q, k, v, torch.empty_like(o))) if tl_plan is not None else \
            (lambda: _attention(q, k, v, causal, sm_scale, use_tma=None))
        _AR.race(sig, q, k, v, o, bool(causal), float(scale), _PREFILL_PLANS, steady)
    return o


def _prefill_sig(q, k, v, causal, sm_scale) -> tuple:
    return (q.shape, q.stride(), q.dtype, q.device, k.shape, k.stride(), k.dtype, k.device, v.shape, v.stride(),
            v.dtype, v.device, causal, sm_scale)


def race_decision(q, k, v, causal=False, sm_scale=None) -> dict | None:
    """The Gluon race's record for ``attention(q, k, v, causal, sm_scale)``'s signature (kernels/_race.py
    ``DECISIONS``: the tl path's time, each candidate's, the pick), or None where no race ran."""
    return _race.DECISIONS.get(_prefill_sig(q, k, v, causal, sm_scale))


class _PrefillPlan:
    """A prefill signature's launcher and, on the TMA path, its four host descriptors with the config's block
    shapes (rebased on each call's tensors; the templates hold no tensor). ``kernel``: what ``_launch.pristine``
    asks about (a raced Gluon plan, kernels/_attention_race.py, has the same interface)."""
    __slots__ = ("launcher", "descs", "kernel")

    def launch(self, q, k, v, o) -> None:
        t = self.descs
        if t is None:  # pointer path: the descriptor arguments are unused tensors
            self.launcher(q, k, v, o, q, k, v, o)
            return
        _ensure_allocator()  # the warp-specialised configs' device descriptors; a ContextVar (per thread)
        self.launcher.with_templates((q, k, v, o), t, (q, k, v, o))


def _record(sig, compiled, values: dict, q, k, v, o, descs) -> None:
    """After an autotuned launch that returned ``compiled``: bind it to ``sig`` (kernels/_launch.py's rules:
    nothing patched, CUDA tensors, aligned pointers; under tritondbg run/check the new launcher runs once more
    into the NaN-filled output, so a single-call check covers it)."""
    if compiled is None or sig is None or q.device.type == "cpu" or not _launch.pristine(_attn_fwd_kernel) \
            or not _launch.aligned(q, k, v, o):  # (the interpreter runs on CPU tensors)
        return
    config = _attn_fwd_kernel.best_config
    kw = config.kwargs
    names = list(getattr(_attn_fwd_kernel.fn, "fn", _attn_fwd_kernel.fn).arg_names)  # Heuristics -> JITFunction
    if tuple(names[:len(_PREFILL_ARGS)]) != _PREFILL_ARGS:
        raise RuntimeError(f"attention: unexpected kernel signature {names}")
    full = {**values, **kw, "EVEN_KV": values["N_KV"] % kw["BLOCK_N"] == 0}
    tail = tuple(full[n] for n in names[len(_PREFILL_ARGS):])
    grid = (triton.cdiv(values["N_Q"], kw["BLOCK_M"]), q.shape[0] * q.shape[1])
    plan = _PrefillPlan()
    plan.kernel = _attn_fwd_kernel
    plan.launcher = _launch.Launcher(compiled, grid, tail, _attn_fwd_kernel)
    plan.descs = None
    if values["TMA"]:
        _set_block_shapes(dict(kw, HEAD_DIM=values["HEAD_DIM"], QD=descs[0], KD=descs[1], VD=descs[2],
                               OD=descs[3]))
        plan.descs = tuple(_launch.descriptor_template(d) for d in descs)
    key = (sig, tuple(sorted(kw.items())), config.num_warps, config.num_stages)
    if _launch.verifying() and key not in _PREFILL_CHECKED and _launch.hooks_idle():
        _PREFILL_CHECKED.add(key)
        o.fill_(float("nan"))
        plan.launch(q, k, v, o)
    if len(_PREFILL_PLANS) >= _launch.MAX_PLANS:
        _PREFILL_PLANS.clear()
    _PREFILL_PLANS[sig] = plan


def _attention_ptr(q, k, v, causal=False, sm_scale=None):
    """``attention`` forced onto the pointer path (GPUs without TMA), so the interpreter checks it too."""
    return _attention(q, k, v, causal, sm_scale, use_tma=False)


def _attention(q, k, v, causal, sm_scale, use_tma, config=None, sig=None):
    """use_tma None: TMA on Hopper and newer (and under the interpreter) when TMA can read q, k and v (else
    the pointer path; o is allocated here, contiguous); False: the pointer path. ``config``: a
    ``triton.Config`` of the prefill kernel launched as is, past the autotuner (benchmarks and GPU tests that
    check every config). ``sig``: the call signature the autotuned launch's launcher is cached under."""
    B, H, N_Q, D, H_KV, N_KV = check_prefill_args(q, k, v)
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    o = torch.empty((B, H, N_Q, D), device=q.device, dtype=q.dtype)
    if o.numel() == 0:
        return o
    if N_KV == 0:
        return o.zero_()
    tma = use_tma is not False and _tma_target() and _tma_ok(q) and _tma_ok(k) and _tma_ok(v) and _tma_ok(o)
    if tma:
        # block shapes are placeholders: the autotune pre-hook sets them per config
        qd, kd, vd, od = (TensorDescriptor.from_tensor(t, [1, 1, 16, D]) for t in (q, k, v, o))
        if q.is_cuda:
            _ensure_allocator()
    else:
        qd, kd, vd, od = q, k, v, o  # unused by the pointer path
    qk_scale = float(sm_scale) * LOG2E
    if qk_scale == 0.0:
        # masked scores are +-inf before scaling, and inf * 0 is NaN: a scale of 1e-30 gives the same fp32
        # result as 0 (|s| * 1e-30 is far below half an ulp of 1, so every exp2 is exactly 1)
        qk_scale = 1e-30
    grid = lambda meta: (triton.cdiv(N_Q, meta["BLOCK_M"]), B * H)
    kernel, extra = _attn_fwd_kernel, {}
    if config is not None:
        extra = dict(config.kwargs, num_warps=config.num_warps, num_stages=config.num_stages)
        if tma:
            _set_block_shapes(dict(extra, HEAD_DIM=D, QD=qd, KD=kd, VD=vd, OD=od))
        kernel = _attn_fwd_kernel.fn  # the heuristics (EVEN_KV) over the JIT function
    values = dict(stride_qb=q.stride(0), stride_qh=q.stride(1), stride_qm=q.stride(2),
                  stride_kb=k.stride(0), stride_kh=k.stride(1), stride_kn=k.stride(2),
                  stride_vb=v.stride(0), stride_vh=v.stride(1), stride_vn=v.stride(2),
                  stride_ob=o.stride(0), stride_oh=o.stride(1), stride_om=o.stride(2),
                  H=H, GROUP=H // H_KV, N_Q=N_Q, N_KV=N_KV,
                  LOAD=_load_bucket(B * H * triton.cdiv(N_Q, 128), _num_sms(q.device)), qk_scale=qk_scale,
                  HEAD_DIM=D, CAUSAL=bool(causal), NEG_SCALE=qk_scale < 0,
                  DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32", TMA=tma, HEAD_GROUP=_HEAD_GROUP)
    compiled = kernel[grid](q, k, v, o, qd, kd, vd, od, *values.values(), **extra)  # the kernel's order
    if config is None and sig is not None:
        _record(sig, compiled, values, q, k, v, o, (qd, kd, vd, od))
    return o
