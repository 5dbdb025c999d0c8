"""One-launch split-K GEMM for few rows (decode): ``fp8_gemm_decode_kernel``, shared by fp8_gemm (fp8 e4m3
operands, M <= 64) and gemm (fp16/bf16 operands, M <= 128: kernels/gemm.py ``gemm_splitk``).

Grid = (output tiles, SPLIT_K); split s reduces the K slice [s*k_per_split, ...) of one tile, writes its fp32
partial to a cached workspace and bumps the tile's arrival counter (``tl.atomic_add``, acq_rel, gpu scope). The
split that arrives last sums the SPLIT_K partials in the fixed order 0..SPLIT_K-1 (so the bits of c do not
depend on which split is last), applies the scales, writes c and resets the counter for the next launch;
nobody waits for anybody (no spinning). Swapped product for the tensor cores: acc (N tile, M tile) += w @ a^T
with w = b^T, so the weight rows are wgmma's 64/128-row side and the tokens its 16..128-wide side. A CUDA-core
GEMV variant of the loop (``USE_DOT=False``) is offered to the autotuner for M = 1. Autotuned over
(DEC_BLOCK_M, DEC_BLOCK_N, DEC_BLOCK_K, SPLIT_K, USE_DOT, num_warps, num_stages), keyed on (M, N, K); fp8 and
16-bit operands get their own config lists (``_prune_decode_configs``).

Memory ordering of the decode reduction: every thread stores its part of the partial, ``tl.debug_barrier()``
(bar.sync) orders those stores before the one thread's ``atom.acq_rel.gpu`` (its release is cumulative:
the CUTLASS split-K semaphore pattern); the last arrival's acquire synchronises with every earlier split's
release (RMWs continue release sequences), Triton broadcasts the atomic's result through shared memory and
a barrier, and the partials are re-read with ``.cg`` (L2, never a stale L1 line). sm_90 SASS: BAR.SYNC;
MEMBAR.ALL.GPU; ATOMG.E.ADD.STRONG.GPU; CCTL.IVALL; the re-reads are LDG.E.STRONG.GPU. Under the
interpreter programs run one after another; the wrapper checks that every counter is back at 0.

Host side (``_decode``): the workspace (fp32) and counters (int32, zero between launches) are cached per
(device, stream, power-of-two size) for the process's life (kernels/_scratch.py: launches on two streams at once
get separate sets; a CUDA graph that captured a launch keeps valid pointers).
On CUDA the first call of a call signature goes through the autotuner, then binds a cached launcher (``_Plan``,
kernels/_launch.py's ``Launcher``) to the compiled kernel of the config that ran; under tritondbg's run/check
that launcher is run once more into a NaN-filled c, so a single-call check covers the cached path. The wrappers
look ``_PLANS`` up first: a steady-state call is a dict lookup, ``torch.empty`` and one launch.
"""
from __future__ import annotations

import warnings

import torch
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from . import _launch, _scratch
from ._autotune import autotune_bench


# ---------------------------------------------------------------------------------------------------------
# Decode (M <= 64; 16-bit operands M <= 128): autotune configs. A step is DEC_BLOCK_N rows of w = b^T x
# DEC_BLOCK_K elements; the mma path computes the swapped product c^T = b^T a^T, so DEC_BLOCK_N (64/128) is
# the mma's M side and DEC_BLOCK_M (16..128, the tokens) its N side. Shared memory per stage (mma path) =
# (DEC_BLOCK_N + DEC_BLOCK_M) * DEC_BLOCK_K * element bytes. Programs at N = K = 8192 (132 SMs on an H200):
# N / DEC_BLOCK_N tiles (one M tile for M <= DEC_BLOCK_M) x SPLIT_K.
# ---------------------------------------------------------------------------------------------------------
def _dcfg(bm, bn, bk, sk, dot, warps, stages):
    return triton.Config(dict(DEC_BLOCK_M=bm, DEC_BLOCK_N=bn, DEC_BLOCK_K=bk, SPLIT_K=sk, USE_DOT=dot),
                         num_warps=warps, num_stages=stages, pre_hook=_check_buffers)


def _check_buffers(nargs):
    """Config pre_hook (run before every launch through the autotuner): the cached workspace and counters must
    hold this config's partials and tiles. They are sized for every listed config; this catches a config
    built from outside the list (a pinned dict) that needs more, before the kernel writes out of bounds."""
    M, N = nargs["M"], nargs["N"]
    need_ws = nargs["SPLIT_K"] * M * N
    need_cnt = triton.cdiv(M, nargs["DEC_BLOCK_M"]) * triton.cdiv(N, nargs["DEC_BLOCK_N"])
    if nargs["ws_ptr"].numel() < need_ws or nargs["cnt_ptr"].numel() < need_cnt:
        raise RuntimeError(f"fp8_gemm: config SPLIT_K={nargs['SPLIT_K']}, DEC_BLOCK_M={nargs['DEC_BLOCK_M']}, "
                           f"DEC_BLOCK_N={nargs['DEC_BLOCK_N']} needs {need_ws} workspace floats and {need_cnt} "
                           f"counters; the cached buffers hold {nargs['ws_ptr'].numel()} and "
                           f"{nargs['cnt_ptr'].numel()} (sized for the listed configs only)")


DECODE_CONFIGS = [
    # ---- tensor-core path (tl.dot on fp8, swapped: w tile (N, K) @ a^T tile (K, M)) --------------------
    # M <= 16 (one 16-column mma tile; M = 1 wastes 15/16 of the mma, which has ~50x headroom here):
    # 64 tiles x 4 splits = 256 programs of 128 x 2048 B; 36 KiB/stage x 3 = 108 KiB smem: 2 per SM (264 slots).
    _dcfg(16, 128, 256, 4, True, 4, 3),
    # 128 tiles x 4 = 512 programs of 64 x 2048 B; 20 KiB x 4 = 80 KiB: 2 per SM -> ~2 waves.
    _dcfg(16, 64, 256, 4, True, 4, 4),
    # 2 splits, 4 stages (H200, session 7, tests/bench/explore_gemm_small_m.py --dtype float8_e4m3fn: the best of
    # 60 candidates at M = 1 and 16, N = K = 8192: 28.3-28.7 us against 28.9-30.2 for the picks above).
    _dcfg(16, 64, 256, 2, True, 4, 4),
    _dcfg(16, 128, 256, 2, True, 4, 4),
    # 128 tiles x 8 = 1024 programs of 64 x 1024 B (4 K-steps each); 20 KiB x 3 = 60 KiB: 3 per SM.
    _dcfg(16, 64, 256, 8, True, 4, 3),
    # 64 tiles x 8 = 512 programs of 128 x 1024 B; 18 KiB x 4 = 72 KiB: 3 per SM.
    _dcfg(16, 128, 128, 8, True, 4, 4),
    # 16 < M <= 32 and 32 < M <= 64: the same streaming shape with 32/64 token columns.
    _dcfg(32, 64, 256, 4, True, 4, 3),
    # M <= 32, 2 splits, 4 / 6 stages (H200, session 18, explore_gemm_small_m.py --dtype float8_e4m3fn --m 32
    # --cands ...: 29.7 / 30.0 us at 32x8192x8192 against 31.3-67 for 10 others; fp8_gemm was 31.0, _scaled_mm 27.9;
    # tests/bench/runs/s18_fp8_dec.json). At M = 64 none of 12 beat the Gluon tiles' 29.5.
    _dcfg(32, 64, 256, 2, True, 4, 4),
    _dcfg(32, 64, 128, 2, True, 4, 6),
    _dcfg(64, 64, 256, 4, True, 4, 3),
    # ---- CUDA-core GEMV path (M = 1 only): fp8 -> fp32, times a's row, fp32 sums over K -------------------
    # 256 tiles x 4 = 1024 programs of 32 x 2048 B; per step 32 x 256 B = 64 B (4 x 16 B) a thread, 2 steps
    # in flight (register double buffering), 64 fp32 partial sums a thread.
    _dcfg(1, 32, 256, 4, False, 4, 1),
    # 128 tiles x 8 = 1024 programs of 64 x 1024 B; per step 64 x 128 B, same per-thread figures.
    _dcfg(1, 64, 128, 8, False, 4, 1),
    # ---- narrow problems (N <= 2048: tests, small heads): the tiny cases pin these ----------------------
    _dcfg(16, 32, 64, 4, True, 4, 2),
    _dcfg(64, 32, 64, 4, True, 4, 2),
    _dcfg(1, 32, 64, 4, False, 4, 1),
]
# 16-bit operands (gemm's small-M path, kernels/gemm.py ``gemm_splitk``, M <= 128): steps of 64/128 elements
# (128/256 bytes) of 64/128 weight rows, 1..8 splits so that tiles x splits fill the GPU once or twice.
# Measured on the H200 (session 7, tests/bench/explore_gemm_small_m.py, bf16, b (K, N)): the best of these per
# shape was within 2% of the best of 80 candidates on every one of 15 LLM shapes at M = 17 / 48 / 127, e.g.
# M=17 N=K=4096 17.5 us with (64, 128, 2 splits) vs torch.matmul 19.2; M=127 N=5120 K=13824 54.5 us with
# (DEC_BLOCK_M 64, 128, 64, 3 splits) vs the tiled kernels' 79.4 and torch's 53.9.
WIDE_DECODE_CONFIGS = [
    _dcfg(bm, bn, bk, sk, True, 4, 4)
    for bm in (16, 32, 64)
    # every pick of the session-7 sweep (M = 1 / 17 / 127 on 7 LLM shapes) and the exploration's cover within 3%
    for bn, bk, sk in ((64, 128, 2), (64, 64, 2), (64, 64, 3), (64, 64, 4), (128, 128, 1), (128, 128, 2),
                       (128, 64, 1), (128, 64, 3))
] + [
    # 65 <= M <= 128 with one 128-token tile (b streamed once; 8 warps: 4 spill on sm_90) was tried in session 8
    # and lost on each of the 7 sweep shapes at M = 127 (H200, Triton 3.6, tests/bench/explore_gemm_small_m.py
    # --m 127: best 128-token pick 24.8 / 48.5 / 41.8 / 62.2 / 54.7 / 54.4 / 30.5 us against the 64-token
    # tiles' 22.6 / 42.9 / 40.3 / 52.7 / 54.2 / 46.2 / 28.8 us): not listed. The kernel still takes it pinned.
]
_WIDE = {id(c) for c in WIDE_DECODE_CONFIGS}
DECODE_CONFIGS = DECODE_CONFIGS + WIDE_DECODE_CONFIGS


def _prune_decode_configs(configs, named_args, **kwargs):
    """Keep the configs suited to (M, N, K); always returns at least one.

    - mma path: DEC_BLOCK_M = the smallest of 16/32/64 that holds M (one M tile: b is streamed exactly once);
    - GEMV path only for M = 1 (it would re-read b once per row);
    - steps of < 8 KiB of b (the narrow test configs) only for N <= 2048;
    - no split whose K slice would be empty (SPLIT_K * DEC_BLOCK_K > K).
    """
    args = {**named_args, **kwargs}
    M, N, K = int(args["M"]), int(args["N"]), int(args["K"])
    a = args.get("a_ptr")
    if getattr(a, "element_size", lambda: 1)() > 1:
        return _prune_wide(configs, M, K)
    configs = [c for c in configs if id(c) not in _WIDE]
    bm_dot = max(16, triton.next_power_of_2(M))
    kept = []
    for c in configs:
        bm, bn, bk, sk, dot = (c.kwargs[k] for k in ("DEC_BLOCK_M", "DEC_BLOCK_N", "DEC_BLOCK_K", "SPLIT_K",
                                                     "USE_DOT"))
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
        fit = [c for c in dots if c.kwargs["DEC_BLOCK_M"] >= M] or dots
        kept = [min(fit, key=lambda c: (c.kwargs["DEC_BLOCK_M"],
                                        c.kwargs["DEC_BLOCK_N"] * c.kwargs["DEC_BLOCK_K"]))]
    return kept


def _prune_wide(configs, M: int, K: int):
    """16-bit operands: the wide configs whose token tile suits M (16 / 32 / 64 tokens for M up to 16 / 32 / 64;
    65..128 tokens: the 64-token ones (two M tiles, the second reads each weight tile back from L2) and any
    listed 128-token tile (none today: they lost on the H200)), no split whose K slice would be empty. (At M = 1 the fp8 list's configs never won on bf16 in the session-7 sweep.)"""
    bm = max(16, triton.next_power_of_2(M))
    bms = (64, 128) if bm == 128 else (min(64, bm),)
    return [c for c in configs if id(c) in _WIDE and c.kwargs["DEC_BLOCK_M"] in bms
            and (c.kwargs["SPLIT_K"] == 1 or c.kwargs["SPLIT_K"] * c.kwargs["DEC_BLOCK_K"] <= K)]


@triton.autotune(configs=DECODE_CONFIGS, key=["M", "N", "K"],
                 prune_configs_by={"early_config_prune": _prune_decode_configs}, do_bench=autotune_bench)
@triton.jit
def fp8_gemm_decode_kernel(
    a_ptr,        # (M, K) float8e4nv, strides (stride_am, stride_ak); K-contiguous is fastest
    b_ptr,        # (K, N) float8e4nv, strides (stride_bk, stride_bn); K-major (stride_bk == 1, b = w.t()) is fastest
    c_ptr,        # (M, N) out_dtype, strides (stride_cm, stride_cn); written by the last-arriving split of a tile
    scale_a_ptr,  # fp32: 1 value (per-tensor) or M values (SCALE_A_ROWS)
    scale_b_ptr,  # fp32: 1 value (per-tensor) or N values (SCALE_B_COLS)
    ws_ptr,       # fp32 workspace, flat, >= SPLIT_K*M*N: partial s of element (m, n) at s*M*N + m*N + n
    cnt_ptr,      # int32 arrival counters, one per output tile, 0 on entry and (reset by the kernel) on exit
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    SCALE_A_ROWS: tl.constexpr,  # scale_a has one value per row of a
    SCALE_B_COLS: tl.constexpr,  # scale_b has one value per column of b
    DEC_BLOCK_M: tl.constexpr,   # tokens per tile (mma path: 16/32/64/128; GEMV path: 1)
    DEC_BLOCK_N: tl.constexpr,   # output columns per tile = rows of w = b^T streamed per step
    DEC_BLOCK_K: tl.constexpr,   # K per step (bytes per row of w per step)
    SPLIT_K: tl.constexpr,       # programs along K per output tile (grid axis 1)
    USE_DOT: tl.constexpr,       # True: tensor cores (tl.dot); False: fp32 FMA GEMV (DEC_BLOCK_M == 1)
):
    # ---- which output tile, which K slice -------------------------------------------------------------
    tile = tl.program_id(0)   # output tile: pid_m fastest (one M tile for M <= DEC_BLOCK_M)
    pid_k = tl.program_id(1)  # K split
    num_pid_m = tl.cdiv(M, DEC_BLOCK_M)
    pid_m = tile % num_pid_m
    pid_n = tile // num_pid_m

    # Split s reduces K slice [s*k_per_split, min((s+1)*k_per_split, K)); k_per_split is a whole number of
    # DEC_BLOCK_K steps, so the slice is n_full unmasked steps plus, at K's end only, one masked k_tail step.
    # A split whose slice starts past K (small K) has k_len = 0: it contributes a zero partial.
    k_per_split = tl.cdiv(K, DEC_BLOCK_K * SPLIT_K) * DEC_BLOCK_K
    k_start = pid_k * k_per_split
    k_len = tl.maximum(tl.minimum(K - k_start, k_per_split), 0)
    n_full = k_len // DEC_BLOCK_K
    k_tail = k_len - n_full * DEC_BLOCK_K

    offs_m = pid_m * DEC_BLOCK_M + tl.arange(0, DEC_BLOCK_M)
    offs_n = pid_n * DEC_BLOCK_N + tl.arange(0, DEC_BLOCK_N)
    offs_k = tl.arange(0, DEC_BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    # w = b^T tile (DEC_BLOCK_N, DEC_BLOCK_K): K is the contiguous axis for a K-major b, so each thread loads
    # 16 consecutive bytes of a row (LDG/LDGSTS .128). The main loop masks only on N (constant along K), which
    # keeps the 16-byte vectors; the K mask exists only in the tail step.
    w_ptrs = b_ptr + offs_n[:, None] * stride_bn + (k_start + offs_k)[None, :] * stride_bk
    acc = tl.zeros((DEC_BLOCK_N, DEC_BLOCK_M), dtype=tl.float32)  # c^T tile: acc[n, m] = sum_k b[k,n] a[m,k]
    if USE_DOT:
        # ---- tensor cores: acc += w (DEC_BLOCK_N, DEC_BLOCK_K) @ a^T (DEC_BLOCK_K, DEC_BLOCK_M), K-major ---
        # max_num_imprecise_acc=DEC_BLOCK_K: Hopper's fp8 wgmma keeps a reduced-precision running sum; each
        # step's product goes to a fresh accumulator and is added to acc in full fp32 (as fp8_gemm_kernel's
        # precise mode). No effect on mma.sync or other GPUs.
        x_ptrs = a_ptr + (k_start + offs_k)[:, None] * stride_ak + offs_m[None, :] * stride_am
        for _ in range(0, n_full):
            w = tl.load(w_ptrs, mask=mask_n[:, None], other=0.0)
            x = tl.load(x_ptrs, mask=mask_m[None, :], other=0.0)
            acc = tl.dot(w, x, acc, max_num_imprecise_acc=DEC_BLOCK_K)
            w_ptrs += DEC_BLOCK_K * stride_bk
            x_ptrs += DEC_BLOCK_K * stride_ak
        if k_tail > 0:
            k_ok = offs_k < k_tail  # other=0.0 lanes add exact zeros to the dot
            w = tl.load(w_ptrs, mask=mask_n[:, None] & k_ok[None, :], other=0.0)
            x = tl.load(x_ptrs, mask=k_ok[:, None] & mask_m[None, :], other=0.0)
            acc = tl.dot(w, x, acc, max_num_imprecise_acc=DEC_BLOCK_K)
    else:
        # ---- CUDA cores, M = 1 per program: fp8 -> fp32 (exact), products exact in fp32, fp32 sums ---------
        # The products accumulate elementwise in a (DEC_BLOCK_N, DEC_BLOCK_K) fp32 block (no cross-lane traffic
        # in the loop); one tl.sum over K at the end. Its summation order differs from the mma path's but is
        # fixed: deterministic. Triton's pipeliner only pipelines loads that feed tl.dot, so this loop double-
        # buffers in registers by hand: step i+1's loads are issued before step i's math.
        tl.static_assert(DEC_BLOCK_M == 1, "the GEMV path computes one row of a per program (DEC_BLOCK_M = 1)")
        x_ptrs = a_ptr + offs_m[:, None] * stride_am + (k_start + offs_k)[None, :] * stride_ak  # (1, BLOCK_K)
        acc2 = tl.zeros((DEC_BLOCK_N, DEC_BLOCK_K), dtype=tl.float32)
        if n_full > 0:
            w = tl.load(w_ptrs, mask=mask_n[:, None], other=0.0)
            x = tl.load(x_ptrs, mask=mask_m[:, None], other=0.0)
            for _ in range(1, n_full):
                w_ptrs += DEC_BLOCK_K * stride_bk
                x_ptrs += DEC_BLOCK_K * stride_ak
                w_next = tl.load(w_ptrs, mask=mask_n[:, None], other=0.0)
                x_next = tl.load(x_ptrs, mask=mask_m[:, None], other=0.0)
                acc2 += w.to(tl.float32) * x.to(tl.float32)
                w = w_next
                x = x_next
            acc2 += w.to(tl.float32) * x.to(tl.float32)
        if k_tail > 0:
            offs_kt = k_start + n_full * DEC_BLOCK_K + offs_k
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
        total = tl.zeros((DEC_BLOCK_N, DEC_BLOCK_M), dtype=tl.float32)
        # pid_k as a block: Triton 3.9's interpreter rejects `mask & scalar_bool` ("mask has unsupported dtype")
        own = tl.zeros((DEC_BLOCK_N, DEC_BLOCK_M), dtype=tl.int32) + pid_k
        for s in range(SPLIT_K):  # a loop, not unrolled: one partial in registers at a time (static_range
            # issued all SPLIT_K loads at once: 128x128 tiles with 3-4 splits spilled 176-520 bytes on sm_90)
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
_PLANS: dict[tuple, "_Plan"] = {}          # call signature (see fp8_gemm) -> cached launcher (CUDA)
_CHECKED: set[tuple] = set()               # (signature, config) whose launcher ran once into a NaN-filled c
# the per-call tensors, then the scratch (the launching stream's workspace and counters: kernels/_scratch.py)
_TENSOR_ARGS = ("a_ptr", "b_ptr", "c_ptr", "scale_a_ptr", "scale_b_ptr", "ws_ptr", "cnt_ptr")
# The pristine launch entry points: when a tool has patched either (tritondbg's config pinning, the ir
# capture, an autotune watcher), every call goes through them, never through the cached launcher. Captured
# at import; should this module be imported while a tool's patch is in place (tritondbg imports kernels
# before it patches), the captured functions are not Triton's and the cached launcher stays off.
_TUNER_RUN = Autotuner.run
_JIT_RUN = JITFunction.run
_GENUINE = all((getattr(f, "__module__", None) or "").startswith("triton.") and not hasattr(f, "__wrapped__")
               for f in (_TUNER_RUN, _JIT_RUN))


def _scratch_for(M: int, N: int, device: torch.device) -> _scratch.Scratch:
    """Workspace and counters big enough for every listed config at this (M, N) (so any config the autotuner
    benchmarks, or a tool pins, fits), one set per stream (kernels/_scratch.py)."""
    configs = fp8_gemm_decode_kernel.configs
    n_ws = max(c.kwargs["SPLIT_K"] for c in configs) * M * N
    n_cnt = max(triton.cdiv(M, c.kwargs["DEC_BLOCK_M"]) * triton.cdiv(N, c.kwargs["DEC_BLOCK_N"])
                for c in configs)
    return _scratch.Scratch(device, ("ws", n_ws, torch.float32), ("cnt", n_cnt, torch.int32))


def _buffers_for(M: int, N: int, device: torch.device, scratch: _scratch.Scratch | None = None):
    """(workspace, counters) of the current stream (``scratch``, else ``_scratch_for``)."""
    ws, cnt = (scratch if scratch is not None else _scratch_for(M, N, device))()
    if cnt.device.type != "cuda" and bool(cnt.any()):
        # Only an interrupted launch leaves a counter non-zero (e.g. an exception or a debugger quit inside
        # the interpreter); on the CPU, repair it rather than compute garbage on every later call.
        warnings.warn("fp8_gemm: arrival counters were left non-zero by an interrupted launch; "
                      "zeroing them", RuntimeWarning, stacklevel=3)
        cnt.zero_()
    return ws, cnt


class _Plan:
    """A compiled kernel bound to one call signature: launches with no binding, specialisation or autotuning.

    ``tail`` holds every argument after the tensors, in the kernel's parameter order (sizes, strides and the
    constexprs, as ``JITFunction.run`` passes them to the launcher)."""

    __slots__ = ("runner", "tail", "out_shape", "device")

    def __init__(self, compiled, config, scalars: dict, device, scratch: _scratch.Scratch):
        names = list(fp8_gemm_decode_kernel.fn.arg_names)
        if tuple(names[:len(_TENSOR_ARGS)]) != _TENSOR_ARGS:
            raise RuntimeError(f"fp8_gemm: unexpected kernel signature {names}")
        values = {**scalars, **config.kwargs}
        self.tail = tuple(values[n] for n in names[len(_TENSOR_ARGS):])
        M, N = scalars["M"], scalars["N"]
        k = config.kwargs
        grid = (triton.cdiv(M, k["DEC_BLOCK_M"]) * triton.cdiv(N, k["DEC_BLOCK_N"]), k["SPLIT_K"], 1)
        # the C launch entry directly while no launch hook is installed, else CompiledKernel[grid] (current
        # device/stream, launch hooks): kernels/_launch.py (H200: ~5 us a call less than CompiledKernel[grid]);
        # the launching stream's workspace and counters follow the call's tensors (kernels/_scratch.py)
        self.runner = _launch.Launcher(compiled, grid, self.tail, scratch=scratch)
        self.out_shape, self.device = (M, N), device

    def launch(self, a, b, c, sa, sb) -> None:
        self.runner(a, b, c, sa, sb)

    @staticmethod
    def usable() -> bool:
        """Whether the steady state may launch this plan now: only while nothing patches the decode kernel."""
        return _pristine()


def _pristine() -> bool:
    """No tool has patched the launch path (tritondbg's config pinning in run/check, the ir capture, an
    autotune watcher): only then may a call skip the autotuner and JITFunction.run."""
    return (_GENUINE and type(fp8_gemm_decode_kernel).run is _TUNER_RUN
            and "run" not in vars(fp8_gemm_decode_kernel) and JITFunction.run is _JIT_RUN)



def _decode(a, b, c, sa, sa_rows, sb, sb_cols, sig, scale_a, scale_b):
    """Checked arguments, 1 <= M <= 64, K >= 1: one launch of fp8_gemm_decode_kernel through the autotuner;
    on CUDA, also build (and on a signature's first call with a config, run once) the cached launcher."""
    M, K = a.shape
    N = b.shape[1]
    device = a.device
    scratch = _scratch_for(M, N, device)  # this launch's buffers, and the plan's
    ws, cnt = _buffers_for(M, N, device, scratch)
    scalars = dict(M=M, N=N, K=K, stride_am=a.stride(0), stride_ak=a.stride(1), stride_bk=b.stride(0),
                   stride_bn=b.stride(1), stride_cm=c.stride(0), stride_cn=c.stride(1),
                   SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols)

    def grid(meta):
        return (triton.cdiv(M, meta["DEC_BLOCK_M"]) * triton.cdiv(N, meta["DEC_BLOCK_N"]), meta["SPLIT_K"])

    compiled = fp8_gemm_decode_kernel[grid](a, b, c, sa, sb, ws, cnt, M, N, K,
                                            a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                            c.stride(0), c.stride(1),
                                            SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols)
    if not a.is_cuda:
        # The CPU (interpreter) runs the launch synchronously: check the protocol's invariant right here.
        if bool(cnt.any()):
            cnt.zero_()
            raise RuntimeError("fp8_gemm: the decode launch left arrival counters non-zero (a tile's last "
                               "split did not reset its counter)")
        return c
    aligned = not ((a.data_ptr() | b.data_ptr() | sa.data_ptr() | sb.data_ptr()) & 15)
    if not aligned or compiled is None or sig is None:
        return c
    config = fp8_gemm_decode_kernel.best_config  # the config that just ran (autotuned or pinned by a tool)
    checked = (sig, tuple(sorted(config.kwargs.items())), config.num_warps, config.num_stages)
    # The launcher is kept for the steady state only when nothing is patched and the scales went in as is.
    # A signature first checked under a tool (``checked`` already in _CHECKED, no plan) gets its plan here,
    # on its first unpatched call with that config.
    keep = _pristine() and sa is scale_a and sb is scale_b
    if checked in _CHECKED or not _launch.verifying():  # already checked, or not under tritondbg run/check
        if keep:
            _PLANS[sig] = _Plan(compiled, config, scalars, device, scratch)
        return c
    # First call of this signature and config: launch it once more, through the launcher the steady state
    # uses, into a NaN-filled c, and return that. So a correctness check of a single call (tritondbg run and
    # check pin configs: they never reach the steady state) covers the cached launcher, and it also checks
    # that the first launch left every counter at zero.
    plan = _Plan(compiled, config, scalars, device, scratch)
    if keep:
        _PLANS[sig] = plan
    _CHECKED.add(checked)
    c.fill_(float("nan"))
    plan.launch(a, b, c, sa, sb)
    return c
