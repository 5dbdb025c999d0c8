"""Flash-attention prefill for Hopper: TMA tiles, warp specialisation, longest-first causal order.

``attention_fast(q, k, v, causal=False, sm_scale=None) -> o`` has the semantics of the bundled
``tritondbg.kernels.attention.attention`` (kernels/attention.py): q (B, H, N_Q, D), k/v (B, H_KV, N_KV, D),
GQA (H % H_KV == 0), causal bottom-right aligned (query i sees keys j <= i + N_KV - N_Q), a query row that
sees no key gives 0, fp16/bf16/fp32, D in 16..128, any strides with a contiguous last dim. It is a variant
for the tuning issue (>= 1.5x the SDPA flash backend on the H200: >= 524 / 471 TFLOP/s non-causal / causal
at B=4 H=32 N=4096 D=128 bf16), to be measured next to the bundled kernel (484 / 424 TFLOP/s).

STATE: written and checked on a machine without a GPU (CPU interpreter + compiles for sm_90 with Triton
3.6 and 3.9). Every TFLOP/s figure under "Predictions" is a prediction; nothing here has run on an H200.

Design: what differs from kernels/attention.py
----------------------------------------------
1. Tiles move by TMA (the Tensor Memory Accelerator) instead of cp.async with per-thread addresses. The
   kernel constexpr LOADS picks one of three ways; the first two have exact per-(batch, head) bounds (TMA
   zero-fills rows past N and clips stores there), so query/key tails need no load or store mask and
   never touch the next head:
   - LOADS=1, host descriptors (the configs without warp specialisation): rank-4 descriptors over the
     (B, H, N, D) tensors, built once on the host, block [1, 1, BLOCK, D] (an autotune pre-hook sets the
     block per config); the loaded [1, 1, BLOCK, D] tile is reshaped to [BLOCK, D]. The TTGIR shows the TMA
     writing straight into the 2-D NVMMA shared layout the wgmma reads (no register round trip) and O
     leaving by one TMA store. Body loop: 491 SASS instructions per thread and 128x128 step, against 611
     for the bundled kernel (no LDGSTS/LEA address work, scale folded into one FFMA).
   - LOADS=2, device descriptors (the warp-specialised configs): one rank-2 descriptor per program and
     tensor, ``tl.make_tensor_descriptor`` on the (b, h) base with shape [N, D]. Warp specialisation needs
     them: with host descriptors Triton 3.6 splits the Q load over the two consumers into 64-row copies
     through the 128-row descriptor (TTGIR: a 1x1x128x128 descriptor copied into a 64x128 buffer, i.e. a
     silent miscompile; 3.9's verifier rejects the same IR), and a host descriptor store fails to compile.
     Costs 640 B of global scratch per program (``triton.set_allocator``: the wrapper sets a torch
     allocator when the caller has none) and a tensormap write + proxy fence at program start.
   - LOADS=0, plain pointers: GPUs without TMA (sm < 90), and ``use_tma=False``. Same code as
     kernels/attention.py. Tensors whose base or strides are not 16-byte aligned are copied to an aligned
     contiguous tensor before TMA is used, so the TMA paths take any input.
   The CPU interpreter emulates descriptors, so it checks the same code the H200 runs (LOADS 1 and 2); the
   pointer path is checked by the second scenario here, ``attention_fast_ptr``.
2. Warp specialisation (``WARP_SPEC``: ``tl.range(..., warp_specialize=True)``). Triton 3.6 and 3.9 run a
   Hopper pass (``add_hopper_warpspec``) that only fires for num_warps=4 and builds FA3's structure: one
   producer warpgroup issuing the TMA loads, two consumer warpgroups of 64 query rows each (the 128-row
   tile split in two, 232 registers each; setmaxnreg in the SASS), 12 warps in all. Checked in the TTGIR
   (``ttg.warp_specialize`` with ``requestedRegisters = [232, 232]``) for the five GPU cases of the
   scenario on both versions. The pass's limits shape the kernel:
   - it accepts one specialised loop and nothing with a dot outside it: a second loop (the masked
     diagonal) or straight-line diagonal blocks before/after it crash the pass (MLIR dominance assertion /
     "unsupported op type"), and an ``if`` inside the loop makes it give up silently. So the WS configs run
     ONE loop, and when anything needs a mask (causal, or N_KV not a multiple of BLOCK_N: constexpr
     ``EVEN_KV`` from a heuristic) every block is masked, branch-free: one compare + one select per score
     (consumer loop 450 SASS instructions per step unmasked, 652 masked);
   - with 8 warps it does nothing (identical SASS with and without the flag), so WARP_SPEC only pairs
     with num_warps=4; the 16x16 WS config (2 warps) exists to run the LOADS=2 single-loop path under the
     interpreter.
   Inside a consumer the two dots are synchronous (no FA3-style intra-warpgroup overlap, no enforced
   ping-pong): the consumers overlap each other's softmax with their wgmma only through the scheduler.
3. Causal: programs run longest first (``pid_m`` reversed: the bottom query tiles see the most keys). The
   hardware hands out blocks in launch order, so the short tiles fill the tail of the last wave. m stays
   the fastest grid axis, so the ~32 tiles of one head run together and share its K/V in L2 (with heads
   fastest, 132 heads x 2 MB of K/V would stream from DRAM: ~4 GB for the causal case).
4. Softmax (exp2, scale * log2 e folded) on raw scores: the row max is taken on the raw scores and scaled
   once per row, so ``s * scale - m`` is one FFMA per score (the tutorial's trick; ``tl.min`` when
   sm_scale < 0). Masked scores are set to -inf (+inf for a negative scale) BEFORE the max; a max still
   -inf is replaced by 0 where it is subtracted, so rows with no visible key give l = 0 and o = 0. A scale
   of exactly 0 is passed as 1e-30 (inf * 0 would be NaN; the fp32 result is the same). The epilogue
   multiplies by 1/l.

Ideas weighed and left out
--------------------------
- Conditional rescale (multiply acc by alpha only when the row max grew): the rescale is 64 FMUL per
  thread per 128x128 step (~13% of the 491), but skipping it needs a uniform branch, i.e. a cross-warp
  "did any row grow" reduction and an scf.if, which the WS pass refuses; with synchronous dots no overlap
  is gained either. Predicted <= 1%: not done.
- Issuing QK^T of block j+1 before the softmax of block j (FA3's intra-warpgroup overlap) by hand: tried
  in a draft. Triton's wgmma pipeliner (WGMMAPipeline.cpp) defers a wait only for a dot whose result feeds
  another dot's accumulator; the loop-carried QK^T got ``warp_group_dot_wait {pendings = 0}`` right after
  its issue, so nothing overlapped, and it cost 255 registers + spills. Dropped.
- BLOCK_M=256 with 8 warps (128 rows per warpgroup): 253 registers on 3.9, 24 spilled words on 3.6 at
  BLOCK_N=64. Dropped. WS 128x128 with 3 stages: 262,680 B of shared memory (> 232,448). Dropped.
- Persistent grid: 4096 tiles on 132 SMs is 31.03 waves either way; its gain would be hiding each tile's
  prologue (descriptor setup, Q and first K/V loads, ~1-2 us of a ~70 us tile) behind the previous tile,
  which the WS pass cannot do (one loop only). Predicted 2-3%; left for later. Causal balance is handled
  by the launch order (3.).

Configs (autotune key: N_Q, N_KV, HEAD_DIM, CAUSAL, TMA and the dtypes; ``_prune_configs``)
-----------------------------------------------------------------------------------------
Registers / shared memory for sm_90, bf16, B=4 H=32 N=4096 D=128, Triton 3.6 (3.9 in brackets); no config
spills; every one issues HGMMA (wgmma) and TMA (commands and full table: attention_prefill.md):
  WS  128x128, 4(+8) warps, 2 stages   168 regs at launch (consumers 232), 197,024 B (197,112)
  WS  128x64,  4(+8) warps, 3 stages   168, 164,376 B            WS 128x64, 4 stages: 168, 197,152 B
  TMA 128x128, 8 warps, 3 stages       231 (223) regs, 230,400 B     2 stages: 231 (211), 164,864 B
  TMA 128x64,  8 warps, 4 stages       151 regs, 164,864 B
  TMA 64x64,   4 warps, 3 stages       151 regs, 115,712 B   (short sequences)
  16x16, 2 warps (and its WS twin)     interpreter / N <= 128 only
(bundled kernel, same shape: 252 registers, 229,376 B.)

Predictions (H200, Triton 3.6, B=4 H=32 N=4096 D=128 bf16; TFLOP/s non-causal / causal)
-----------------------------------------------------------------------------------------
Anchors: bundled kernel 484 / 424 (cp.async, 128x128, 8 warps, 3 stages); cuDNN 598 / 534; the FA3
paper's ablation (H100, D=128, as recalled: ~660 full, ~570-580 without warp specialisation or without
the GEMM-softmax overlap).
- WS 128x128, 2 stages: 560 / 485 -- predicted winner, over both bars (524 / 471) by ~7% / ~3%.
  Why: the producer warpgroup takes all load issue off the consumers (450 instead of 611 instructions
  per step), and two 64-row consumers alternate wgmma and softmax (the MUFU exp2 work of a consumer is
  ~512 clocks per step against ~1024 clocks of its wgmma, so the other consumer's softmax fits under it
  when they drift apart). Below FA3 because each consumer waits on its own wgmma and nothing enforces the
  alternation. Causal loses a little more than the bundled kernel's 12% (~13.5%): every block is
  masked (+45% softmax instructions, mostly hidden under the other consumer's wgmma) and each short
  causal tile pays the descriptor setup; longest-first order gives back ~2%.
- WS 128x64, 3 / 4 stages: 520 / 465. Half-width steps double the per-step bookkeeping (row max/sum
  shuffles, barrier handshakes with the producer) for the same flops.
- TMA 128x128, 8 warps, 3 stages: 515 / 455. Same schedule as the bundled kernel with 20% fewer
  instructions per step; the two warpgroups still stall on their own wgmma. Short of both bars.
- TMA 128x128, 2 stages: 505 / 450 (one K/V tile pair of prefetch instead of two: the L2 latency is
  exposed more often when both warpgroups reach the barrier together).
- TMA 128x64, 8 warps, 4 stages: 470 / 420.   64x64: ~350 / ~320 (pruned in effect: never wins here).
If warp specialisation loses on the GPU (or fails its correctness check), the best remaining config is
predicted at ~515 / 455: 2-3% short of the bar.

Correctness: all configs pass the CPU interpreter on the tiny cases (``--all-configs``: 81 runs), which
ignores warp_specialize but runs both descriptor paths; the WS schedule itself (12 warps, barriers,
setmaxnreg) only runs on the GPU: run ``tritondbg run tests/bench/variants/attention_prefill.py::
attention_fast --case all`` (includes three odd-shaped GQA / causal D=128 GPU cases) before trusting a
timing. An autotuner picking a wrong-but-fast WS config would show up there as a mismatch.
"""
from __future__ import annotations

import dataclasses
import math

import torch
import triton
import triton.language as tl

from tritondbg import Case
from tritondbg.kernels import attention as _K
from tritondbg.scenarios.attention import SCENARIO as _BASE

try:  # Triton >= 3.4
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - older Triton: pointer path only
    TensorDescriptor = None

LOG2E = _K.LOG2E
_SMEM_LIMIT = 232448  # bytes of shared memory one program may use on H100/H200 (227 KB)


# --------------------------------------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------------------------------------

def _set_block_shapes(nargs):
    """Autotune pre-hook: the host descriptors' block shape must match the config's tile sizes (it is part
    of the kernel's specialisation, tensordesc<bf16[1, 1, 128, 128]>)."""
    bm, bn, d = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["HEAD_DIM"]
    for name, rows in (("QD", bm), ("OD", bm), ("KD", bn), ("VD", bn)):
        desc = nargs[name]
        if TensorDescriptor is not None and isinstance(desc, TensorDescriptor):
            desc.block_shape = [1, 1, rows, d]


def _cfg(bm, bn, warps, stages, ws=False):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "WARP_SPEC": ws}, num_warps=warps, num_stages=stages,
                         pre_hook=_set_block_shapes)


# Order matters only for `tritondbg ir` without a recorded decision (it shows the first config left after
# pruning): the predicted winner comes first.
_CONFIGS = [
    # warp-specialised (Hopper, TMA): 1 producer + 2 consumer warpgroups; BLOCK_M=128 split 2 x 64 rows
    _cfg(128, 128, 4, 2, ws=True),
    _cfg(128, 64, 4, 3, ws=True),
    _cfg(128, 64, 4, 4, ws=True),
    # not specialised: 2 warpgroups x 64 rows, loads issued by all warps (as the bundled kernel)
    _cfg(128, 128, 8, 3),
    _cfg(128, 128, 8, 2),
    _cfg(128, 64, 8, 4),
    # short sequences (many small programs) and the CPU interpreter (16x16; the WS twin runs the
    # device-descriptor path there: warp_specialize is ignored with 2 warps and by the interpreter)
    _cfg(64, 64, 4, 3),
    _cfg(16, 16, 2, 2),
    _cfg(16, 16, 2, 2, ws=True),
]


def _prune_configs(configs, named_args, **kwargs):
    """Early pruning (correctness never depends on it: every config is correct for any shape).
    - N_Q > 128: drop tiles under 64 rows (mostly for the interpreter; they never win there).
    - Warp-specialised 4-warp configs only with TMA and 16-bit inputs (the Hopper WS pass splits the
      128-row tile over two consumer warpgroups of wgmma; fp32 uses IEEE dots, not wgmma, and the pointer
      path is for GPUs without TMA, where the pass is not meant to run).
    - fp32: tiles up to 64x64 (fp32 operands double the registers: 1362 spilled words at 128x128, D=64).
    - Q tile + num_stages K/V tiles must fit shared memory: elt * D * (BLOCK_M + 2 * BLOCK_N * stages)
      (229376 B for bf16 128x128x3; the compiler adds ~1 KB of barriers); the warp-specialised kernel also
      keeps a BLOCK_M x D staging tile for the O store (197024 B measured for 128x128x2, 262680 B for
      128x128x3, which does not fit)."""
    args = dict(named_args)
    args.update(kwargs)
    n_q = args.get("N_Q", 0)
    d = args.get("HEAD_DIM", 128)
    tma = args.get("TMA", True)
    q = args.get("Q")
    elt = q.element_size() if hasattr(q, "element_size") else 2
    kept = []
    for c in configs:
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        if n_q > 128 and bm < 64:
            continue
        ws = c.kwargs["WARP_SPEC"] and c.num_warps == 4
        if ws and (not tma or elt != 2 or d < 64):
            continue
        if elt == 4 and bm * bn > 64 * 64:
            continue
        if elt * d * ((2 if ws else 1) * bm + 2 * bn * c.num_stages) > _SMEM_LIMIT:
            continue
        kept.append(c)
    return kept or [min(configs, key=lambda c: c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"])]


# --------------------------------------------------------------------------------------------------------
# Kernel
# --------------------------------------------------------------------------------------------------------

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
    holding an scf.if (module docstring, 2.)."""
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


@triton.autotune(configs=_CONFIGS, key=["N_Q", "N_KV", "HEAD_DIM", "CAUSAL", "TMA"],
                 prune_configs_by={"early_config_prune": _prune_configs})
@triton.heuristics({"EVEN_KV": lambda args: args["N_KV"] % args["BLOCK_N"] == 0})
@triton.jit
def _attn_fwd_fast_kernel(Q,  # *q (B, H, N_Q, D), read; last dim contiguous (LOADS 0 and 2)
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
                          qk_scale,  # sm_scale * log2(e)
                          HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, NEG_SCALE: tl.constexpr,
                          DOT_PRECISION: tl.constexpr, TMA: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, WARP_SPEC: tl.constexpr,
                          EVEN_KV: tl.constexpr):  # N_KV % BLOCK_N == 0 (heuristic)
    # LOADS (module docstring, 1.): device descriptors for the warp-specialised configs, host otherwise
    LOADS: tl.constexpr = (2 if WARP_SPEC else 1) if TMA else 0
    n_m = tl.cdiv(N_Q, BLOCK_M)
    pid_m = tl.program_id(0)
    if CAUSAL:
        pid_m = n_m - 1 - pid_m  # longest tiles first (module docstring, 3.)
    pid_bh = tl.program_id(1)
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

    if WARP_SPEC and LOADS == 2:
        # one loop, masked everywhere when anything needs a mask (causal, or an N_KV tail): the Hopper WS
        # pass handles a single specialised loop and nothing with dots outside it (module docstring, 2.)
        acc, l_i, m_i = _attn_inner(acc, l_i, m_i, q, k_src, v_src, b, hk, stride_kn, stride_vn,
                                    offs_m, offs_n, offs_d, 0, hi, N_KV, diag_off, qk_scale,
                                    BLOCK_N, HEAD_DIM, CAUSAL or not EVEN_KV, CAUSAL, NEG_SCALE, LOADS, True,
                                    DOT_PRECISION)
    else:
        # unmasked body, then the masked diagonal / tail blocks (as kernels/attention.py)
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


# --------------------------------------------------------------------------------------------------------
# Launch wrapper
# --------------------------------------------------------------------------------------------------------

def _interpreting() -> bool:
    return bool(getattr(triton.knobs.runtime, "interpret", False))


def _tma_target() -> bool:
    """Whether the launch target has TMA: Hopper or newer NVIDIA (also under `tritondbg ir`, whose stub
    driver reports the requested arch); the interpreter emulates descriptors."""
    if TensorDescriptor is None or not hasattr(tl, "make_tensor_descriptor"):
        return False
    if _interpreting():
        return True
    try:
        target = triton.runtime.driver.active.get_current_target()
    except Exception:  # noqa: BLE001 - no driver: no TMA
        return False
    return target.backend == "cuda" and isinstance(target.arch, int) and target.arch >= 90


def _tma_ok(t: torch.Tensor) -> bool:
    """TMA needs a 16-byte aligned base and 16-byte multiples for every stride but the last."""
    es = t.element_size()
    return t.data_ptr() % 16 == 0 and all((s * es) % 16 == 0 for s in t.stride()[:-1])


def _tma_ready(t: torch.Tensor) -> torch.Tensor:
    """``t`` itself when TMA can read it, else an aligned contiguous copy."""
    if _tma_ok(t):
        return t
    return t.clone(memory_format=torch.contiguous_format)


def _ensure_allocator(device) -> None:
    """Device-side descriptors need 128 B of global scratch per descriptor and program; Triton asks the
    allocator set with ``triton.set_allocator`` (a ContextVar). Set one only if the caller has none."""
    try:
        from triton.runtime import _allocation
        if not isinstance(_allocation._allocator.get(), _allocation.NullAllocator):
            return
    except (ImportError, AttributeError):  # pragma: no cover - other Triton layouts: set ours
        pass
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device=device, dtype=torch.int8))


def attention_fast(q, k, v, causal=False, sm_scale=None, use_tma=None):
    """Flash-attention forward. q (B, H, N_Q, D), k/v (B, H_KV, N_KV, D) -> o (B, H, N_Q, D).

    use_tma: None = TMA on Hopper and newer (and under the interpreter); False forces the pointer path."""
    B, H, N_Q, D, H_KV, N_KV = _K.check_prefill_args(q, k, v)
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(D)
    o = torch.empty((B, H, N_Q, D), device=q.device, dtype=q.dtype)
    if o.numel() == 0:
        return o
    if N_KV == 0:
        return o.zero_()

    tma = _tma_target() if use_tma is None else bool(use_tma)
    if tma:
        q, k, v = _tma_ready(q), _tma_ready(k), _tma_ready(v)
        # block shapes are placeholders: the autotune pre-hook sets them per config
        qd = TensorDescriptor.from_tensor(q, [1, 1, 16, D])
        kd = TensorDescriptor.from_tensor(k, [1, 1, 16, D])
        vd = TensorDescriptor.from_tensor(v, [1, 1, 16, D])
        od = TensorDescriptor.from_tensor(o, [1, 1, 16, D])
        if q.is_cuda:
            _ensure_allocator(q.device)
    else:
        qd, kd, vd, od = q, k, v, o  # unused by the pointer path
    qk_scale = float(sm_scale) * LOG2E
    if qk_scale == 0.0:
        # masked scores are +-inf before scaling, and inf * 0 is NaN: a scale of 1e-30 gives the same
        # fp32 result as 0 (|s| * 1e-30 is far below half an ulp of 1, so every exp2 is exactly 1)
        qk_scale = 1e-30
    grid = lambda meta: (triton.cdiv(N_Q, meta["BLOCK_M"]), B * H)
    _attn_fwd_fast_kernel[grid](
        q, k, v, o, qd, kd, vd, od,
        q.stride(0), q.stride(1), q.stride(2),
        k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        o.stride(0), o.stride(1), o.stride(2),
        H, H // H_KV, N_Q, N_KV, qk_scale,
        HEAD_DIM=D, CAUSAL=bool(causal), NEG_SCALE=qk_scale < 0,
        DOT_PRECISION="ieee" if q.dtype == torch.float32 else "tf32", TMA=tma,
    )
    return o


def _attention_ptr(q, k, v, causal=False, sm_scale=None):
    """The pointer path (GPUs without TMA), for checking it under the interpreter."""
    return attention_fast(q, k, v, causal=causal, sm_scale=sm_scale, use_tma=False)


# --------------------------------------------------------------------------------------------------------
# Scenarios: the bundled attention's prefill cases (its decode cases carry their own launch: dropped)
# --------------------------------------------------------------------------------------------------------

_PREFILL_CASES = [c for c in _BASE.cases if c.launch is None]

# Odd GPU shapes for the paths the interpreter cannot reach: it ignores warp_specialize and runs tiles of
# 16, so the warp-specialised single masked loop, 128-row TMA tails and GQA at D=128 only meet odd sizes here
# (`tritondbg run ...::attention_fast --case all` on the H200; small, ~1 ms each).
_ODD_GPU_CASES = [
    Case("prefill_gqa_odd_d128", params=dict(B=2, H=8, H_KV=2, N=1000, N_KV=777, D=128, causal=False),
         dtypes=("bfloat16",), interpret=False,
         description="GQA 4:1, N_Q=1000 / N_KV=777: query and key tails (the WS loop masks every block)"),
    Case("prefill_gqa_odd_d128_causal", params=dict(B=2, H=8, H_KV=2, N=1000, N_KV=1100, D=128, causal=True),
         dtypes=("bfloat16",), interpret=False,
         description="GQA, causal with N_KV > N_Q (diagonal offset 100, not a multiple of the tile)"),
    Case("prefill_cross_d128_causal", params=dict(B=1, H=16, N=1100, N_KV=1000, D=128, causal=True),
         dtypes=("bfloat16", "float16"), interpret=False,
         description="causal with N_Q > N_KV: the first 100 query rows see no key (output 0)"),
]

attention_fast_scenario = dataclasses.replace(
    _BASE, name="attention_fast",
    description="flash-attention prefill variant for Hopper: TMA, warp specialisation, longest-first causal",
    launch=attention_fast, kernels=[_attn_fwd_fast_kernel], cases=_PREFILL_CASES + _ODD_GPU_CASES)

attention_fast_ptr_scenario = dataclasses.replace(
    attention_fast_scenario, name="attention_fast_ptr",
    description="attention_fast forced onto its pointer path (GPUs without TMA)",
    launch=_attention_ptr, cases=[c for c in _PREFILL_CASES if c.interpret])
