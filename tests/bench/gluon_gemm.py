"""Issue 18, gemm: a hand-written warp-specialised Hopper gemm in Gluon, beside torch.matmul and ``gemm``.

    python tests/bench/gluon_gemm.py [--shapes 1024x4096x4096,...] [--out gluon_gemm.json]   # GPU (H200)
    python tests/bench/gluon_gemm.py --compile-only [--configs 0,2]                          # CPU: sm_90 PTX

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
- epilogue: accumulator -> 16-bit -> shared memory -> TMA store; the store is waited for only before the next
  tile's epilogue reuses the buffer, so it overlaps the next tile's main loop.
- edges: TMA zero-fills out-of-bounds boxes (a K tail reads zeros, adding nothing) and clips the store, so
  any M, N, K work without masks (TMA needs 16-byte row strides: K and N multiples of 8 for 16-bit).

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
CONFIGS = ((128, 128, 64, 4, 4), (128, 128, 64, 5, 8), (128, 256, 64, 3, 8), (128, 128, 128, 3, 8),
           (64, 128, 64, 6, 4), (64, 64, 128, 5, 4))
PRODUCER_REGS = 40  # the TMA warp only holds scalars; the rest goes to the consumers (cuBLAS: 40 / 232)


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
def _producer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_smem, ready, empty, GROUP_M: gl.constexpr,
              num_warps: gl.constexpr):
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
            _tma_load(b_desc, [kk * BLOCK_K, off_n], ready.index(s), b_bufs.index(s))
            it += 1


@gluon.jit
def _consumer(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_smem, ready, empty, GROUP_M: gl.constexpr,
              num_warps: gl.constexpr):
    """Default partition (num_warps warps): wgmma over the ring, then the epilogue through c_smem."""
    BLOCK_M: gl.constexpr = c_desc.block_type.shape[0]
    BLOCK_N: gl.constexpr = c_desc.block_type.shape[1]
    BLOCK_K: gl.constexpr = a_desc.block_type.shape[1]
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    layout: gl.constexpr = _acc_layout(a_desc.dtype, BLOCK_M, BLOCK_N, num_warps)
    num_pid_m = gl.cdiv(c_desc.shape[0], BLOCK_M)
    num_pid_n = gl.cdiv(c_desc.shape[1], BLOCK_N)
    k_tiles = gl.cdiv(a_desc.shape[1], BLOCK_K)
    it = 0
    for tile in range(gl.program_id(0), num_pid_m * num_pid_n, gl.num_programs(0)):
        off_m, off_n = _tile_offsets(tile, num_pid_m, num_pid_n, BLOCK_M, BLOCK_N, GROUP_M)
        acc = gl.zeros((BLOCK_M, BLOCK_N), gl.float32, layout)
        for kk in range(k_tiles):
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
            # one wgmma stays in flight; the one before it is done reading its stage: hand that stage back
            acc = warpgroup_mma_wait(1, deps=(acc,))
            mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1, pred=kk > 0)
            it += 1
        acc = warpgroup_mma_wait(0, deps=(acc,))
        mbarrier.arrive(empty.index((it + STAGES - 1) % STAGES), count=1)
        tma.store_wait(0)  # the previous tile's TMA store has finished reading c_smem
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()  # generic-proxy writes before the async-proxy (TMA) read
        _tma_store(c_desc, [off_m, off_n], c_smem)
    tma.store_wait(0)


@gluon.jit
def gluon_gemm_kernel(a_desc, b_desc, c_desc, GROUP_M: gl.constexpr, STAGES: gl.constexpr, PRODUCER_REGS: gl.constexpr,
                      num_warps: gl.constexpr):
    """c = a @ b (descriptors over row-major a (M, K), b (K, N), c (M, N)); persistent, warp-specialised."""
    gl.static_assert(c_desc.block_type.shape[0] % (16 * num_warps) == 0, "BLOCK_M: 64 rows per consumer warpgroup")
    dtype: gl.constexpr = a_desc.dtype
    a_bufs = gl.allocate_shared_memory(dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    gl.warp_specialize([
        (_consumer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_smem, ready, empty, GROUP_M, num_warps)),
        (_producer, (a_desc, b_desc, c_desc, a_bufs, b_bufs, c_smem, ready, empty, GROUP_M, num_warps)),
    ], [1], [PRODUCER_REGS])
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(i))
        mbarrier.invalidate(empty.index(i))


def _gl_dtype(torch_dtype):
    return {"torch.bfloat16": gl.bfloat16, "torch.float16": gl.float16}[str(torch_dtype)]


def _maxnreg(num_warps: int) -> int:
    """Registers per thread the launch may use: 64K over the consumers plus the producer's warpgroup."""
    return min(255, 65536 // (32 * (num_warps + 4))) // 8 * 8


def make_descriptors(a, b, c, block_m: int, block_n: int, block_k: int):
    """TMA descriptors (zero padding) for row-major a (M, K), b (K, N), c (M, N)."""
    dt = _gl_dtype(a.dtype)

    def desc(t, box):
        return TensorDescriptor.from_tensor(t, box, gl.NVMMASharedLayout.get_default_for(box, dt))

    return desc(a, [block_m, block_k]), desc(b, [block_k, block_n]), desc(c, [block_m, block_n])


def gluon_gemm(a, b, *, block_m=128, block_n=128, block_k=64, stages=5, num_warps=8, group_m=8,
               producer_regs=PRODUCER_REGS, num_sms=None, out=None):
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
    if num_sms is None:
        num_sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    grid = (min(num_sms, triton.cdiv(M, block_m) * triton.cdiv(N, block_n)),)
    # num_warps is both a launch option and the kernel's constexpr (the binder fills the parameter from it)
    gluon_gemm_kernel[grid](*descs, group_m, stages, producer_regs, num_warps=num_warps, maxnreg=_maxnreg(num_warps))
    return c


# ---------------------------------------------------------------- compile only (CPU, no GPU needed)
PTX_COUNTS = {"wgmma": r"wgmma\.mma_async", "cp.async.bulk.tensor": r"cp\.async\.bulk\.tensor",
              "mbarrier": r"mbarrier\.", "setmaxnreg": r"setmaxnreg"}


def compile_config(cfg, dtype="bfloat16") -> dict:
    """Compile one config for sm_90 on the CPU: registers, spills, shared memory and PTX instruction counts."""
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    bm, bn, bk, stages, warps = cfg
    t = getattr(torch, dtype)
    a, b, c = torch.empty(256, 256, dtype=t), torch.empty(256, 256, dtype=t), torch.empty(256, 256, dtype=t)
    descs = make_descriptors(a, b, c, bm, bn, bk)  # CPU tensors: only the types matter here
    const = dict(GROUP_M=8, STAGES=stages, PRODUCER_REGS=PRODUCER_REGS, num_warps=warps)
    sig = dict(zip(("a_desc", "b_desc", "c_desc"), (mangle_type(d) for d in descs)), **{k: "constexpr" for k in const})
    src = GluonASTSource(gluon_gemm_kernel, sig, const)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, maxnreg=_maxnreg(warps)))
    ptx = k.asm["ptx"]
    row = dict(config=cfg_name(cfg), shared_kib=k.metadata.shared // 1024, maxnreg=_maxnreg(warps),
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


def cfg_name(cfg) -> str:
    bm, bn, bk, stages, warps = cfg
    return f"{bm}x{bn}x{bk} s{stages} w{warps}"


def compile_only(configs) -> int:
    print(f"Triton {triton.__version__}, sm_90, bf16, producer {PRODUCER_REGS} regs")
    failed = 0
    for cfg in configs:
        try:
            r = compile_config(cfg)
            print(f"{r['config']:<20} regs {r['regs']:>3} (maxnreg {r['maxnreg']}, setmaxnreg "
                  f"{'/'.join(r['setmaxnreg_values']) or '-'})  spills {r['spill_bytes']} B  smem {r['shared_kib']} KiB  "
                  f"wgmma {r['wgmma']}  cp.async.bulk.tensor {r['cp.async.bulk.tensor']}  mbarrier {r['mbarrier']}  "
                  f"setmaxnreg {r['setmaxnreg']}", flush=True)
        except Exception as e:  # noqa: BLE001 - a config that does not compile is a line, the others still run
            failed += 1
            msg = [line for line in str(e).splitlines() if line.strip()]
            print(f"{cfg_name(cfg):<20} FAILED {type(e).__name__}: {(msg[-1] if msg else '')[:200]}", flush=True)
    return 1 if failed == len(configs) else 0


# ---------------------------------------------------------------- GPU: check, then time
def bench(args, configs) -> int:
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    if torch.cuda.get_device_capability()[0] != 9:
        print(f"needs a Hopper GPU (sm_90), not {torch.cuda.get_device_name()}", file=sys.stderr)
        return 2
    from triton.testing import do_bench

    from tritondbg.kernels import gemm as G
    from tritondbg.kernels._launch import ensure_allocator

    ensure_allocator()  # the bundled gemm's device-side TMA descriptors need Triton's allocator
    dtype = getattr(torch, args.dtype)
    rows, wrong, t0 = [], 0, time.time()
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(M, K, device="cuda", generator=g).to(dtype)
        b = (torch.randn(K, N, device="cuda", generator=g) / K ** 0.5).to(dtype)
        ref = a.float() @ b.float()
        scale = ref.abs().max().item()
        cells = []

        def row(name, fn):
            nonlocal wrong
            r = dict(M=M, N=N, K=K, dtype=args.dtype, name=name, us=None)
            try:
                r["rel_err"] = (fn().float() - ref).abs().max().item() / scale
                if r["rel_err"] < 1e-2:
                    r["us"] = do_bench(fn, warmup=10, rep=args.rep, return_mode="median") * 1e3
                else:
                    r["error"], wrong = "WRONG", wrong + 1
            except Exception as e:  # noqa: BLE001 - a config that does not compile or launch is a row
                msg = [line for line in str(e).splitlines() if line.strip()]
                r["error"] = f"{type(e).__name__}: {(msg[-1] if msg else '')[:160]}"
            rows.append(r)
            return r

        base = row("torch.matmul", lambda: a @ b)
        c = torch.empty(M, N, device="cuda", dtype=dtype)
        for name, fn in [("gemm", lambda: G.gemm(a, b))] + [
                (cfg_name(cfg), lambda cfg=cfg: gluon_gemm(a, b, block_m=cfg[0], block_n=cfg[1], block_k=cfg[2],
                                                           stages=cfg[3], num_warps=cfg[4], out=c))
                for cfg in configs]:
            r = row(name, fn)
            if r["us"] is not None and base["us"] is not None:
                r["x_torch"] = base["us"] / r["us"]  # > 1: faster than torch.matmul
                cells.append(f"{name} {r['us']:.1f} us {r['x_torch']:.3f}x")
            else:
                cells.append(f"{name} {r.get('error', '-')[:60]}")
        torch_cell = f"torch {base['us']:.1f} us" if base["us"] is not None else f"torch {base.get('error')}"
        print(f"{M}x{N}x{K}: {torch_cell} | " + " | ".join(cells), flush=True)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), gpu=torch.cuda.get_device_name(), triton=triton.__version__,
                torch=torch.__version__, seconds=round(time.time() - t0),
                command="python tests/bench/gluon_gemm.py " + " ".join(args.argv))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    print(json.dumps(meta))
    return 1 if wrong else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=SHAPES, help="comma-separated MxNxK")
    ap.add_argument("--configs", default=None, help="comma-separated indices into CONFIGS (default: all)")
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16"))
    ap.add_argument("--rep", type=int, default=50, help="do_bench rep (ms)")
    ap.add_argument("--out", default="gluon_gemm.json")
    ap.add_argument("--compile-only", action="store_true", help="compile the configs for sm_90 on the CPU")
    args = ap.parse_args(argv)
    args.argv = argv
    try:
        configs = CONFIGS if args.configs is None else [CONFIGS[int(i)] for i in args.configs.split(",")]
        for s in args.shapes.split(","):
            if len([int(v) for v in s.split("x")]) != 3:
                raise ValueError(s)
    except (ValueError, IndexError) as e:
        print(f"bad --configs or --shapes: {e}", file=sys.stderr)
        return 2
    if args.compile_only:
        return compile_only(configs)
    return bench(args, configs)


if __name__ == "__main__":
    sys.exit(main())
