"""fp8 decode on Hopper in Gluon: the swapped product c^T = w @ a^T, a TMA producer warp and a deep ring.

Why: at M <= 64 an fp8 gemm reads the weight once and does next to no math, so its speed is how much of the weight
it keeps in flight. Nsight Compute on the H200 (session 19, ``python tests/bench/ncu_misses.py --only
fp8dec1,fp8dec16``, caches flushed clean): the tl decode kernel (kernels/_splitk.py: cp.async, 4 stages, 256-512
programs) took 23.0-26.5 us at DRAM 54-63% of peak, cuBLAS's ``nvjet_sm90_qqtst_64x8_128x16`` 20.3 us at 71%: one
CTA per 64 weight rows (128 CTAs at N = 8192, no split), tokens on the wgmma's narrow N side (8 or 16), BLOCK_K
128, 16 stages, TMA. This kernel is that design in Gluon:

- grid (N / BLOCK_W weight-row tiles, M / BLOCK_T token tiles, SPLIT_K): one (tile, K slice) per program;
- producer partition (1 warp): TMA boxes of w (BLOCK_W x BLOCK_K, K-major: ``b.t()`` row-major) and a
  (BLOCK_T x BLOCK_K) into a STAGES-deep ring (``ready`` expect-tx / ``empty`` mbarriers);
- consumer (default) partition, one warpgroup: wgmma of the w box (A, 64 rows) by the a box read K-major (B,
  BLOCK_T = 8..64 columns: M = 1 pads to 8 tokens, not to wgmma's 64-row side). Precise accumulation as the other
  fp8 kernels: each stage's BLOCK_K-deep chain goes into a fresh partial, added into fp32 while the next stage's
  chain runs (kernels/_gemm_gluon.py ``_promoted_mainloop``);
- SPLIT_K > 1: the last of a tile's splits to arrive sums the fp32 partials in the fixed order 0..SPLIT_K-1
  (kernels/_gemm_gluon.py ``_split_merge``): deterministic;
- epilogue: per-tensor scales, the output dtype, a masked pointer store of c[m, n] (c^T's tile, coalesced along n).
TMA zero-fills what lies outside a or w (M = 1, a K tail), so no mask is needed before the epilogue.

fp8_gemm races it, with the Gluon gemm's small-M tiles, against the tl decode kernel on a decode signature's first
call (kernels/fp8_gemm.py ``_race_decode``, kernels/_race.py). No interpreter: Gluon runs on the GPU only.
Importing this module raises ImportError where Triton has no Gluon Hopper API.
"""
from __future__ import annotations

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from . import _launch
from ._gemm_gluon import PRODUCER_REGS, _acc_layout, _gl_dtype, _promoted_mainloop, _split_merge, _tma_load, maxnreg

KERNEL = "gluon_decode_kernel"
BLOCK_W = 64  # weight rows per tile: the wgmma's M side (one warpgroup)
# (BLOCK_K, STAGES, SPLIT_K or "auto") per candidate; BLOCK_T is chosen from M. Shared memory per stage:
# (64 + BLOCK_T) x BLOCK_K bytes (fp8). H200 (session 19, ``python tests/bench/gluon_decode.py``, do_bench, L2
# flushed): at M = 1 / 16 / 32 / 64, N = K = 8192, 256-deep steps in 6-8 stages and 512-deep in 4 tie
# torch._scaled_mm (27.5-27.7 us against 27.6; the tl decode kernel 28.5-29.3), 64 tokens 27.7 against 29.5;
# 128-deep steps in 10-24 stages were 1-7% slower, 64-deep 11-14%, and every split of K 10-18% slower (not listed).
# 5 stages keep two CTAs on an SM (for tile counts between one and two per SM).
CANDIDATES = ((256, 6, 1), (256, 8, 1), (512, 4, 1), (256, 5, 1))
MIN_STAGES = 3  # the promoted main loop holds two stages; a third keeps a load in flight (fewer: deadlock at 1)
SMEM_BYTES = 200 * 1024  # the ring's budget (sm_90: 227 KiB a CTA, less the barriers and the layout conversion)


def _token_tile(M: int) -> int:
    """The token tile: the smallest of 8 / 16 / 32 / 64 holding M (wgmma's N side, a multiple of 8)."""
    return max(8, triton.next_power_of_2(M))


def split_for(M: int, N: int, K: int, block_k: int, num_sms: int) -> int:
    """Splits of K that bring tiles x splits nearest to two programs per SM without an empty split (at most 8)."""
    tiles = triton.cdiv(N, BLOCK_W) * triton.cdiv(M, _token_tile(M))
    k_tiles = triton.cdiv(K, block_k)
    split = max(1, min(8, (2 * num_sms) // max(tiles, 1), k_tiles))
    while split > 1 and (split - 1) * triton.cdiv(k_tiles, split) >= k_tiles:
        split -= 1
    return split


@gluon.jit
def _k_slice(K, BLOCK_K: gl.constexpr, SPLIT_K: gl.constexpr):
    """This program's K steps: [k0, k0 + kn) of cdiv(K, BLOCK_K), never empty (``split_for``)."""
    k_tiles = gl.cdiv(K, BLOCK_K)
    kps = gl.cdiv(k_tiles, SPLIT_K)
    k0 = gl.program_id(2) * kps
    return k0, gl.minimum(kps, k_tiles - k0)


@gluon.jit
def _producer(w_desc, a_desc, w_bufs, a_bufs, ready, empty, K, SPLIT_K: gl.constexpr):
    """Worker partition (1 warp): this program's K slice of its w and a boxes, through the ring."""
    BLOCK_WR: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_T: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = w_desc.block_type.shape[1]
    STAGES: gl.constexpr = w_bufs.type.shape[0]
    NBYTES: gl.constexpr = w_desc.block_type.nbytes + a_desc.block_type.nbytes  # OOB zero-fill counts too
    k0, kn = _k_slice(K, BLOCK_K, SPLIT_K)
    off_w = gl.program_id(0) * BLOCK_WR
    off_t = gl.program_id(1) * BLOCK_T
    for i in range(kn):
        s = i % STAGES
        mbarrier.wait(empty.index(s), ((i // STAGES) & 1) ^ 1)  # a fresh barrier: the first lap does not wait
        mbarrier.expect(ready.index(s), NBYTES)
        _tma_load(w_desc, [off_w, (k0 + i) * BLOCK_K], ready.index(s), w_bufs.index(s))
        _tma_load(a_desc, [off_t, (k0 + i) * BLOCK_K], ready.index(s), a_bufs.index(s))


@gluon.jit
def _consumer(w_desc, a_desc, w_bufs, a_bufs, ready, empty, c_ptr, scale_a_ptr, scale_b_ptr, ws_ptr, cnt_ptr,
              M, N, K, stride_cm, SPLIT_K: gl.constexpr, num_warps: gl.constexpr):
    """Default partition (one warpgroup): the promoted wgmma chain over the ring, the split merge, the store."""
    BLOCK_WR: gl.constexpr = w_desc.block_type.shape[0]
    BLOCK_T: gl.constexpr = a_desc.block_type.shape[0]
    BLOCK_K: gl.constexpr = w_desc.block_type.shape[1]
    layout: gl.constexpr = _acc_layout(w_desc.dtype, BLOCK_WR, BLOCK_T, num_warps)
    k0, kn = _k_slice(K, BLOCK_K, SPLIT_K)
    acc = gl.zeros((BLOCK_WR, BLOCK_T), gl.float32, layout)
    zero = gl.zeros((BLOCK_WR, BLOCK_T), gl.float32, layout)
    acc, it = _promoted_mainloop(w_bufs, a_bufs, ready, empty, acc, zero, 0, kn, True)
    if SPLIT_K > 1:
        tile = gl.program_id(1) * gl.num_programs(0) + gl.program_id(0)
        acc, last = _split_merge(acc, ws_ptr, cnt_ptr, tile, gl.program_id(2), layout, BLOCK_WR, BLOCK_T, SPLIT_K)
    else:
        last = True
    if last:
        acc = acc * (gl.load(scale_a_ptr) * gl.load(scale_b_ptr))
        # c^T tile -> c[m, n]: one warp per token column, 32 consecutive n a warp (coalesced along c's rows)
        out: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, num_warps], [0, 1])
        val = gl.convert_layout(acc.to(c_ptr.dtype.element_ty), out)
        n = gl.program_id(0) * BLOCK_WR + gl.arange(0, BLOCK_WR, layout=gl.SliceLayout(1, out))
        m = gl.program_id(1) * BLOCK_T + gl.arange(0, BLOCK_T, layout=gl.SliceLayout(0, out))
        ptrs = c_ptr + m.to(gl.int64)[None, :] * stride_cm + n[:, None]
        gl.store(ptrs, val, mask=(n[:, None] < N) & (m[None, :] < M))


@gluon.jit
def gluon_decode_kernel(w_desc, a_desc, c_ptr, scale_a_ptr, scale_b_ptr, ws_ptr, cnt_ptr, M, N, K, stride_cm,
                        STAGES: gl.constexpr, SPLIT_K: gl.constexpr, num_warps: gl.constexpr):
    """c (M, N), row stride ``stride_cm``, unit column stride, = (a @ w^T) * scale_a * scale_b for descriptors over
    the fp8 weight w (N, K) row-major (``b.t()``) and a (M, K) row-major; 1-element fp32 scales. SPLIT_K > 1:
    ws_ptr an fp32 workspace of tiles * SPLIT_K * BLOCK_W * BLOCK_T, cnt_ptr one int32 counter per tile (zero on
    entry, left zero); else both None."""
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
                     cnt_ptr, M, N, K, stride_cm, SPLIT_K, num_warps)),
        (_producer, (w_desc, a_desc, w_bufs, a_bufs, ready, empty, K, SPLIT_K)),
    ], [1], [PRODUCER_REGS])
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(i))
        mbarrier.invalidate(empty.index(i))


# ---------------------------------------------------------------------------------------------------------
# Host side
# ---------------------------------------------------------------------------------------------------------
def descriptors(a, b, block_t: int, block_k: int):
    """TMA descriptors (zero padding) over w = b.t() (N, K) row-major, box (BLOCK_W, block_k), and a (M, K), box
    (block_t, block_k)."""
    def desc(t, box):
        return TensorDescriptor.from_tensor(t, box, gl.NVMMASharedLayout.get_default_for(box, _gl_dtype(t.dtype)))

    return desc(b.t(), [BLOCK_W, block_k]), desc(a, [block_t, block_k])


def expand(M: int, N: int, K: int, num_sms: int, cands=CANDIDATES) -> tuple:
    """The candidates for one shape: (BLOCK_T, BLOCK_K, STAGES, SPLIT_K), "auto" splits sized (``split_for``), the
    stages capped to SMEM_BYTES; dropped: duplicates, splits of 1 from "auto" (their unsplit twin is listed) and
    rings of fewer than MIN_STAGES."""
    out = []
    for bk, stages, split in cands:
        if split == "auto":
            split = split_for(M, N, K, bk, num_sms)
            if split <= 1:
                continue
        bt = _token_tile(M)
        stages = min(stages, SMEM_BYTES // ((BLOCK_W + bt) * bk))  # a deep ring for 64 tokens would not fit
        if stages < MIN_STAGES:
            continue
        cfg = (bt, bk, stages, split)
        if cfg not in out:
            out.append(cfg)
    return tuple(out)


def name(cfg) -> str:
    """A candidate's name in race records and reports."""
    bt, bk, stages, split = cfg
    return f"{KERNEL}: {BLOCK_W}x{bt}x{bk} s{stages}" + (f" split-K {split}" if split > 1 else "")


def tile_dict(cfg) -> dict:
    """A candidate as the config dict tritondbg reports."""
    bt, bk, stages, split = cfg
    return dict(BLOCK_W=BLOCK_W, BLOCK_T=bt, BLOCK_K=bk, STAGES=stages, SPLIT_K=split, num_warps=4)


def _scratch_for(device, M: int, N: int, block_t: int, split: int):
    """The split-K workspace and counters (per stream: kernels/_scratch.py); c^T's tiles are (BLOCK_W, block_t)."""
    from ._gemm_gluon import split_scratch

    return split_scratch(device, N, M, BLOCK_W, block_t, split)


class DecodePlan:
    """The kernel bound to one call signature: ``plan(a, b, c, scale_a, scale_b)`` launches it over descriptors
    rebased on the call's a and b (the templates hold no tensor). ``kernel`` is what ``_launch.pristine`` asks."""
    __slots__ = ("kernel", "launcher", "templates", "report")

    def __call__(self, a, b, c, scale_a, scale_b) -> None:
        _launch.SERVED[KERNEL] = self.report  # what tritondbg run / check report as what ran
        self.launcher.with_templates((), self.templates, (b, a), (c, scale_a, scale_b))


def build(cfg, a, b, c, scale_a, scale_b) -> DecodePlan:
    """Compile ``cfg`` for these operands (fp8 a (M, K) row-major, b (K, N) K-major, c (M, N) with unit column
    stride, 1-element fp32 scales), launch it once into ``c`` and return its plan."""
    bt, bk, stages, split = cfg
    M, K = a.shape
    N = b.shape[1]
    descs = descriptors(a, b, bt, bk)
    grid = (triton.cdiv(N, BLOCK_W), triton.cdiv(M, bt), split)
    scratch = _scratch_for(c.device, M, N, bt, split) if split > 1 else None
    bufs = scratch() if scratch is not None else (None, None)
    tail = (M, N, K, c.stride(0), stages, split, 4)
    # num_warps is both a launch option and the kernel's constexpr (the binder fills the parameter from it)
    compiled = gluon_decode_kernel[grid](*descs, c, scale_a, scale_b, *bufs, *tail[:-1], num_warps=4,
                                         maxnreg=maxnreg(4))
    plan = DecodePlan()
    plan.kernel = gluon_decode_kernel
    # per call: c and the scales after the descriptors, then (split) the stream's workspace and counters; the
    # unsplit kernel was specialised on None there, which the tail passes
    plan.launcher = _launch.Launcher(compiled, grid, tail if scratch is not None else (None, None, *tail),
                                     gluon_decode_kernel, scratch)
    plan.templates = tuple(_launch.descriptor_template(d) for d in descs)
    plan.report = tile_dict(cfg)
    return plan
