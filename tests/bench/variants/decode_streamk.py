"""decode_streamk: flash-decoding for GQA with the work split evenly over every SM (trial, 2026-12-03).

The bundled decode kernel (kernels/_attention_decode.py) splits each (batch, KV head) tile into NUM_SPLITS
equal chunks, one program each: at B1 H32/8 KV32k that is 8 x 16 = 128 programs on the H200's 132 SMs.
Here the grid is one program per SM (``programs``) and the tiles' key blocks are laid end to end and cut into
``programs`` equal ranges, so every SM streams the same number of bytes and none is idle. A range may start
or end inside a tile: such a piece leaves a partial (normalised output and log-sum-exp per query head) in a
workspace slot (two per program: the piece at its start, the piece at its end); a tile a program covers whole
is written directly. Each piece adds its block count to the tile's counter (acq_rel, gpu scope, after a CTA
barrier, as the bundled kernel); the piece that brings it to the tile's block count merges the tile's partials
(from the programs that touch it, in program order: deterministic) and resets the counter.

Restrictions of the trial: grouped-query heads (H > H_KV: the tensor-core path) and no ``seq_lens``.

Why (Nsight Compute, session 32, `python tests/bench/ncu_misses.py --only decode32kgqa`): ours 41.5 us with
128 CTAs at 68.5% of DRAM peak, the SMs active 59.6k of 76.4k cycles; cuDNN 36.3 + 4.0 us.

PREDICTION (H200, B1 H32/8 KV32k D128 bf16, GPU time under CUDA graphs; bundled 40.3-43.0 us, SDPA default
37.4-38.1 us): 132 programs instead of 128 take 3% off (~39 us); any gain beyond that would come from the even
end of the programs. B8 H32/8 KV32k (bundled 2 splits, 128 programs): the same 3%. Not yet run on the GPU.

Time it beside the bundled kernel and SDPA, same run, GPU time under CUDA graphs (~2 min):

    python tests/bench/decode_splits.py --shapes 1:32:8:32768,1:32:8:8192,8:32:8:32768,64:32:8:4096 --splits 16 --streamk 1,2
"""
from __future__ import annotations

import dataclasses
import functools
import math

import torch
import triton
import triton.language as tl

from tritondbg.kernels import attention as _bundled
from tritondbg.scenario import Case
from tritondbg.scenarios.attention import SCENARIO as _BASE


@triton.jit
def _program_of(x, total, P):
    """The program whose block range [p * total // P, (p + 1) * total // P) holds block x (total >= P)."""
    p = (x * P) // total
    return tl.where(((p + 1) * total) // P <= x, p + 1, p)


@triton.jit
def _streamk_decode_kernel(
    Q, K, V, O,
    WS_O,       # fp32 (2 * P * GP, D): the partial of slot (program * 2 + piece), GP rows per slot
    WS_LSE,     # fp32 (2 * P * GP,)
    CNT,        # int32 (TILES,): blocks of the tile done so far; 0 on entry and on exit
    stride_qb, stride_qh, stride_kb, stride_kh, stride_ks, stride_vb, stride_vh, stride_vs, stride_ob, stride_oh,
    H_KV, GROUP, S, TILES, P, qk_scale,
    HEAD_DIM: tl.constexpr, GP: tl.constexpr, BLOCK_N: tl.constexpr, LOOP_STAGES: tl.constexpr,
    FP32_DOT: tl.constexpr,
):
    pid = tl.program_id(0)
    bpt = tl.cdiv(S, BLOCK_N)           # key blocks per (b, hk) tile
    total = TILES * bpt
    lo = (pid * total) // P             # this program's blocks: [lo, hi), tiles laid end to end
    hi = ((pid + 1) * total) // P
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_g = tl.arange(0, GP)
    g_ok = offs_g < GROUP
    t_first = lo // bpt
    for t in range(t_first, (hi - 1) // bpt + 1):
        b64 = (t // H_KV).to(tl.int64)
        hk64 = (t % H_KV).to(tl.int64)
        t_lo = t * bpt
        blk_lo = tl.maximum(lo, t_lo) - t_lo
        blk_hi = tl.minimum(hi, t_lo + bpt) - t_lo
        start = blk_lo * BLOCK_N
        end = tl.minimum(blk_hi * BLOCK_N, S)
        k_base = K + b64 * stride_kb + hk64 * stride_kh
        v_base = V + b64 * stride_vb + hk64 * stride_vh
        h64 = hk64 * GROUP + offs_g
        q = tl.load(Q + b64 * stride_qb + h64[:, None] * stride_qh + offs_d[None, :], mask=g_ok[:, None], other=0.0)
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
            m_new = tl.maximum(m_i, tl.max(s, 1))
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
        o_ptrs = O + b64 * stride_ob + h64[:, None] * stride_oh + offs_d[None, :]
        if (blk_lo == 0) & (blk_hi == bpt):  # the whole tile: no other program touches it
            tl.store(o_ptrs, (acc / l_i[:, None]).to(O.dtype.element_ty), mask=g_ok[:, None])
        else:
            rows = (pid * 2 + (t != t_first).to(tl.int32)) * GP + offs_g  # piece 0: at the start; 1: at the end
            tl.store(WS_O + rows[:, None] * HEAD_DIM + offs_d[None, :], acc / l_i[:, None], mask=g_ok[:, None])
            tl.store(WS_LSE + rows, m_i + tl.math.log2(l_i), mask=g_ok)
            tl.debug_barrier()  # publish as the bundled kernel does: CTA barrier, then a gpu-scope acq_rel RMW
            n = blk_hi - blk_lo
            arrived = tl.atomic_add(CNT + t, n, sem="acq_rel", scope="gpu")
            if arrived + n == bpt:  # the tile's last piece: merge its pieces in program order
                m = tl.full([GP], float("-inf"), dtype=tl.float32)
                den = tl.zeros([GP], dtype=tl.float32)
                num = tl.zeros([GP, HEAD_DIM], dtype=tl.float32)
                for q_p in range(_program_of(t_lo, total, P), _program_of(t_lo + bpt - 1, total, P) + 1):
                    first_t = ((q_p * total) // P) // bpt
                    rows_p = (q_p * 2 + (t != first_t).to(tl.int32)) * GP + offs_g
                    lse_s = tl.load(WS_LSE + rows_p, mask=g_ok, other=float("-inf"), cache_modifier=".cg")
                    o_s = tl.load(WS_O + rows_p[:, None] * HEAD_DIM + offs_d[None, :], mask=g_ok[:, None], other=0.0,
                                  cache_modifier=".cg")
                    m_new = tl.maximum(m, lse_s)
                    m_use = tl.where(m_new == float("-inf"), 0.0, m_new)  # padded rows
                    alpha = tl.math.exp2(m - m_use)
                    w = tl.math.exp2(lse_s - m_use)
                    den = den * alpha + w
                    num = num * alpha[:, None] + w[:, None] * o_s
                    m = m_new
                den = tl.where(den == 0.0, 1.0, den)
                tl.store(o_ptrs, (num / den[:, None]).to(O.dtype.element_ty), mask=g_ok[:, None])
                tl.store(CNT + t, 0)  # reset for the next launch


_WS: dict = {}  # (device, tiles, programs, GP, D) -> (partials, lses, counters)


def decode_streamk(q, k_cache, v_cache, seq_lens=None, sm_scale=None, num_splits=None, programs=None, block_n=64,
                   loop_stages=3, num_warps=4):
    """Decode attention, q (B, H, D) over a (B, H_KV, S, D) cache with H > H_KV, every key attended."""
    if seq_lens is not None:
        raise ValueError("decode_streamk (trial): no seq_lens")
    B, H, D = q.shape
    _, H_KV, S, _ = k_cache.shape
    G = H // H_KV
    if G < 2 or H % H_KV:
        raise ValueError("decode_streamk (trial): grouped-query heads only (H a multiple of H_KV, H > H_KV)")
    tiles, bpt = B * H_KV, triton.cdiv(S, block_n)
    P = min(programs or _bundled._num_sms(q.device), tiles * bpt)
    gp = max(16, triton.next_power_of_2(G))
    key = (q.device, tiles, P, gp, D)
    ws = _WS.get(key)
    if ws is None:
        ws = _WS[key] = (torch.empty(2 * P * gp * D, device=q.device, dtype=torch.float32),
                         torch.empty(2 * P * gp, device=q.device, dtype=torch.float32),
                         torch.zeros(tiles, device=q.device, dtype=torch.int32))
    o = torch.empty(B, H, D, device=q.device, dtype=q.dtype)
    scale = 1.0 / math.sqrt(D) if sm_scale is None else float(sm_scale)
    _streamk_decode_kernel[(P,)](
        q, k_cache, v_cache, o, *ws,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), o.stride(0), o.stride(1),
        H_KV, G, S, tiles, P, scale * 1.4426950408889634,
        HEAD_DIM=D, GP=gp, BLOCK_N=block_n, LOOP_STAGES=loop_stages, FP32_DOT=q.dtype == torch.float32,
        num_warps=num_warps, num_stages=loop_stages)
    if q.device.type == "cpu" and bool(ws[2].any()):
        ws[2].zero_()
        raise RuntimeError("decode_streamk: the launch left tile counters non-zero")
    return o


def _case(name, params, dtypes, interpret, description, **launch):
    return Case(name, params=params, dtypes=dtypes, interpret=interpret, description=description,
                launch=functools.partial(decode_streamk, **launch), reference=_bundled.reference_decode)


SCENARIO = dataclasses.replace(
    _BASE,
    name="decode_streamk",
    description="flash-decoding (GQA) with the key blocks of every tile split evenly over one program per SM (trial)",
    launch=decode_streamk,
    kernels=[_streamk_decode_kernel],
    cases=[
        _case("tiny_pieces", dict(B=2, H=8, H_KV=2, S=300, D=32), ("bfloat16", "float32"), True,
              "4 tiles of 10 blocks (the last ragged) over 7 programs: every tile in pieces, programs over two "
              "tiles", programs=7, block_n=32),
        _case("tiny_whole_and_pieces", dict(B=3, H=4, H_KV=1, S=100, D=64), ("bfloat16",), True,
              "3 tiles of 7 blocks over 2 programs: tiles 0 and 2 whole (direct store), tile 1 in two pieces",
              programs=2, block_n=16),
        _case("decode_b1_h32_hkv8_kv32k_d128", dict(B=1, H=32, H_KV=8, S=32768, D=128), ("bfloat16",), False,
              "the bundled kernel's worst decode row (0.97x SDPA default)"),
        _case("decode_b1_h32_hkv8_kv8k_d128", dict(B=1, H=32, H_KV=8, S=8192, D=128), ("bfloat16",), False, ""),
        _case("decode_b8_h32_hkv8_kv32k_d128", dict(B=8, H=32, H_KV=8, S=32768, D=128), ("bfloat16",), False, ""),
        _case("decode_b64_h32_hkv8_kv4k_d128", dict(B=64, H=32, H_KV=8, S=4096, D=128), ("bfloat16",), False, ""),
    ],
    source="",
)
