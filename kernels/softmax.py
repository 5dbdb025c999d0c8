"""Fused row softmax over the last dim: ``y = exp(x - max(x)) / sum(exp(x - max(x)))``.

What it computes
    softmax along the last dim of ``x`` (any number of leading dims; the last dim contiguous), as
    ``torch.softmax(x, dim=-1)``. ``y`` is a new contiguous tensor of x's shape and dtype.

Design
    Leading dims are flattened into M rows; the config (kernels/_rows.py ``row_config``, shared with
    layernorm) is chosen by rule from N and the dtype:
    - ``softmax_kernel``: rows with ``next_power_of_2(N) <= 8192`` (up to 32768 for few rows, 16384 for many:
      kernels/_rows.py) live in registers, ROWS rows per tile
      (short rows: several, ~8 KiB of input per tile; fewer on launch-bound inputs, so that every SM
      gets programs): x read once, y written once, one exp per element.
      One tile per program, or (config ``stages`` >= 2) persistent programs walking tiles with the next
      tile's load in flight.
    - ``softmax_looped_kernel`` (online softmax, Milakov & Gimelshein 2018): longer rows, in chunks of 8192
      columns; pass 1 keeps a running max ``m`` and a running sum ``s``
      rescaled by ``exp(m_old - m_new)`` when the max grows; pass 2 re-reads the row (from L2; loads of pass
      1 hint ``evict_last``) and writes ``exp(x - m) / s``.
    - ``softmax_coop_kernel``: few long rows (rows of 48 KiB or more up to one row per two SMs, of 96 KiB or more
      up to one per SM, e.g. the logits of a decode step over a 128K vocabulary) on a GPU: each row cut into
      slices of 2048+ columns, one program each, so the row streams through many SMs instead of one. Each
      program reduces its slice to (max, sum of exp) in a scratch buffer, the row's programs meet at a barrier
      (an arrival counter; the launch is cooperative, so CUDA refuses it rather than hang if the programs could
      not all be resident), then each combines the row's pairs and writes its slice. Under the interpreter
      (programs run one after another) the same kernel runs as two launches, statistics then output. Rows off
      16-byte boundaries (odd N) are sliced from their aligned base (below).
      H200, bf16, GPU time: 1x128256 25.8 -> 4.6 us, 8x32768 5.2 -> 3.7, 64x50257 16.6 -> 7.9 (torch.softmax
      30.3 / 9.2 / 13.3).
    - N and the row strides are hinted as multiples of VEC (16-byte accesses for N = 1000, 5000, ...). Rows off
      16-byte boundaries (an odd N, e.g. GPT-2's 50257-token vocabulary) are read from each row's aligned base:
      whole 16-byte vectors (masks constant over each), the ragged ends (under 16 bytes at each end) in 2 x 16
      bytes of edge lanes (``vec_step``, ``edges``); the single-pass kernel takes that path for rows of 2 KB or
      more, one row per program, and shorter odd rows in small scalar tiles (``odd_rows``).
      H200, bf16, do_bench (tests/bench/odd_shapes.py): 4096x50257 433 -> 299 us (torch.softmax 364), 8192x32001
      493 -> 329 (610).
    - The wrapper caches a launcher per call signature (kernels/_launch.py).
    Measured on an H200 before this rule (Triton 3.6, fp16, one row per program, % of the 4.27 TB/s device
    copy): 8192x8192 and 16384x4096 ~91%, online 2048x65536 ~76%. The sweep over row lengths:
    tests/bench/sweep_h200.py.
    Limits: any N >= 1 (long rows loop); row offsets in int64.

Numerics
    fp16/bf16 are upcast to fp32 before any arithmetic; max, exp and sum are fp32; the row max is
    subtracted before exp (no overflow for |x| up to fp32 range). Padded lanes load -inf, so they add
    exp(-inf) = 0 to the sum. A row of all -inf gives NaN, as torch does. Output is rounded once to
    x's dtype.
"""
import torch
import triton
import triton.language as tl

from triton.runtime.jit import JITFunction

from . import _launch, _scratch
from ._rows import (RowConfig, _device_properties, _persistent_programs, aligned_row, check_config, coop_configs,
                    launch, odd_rows, row_config, split_tail, va, vec, vec_step)

_SUPPORTED = (torch.float32, torch.float16, torch.bfloat16)
# Largest block (columns) the wrapper may use; the rule (kernels/_rows.py) decides below it.
MAX_FUSED_BLOCK_N = 32768
# Chunk of the looped kernel for many rows of > 16384 columns (H200, session 7: softmax 1024x32768 46.0 us
# with 8192-column chunks and 16 warps vs 53.3 with 4096).
LOOP_CHUNK = 8192


@triton.jit
def _softmax_tile(x_ptr, y_ptr, tile, sx, sy, M, n_vec, cols, ROWS: tl.constexpr):
    rows = tile * ROWS + tl.arange(0, ROWS)
    mask = (rows < M)[:, None] & (cols < n_vec)[None, :]
    rows64 = rows.to(tl.int64)  # int64: M * stride can pass 2**31
    # padded lanes load -inf: they never win the max and add exp(-inf) = 0 to the sum
    x = tl.load(x_ptr + rows64[:, None] * sx + cols[None, :], mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=1)
    m = tl.where(m == -float("inf"), 0.0, m)  # rows past M (all padding): no NaN computed, none stored
    e = tl.exp(x - m[:, None])
    inv_s = 1.0 / tl.sum(e, axis=1)
    y = e * inv_s[:, None]
    tl.store(y_ptr + rows64[:, None] * sy + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_row_va(x_ptr, y_ptr, row, sx, n_vec, cols, VA: tl.constexpr):
    """One row off 16-byte boundaries held whole (x and y share the row stride ``sx``): whole 16-byte vectors from
    its aligned base, the ragged ends as edge lanes. One row, 1-D: with a 2-D tile of several rows, Triton 3.6 laid
    the edge lanes out as the tile (each thread loading all 32 of a 4-row tile's edge lanes, 1.8x the time)."""
    x_row, y_row, lead, e_col, e_head, e_tail, _ = aligned_row(x_ptr, y_ptr, row.to(tl.int64) * sx, n_vec, VA)
    mask = (cols >= (lead + VA - 1) // VA * VA) & (cols < (lead + n_vec) // VA * VA)
    e_on = e_head | e_tail
    xe = tl.load(x_row + e_col, mask=e_on, other=-float("inf")).to(tl.float32)
    x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
    m = tl.maximum(tl.max(x, axis=0), tl.max(xe, axis=0))
    m = tl.where(m == -float("inf"), 0.0, m)  # a row of -inf: s = 0 and y = 0 / 0 = NaN, as torch
    e = tl.exp(x - m)
    ee = tl.exp(xe - m)
    inv_s = 1.0 / (tl.sum(e, axis=0) + tl.sum(ee, axis=0))
    tl.store(y_row + e_col, (ee * inv_s).to(y_ptr.dtype.element_ty), mask=e_on)
    tl.store(y_row + cols, (e * inv_s).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_kernel(
    x_ptr,  # *T, input (M, N), last dim contiguous
    y_ptr,  # *T, output (M, N), contiguous
    stride_x_row,  # elements between rows of x (a multiple of VEC)
    stride_y_row,  # elements between rows of y (a multiple of VEC)
    M,  # rows
    N,  # columns (softmax length; a multiple of VEC)
    BLOCK_N: tl.constexpr,  # next_power_of_2(N): whole rows in one block
    ROWS: tl.constexpr,  # rows per tile
    VEC: tl.constexpr,  # power of two dividing N and both row strides (16-byte vector accesses)
    STAGES: tl.constexpr,  # 1: one tile per program; >= 2: persistent programs, next tile's load in flight
    VA: tl.constexpr = 1,  # 1, or the elements of 16 bytes where rows start off 16-byte boundaries (N odd, say;
    #                       ROWS == 1 then)
):
    # round down to what VEC says they are (no-ops): tells Triton N and the strides are multiples of VEC
    n_vec = N // VEC * VEC
    sx = stride_x_row // VEC * VEC
    sy = stride_y_row // VEC * VEC
    cols = tl.arange(0, BLOCK_N)
    if STAGES == 1:
        if VA > 1:  # ROWS == 1
            _softmax_row_va(x_ptr, y_ptr, tl.program_id(0), sx, n_vec, cols, VA)
        else:
            _softmax_tile(x_ptr, y_ptr, tl.program_id(0), sx, sy, M, n_vec, cols, ROWS)
    else:
        for tile in tl.range(tl.program_id(0), tl.cdiv(M, ROWS), tl.num_programs(0), num_stages=STAGES):
            if VA > 1:
                _softmax_row_va(x_ptr, y_ptr, tile, sx, n_vec, cols, VA)
            else:
                _softmax_tile(x_ptr, y_ptr, tile, sx, sy, M, n_vec, cols, ROWS)


@triton.jit
def softmax_looped_kernel(
    x_ptr,  # *T, input (M, N), last dim contiguous
    y_ptr,  # *T, output (M, N), contiguous
    stride_x_row,  # elements between rows of x (a multiple of VEC)
    stride_y_row,  # elements between rows of y (a multiple of VEC)
    M,  # rows (the grid is (M,); unused here, kept for one argument list with the single-pass kernel)
    N,  # columns (a multiple of VEC)
    BLOCK_N: tl.constexpr,  # chunk of columns per loop step; power of two
    ROWS: tl.constexpr,  # 1
    VEC: tl.constexpr,  # power of two dividing N and both row strides
    STAGES: tl.constexpr,  # pipelining depth of the chunk loops (1: none)
    VA: tl.constexpr = 1,  # 1, or the elements of 16 bytes where rows start off 16-byte boundaries (N odd, say)
):
    n_vec = N // VEC * VEC
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    m = -float("inf")  # running max
    s = 0.0  # running sum of exp(x - m)
    if VA > 1:  # the row off 16-byte boundaries (stride_x_row == stride_y_row): whole vectors from its aligned
        # base in the chunk loops, its ragged ends (under VA elements at each end) in 2 * VA edge lanes
        x_row, y_row, lead, e_col, e_head, e_tail, _ = aligned_row(x_ptr, y_ptr, row * stride_x_row, n_vec, VA)
        e_on = e_head | e_tail
        xe = tl.load(x_row + e_col, mask=e_on, other=-float("inf")).to(tl.float32)
        m = tl.max(xe, axis=0)
        s = tl.sum(tl.exp(xe - tl.where(m == -float("inf"), 0.0, m)), axis=0)
    else:
        lead = 0
        x_row = x_ptr + row * (stride_x_row // VEC * VEC)
        y_row = y_ptr + row * (stride_y_row // VEC * VEC)

    # Pass 1: online max and rescaled sum.
    for start in tl.range(0, lead + n_vec, BLOCK_N, num_stages=STAGES):
        offs, mask = vec_step(start, cols, n_vec, lead, VA)
        x = tl.load(x_row + offs, mask=mask, other=-float("inf"), eviction_policy="evict_last").to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        # while every value so far is -inf, m_new is -inf and (-inf) - (-inf) would be NaN: shift by 0
        m_shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        s = s * tl.exp(m - m_shift) + tl.sum(tl.exp(x - m_shift), axis=0)
        m = m_new
    inv_s = 1.0 / s

    # Pass 2: normalise and write (x comes back from L2).
    if VA > 1:
        tl.store(y_row + e_col, (tl.exp(xe - m) * inv_s).to(y_ptr.dtype.element_ty), mask=e_on)
    for start in tl.range(0, lead + n_vec, BLOCK_N, num_stages=STAGES):
        offs, mask = vec_step(start, cols, n_vec, lead, VA)
        x = tl.load(x_row + offs, mask=mask, other=-float("inf"), eviction_policy="evict_first").to(tl.float32)
        y = tl.exp(x - m) * inv_s
        tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_split_kernel(
    x_ptr, y_ptr,  # as softmax_kernel
    stride_x_row,  # elements between rows of x (a multiple of VEC)
    stride_y_row,  # elements between rows of y (a multiple of VEC)
    M,  # rows (the grid is (M,))
    N,  # columns, BLOCK_N < N < 2 * BLOCK_N (a multiple of VEC)
    BLOCK_N: tl.constexpr,  # the largest power of two below N: the row's head, no mask
    BLOCK_B: tl.constexpr,  # next_power_of_2(N - BLOCK_N) (at least VA): the row's tail, masked
    VEC: tl.constexpr,  # power of two dividing N and both row strides
    VA: tl.constexpr = 1,  # 1, or the elements of 16 bytes where rows start off 16-byte boundaries (N odd, say)
):
    # One row as two power-of-two blocks instead of one padded block (see layernorm_fwd_split_kernel).
    n_vec = N // VEC * VEC
    row = tl.program_id(0).to(tl.int64)
    ca = tl.arange(0, BLOCK_N)
    cb = BLOCK_N + tl.arange(0, BLOCK_B)
    if VA > 1:  # the row off 16-byte boundaries: both blocks from its aligned base in whole vectors, ends apart
        x_row, y_row, lead, e_col, e_head, e_tail, _ = aligned_row(x_ptr, y_ptr, row * stride_x_row, n_vec, VA)
        ma = ca >= (lead + VA - 1) // VA * VA
        mb = cb < (lead + n_vec) // VA * VA
        e_on = e_head | e_tail
        xe = tl.load(x_row + e_col, mask=e_on, other=-float("inf")).to(tl.float32)
        xa = tl.load(x_row + ca, mask=ma, other=-float("inf")).to(tl.float32)
    else:
        x_row = x_ptr + row * (stride_x_row // VEC * VEC)
        y_row = y_ptr + row * (stride_y_row // VEC * VEC)
        ma = None  # the head: no mask
        mb = cb < n_vec
        xa = tl.load(x_row + ca).to(tl.float32)
    xb = tl.load(x_row + cb, mask=mb, other=-float("inf")).to(tl.float32)
    m = tl.maximum(tl.max(xa, axis=0), tl.max(xb, axis=0))
    if VA > 1:
        m = tl.maximum(m, tl.max(xe, axis=0))
    ea = tl.exp(xa - m)
    eb = tl.exp(xb - m)  # padded lanes: exp(-inf) = 0
    s = tl.sum(ea, axis=0) + tl.sum(eb, axis=0)
    if VA > 1:
        ee = tl.exp(xe - m)
        s += tl.sum(ee, axis=0)
    inv_s = 1.0 / s
    if VA > 1:
        tl.store(y_row + e_col, (ee * inv_s).to(y_ptr.dtype.element_ty), mask=e_on)
    tl.store(y_row + ca, (ea * inv_s).to(y_ptr.dtype.element_ty), mask=ma)
    tl.store(y_row + cb, (eb * inv_s).to(y_ptr.dtype.element_ty), mask=mb)


@triton.jit
def softmax_coop_kernel(
    x_ptr, y_ptr,  # as softmax_kernel
    stats_ptr,  # *fp32 scratch, 2 per program: its slice's max and sum of exp(x - max)
    count_ptr,  # *i32 scratch, 1 per row: the barrier's arrivals (zero before and after a fused launch)
    stride_x_row,  # elements between rows of x (a multiple of VEC)
    stride_y_row,  # elements between rows of y (a multiple of VEC; equal to stride_x_row when VA > 1)
    M,  # rows (the grid is (M * CHUNKS,))
    N,  # columns (a multiple of VEC)
    BLOCK_N: tl.constexpr,  # columns per step (power of two)
    PER: tl.constexpr,  # steps per program: a program's slice is PER * BLOCK_N columns (1: held in registers)
    CHUNKS: tl.constexpr,  # programs per row, cdiv(N (+ VA - 1), PER * BLOCK_N)
    CHUNKS_P2: tl.constexpr,  # next_power_of_2(CHUNKS)
    VEC: tl.constexpr,  # power of two dividing N and both row strides
    VA: tl.constexpr,  # 1, or the elements of 16 bytes where rows start off 16-byte boundaries (N odd, say)
    PHASE: tl.constexpr,  # 0: statistics, barrier, output in one launch (co-resident grid); 1: statistics; 2: output
):
    # A few long rows: each row cut into CHUNKS slices, one program each, so that the row's bytes stream through
    # CHUNKS SMs instead of one. Each program reduces its slice to (max, sum of exp), the row's programs meet at
    # a barrier (PHASE 0, on a GPU under a cooperative launch: every program resident at once), then each one
    # combines the row's CHUNKS pairs and writes its slice. PHASE 1 then 2 is the same as two launches (the
    # interpreter runs programs one after another, so no program may wait for another there).
    # VA > 1 (rows not on 16-byte boundaries): slices are cut from the row's 16-byte-aligned base, each step loads
    # and stores whole 16-byte vectors (masks constant over each), and the row's ragged ends (under VA elements at
    # each end) go through 2 * VA edge lanes, taken by the program whose slice holds them.
    n_vec = N // VEC * VEC
    pid = tl.program_id(0)
    row = pid // CHUNKS
    chunk = pid - row * CHUNKS
    row64 = row.to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    SL: tl.constexpr = PER * BLOCK_N
    if VA > 1:
        x_row, y_row, lead, e_col, e_head, e_tail, tail_at = aligned_row(x_ptr, y_ptr, row64 * stride_x_row, n_vec,
                                                                         VA)
        start = chunk * SL
        mine = e_col * 0 + chunk  # (a tensor: the interpreter's & of a tensor and a scalar bool is no mask)
        # the row's first, partial vector is chunk 0's; the last one, its chunk's
        e_on = (e_head & (mine == 0)) | (e_tail & (mine == tail_at // SL))
        xe = tl.load(x_row + e_col, mask=e_on, other=-float("inf")).to(tl.float32)
    else:
        lead = 0
        x_row = x_ptr + row64 * (stride_x_row // VEC * VEC)
        y_row = y_ptr + row64 * (stride_y_row // VEC * VEC)
        start = chunk * SL
    o0, k0 = vec_step(start, cols, n_vec, lead, VA)
    x = tl.load(x_row + o0, mask=k0, other=-float("inf")).to(tl.float32)
    if PHASE != 2:
        m_c = tl.max(x, axis=0)
        if VA > 1:
            m_c = tl.maximum(m_c, tl.max(xe, axis=0))
        shift = tl.where(m_c == -float("inf"), 0.0, m_c)
        s_c = tl.sum(tl.exp(x - shift), axis=0)
        if VA > 1:
            s_c += tl.sum(tl.exp(xe - shift), axis=0)
        for step in tl.range(1, PER):  # longer slices: online max and rescaled sum, as softmax_looped_kernel
            os_, ks = vec_step(start + step * BLOCK_N, cols, n_vec, lead, VA)
            xs = tl.load(x_row + os_, mask=ks, other=-float("inf"), eviction_policy="evict_last").to(tl.float32)
            m_new = tl.maximum(m_c, tl.max(xs, axis=0))
            shift = tl.where(m_new == -float("inf"), 0.0, m_new)
            s_c = s_c * tl.exp(m_c - shift) + tl.sum(tl.exp(xs - shift), axis=0)
            m_c = m_new
        tl.store(stats_ptr + 2 * pid, m_c)
        tl.store(stats_ptr + 2 * pid + 1, s_c)
    if PHASE == 0:
        # barrier of the row's CHUNKS programs (every thread's stores above first). Each arrival takes a ticket;
        # the last one puts the counter back to zero, which releases the others: a waiter leaves when the counter
        # holds CHUNKS or has dropped to its ticket or below (it only rises above the ticket until the reset)
        tl.debug_barrier()
        ticket = tl.atomic_add(count_ptr + row, 1, sem="acq_rel", scope="gpu")
        if ticket == CHUNKS - 1:
            tl.atomic_xchg(count_ptr + row, 0, sem="release", scope="gpu")
        else:
            seen = tl.atomic_add(count_ptr + row, 0, sem="acquire", scope="gpu")
            while (seen > ticket) & (seen < CHUNKS):
                seen = tl.atomic_add(count_ptr + row, 0, sem="acquire", scope="gpu")
    if PHASE != 1:
        c = tl.arange(0, CHUNKS_P2)
        on = c < CHUNKS
        stats = stats_ptr + 2 * (row * CHUNKS + c)
        ms = tl.load(stats, mask=on, other=-float("inf"), volatile=True)
        ss = tl.load(stats + 1, mask=on, other=0.0, volatile=True)
        m = tl.max(ms, axis=0)
        m = tl.where(m == -float("inf"), 0.0, m)  # a row of -inf: s = 0 and y = 0 / 0 = NaN, as torch
        inv_s = 1.0 / tl.sum(ss * tl.exp(ms - m), axis=0)
        if VA > 1:
            tl.store(y_row + e_col, (tl.exp(xe - m) * inv_s).to(y_ptr.dtype.element_ty), mask=e_on)
        if PER == 1:
            tl.store(y_row + o0, (tl.exp(x - m) * inv_s).to(y_ptr.dtype.element_ty), mask=k0)
        else:
            for step in tl.range(0, PER):
                os_, ks = vec_step(start + step * BLOCK_N, cols, n_vec, lead, VA)
                xs = tl.load(x_row + os_, mask=ks, other=-float("inf"), eviction_policy="evict_first")
                y = tl.exp(xs.to(tl.float32) - m) * inv_s
                tl.store(y_row + os_, y.to(y_ptr.dtype.element_ty), mask=ks)


_PLANS: dict = {}  # call signature -> cached launcher (of either kernel)
_SINGLE = _launch.Launches(softmax_kernel, _PLANS)
_LOOPED = _launch.Launches(softmax_looped_kernel, _PLANS)
_SPLIT = _launch.Launches(softmax_split_kernel, _PLANS)
_COOP = _launch.Launches(softmax_coop_kernel, _PLANS)
COOP_MAX_PROGRAMS = 4096  # scratch per (device, stream): 2 statistics per program, 1 counter per row
COOP_REFUSED: set = set()  # devices where CUDA refused a cooperative launch: the rule picks without coop there


def _coop_scratch(device) -> _scratch.Scratch:
    return _scratch.Scratch(device, ("softmax_stats", 2 * COOP_MAX_PROGRAMS, torch.float32),
                            ("softmax_count", COOP_MAX_PROGRAMS, torch.int32))


def _coop_consts(N: int, cfg: RowConfig, v: int, va: int = 1) -> dict:
    """``va`` > 1: rows off 16-byte boundaries cut from their aligned base (one more chunk may be needed)."""
    chunks = triton.cdiv(N + va - 1, cfg.block_n * cfg.per)
    return dict(BLOCK_N=cfg.block_n, PER=cfg.per, CHUNKS=chunks, CHUNKS_P2=triton.next_power_of_2(chunks), VEC=v,
                VA=va)


def _fused() -> bool:
    """The coop kernel may run as one launch: compiled (the interpreter runs programs one after another)."""
    return isinstance(softmax_coop_kernel, JITFunction)


def _coop_pick(x2, y2, scalars: dict, v: int, max_block_n: int) -> RowConfig | None:
    """The first of the rule's coop configs whose programs all fit on the GPU at once (a cooperative launch
    needs that), or None."""
    M, N = scalars["M"], scalars["N"]
    sms = _device_properties(x2.device.index or 0)["multiprocessor_count"]
    tensors = (x2, y2, *_coop_scratch(x2.device)())
    for cfg in coop_configs(M, N, x2.element_size(), sms, max_block_n):
        consts = _coop_consts(N, cfg, v, va(x2, y2, v, cfg.block_n))
        programs = M * consts["CHUNKS"]
        if programs > COOP_MAX_PROGRAMS:
            continue
        if programs <= _persistent_programs(softmax_coop_kernel, tensors, scalars,
                                            {**consts, "PHASE": 0, "launch_cooperative_grid": True}, cfg):
            return cfg
    return None


def _coop(x2, y2, sig, scalars: dict, cfg: RowConfig, v: int) -> None:
    """Rows cut into slices, one program each (``softmax_coop_kernel``): one cooperative launch on a GPU (CUDA
    refuses it, instead of hanging, if the programs cannot all be resident at once), two launches under the
    interpreter."""
    M, N = scalars["M"], scalars["N"]
    consts = _coop_consts(N, cfg, v, va(x2, y2, v, cfg.block_n))
    programs = M * consts["CHUNKS"]
    if programs > COOP_MAX_PROGRAMS:
        raise ValueError(f"softmax: a coop config over {M} rows of {N} needs {programs} programs, more than "
                         f"{COOP_MAX_PROGRAMS}")
    scratch = _coop_scratch(x2.device)
    if _fused():  # compiled: a GPU launch (or `tritondbg ir` capturing what a GPU would launch)
        compiled = softmax_coop_kernel[(programs,)](x2, y2, *scratch(), *scalars.values(), **consts, PHASE=0,
                                                    num_warps=cfg.num_warps, launch_cooperative_grid=True)
        _COOP.record(sig, compiled, (programs,), (x2, y2), {**scalars, **consts, "PHASE": 0}, out=y2,
                     scratch=scratch)
        return
    for phase in (1, 2):
        softmax_coop_kernel[(programs,)](x2, y2, *scratch(), *scalars.values(), **consts, PHASE=phase,
                                         num_warps=cfg.num_warps)


def config_for(N: int, elem_size: int, max_block_n: int = MAX_FUSED_BLOCK_N,
               M: int | None = None, sms: int | None = None) -> RowConfig:
    """The config the wrapper's rule picks for contiguous rows (kernels/_rows.py ``row_config`` with this kernel's
    loop chunk; rows off 16-byte boundaries held whole: ``odd_rows``); with ``sms`` (a GPU's SM count) and M, the
    coop config it tries first where few long rows get one (the wrapper takes it when its programs fit on the GPU
    at once)."""
    if M is not None and sms:
        coop = coop_configs(M, N, elem_size, sms, max_block_n)
        if coop:
            return coop[0]
    cfg = row_config(N, elem_size, max_block_n, M, LOOP_CHUNK)
    if cfg.kind == "single" and N * elem_size % 16:
        return odd_rows(cfg, elem_size, M=M)
    return cfg


def softmax(x: torch.Tensor, max_block_n: int = MAX_FUSED_BLOCK_N, config: RowConfig | None = None) -> torch.Tensor:
    """Softmax over the last dim of ``x``; returns a contiguous tensor of x's shape and dtype.

    ``max_block_n`` (a power of two) caps the columns of a block: rows whose ``next_power_of_2(N)`` exceeds
    it (or the rule's single-pass limit) loop in chunks. Lower it to force the looped path on small rows
    (tests). ``config`` (a ``RowConfig`` or a (kind, block_n, rows, num_warps) tuple) overrides the rule
    (benchmarks of the rule).
    """
    # ---- steady state: a call signature seen before (CUDA, nothing patched): its cached launcher ---------
    try:
        sig = (x.shape, x.stride(), x.dtype, x.device, max_block_n, config)
        launcher = _SINGLE.plan(sig, x)
    except (AttributeError, TypeError):  # not a tensor, unhashable arguments: the checks below say what
        sig = launcher = None
    if launcher is not None:
        y = torch.empty_like(x, memory_format=torch.contiguous_format)  # ~2.5 us cheaper than torch.empty(...)
        launcher(x, y)  # same data pointers as the (M, N) views the first call passed
        return y
    guard = _launch.device_guard(x)
    if guard is not None:  # x on another GPU than the current one: launch there, as torch ops do
        with guard:
            return softmax(x, max_block_n, config)

    if not isinstance(x, torch.Tensor) or x.dim() < 1:
        raise ValueError(f"softmax: x must be a tensor with at least 1 dim, got {getattr(x, 'shape', type(x))}")
    if x.dtype not in _SUPPORTED:
        raise ValueError(f"softmax: x dtype {x.dtype} not supported; use one of {[str(d) for d in _SUPPORTED]}")
    if not isinstance(max_block_n, int) or max_block_n < 1 or max_block_n & (max_block_n - 1):
        raise ValueError(f"softmax: max_block_n must be a power of two, got {max_block_n}")
    N = x.shape[-1]
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return y
    if x.dim() == 2:
        x2 = x
    elif x.is_contiguous():
        x2 = x.reshape(-1, N)
    else:
        raise ValueError("softmax: x with other than 2 dims must be contiguous (call .contiguous() first)")
    if N > 1 and x2.stride(1) != 1:
        raise ValueError(f"softmax: x's last dim must be contiguous (stride 1), got strides {x.stride()}")
    y2 = y.view(-1, N)
    M = x2.shape[0]
    v = vec(N, x2.stride(0), y2.stride(0), elem_size=x.element_size())
    scalars = dict(stride_x_row=x2.stride(0), stride_y_row=y2.stride(0), M=M, N=N)
    if config is not None:
        cfg = check_config(config, max_block_n, N)
    elif _launch.launchable(x2) and _fused() and x2.device not in COOP_REFUSED:
        cfg = _coop_pick(x2, y2, scalars, v, max_block_n) or config_for(N, x.element_size(), max_block_n, M)
    else:
        cfg = config_for(N, x.element_size(), max_block_n, M)
    if cfg.kind == "coop":
        try:
            _coop(x2, y2, sig, scalars, cfg, v)
            return y
        except RuntimeError as e:
            # CUDA refused the cooperative launch: fewer SMs than the device reports (an MPS client's share of the
            # GPU, say). The rule's own pick then, for this device from now on; a config the caller gave fails.
            if config is not None or "cooperative" not in str(e):
                raise
            COOP_REFUSED.add(x2.device)
            cfg = config_for(N, x.element_size(), max_block_n, M)
    if cfg.kind == "split":
        a = va(x2, y2, v, cfg.block_n)
        consts = dict(BLOCK_N=cfg.block_n, BLOCK_B=max(split_tail(N, cfg.block_n), a), VEC=v, VA=a)
        launch(softmax_split_kernel, _SPLIT, sig, (x2, y2), scalars, consts, cfg, M, y2)
        return y
    kernel, launches = (softmax_kernel, _SINGLE) if cfg.kind == "single" else (softmax_looped_kernel, _LOOPED)
    a = va(x2, y2, v, cfg.block_n) if cfg.rows == 1 else 1  # the aligned path holds one row per program
    consts = dict(BLOCK_N=cfg.block_n, ROWS=cfg.rows, VEC=v, STAGES=cfg.stages, VA=a)
    launch(kernel, launches, sig, (x2, y2), scalars, consts, cfg, triton.cdiv(M, cfg.rows), y2)
    return y


def reference(x, max_block_n=None, config=None):
    """torch.softmax in fp32 (``max_block_n`` and ``config`` are the kernel's tiling; ignored)."""
    return torch.softmax(x.float(), dim=-1)


def flops(M: int, N: int, **_params) -> float:
    """Per element: max, subtract, exp, sum, multiply: ~5 flops (exp counted as one)."""
    return 5.0 * M * N


def bytes_moved(M: int, N: int, dtype: torch.dtype, **_params) -> float:
    """Read x and write y once each."""
    return 2.0 * M * N * torch.empty((), dtype=dtype).element_size()
