"""Issue 18, gemm: a hand-written warp-specialised Hopper gemm in Gluon, beside torch.matmul and ``gemm``.

    python tests/bench/gluon_gemm.py [--shapes 1024x4096x4096,...] [--out gluon_gemm.json]   # GPU (H200)
    python tests/bench/gluon_gemm.py --fp8 [--fast-accum] [--out gluon_fp8.json]              # GPU: fp8 e4m3
    python tests/bench/gluon_gemm.py --compile-only [--fp8] [--configs 0,2]                  # CPU: sm_90 PTX

Why: Nsight Compute (tests/bench/runs/s9_ncu_misses.txt) shows cuBLAS beating our Triton gemm with a
warp-specialised kernel (a TMA producer warp, two wgmma consumer warpgroups, mbarrier rings), and Triton's
automatic warp specialisation did not get there (tests/bench/kernels_h200.md, session 9). This is the same
design written by hand in Gluon (``triton.experimental.gluon``, Triton 3.6 and 3.9):

- persistent: ``min(#SMs, #tiles)`` programs walk the output tiles in grouped order (GROUP_M tile rows share
  the B columns they read, for L2); both partitions walk the same sequence.
- producer partition (1 warp, few registers via setmaxnreg): TMA loads of the A (BLOCK_M x BLOCK_K) and B
  (BLOCK_K x BLOCK_N) boxes into a STAGES-deep shared-memory ring; ``ready[s]`` (expect-tx) says a stage is
  full, ``empty[s]`` says the consumers are done with it.
- consumer (default) partition, ``num_warps`` = 4 or 8: one or two warpgroups; with 8 the accumulator layout
  stacks the warpgroups along M, each owning 64 rows of a 128-row tile (cuBLAS's 2-consumer shape). Async
  wgmma with one group in flight: after wgmma k is issued, wgmma k-1 is waited for and its stage released.
- ping-pong ("pp" configs): two consumer partitions of one warpgroup each take alternate tiles; their main
  loops take turns (two ``turn`` mbarriers), so one's epilogue overlaps the other's main loop (cuBLAS/CUTLASS's
  "pingpong" schedule). Taking turns also keeps each consumer within one ring lap of the producer, which the
  ring's parity waits need.
- epilogue: accumulator -> 16-bit -> shared memory -> TMA store; the store is waited for only before the next
  tile's epilogue reuses the buffer, so it overlaps the next tile's main loop.
- edges: TMA zero-fills out-of-bounds boxes (a K tail reads zeros, adding nothing) and clips the store, so
  any M, N, K work without masks (TMA needs 16-byte row strides: K and N multiples of 8 for 16-bit).
- fp8 e4m3 (``--fp8``, ``gluon_fp8_gemm``): the same kernel with b read K-major (the (N, K) weight, a permuted
  shared-memory view for wgmma), per-tensor scales applied in the epilogue, bf16 out. Precise accumulation
  adds each stage's wgmma chain into the fp32 accumulator after a synchronous wgmma (no MMA overlap within a
  warpgroup); ``--fast-accum`` keeps the async chain.

Ideas and API use follow Triton's Gluon tutorials (triton-lang/triton python/tutorials/gluon, MIT licence):
05-wgmma.py (the wgmma accumulator layout), 07-persistence.py (grouped persistent tile order, TMA epilogue),
08-warp-specialization.py (``gl.warp_specialize`` partitions, empty/ready mbarrier pairs and their phases).
No code is copied; names differ between versions and are bridged below (3.6: async_copy_global_to_shared /
async_copy_shared_to_global; 3.9: async_load / async_store).

The GPU run checks every result against an fp32 product (error > 1e-2 of the largest output: WRONG, not timed)
and times torch.matmul, the bundled ``gemm`` and each config with do_bench (median, L2 flushed).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import triton

try:
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                                  warpgroup_mma_wait)
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
except ImportError as e:  # Gluon's Hopper API as used here: Triton 3.6 .. 3.9
    if __name__ == "__main__":
        print(f"needs Triton's Gluon Hopper API (triton {triton.__version__}: {e})", file=sys.stderr)
        sys.exit(2)
    raise

# Triton 3.6 names the TMA copies async_copy_*; 3.9 renamed them (and makes the old names raise)
_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
_tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global

SHAPES = ("127x4096x4096,127x14336x4096,1024x4096x4096,1024x5120x13824,1024x6144x4096,4096x4096x4096,"
          "8192x8192x8192,1000x3000x1000")
# (block_m, block_n, block_k, stages, num_warps): num_warps 4 = one consumer warpgroup, 8 = two (64 rows each).
# Shared memory (16-bit): stages * (bm + bn) * bk * 2 + bm * bn * 2 <= 227 KiB.
# Small-M tiles (64 rows) give M = 127 more programs: 64x64 makes 128 tiles of 4096 columns, ~one per SM.
# "pp": ping-pong, two consumer warpgroups (num_warps each) on alternate tiles, main loops taking turns.
CONFIGS = ((128, 128, 64, 4, 4), (128, 128, 64, 5, 8), (128, 256, 64, 3, 8), (128, 128, 64, 4, 4, "pp"),
           (64, 128, 64, 6, 4), (64, 64, 128, 5, 4))
# fp8 e4m3 (b K-major): precise accumulation keeps a partial accumulator: 128x256 and 256x128 spill ~250 B there
FP8_SHAPES = "8192x8192x8192,4096x4096x4096,1024x8192x8192"
FP8_CONFIGS = ((128, 128, 128, 5, 8), (128, 128, 64, 6, 8), (128, 256, 128, 3, 8), (128, 128, 128, 4, 4, "pp"))
FP8_TOL = 3e-2
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
def _producer(a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, GROUP_M: gl.constexpr, B_NK: gl.constexpr):
    """Worker partition (1 warp): fill the ring with TMA, one stage per (tile, k step)."""
    BLOCK_M: gl.constexpr = c_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    NBYTES: gl.constexpr = a_desc.block_type.nbytes + b_desc.block_type.nbytes  # OOB zero-fill counts too
    num_pid_m = gl.cdiv(c_desc.shape[0], BLOCK_M)
    num_pid_n = gl.cdiv(c_desc.shape[1], BLOCK_N)
    k_tiles = gl.cdiv(a_desc.shape[1], BLOCK_K)
    it = 0
    for tile in range(gl.program_id(0), num_pid_m * num_pid_n, gl.num_programs(0)):
        off_m, off_n = _tile_offsets(tile, num_pid_m, num_pid_n, BLOCK_M, BLOCK_N, GROUP_M)
        for kk in range(k_tiles):
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


@gluon.jit
def _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, scale_a_ptr, scale_b_ptr,
              GROUP_M: gl.constexpr, B_NK: gl.constexpr, PRECISE: gl.constexpr, PINGPONG: gl.constexpr,
              WHICH: gl.constexpr, num_warps: gl.constexpr):
    """A consumer partition (num_warps warps): wgmma over the ring, then the epilogue through c_bufs[WHICH].
    PINGPONG: consumer WHICH (0 or 1) takes every other tile; their main loops take turns (``turn`` barriers),
    so one's epilogue overlaps the other's main loop, and neither waits on a ring lap the other has not freed."""
    BLOCK_M: gl.constexpr = c_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    NCONS: gl.constexpr = 2 if PINGPONG else 1
    layout: gl.constexpr = _acc_layout(a_desc.dtype, BLOCK_M, BLOCK_N, num_warps)
    c_smem = c_bufs.index(WHICH)
    num_pid_m = gl.cdiv(c_desc.shape[0], BLOCK_M)
    num_pid_n = gl.cdiv(c_desc.shape[1], BLOCK_N)
    k_tiles = gl.cdiv(a_desc.shape[1], BLOCK_K)
    n = 0
    for tile in range(gl.program_id(0) + WHICH * gl.num_programs(0), num_pid_m * num_pid_n,
                      NCONS * gl.num_programs(0)):
        off_m, off_n = _tile_offsets(tile, num_pid_m, num_pid_n, BLOCK_M, BLOCK_N, GROUP_M)
        it = (n * NCONS + WHICH) * k_tiles  # ring position: this program's tiles before this one, in order
        if PINGPONG:  # my turn: the other consumer finished the main loop of the tile before mine
            mbarrier.wait(turn.index(WHICH), (n & 1) ^ (1 - WHICH))
        acc = gl.zeros((BLOCK_M, BLOCK_N), gl.float32, layout)
        for kk in range(k_tiles):
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
        if PINGPONG:
            mbarrier.arrive(turn.index(1 - WHICH), count=1)
        if scale_a_ptr is not None:  # per-tensor scales (fp8)
            acc = acc * (gl.load(scale_a_ptr) * gl.load(scale_b_ptr))
        tma.store_wait(0)  # my previous TMA store has finished reading c_smem
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()  # generic-proxy writes before the async-proxy (TMA) read
        _tma_store(c_desc, [off_m, off_n], c_smem)
        n += 1
    tma.store_wait(0)


@gluon.jit
def gluon_gemm_kernel(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, GROUP_M: gl.constexpr, STAGES: gl.constexpr,
                      B_NK: gl.constexpr, PRECISE: gl.constexpr, PINGPONG: gl.constexpr, num_warps: gl.constexpr):
    """c = a @ b [* scale_a * scale_b] (descriptors over row-major a (M, K), c (M, N), and b (K, N), or (N, K)
    when B_NK); persistent, warp-specialised. Scale pointers: None for 16-bit, 1-element fp32 for fp8."""
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
                         GROUP_M, B_NK, PRECISE, PINGPONG, 0, num_warps)),
            (_consumer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, scale_a_ptr, scale_b_ptr,
                         GROUP_M, B_NK, PRECISE, PINGPONG, 1, num_warps)),
            (_producer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, GROUP_M, B_NK)),
        ], [num_warps, 1], [CONSUMER_REGS, PRODUCER_REGS])
    else:
        gl.warp_specialize([
            (_consumer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, ready, empty, turn, scale_a_ptr, scale_b_ptr,
                         GROUP_M, B_NK, PRECISE, PINGPONG, 0, num_warps)),
            (_producer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, empty, GROUP_M, B_NK)),
        ], [1], [PRODUCER_REGS])
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(i))
        mbarrier.invalidate(empty.index(i))
    for i in gl.static_range(2):
        mbarrier.invalidate(turn.index(i))


def _gl_dtype(torch_dtype):
    return {"torch.bfloat16": gl.bfloat16, "torch.float16": gl.float16, "torch.float8_e4m3fn": gl.float8e4nv}[
        str(torch_dtype)]


def _maxnreg(num_warps: int, pingpong: bool = False) -> int:
    """Registers per thread the launch may use: 64K over the consumers plus the producer's warpgroup."""
    return min(255, 65536 // (32 * (num_warps * (2 if pingpong else 1) + 4))) // 8 * 8


def make_descriptors(a, b, c, block_m: int, block_n: int, block_k: int, b_nk: bool = False):
    """TMA descriptors (zero padding) for row-major a (M, K), c (M, N) and b (K, N), or b (N, K) when b_nk."""

    def desc(t, box):
        return TensorDescriptor.from_tensor(t, box, gl.NVMMASharedLayout.get_default_for(box, _gl_dtype(t.dtype)))

    return (desc(a, [block_m, block_k]), desc(b, [block_n, block_k] if b_nk else [block_k, block_n]),
            desc(c, [block_m, block_n]))


def _launch(descs, scales, M, N, block_m, block_n, group_m, stages, b_nk, precise, pingpong, num_warps, num_sms):
    import torch

    if num_sms is None:
        num_sms = torch.cuda.get_device_properties(descs[0].base.device).multi_processor_count
    grid = (min(num_sms, triton.cdiv(M, block_m) * triton.cdiv(N, block_n)),)
    # num_warps is both a launch option and the kernel's constexpr (the binder fills the parameter from it)
    gluon_gemm_kernel[grid](*descs, *scales, group_m, stages, b_nk, precise, pingpong, num_warps=num_warps,
                            maxnreg=_maxnreg(num_warps, pingpong))


def gluon_gemm(a, b, *, block_m=128, block_n=128, block_k=64, stages=5, num_warps=8, pingpong=False, group_m=8,
               num_sms=None, out=None):
    """a @ b for 16-bit row-major a (M, K), b (K, N) on a Hopper GPU; fp32 accumulation, output in a's dtype."""
    import torch

    if a.dtype not in (torch.bfloat16, torch.float16) or b.dtype != a.dtype:
        raise ValueError(f"gluon_gemm takes bf16/fp16 a and b of one dtype, not {a.dtype} and {b.dtype}")
    (M, K), (K2, N) = a.shape, b.shape
    if K != K2 or K == 0:
        raise ValueError(f"gluon_gemm: shapes {tuple(a.shape)} @ {tuple(b.shape)}")
    if K % 8 or N % 8 or not (a.is_contiguous() and b.is_contiguous()):
        raise ValueError("gluon_gemm: TMA needs contiguous a, b with K and N multiples of 8")
    c = torch.empty(M, N, device=a.device, dtype=a.dtype) if out is None else out
    descs = make_descriptors(a, b, c, block_m, block_n, block_k)
    _launch(descs, (None, None), M, N, block_m, block_n, group_m, stages, False, False, pingpong, num_warps, num_sms)
    return c


def gluon_fp8_gemm(a, b, scale_a, scale_b, *, block_m=128, block_n=128, block_k=128, stages=5, num_warps=8,
                   pingpong=False, group_m=8, fast_accum=False, num_sms=None, out=None):
    """(a @ b) * scale_a * scale_b in bf16 for fp8 e4m3 a (M, K) row-major and b (K, N) K-major (``w.t()`` of a
    row-major (N, K) weight, as torch._scaled_mm takes it), 1-element fp32 scales. Precise accumulation (every
    BLOCK_K-deep wgmma chain added into fp32, like the bundled fp8_gemm's max_num_imprecise_acc=BLOCK_K) unless
    fast_accum."""
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
    _launch(descs, (scale_a, scale_b), M, N, block_m, block_n, group_m, stages, True, not fast_accum, pingpong,
            num_warps, num_sms)
    return c


def _cfg_kwargs(cfg) -> dict:
    bm, bn, bk, stages, warps, *pp = cfg
    return dict(block_m=bm, block_n=bn, block_k=bk, stages=stages, num_warps=warps, pingpong=bool(pp))


def cfg_name(cfg) -> str:
    k = _cfg_kwargs(cfg)
    return "{block_m}x{block_n}x{block_k} s{stages} w{num_warps}".format(**k) + (" pp" if k["pingpong"] else "")


# ---------------------------------------------------------------- compile only (CPU, no GPU needed)
PTX_COUNTS = {"wgmma": r"wgmma\.mma_async", "cp.async.bulk.tensor": r"cp\.async\.bulk\.tensor",
              "mbarrier": r"mbarrier\.", "setmaxnreg": r"setmaxnreg"}


def compile_config(cfg, fp8=False, fast_accum=False) -> dict:
    """Compile one config for sm_90 on the CPU: registers, spills, shared memory and PTX instruction counts."""
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    k = _cfg_kwargs(cfg)
    bm, bn, bk, warps, pp = k["block_m"], k["block_n"], k["block_k"], k["num_warps"], k["pingpong"]
    t = torch.float8_e4m3fn if fp8 else torch.bfloat16
    a, b = torch.empty(256, 256, dtype=t), torch.empty(256, 256, dtype=t)
    c = torch.empty(256, 256, dtype=torch.bfloat16)
    descs = make_descriptors(a, b, c, bm, bn, bk, b_nk=fp8)  # CPU tensors: only the types matter here
    const = dict(GROUP_M=8, STAGES=k["stages"], B_NK=fp8, PRECISE=fp8 and not fast_accum, PINGPONG=pp,
                 num_warps=warps)
    types = dict(zip(("a_desc", "b_desc", "c_desc"), (mangle_type(d) for d in descs)))
    if fp8:
        types.update(scale_a_ptr="*fp32", scale_b_ptr="*fp32")
    else:
        const.update(scale_a_ptr=None, scale_b_ptr=None)
    sig = {n: types.get(n, "constexpr") for n in gluon_gemm_kernel.arg_names}
    src = GluonASTSource(gluon_gemm_kernel, sig, const)
    maxnreg = _maxnreg(warps, pp)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, maxnreg=maxnreg))
    ptx = k.asm["ptx"]
    row = dict(config=cfg_name(cfg), shared_kib=k.metadata.shared // 1024, maxnreg=maxnreg,
               **{name: len(re.findall(pat, ptx)) for name, pat in PTX_COUNTS.items()},
               setmaxnreg_values=sorted(set(re.findall(r"setmaxnreg\.\w+\.sync\.aligned\.u32\s+(\d+)", ptx))))
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(k.asm["cubin"])
    try:
        tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
        res = subprocess.run([tool, "-res-usage", f.name], capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    row["regs"] = int(re.search(r"REG:(\d+)", res).group(1))
    row["spill_bytes"] = int(re.search(r"STACK:(\d+)", res).group(1))
    return row


def compile_only(configs, fp8=False, fast_accum=False) -> int:
    kind = ("fp8 e4m3 -> bf16, " + ("fast" if fast_accum else "precise") + " accumulation") if fp8 else "bf16"
    print(f"Triton {triton.__version__}, sm_90, {kind}, producer {PRODUCER_REGS.value} regs")
    failed = 0
    for cfg in configs:
        try:
            r = compile_config(cfg, fp8, fast_accum)
            print(f"{r['config']:<20} regs {r['regs']:>3} (maxnreg {r['maxnreg']}, setmaxnreg "
                  f"{'/'.join(r['setmaxnreg_values']) or '-'})  spills {r['spill_bytes']} B  "
                  f"smem {r['shared_kib']} KiB  "
                  f"wgmma {r['wgmma']}  cp.async.bulk.tensor {r['cp.async.bulk.tensor']}  mbarrier {r['mbarrier']}  "
                  f"setmaxnreg {r['setmaxnreg']}", flush=True)
        except Exception as e:  # noqa: BLE001 - a config that does not compile is a line, the others still run
            failed += 1
            msg = [line for line in str(e).splitlines() if line.strip()]
            print(f"{cfg_name(cfg):<20} FAILED {type(e).__name__}: {(msg[-1] if msg else '')[:200]}", flush=True)
    return 1 if failed == len(configs) else 0


# ---------------------------------------------------------------- GPU: check, then time
def _nan_out(M, N, dtype):
    import torch

    return torch.full((M, N), float("nan"), device="cuda", dtype=dtype)


def _problem(args, M, N, K):
    """Inputs, the contenders (name -> fn) and a check(out) -> (error figure, ok) for one shape."""
    import torch

    from tritondbg.kernels import fp8_gemm as F8
    from tritondbg.kernels import gemm as G

    g = torch.Generator(device="cuda").manual_seed(0)
    if args.fp8:
        a = (torch.randn(M, K, device="cuda", generator=g) / 4).to(torch.float8_e4m3fn)
        b = (torch.randn(N, K, device="cuda", generator=g) / 4).to(torch.float8_e4m3fn).t()  # K-major, as _scaled_mm
        sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda")
        ref = (a.float() @ b.float()) * (0.5 * 0.25)
        fast = args.fast_accum

        def check(out):  # the bundled fp8 tolerance (tritondbg/compare.py float8_e4m3fn): |d| <= 3e-2 + 3e-2 |ref|
            bad = int((~((out.float() - ref).abs() <= FP8_TOL + FP8_TOL * ref.abs())).sum())  # NaN counts as bad
            # fast accumulation is timed even where it misses the precise bound, if every output is finite
            return bad, bad == 0 or (fast and bool(torch.isfinite(out).all()))

        fns = {"torch._scaled_mm": lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                                            use_fast_accum=fast),
               "fp8_gemm": lambda: F8.fp8_gemm(a, b, sa, sb, fast_accum=fast)}
        for cfg in args.config_list:  # own NaN-filled output each: a kernel writing nothing cannot pass
            fns[cfg_name(cfg)] = lambda cfg=cfg, c=_nan_out(M, N, torch.bfloat16): gluon_fp8_gemm(
                a, b, sa, sb, fast_accum=fast, out=c, **_cfg_kwargs(cfg))
        return fns, check
    dtype = getattr(torch, args.dtype)
    a = torch.randn(M, K, device="cuda", generator=g).to(dtype)
    b = (torch.randn(K, N, device="cuda", generator=g) / K ** 0.5).to(dtype)
    ref = a.float() @ b.float()
    scale = ref.abs().max().item()

    def check(out):
        rel = (out.float() - ref).abs().max().item() / scale
        return rel, rel < 1e-2

    fns = {"torch.matmul": lambda: a @ b, "gemm": lambda: G.gemm(a, b)}
    for cfg in args.config_list:  # own NaN-filled output each: a kernel writing nothing cannot pass
        fns[cfg_name(cfg)] = lambda cfg=cfg, c=_nan_out(M, N, dtype): gluon_gemm(a, b, out=c, **_cfg_kwargs(cfg))
    return fns, check


def measure(key: dict, fns: dict, check, timer, before=lambda name: None):
    """Check each contender's output, time the right ones (timer: fn -> ms); the first contender (torch's) is
    the ratios' denominator. Returns the rows and a one-line summary."""
    rows, cells = [], []
    for i, (name, fn) in enumerate(fns.items()):
        before(name)  # the partial JSON names the contender running, should it hang
        r = dict(key, name=name, us=None)
        try:
            r["err"], ok = check(fn())
            if ok:
                r["us"] = timer(fn) * 1e3
            else:
                r["error"] = "WRONG"
        except Exception as e:  # noqa: BLE001 - a config that does not compile or launch is a row
            msg = [line for line in str(e).splitlines() if line.strip()]
            r["error"] = f"{type(e).__name__}: {(msg[-1] if msg else '')[:160]}"
        if i and r["us"] is not None and rows[0]["us"] is not None:
            r["x_torch"] = rows[0]["us"] / r["us"]  # > 1: faster than torch
        rows.append(r)
        cells.append(f"{name} " + (r.get("error", "")[:60] if r["us"] is None else f"{r['us']:.1f} us"
                                   + (f" {r['x_torch']:.3f}x" if "x_torch" in r else "")))
    return rows, " | ".join(cells)


def bench(args) -> int:
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    if torch.cuda.get_device_capability()[0] != 9:
        print(f"needs a Hopper GPU (sm_90), not {torch.cuda.get_device_name()}", file=sys.stderr)
        return 2
    from triton.testing import do_bench

    from tritondbg.kernels._launch import ensure_allocator

    ensure_allocator()  # the bundled kernels' device-side TMA descriptors need Triton's allocator
    rows, wrong, t0 = [], 0, time.time()
    dtype = "float8_e4m3fn" if args.fp8 else args.dtype
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        fns, check = _problem(args, M, N, K)
        shape_rows, line = measure(dict(M=M, N=N, K=K, dtype=dtype), fns, check,
                                   lambda fn: do_bench(fn, warmup=10, rep=args.rep, return_mode="median"),
                                   lambda name: _save(args.out, dict(partial=True, running=f"{shape} {name}"), rows))
        rows += shape_rows
        wrong += sum(r.get("error") == "WRONG" for r in shape_rows)
        print(f"{shape}: {line}", flush=True)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), gpu=torch.cuda.get_device_name(), triton=triton.__version__,
                torch=torch.__version__, seconds=round(time.time() - t0), fast_accum=bool(args.fast_accum),
                command="python tests/bench/gluon_gemm.py " + " ".join(args.argv))
    _save(args.out, meta, rows)
    print(json.dumps(meta))
    return 1 if wrong else 0


def _save(path, meta, rows):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=None, help=f"comma-separated MxNxK [default: {SHAPES}; --fp8: {FP8_SHAPES}]")
    ap.add_argument("--configs", default=None, help="comma-separated indices into CONFIGS / FP8_CONFIGS [all]")
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16"))
    ap.add_argument("--fp8", action="store_true", help="fp8 e4m3 inputs, per-tensor scales, bf16 out")
    ap.add_argument("--fast-accum", action="store_true", help="--fp8: fast accumulation (ours and _scaled_mm's)")
    ap.add_argument("--rep", type=int, default=50, help="do_bench rep (ms)")
    ap.add_argument("--out", default="gluon_gemm.json")
    ap.add_argument("--compile-only", action="store_true", help="compile the configs for sm_90 on the CPU")
    args = ap.parse_args(argv)
    args.argv = argv
    table = FP8_CONFIGS if args.fp8 else CONFIGS
    args.shapes = args.shapes or (FP8_SHAPES if args.fp8 else SHAPES)
    try:
        args.config_list = table if args.configs is None else [table[int(i)] for i in args.configs.split(",")]
        for s in args.shapes.split(","):
            if len([int(v) for v in s.split("x")]) != 3:
                raise ValueError(s)
    except (ValueError, IndexError) as e:
        print(f"bad --configs or --shapes: {e}", file=sys.stderr)
        return 2
    if args.compile_only:
        return compile_only(args.config_list, args.fp8, args.fast_accum)
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
