"""Warp-specialised persistent gemm for Hopper (sm_90), written in Gluon (``triton.experimental.gluon``).

Why: on the H200, cuBLAS beats the tl gemm kernels with a warp-specialised kernel (a TMA producer warp, wgmma
consumer warpgroups, mbarrier rings; Nsight Compute, tests/bench/runs/s9_ncu_misses.txt), and Triton 3.6's
automatic warp specialisation did not get there (tests/bench/kernels_h200.md, session 9). This is that design
written by hand (first as tests/bench/gluon_gemm.py, session 10). kernels/_gemm_ws.py decides per call
signature whether ``gemm`` uses it (a race against the tl kernels on the first call).

- persistent: ``min(#SMs, #tiles)`` programs walk the output tiles in grouped order (GROUP_M tile rows share
  the B columns they read, for L2); both partitions walk the same sequence.
- producer partition (1 warp, 40 registers via setmaxnreg): TMA loads of the A (BLOCK_M x BLOCK_K) and B boxes
  into a STAGES-deep shared-memory ring; ``ready[s]`` (expect-tx) says a stage is full, ``empty[s]`` says the
  consumers are done with it.
- consumer (default) partition, ``num_warps`` = 4 or 8: one or two warpgroups; with 8 the accumulator layout
  stacks the warpgroups along M, each owning 64 rows of a 128-row tile. Async wgmma with one group in flight:
  after wgmma k is issued, wgmma k-1 is waited for and its stage released.
- ping-pong (``PINGPONG``): two consumer partitions of one warpgroup each take alternate tiles; their main loops
  take turns (two ``turn`` mbarriers), so one's epilogue overlaps the other's main loop. Taking turns also keeps
  each consumer within one ring lap of the producer, which the ring's parity waits need.
- epilogue: accumulator -> output dtype -> shared memory -> TMA store; the store is waited for only before the
  next tile's epilogue reuses the buffer, so it overlaps the next tile's main loop.
- split-K (``SPLIT_K`` > 1, for few output tiles: M <= 128): a work unit is one K slice of a tile, a tile's units
  adjacent in the walk; each publishes its fp32 partial to a cached workspace and counts itself on the tile's
  counter (a barrier of the consumer partition, one acq_rel gpu-scope atomic); the last to arrive sums the partials
  in the fixed order 0..SPLIT_K-1 (deterministic), writes c through the usual epilogue and zeroes the counter
  (``split_k_for`` picks SPLIT_K; ``split_scratch``: the workspace and counters, per stream). No ping-pong variant.
- split tail (``TAIL`` splits, for M > 128 where the tiles leave a last round at most half full: 2048x11008 at
  128x128 is 1376 tiles = 10 x 132 + 56): the whole rounds as above, then each of the last round's tiles split
  along K over the programs it would leave idle (``_tail_walk``: 56 tiles x 2 slices), merged as split-K's
  (``_split_merge``); gemm_tma_kernel's split tail, in this kernel (``tail_split`` sizes it). A stream-K tail
  (equal shares of the tail's (tile, K step) units over every program) was measured first and was slower on
  every shape (1024x5120x13824 238 us against 221 unsplit at 128x256, 1024x4096x4096 69 against 49 at 128x128):
  programs running at once read different K slices of one tile, so the L2 shares nothing between them and the
  tail is bound by DRAM (tests/bench/runs/s21_st_*.json). No ping-pong variant.
- edges: TMA zero-fills out-of-bounds boxes (a K tail reads zeros, adding nothing) and clips the store, so any
  M, N, K work without masks (TMA needs 16-byte aligned bases and row strides: K and N multiples of 8 for 16-bit).
- b: row-major (K, N), or K-major (``B_NK``: the (N, K) row-major weight ``w`` of ``a @ w.t()``, read through
  a permuted shared-memory view). fp8 e4m3 (``gluon_fp8_gemm``) always reads b K-major, applies per-tensor scales
  in the epilogue, writes bf16; precise accumulation adds each stage's wgmma chain into the fp32 accumulator
  after a synchronous wgmma.

No interpreter: Gluon kernels run on the GPU only (``tritondbg interpret gemm`` runs the tl kernels, which compute
the same product). Ideas and API use follow Triton's Gluon tutorials (triton-lang/triton python/tutorials/gluon,
MIT licence: 05-wgmma, 07-persistence, 08-warp-specialization); no code is copied. Triton 3.6 names the TMA
copies async_copy_global_to_shared / async_copy_shared_to_global, 3.9 async_load / async_store, and the CTA barrier
thread_barrier where 3.9 says barrier (bridged below).

Importing this module raises ImportError where Triton has no Gluon Hopper API.
"""
from __future__ import annotations

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
_tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global
_barrier = getattr(gl, "barrier", None) or gl.thread_barrier  # 3.9: barrier; 3.6: thread_barrier

# setmaxnreg: the TMA warp only holds scalars; the rest goes to the consumers (cuBLAS: 40 / 232)
PRODUCER_REGS = gl.constexpr(40)
CONSUMER_REGS = gl.constexpr(232)  # a ping-pong worker consumer (the default partition gets what is left)


@gluon.constexpr_function
def _acc_layout(dtype, BLOCK_M, BLOCK_N, num_warps):
    """wgmma accumulator layout: warpgroups stacked along M, the widest instruction N (<= 256) dividing BLOCK_N."""
    n = 256
    while BLOCK_N % n != 0:
        n //= 2
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                     instr_shape=[16, n, 256 // dtype.primitive_bitwidth])


@gluon.jit
def _tile_offsets(tile, num_pid_m, num_pid_n, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr):
    """Grouped order: GROUP_M tile rows walk the tile columns together (their B columns stay in L2)."""
    group = GROUP_M * num_pid_n
    first_m = (tile // group) * GROUP_M
    size_m = gl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile % group) % size_m
    pid_n = (tile % group) // size_m
    return pid_m * BLOCK_M, pid_n * BLOCK_N


@gluon.jit
def _unit(unit, num_pid_m, num_pid_n, k_tiles, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr,
          SPLIT_K: gl.constexpr):
    """Work unit -> (tile, split, off_m, off_n, first k step, k steps). A tile's SPLIT_K units are adjacent (they
    run at the same time: their partials stay in L2); split s takes k steps [s*kps, min((s+1)*kps, k_tiles)),
    never empty (the host picks SPLIT_K so, ``split_k_for``)."""
    tile = unit // SPLIT_K
    split = unit % SPLIT_K
    off_m, off_n = _tile_offsets(tile, num_pid_m, num_pid_n, BLOCK_M, BLOCK_N, GROUP_M)
    kps = gl.cdiv(k_tiles, SPLIT_K)
    k0 = split * kps
    return tile, split, off_m, off_n, k0, gl.minimum(kps, k_tiles - k0)


@gluon.jit
def _tail_walk(num_tiles, k_tiles, TAIL: gl.constexpr):
    """The split tail (``TAIL`` splits): the tiles of the last, partial round of the persistent walk (num_tiles %
    #programs of them) each split along K in TAIL slices; program p takes slice p % TAIL of tail tile p // TAIL
    (programs past tail x TAIL take none). Returns (num_dp: the tiles walked whole before, this program's tail
    tile and one past it (none: equal), the K steps of a slice)."""
    progs = gl.num_programs(0)
    num_dp = num_tiles - num_tiles % progs
    t_begin = gl.program_id(0) // TAIL
    t_end = t_begin
    if t_begin < num_tiles - num_dp:
        t_end = t_begin + 1
    return num_dp, t_begin, t_end, gl.cdiv(k_tiles, TAIL)


@gluon.jit
def _tail_share(k_tiles, kps, TAIL: gl.constexpr):
    """This program's K steps [k0, k1) of its tail tile, its slot among the tile's splits and their number (the
    non-empty ones: the host sizes TAIL so that none is empty)."""
    slot = gl.program_id(0) % TAIL
    k0 = slot * kps
    return k0, gl.minimum(k0 + kps, k_tiles), slot, gl.cdiv(k_tiles, kps)


@gluon.jit
def _load_steps(a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, k0, k1, it, B_NK: gl.constexpr):
    """Producer: K steps [k0, k1) of one tile into the ring from position ``it``; returns the next position."""
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    NBYTES: gl.constexpr = a_desc.block_type.nbytes + b_desc.block_type.nbytes  # OOB zero-fill counts too
    for kk in range(k0, k1):
        s = it % STAGES
        # a fresh mbarrier counts as having completed the phase before 0: the first lap does not wait
        mbarrier.wait(empty.index(s), ((it // STAGES) & 1) ^ 1)
        mbarrier.expect(ready.index(s), NBYTES)
        _tma_load(a_desc, [off_m, kk * BLOCK_K], ready.index(s), a_bufs.index(s))
        if B_NK:  # b is the (N, K) row-major weight (fp8: wgmma reads B K-major only)
            _tma_load(b_desc, [off_n, kk * BLOCK_K], ready.index(s), b_bufs.index(s))
        else:
            _tma_load(b_desc, [kk * BLOCK_K, off_n], ready.index(s), b_bufs.index(s))
        it += 1
    return it


@gluon.jit
def _producer(a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, GROUP_M: gl.constexpr, B_NK: gl.constexpr,
              SPLIT_K: gl.constexpr, TAIL: gl.constexpr):
    """Worker partition (1 warp): fill the ring with TMA, one stage per (unit, k step); then (TAIL) this
    program's slice of a split tail tile."""
    BLOCK_M: gl.constexpr = c_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    num_pid_m = gl.cdiv(c_desc.shape[0], BLOCK_M)
    num_pid_n = gl.cdiv(c_desc.shape[1], BLOCK_N)
    k_tiles = gl.cdiv(a_desc.shape[1], BLOCK_K)
    it = 0
    if TAIL:
        num_dp, t_begin, t_end, kps = _tail_walk(num_pid_m * num_pid_n, k_tiles, TAIL)
        num_units = num_dp
    else:
        num_units = num_pid_m * num_pid_n * SPLIT_K
    for unit in range(gl.program_id(0), num_units, gl.num_programs(0)):
        tile, split, off_m, off_n, k0, kn = _unit(unit, num_pid_m, num_pid_n, k_tiles, BLOCK_M, BLOCK_N, GROUP_M,
                                                  SPLIT_K)
        it = _load_steps(a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, k0, k0 + kn, it, B_NK)
    if TAIL:
        for t in range(t_begin, t_end):
            k0, k1, slot, count = _tail_share(k_tiles, kps, TAIL)
            off_m, off_n = _tile_offsets(num_dp + t, num_pid_m, num_pid_n, BLOCK_M, BLOCK_N, GROUP_M)
            it = _load_steps(a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, k0, k1, it, B_NK)


@gluon.jit
def _promote_step(a_bufs, b_bufs, ready, empty, acc, zero, prev, it, B_NK: gl.constexpr):
    """Issue stage ``it``'s wgmma chain into a fresh partial; wait for the chain before it (``prev``), add it
    into ``acc`` and hand its stage back. Returns (acc, the new chain, still in flight)."""
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    s = it % STAGES
    mbarrier.wait(ready.index(s), (it // STAGES) & 1)
    cur = warpgroup_mma(a_bufs.index(s), b_bufs.index(s).permute((1, 0)) if B_NK else b_bufs.index(s), zero,
                        use_acc=False, is_async=True)
    prev = warpgroup_mma_wait(1, deps=(prev,))  # all but the newest chain done: prev is complete
    acc = acc + prev
    mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1)
    return acc, cur


@gluon.jit
def _promoted_mainloop(a_bufs, b_bufs, ready, empty, acc, zero, it, k_tiles, B_NK: gl.constexpr):
    """fp8 precise accumulation, pipelined (PRECISE == 2): stage k's wgmma chain runs asynchronously into a
    fresh partial while stage k-1's partial (complete after ``warpgroup_mma_wait(1)``) is added into the fp32
    accumulator and its stage handed back. Three fp32 tiles live (acc and two partials): 128x128 over two
    warpgroups. The loop is unrolled by two so the partials alternate between two register sets: a loop that
    carried "prev = cur" would copy an in-flight wgmma's accumulator, and ptxas then serialises every wgmma
    (C7514). ``zero``: a zero tile in the accumulator layout (wgmma's unused input). Returns (acc, it)."""
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    s = it % STAGES
    mbarrier.wait(ready.index(s), (it // STAGES) & 1)
    p0 = warpgroup_mma(a_bufs.index(s), b_bufs.index(s).permute((1, 0)) if B_NK else b_bufs.index(s), zero,
                       use_acc=False, is_async=True)
    it += 1
    for kk in range(0, (k_tiles - 1) // 2):
        acc, p1 = _promote_step(a_bufs, b_bufs, ready, empty, acc, zero, p0, it, B_NK)
        acc, p0 = _promote_step(a_bufs, b_bufs, ready, empty, acc, zero, p1, it + 1, B_NK)
        it += 2
    if (k_tiles - 1) % 2 == 1:
        acc, p1 = _promote_step(a_bufs, b_bufs, ready, empty, acc, zero, p0, it, B_NK)
        it += 1
        last = warpgroup_mma_wait(0, deps=(p1,))
    else:
        last = warpgroup_mma_wait(0, deps=(p0,))
    acc = acc + last
    mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1)
    return acc, it


@gluon.jit
def _split_merge(acc, ws_ptr, cnt_ptr, tile, split, count, layout: gl.constexpr, BLOCK_M: gl.constexpr,
                 BLOCK_N: gl.constexpr, SPLIT_K: gl.constexpr):
    """Split-K: publish this unit's fp32 partial in slot ``split`` of the tile's SPLIT_K and count the tile's
    arrivals; the last of its ``count`` contributors (SPLIT_K here; fewer or a runtime value for
    kernels/_gluon_decode.py's stream-K walk) sums slots 0..count-1 in that fixed order (deterministic: the bits
    do not depend on who is last) and resets the counter. Returns (the sum, whether this unit is the last one);
    non-last units return their own partial, unused. Memory ordering as kernels/_splitk.py's: every thread's
    stores, a barrier of this partition, one acq_rel gpu-scope atomic (its release is cumulative), the result
    broadcast to the partition, the partials re-read from L2 (.cg)."""
    rows = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, layout))
    ws_tile = ws_ptr + tile.to(gl.int64) * (SPLIT_K * BLOCK_M * BLOCK_N) + (rows[:, None] * BLOCK_N + cols[None, :])
    gl.store(ws_tile + split * (BLOCK_M * BLOCK_N), acc)
    _barrier()
    arrived = gl.atomic_add(cnt_ptr + tile, 1, sem="acq_rel", scope="gpu")
    last = arrived == count - 1
    if last:
        acc = gl.load(ws_tile, cache_modifier=".cg")
        for s in range(1, count):
            acc += gl.load(ws_tile + s * (BLOCK_M * BLOCK_N), cache_modifier=".cg")
        gl.store(cnt_ptr + tile, 0)  # every split has arrived: zero it for the next launch
    return acc, last


@gluon.jit
def _epilogue(acc, c_desc, c_smem, off_m, off_n, scale_a_ptr, scale_b_ptr):
    """Accumulator -> [scales] -> output dtype -> shared memory -> TMA store (waited for only before the buffer's
    next use)."""
    if scale_a_ptr is not None:  # per-tensor scales (fp8)
        acc = acc * (gl.load(scale_a_ptr) * gl.load(scale_b_ptr))
    tma.store_wait(0)  # my previous TMA store has finished reading c_smem
    c_smem.store(acc.to(c_desc.dtype))
    fence_async_shared()  # generic-proxy writes before the async-proxy (TMA) read
    _tma_store(c_desc, [off_m, off_n], c_smem)


@gluon.jit
def _tile_acc(a_bufs, b_bufs, ready, empty, it, kn, layout: gl.constexpr, BLOCK_M: gl.constexpr,
              BLOCK_N: gl.constexpr, B_NK: gl.constexpr, PRECISE: gl.constexpr):
    """Consumer: one tile's ``kn`` K steps from ring position ``it`` into a fresh fp32 accumulator; returns
    (acc, the next position)."""
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    acc = gl.zeros((BLOCK_M, BLOCK_N), gl.float32, layout)
    if PRECISE == 2:
        zero = gl.zeros((BLOCK_M, BLOCK_N), gl.float32, layout)
        acc, it = _promoted_mainloop(a_bufs, b_bufs, ready, empty, acc, zero, it, kn, B_NK)
    else:
        for kk in range(kn):
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            b_op = b_bufs.index(s).permute((1, 0)) if B_NK else b_bufs.index(s)
            if PRECISE:
                # fp8 precise: the stage's wgmma chain (fast accumulation over BLOCK_K) goes into a fresh
                # partial, added to the fp32 accumulator. Synchronous on purpose: async warpgroup_mma with
                # max_num_imprecise_acc < K adds the partial before the wgmma wait (PTX: undefined; 3.6 and 3.9)
                part = warpgroup_mma(a_bufs.index(s), b_op, acc, use_acc=False)
                mbarrier.arrive(empty.index(s), count=1)
                acc = acc + part
            else:
                acc = warpgroup_mma(a_bufs.index(s), b_op, acc, is_async=True)
                # one wgmma stays in flight; the one before it is done reading its stage: hand that stage back
                acc = warpgroup_mma_wait(1, deps=(acc,))
                mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1, pred=kk > 0)
            it += 1
        if not PRECISE:
            acc = warpgroup_mma_wait(0, deps=(acc,))
            mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1)
    return acc, it


@gluon.jit
def _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, scale_a_ptr, scale_b_ptr,
              ws_ptr, cnt_ptr, GROUP_M: gl.constexpr, B_NK: gl.constexpr, PRECISE: gl.constexpr,
              PINGPONG: gl.constexpr, SPLIT_K: gl.constexpr, TAIL: gl.constexpr, WHICH: gl.constexpr,
              num_warps: gl.constexpr):
    """A consumer partition (num_warps warps): wgmma over the ring, then the epilogue through c_bufs[WHICH].
    PINGPONG: consumer WHICH (0 or 1) takes every other tile; their main loops take turns (``turn`` barriers),
    so one's epilogue overlaps the other's main loop, and neither waits on a ring lap the other has not freed.
    SPLIT_K > 1: a unit is one K slice of a tile; its partial goes through ``_split_merge``. TAIL: the whole
    rounds, then this program's K slice of a tail tile, merged through ``_split_merge`` (TAIL slices a tile)."""
    BLOCK_M: gl.constexpr = c_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    NCONS: gl.constexpr = 2 if PINGPONG else 1
    gl.static_assert(SPLIT_K == 1 or not PINGPONG, "split-K units have unequal k steps: no ping-pong")
    gl.static_assert(not TAIL or (SPLIT_K == 1 and not PINGPONG), "the split tail: no split-K, no ping-pong")
    layout: gl.constexpr = _acc_layout(a_desc.dtype, BLOCK_M, BLOCK_N, num_warps)
    c_smem = c_bufs.index(WHICH)
    num_pid_m = gl.cdiv(c_desc.shape[0], BLOCK_M)
    num_pid_n = gl.cdiv(c_desc.shape[1], BLOCK_N)
    k_tiles = gl.cdiv(a_desc.shape[1], BLOCK_K)
    if TAIL:
        num_dp, t_begin, t_end, kps = _tail_walk(num_pid_m * num_pid_n, k_tiles, TAIL)
        num_units = num_dp
    else:
        num_units = num_pid_m * num_pid_n * SPLIT_K
    n = 0
    it = 0  # ring position: the k steps of this program's units before this one
    for unit in range(gl.program_id(0) + WHICH * gl.num_programs(0), num_units, NCONS * gl.num_programs(0)):
        tile, split, off_m, off_n, k0, kn = _unit(unit, num_pid_m, num_pid_n, k_tiles, BLOCK_M, BLOCK_N, GROUP_M,
                                                  SPLIT_K)
        if PINGPONG:  # my turn: the other consumer finished the main loop of the tile before mine
            it = (n * NCONS + WHICH) * k_tiles  # both consumers' tiles, in order, every one k_tiles steps
            mbarrier.wait(turn.index(WHICH), (n & 1) ^ (1 - WHICH))
        acc, it = _tile_acc(a_bufs, b_bufs, ready, empty, it, kn, layout, BLOCK_M, BLOCK_N, B_NK, PRECISE)
        if PINGPONG:
            mbarrier.arrive(turn.index(1 - WHICH), count=1)
        if SPLIT_K > 1:
            acc, last = _split_merge(acc, ws_ptr, cnt_ptr, tile, split, SPLIT_K, layout, BLOCK_M, BLOCK_N, SPLIT_K)
            if last:
                _epilogue(acc, c_desc, c_smem, off_m, off_n, scale_a_ptr, scale_b_ptr)
        else:
            _epilogue(acc, c_desc, c_smem, off_m, off_n, scale_a_ptr, scale_b_ptr)
        n += 1
    if TAIL:
        for t in range(t_begin, t_end):
            k0, k1, slot, count = _tail_share(k_tiles, kps, TAIL)
            off_m, off_n = _tile_offsets(num_dp + t, num_pid_m, num_pid_n, BLOCK_M, BLOCK_N, GROUP_M)
            acc, it = _tile_acc(a_bufs, b_bufs, ready, empty, it, k1 - k0, layout, BLOCK_M, BLOCK_N, B_NK, PRECISE)
            if count > 1:  # other programs hold the rest of this tile's K: the last to arrive sums the slots
                acc, last = _split_merge(acc, ws_ptr, cnt_ptr, t, slot, count, layout, BLOCK_M, BLOCK_N, TAIL)
                if last:
                    _epilogue(acc, c_desc, c_smem, off_m, off_n, scale_a_ptr, scale_b_ptr)
            else:
                _epilogue(acc, c_desc, c_smem, off_m, off_n, scale_a_ptr, scale_b_ptr)
    tma.store_wait(0)


@gluon.jit
def gluon_gemm_kernel(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, ws_ptr, cnt_ptr, GROUP_M: gl.constexpr,
                      STAGES: gl.constexpr, B_NK: gl.constexpr, PRECISE: gl.constexpr, PINGPONG: gl.constexpr,
                      SPLIT_K: gl.constexpr, TAIL: gl.constexpr, num_warps: gl.constexpr):
    """c = a @ b [* scale_a * scale_b] (descriptors over row-major a (M, K), c (M, N), and b (K, N), or (N, K)
    when B_NK); persistent, warp-specialised. Scale pointers: None for 16-bit, 1-element fp32 for fp8. SPLIT_K > 1:
    ws_ptr an fp32 workspace of tiles * SPLIT_K * BLOCK_M * BLOCK_N, cnt_ptr one int32 counter per tile, zero
    on entry and left zero; TAIL (> 1, ``tail_split``): the same over the last round's tiles (TAIL slices each);
    else both None."""
    gl.static_assert(c_desc.block_type.shape[0] % (16 * num_warps) == 0, "BLOCK_M: 64 rows per consumer warpgroup")
    dtype: gl.constexpr = a_desc.dtype
    a_bufs = gl.allocate_shared_memory(dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    c_bufs = gl.allocate_shared_memory(c_desc.dtype, [2 if PINGPONG else 1] + c_desc.block_type.shape, c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    turn = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    for i in gl.static_range(2):
        mbarrier.init(turn.index(i), count=1)
    fence_async_shared()  # the inits (generic proxy) before the TMA engine (async proxy) signals the barriers
    # (the argument tuples are written out: a tuple built by `+` hands a worker plain ints, which it rejects)
    if PINGPONG:  # default partition = consumer 0; workers: consumer 1 (a warpgroup), the producer (1 warp)
        gl.warp_specialize([
            (_consumer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, scale_a_ptr, scale_b_ptr,
                         ws_ptr, cnt_ptr, GROUP_M, B_NK, PRECISE, PINGPONG, SPLIT_K, TAIL, 0, num_warps)),
            (_consumer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, scale_a_ptr, scale_b_ptr,
                         ws_ptr, cnt_ptr, GROUP_M, B_NK, PRECISE, PINGPONG, SPLIT_K, TAIL, 1, num_warps)),
            (_producer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, GROUP_M, B_NK, SPLIT_K, TAIL)),
        ], [num_warps, 1], [CONSUMER_REGS, PRODUCER_REGS])
    else:
        gl.warp_specialize([
            (_consumer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, scale_a_ptr, scale_b_ptr,
                         ws_ptr, cnt_ptr, GROUP_M, B_NK, PRECISE, PINGPONG, SPLIT_K, TAIL, 0, num_warps)),
            (_producer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, GROUP_M, B_NK, SPLIT_K, TAIL)),
        ], [1], [PRODUCER_REGS])
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(i))
        mbarrier.invalidate(empty.index(i))
    for i in gl.static_range(2):
        mbarrier.invalidate(turn.index(i))


def _gl_dtype(torch_dtype):
    return {"torch.bfloat16": gl.bfloat16, "torch.float16": gl.float16, "torch.float8_e4m3fn": gl.float8e4nv}[
        str(torch_dtype)]


def maxnreg(num_warps: int, pingpong: bool = False) -> int:
    """Registers per thread the launch may use: 64K over the consumers plus the producer's warpgroup."""
    return min(255, 65536 // (32 * (num_warps * (2 if pingpong else 1) + 4))) // 8 * 8


def make_descriptors(a, b, c, block_m: int, block_n: int, block_k: int, b_nk: bool = False):
    """TMA descriptors (zero padding) for row-major a (M, K), c (M, N) and b (K, N), or b (N, K) when b_nk."""

    def desc(t, box):
        return TensorDescriptor.from_tensor(t, box, gl.NVMMASharedLayout.get_default_for(box, _gl_dtype(t.dtype)))

    return (desc(a, [block_m, block_k]), desc(b, [block_n, block_k] if b_nk else [block_k, block_n]),
            desc(c, [block_m, block_n]))


def split_k_for(M: int, N: int, K: int, block_m: int, block_n: int, block_k: int, num_sms: int,
                max_split: int = 8) -> int:
    """Splits of K per output tile: as many as keep every tile's units within one wave of ``num_sms`` programs
    (``num_sms // tiles``), at most ``max_split``, and none empty (split s starts at s * cdiv(k_tiles, S))."""
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    k_tiles = triton.cdiv(K, block_k)
    split = max(1, min(max_split, num_sms // max(tiles, 1), k_tiles))
    while split > 1 and (split - 1) * triton.cdiv(k_tiles, split) >= k_tiles:
        split -= 1
    return split


def tail_split(M: int, N: int, K: int, block_m: int, block_n: int, block_k: int, num_sms: int,
               max_split: int = 8) -> tuple:
    """(tail tiles, splits) of the split tail over ``num_sms`` programs (``TAIL``): the tiles of the last, partial
    round and as many K slices each as the programs hold (``split_k_for``'s rule over those tiles: at most
    ``max_split``, none empty); (tail tiles, 1) when that is one (no tail split), (0, 1) when the rounds are whole."""
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    tail = tiles % num_sms if tiles > num_sms else 0
    if not tail:
        return 0, 1
    k_tiles = triton.cdiv(K, block_k)
    split = max(1, min(max_split, num_sms // tail, k_tiles))
    while split > 1 and (split - 1) * triton.cdiv(k_tiles, split) >= k_tiles:
        split -= 1
    return tail, split


def split_scratch(device, M: int, N: int, block_m: int, block_n: int, split_k: int, tiles: int | None = None):
    """The workspace and counters of a split-K launch: fp32 tiles * split_k * block_m * block_n and one int32
    counter per tile (``tiles``: the tiles the merge covers, all of M x N's unless given: the split tail's),
    one set per (device, stream) for the process's life (kernels/_scratch.py: the counters
    are zero between launches, each launch leaves them so; a CUDA graph keeps valid pointers)."""
    import torch

    from . import _scratch

    if tiles is None:
        tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    return _scratch.Scratch(device, ("gluon_ws", tiles * split_k * block_m * block_n, torch.float32),
                            ("gluon_cnt", tiles, torch.int32))


def launch(descs, scales, M, N, block_m, block_n, group_m, stages, b_nk, precise, pingpong, num_warps, num_sms,
           split_k=1, tail=False):
    """One launch over the descriptors; returns (the compiled kernel, the grid, the arguments after the
    descriptors, the split-K scratch or None), which kernels/_launch.py's Launcher takes to launch it again.
    Split (or ``tail``: the split tail, ``tail_split``): the arguments leave out the workspace and counters
    (after the scales), which the launcher passes per launching stream (``split_scratch``); else they are None
    (the kernel is specialised without)."""
    if (split_k > 1 or tail) and pingpong:
        raise ValueError("gluon gemm: split-K and the split tail have no ping-pong variant")
    tiles = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    device = descs[2].base.device
    slots = 0
    if tail:
        if split_k > 1:
            raise ValueError("gluon gemm: split-K or the split tail, not both")
        tail_tiles, slots = tail_split(M, N, descs[0].shape[1], block_m, block_n, descs[0].block_shape[1], num_sms)
        if slots < 2:
            raise ValueError(f"gluon gemm: {tiles} tiles on {num_sms} programs leave no tail to split")
        grid = (num_sms,)
        scratch = split_scratch(device, M, N, block_m, block_n, slots, tiles=tail_tiles)
    else:
        grid = (min(num_sms, tiles * split_k),)
        scratch = split_scratch(device, M, N, block_m, block_n, split_k) if split_k > 1 else None
    bufs = scratch() if scratch is not None else (None, None)
    rest = (group_m, stages, b_nk, precise, pingpong, split_k, slots)
    # num_warps is both a launch option and the kernel's constexpr (the binder fills the parameter from it)
    compiled = gluon_gemm_kernel[grid](*descs, *scales, *bufs, *rest, num_warps=num_warps,
                                       maxnreg=maxnreg(num_warps, pingpong))
    # every parameter after the descriptors, in order (less the scratch)
    after = (*scales, *rest, num_warps) if scratch is not None else (*scales, *bufs, *rest, num_warps)
    return compiled, grid, after, scratch


def _num_sms(device) -> int:
    import torch

    return torch.cuda.get_device_properties(device).multi_processor_count


def gluon_gemm(a, b, *, block_m=128, block_n=128, block_k=64, stages=5, num_warps=8, pingpong=False, group_m=8,
               num_sms=None, split_k=1, tail=False, out=None):
    """a @ b for 16-bit row-major a (M, K) and b (K, N) row-major or K-major (``w.t()``) on a Hopper GPU; fp32
    accumulation, output in a's dtype (``tail``: the split tail). No checks beyond the layout: ``gemm`` is the
    checked entry."""
    import torch

    if a.dtype not in (torch.bfloat16, torch.float16) or b.dtype != a.dtype:
        raise ValueError(f"gluon_gemm takes bf16/fp16 a and b of one dtype, not {a.dtype} and {b.dtype}")
    (M, K), (K2, N) = a.shape, b.shape
    if K != K2 or K == 0:
        raise ValueError(f"gluon_gemm: shapes {tuple(a.shape)} @ {tuple(b.shape)}")
    b_nk = b.stride() == (1, K) and not b.is_contiguous()
    if K % 8 or N % 8 or not a.is_contiguous() or not (b.is_contiguous() or b_nk):
        raise ValueError("gluon_gemm: TMA needs row-major a, row-major or K-major b, K and N multiples of 8")
    c = torch.empty(M, N, device=a.device, dtype=a.dtype) if out is None else out
    descs = make_descriptors(a, b.t() if b_nk else b, c, block_m, block_n, block_k, b_nk=b_nk)
    launch(descs, (None, None), M, N, block_m, block_n, group_m, stages, b_nk, False, pingpong, num_warps,
           num_sms or _num_sms(a.device), split_k, tail)
    return c


def gluon_fp8_gemm(a, b, scale_a, scale_b, *, block_m=128, block_n=128, block_k=128, stages=5, num_warps=8,
                   pingpong=False, group_m=8, fast_accum=False, pipelined=True, num_sms=None, split_k=1, tail=False,
                   out=None):
    """(a @ b) * scale_a * scale_b in bf16 for fp8 e4m3 a (M, K) row-major and b (K, N) K-major (``w.t()`` of a
    row-major (N, K) weight, as torch._scaled_mm takes it), 1-element fp32 scales. Precise accumulation (every
    BLOCK_K-deep wgmma chain added into fp32, like the bundled fp8_gemm's max_num_imprecise_acc=BLOCK_K) unless
    fast_accum. ``pipelined``: the partial of stage k is added while stage k+1's wgmma runs (three fp32 tiles
    live: 128x128 tiles over 8 warps), else after a synchronous wgmma."""
    import torch

    f8 = torch.float8_e4m3fn
    if a.dtype != f8 or b.dtype != f8:
        raise ValueError(f"gluon_fp8_gemm takes float8_e4m3fn a and b, not {a.dtype} and {b.dtype}")
    (M, K), (K2, N) = a.shape, b.shape
    if K != K2 or K == 0 or K % 16 or not a.is_contiguous() or b.stride() != (1, K) or N % 8:
        raise ValueError(f"gluon_fp8_gemm: row-major a (M, K) and K-major b (K, N), K % 16 == 0, N % 8 == 0; got "
                         f"{tuple(a.shape)} {a.stride()} @ {tuple(b.shape)} {b.stride()}")
    if scale_a.numel() != 1 or scale_b.numel() != 1 or scale_a.dtype != torch.float32 or scale_b.dtype != torch.float32:
        raise ValueError("gluon_fp8_gemm: per-tensor fp32 scales only")
    c = torch.empty(M, N, device=a.device, dtype=torch.bfloat16) if out is None else out
    descs = make_descriptors(a, b.t(), c, block_m, block_n, block_k, b_nk=True)
    precise = 0 if fast_accum else (2 if pipelined else 1)
    launch(descs, (scale_a, scale_b), M, N, block_m, block_n, group_m, stages, True, precise, pingpong,
           num_warps, num_sms or _num_sms(a.device), split_k, tail)
    return c
