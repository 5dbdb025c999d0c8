"""Flash-decoding in ONE launch: ``attention_decode_fast`` (same semantics as ``attention_decode``).

``attention_decode_fast(q, k_cache, v_cache, seq_lens=None, sm_scale=None, num_splits=None) -> o``
    q (B, H, D); k_cache, v_cache (B, H_KV, S_max, D), any strides with a contiguous last dim; seq_lens
    optional (B,) integers, clamped to [0, S_max], 0 gives an output of 0; o (B, H, D) contiguous, dtype of
    q; fp16/bf16/fp32; GQA (H % H_KV == 0). Numerics and checks as ``kernels/attention.py``'s decode.

Design
- Grid = (B * H_KV, NUM_SPLITS). Program (b, hk, split) handles ALL G = H // H_KV query heads of KV head hk
  over one chunk of the sequence, so every K/V byte is read from HBM once (not G times).
  * G == 1 (plain MHA, the H200 benchmark shapes): CUDA-core path. Scores = tl.sum(q * k) over D, fp32;
    P @ V = tl.sum(p[:, None] * v, 0). Per BLOCK_N x D tile each thread issues 16-byte loads (D=128 bf16
    rows are 256 B: 16 lanes x 16 B), two tiles (K, V) per step; the loop is a ``tl.range(...,
    num_stages=LOOP_STAGES)``, which asks Triton's pipeliner to prefetch the K/V tiles of the next
    LOOP_STAGES-1 steps with cp.async (LDGSTS.128) into shared memory.
    ROW_STATE=True (configs R1, R2; G == 1 only): each row slot r of the tile keeps its own running max,
    sum and a (BLOCK_N, D) fp32 accumulator, so the loop has no reduction over rows at all (the plain
    path does three per step, tl.max / tl.sum(p) / tl.sum(p*v) over BLOCK_N rows spread over the warps:
    shared-memory round trips and barriers); rows are combined once after the loop. Costs D FMULs per row
    per step and 64 more fp32 registers per thread.
  * G >= 2: tensor-core path. The G query rows are padded to GP = max(16, next_pow2(G)) rows (masked rows
    are zero queries: finite scores, never stored), S = tl.dot(q, k^T) (GP x BLOCK_N), acc += tl.dot(p, v);
    fp32 inputs use input_precision="ieee". The mma has ~50x headroom here: a decode step is pure streaming.
- Chunking: chunk = cdiv(cdiv(seq_len, NUM_SPLITS), BLOCK_N) * BLOCK_N (as attention_decode); trailing
  splits of short sequences can be empty (they publish lse = -inf and a zero partial).
- One launch: NUM_SPLITS > 1 -> every split writes its normalised fp32 partial (G x D) and its log2-sum-exp2
  (G) to a cached workspace, then bumps the (b, hk) arrival counter with an acq_rel atomic. The split that
  sees NUM_SPLITS - 1 earlier arrivals is the last: it merges the NUM_SPLITS partials in the fixed order
  0..NUM_SPLITS-1 (online max / rescale, empty splits weigh 0, all-empty -> 0), writes o once and stores 0
  into the counter. Nobody waits (no spinning), so any grid size and scheduling order is safe, and the
  order of the merge, hence every bit of o, does not depend on which split is last: deterministic.
  NUM_SPLITS == 1 writes o directly (no workspace, no atomic).
- Split count (num_splits=None, ``_num_splits``): tiles = B*H_KV; 1 split if tiles >= 4*SMs, else the
  smallest count giving >= 4*SMs programs whose last wave is >= 94% full for both 2 and 3 resident programs
  per SM (chunks >= 512 tokens, <= 64 splits). H200 (132 SMs), D=128: B=1/8k H=32 -> 16 splits (512
  programs of 512 tokens); B=8/32k -> 3 (768 programs of 10944 tokens); B=32/4k -> 1 (1024 programs);
  B=1/32k -> 24; B=8/32k with H_KV=8 -> 12.
- Host: every value derived from (shapes, strides, dtypes, devices, seq_lens' shape/dtype/contiguity,
  sm_scale, num_splits) is cached in a plan (split count, grid, scalars, constexprs, workspace, counters).
  The first CUDA call of a plan goes through the autotuner, then builds a launcher bound to the compiled
  kernel of the chosen config (``CompiledKernel[grid]``: the call JITFunction.run makes, launch hooks
  included) and launches once more through it into a NaN-filled o, which it returns (so any one-call
  correctness check covers the cached launcher). Later calls: ~15 attribute reads, one dict lookup, an
  alignment check of the 4 input pointers, torch.empty(o) and that launch: no autotuner, no binder, no
  other torch op. A seq_lens that is not int32-contiguous is converted each call (never cached). When a
  tool patches the launch path (tritondbg's config pinning, ``ir``'s capture) every call goes through the
  autotuner, so pinned configs are honoured.
- Limits: launches sharing a device must not overlap on two streams (shared workspace/counters); a launch
  killed midway leaves counters non-zero (on the CPU the wrapper checks and repairs them after each call).
  D a power of two in 16..128. Workspace offsets are 64-bit.

Memory ordering (why the last split reads complete partials)
- Publish: all threads store their part of the partial (plain st.global), ``tl.debug_barrier()`` (bar.sync:
  orders every thread's stores before the barrier completes at CTA scope), then the scalar
  ``atomic_add(sem="acq_rel", scope="gpu")`` is issued by one thread; its release is cumulative, so it
  publishes the whole CTA's partial (CUTLASS split-K semaphore pattern).
- Acquire: the last arrival's RMW reads the value written by the previous RMW in the counter's modification
  order (RMWs extend release sequences), so it synchronises with every earlier split's release. Triton
  broadcasts the atomic's result to all threads via shared memory + bar.sync, ordering the acquire before
  every thread's partial loads; those loads also use cache_modifier=".cg" (L2, never a stale L1 line).
- Reset: the last split stores 0 into its counter; every split of that (b, hk) has already arrived, and
  kernel boundaries on one stream order the store before the next launch's atomics.
- Interpreter: programs run one after another; the last program of each (b, hk) sees NUM_SPLITS - 1 as on
  the GPU; the wrapper asserts every counter is back at 0 after a CPU launch.

Compiled (sm_90, CPU-only machine, ``tritondbg ir ... --stage sass --stats --all-configs``), G = 1 path at
B=8/32k bf16, Triton 3.9 / 3.6: no spills anywhere; registers F1 89/80, F2 87/80, F3 94/95, F4 109/79,
F5 64/64, R1 184/184, R2 149/185; shared memory F1 65-66 KiB (the pipeliner keeps LOOP_STAGES-1 K+V buffers of 32 KiB), F2 66-68
KiB (one 64 KiB buffer), F3 97-98 KiB, F4 2-4 KiB, F5 33-34 KiB, R1/R2 64 KiB. K/V loads: LDGSTS.E.BYPASS.128 (16-byte
cp.async: 48 in F1 = 8 per thread per tile x 2 tiles x 3 copies of the pipelined body), F4 LDG.E.128.
Protocol: BAR.SYNC; MEMBAR.ALL.GPU; ATOMG.E.ADD.STRONG.GPU; CCTL.IVALL; merge loads LDG.E.STRONG.GPU.
GQA (G=4 -> 16 rows) compiles to mma.sync HMMA (wgmma needs 64 rows), 80-116 regs, no spills.

PREDICTIONS for the H200 (nothing here ran on a GPU; bf16, D=128, H=32; TB/s of K/V reads as
``bytes_moved``; "graph" = CUDA-graph timing, "eager" = back-to-back calls from Python)
- Why it can reach cuDNN: per 16 B of K/V the G=1 loop issues ~17 thread instructions (LDS, 8 cvt, 8 FFMA,
  a share of the shuffles/exp2): 4.4 TB/s needs ~5e12 of the H200's ~3.3e13 thread-instr/s (15%); shared
  memory carries the bytes twice (cp.async in, LDS out): 9 of ~33 TB/s. Bytes in flight needed at 4.4 TB/s
  and ~1.5 us loaded latency: 50 KB per SM. F1 has 3 CTAs/SM (smem 66 KiB, 89 regs x 128 threads) with up
  to 2 tiles (64 KiB) in flight each: ~190 KiB per SM, 4x margin.
- F1 BLOCK_N=64 w4 s3 (likely pick everywhere; 396 slots):
    B=8/32k (4.29 GB, 768 programs, 1.94 waves): 4.15-4.35 TB/s, 990-1035 us graph (two-launch: 1101;
      cuDNN 957; flash 1686) -> 0.92-0.97x cuDNN, 1.63-1.70x flash.
    B=32/4k (2.15 GB, 1024 programs, 2.6 waves, no merge): 4.1-4.3 TB/s, 500-525 us (574; cuDNN 488;
      flash 876) -> 0.93-0.98x cuDNN, 1.67-1.75x flash.
    B=1/8k (134 MB, 512 programs of 8 steps; the 2-tile pipeline fill is 25% of a program, +1 merge per
      head): 3.0-3.5 TB/s, 38-45 us graph (two-launch 51; cuDNN 36); eager ~45-55 us (GPU-bound: the
      cached launcher costs ~10-20 us of Python on the H200 VM, the old path ~100 us + 2 launches: 143 us).
    GQA B=8/32k H_KV=8 (1.07 GB, 768 programs): 4.0-4.3 TB/s, 250-270 us.
- F2 BLOCK_N=128 w8 s2 (2 CTAs/SM by registers: 87 x 256; one 64 KiB tile ahead each, 128 KiB/SM):
    3.9-4.2 TB/s on the long cases (fewer, larger steps; less prefetch depth); B=1/8k (kept by the prune:
    4 steps per program) 2.6-3.1 TB/s.
- F3 BLOCK_N=64 w4 s4 (98 KiB -> 2 CTAs/SM, 3 tiles ahead each, 192 KiB/SM): within 2% of F1.
- F4 BLOCK_N=128 w8 s1 (registers only, 2 CTAs/SM, 64 KiB in flight each while the math waits): 3.4-3.9.
- R1 BLOCK_N=64 w4 s3 ROW_STATE (184 regs on 3.9 -> 2 CTAs/SM, 64 KiB smem, 128 KiB in flight per SM):
    no reductions over rows in the loop; my best guess for the fastest G=1 config on the long cases if F1's
    per-step cross-warp reductions are what holds it near the old kernel's 3.9 TB/s: 4.2-4.4 TB/s
    (B=8/32k 975-1020 us, B=32/4k 490-510 us); B=1/8k as F1.
- R2 BLOCK_N=128 w8 s2 ROW_STATE (149 / 185 regs (3.9 / 3.6) x 256 threads -> 1 CTA/SM, one 64 KiB tile ahead): latency
    bound: 3.6-4.0 TB/s.
- F5 BLOCK_N=32 (tests and short chunks; kept only for chunks < 2048 tokens, e.g. B=1/8k: 2.5-3.0 TB/s).
- The >= 1.0x cuDNN target is at the edge (predicted 0.92-0.98x); >= 1.6x the flash backend is predicted
  met on B=8/32k and B=32/4k. If F1 is well below 4 TB/s on the H200, first suspects: the FMA path's
  cross-warp tl.sum over rows for P@V (shared-memory round trip each step; ncu: smem/barrier stalls) and
  too few splits at B=8 (try num_splits=6: 1536 programs).
"""
from __future__ import annotations

import dataclasses
import math

import torch
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from tritondbg.kernels import attention as _base
from tritondbg.scenarios.attention import SCENARIO as _BASE

LOG2E = 1.4426950408889634
_HEAD_DIMS = (16, 32, 64, 128)
_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


# ---------------------------------------------------------------------------------------------------------
# Autotune configs: BLOCK_N keys per step, LOOP_STAGES = the K/V loop's software-pipelining depth.
# Shared memory per stage = 2 (K, V) * BLOCK_N * D * elem bytes (32 KiB at 64 x 128 bf16).
# ---------------------------------------------------------------------------------------------------------
def _cfg(bn, stages, warps, rows=False):
    return triton.Config(dict(BLOCK_N=bn, LOOP_STAGES=stages, ROW_STATE=rows), num_warps=warps,
                         num_stages=stages)


CONFIGS = [
    _cfg(64, 3, 4),    # F1: 96 KiB smem (D=128 bf16) -> 2 CTAs/SM
    _cfg(128, 2, 8),   # F2: 128 KiB -> 1 CTA/SM, half the loop trips
    _cfg(64, 4, 4),    # F3: 128 KiB, deeper prefetch
    _cfg(128, 1, 8),   # F4: no cp.async: plain 16-byte loads in registers, occupancy hides latency
    _cfg(32, 3, 4),    # F5: short chunks / small D (tests, B=1 with many splits)
    # G == 1 only: per-row softmax state (no cross-warp reduction inside the loop; see the kernel)
    _cfg(64, 3, 4, True),   # R1
    _cfg(128, 2, 8, True),  # R2
]


def _prune(configs, named_args, **kwargs):
    """Keep configs whose tile is no longer than a typical chunk and whose pipelined smem fits (~220 KiB)."""
    args = {**named_args, **kwargs}
    s_max, ns = int(args["S_MAX"]), max(1, int(args["NUM_SPLITS"]))
    d, es = int(args["HEAD_DIM"]), int(args["ELEM_BYTES"])
    chunk = triton.cdiv(s_max, ns)
    kept = []
    for c in configs:
        bn, st = c.kwargs["BLOCK_N"], c.kwargs["LOOP_STAGES"]
        if c.kwargs["ROW_STATE"] and int(args["GP"]) != 1:  # the tensor-core path has no row variant
            continue
        if 2 * bn * d * es * max(st, 1) > 220 * 1024:
            continue
        if bn > 32 and chunk < 4 * bn:  # fewer than 4 steps per split: the small tile
            continue
        if bn == 32 and chunk >= 2048:
            continue
        kept.append(c)
    return kept or [min(configs, key=lambda c: c.kwargs["BLOCK_N"])]


@triton.autotune(configs=CONFIGS, key=["S_MAX", "HEAD_DIM", "GP", "NUM_SPLITS", "ELEM_BYTES"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def _attn_decode_fast_kernel(
    Q, K, V,            # q (B, H, D); k/v cache (B, H_KV, S_MAX, D); last dims contiguous
    SEQ_LENS,           # int32 (B,) if HAS_SEQ_LENS
    O,                  # o (B, H, D), written by the last split (or the only one)
    WS_O,               # fp32 workspace: partial of (b, h, split) at ((b*H + h)*NUM_SPLITS + split)*D
    WS_LSE,             # fp32 workspace: lse of (b, h, split) at (b*H + h)*NUM_SPLITS + split
    CNT,                # int32 counters, one per (b, hk); 0 on entry and on exit
    stride_qb, stride_qh,
    stride_kb, stride_kh, stride_ks,
    stride_vb, stride_vh, stride_vs,
    stride_ob, stride_oh,
    H, H_KV, GROUP, S_MAX, NUM_SPLITS,
    qk_scale,           # sm_scale * log2(e)
    HEAD_DIM: tl.constexpr, GP: tl.constexpr, ELEM_BYTES: tl.constexpr,
    HAS_SEQ_LENS: tl.constexpr, USE_DOT: tl.constexpr, SINGLE_SPLIT: tl.constexpr, FP32_DOT: tl.constexpr,
    BLOCK_N: tl.constexpr, LOOP_STAGES: tl.constexpr, ROW_STATE: tl.constexpr,
):
    tile = tl.program_id(0)  # b * H_KV + hk
    split = tl.program_id(1)
    b = tile // H_KV
    hk = tile % H_KV
    if HAS_SEQ_LENS:
        seq_len = tl.load(SEQ_LENS + b)
        seq_len = tl.minimum(tl.maximum(seq_len, 0), S_MAX)
    else:
        seq_len = S_MAX
    chunk = tl.cdiv(tl.cdiv(seq_len, NUM_SPLITS), BLOCK_N) * BLOCK_N
    start = split * chunk
    end = tl.minimum(start + chunk, seq_len)

    b64 = b.to(tl.int64)
    hk64 = hk.to(tl.int64)
    k_base = K + b64 * stride_kb + hk64 * stride_kh
    v_base = V + b64 * stride_vb + hk64 * stride_vh
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_g = tl.arange(0, GP)
    g_ok = offs_g < GROUP
    h64 = hk64 * GROUP + offs_g  # query heads of this program (GP, rows >= GROUP masked)

    if USE_DOT:
        # ---- tensor cores: the GROUP query rows padded to GP >= 16 -------------------------------------
        q = tl.load(Q + b64 * stride_qb + h64[:, None] * stride_qh + offs_d[None, :], mask=g_ok[:, None],
                    other=0.0)
        m_i = tl.full([GP], float("-inf"), dtype=tl.float32)
        l_i = tl.zeros([GP], dtype=tl.float32)
        acc = tl.zeros([GP, HEAD_DIM], dtype=tl.float32)
        for start_n in tl.range(start, end, BLOCK_N, num_stages=LOOP_STAGES):
            cols = start_n + offs_n
            kv_ok = cols < end
            k = tl.load(k_base + cols[:, None] * stride_ks + offs_d[None, :], mask=kv_ok[:, None], other=0.0)
            if FP32_DOT:
                s = tl.dot(q, tl.trans(k), input_precision="ieee")
            else:
                s = tl.dot(q, tl.trans(k))
            s = tl.where(kv_ok[None, :], s * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, 1))  # finite: every step has >= 1 valid key
            p = tl.math.exp2(s - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :], mask=kv_ok[:, None], other=0.0)
            if FP32_DOT:
                pv = tl.dot(p, v, input_precision="ieee")
            else:
                pv = tl.dot(p.to(v.dtype), v)
            acc = acc * alpha[:, None] + pv
            m_i = m_new
    elif ROW_STATE:
        # ---- CUDA cores, one query head (GROUP == GP == 1), per-row softmax state ----------------------------
        q1 = tl.load(Q + b64 * stride_qb + hk64 * stride_qh + offs_d).to(tl.float32) * qk_scale
        # Per-row softmax state: row slot r of the tile keeps its own running max m_r, sum l_r and a
        # (BLOCK_N, D) fp32 accumulator, so the loop has no cross-warp reduction (no tl.max/tl.sum over the
        # rows, which go through shared memory and a barrier every step): only the in-warp sum over D for
        # the scores. The rows are combined once after the loop. Costs D more FMULs per row per step.
        m_r = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
        l_r = tl.zeros([BLOCK_N], dtype=tl.float32)
        acc2 = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
        for start_n in tl.range(start, end, BLOCK_N, num_stages=LOOP_STAGES):
            cols = start_n + offs_n
            kv_ok = cols < end
            k = tl.load(k_base + cols[:, None] * stride_ks + offs_d[None, :], mask=kv_ok[:, None], other=0.0)
            s2 = tl.sum(q1[None, :] * k.to(tl.float32), 1)
            s2 = tl.where(kv_ok, s2, float("-inf"))
            m_new2 = tl.maximum(m_r, s2)
            m_use2 = tl.where(m_new2 == float("-inf"), 0.0, m_new2)  # row slot not yet valid: weights 0
            alpha2 = tl.math.exp2(m_r - m_use2)
            p2 = tl.math.exp2(s2 - m_use2)
            l_r = l_r * alpha2 + p2
            v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :], mask=kv_ok[:, None], other=0.0)
            acc2 = acc2 * alpha2[:, None] + p2[:, None] * v.to(tl.float32)
            m_r = m_new2
        m_all = tl.max(m_r, 0)
        m_all_use = tl.where(m_all == float("-inf"), 0.0, m_all)  # empty chunk: every weight 0
        w_r = tl.math.exp2(m_r - m_all_use)
        acc = tl.sum(acc2 * w_r[:, None], 0)[None, :]  # (1, D)
        l_i = tl.zeros([GP], dtype=tl.float32) + tl.sum(l_r * w_r, 0)
        m_i = tl.zeros([GP], dtype=tl.float32) + m_all
    else:
        # ---- CUDA cores, one query head (GROUP == GP == 1), one running max per tile -----------------------
        q1 = tl.load(Q + b64 * stride_qb + hk64 * stride_qh + offs_d).to(tl.float32) * qk_scale
        m1 = tl.max(tl.full([BLOCK_N], float("-inf"), dtype=tl.float32), 0)
        l1 = tl.sum(tl.zeros([BLOCK_N], dtype=tl.float32), 0)
        acc1 = tl.zeros([HEAD_DIM], dtype=tl.float32)
        for start_n in tl.range(start, end, BLOCK_N, num_stages=LOOP_STAGES):
            cols = start_n + offs_n
            kv_ok = cols < end
            k = tl.load(k_base + cols[:, None] * stride_ks + offs_d[None, :], mask=kv_ok[:, None], other=0.0)
            s1 = tl.sum(q1[None, :] * k.to(tl.float32), 1)
            s1 = tl.where(kv_ok, s1, float("-inf"))
            m_new1 = tl.maximum(m1, tl.max(s1, 0))
            p1 = tl.math.exp2(s1 - m_new1)
            alpha1 = tl.math.exp2(m1 - m_new1)
            l1 = l1 * alpha1 + tl.sum(p1, 0)
            v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :], mask=kv_ok[:, None], other=0.0)
            acc1 = acc1 * alpha1 + tl.sum(p1[:, None] * v.to(tl.float32), 0)
            m1 = m_new1
        acc = acc1[None, :]          # (1, D)
        l_i = tl.zeros([GP], dtype=tl.float32) + l1
        m_i = tl.zeros([GP], dtype=tl.float32) + m1

    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # empty chunk: acc == 0 -> partial 0
    o = acc / l_safe[:, None]
    o_ptrs = O + b64 * stride_ob + h64[:, None] * stride_oh + offs_d[None, :]
    if SINGLE_SPLIT:
        tl.store(o_ptrs, o.to(O.dtype.element_ty), mask=g_ok[:, None])
    else:
        row = (b64 * H + h64) * NUM_SPLITS  # (GP,) workspace row of split 0 of each head
        lse = tl.where(l_i > 0.0, m_i + tl.math.log2(l_safe), float("-inf"))
        tl.store(WS_O + (row + split)[:, None] * HEAD_DIM + offs_d[None, :], o, mask=g_ok[:, None])
        tl.store(WS_LSE + row + split, lse, mask=g_ok)
        # publish (see the module docstring): CTA barrier, then one thread's gpu-scope acq_rel RMW
        tl.debug_barrier()
        arrived = tl.atomic_add(CNT + tile, 1, sem="acq_rel", scope="gpu")
        if arrived == NUM_SPLITS - 1:
            # last split of (b, hk): merge all splits in the fixed order 0..NUM_SPLITS-1
            m = tl.full([GP], float("-inf"), dtype=tl.float32)
            den = tl.zeros([GP], dtype=tl.float32)
            num = tl.zeros([GP, HEAD_DIM], dtype=tl.float32)
            for s_idx in range(0, NUM_SPLITS):
                lse_s = tl.load(WS_LSE + row + s_idx, mask=g_ok, other=float("-inf"), cache_modifier=".cg")
                o_s = tl.load(WS_O + (row + s_idx)[:, None] * HEAD_DIM + offs_d[None, :], mask=g_ok[:, None],
                              other=0.0, cache_modifier=".cg")
                m_new = tl.maximum(m, lse_s)
                m_use = tl.where(m_new == float("-inf"), 0.0, m_new)  # all empty so far: weights 0
                alpha = tl.math.exp2(m - m_use)
                w = tl.math.exp2(lse_s - m_use)
                den = den * alpha + w
                num = num * alpha[:, None] + w[:, None] * o_s
                m = m_new
            den = tl.where(den == 0.0, 1.0, den)  # every split empty (seq_len 0): output 0
            tl.store(o_ptrs, (num / den[:, None]).to(O.dtype.element_ty), mask=g_ok[:, None])
            tl.store(CNT + tile, 0)  # reset for the next launch


# ---------------------------------------------------------------------------------------------------------
# Host
# ---------------------------------------------------------------------------------------------------------
def _num_splits(tiles: int, s_max: int, num_sms: int) -> int:
    """Splits per (b, hk). 1 when the tiles alone give >= 4 programs per SM. Otherwise the smallest split
    count giving >= 4*SMs programs whose last wave is >= 94% full both for 2 and for 3 resident programs per
    SM (the configs' occupancy: 66-100 KiB of smem each); failing that, the fullest last wave up to 16*SMs
    programs; chunks >= 512 tokens and <= 64 splits always (if no count reaches 4*SMs programs: the
    largest allowed)."""
    if tiles <= 0 or s_max <= 0 or tiles >= 4 * num_sms:
        return 1
    hi = max(1, min(s_max // 512, 64))
    best, best_loss = hi, None
    for ns in range(1, hi + 1):
        p = tiles * ns
        if p < 4 * num_sms:
            continue
        if p > 16 * num_sms and best_loss is not None:
            break
        loss = max((triton.cdiv(p, r) * r - p) / p for r in (2 * num_sms, 3 * num_sms))
        if loss <= 0.065:
            return ns
        if best_loss is None or loss < best_loss - 1e-9:
            best, best_loss = ns, loss
    return best


_BUFFERS: dict = {}   # device -> (ws_o, ws_lse, cnt)
_PLANS: dict = {}     # call signature -> _Plan


def _buffers(device, n_rows: int, d: int, tiles: int):
    cur = _BUFFERS.get(device)
    need_o, need_l, need_c = n_rows * d, n_rows, tiles
    if cur is None or cur[0].numel() < need_o or cur[1].numel() < need_l or cur[2].numel() < need_c:
        p2 = triton.next_power_of_2
        old = cur or (torch.empty(0), torch.empty(0), torch.empty(0))
        cur = (torch.empty(max(p2(need_o), old[0].numel()), device=device, dtype=torch.float32),
               torch.empty(max(p2(need_l), old[1].numel()), device=device, dtype=torch.float32),
               torch.zeros(max(p2(need_c), old[2].numel()), device=device, dtype=torch.int32))
        _BUFFERS[device] = cur
    return cur


class _Plan:
    __slots__ = ("grid", "out_shape", "ws_o", "ws_lse", "cnt", "scalars", "consts", "cpu", "device", "dtype",
                 "runner", "checked")


_SCALAR_NAMES = ("stride_qb", "stride_qh", "stride_kb", "stride_kh", "stride_ks", "stride_vb", "stride_vh",
                 "stride_vs", "stride_ob", "stride_oh", "H", "H_KV", "GROUP", "S_MAX", "NUM_SPLITS", "qk_scale")
_TENSOR_ARGS = ("Q", "K", "V", "SEQ_LENS", "O", "WS_O", "WS_LSE", "CNT")
_TUNER_RUN, _JIT_RUN = Autotuner.run, JITFunction.run


def _pristine() -> bool:
    """No tool patched the launch path (tritondbg's config pinning, the ir capture, an autotune watcher):
    only then may a call skip the autotuner and JITFunction.run."""
    k = _attn_decode_fast_kernel
    return type(k).run is _TUNER_RUN and "run" not in vars(k) and JITFunction.run is _JIT_RUN


def _runner(plan, compiled, config):
    """``CompiledKernel[grid]`` (what JITFunction.run calls: current device/stream, launch hooks) and the
    arguments after the 8 tensors in the kernel's parameter order (= JITFunction.run's bound_args)."""
    if hasattr(compiled, "result"):  # Triton 3.6 asynchronous compilation: a future
        compiled = compiled.result()
    names = list(_attn_decode_fast_kernel.fn.arg_names)
    if tuple(names[:len(_TENSOR_ARGS)]) != _TENSOR_ARGS:
        raise RuntimeError(f"attention_decode_fast: unexpected kernel signature {names}")
    values = {**dict(zip(_SCALAR_NAMES, plan.scalars)), **plan.consts, **config.kwargs}
    tail = tuple(values[n] for n in names[len(_TENSOR_ARGS):])
    run = compiled[plan.grid + (1,)]
    return lambda q, k, v, sl, o, ws_o, ws_lse, cnt: run(q, k, v, sl, o, ws_o, ws_lse, cnt, *tail)


def _make_plan(q, k_cache, v_cache, seq_lens, sm_scale, num_splits):
    B, H, D = q.shape
    _, H_KV, S_MAX, _ = k_cache.shape
    G = H // H_KV
    tiles = B * H_KV
    if num_splits is None:
        num_splits = _num_splits(tiles, S_MAX, _base._num_sms(q.device))
    num_splits = int(num_splits)
    if num_splits < 1:
        raise ValueError(f"num_splits must be >= 1, got {num_splits}")
    use_dot = G > 1
    gp = max(16, triton.next_power_of_2(G)) if use_dot else 1
    single = num_splits == 1
    plan = _Plan()
    plan.runner, plan.checked = None, set()
    plan.grid = (tiles, num_splits)
    plan.out_shape = (B, H, D)
    plan.device, plan.dtype, plan.cpu = q.device, q.dtype, q.device.type == "cpu"
    if single:
        plan.ws_o = plan.ws_lse = plan.cnt = None
    else:
        plan.ws_o, plan.ws_lse, plan.cnt = _buffers(q.device, B * H * num_splits, D, tiles)
    scale = 1.0 / math.sqrt(D) if sm_scale is None else float(sm_scale)
    plan.scalars = (q.stride(0), q.stride(1),
                    k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
                    v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
                    H * D, D,  # o is contiguous
                    H, H_KV, G, S_MAX, num_splits, scale * LOG2E)
    plan.consts = dict(HEAD_DIM=D, GP=gp, ELEM_BYTES=q.element_size(), HAS_SEQ_LENS=seq_lens is not None,
                       USE_DOT=use_dot, SINGLE_SPLIT=single, FP32_DOT=q.dtype == torch.float32)
    return plan


def _check(q, k_cache, v_cache):
    _base._check_common("q", q, 3)
    _base._check_common("k_cache", k_cache, 4)
    _base._check_common("v_cache", v_cache, 4)
    B, H, D = q.shape
    Bk, H_KV, _, Dk = k_cache.shape
    if k_cache.shape != v_cache.shape:
        raise ValueError(f"k_cache and v_cache shapes differ: {tuple(k_cache.shape)} vs {tuple(v_cache.shape)}")
    if Bk != B or Dk != D:
        raise ValueError(f"cache shape {tuple(k_cache.shape)} does not match q shape {tuple(q.shape)}")
    if H_KV == 0 or H % H_KV != 0:
        raise ValueError(f"query heads H={H} must be a multiple of kv heads H_KV={H_KV}")
    if not (q.dtype == k_cache.dtype == v_cache.dtype):
        raise ValueError(f"q, k_cache, v_cache dtypes differ: {q.dtype}, {k_cache.dtype}, {v_cache.dtype}")
    if not (q.device == k_cache.device == v_cache.device):
        raise ValueError(f"q, k_cache, v_cache devices differ: {q.device}, {k_cache.device}, {v_cache.device}")
    if D not in _HEAD_DIMS:
        raise ValueError(f"head dim {D} not supported; use one of {_HEAD_DIMS}")


def _seq_lens_arg(seq_lens, B, device):
    if seq_lens is None:
        return None
    if not isinstance(seq_lens, torch.Tensor):
        seq_lens = torch.tensor(list(seq_lens), dtype=torch.int32, device=device)
    if seq_lens.shape != (B,):
        raise ValueError(f"seq_lens must have shape ({B},), got {tuple(seq_lens.shape)}")
    if seq_lens.dtype.is_floating_point or seq_lens.dtype.is_complex or seq_lens.dtype == torch.bool:
        raise ValueError(f"seq_lens must be an integer tensor, got {seq_lens.dtype}")
    if seq_lens.device != device:
        raise ValueError(f"seq_lens is on {seq_lens.device}, q on {device}")
    if seq_lens.dtype != torch.int32 or not seq_lens.is_contiguous():
        seq_lens = seq_lens.to(torch.int32).contiguous()
    return seq_lens


def attention_decode_fast(q, k_cache, v_cache, seq_lens=None, sm_scale=None, num_splits=None):
    """One-launch flash-decoding. q (B, H, D), k/v cache (B, H_KV, S_max, D), seq_lens (B,) or None."""
    try:
        sl_sig = None if seq_lens is None else (seq_lens.shape, seq_lens.dtype, seq_lens.device,
                                                seq_lens.is_contiguous())
        sig = (q.shape, q.stride(), q.dtype, q.device, k_cache.shape, k_cache.stride(), k_cache.dtype,
               k_cache.device, v_cache.stride(), v_cache.shape, v_cache.dtype, v_cache.device, sl_sig,
               sm_scale, num_splits)
        plan = _PLANS.get(sig)
    except (AttributeError, TypeError):  # not tensors (or a list of lengths): the full path
        sig = plan = None
    if plan is None:
        _check(q, k_cache, v_cache)
        seq_lens = _seq_lens_arg(seq_lens, q.shape[0], q.device)
        B, H, D = q.shape
        if B * H * D == 0:
            return torch.empty((B, H, D), device=q.device, dtype=q.dtype)
        if k_cache.shape[2] == 0:
            return torch.zeros((B, H, D), device=q.device, dtype=q.dtype)
        plan = _make_plan(q, k_cache, v_cache, seq_lens, sm_scale, num_splits)
        if sig is not None and sl_sig is not None and (seq_lens.dtype != sl_sig[1] or not sl_sig[3]):
            sig = None  # seq_lens needed a conversion: do not skip it next time
        if sig is not None:
            _PLANS[sig] = plan
    elif (plan.runner is not None and _pristine()
          and not ((q.data_ptr() | k_cache.data_ptr() | v_cache.data_ptr()
                    | (0 if seq_lens is None else seq_lens.data_ptr())) & 15)):
        # ---- steady state on CUDA: one dict lookup, torch.empty, the compiled kernel's launcher ----------
        o = torch.empty(plan.out_shape, device=plan.device, dtype=plan.dtype)
        plan.runner(q, k_cache, v_cache, o if seq_lens is None else seq_lens, o,
                    o if plan.ws_o is None else plan.ws_o, o if plan.ws_lse is None else plan.ws_lse,
                    o if plan.cnt is None else plan.cnt)
        return o
    o = torch.empty(plan.out_shape, device=plan.device, dtype=plan.dtype)
    args = (q, k_cache, v_cache, o if seq_lens is None else seq_lens, o,
            o if plan.ws_o is None else plan.ws_o, o if plan.ws_lse is None else plan.ws_lse,
            o if plan.cnt is None else plan.cnt)
    compiled = _attn_decode_fast_kernel[plan.grid](*args, *plan.scalars, **plan.consts)
    if plan.cpu:
        if plan.cnt is not None and bool(plan.cnt.any()):
            plan.cnt.zero_()
            raise RuntimeError("attention_decode_fast: the launch left arrival counters non-zero")
        return o
    aligned = not ((q.data_ptr() | k_cache.data_ptr() | v_cache.data_ptr()
                    | (0 if seq_lens is None else seq_lens.data_ptr())) & 15)
    if compiled is None or sig is None or not aligned or plan is not _PLANS.get(sig):
        return o
    config = _attn_decode_fast_kernel.best_config  # the config that just ran (autotuned or pinned)
    key = (tuple(sorted(config.kwargs.items())), config.num_warps, config.num_stages)
    if key in plan.checked:
        return o
    # First call of this plan and config: launch once more through the launcher the steady state uses,
    # into a NaN-filled o, and return that, so a single-call correctness check (tritondbg run/check pin
    # configs and never reach the steady state) covers the cached launcher too.
    runner = _runner(plan, compiled, config)
    plan.checked.add(key)
    o.fill_(float("nan"))
    runner(q, k_cache, v_cache, args[3], o, args[5], args[6], args[7])
    if _pristine():
        plan.runner = runner
    return o


reference = _base.reference_decode


# ---------------------------------------------------------------------------------------------------------
# tritondbg scenario: the bundled attention scenario's decode cases, launched through this variant.
# ---------------------------------------------------------------------------------------------------------
def _pin(**cfg):
    if not any(all(c.kwargs.get(k) == v for k, v in cfg.items()) for c in CONFIGS):
        raise ValueError(f"attention_decode scenario: no listed config matches {cfg}")
    return cfg


_BASE_CASES = {c.name: c for c in _BASE.cases}
_TINY = _pin(BLOCK_N=64, LOOP_STAGES=3, ROW_STATE=False)
_TINY32 = _pin(BLOCK_N=32, LOOP_STAGES=3, ROW_STATE=False)
_TINY_ROWS = _pin(BLOCK_N=64, LOOP_STAGES=3, ROW_STATE=True)


def _case(base_name, **kw):
    return dataclasses.replace(_BASE_CASES[base_name], launch=attention_decode_fast, **kw)


SCENARIO = dataclasses.replace(
    _BASE,
    name="attention_decode_fast",
    description="flash-decoding in one launch: GQA heads share K/V loads, the last-arriving split merges the "
                "splits in a fixed order (deterministic), cached plan/workspace",
    launch=attention_decode_fast,
    reference=_base.reference_decode,
    kernels=[_attn_decode_fast_kernel],
    cases=[
        _case("decode_tiny", config=_TINY),
        _case("decode_tiny_ragged", config=_TINY),
        dataclasses.replace(_BASE_CASES["decode_tiny_ragged"], name="decode_tiny_gqa4_single",
                            params=dict(B=2, H=8, H_KV=2, S=100, D=32, seq_lens=[100, 0], num_splits=1),
                            dtypes=("float32", "bfloat16"), config=_TINY32, launch=attention_decode_fast,
                            description="GQA group of 4 (tensor-core path, padded to 16 rows), one split "
                                        "(direct store), a length-0 sequence"),
        dataclasses.replace(_BASE_CASES["decode_tiny"], name="decode_tiny_mha_auto",
                            params=dict(B=1, H=2, S=1100, D=64), dtypes=("float16",), config=_TINY32,
                            launch=attention_decode_fast,
                            description="MHA, no seq_lens, automatic split count (2 splits of 1100)"),
        _case("decode_tiny", name="decode_tiny_rows", config=_TINY_ROWS,
              description="decode_tiny through the per-row softmax state variant (ROW_STATE=True): 4 splits, "
                          "an empty split, odd cache length"),
        _case("decode_b1_h32_kv8k_d128"),
        _case("decode_b8_h32_kv32k_d128"),
        _case("decode_b32_h32_kv4k_d128"),
        # extra (not in the base scenario): GQA, 4 query heads per KV head -> the tensor-core path
        dataclasses.replace(_BASE_CASES["decode_b8_h32_kv32k_d128"], name="decode_b8_h32_hkv8_kv32k_d128",
                            params=dict(B=8, H=32, H_KV=8, S=32768, D=128), launch=attention_decode_fast,
                            description="GQA group 4 (padded to 16 mma rows): K/V of a KV head read once"),
    ],
)
