"""FP8 (e4m3) scaled GEMM for decode (M <= 64), ONE launch: split-K with an in-kernel, last-arrival reduction.

Computes ``c[m, n] = scale_a[m] * scale_b[n] * sum_k a[m, k] * b[k, n]`` exactly like ``fp8_gemm``
(``kernels/fp8_gemm.py``: same arguments, checks, per-tensor or per-row/column fp32 scales, precise fp32
accumulation, ``out_dtype`` bf16/fp16/fp32, bitwise deterministic), specialised for decode: M <= 64 rows of
activations against a large weight, e.g. M in {1, 16}, N = K = 8192 with ``b = w.t()`` (K-major, 64 MiB).
Larger M is handed to ``fp8_gemm``.

Design
- ONE launch. Grid = (output tiles, SPLIT_K). Split s reduces the K slice [s*k_per_split, ...) of one
  (BLOCK_N x BLOCK_M) tile of c^T, writes its fp32 partial to a cached workspace (partial s of element
  (m, n) at s*M*N + m*N + n) and bumps the tile's arrival counter with ``tl.atomic_add(sem="acq_rel",
  scope="gpu")``. The split that sees SPLIT_K - 1 arrivals before it is the last: it sums the SPLIT_K
  partials in the fixed order 0..SPLIT_K-1 (its own from registers: the same bits it stored), applies the
  scales in fp32, writes c once in ``out_dtype`` and stores 0 to the counter for the next launch. No
  program ever waits for another (no spinning), so any grid size and any scheduling order is safe, and the
  sum order, hence every bit of c, does not depend on which split arrives last.
- Swapped product for the tensor cores: acc (BLOCK_N, BLOCK_M) += w (BLOCK_N, BLOCK_K) @ a^T (BLOCK_K,
  BLOCK_M), w = b^T. The weight rows are the mma's M side (64/128, wgmma on Hopper: QGMMA.64x16x32 e4m3 in the
  sm_90 SASS, both operands K-major in shared memory, filled by LDGSTS.128 cp.async with 2-3 stages in
  flight); the tokens are its N side (16 at M <= 16, where M = 1 wastes 15/16 of an mma that has ~50x
  headroom here). fp8 goes to the tensor cores as is: no conversion instructions in the stream.
  ``max_num_imprecise_acc=BLOCK_K``: each BLOCK_K step is promoted to the fp32 accumulator (Hopper's fp8
  wgmma accumulates in reduced precision), as fp8_gemm's default.
- A CUDA-core GEMV path (``USE_DOT=False``, M = 1 only): fp8 -> fp32, multiply by a's row, elementwise fp32
  accumulation in a (BLOCK_N, BLOCK_K) block, one tl.sum at the end; register double buffering by hand
  (Triton's pipeliner only pipelines loads that feed tl.dot). Offered to the autotuner for M = 1; expected
  to lose (see the predictions): ~8 instructions per weight byte (PRMT/F2FP/HADD2 unpacking, FFMA) and
  200-243 registers (2 programs per SM, 16 KiB in flight each).
- Loads of b: the main loop masks only on N (constant along K), so every thread moves 16 consecutive bytes
  per request (LDGSTS.E.BYPASS.128 / LDG.E.128); the K mask exists only in one tail step at K's end. An
  empty split (slice starting past K, small K only) contributes a zero partial.
- Host side: the workspace (fp32, >= max SPLIT_K * M * N) and the counters (int32, one per tile, zeroed
  once) are cached per (device, power-of-two size) for the life of the process (a CUDA graph that captured
  a launch keeps valid pointers). The first call of a call signature goes through the autotuner and then
  builds a launcher bound to the compiled kernel of the chosen config (``CompiledKernel[grid]``, the same
  call ``JITFunction.run`` makes, launch hooks included); it launches once more through it into a
  NaN-filled c and returns that, so any single-call correctness check covers the cached path. Later calls
  with the same signature (shapes, strides, dtypes, devices, out_dtype, fp32 contiguous scales, 16-byte
  aligned pointers) do ~17 attribute reads, one dict lookup, ``torch.empty`` and that launch: no binding,
  no specialisation key, no autotuner, no ``.contiguous()``/``.to()``, no second kernel (measured here, on
  the 2-core dev CPU with a stub launcher: 3.7 us of Python besides torch.empty). When a tool patches the
  launch path (tritondbg's config pinning in run/check, ``ir``'s capture, an autotune watcher), every call
  goes through the autotuner, so pinned configs are honoured.
- Limits: int32 offsets (M*K, K*N, SPLIT_K*M*N < 2^31). Launches that share a device must not overlap in
  time on two streams (they would share workspace and counters); a launch killed midway leaves counters
  non-zero (on the CPU the next call repairs them with a warning; a CUDA error kills the context anyway).

Memory ordering (why the last split reads complete partials)
- Publish: every thread stores its part of the partial tile (plain st.global), then ``tl.debug_barrier()``
  (bar.sync: CTA-scope ordering of all those stores before the barrier completes), then ONE thread does
  the scalar ``atom.global.gpu.acq_rel.add`` (Triton predicates scalar atomics on one thread). Its release
  half is cumulative: it orders before the atomic every write that thread has observed, i.e. the whole
  CTA's partial through the barrier (the CUTLASS split-K semaphore pattern: __syncthreads(); thread 0
  red.release.gpu). sm_90 SASS: BAR.SYNC; MEMBAR.ALL.GPU; ATOMG.E.ADD.STRONG.GPU; CCTL.IVALL.
- Acquire: the last arrival's RMW reads the value written by the previous RMW in the counter's
  modification order; RMWs continue release sequences, so its acquire synchronises with every earlier
  split's release. Triton hands the atomic's result to all threads through shared memory and a bar.sync
  (st.shared; bar.sync; ld.shared), which orders the acquire before every thread's partial loads.
  CCTL.IVALL (the acquire) invalidates L1, and the partial loads use ``cache_modifier=".cg"`` (L2 only:
  LDG.E.STRONG.GPU) besides, so no stale L1 line can be read.
- Reset: the last split stores 0 to the counter; nobody else touches it in this launch (all SPLIT_K
  arrived) and kernel boundaries on one stream order it before the next launch's atomics. Under the
  interpreter programs run one after another: the last program of each tile sees SPLIT_K - 1, as on the
  GPU; the wrapper checks there that every counter is back at 0 after the launch.

PREDICTIONS for the H200 (for the lead to check; figures in us; "graph" = do_bench_cudagraph, "bench" =
plain do_bench, which zeroes a 256 MB buffer before every call)
- Floor. The two FACTS figures under plain do_bench, torch._scaled_mm fp8 (64 MiB of weight, 27.8 us) and
  the bf16 matmul (128 MiB, 43.5 us), fit t = (weight bytes + X) / B with B = 4.27 TB/s and X = 52 MB =
  50 MiB, the H200's L2 size: consistent with the flush leaving 50 MiB of DIRTY lines in L2 that are written
  back to HBM while the kernel streams its weight. If so, any kernel reading 64 MiB takes >= (67.1 + 52.4)
  MB / 4.27 TB/s = 28 us under plain do_bench: _scaled_mm is already there, and 1.5x (18.5 us) is out of
  reach for every kernel under that timing; the comparison that can show a gain is the graph timing (no
  flush; _scaled_mm 19 us) or an ncu dram__bytes/duration of the kernel itself. Plain do_bench hides host
  overhead below ~60 us per call (the 256 MB memset runs ahead), so the launcher savings show only in a
  launch-bound loop (back-to-back calls without the flush, or the end-to-end decode step).
- Per config (M=1 / M=16; the autotuner benchmarks the kept ones with do_bench, so it picks by "bench"):
  C1 BM16 BN128 BK256 S4 w4 s3: 256 programs, 108 KiB smem -> 2 per SM, one wave (8 SMs get 1), 256 KiB
     of b each, 64 KiB in flight each. graph 18.5 / 19.5 (3.6 / 3.4 TB/s), bench 28.5 / 29.5. Best guess
     for the autotuner's pick at M=1.
  C2 BM16 BN64 BK256 S4 w4 s4: 512 programs, 80 KiB -> 2 per SM, 1.94 waves (the second wave nearly full),
     128 KiB each. graph 19 / 20, bench 29 / 30.
  C3 BM16 BN64 BK256 S8 w4 s3: 1024 programs, 60 KiB -> 3 per SM, 4 K-steps each (pipeline fill/drain and
     the counter atomic amortised over 64 KiB only); M=16 adds 4 MiB of partials written + 3.5 MiB read
     (~1.7 us). graph 19.5 / 21.5, bench 29.5 / 31.5.
  C4 BM16 BN128 BK128 S8 w4 s4: 512 programs, 72 KiB -> 3 per SM (168 registers on 3.9, 78-85 on 3.6),
     same partial traffic as C3. graph 19 / 21, bench 29 / 31.
  C7 BM1 BN32 BK256 S4 GEMV, C8 BM1 BN64 BK128 S8 GEMV (M=1 only): issue-bound: ~525 instructions per
     warp per 2 KiB step -> ~33k issue cycles per SM, plus poor latency hiding at 200-243 registers (8 warps
     per SM). graph 30-40, bench 32-40. Never picked.
  The 32/64-row configs (C5, C6) serve 16 < M <= 64: same streaming, ~+1 us at M=64 for the larger partials.
- Against the two-launch fp8_gemm (22-24 us graph): -3 to -5 us (no reduce launch and its gap, no
  partial re-read by a second kernel, the wgmma 64x16 swapped tile instead of 16-row mma.sync).
- Host, per steady-state call on the H200 VM (where a bare Triton launch costs ~24 us of Python): ~10-15 us
  (validation-by-signature ~4-6, torch.empty ~2-3, CompiledKernel runner: current device/stream + the C
  launcher ~4-6); fp8_gemm pays the autotuner, binder, key, scale copies and two launches (~60+ us).
"""
from __future__ import annotations

import dataclasses
import warnings

import torch
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from tritondbg import Case
from tritondbg.kernels import fp8_gemm as _base
from tritondbg.scenarios.fp8_gemm import SCENARIO as _BASE

FP8_DTYPE = torch.float8_e4m3fn
OUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
MAX_M = 64  # larger M: enough output tiles without split-K; fp8_gemm_decode hands those to fp8_gemm


# ---------------------------------------------------------------------------------------------------------
# Autotune configs. The tile is (BLOCK_N rows of w = b^T) x (BLOCK_K) per step; the mma path computes the
# swapped product c^T = b^T a^T, so BLOCK_N (64/128, the big dimension) is the mma's M and BLOCK_M (16..64,
# the tokens) its N. Shared memory per stage (mma path) = (BLOCK_N + BLOCK_M) * BLOCK_K bytes.
# Programs at N = K = 8192 (132 SMs on an H200): tiles = N / BLOCK_N (one M tile for M <= BLOCK_M), x SPLIT_K.
# ---------------------------------------------------------------------------------------------------------
def _cfg(bm, bn, bk, sk, dot, warps, stages):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, SPLIT_K=sk, USE_DOT=dot), num_warps=warps,
                         num_stages=stages, pre_hook=_check_buffers)


def _check_buffers(nargs):
    """Config pre_hook (run before every launch through the autotuner): the cached workspace and counters must
    hold this config's partials and tiles. They are sized for every listed config; this catches a config
    built from outside the list (a pinned dict) that needs more, before the kernel writes out of bounds."""
    M, N = nargs["M"], nargs["N"]
    need_ws = nargs["SPLIT_K"] * M * N
    need_cnt = triton.cdiv(M, nargs["BLOCK_M"]) * triton.cdiv(N, nargs["BLOCK_N"])
    if nargs["ws_ptr"].numel() < need_ws or nargs["cnt_ptr"].numel() < need_cnt:
        raise RuntimeError(f"fp8_gemm_decode: config SPLIT_K={nargs['SPLIT_K']}, BLOCK_M={nargs['BLOCK_M']}, "
                           f"BLOCK_N={nargs['BLOCK_N']} needs {need_ws} workspace floats and {need_cnt} "
                           f"counters; the cached buffers hold {nargs['ws_ptr'].numel()} and "
                           f"{nargs['cnt_ptr'].numel()} (sized for the listed configs only)")


CONFIGS = [
    # ---- tensor-core path (tl.dot on fp8, swapped: w tile (BLOCK_N, BLOCK_K) @ a^T tile (BLOCK_K, BLOCK_M)) --
    # M <= 16 (one 16-column mma tile; M = 1 wastes 15/16 of the mma, which has ~50x headroom here):
    # 64 tiles x 4 splits = 256 programs of 128 x 2048 B; 36 KiB/stage x 3 = 108 KiB smem: 2 per SM (264 slots).
    _cfg(16, 128, 256, 4, True, 4, 3),
    # 128 tiles x 4 = 512 programs of 64 x 2048 B; 20 KiB x 4 = 80 KiB: 2 per SM -> ~2 waves.
    _cfg(16, 64, 256, 4, True, 4, 4),
    # 128 tiles x 8 = 1024 programs of 64 x 1024 B (4 K-steps each); 20 KiB x 3 = 60 KiB: 3 per SM.
    _cfg(16, 64, 256, 8, True, 4, 3),
    # 64 tiles x 8 = 512 programs of 128 x 1024 B; 18 KiB x 4 = 72 KiB: 3 per SM.
    _cfg(16, 128, 128, 8, True, 4, 4),
    # 16 < M <= 32 and 32 < M <= 64: the same streaming shape with 32/64 token columns.
    _cfg(32, 64, 256, 4, True, 4, 3),
    _cfg(64, 64, 256, 4, True, 4, 3),
    # ---- CUDA-core GEMV path (M = 1 only): fp8 -> fp32, times a's row, fp32 sums over K -------------------
    # 256 tiles x 4 = 1024 programs of 32 x 2048 B; per step 32 x 256 B = 64 B (4 x 16 B) a thread, 2 steps
    # in flight (register double buffering), 64 fp32 partial sums a thread.
    _cfg(1, 32, 256, 4, False, 4, 1),
    # 128 tiles x 8 = 1024 programs of 64 x 1024 B; per step 64 x 128 B, same per-thread figures.
    _cfg(1, 64, 128, 8, False, 4, 1),
    # ---- narrow problems (N <= 2048: tests, small heads): the tiny cases pin these ----------------------
    _cfg(16, 32, 64, 4, True, 4, 2),
    _cfg(64, 32, 64, 4, True, 4, 2),
    _cfg(1, 32, 64, 4, False, 4, 1),
]


def _prune_configs(configs, named_args, **kwargs):
    """Keep the configs suited to (M, N, K); always returns at least one.

    - mma path: BLOCK_M = the smallest of 16/32/64 that holds M (one M tile: b is streamed exactly once);
    - GEMV path only for M = 1 (it would re-read b once per row);
    - steps of < 8 KiB of b (the narrow test configs) only for N <= 2048;
    - no split whose K slice would be empty (SPLIT_K * BLOCK_K > K).
    """
    args = {**named_args, **kwargs}
    M, N, K = int(args["M"]), int(args["N"]), int(args["K"])
    bm_dot = max(16, triton.next_power_of_2(M))
    kept = []
    for c in configs:
        bm, bn, bk, sk, dot = (c.kwargs[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "USE_DOT"))
        if dot and bm != bm_dot:
            continue
        if not dot and M > 1:
            continue
        if bn * bk < 8192 and N > 2048:
            continue
        if sk * bk > K:
            continue
        kept.append(c)
    if not kept:  # e.g. K < 256 with N > 2048: the narrow mma config with enough rows, else the widest one
        dots = [c for c in configs if c.kwargs["USE_DOT"]]
        fit = [c for c in dots if c.kwargs["BLOCK_M"] >= M] or dots
        kept = [min(fit, key=lambda c: (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"] * c.kwargs["BLOCK_K"]))]
    return kept


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"], prune_configs_by={"early_config_prune": _prune_configs})
@triton.jit
def fp8_decode_kernel(
    a_ptr,        # (M, K) float8e4nv, strides (stride_am, stride_ak); K-contiguous is fastest
    b_ptr,        # (K, N) float8e4nv, strides (stride_bk, stride_bn); K-major (stride_bk == 1, b = w.t()) is fastest
    c_ptr,        # (M, N) out_dtype, strides (stride_cm, stride_cn); written by the last-arriving split of a tile
    ws_ptr,       # fp32 workspace, flat, >= SPLIT_K*M*N: partial s of element (m, n) at s*M*N + m*N + n
    cnt_ptr,      # int32 arrival counters, one per output tile, 0 on entry and (reset by the kernel) on exit
    scale_a_ptr,  # fp32: 1 value (per-tensor) or M values (SCALE_A_ROWS)
    scale_b_ptr,  # fp32: 1 value (per-tensor) or N values (SCALE_B_COLS)
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    SCALE_A_ROWS: tl.constexpr,  # scale_a has one value per row of a
    SCALE_B_COLS: tl.constexpr,  # scale_b has one value per column of b
    BLOCK_M: tl.constexpr,       # tokens per tile (mma path: 16/32/64; GEMV path: 1)
    BLOCK_N: tl.constexpr,       # output columns per tile = rows of w = b^T streamed per step
    BLOCK_K: tl.constexpr,       # K per step (bytes per row of w per step)
    SPLIT_K: tl.constexpr,       # programs along K per output tile (grid axis 1)
    USE_DOT: tl.constexpr,       # True: tensor cores (tl.dot); False: fp32 FMA GEMV (BLOCK_M == 1)
):
    # ---- which output tile, which K slice -------------------------------------------------------------
    tile = tl.program_id(0)   # output tile: pid_m fastest (one M tile for M <= BLOCK_M)
    pid_k = tl.program_id(1)  # K split
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = tile % num_pid_m
    pid_n = tile // num_pid_m

    # Split s reduces K slice [s*k_per_split, min((s+1)*k_per_split, K)); k_per_split is a whole number of
    # BLOCK_K steps, so the slice is n_full unmasked steps plus, at K's end only, one masked step of k_tail.
    # A split whose slice starts past K (small K) has k_len = 0: it contributes a zero partial.
    k_per_split = tl.cdiv(K, BLOCK_K * SPLIT_K) * BLOCK_K
    k_start = pid_k * k_per_split
    k_len = tl.maximum(tl.minimum(K - k_start, k_per_split), 0)
    n_full = k_len // BLOCK_K
    k_tail = k_len - n_full * BLOCK_K

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    # w = b^T tile (BLOCK_N, BLOCK_K): K is the contiguous axis for a K-major b, so each thread loads 16
    # consecutive bytes of a row (LDG/LDGSTS .128). The main loop masks only on N (constant along K), which
    # keeps the 16-byte vectors; the K mask exists only in the tail step.
    w_ptrs = b_ptr + offs_n[:, None] * stride_bn + (k_start + offs_k)[None, :] * stride_bk
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)  # c^T tile: acc[n, m] = sum_k b[k, n] * a[m, k]
    if USE_DOT:
        # ---- tensor cores: acc += w (BLOCK_N, BLOCK_K) @ a^T (BLOCK_K, BLOCK_M), both K-major ------------
        # max_num_imprecise_acc=BLOCK_K: Hopper's fp8 wgmma keeps a reduced-precision running sum; each step's
        # product goes to a fresh accumulator and is added to acc in full fp32 (as fp8_gemm's default
        # precise mode). No effect on mma.sync or other GPUs.
        x_ptrs = a_ptr + (k_start + offs_k)[:, None] * stride_ak + offs_m[None, :] * stride_am
        for _ in range(0, n_full):
            w = tl.load(w_ptrs, mask=mask_n[:, None], other=0.0)
            x = tl.load(x_ptrs, mask=mask_m[None, :], other=0.0)
            acc = tl.dot(w, x, acc, max_num_imprecise_acc=BLOCK_K)
            w_ptrs += BLOCK_K * stride_bk
            x_ptrs += BLOCK_K * stride_ak
        if k_tail > 0:
            k_ok = offs_k < k_tail  # other=0.0 lanes add exact zeros to the dot
            w = tl.load(w_ptrs, mask=mask_n[:, None] & k_ok[None, :], other=0.0)
            x = tl.load(x_ptrs, mask=k_ok[:, None] & mask_m[None, :], other=0.0)
            acc = tl.dot(w, x, acc, max_num_imprecise_acc=BLOCK_K)
    else:
        # ---- CUDA cores, M = 1 per program: fp8 -> fp32 (exact), products exact in fp32, fp32 sums ---------
        # The products accumulate elementwise in a (BLOCK_N, BLOCK_K) fp32 block (no cross-lane traffic in
        # the loop); one tl.sum over K at the end. Its summation order differs from the mma path's but is
        # fixed: deterministic. Triton's pipeliner only pipelines loads that feed tl.dot, so this loop double-
        # buffers in registers by hand: step i+1's loads are issued before step i's math.
        tl.static_assert(BLOCK_M == 1, "the GEMV path computes one row of a per program (BLOCK_M = 1)")
        x_ptrs = a_ptr + offs_m[:, None] * stride_am + (k_start + offs_k)[None, :] * stride_ak  # (1, BLOCK_K)
        acc2 = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
        if n_full > 0:
            w = tl.load(w_ptrs, mask=mask_n[:, None], other=0.0)
            x = tl.load(x_ptrs, mask=mask_m[:, None], other=0.0)
            for _ in range(1, n_full):
                w_ptrs += BLOCK_K * stride_bk
                x_ptrs += BLOCK_K * stride_ak
                w_next = tl.load(w_ptrs, mask=mask_n[:, None], other=0.0)
                x_next = tl.load(x_ptrs, mask=mask_m[:, None], other=0.0)
                acc2 += w.to(tl.float32) * x.to(tl.float32)
                w = w_next
                x = x_next
            acc2 += w.to(tl.float32) * x.to(tl.float32)
        if k_tail > 0:
            offs_kt = k_start + n_full * BLOCK_K + offs_k
            k_ok = offs_k < k_tail
            w = tl.load(b_ptr + offs_n[:, None] * stride_bn + offs_kt[None, :] * stride_bk,
                        mask=mask_n[:, None] & k_ok[None, :], other=0.0)
            x = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_kt[None, :] * stride_ak,
                        mask=mask_m[:, None] & k_ok[None, :], other=0.0)
            acc2 += w.to(tl.float32) * x.to(tl.float32)
        acc += tl.sum(acc2, axis=1)[:, None]

    # ---- publish this split's partial, count arrivals -----------------------------------------------------
    mask_c = mask_n[:, None] & mask_m[None, :]
    ws_tile = ws_ptr + offs_m[None, :] * N + offs_n[:, None]  # partial s of this tile at ws_tile + s*M*N
    tl.store(ws_tile + pid_k * M * N, acc, mask=mask_c)
    # Memory ordering (see the module docstring): the partial stores above are made by every thread of the
    # program, the counter bump below by one thread. The CTA barrier orders all threads' stores before that
    # thread's atomic (bar.sync: CTA-scope ordering), and the atomic's release at gpu scope is cumulative: it
    # publishes everything the thread has observed, so the whole partial tile, to whoever acquires the count.
    tl.debug_barrier()
    arrived = tl.atomic_add(cnt_ptr + tile, 1, sem="acq_rel", scope="gpu")  # count of splits before this one
    if arrived == SPLIT_K - 1:
        # ---- last split of this tile: every other partial is published (acquired through the counter's
        # release sequence; Triton hands the atomic's result to all threads through shared memory and a
        # barrier, which orders the loads below after the acquire). Sum in the fixed order 0..SPLIT_K-1, this
        # program's own partial taken from registers (the same bits it stored): the result does not depend
        # on which split arrives last. .cg: read from L2, never from a stale L1 line. -------------------
        total = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
        # pid_k as a block: Triton 3.9's interpreter rejects `mask & scalar_bool` ("mask has unsupported dtype")
        own = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.int32) + pid_k
        for s in tl.static_range(SPLIT_K):
            part = tl.load(ws_tile + s * M * N, mask=mask_c & (own != s), other=0.0, cache_modifier=".cg")
            total += tl.where(own == s, acc, part)
        # scales in fp32, one rounding to out_dtype
        if SCALE_A_ROWS:
            sa = tl.load(scale_a_ptr + offs_m, mask=mask_m, other=0.0)[None, :]
        else:
            sa = tl.load(scale_a_ptr)
        if SCALE_B_COLS:
            sb = tl.load(scale_b_ptr + offs_n, mask=mask_n, other=0.0)[:, None]
        else:
            sb = tl.load(scale_b_ptr)
        total = total * sa * sb
        c_ptrs = c_ptr + offs_m[None, :] * stride_cm + offs_n[:, None] * stride_cn
        tl.store(c_ptrs, total.to(c_ptr.dtype.element_ty), mask=mask_c)
        # All SPLIT_K splits have arrived: nobody touches this counter again in this launch. Zero it for the
        # next launch (kernel boundaries on one stream order this store before the next launch's atomics).
        tl.store(cnt_ptr + tile, 0)


# ---------------------------------------------------------------------------------------------------------
# Host side: cached workspace/counters and a cached launcher, so a steady-state call is a few attribute
# checks, one torch.empty and one launch of an already-compiled kernel.
# ---------------------------------------------------------------------------------------------------------
_BUFFERS: dict[tuple, torch.Tensor] = {}  # (kind, device, size class) -> tensor; kept for the process's life
_PLANS: dict[tuple, "_Plan"] = {}          # call signature (see fp8_gemm_decode) -> cached launcher (CUDA)
_CHECKED: set[tuple] = set()               # (signature, config) whose launcher ran once into a NaN-filled c
_TENSOR_ARGS = ("a_ptr", "b_ptr", "c_ptr", "ws_ptr", "cnt_ptr", "scale_a_ptr", "scale_b_ptr")
# The pristine launch entry points: when a tool has patched either (tritondbg's config pinning, the ir
# capture, an autotune watcher), every call goes through them, never through the cached launcher.
_TUNER_RUN = Autotuner.run
_JIT_RUN = JITFunction.run


def _buffer(kind: str, device: torch.device, numel: int, dtype: torch.dtype) -> torch.Tensor:
    """A zero-initialised buffer of at least ``numel`` elements, cached per (device, power-of-two size).

    Buffers are never freed or replaced: a CUDA graph that captured a launch keeps using the same pointers.
    The counters must be all zero between launches; each launch leaves them so (the last split of each tile
    resets its counter). The workspace needs no initialisation (every partial is written before it is read)."""
    size = triton.next_power_of_2(max(int(numel), 1))
    key = (kind, device, size)
    buf = _BUFFERS.get(key)
    if buf is None:
        buf = _BUFFERS[key] = torch.zeros(size, device=device, dtype=dtype)
    return buf


def _buffers_for(M: int, N: int, device: torch.device):
    """Workspace and counters big enough for every listed config at this (M, N) (so any config the autotuner
    benchmarks, or a tool pins, fits)."""
    configs = fp8_decode_kernel.configs
    n_ws = max(c.kwargs["SPLIT_K"] for c in configs) * M * N
    n_cnt = max(triton.cdiv(M, c.kwargs["BLOCK_M"]) * triton.cdiv(N, c.kwargs["BLOCK_N"]) for c in configs)
    ws = _buffer("ws", device, n_ws, torch.float32)
    cnt = _buffer("cnt", device, n_cnt, torch.int32)
    if cnt.device.type != "cuda" and bool(cnt.any()):
        # Only an interrupted launch leaves a counter non-zero (e.g. an exception or a debugger quit inside
        # the interpreter); on the CPU, repair it rather than compute garbage on every later call.
        warnings.warn("fp8_gemm_decode: arrival counters were left non-zero by an interrupted launch; "
                      "zeroing them", RuntimeWarning, stacklevel=3)
        cnt.zero_()
    return ws, cnt


class _Plan:
    """A compiled kernel bound to one call signature: launches with no binding, specialisation or autotuning.

    ``tail`` holds every argument after the tensors, in the kernel's parameter order (sizes, strides and the
    constexprs, as ``JITFunction.run`` passes them to the launcher)."""

    __slots__ = ("runner", "ws", "cnt", "tail", "out_shape", "device")

    def __init__(self, compiled, config, ws, cnt, scalars: dict, device):
        if hasattr(compiled, "result"):  # Triton 3.6 with asynchronous compilation: a future
            compiled = compiled.result()
        names = list(fp8_decode_kernel.fn.arg_names)
        if tuple(names[:len(_TENSOR_ARGS)]) != _TENSOR_ARGS:
            raise RuntimeError(f"fp8_gemm_decode: unexpected kernel signature {names}")
        values = {**scalars, **config.kwargs}
        self.tail = tuple(values[n] for n in names[len(_TENSOR_ARGS):])
        M, N = scalars["M"], scalars["N"]
        k = config.kwargs
        grid = (triton.cdiv(M, k["BLOCK_M"]) * triton.cdiv(N, k["BLOCK_N"]), k["SPLIT_K"], 1)
        self.runner = compiled[grid]  # CompiledKernel.__getitem__: current device/stream, launch hooks, launch
        self.ws, self.cnt = ws, cnt
        self.out_shape, self.device = (M, N), device

    def launch(self, a, b, c, sa, sb) -> None:
        self.runner(a, b, c, self.ws, self.cnt, sa, sb, *self.tail)


def _scale(scale, length: int, name: str, axis_name: str, device) -> tuple[torch.Tensor, bool]:
    """Validate a scale as fp8_gemm does; return (fp32 tensor whose flat memory holds the values, per_axis).
    An fp32 contiguous scale is returned as is (no copy, no view): the kernel only needs its pointer."""
    if not isinstance(scale, torch.Tensor):
        raise ValueError(f"fp8_gemm_decode: {name} must be a torch tensor (fp32), got {type(scale).__name__}")
    if not scale.dtype.is_floating_point:
        raise ValueError(f"fp8_gemm_decode: {name} must be a floating-point tensor, got {scale.dtype}")
    if scale.device != device:
        raise ValueError(f"fp8_gemm_decode: {name} is on {scale.device}, a is on {device}")
    n = scale.numel()
    if n == 1 and scale.ndim <= 2:
        per_axis = False
    elif n == length and scale.ndim <= 2 and sum(d != 1 for d in scale.shape) == 1:
        per_axis = True
    else:
        raise ValueError(f"fp8_gemm_decode: {name} must have shape () or (1,) (per-tensor) or {length} values "
                         f"(per-{axis_name}), got {tuple(scale.shape)}")
    if scale.dtype != torch.float32 or not scale.is_contiguous():
        scale = scale.reshape(-1).to(torch.float32).contiguous()
    return scale, per_axis


def _pristine() -> bool:
    """No tool has patched the launch path (tritondbg's config pinning in run/check, the ir capture, an
    autotune watcher): only then may a call skip the autotuner and JITFunction.run."""
    return (type(fp8_decode_kernel).run is _TUNER_RUN and "run" not in vars(fp8_decode_kernel)
            and JITFunction.run is _JIT_RUN)


def fp8_gemm_decode(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
                    out_dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """``(a @ b) * scale_a * scale_b`` for fp8 e4m3 a (M, K), b (K, N); a new (M, N) ``out_dtype`` tensor.

    Same arguments, checks and numerics as ``fp8_gemm`` (precise fp32 accumulation, deterministic). One
    kernel launch for M <= 64; larger M is handed to ``fp8_gemm`` (no split-K needed there). Not safe to run
    concurrently on two streams of one device (the launches would share the cached workspace/counters)."""
    # ---- steady state: a signature seen (and fully validated) before, on CUDA. The signature holds every
    # property the checks and Triton's specialisation depend on except the pointers' 16-byte alignment,
    # checked here; the scales were fp32 and contiguous (passed as they are). Cost: ~17 attribute reads,
    # one dict lookup, torch.empty and the launch of the already-compiled kernel. -------------------------
    try:
        sig = (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device, out_dtype,
               scale_a.shape, scale_a.dtype, scale_a.device, scale_a.is_contiguous(),
               scale_b.shape, scale_b.dtype, scale_b.device, scale_b.is_contiguous())
        plan = _PLANS.get(sig)
    except (AttributeError, TypeError):  # not tensors, unhashable out_dtype: the checks below say what
        sig = plan = None
    if (plan is not None and not ((a.data_ptr() | b.data_ptr() | scale_a.data_ptr() | scale_b.data_ptr()) & 15)
            and _pristine()):
        c = torch.empty(plan.out_shape, device=plan.device, dtype=out_dtype)
        plan.launch(a, b, c, scale_a, scale_b)
        return c
    return _checked_call(a, b, scale_a, scale_b, out_dtype, sig)


def _checked_call(a, b, scale_a, scale_b, out_dtype, sig):
    """Every check of fp8_gemm, then a launch through the autotuner (and, on CUDA, the cached launcher)."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise ValueError("fp8_gemm_decode: a and b must be torch tensors")
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"fp8_gemm_decode: a and b must be 2-D, got a{tuple(a.shape)} and b{tuple(b.shape)}")
    M, K = a.shape
    Kb, N = b.shape
    if K != Kb:
        raise ValueError(f"fp8_gemm_decode: inner dimensions differ: a{tuple(a.shape)} @ b{tuple(b.shape)}")
    if a.dtype != FP8_DTYPE or b.dtype != FP8_DTYPE:
        raise ValueError(f"fp8_gemm_decode: a and b must be torch.float8_e4m3fn, got {a.dtype} and {b.dtype}")
    device = a.device
    if b.device != device:
        raise ValueError(f"fp8_gemm_decode: a and b are on different devices ({device}, {b.device})")
    if out_dtype not in OUT_DTYPES:
        raise ValueError(f"fp8_gemm_decode: out_dtype must be one of {OUT_DTYPES}, got {out_dtype}")
    a_strides, b_strides = a.stride(), b.stride()
    if min(a_strides) < 0 or min(b_strides) < 0:
        raise ValueError("fp8_gemm_decode: negative strides are not supported")
    sa, sa_rows = _scale(scale_a, M, "scale_a", "row of a", device)
    sb, sb_cols = _scale(scale_b, N, "scale_b", "column of b", device)
    if M > MAX_M:
        return _base.fp8_gemm(a, b, sa, sb, out_dtype=out_dtype)
    c = torch.empty((M, N), device=device, dtype=out_dtype)
    if M == 0 or N == 0:
        return c
    if K == 0:
        return c.zero_()

    ws, cnt = _buffers_for(M, N, device)
    scalars = dict(M=M, N=N, K=K, stride_am=a_strides[0], stride_ak=a_strides[1], stride_bk=b_strides[0],
                   stride_bn=b_strides[1], stride_cm=c.stride(0), stride_cn=c.stride(1),
                   SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), meta["SPLIT_K"])

    compiled = fp8_decode_kernel[grid](a, b, c, ws, cnt, sa, sb, M, N, K,
                                       a_strides[0], a_strides[1], b_strides[0], b_strides[1],
                                       c.stride(0), c.stride(1),
                                       SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols)
    if not a.is_cuda:
        # The CPU (interpreter) runs the launch synchronously: check the protocol's invariant right here.
        if bool(cnt.any()):
            cnt.zero_()
            raise RuntimeError("fp8_gemm_decode: the launch left arrival counters non-zero (a tile's last "
                               "split did not reset its counter)")
        return c
    aligned = not ((a.data_ptr() | b.data_ptr() | sa.data_ptr() | sb.data_ptr()) & 15)
    if not aligned or compiled is None or sig is None:
        return c
    config = fp8_decode_kernel.best_config  # the config that just ran (autotuned or pinned by a tool)
    checked = (sig, tuple(sorted(config.kwargs.items())), config.num_warps, config.num_stages)
    # The launcher is kept for the steady state only when nothing is patched and the scales went in as is.
    keep = _pristine() and sa is scale_a and sb is scale_b
    if checked in _CHECKED:  # its launcher already ran once (see below): one launch per call
        if keep:
            _PLANS[sig] = _Plan(compiled, config, ws, cnt, scalars, device)
        return c
    # First call of this signature and config: launch it once more, through the launcher the steady state
    # uses, into a NaN-filled c, and return that. So a correctness check of a single call (tritondbg run and
    # check pin configs: they never reach the steady state) covers the cached launcher, and it also checks
    # that the first launch left every counter at zero.
    plan = _Plan(compiled, config, ws, cnt, scalars, device)
    if keep:
        _PLANS[sig] = plan
    _CHECKED.add(checked)
    c.fill_(float("nan"))
    plan.launch(a, b, c, sa, sb)
    return c


reference = _base.reference
flops = _base.flops
bytes_moved = _base.bytes_moved


# ---------------------------------------------------------------------------------------------------------
# tritondbg scenario: the base fp8_gemm scenario's inputs, reference and torch baseline; this launch.
# ---------------------------------------------------------------------------------------------------------
_FP8 = ("float8_e4m3fn",)
_BASE_CASES = {c.name: c for c in _BASE.cases}


def _pin(**cfg):
    """A case config naming one listed config exactly (checked at import)."""
    if not any(all(c.kwargs.get(k) == v for k, v in cfg.items()) for c in CONFIGS):
        raise ValueError(f"fp8_decode scenario: no listed config matches {cfg}")
    return cfg


_NARROW_DOT = _pin(BLOCK_M=16, BLOCK_N=32, BLOCK_K=64, SPLIT_K=4, USE_DOT=True)
_NARROW_DOT64 = _pin(BLOCK_M=64, BLOCK_N=32, BLOCK_K=64, SPLIT_K=4, USE_DOT=True)
_NARROW_FMA = _pin(BLOCK_M=1, BLOCK_N=32, BLOCK_K=64, SPLIT_K=4, USE_DOT=False)

SCENARIO = dataclasses.replace(
    _BASE,
    name="fp8_decode",
    description="fp8 e4m3 scaled GEMM for decode (M <= 64): one launch, split-K reduced by the last-arriving "
                "split in a fixed order (deterministic), cached launcher",
    launch=fp8_gemm_decode,
    kernels=[fp8_decode_kernel],
    limits=None,  # no spills tolerated (the base tolerates 4 for its 256-row prefill tile)
    cases=[
        # K=300, BLOCK_K=64, SPLIT_K=4: k_per_split = cdiv(300, 256) * 64 = 128: splits [0,128), [128,256)
        # take 2 full steps, [256,300) only a 44-deep tail step, [384,...) is empty (a zero partial);
        # M=3 (13 of 16 token columns masked), N=40 (one full 32-row tile + an 8-row tail).
        dataclasses.replace(_BASE_CASES["tiny_splitk"], config=_NARROW_DOT,
                            description="mma path: K tail inside the last split, an empty split, last-arrival "
                                        "reduction"),
        dataclasses.replace(_BASE_CASES["tiny_splitk_rowcol"], config=_NARROW_DOT,
                            description="mma path, per-row/column scales applied by the last-arriving split"),
        # per-tensor scales: the torch baseline (_scaled_mm) rejects M=1 row/column scales (a (1, 1) scale_a
        # reads as per-tensor next to a per-column scale_b); all-configs runs this config on the rowcol case.
        Case("tiny_m1_gemv", params=dict(M=1, N=40, K=300, b_layout="nk"), dtypes=_FP8,
             config=_NARROW_FMA, description="GEMV (FMA) path, M=1, same K split as tiny_splitk"),
        Case("tiny_m37", params=dict(M=37, N=53, K=200), dtypes=_FP8, config=_NARROW_DOT64,
             description="64-token tile, M=37, N=53 (2 tiles, 21-row tail), K=200: splits of 64, 64, 64, 8"),
        dataclasses.replace(_BASE_CASES["decode_m1"]),
        dataclasses.replace(_BASE_CASES["decode_m16"]),
    ],
)
