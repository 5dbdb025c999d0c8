"""Decode gemms on Hopper in Gluon (fp8, and bf16 / fp16): the swapped product c^T = w @ a^T, a TMA producer warp
and a deep ring.

Why: at M <= 64 an fp8 gemm reads the weight once and does next to no math, so its speed is how much of the weight
it keeps in flight. Nsight Compute on the H200 (session 19, ``python tests/bench/ncu_misses.py --only
fp8dec1,fp8dec16``, caches flushed clean): the tl decode kernel (kernels/_splitk.py: cp.async, 4 stages, 256-512
programs) took 23.0-26.5 us at DRAM 54-63% of peak, cuBLAS's ``nvjet_sm90_qqtst_64x8_128x16`` 20.3 us at 71%: one
CTA per 64 weight rows (128 CTAs at N = 8192, no split), tokens on the wgmma's narrow N side (8 or 16), BLOCK_K
128, 16 stages, TMA. This kernel is that design in Gluon:

- producer partition (1 warp): TMA boxes of w (BLOCK_W x BLOCK_K, K-major: ``b.t()`` row-major; 16-bit also a
  row-major (K, N) b's BLOCK_K x BLOCK_W box) and a
  (BLOCK_T x BLOCK_K) into a STAGES-deep ring (``ready`` expect-tx / ``empty`` mbarriers);
- consumer (default) partition, one warpgroup: wgmma of the w box (A, 64 rows) by the a box read K-major (B,
  BLOCK_T = 8..64 columns: M = 1 pads to 8 tokens, not to wgmma's 64-row side). Precise accumulation as the other
  fp8 kernels: each stage's BLOCK_K-deep chain goes into a fresh partial, added into fp32 while the next stage's
  chain runs (kernels/_gemm_gluon.py ``_promoted_mainloop``);
- the walk: program p takes units [lo, hi) of the (tile, K step) units, tile-major: one tile each (unsplit), a K
  slice of one tile each (SPLIT_K), or (stream-K) an equal share of all units over min(#SMs, units) programs, which
  cuts a tile among neighbours (224 tiles at N = 14336 are 1.7 waves of one CTA an SM: 2 tiles' time unsplit,
  1.7 tiles' streamed; measured slower, so not raced). A tile several programs reduce is merged by the last to arrive, summing the fp32 partials in
  the fixed order of their slots (kernels/_gemm_gluon.py ``_split_merge``): deterministic;
- epilogue: per-tensor scales, the output dtype, a masked pointer store of c[m, n] (c^T's tile, coalesced along n).
TMA zero-fills what lies outside a or w (M = 1, a K tail), so no mask is needed before the epilogue.

fp8_gemm races it, with the Gluon gemm's small-M tiles, against the tl decode kernel on a decode signature's first
call (kernels/fp8_gemm.py ``_race_decode``, kernels/_race.py); gemm races its bf16 / fp16 form at M <= 64 (session 20:
plain fp32 accumulation, ``_mainloop``; a row-major b's (K, N) tile read through a transposed view, which wgmma takes
for 16-bit operands; ``CANDIDATES_16``), through kernels/_gemm_ws.py ``decode_candidates``. No interpreter: Gluon runs on the GPU only.
Importing this module raises ImportError where Triton has no Gluon Hopper API.
"""
from __future__ import annotations

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, warpgroup_mma,
                                                              warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from . import _launch
from ._gemm_gluon import (PRODUCER_REGS, _acc_layout, _gl_dtype, _promoted_mainloop, _split_merge, _tma_load, maxnreg,
                          split_k_for)

KERNEL = "gluon_decode_kernel"
BLOCK_W = 64  # weight rows per tile: the wgmma's M side (one warpgroup)
# (BLOCK_K, STAGES, SPLIT_K | "auto" | STREAM) per candidate; BLOCK_T is chosen from M. Shared memory per stage:
# (64 + BLOCK_T) x BLOCK_K bytes (fp8). H200 (session 19, ``python tests/bench/gluon_decode.py``, do_bench, L2
# flushed): at M = 1 / 16 / 32 / 64, N = K = 8192, 256-deep steps in 6-8 stages and 512-deep in 4 tie
# torch._scaled_mm (27.5-27.7 us against 27.6; the tl decode kernel 28.5-29.3), 64 tokens 27.7 against 29.5;
# 128-deep steps in 10-24 stages were 1-7% slower, 64-deep 11-14%, and every split of K 10-18% slower (not listed).
# 5 stages keep two CTAs on an SM (for tile counts between one and two per SM). The stream-K walk (right on the
# H200, ``python tests/bench/gluon_decode.py --cands 512:4:sk,256:6:sk``) was 2-13% slower than the unsplit one on
# all five shapes tried, 16x14336x4096 (224 tiles: 1.7 waves) included (27.4 / 27.8 against 26.5 us): not listed.
STREAM = "stream-K"  # a candidate's split: programs take equal shares of the (tile, K step) units
CANDIDATES = ((256, 6, 1), (256, 8, 1), (512, 4, 1), (256, 5, 1))
# 16-bit (gemm at M <= 64): the same bytes per K step, and a split of K for weights of few 64-row tiles (N = 4096:
# 64 tiles on 132 SMs)
CANDIDATES_16 = ((128, 6, 1), (128, 8, 1), (256, 4, 1), (128, 5, 1), (128, 6, "auto"))
MIN_STAGES = 3  # the promoted main loop holds two stages; a third keeps a load in flight (fewer: deadlock at 1)
SMEM_BYTES = 200 * 1024  # the ring's budget (sm_90: 227 KiB a CTA, less the barriers and the layout conversion)
SM_BYTES = 228 * 1024  # shared memory an sm_90 SM holds (how many CTAs' rings share one: "auto" splits)


def _token_tile(M: int) -> int:
    """The token tile: the smallest of 8 / 16 / 32 / 64 holding M (wgmma's N side, a multiple of 8)."""
    return max(8, triton.next_power_of_2(M))


def split_for(M: int, N: int, K: int, block_k: int, num_sms: int, per_sm: int = 2) -> int:
    """Splits of K that bring tiles x splits nearest to ``per_sm`` programs per SM without an empty split (at most
    8): the Gluon gemm's rule (``split_k_for``) over c^T's tiles."""
    return split_k_for(N, M, K, BLOCK_W, _token_tile(M), block_k, per_sm * num_sms)


@gluon.jit
def _units(M, N, K, BLOCK_WR: gl.constexpr, BLOCK_T: gl.constexpr, BLOCK_K: gl.constexpr, SPLIT_K: gl.constexpr,
           STREAM_K: gl.constexpr):
    """This program's work: units [lo, hi) of the walk over (tile, K step) units, tile-major (tile = token tile x
    weight-row tiles + weight-row tile). Split-K: program p takes split p % SPLIT_K of tile p // SPLIT_K (never
    empty: the host sizes SPLIT_K); stream-K: an equal share of all units, ``num_programs`` <= their number."""
    k_tiles = gl.cdiv(K, BLOCK_K)
    p = gl.program_id(0)
    if STREAM_K:
        units = gl.cdiv(N, BLOCK_WR) * gl.cdiv(M, BLOCK_T) * k_tiles
        lo = (p.to(gl.int64) * units // gl.num_programs(0)).to(gl.int32)
        hi = ((p + 1).to(gl.int64) * units // gl.num_programs(0)).to(gl.int32)
    else:
        kps = gl.cdiv(k_tiles, SPLIT_K)
        first = (p // SPLIT_K) * k_tiles
        lo = first + (p % SPLIT_K) * kps
        hi = first + gl.minimum((p % SPLIT_K + 1) * kps, k_tiles)
    return lo, hi, k_tiles


@gluon.jit
def _contributors(tile, k_tiles, M, N, BLOCK_WR: gl.constexpr, BLOCK_T: gl.constexpr, SPLIT_K: gl.constexpr,
                  STREAM_K: gl.constexpr):
    """(this program's slot among the programs that reduce ``tile``, their number). Stream-K: the owners of the
    tile's first and last unit and every program between (owner(u) = ceil((u + 1) P / U) - 1)."""
    p = gl.program_id(0)
    if STREAM_K:
        units = (gl.cdiv(N, BLOCK_WR) * gl.cdiv(M, BLOCK_T) * k_tiles).to(gl.int64)
        progs = gl.num_programs(0)
        first = (((tile * k_tiles + 1).to(gl.int64) * progs + units - 1) // units - 1).to(gl.int32)
        last = ((((tile + 1) * k_tiles).to(gl.int64) * progs + units - 1) // units - 1).to(gl.int32)
        return p - first, last - first + 1
    else:
        return p % SPLIT_K, gl.cdiv(k_tiles, gl.cdiv(k_tiles, SPLIT_K))


@gluon.jit
def _producer(w_desc, a_desc, w_bufs, a_bufs, ready, empty, M, N, K, SPLIT_K: gl.constexpr, STREAM_K: gl.constexpr,
              W_KMAJOR: gl.constexpr):
    """Worker partition (1 warp): this program's units, a w box and an a box each, through the ring."""
    BLOCK_WR: gl.constexpr = w_desc.block_type.shape[0 if W_KMAJOR else 1]
    BLOCK_T: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    STAGES: gl.constexpr = w_bufs.type.shape[0]
    NBYTES: gl.constexpr = w_desc.block_type.nbytes + a_desc.block_type.nbytes  # OOB zero-fill counts too
    lo, hi, k_tiles = _units(M, N, K, BLOCK_WR, BLOCK_T, BLOCK_K, SPLIT_K, STREAM_K)
    num_w = gl.cdiv(N, BLOCK_WR)
    for i in range(hi - lo):
        tile = (lo + i) // k_tiles
        kk = (lo + i) % k_tiles
        s = i % STAGES
        mbarrier.wait(empty.index(s), ((i // STAGES) & 1) ^ 1)  # a fresh barrier: the first lap does not wait
        mbarrier.expect(ready.index(s), NBYTES)
        if W_KMAJOR:
            _tma_load(w_desc, [(tile % num_w) * BLOCK_WR, kk * BLOCK_K], ready.index(s), w_bufs.index(s))
        else:
            _tma_load(w_desc, [kk * BLOCK_K, (tile % num_w) * BLOCK_WR], ready.index(s), w_bufs.index(s))
        _tma_load(a_desc, [(tile // num_w) * BLOCK_T, kk * BLOCK_K], ready.index(s), a_bufs.index(s))


@gluon.jit
def _store(acc, c_ptr, scale_a_ptr, scale_b_ptr, off_w, off_t, M, N, stride_cm, num_warps: gl.constexpr):
    """Scales, the output dtype, c^T's tile -> c[m, n] (one warp per token column, 32 consecutive n a warp:
    coalesced along c's rows), masked to M x N."""
    BLOCK_WR: gl.constexpr = acc.shape[0]
    BLOCK_T: gl.constexpr = acc.shape[1]
    if scale_a_ptr is not None:  # per-tensor scales (fp8)
        acc = acc * (gl.load(scale_a_ptr) * gl.load(scale_b_ptr))
    out: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, num_warps], [0, 1])
    val = gl.convert_layout(acc.to(c_ptr.dtype.element_ty), out)
    n = off_w + gl.arange(0, BLOCK_WR, layout=gl.SliceLayout(1, out))
    m = off_t + gl.arange(0, BLOCK_T, layout=gl.SliceLayout(0, out))
    gl.store(c_ptr + m.to(gl.int64)[None, :] * stride_cm + n[:, None], val, mask=(n[:, None] < N) & (m[None, :] < M))


@gluon.jit
def _mainloop(w_bufs, a_bufs, ready, empty, acc, it, k_steps, W_KMAJOR: gl.constexpr):
    """16-bit: one accumulator, one wgmma chain in flight; the stage before it is handed back once that chain
    is done reading it. A row-major weight (W_KMAJOR False) is read through a transposed (M-major) view, which
    wgmma takes for 16-bit operands. Returns (acc, it)."""
    STAGES: gl.constexpr = w_bufs.type.shape[0]
    for kk in range(k_steps):
        s = it % STAGES
        mbarrier.wait(ready.index(s), (it // STAGES) & 1)
        w_op = w_bufs.index(s) if W_KMAJOR else w_bufs.index(s).permute((1, 0))
        acc = warpgroup_mma(w_op, a_bufs.index(s).permute((1, 0)), acc, is_async=True)
        acc = warpgroup_mma_wait(1, deps=(acc,))
        mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1, pred=kk > 0)
        it += 1
    acc = warpgroup_mma_wait(0, deps=(acc,))
    mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1)
    return acc, it


@gluon.jit
def _consumer(w_desc, a_desc, w_bufs, a_bufs, ready, empty, c_ptr, scale_a_ptr, scale_b_ptr, ws_ptr, cnt_ptr,
              M, N, K, stride_cm, SPLIT_K: gl.constexpr, SLOTS: gl.constexpr, STREAM_K: gl.constexpr,
              W_KMAJOR: gl.constexpr, num_warps: gl.constexpr):
    """Default partition (one warpgroup): per tile this program's units touch, the wgmma chain over the ring
    (fp8: promoted), the merge of the tile's partials (SLOTS > 1), the store."""
    BLOCK_WR: gl.constexpr = w_desc.block_type.shape[0 if W_KMAJOR else 1]
    BLOCK_T: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    layout: gl.constexpr = _acc_layout(w_desc.dtype, BLOCK_WR, BLOCK_T, num_warps)
    lo, hi, k_tiles = _units(M, N, K, BLOCK_WR, BLOCK_T, BLOCK_K, SPLIT_K, STREAM_K)
    num_w = gl.cdiv(N, BLOCK_WR)
    zero = gl.zeros((BLOCK_WR, BLOCK_T), gl.float32, layout)
    it = 0  # ring position: the units before this tile's
    for tile in range(lo // k_tiles, (hi - 1) // k_tiles + 1):
        kn = gl.minimum(hi, (tile + 1) * k_tiles) - gl.maximum(lo, tile * k_tiles)  # >= 1
        acc = gl.zeros((BLOCK_WR, BLOCK_T), gl.float32, layout)
        if scale_a_ptr is not None:  # fp8: precise accumulation
            acc, it = _promoted_mainloop(w_bufs, a_bufs, ready, empty, acc, zero, it, kn, True)
        else:
            acc, it = _mainloop(w_bufs, a_bufs, ready, empty, acc, it, kn, W_KMAJOR)
        if SLOTS > 1:
            slot, count = _contributors(tile, k_tiles, M, N, BLOCK_WR, BLOCK_T, SPLIT_K, STREAM_K)
            acc, last = _split_merge(acc, ws_ptr, cnt_ptr, tile, slot, count, layout, BLOCK_WR, BLOCK_T, SLOTS)
            if last:
                _store(acc, c_ptr, scale_a_ptr, scale_b_ptr, (tile % num_w) * BLOCK_WR, (tile // num_w) * BLOCK_T,
                       M, N, stride_cm, num_warps)
        else:
            _store(acc, c_ptr, scale_a_ptr, scale_b_ptr, (tile % num_w) * BLOCK_WR, (tile // num_w) * BLOCK_T,
                   M, N, stride_cm, num_warps)


@gluon.jit
def gluon_decode_kernel(w_desc, a_desc, c_ptr, scale_a_ptr, scale_b_ptr, ws_ptr, cnt_ptr, M, N, K, stride_cm,
                        STAGES: gl.constexpr, SPLIT_K: gl.constexpr, SLOTS: gl.constexpr, STREAM_K: gl.constexpr,
                        W_KMAJOR: gl.constexpr, num_warps: gl.constexpr):
    """c (M, N), row stride ``stride_cm``, unit column stride, = (a @ w^T) * scale_a * scale_b for descriptors over
    the fp8 weight w (N, K) row-major (``b.t()``) and a (M, K) row-major; 1-element fp32 scales. Grid: tiles x
    SPLIT_K programs, or (STREAM_K) any number up to the units. SLOTS > 1 (a tile reduced by several programs:
    SPLIT_K, or stream-K's most contributors to a tile): ws_ptr an fp32 workspace of tiles * SLOTS * BLOCK_W *
    BLOCK_T, cnt_ptr one int32 counter per tile (zero on entry, left zero); else both None."""
    gl.static_assert(num_warps == 4, "one consumer warpgroup")
    gl.static_assert(STAGES >= 3, "the promoted main loop holds two stages: fewer than three deadlock or stall")
    dtype: gl.constexpr = w_desc.dtype
    w_bufs = gl.allocate_shared_memory(dtype, [STAGES] + w_desc.block_type.shape, w_desc.layout)
    a_bufs = gl.allocate_shared_memory(dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    fence_async_shared()  # the inits (generic proxy) before the TMA engine (async proxy) signals the barriers
    gl.warp_specialize([
        (_consumer, (w_desc, a_desc, w_bufs, a_bufs, ready, empty, c_ptr, scale_a_ptr, scale_b_ptr, ws_ptr,
                     cnt_ptr, M, N, K, stride_cm, SPLIT_K, SLOTS, STREAM_K, W_KMAJOR, num_warps)),
        (_producer, (w_desc, a_desc, w_bufs, a_bufs, ready, empty, M, N, K, SPLIT_K, STREAM_K, W_KMAJOR)),
    ], [1], [PRODUCER_REGS])
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(i))
        mbarrier.invalidate(empty.index(i))


# ---------------------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------------------
def descriptors(a, b, block_t: int, block_k: int, w_kmajor: bool = True):
    """TMA descriptors (zero padding) over the weight and a (M, K) row-major, box (block_t, block_k). The weight:
    w = b.t() (N, K) row-major, box (BLOCK_W, block_k), for a K-major b (``w_kmajor``: fp8 always); else b (K, N)
    itself, row-major, box (block_k, BLOCK_W)."""
    def desc(t, box):
        return TensorDescriptor.from_tensor(t, box, gl.NVMMASharedLayout.get_default_for(box, _gl_dtype(t.dtype)))

    w = desc(b.t(), [BLOCK_W, block_k]) if w_kmajor else desc(b, [block_k, BLOCK_W])
    return w, desc(a, [block_t, block_k])


def candidates(elem_size: int) -> tuple:
    """The raced candidates for operands of ``elem_size`` bytes: fp8's, with K steps of the same bytes for 16-bit."""
    return CANDIDATES if elem_size == 1 else CANDIDATES_16


def expand(M: int, N: int, K: int, num_sms: int, cands=CANDIDATES, elem_size: int = 1) -> tuple:
    """The candidates for one shape: (BLOCK_T, BLOCK_K, STAGES, SPLIT_K or STREAM), the stages capped to
    SMEM_BYTES, "auto" splits sized (``split_for``, for as many CTAs an SM as the ring lets share one); dropped:
    duplicates, splits of 1 from "auto" (their unsplit twin is listed), a stream-K walk whose programs would each
    take whole tiles (the unsplit kernel's walk), and rings of fewer than MIN_STAGES."""
    out = []
    for bk, stages, split in cands:
        bt = _token_tile(M)
        stage_bytes = (BLOCK_W + bt) * bk * elem_size
        stages = min(stages, SMEM_BYTES // stage_bytes)  # a deep ring for 64 tokens would not fit
        if stages < MIN_STAGES:
            continue
        if split == "auto":
            split = split_for(M, N, K, bk, num_sms, max(1, SM_BYTES // (stages * stage_bytes + 4096)))
            if split <= 1:
                continue
        if split == STREAM and walk(M, N, K, bt, bk, STREAM, num_sms)[0][0] == _tiles(M, N, bt):
            continue
        cfg = (bt, bk, stages, split)
        if cfg not in out:
            out.append(cfg)
    return tuple(out)


def _tiles(M: int, N: int, block_t: int) -> int:
    return triton.cdiv(N, BLOCK_W) * triton.cdiv(M, block_t)


def walk(M: int, N: int, K: int, block_t: int, block_k: int, split, num_sms: int) -> tuple:
    """(grid, SPLIT_K, SLOTS, STREAM_K) of a candidate: tiles x SPLIT_K programs, or (STREAM) min(num_sms, units)
    programs with SLOTS the most programs any tile's units are shared by (owner(u) = ceil((u + 1) P / U) - 1)."""
    tiles = _tiles(M, N, block_t)
    if split != STREAM:
        return (tiles * split,), split, split, False
    k_tiles = triton.cdiv(K, block_k)
    units = tiles * k_tiles
    progs = min(num_sms, units)

    def owner(u):
        return -(-(u + 1) * progs // units) - 1

    slots = max(owner((t + 1) * k_tiles - 1) - owner(t * k_tiles) + 1 for t in range(tiles))
    return (progs,), 1, slots, True


def name(cfg) -> str:
    """A candidate's name in race records and reports."""
    bt, bk, stages, split = cfg
    return f"{KERNEL}: {BLOCK_W}x{bt}x{bk} s{stages}" + (
        " stream-K" if split == STREAM else f" split-K {split}" if split > 1 else "")


def tile_dict(cfg) -> dict:
    """A candidate as the config dict tritondbg reports."""
    bt, bk, stages, split = cfg
    d = dict(BLOCK_W=BLOCK_W, BLOCK_T=bt, BLOCK_K=bk, STAGES=stages, num_warps=4)
    d.update(STREAM_K=True) if split == STREAM else d.update(SPLIT_K=split)
    return d


def _scratch_for(device, M: int, N: int, block_t: int, slots: int):
    """The merge's workspace (``slots`` partials a tile) and counters, per stream (kernels/_scratch.py); c^T's
    tiles are (BLOCK_W, block_t)."""
    from ._gemm_gluon import split_scratch

    return split_scratch(device, N, M, BLOCK_W, block_t, slots)


class DecodePlan:
    """The kernel bound to one call signature: ``plan(a, b, c[, scale_a, scale_b])`` launches it over descriptors
    rebased on the call's a and b (the templates hold no tensor). ``kernel`` is what ``_launch.pristine`` asks."""
    __slots__ = ("kernel", "launcher", "templates", "report", "trailing")

    def __call__(self, a, b, c, *scales) -> None:
        _launch.SERVED[KERNEL] = self.report  # what tritondbg run / check report as what ran
        self.launcher.with_templates((), self.templates, (b, a), (c, *(scales or self.trailing)))


def build(cfg, a, b, c, scale_a=None, scale_b=None, w_kmajor: bool = True) -> DecodePlan:
    """Compile ``cfg`` for these operands (a (M, K) row-major; b (K, N), K-major (``w_kmajor``: ``w.t()``) or
    row-major (16-bit only); c (M, N) with unit column stride; fp8: 1-element fp32 scales, 16-bit: none), launch it
    once into ``c`` and return its plan."""
    from ._gemm_gluon import _num_sms

    bt, bk, stages, split = cfg
    M, K = a.shape
    N = b.shape[1]
    if scale_a is None and a.element_size() == 1:
        raise ValueError("gluon decode: fp8 operands take their scales")
    descs = descriptors(a, b, bt, bk, w_kmajor)
    grid, split_k, slots, stream_k = walk(M, N, K, bt, bk, split, _num_sms(c.device))
    scratch = _scratch_for(c.device, M, N, bt, slots) if slots > 1 else None
    bufs = scratch() if scratch is not None else (None, None)
    tail = (M, N, K, c.stride(0), stages, split_k, slots, stream_k, bool(w_kmajor), 4)
    # num_warps is both a launch option and the kernel's constexpr (the binder fills the parameter from it)
    compiled = gluon_decode_kernel[grid](*descs, c, scale_a, scale_b, *bufs, *tail[:-1], num_warps=4,
                                         maxnreg=maxnreg(4))
    plan = DecodePlan()
    plan.kernel = gluon_decode_kernel
    # per call: c and the scales after the descriptors, then (merged tiles) the stream's workspace and counters;
    # the unmerged kernel was specialised on None there, which the tail passes. 16-bit: no scales (None, which
    # the kernel was specialised on): per call before a scratch (the launcher passes it after them), else in the tail
    scales = () if scale_a is not None else (None, None)
    plan.trailing = scales if scratch is not None else ()
    if scratch is None:
        tail = (*scales, None, None, *tail)
    plan.launcher = _launch.Launcher(compiled, grid, tail, gluon_decode_kernel, scratch)
    plan.templates = tuple(_launch.descriptor_template(d) for d in descs)
    plan.report = tile_dict(cfg)
    return plan
