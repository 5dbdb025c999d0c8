"""Decode attention (one query token, GQA) on Hopper in Gluon: a TMA producer warp keeping a deep K/V ring full.

Why: the tl decode kernel (kernels/_attention_decode.py) reaches ~69% of DRAM peak at B1 H32/8 KV32k (Nsight
Compute, session 32: 128 CTAs, the SMs busy 78% of the cycles) where cuDNN's reaches 78%; its K/V loop prefetches
with cp.async, issued by the same warps that do the math. Here one warp only issues TMA loads of K and V blocks
into a STAGES-deep ring (``ready`` / ``empty`` mbarriers), so the loads never wait for the math.

- grid (B * H_KV, NUM_SPLITS): program (tile = b * H_KV + hk, split) takes the G = H // H_KV query heads of KV
  head hk over one chunk of keys (as the tl kernel: chunks of whole BLOCK_N blocks);
- consumer (default partition, one warpgroup): the G query rows padded to 64 (wgmma's M side; Q from registers),
  S = Q K^T, the online softmax, O += P V (P from registers), the K/V stage handed back once both wgmmas are done;
- keys: read through 2-D descriptors over the contiguous (B * H_KV * S_MAX, D) views of the cache; a block past
  the chunk's end reads the next keys or the next head's (or TMA's zero fill at the end of the tensor): finite
  values of the cache, masked to -inf in S, so p = 0 multiplies them. Only for calls without ``seq_lens`` (every
  cache row in use: no uninitialised row is ever multiplied, even by 0);
- NUM_SPLITS > 1: the partial (o / l, log2-sum-exp2) to the tl kernel's workspace rows, one acq_rel gpu-scope
  atomic per (b, hk) after a barrier, the last arrival merges the splits in the fixed order 0..NUM_SPLITS-1 and
  resets the counter (the tl kernel's protocol and workspace layout).

No interpreter: Gluon runs on the GPU only. Importing this module raises ImportError where Triton has no Gluon
Hopper API.
"""
from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, warpgroup_mma,
                                                              warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from ._attention_gluon import ROWS, _gl_dtype, _layout, _tma_load  # ROWS: the query rows a program pads to (64)
from ._gemm_gluon import PRODUCER_REGS, _barrier

KERNEL = "gluon_decode_attention_kernel"
SMEM_BYTES = 220 * 1024


@gluon.jit
def _chunk(S_MAX, NUM_SPLITS, BLOCK_N: gl.constexpr):
    """(first key, end, blocks) of this program's chunk."""
    chunk = gl.cdiv(gl.cdiv(S_MAX, NUM_SPLITS), BLOCK_N) * BLOCK_N
    start = gl.program_id(1) * chunk
    end = gl.minimum(start + chunk, S_MAX)
    return start, end, gl.cdiv(gl.maximum(end - start, 0), BLOCK_N)


@gluon.jit
def _producer(k_desc, v_desc, k_bufs, v_bufs, k_ready, v_ready, empty, S_MAX, NUM_SPLITS):
    BLOCK_N: gl.constexpr = k_desc.block_type.shape[0]
    STAGES: gl.constexpr = k_bufs.type.shape[0]
    start, end, n_blocks = _chunk(S_MAX, NUM_SPLITS, BLOCK_N)
    row = gl.program_id(0) * S_MAX + start
    for j in range(n_blocks):
        s = j % STAGES
        mbarrier.wait(empty.index(s), ((j // STAGES) & 1) ^ 1)  # a fresh barrier: the first lap does not wait
        mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes)
        _tma_load(k_desc, [row + j * BLOCK_N, 0], k_ready.index(s), k_bufs.index(s))
        mbarrier.expect(v_ready.index(s), v_desc.block_type.nbytes)
        _tma_load(v_desc, [row + j * BLOCK_N, 0], v_ready.index(s), v_bufs.index(s))


@gluon.jit
def _consumer(q_ptr, o_ptr, ws_o, ws_lse, cnt, k_bufs, v_bufs, k_ready, v_ready, empty, H, H_KV, S_MAX, NUM_SPLITS,
              qk_scale, SINGLE: gl.constexpr):
    BLOCK_N: gl.constexpr = k_bufs.type.shape[1]
    D: gl.constexpr = k_bufs.type.shape[2]
    STAGES: gl.constexpr = k_bufs.type.shape[0]
    dtype: gl.constexpr = k_bufs.dtype
    s_layout: gl.constexpr = _layout(BLOCK_N)
    o_layout: gl.constexpr = _layout(D)
    q_op_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=s_layout, k_width=2)
    p_op_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
    row_l: gl.constexpr = gl.SliceLayout(1, s_layout)
    o_row_l: gl.constexpr = gl.SliceLayout(1, o_layout)

    tile = gl.program_id(0)
    split = gl.program_id(1)
    b = tile // H_KV
    hk = tile % H_KV
    G = H // H_KV
    start, end, n_blocks = _chunk(S_MAX, NUM_SPLITS, BLOCK_N)

    rows = gl.arange(0, ROWS, layout=o_row_l)
    d = gl.arange(0, D, layout=gl.SliceLayout(0, o_layout))
    r_ok = rows < G
    heads = (b * H + hk * G + rows).to(gl.int64)  # (ROWS,) query head rows of q / o; rows >= G masked
    q = gl.load(q_ptr + heads[:, None] * D + d[None, :], mask=r_ok[:, None], other=0.0)
    q_op = gl.convert_layout(q, q_op_layout)

    cols = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
    zero_s = gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout)
    acc = gl.zeros([ROWS, D], gl.float32, o_layout)
    m_i = gl.full([ROWS], float("-inf"), gl.float32, row_l)
    l_i = gl.zeros([ROWS], gl.float32, row_l)
    for j in range(n_blocks):
        s = j % STAGES
        phase = (j // STAGES) & 1
        mbarrier.wait(k_ready.index(s), phase)
        sc = warpgroup_mma(q_op, k_bufs.index(s).permute((1, 0)), zero_s, use_acc=False, is_async=True)
        sc = warpgroup_mma_wait(0, deps=(sc,))
        left = end - (start + j * BLOCK_N)
        if left < BLOCK_N:  # the chunk's last block: keys past its end get -inf
            sc = gl.where(cols[None, :] < left, sc, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(sc, 1) * qk_scale)  # finite: every block has >= 1 key of the chunk
        p = gl.exp2(sc * qk_scale - m_new[:, None])
        alpha = gl.exp2(m_i - m_new)
        l_i = l_i * alpha + gl.sum(p, 1)
        m_i = m_new
        acc = acc * gl.convert_layout(alpha, o_row_l)[:, None]
        p_op = gl.convert_layout(p.to(dtype), p_op_layout)
        mbarrier.wait(v_ready.index(s), phase)
        acc = warpgroup_mma(p_op, v_bufs.index(s), acc, is_async=True)
        acc, p_op = warpgroup_mma_wait(0, deps=(acc, p_op))
        mbarrier.arrive(empty.index(s), count=1)

    l_o = gl.convert_layout(l_i, o_row_l)
    m_o = gl.convert_layout(m_i, o_row_l)
    l_safe = gl.where(l_o == 0.0, 1.0, l_o)  # an empty chunk: acc == 0 -> partial 0
    o = acc * (1.0 / l_safe)[:, None]
    o_ptrs = o_ptr + heads[:, None] * D + d[None, :]
    if SINGLE:
        gl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=r_ok[:, None])
    else:
        ws_row = heads * NUM_SPLITS  # (ROWS,) workspace row of split 0 of each head
        lse = gl.where(l_o > 0.0, m_o + gl.log2(l_safe), float("-inf"))
        gl.store(ws_o + (ws_row + split)[:, None] * D + d[None, :], o, mask=r_ok[:, None])
        gl.store(ws_lse + ws_row + split, lse, mask=r_ok)
        _barrier()
        arrived = gl.atomic_add(cnt + tile, 1, sem="acq_rel", scope="gpu")
        if arrived == NUM_SPLITS - 1:  # the last split of (b, hk): merge 0..NUM_SPLITS-1 in that order
            m = gl.full([ROWS], float("-inf"), gl.float32, o_row_l)
            den = gl.zeros([ROWS], gl.float32, o_row_l)
            num = gl.zeros([ROWS, D], gl.float32, o_layout)
            for t in range(0, NUM_SPLITS):
                lse_t = gl.load(ws_lse + ws_row + t, mask=r_ok, other=float("-inf"), cache_modifier=".cg")
                o_t = gl.load(ws_o + (ws_row + t)[:, None] * D + d[None, :], mask=r_ok[:, None], other=0.0,
                              cache_modifier=".cg")
                m_new2 = gl.maximum(m, lse_t)
                m_use = gl.where(m_new2 == float("-inf"), 0.0, m_new2)  # all empty so far: weights 0
                a2 = gl.exp2(m - m_use)
                w = gl.exp2(lse_t - m_use)
                den = den * a2 + w
                num = num * a2[:, None] + w[:, None] * o_t
                m = m_new2
            den = gl.where(den == 0.0, 1.0, den)
            gl.store(o_ptrs, (num / den[:, None]).to(o_ptr.dtype.element_ty), mask=r_ok[:, None])
            gl.store(cnt + tile, 0)


@gluon.jit
def gluon_decode_attention_kernel(q_ptr, k_desc, v_desc, o_ptr, ws_o, ws_lse, cnt, H, H_KV, S_MAX, NUM_SPLITS,
                                  qk_scale, STAGES: gl.constexpr, SINGLE: gl.constexpr):
    """o (B, H, D) = softmax(q k^T * scale) v per query head for contiguous q (B, H, D) and caches (B, H_KV, S_MAX,
    D) read through ``k_desc`` / ``v_desc`` (boxes of BLOCK_N x D over the (rows, D) views); ``qk_scale`` = scale *
    log2(e). SINGLE (NUM_SPLITS == 1): ws_o, ws_lse, cnt unused; else the tl decode kernel's workspace rows
    ((b * H + h) * NUM_SPLITS + split), counters one per (b, hk), zero on entry and left zero."""
    dtype: gl.constexpr = k_desc.dtype
    k_bufs = gl.allocate_shared_memory(dtype, [STAGES] + k_desc.block_type.shape, k_desc.layout)
    v_bufs = gl.allocate_shared_memory(dtype, [STAGES] + v_desc.block_type.shape, v_desc.layout)
    k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    fence_async_shared()
    gl.warp_specialize([
        (_consumer, (q_ptr, o_ptr, ws_o, ws_lse, cnt, k_bufs, v_bufs, k_ready, v_ready, empty, H, H_KV, S_MAX,
                     NUM_SPLITS, qk_scale, SINGLE)),
        (_producer, (k_desc, v_desc, k_bufs, v_bufs, k_ready, v_ready, empty, S_MAX, NUM_SPLITS)),
    ], [1], [PRODUCER_REGS])
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(k_ready.index(i))
        mbarrier.invalidate(v_ready.index(i))
        mbarrier.invalidate(empty.index(i))


# ---------------------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------------------
def supported(q, k_cache, v_cache, seq_lens) -> bool:
    """Whether this kernel takes the call: sm_90, contiguous 16-bit q and caches, D 64 or 128, GQA (G >= 2, at most
    64 query heads a KV head), no ``seq_lens``."""
    import torch

    if seq_lens is not None or not q.is_cuda or torch.cuda.get_device_capability(q.device)[0] != 9:
        return False
    B, H, D = q.shape
    H_KV = k_cache.shape[1]
    return (q.dtype in (torch.bfloat16, torch.float16) and k_cache.dtype == q.dtype == v_cache.dtype
            and D in (64, 128) and H % H_KV == 0 and 2 <= H // H_KV <= ROWS.value
            and all(t.is_contiguous() and t.data_ptr() % 16 == 0 for t in (q, k_cache, v_cache)))


def stages_for(block_n: int, d: int, per_sm: int) -> int:
    """The deepest ring that lets ``per_sm`` programs share an SM (K and V blocks a stage, 16-bit)."""
    return max(2, min(8, (SMEM_BYTES // per_sm) // (2 * block_n * d * 2)))


def maxnreg_for(per_sm: int):
    """Registers a thread may hold so ``per_sm`` programs of 5 warps share an SM's 64K (None: one program)."""
    return None if per_sm <= 1 else (65536 // (per_sm * 5 * 32)) // 8 * 8


def descriptors(k_cache, v_cache, block_n: int):
    d = k_cache.shape[-1]
    box = [block_n, d]
    layout = gl.NVMMASharedLayout.get_default_for(box, _gl_dtype(k_cache.dtype))
    return tuple(TensorDescriptor.from_tensor(t.view(-1, d), box, layout) for t in (k_cache, v_cache))


def launch(q, k_cache, v_cache, o, ws, num_splits: int, qk_scale: float, block_n: int = 64, stages: int = 6,
           maxnreg=None):
    """One launch into ``o``; ``ws`` = (workspace o, workspace lse, counters) of the tl kernel's layout, or None
    for one split. Returns the compiled kernel."""
    B, H, D = q.shape
    H_KV, S_MAX = k_cache.shape[1], k_cache.shape[2]
    k_desc, v_desc = descriptors(k_cache, v_cache, block_n)
    single = num_splits == 1
    ws_o, ws_lse, cnt = (o, o, o) if single else ws
    grid = (B * H_KV, num_splits)
    return gluon_decode_attention_kernel[grid](q, k_desc, v_desc, o, ws_o, ws_lse, cnt, H, H_KV, S_MAX, num_splits,
                                               qk_scale, stages, single, num_warps=4,
                                               **({} if maxnreg is None else dict(maxnreg=maxnreg)))


def gluon_decode_attention(q, k_cache, v_cache, sm_scale=None, *, num_splits=None, block_n=64, stages=None,
                           per_sm=1, maxnreg=None):
    """attention_decode(q, k_cache, v_cache) by this kernel (no seq_lens; no checks beyond ``supported``)."""
    import math

    import torch

    from . import _attention_decode as dec
    from ._attention_common import LOG2E

    if not supported(q, k_cache, v_cache, None):
        raise ValueError("gluon decode attention: sm_90, contiguous bf16/fp16, D 64/128, GQA, no seq_lens")
    B, H, D = q.shape
    H_KV, S_MAX = k_cache.shape[1], k_cache.shape[2]
    sm = dec._num_sms(q.device)
    ns = num_splits or dec._decode_num_splits(B * H_KV, S_MAX, sm)
    stages = stages or stages_for(block_n, D, per_sm)
    scale = 1.0 / math.sqrt(D) if sm_scale is None else float(sm_scale)
    o = torch.empty_like(q)
    ws = None if ns == 1 else dec._scratch_for(q.device, B * H * ns, D, B * H_KV)()
    launch(q, k_cache, v_cache, o, ws, ns, scale * LOG2E, block_n, stages, maxnreg)
    return o
