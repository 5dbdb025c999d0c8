"""Warp-specialised flash-attention forward for Hopper (sm_90), written in Gluon (``triton.experimental.gluon``).

Why: the tl prefill kernel (kernels/attention.py) reaches 539 TFLOP/s on the H200 only where Triton's automatic
warp specialisation applies, i.e. an unmasked KV loop: non-causal with N_KV a multiple of BLOCK_N. Causal and odd
sequence lengths run the non-specialised kernel (1.31-1.47x SDPA flash against the issue's 1.5x, issue 18). Here
the specialisation is written by hand, so a masked diagonal or tail block costs one extra ``where`` and no more.

Persistent: ``min(#SMs, #tiles)`` programs walk the (128 query rows, batch*head) tiles, each program taking the
next tile no program has taken yet (an atomic on a counter pair per stream, which the last program out resets;
causal tiles differ in length, and a fixed stride left the machine unbalanced). Three partitions:
- loader (1 warp, 40 registers): takes the tiles and writes each one's id beside its Q; per tile, TMA loads of
  the two 64-row Q halves into one of Q_BUFS buffers (once both consumers are done with the tile that last used
  it), then the K and V blocks of [0, hi) into a STAGES-deep ring that runs on across tiles; with two Q buffers
  the next tile's Q and first blocks load during this tile's last ones (separate ready / empty barriers for K
  and V, so S = Q K^T starts before V has landed); each empty barrier counts two arrivals, one per consumer.
- two consumers (one warpgroup each, 64 query rows each: the default partition and a worker). Per KV block j
  (FA3's intra-warpgroup overlap): issue S_j = Q K_j^T and O += P_{j-1} V_{j-1} asynchronously, wait for S_j
  only, run the online softmax of S_j while the PV wgmma runs, then wait for it and rescale O. The two
  consumers drift apart, so one's softmax also overlaps the other's wgmma.
- masking: the scores of the blocks a consumer's rows do not all see (the causal diagonal, the N_KV tail)
  get -inf before the row max, behind a runtime branch taken only on those blocks. A row that sees no key
  keeps m = -inf and ends with l = 0, o = 0 (flash-attn's convention, as the tl kernel).
- memory: q, k, v are read through 2-D descriptors over the contiguous (B*H*N, D) views. A K/V block past N_KV
  reads the next head's rows (or TMA's zero fill at the end of the tensor): finite values, masked to -inf in
  S, so p = 0 multiplies them. Q rows past N_Q are computed and not stored: O is written with a masked store
  (a TMA store would spill into the next head).
- causal launch order: the tl kernel's (longest tiles first over groups of 8 heads, whose K/V stay in L2).

Only contiguous (B, H, N, D) bf16/fp16 inputs with D in {64, 128} and a positive scale; ``attention`` races
this kernel against the tl configs per call signature (kernels/_attention_race.py) and never calls it elsewhere.
No interpreter: Gluon kernels run on the GPU only. Ideas follow FlashAttention-3 (Shah et al. 2024) and Triton's
Gluon tutorials (MIT licence); no code is copied. Importing this module raises ImportError where Triton has no
Gluon Hopper API.
"""
from __future__ import annotations

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from ._attention_common import LOG2E

_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared

LOADER_REGS = gl.constexpr(40)
CONSUMER_REGS = gl.constexpr(232)  # the worker consumer; the default partition gets what is left
ROWS = gl.constexpr(64)  # query rows per consumer warpgroup


@gluon.constexpr_function
def _layout(N):
    """The wgmma accumulator layout of a 64 x N block (S: N = BLOCK_N, O: N = HEAD_DIM): one instruction spans
    the whole N (at D = 64 the S wgmma is m64n128, not two m64n64 that each re-read Q from shared memory: H200
    B4 H32 N4096 D64 1230 -> 1206 us). Both distribute rows alike: a row vector converts in registers."""
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, N, 16])


@gluon.jit
def _tile(t, n_m, n_bh, CAUSAL: gl.constexpr):
    """(query tile, batch*head) of the t-th tile in launch order: query tiles fastest; causal: longest tiles
    first over groups of 8 heads (their K/V stay in L2), as the tl kernel."""
    if CAUSAL:
        first = (t // (8 * n_m)) * 8
        size = gl.minimum(n_bh - first, 8)
        r = t - first * n_m
        pid_bh = first + r % size
        pid_m = n_m - 1 - r // size
    else:
        pid_m = t % n_m
        pid_bh = t // n_m
    return pid_m, pid_bh


@gluon.jit
def _kv_hi(m_first, N_Q, N_KV, CAUSAL: gl.constexpr, BLOCK_M: gl.constexpr):
    """Keys [0, hi) that some row of the tile sees."""
    if CAUSAL:
        m_last = gl.minimum(m_first + BLOCK_M, N_Q) - 1
        hi = gl.maximum(gl.minimum(m_last + (N_KV - N_Q) + 1, N_KV), 0)
    else:
        hi = N_KV
    return hi


@gluon.jit
def _loader(q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_bar, q_empty, k_ready, v_ready, k_empty, v_empty,
            tile_smem, sched_ptr, H, HK, N_Q, N_KV, CAUSAL: gl.constexpr, DYNAMIC: gl.constexpr):
    BLOCK_N: gl.constexpr = k_desc.block_type.shape[0]
    STAGES: gl.constexpr = k_bufs.type.shape[0]
    QB: gl.constexpr = q_bar.type.shape[0]  # Q buffers: tile i's Q, id and barriers in slot i % QB
    id_layout: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    n_m = gl.cdiv(N_Q, 2 * ROWS)
    n_bh = q_desc.shape[0] // N_Q
    total = n_m * n_bh
    c = 0  # K/V blocks loaded so far (ring position)
    i = 0  # tiles so far
    t = gl.program_id(0)
    while t < total:
        pid_m, pid_bh = _tile(t, n_m, n_bh, CAUSAL)
        b = pid_bh // H
        hk = (pid_bh % H) // (H // HK)
        q_row = pid_bh * N_Q + pid_m * (2 * ROWS)
        kv_row = (b * HK + hk) * N_KV
        qs = i % QB
        mbarrier.wait(q_empty.index(qs), ((i // QB) & 1) ^ 1)  # both consumers are done with the slot's last tile
        tile_smem.index(qs).store(gl.full([1], t, gl.int32, id_layout))  # read by the consumers once Q has landed
        mbarrier.expect(q_bar.index(qs), 2 * q_desc.block_type.nbytes)
        _tma_load(q_desc, [q_row, 0], q_bar.index(qs), q_smem.index(2 * qs))
        _tma_load(q_desc, [q_row + ROWS, 0], q_bar.index(qs), q_smem.index(2 * qs + 1))
        n_blocks = gl.cdiv(_kv_hi(pid_m * (2 * ROWS), N_Q, N_KV, CAUSAL, 2 * ROWS), BLOCK_N)
        for j in range(n_blocks):
            s = c % STAGES
            phase = ((c // STAGES) & 1) ^ 1  # a fresh barrier has completed the phase before 0
            mbarrier.wait(k_empty.index(s), phase)
            mbarrier.expect(k_ready.index(s), k_desc.block_type.nbytes)
            _tma_load(k_desc, [kv_row + j * BLOCK_N, 0], k_ready.index(s), k_bufs.index(s))
            mbarrier.wait(v_empty.index(s), phase)
            mbarrier.expect(v_ready.index(s), v_desc.block_type.nbytes)
            _tma_load(v_desc, [kv_row + j * BLOCK_N, 0], v_ready.index(s), v_bufs.index(s))
            c += 1
        i += 1
        # the next tile: the first that no program has taken yet. Asked here, once this tile's loads are issued,
        # where the loader would wait for the consumers anyway; between the Q and K loads, the atomic's round
        # trip delayed every tile's first block (H200, B4 H32 N4096 D64: 1272 us against 1251 for the fixed
        # stride, N1000 causal 270 against 201)
        if DYNAMIC:
            t = gl.atomic_add(sched_ptr, 1) + gl.num_programs(0)
        else:
            t += gl.num_programs(0)
    mbarrier.wait(q_empty.index(i % QB), ((i // QB) & 1) ^ 1)
    tile_smem.index(i % QB).store(gl.full([1], total, gl.int32, id_layout))  # no tile left: the consumers stop
    mbarrier.arrive(q_bar.index(i % QB), count=1)
    if DYNAMIC:  # the last program out resets the counters for the next launch on this stream
        done = gl.atomic_add(sched_ptr + 1, 1)
        if done == gl.num_programs(0) - 1:
            gl.atomic_xchg(sched_ptr, 0)
            gl.atomic_xchg(sched_ptr + 1, 0)


@gluon.jit
def _next_tile(q_bar, tile_smem, i):
    """Wait for the i-th tile's Q, then read its id (``total`` when there is none)."""
    QB: gl.constexpr = q_bar.type.shape[0]
    mbarrier.wait(q_bar.index(i % QB), (i // QB) & 1)
    return gl.max(tile_smem.index(i % QB).load(gl.BlockedLayout([1], [32], [gl.num_warps()], [0])), 0)


@gluon.jit
def _softmax(s, m_i, l_i, start, full_hi, last_key, cols, qk_scale, MASKS: gl.constexpr):
    """Online softmax of one score block (raw scores s). Returns (p, m, l, alpha)."""
    if MASKS:
        if start >= full_hi:  # the diagonal / tail blocks only
            s = gl.where(cols[None, :] <= (last_key - start)[:, None], s, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(s, 1) * qk_scale)
    m_sub = gl.where(m_new == float("-inf"), 0.0, m_new)  # a row with no visible key yet: p = 0, no NaN
    p = gl.exp2(s * qk_scale - m_sub[:, None])
    alpha = gl.exp2(m_i - m_sub)
    l_i = l_i * alpha + gl.sum(p, 1)
    return p, m_new, l_i, alpha


@gluon.jit
def _consumer(q_smem, k_bufs, v_bufs, q_bar, q_empty, k_ready, v_ready, k_empty, v_empty, tile_smem, o_ptr,
              H, N_Q, N_KV, n_bh, qk_scale, CAUSAL: gl.constexpr, WHICH: gl.constexpr):
    BLOCK_N: gl.constexpr = k_bufs.type.shape[1]
    HEAD_DIM: gl.constexpr = k_bufs.type.shape[2]
    STAGES: gl.constexpr = k_bufs.type.shape[0]
    dtype: gl.constexpr = k_bufs.dtype
    s_layout: gl.constexpr = _layout(BLOCK_N)
    o_layout: gl.constexpr = _layout(HEAD_DIM)
    op_layout: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=o_layout, k_width=2)
    row_l: gl.constexpr = gl.SliceLayout(1, s_layout)
    o_row_l: gl.constexpr = gl.SliceLayout(1, o_layout)
    MASKS: gl.constexpr = True  # the N_KV tail and the causal diagonal (a runtime test per block)

    QB: gl.constexpr = q_bar.type.shape[0]
    cols = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, s_layout))
    d = gl.arange(0, HEAD_DIM, layout=gl.SliceLayout(0, o_layout))
    zero_s = gl.zeros([ROWS, BLOCK_N], gl.float32, s_layout)
    n_m = gl.cdiv(N_Q, 2 * ROWS)
    total = n_m * n_bh
    c = 0  # K/V blocks consumed so far (ring position, the loader's order)
    i = 0  # tiles so far
    t = _next_tile(q_bar, tile_smem, 0)
    while t < total:
        pid_m, pid_bh = _tile(t, n_m, n_bh, CAUSAL)
        q = q_smem.index(2 * (i % QB) + WHICH)
        m_first = pid_m * (2 * ROWS)
        rows = m_first + WHICH * ROWS + gl.arange(0, ROWS, layout=row_l)
        n_blocks = gl.cdiv(_kv_hi(m_first, N_Q, N_KV, CAUSAL, 2 * ROWS), BLOCK_N)
        if CAUSAL:
            diag_off = N_KV - N_Q
            last_key = gl.minimum(rows + diag_off, N_KV - 1)
            first_row = m_first + WHICH * ROWS
            full_hi = (gl.maximum(gl.minimum(first_row + diag_off + 1, N_KV), 0) // BLOCK_N) * BLOCK_N
        else:
            last_key = gl.zeros([ROWS], gl.int32, row_l) + (N_KV - 1)
            full_hi = (N_KV // BLOCK_N) * BLOCK_N
        acc = gl.zeros([ROWS, HEAD_DIM], gl.float32, o_layout)
        m_i = gl.full([ROWS], float("-inf"), gl.float32, row_l)
        l_i = gl.zeros([ROWS], gl.float32, row_l)
        if n_blocks > 0:
            s0 = c % STAGES
            mbarrier.wait(k_ready.index(s0), (c // STAGES) & 1)
            s = warpgroup_mma(q, k_bufs.index(s0).permute((1, 0)), zero_s, use_acc=False, is_async=True)
            s = warpgroup_mma_wait(0, deps=(s,))
            mbarrier.arrive(k_empty.index(s0), count=1)
            p, m_i, l_i, alpha = _softmax(s, m_i, l_i, 0, full_hi, last_key, cols, qk_scale, MASKS)
            p_op = gl.convert_layout(p.to(dtype), op_layout)
            for j in range(1, n_blocks):
                sj = (c + j) % STAGES
                sp = (c + j - 1) % STAGES
                mbarrier.wait(k_ready.index(sj), ((c + j) // STAGES) & 1)
                s = warpgroup_mma(q, k_bufs.index(sj).permute((1, 0)), zero_s, use_acc=False, is_async=True)
                mbarrier.wait(v_ready.index(sp), ((c + j - 1) // STAGES) & 1)
                acc = warpgroup_mma(p_op, v_bufs.index(sp), acc, is_async=True)
                s = warpgroup_mma_wait(1, deps=(s,))  # S_j done; P_{j-1} V_{j-1} may still run
                mbarrier.arrive(k_empty.index(sj), count=1)
                p, m_i, l_i, alpha = _softmax(s, m_i, l_i, j * BLOCK_N, full_hi, last_key, cols, qk_scale, MASKS)
                acc, p_op = warpgroup_mma_wait(0, deps=(acc, p_op))
                mbarrier.arrive(v_empty.index(sp), count=1)
                acc = acc * gl.convert_layout(alpha, o_row_l)[:, None]
                p_op = gl.convert_layout(p.to(dtype), op_layout)
            mbarrier.arrive(q_empty.index(i % QB), count=1)  # every S of the tile is done: the slot is free
            sl = (c + n_blocks - 1) % STAGES
            mbarrier.wait(v_ready.index(sl), ((c + n_blocks - 1) // STAGES) & 1)
            acc = warpgroup_mma(p_op, v_bufs.index(sl), acc, is_async=True)
            acc, p_op = warpgroup_mma_wait(0, deps=(acc, p_op))
            mbarrier.arrive(v_empty.index(sl), count=1)
        else:
            mbarrier.arrive(q_empty.index(i % QB), count=1)
        l_safe = gl.convert_layout(gl.where(l_i == 0.0, 1.0, l_i), o_row_l)
        o = (acc * (1.0 / l_safe)[:, None]).to(dtype)
        o_rows = m_first + WHICH * ROWS + gl.arange(0, ROWS, layout=o_row_l)
        offs = (pid_bh.to(gl.int64) * N_Q + o_rows.to(gl.int64))[:, None] * HEAD_DIM + d[None, :]
        gl.store(o_ptr + offs, o, mask=(o_rows < N_Q)[:, None])
        c += n_blocks
        i += 1
        t = _next_tile(q_bar, tile_smem, i)


@gluon.jit
def gluon_attention_kernel(q_desc, k_desc, v_desc, o_ptr, sched_ptr, H, HK, N_Q, N_KV, qk_scale,
                           CAUSAL: gl.constexpr, STAGES: gl.constexpr, DYNAMIC: gl.constexpr, Q_BUFS: gl.constexpr):
    """o = softmax(q k^T * scale (+ causal mask)) v for contiguous (B, H, N_Q, D) q / o and (B, HK, N_KV, D) k, v
    (descriptors over the (rows, D) views: q blocks of 64 rows, k / v blocks of BLOCK_N rows). ``sched_ptr``: two
    int32 counters, zero before the launch and left zero after it (``DYNAMIC``: tiles taken in turn). ``Q_BUFS``
    2: the next tile's Q (and so its K / V) loads while this tile's last blocks run."""
    dtype: gl.constexpr = q_desc.dtype
    n_bh = q_desc.shape[0] // N_Q
    q_smem = gl.allocate_shared_memory(dtype, [2 * Q_BUFS] + q_desc.block_type.shape, q_desc.layout)
    k_bufs = gl.allocate_shared_memory(dtype, [STAGES] + k_desc.block_type.shape, k_desc.layout)
    v_bufs = gl.allocate_shared_memory(dtype, [STAGES] + v_desc.block_type.shape, v_desc.layout)
    q_bar = gl.allocate_shared_memory(gl.int64, [Q_BUFS, 1], mbarrier.MBarrierLayout())
    q_empty = gl.allocate_shared_memory(gl.int64, [Q_BUFS, 1], mbarrier.MBarrierLayout())
    k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    k_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    tile_smem = gl.allocate_shared_memory(gl.int32, [Q_BUFS, 1], gl.SwizzledSharedLayout(1, 1, 1, [0]))
    for i in gl.static_range(Q_BUFS):
        mbarrier.init(q_bar.index(i), count=1)
        mbarrier.init(q_empty.index(i), count=2)  # one arrival per consumer
    for i in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(k_empty.index(i), count=2)  # one arrival per consumer
        mbarrier.init(v_empty.index(i), count=2)
    fence_async_shared()
    gl.warp_specialize([
        (_consumer, (q_smem, k_bufs, v_bufs, q_bar, q_empty, k_ready, v_ready, k_empty, v_empty, tile_smem,
                     o_ptr, H, N_Q, N_KV, n_bh, qk_scale, CAUSAL, 0)),
        (_consumer, (q_smem, k_bufs, v_bufs, q_bar, q_empty, k_ready, v_ready, k_empty, v_empty, tile_smem,
                     o_ptr, H, N_Q, N_KV, n_bh, qk_scale, CAUSAL, 1)),
        (_loader, (q_desc, k_desc, v_desc, q_smem, k_bufs, v_bufs, q_bar, q_empty, k_ready, v_ready, k_empty,
                   v_empty, tile_smem, sched_ptr, H, HK, N_Q, N_KV, CAUSAL, DYNAMIC)),
    ], [4, 1], [CONSUMER_REGS, LOADER_REGS])
    for i in gl.static_range(Q_BUFS):
        mbarrier.invalidate(q_bar.index(i))
        mbarrier.invalidate(q_empty.index(i))
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(k_ready.index(i))
        mbarrier.invalidate(v_ready.index(i))
        mbarrier.invalidate(k_empty.index(i))
        mbarrier.invalidate(v_empty.index(i))


MAXNREG = 168  # 64K registers over the launch's 12 warps (two consumer warpgroups and the loader's)


def _gl_dtype(torch_dtype):
    return {"torch.bfloat16": gl.bfloat16, "torch.float16": gl.float16}[str(torch_dtype)]


def make_descriptors(q, k, v, block_n: int):
    """TMA descriptors over the (rows, D) views of contiguous q, k, v: q boxes of 64 rows, k / v of block_n."""
    d = q.shape[-1]

    def desc(t, rows):
        flat = t.view(-1, d)
        box = [rows, d]
        return TensorDescriptor.from_tensor(flat, box, gl.NVMMASharedLayout.get_default_for(box, _gl_dtype(t.dtype)))

    return desc(q, ROWS.value), desc(k, block_n), desc(v, block_n)


def sched_scratch(device):
    """The tile counters of persistent launches, one int32 pair per (device, stream) (kernels/_scratch.py). The
    kernel leaves them zero, so launches in one stream's order share a pair; each stream gets its own (two
    launches running at once on one pair would split its tiles wrongly)."""
    import torch

    from . import _scratch

    return _scratch.Scratch(device, ("attn_sched", 2, torch.int32))


def sched_buffer(device):
    """The counter pair of ``device``'s current stream (``sched_scratch``)."""
    return sched_scratch(device)()[0]


SMEM_BYTES = 227 * 1024  # sm_90's dynamic shared memory per block


def q_buffers(block_n: int, stages: int, d: int, persistent: bool) -> int:
    """2 where a second tile's Q fits beside the K / V ring (and a program has a next tile), else 1."""
    ring = 2 * stages * block_n * d * 2
    return 2 if persistent and ring + 4 * ROWS.value * d * 2 + 1024 <= SMEM_BYTES else 1


def launch(descs, o, B, H, HK, N_Q, N_KV, qk_scale, causal, stages, num_sms, dynamic=True, q_bufs=None):
    """One launch; returns (the compiled kernel, the grid, the arguments after (descriptors, o, counters); the
    counters are the launching stream's, ``sched_scratch``)).
    Fewer programs than tiles (persistent): each program takes the next untaken tile when it finishes one
    (``DYNAMIC``), in the launch order ``_tile`` gives; causal tiles differ in length, and a fixed stride left
    up to a third of the machine idle at the end (B4 H32 N2047 causal: 132 programs, the busiest with 1.5x the
    mean's work). ``dynamic=False``: the fixed stride (program p takes tiles p, p + grid, ...), for comparison;
    ``q_bufs``: 1 or 2 Q buffers (default ``q_buffers``)."""
    tiles = triton.cdiv(N_Q, 2 * ROWS.value) * B * H
    grid = (min(num_sms, tiles),)
    block_n, d = descs[1].block_shape[0], descs[0].block_shape[1]
    q_bufs = q_bufs or q_buffers(block_n, stages, d, grid[0] < tiles)
    tail = (H, HK, N_Q, N_KV, qk_scale, bool(causal), stages, bool(dynamic) and grid[0] < tiles, q_bufs)
    compiled = gluon_attention_kernel[grid](*descs, o, sched_buffer(o.device), *tail, num_warps=4,
                                            maxnreg=MAXNREG)
    return compiled, grid, tail


def supported(q, k, v, sm_scale) -> bool:
    """Whether this kernel takes the call: a Hopper GPU, contiguous 16-bit (B, H, N, D) tensors, D 64 or 128,
    a positive scale."""
    import torch

    return (q.is_cuda and torch.cuda.get_device_capability(q.device)[0] == 9 and q.dtype in (torch.bfloat16, torch.float16)
            and k.dtype == q.dtype and v.dtype == q.dtype and q.shape[-1] in (64, 128)
            and all(t.is_contiguous() and t.data_ptr() % 16 == 0 for t in (q, k, v)) and sm_scale > 0)


def gluon_attention(q, k, v, causal=False, sm_scale=None, *, block_n=128, stages=2, num_sms=None, out=None,
                    dynamic=True, q_bufs=None):
    """attention(q, k, v, causal, sm_scale) by this kernel (no checks beyond ``supported``)."""
    import math

    import torch

    B, H, N_Q, D = q.shape
    HK, N_KV = k.shape[1], k.shape[2]
    sm_scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    if not supported(q, k, v, sm_scale):
        raise ValueError("gluon_attention: contiguous bf16/fp16 (B, H, N, D) q, k, v on sm_90, D 64 or 128, "
                         "positive sm_scale")
    o = torch.empty_like(q) if out is None else out
    launch(make_descriptors(q, k, v, block_n), o, B, H, HK, N_Q, N_KV, sm_scale * LOG2E, causal, stages,
           num_sms or torch.cuda.get_device_properties(q.device).multi_processor_count, dynamic, q_bufs)
    return o
