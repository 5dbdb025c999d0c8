"""Flash-decoding in one launch (``attention_decode``, re-exported by kernels/attention.py, whose docstring
gives the contract and the measurements).

Decode design (flash-decoding in ONE launch). Grid (B * H_KV, NUM_SPLITS): program (b, hk, split) handles
all G = H // H_KV query heads of KV head hk over one chunk of the sequence, so K/V are read once per KV head.
G == 1: CUDA-core FMA + tl.sum (ROW_STATE configs keep a running max/sum per row slot of the tile: no
reduction over rows inside the loop); G >= 2: tl.dot with the group padded to 16 rows. The K/V loop is a
``tl.range(..., num_stages=LOOP_STAGES)`` (16-byte cp.async). NUM_SPLITS > 1: each split writes its
normalised fp32 partial and log2-sum-exp2 to a cached workspace (one per stream), then bumps a per-(b, hk)
counter with an acq_rel gpu-scope atomic after a CTA barrier; the last arrival merges the splits in the fixed order
0..NUM_SPLITS-1 (deterministic, nobody waits) and resets the counter. The host caches a plan per call
signature; once a call has gone through the autotuner with nothing patching the launch path, later calls
launch the compiled kernel directly (``_runner``: no autotuner, no argument binding).
"""
from __future__ import annotations

import functools
import math

import torch
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from . import _launch, _scratch
from ._attention_common import _SUPPORTED_HEAD_DIMS, LOG2E, _check_common
from ._autotune import gpu_time_bench


# --------------------------------------------------------------------------------------------------------
# Decode (flash-decoding, one launch)
# --------------------------------------------------------------------------------------------------------

def _decode_cfg(bn, stages, warps, rows=False):
    return triton.Config(dict(BLOCK_N=bn, LOOP_STAGES=stages, ROW_STATE=rows), num_warps=warps,
                         num_stages=stages)


# BLOCK_N keys per step; LOOP_STAGES = the K/V loop's pipelining depth (cp.async prefetch of LOOP_STAGES - 1
# K+V tile pairs, 32 KiB per pair at 64 x 128 bf16). Registers (Triton 3.6 / 3.9) and shared memory (3.6) for
# sm_90, G == 1, B8 KV32k D128 bf16; no config spills (GQA, G=4: 78-116 registers, HMMA, no spills).
_DECODE_CONFIGS = [
    _decode_cfg(64, 3, 4),    # F1:  80 /  89, 67,584 B -> 3 programs per SM
    _decode_cfg(128, 2, 8),   # F2:  80 /  87, 69,632 B, half the loop trips
    _decode_cfg(64, 4, 4),    # F3:  95 /  94, 100,352 B, deeper prefetch
    _decode_cfg(128, 1, 8),   # F4:  79 / 109, 4,096 B: no cp.async, 16-byte loads into registers
    _decode_cfg(32, 3, 4),    # F5:  64 /  64, 34,816 B: short chunks / small D (tests, B=1 with many splits)
    # G == 1 only: per-row softmax state (no reduction over rows inside the loop; see the kernel)
    _decode_cfg(64, 3, 4, True),   # R1: 184 / 184, 65,536 B
    _decode_cfg(128, 2, 8, True),  # R2: 185 / 149, 65,536 B
    # R3: 32 keys on two warps. H200 (session 28, GPU time): B8 H32 KV1024 34.0-34.2 us against R1's 35.2 (SDPA
    # default 34.5); slower on fuller grids (B32 KV1024 141.8 against 137.4) and at B1 KV1024 (11.7 against 9.2),
    # where the autotuner, keyed on the grid's load (LOAD) and timing GPU time, does not take it.
    _decode_cfg(32, 3, 2, True),
]


def _prune_decode_configs(configs, named_args, **kwargs):
    """Keep configs whose tile is no longer than a typical chunk and whose pipelined smem fits (~220 KiB);
    ROW_STATE only on the CUDA-core path (G == 1)."""
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


# Memory ordering of the one-launch merge (why the last split reads complete partials):
# - publish: every thread stores its part of the partial, ``tl.debug_barrier()`` (bar.sync orders them at CTA
#   scope), then one scalar ``atomic_add(sem="acq_rel", scope="gpu")``; its release is cumulative, so it
#   publishes the whole CTA's partial (CUTLASS split-K semaphore pattern).
# - acquire: the last arrival's RMW reads the previous RMW's value (RMWs extend release sequences), so it
#   synchronises with every earlier split; the atomic's result reaches all threads through shared memory +
#   bar.sync, ordering the acquire before every thread's partial loads, which use ".cg" (L2, no stale L1).
# - reset: the last split stores 0 into its counter; kernel boundaries on one stream order it before the next
#   launch's atomics. Each stream has its own workspace and counters (kernels/_scratch.py), so launches on
#   two streams may overlap.
# Under the interpreter programs run one after another and the wrapper checks the counters after each launch.


# The key carries the grid's load (LOAD: programs per SM, bucketed): without it B8 and B32 at one cache length
# shared a key, and the config tuned at B8 served B32 untuned (0.96x SDPA there in four sweeps, session 28).
# The timer is GPU time (kernels/_autotune.py): small decode steps are launch-bound under plain do_bench.
@triton.autotune(configs=_DECODE_CONFIGS, key=["S_MAX", "HEAD_DIM", "GP", "NUM_SPLITS", "ELEM_BYTES", "LOAD"],
                 prune_configs_by={"early_config_prune": _prune_decode_configs}, do_bench=gpu_time_bench)
@triton.jit(do_not_specialize=["LOAD"])
def _attn_decode_kernel(
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
    LOAD,               # the autotuner's key only: programs per SM, bucketed (_load_bucket)
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




def _num_sms(device) -> int:
    """Streaming multiprocessors of the device (132 on an H200; also the stand-in on the CPU)."""
    if device.type != "cuda":
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


def _decode_num_splits(tiles: int, s_max: int, num_sms: int) -> int:
    """Splits per (b, hk) for ``tiles`` = B * H_KV: about one program per SM, ``round(num_sms / tiles)``, at
    least 1, chunks of at least 512 tokens, at most 64 splits. H200 (132 SMs), H=32: B=1/8k -> 4 splits,
    B=8/32k -> 1, B=32/4k -> 1, B=8/32k with H_KV=8 -> 2, B=1/32k -> 4.

    Measured on the H200 (2026-11-30, Triton 3.6, bf16, D=128, ``python tests/bench/decode_splits.py``, GPU
    time under CUDA graphs): B1 KV8k 35.8 us at 4 splits against 40.9 us at the 16 that the earlier rule
    (>= 4 programs per SM) chose, SDPA default 37.0 us; GQA B8 H_KV=8 KV32k 245.9 us at 2 (best 244.5 at 4,
    251.3 at the earlier 12); B8 KV32k within 0.4% for 1..8 splits; B32 KV4k best at 1 (16 splits: +10%).
    More programs than SMs only add partial-merge traffic and a longer tail: one streaming program per SM
    already reads K/V at ~4.5 TB/s."""
    if tiles <= 0 or s_max <= 0:
        return 1
    hi = max(1, min(s_max // 512, 64))
    return max(1, min(round(num_sms / tiles), hi))


def _load_bucket(programs: int, num_sms: int) -> int:
    """The grid's programs per SM as the decode autotuner's key sees it: 0 below one per SM, then 1, 2-3, 4-7,
    8-15, ... -> 1, 2, 3, 4, ... (H200, H=32: B1 KV1024 0, B8 KV1024 1, B32 KV1024 3)."""
    return (max(0, programs) // max(1, num_sms)).bit_length()


_PLANS: dict = {}     # call signature -> _Plan
_MAX_PLANS = 4096     # a server with ever-changing shapes must not grow the cache without bound


def _scratch_for(device, n_rows: int, d: int, tiles: int) -> _scratch.Scratch:
    """The split merge's workspace (fp32 partials and log-sum-exps) and arrival counters, per stream."""
    return _scratch.Scratch(device, ("attn_ws_o", n_rows * d, torch.float32), ("attn_ws_lse", n_rows, torch.float32),
                            ("attn_cnt", tiles, torch.int32))


class _Plan:
    """What one call signature needs: grid, scalars, constexprs, workspace; ``runner`` once a pristine call
    has compiled the kernel; ``checked``: the configs whose direct launcher has already been run once."""
    __slots__ = ("grid", "out_shape", "scratch", "scalars", "consts", "cpu", "device", "dtype", "runner", "checked")


_SCALAR_NAMES = ("stride_qb", "stride_qh", "stride_kb", "stride_kh", "stride_ks", "stride_vb", "stride_vh",
                 "stride_vs", "stride_ob", "stride_oh", "H", "H_KV", "GROUP", "S_MAX", "NUM_SPLITS", "LOAD",
                 "qk_scale")
_TENSOR_ARGS = ("Q", "K", "V", "SEQ_LENS", "O", "WS_O", "WS_LSE", "CNT")
_TUNER_RUN, _JIT_RUN = Autotuner.run, JITFunction.run


def _pristine() -> bool:
    """No tool patched the launch path (tritondbg's config pinning, the ir capture, an autotune watcher):
    only then may a call skip the autotuner and JITFunction.run."""
    k = _attn_decode_kernel
    return type(k).run is _TUNER_RUN and "run" not in vars(k) and JITFunction.run is _JIT_RUN


def _runner(plan, compiled, config):
    """A cached launcher (kernels/_launch.py's ``Launcher``: the C launch entry directly when no launch hook is
    installed, else ``CompiledKernel[grid]``) bound to the arguments after the 8 tensors, in the kernel's
    parameter order (= JITFunction.run's bound_args)."""
    if hasattr(compiled, "result"):  # Triton 3.6 asynchronous compilation: a future
        compiled = compiled.result()
    names = list(_attn_decode_kernel.fn.arg_names)
    if tuple(names[:len(_TENSOR_ARGS)]) != _TENSOR_ARGS:
        raise RuntimeError(f"attention_decode: unexpected kernel signature {names}")
    values = {**dict(zip(_SCALAR_NAMES, plan.scalars)), **plan.consts, **config.kwargs}
    tail = tuple(values[n] for n in names[len(_TENSOR_ARGS):])
    return _launch.Launcher(compiled, plan.grid, tail, _attn_decode_kernel, plan.scratch)


def _make_plan(q, k_cache, v_cache, seq_lens, sm_scale, num_splits):
    B, H, D = q.shape
    _, H_KV, S_MAX, _ = k_cache.shape
    G = H // H_KV
    tiles = B * H_KV
    if num_splits is None:
        num_splits = _decode_num_splits(tiles, S_MAX, _num_sms(q.device))
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
    plan.scratch = None if single else _scratch_for(q.device, B * H * num_splits, D, tiles)
    scale = 1.0 / math.sqrt(D) if sm_scale is None else float(sm_scale)
    plan.scalars = (q.stride(0), q.stride(1),
                    k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
                    v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
                    H * D, D,  # o is contiguous
                    H, H_KV, G, S_MAX, num_splits, _load_bucket(tiles * num_splits, _num_sms(q.device)),
                    scale * LOG2E)
    plan.consts = dict(HEAD_DIM=D, GP=gp, ELEM_BYTES=q.element_size(), HAS_SEQ_LENS=seq_lens is not None,
                       USE_DOT=use_dot, SINGLE_SPLIT=single, FP32_DOT=q.dtype == torch.float32)
    return plan


def check_decode_args(q, k_cache, v_cache, seq_lens=None):
    """Validate decode arguments (shapes, GQA heads, dtypes, devices, head dim, seq_lens); returns seq_lens
    as an int32 contiguous tensor on q's device (or None)."""
    _check_common("q", q, 3)
    _check_common("k_cache", k_cache, 4)
    _check_common("v_cache", v_cache, 4)
    B, H, D = q.shape
    Bk, H_KV, _, Dk = k_cache.shape
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
    if seq_lens is None:
        return None
    if not isinstance(seq_lens, torch.Tensor):
        seq_lens = torch.tensor(list(seq_lens), dtype=torch.int32, device=q.device)
    if seq_lens.shape != (B,):
        raise ValueError(f"seq_lens must have shape ({B},), got {tuple(seq_lens.shape)}")
    if seq_lens.dtype.is_floating_point or seq_lens.dtype.is_complex or seq_lens.dtype == torch.bool:
        raise ValueError(f"seq_lens must be an integer tensor, got {seq_lens.dtype}")
    if seq_lens.device != q.device:
        raise ValueError(f"seq_lens is on {seq_lens.device}, q on {q.device}")
    if seq_lens.dtype != torch.int32 or not seq_lens.is_contiguous():
        seq_lens = seq_lens.to(torch.int32).contiguous()
    return seq_lens


def _aligned(q, k_cache, v_cache, seq_lens) -> bool:
    """16-byte aligned input pointers: the compiled kernel was specialised on that alignment."""
    return not ((q.data_ptr() | k_cache.data_ptr() | v_cache.data_ptr()
                 | (0 if seq_lens is None else seq_lens.data_ptr())) & 15)


def attention_decode(q, k_cache, v_cache, seq_lens=None, sm_scale=None, num_splits=None):
    """Flash-decoding. q (B, H, D), k/v cache (B, H_KV, S_max, D), seq_lens (B,) or None -> o (B, H, D)."""
    try:
        sl_sig = None if seq_lens is None else (seq_lens.shape, seq_lens.dtype, seq_lens.device,
                                                seq_lens.is_contiguous())
        sig = (q.shape, q.stride(), q.dtype, q.device, k_cache.shape, k_cache.stride(), k_cache.dtype,
               k_cache.device, v_cache.stride(), v_cache.shape, v_cache.dtype, v_cache.device, sl_sig,
               sm_scale, num_splits)
        plan = _PLANS.get(sig)
    except (AttributeError, TypeError):  # not tensors (or a list of lengths): the full path
        sig = plan = None
    if plan is not None and plan.runner is not None and _pristine() and _aligned(q, k_cache, v_cache, seq_lens):
        # ---- steady state on CUDA: one dict lookup, torch.empty, the compiled kernel's launcher ----------
        o = torch.empty(plan.out_shape, device=plan.device, dtype=plan.dtype)
        # one split: o stands in for the unused workspace pointers; else the launcher adds the stream's set
        if plan.scratch is None:
            plan.runner(q, k_cache, v_cache, o if seq_lens is None else seq_lens, o, o, o, o)
        else:
            plan.runner(q, k_cache, v_cache, o if seq_lens is None else seq_lens, o)
        return o
    guard = _launch.device_guard(q)
    if guard is not None:  # q on another GPU than the current one: launch there, as torch ops do
        with guard:
            return attention_decode(q, k_cache, v_cache, seq_lens, sm_scale, num_splits)
    if plan is None:
        seq_lens = check_decode_args(q, k_cache, v_cache, seq_lens)
        B, H, D = q.shape
        if B * H * D == 0:
            return torch.empty((B, H, D), device=q.device, dtype=q.dtype)
        if k_cache.shape[2] == 0:
            return torch.zeros((B, H, D), device=q.device, dtype=q.dtype)
        plan = _make_plan(q, k_cache, v_cache, seq_lens, sm_scale, num_splits)
        if sig is not None and sl_sig is not None and (seq_lens.dtype != sl_sig[1] or not sl_sig[3]):
            sig = None  # seq_lens needed a conversion: do not skip it next time
        if sig is not None:
            if len(_PLANS) >= _MAX_PLANS:
                _PLANS.clear()
            _PLANS[sig] = plan
    o = torch.empty(plan.out_shape, device=plan.device, dtype=plan.dtype)
    scratch = (o, o, o) if plan.scratch is None else plan.scratch()
    args = (q, k_cache, v_cache, o if seq_lens is None else seq_lens, o, *scratch)
    compiled = _attn_decode_kernel[plan.grid](*args, *plan.scalars, **plan.consts)
    if plan.cpu:
        if plan.scratch is not None and bool(scratch[2].any()):
            scratch[2].zero_()
            raise RuntimeError("attention_decode: the launch left arrival counters non-zero")
        return o
    if compiled is None or sig is None or plan is not _PLANS.get(sig) or not _aligned(q, k_cache, v_cache, seq_lens):
        return o
    config = _attn_decode_kernel.best_config  # the config that just ran (autotuned or pinned)
    key = (tuple(sorted(config.kwargs.items())), config.num_warps, config.num_stages)
    if key in plan.checked:
        # This config's launcher already ran once (below), maybe while a tool had patched the launch path
        # (tritondbg pins configs in run/check): keep it now that nothing is patched, or every later call
        # would pay the autotuner and JITFunction.run (~60-90 us of Python on the H200 VM) forever.
        if plan.runner is None and _pristine():
            plan.runner = _runner(plan, compiled, config)
        return o
    runner = _runner(plan, compiled, config)
    plan.checked.add(key)
    if not _launch.verifying():  # a user's program, a profiler: exactly one launch per call
        if _pristine():
            plan.runner = runner
        return o
    # Under tritondbg run/check, the first call of this plan and config launches once more through the launcher
    # the steady state uses, into a NaN-filled o, and returns that, so a single-call correctness check (run/check
    # pin configs and never reach the steady state) covers the cached launcher too.
    o.fill_(float("nan"))
    runner(*(args if plan.scratch is None else args[:5]))  # args[4] is o; the launcher adds the scratch
    if _pristine():
        plan.runner = runner
    return o
