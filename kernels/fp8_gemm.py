"""FP8 (e4m3) scaled matrix multiply: ``c = (a @ b) * scale_a * scale_b``.

Computes ``c[m, n] = scale_a[m] * scale_b[n] * sum_k a[m, k] * b[k, n]`` for ``a`` (M, K) and ``b`` (K, N) in
``torch.float8_e4m3fn`` (Triton's ``float8e4nv``), with fp32 scales that are either per-tensor (shape () or
(1,)) or per-row of ``a`` (shape (M,) or (M, 1)) / per-column of ``b`` (shape (N,) or (1, N)). ``c`` is
written in ``out_dtype`` (bfloat16 by default; float16 and float32 also accepted). Bitwise deterministic.

Four kernels behind one wrapper (``fp8_gemm``: one argument check, then a choice by M and layout):

- M > 64 (prefill / training), ``fp8_gemm_kernel``: one program per (BLOCK_M, BLOCK_N) tile of c in grouped
  (GROUP_M) order, ``tl.dot`` on fp8 with an fp32 accumulator over all of K (Hopper: wgmma e4m3), scales in
  fp32 in the epilogue. Autotuned over (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages), keyed on
  (M, N, K, FAST_ACCUM); ``_prune_configs`` keeps the tiles that suit M and N.
- M > 64 on Hopper (sm_90+, or the interpreter) with TMA-describable operands (``a`` row-major, ``b`` K-major,
  16-byte aligned bases and rows; ``_fp8_tma.tma_plan``): ``fp8_gemm_tma_kernel`` (kernels/_fp8_tma.py), a
  persistent tensor-descriptor twin of the kernel above (same scales, same promotion), modelled on gemm.py's
  ``gemm_tma_kernel``; a row-major b stays on the pointer kernel until measured (``_fp8_tma.ROW_MAJOR_B``).
- M > 64 on an sm_90 GPU, row-major a, K-major b, per-tensor scales, a 16-bit output: after the tl kernel has
  computed a call signature's first call, the warp-specialised Gluon kernel (kernels/_gemm_gluon.py; its precise
  accumulation adds each BLOCK_K-deep partial while the next stage's wgmma runs) races it (kernels/_gemm_ws.py,
  as ``gemm`` does); at least 1.5% faster, it serves the signature's later calls (``ws_decision`` shows the race).
  H200, session 12: 8192^3 770 us against the tl kernel's 997 and torch._scaled_mm's 746.
- M <= 64 (decode), ``fp8_gemm_decode_kernel`` (kernels/_splitk.py, shared with gemm's small-M path): split-K
  in ONE launch, the last-arriving split sums the fp32 partials in a fixed order (deterministic). The decode
  parameters have names of their own (DEC_BLOCK_M, ...) so that a ``--config`` names one kernel only.
  A call signature seen before (shapes, strides, dtypes, devices, out_dtype, fp32 contiguous scales) with
  16-byte aligned pointers skips the checks, the autotuner and the binder (``_PLANS``: a dict lookup,
  ``torch.empty`` and one launch); whenever a tool has patched the launch path (tritondbg's config pinning in
  run/check, ``ir``'s capture, an autotune watcher) every call goes through the autotuner instead.
  On an sm_90 GPU with the Gluon kernel's layout (as above), the decode kernel's first call of a signature is
  raced (``_race_decode``) by the Gluon decode kernel (kernels/_gluon_decode.py: the swapped product, a TMA
  producer warp and a 4-8 stage ring; session 19, N = K = 8192: 27.5-27.7 us at M = 1 / 16 / 32 against the
  decode kernel's 28.5-29.3 and _scaled_mm's 27.6) and, for 16 < M, by the Gluon gemm's small-M tiles (session
  16: M = 64, 36.0 us for the decode kernel against 29.4 for the 64x64 tiles).

Measured on an H200 (2026-11-29, Triton 3.6, torch 2.11, b K-major; times with do_bench, "graph" = CUDA-graph
timing, ratio = torch._scaled_mm's do_bench time / ours): decode N = K = 8192, M = 1: 28.9 us (graph 20.1) =
0.96x, M = 16: 29.9 us (graph 21.9) = 0.93x with this one-launch path; the split-K design it replaced
(partials, then a second reduction kernel, no cached launcher) took 83.4 us (graph 21.9) = 0.33x and 55.5 us
(graph 22.8) = 0.50x. 8192^3: 1240 us = 0.74x (measured before the large-M kernel lost its unused split-K
branch; same loop, the sm_90 SASS differs a little in register allocation). A warp-specialised TMA kernel for
large M was tried the same day (same H200, Triton 3.6): 1035.5 us = 0.89x, but wrong on the GPU (38282720 of
67108864 outputs outside 3e-2; the interpreter ignores warp_specialize, so the CPU checks could not see it),
so it is not used.
After the merge, the perf gate of ``tritondbg check fp8_gemm --device cuda`` (same GPU, same day): 8192^3
1177.5 us = 0.72x, decode M = 1 / 16: 28.5 / 31.0 us = 0.96x / 0.87x.

Layout: strides are explicit, so ``b`` may be a transposed view. Hopper's fp8 wgmma wants both operands
K-major: pass ``b`` as ``w.t()`` for a row-major (N, K) weight ``w`` (strides (1, K)). A row-major (K, N)
``b`` is correct but measured 5x slower on an H200 at 8192^3 (6.7 ms vs 1.3 ms); ``square_8192_kn`` shows it.
Loads are masked on M, N and K's tail (``other=0.0``: exact zeros in the dot), stores on M and N.

Numerics: products of e4m3 values are exact in fp32 and accumulate in fp32. Hopper's fp8 wgmma accumulates
in reduced precision (~14 mantissa bits), so by default each BLOCK_K-deep step is promoted to the fp32
accumulator (``max_num_imprecise_acc=BLOCK_K``); ``fast_accum=True`` lets the large-M kernel skip that
(measured on an H200 at 8192^3, unit-variance inputs, scale 1/8: max error 0.564 with fast accumulation,
0.228 precise, the same two numbers as torch._scaled_mm with use_fast_accum True / False; precise costs
~25% there). The decode path always promotes (it is bound by reading b; the figures above are with
promotion); its GEMV variant sums in fp32 on the CUDA cores. The scales multiply the fp32 sum; one rounding
to ``out_dtype``. Reference: ``(a.float() @ b.float()) * scale_a * scale_b`` in fp32.

Limits: int32 element offsets, so M*K, K*N and SPLIT_K*M*N must stay below 2^31. The decode workspace adds
up to 2*SPLIT_K*M*N*4 bytes of DRAM traffic (M=16, N=8192, SPLIT_K=8: 4 MiB written, ~3.5 MiB read back,
on top of the 64 MiB of ``b``); ``bytes_moved`` counts the minimal traffic (inputs + output) only. A decode
launch killed midway leaves counters non-zero (on the CPU the next call repairs them with a warning).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import _fp8_tma, _gemm_ws as _WS, _launch, _race
from ._autotune import autotune_bench

from ._fp8_tma import fp8_gemm_tma_kernel  # noqa: F401 (the scenario lists it)
# the decode kernel and its host side (re-exported: gemm, the tests, the benchmarks use these names here)
from ._splitk import (DECODE_CONFIGS, _PLANS, _buffers_for, _decode, _pristine,  # noqa: F401
                     fp8_gemm_decode_kernel)

FP8_DTYPE = torch.float8_e4m3fn
OUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
DECODE_MAX_M = 64  # M <= this: the one-launch split-K decode kernel; above: fp8_gemm_kernel, no split


# ---------------------------------------------------------------------------------------------------------
# Large M (> 64): autotune configs. fp8 is 1 byte, so BLOCK_K=128 is a 128-byte row per operand tile.
# Shared memory per stage = (BLOCK_M + BLOCK_N) * BLOCK_K bytes: 256x128x128: 48 KiB x 3 stages = 144 KiB;
# 128x128x256: 64 KiB x 3 = 192 KiB; 128x128x128: 32 KiB x 4 = 128 KiB.
# Measured on an H200 (Triton 3.6, CUDA-graph timing, default precise accumulation, b K-major):
#   8192^3: 256x128x128 w8 s3 912 TF/s, 128x128x256 w8 s3 899, 128x128x128 w8 s4 837 (torch._scaled_mm:
#   ~1280); 128x256x128 only 425-446 (probably register spills: its accumulator plus the promotion
#   partial are 256 fp32 registers a thread): not listed.
# ---------------------------------------------------------------------------------------------------------
def _cfg(bm, bn, bk, gm, warps, stages):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm), num_warps=warps,
                         num_stages=stages)


CONFIGS = [
    # compute-bound, big tiles (the prune admits 128-row tiles from M = 65, 256-row from M = 129)
    _cfg(256, 128, 128, 8, 8, 3),
    _cfg(128, 128, 256, 8, 8, 3),
    _cfg(128, 128, 128, 8, 8, 4),
    # mid M (65..255), or when N alone gives enough tiles: 64-row tiles
    _cfg(64, 128, 128, 8, 4, 4),
    # narrow problems (N <= 2048, e.g. small heads or tests); GROUP_M=4 so the 97-row tiny case (7 tile-rows)
    # has a full and a partial group. The tiny cases pin this one.
    _cfg(16, 32, 64, 4, 4, 3),
]


def _prune_configs(configs, named_args, **kwargs):
    """Keep the configs suited to (M, N, K); always returns at least one.

    - BLOCK_M <= max(64, next_pow2(M)): no 256-row tiles for M <= 128 (mostly masked rows);
    - BLOCK_M >= 64 for M >= 256: small row tiles re-read b M/BLOCK_M times;
    - BLOCK_N < 64 only for N <= 2048 (narrow tiles: short rows of b per load).
    """
    args = {**named_args, **kwargs}
    M, N = int(args["M"]), int(args["N"])
    max_bm = max(64, triton.next_power_of_2(M))
    kept = []
    for c in configs:
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        if bm > max_bm or (bm < 64 and M >= 256) or (bn < 64 and N > 2048):
            continue
        kept.append(c)
    if not kept:  # a user-edited list: fall back to the smallest tile
        kept = [min(configs, key=lambda c: c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"])]
    return kept


# FAST_ACCUM is in the key so that precise and fast calls on one shape keep separate tuned configs.
@triton.autotune(configs=CONFIGS, key=["M", "N", "K", "FAST_ACCUM"],
                 prune_configs_by={"early_config_prune": _prune_configs}, do_bench=autotune_bench)
@triton.jit
def fp8_gemm_kernel(
    a_ptr,        # (M, K) float8e4nv, strides (stride_am, stride_ak)
    b_ptr,        # (K, N) float8e4nv, strides (stride_bk, stride_bn); K-major (stride_bk == 1) is fastest
    c_ptr,        # (M, N) out_dtype, strides (stride_cm, stride_cn)
    scale_a_ptr,  # fp32: 1 value (per-tensor) or M values (SCALE_A_ROWS)
    scale_b_ptr,  # fp32: 1 value (per-tensor) or N values (SCALE_B_COLS)
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    SCALE_A_ROWS: tl.constexpr,  # scale_a has one value per row of a
    SCALE_B_COLS: tl.constexpr,  # scale_b has one value per column of b
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,  # tile-rows per super-group (L2 reuse of b's column panel)
    FAST_ACCUM: tl.constexpr,  # True: let Hopper's fp8 wgmma accumulate the whole K imprecisely (see below)
):
    # ---- grouped ordering over output tiles ----------------------------------------------------------------
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = offs_k < K - k * BLOCK_K  # K tail; other=0.0 adds nothing to the dot
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        if FAST_ACCUM:
            acc = tl.dot(a, b, acc)
        else:
            # Hopper's fp8 wgmma keeps only ~14 mantissa bits in its running accumulator; chained over
            # K = 8192 that gave a max error of 0.56 in the 8192^3 case (0.23 with promotion, which is the
            # bf16 output rounding of values up to ~90) and failed the 3e-2 tolerance.
            # max_num_imprecise_acc=BLOCK_K makes each tile's dot accumulate into a fresh partial that is
            # then added to acc in full fp32 (promotion every BLOCK_K = 64..256 products, as DeepSeek-V3
            # does every 128). No effect on mma.sync or other GPUs.
            acc = tl.dot(a, b, acc, max_num_imprecise_acc=BLOCK_K)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # ---- epilogue: scales in fp32, one rounding to out_dtype ---------------------------------------------
    if SCALE_A_ROWS:
        sa = tl.load(scale_a_ptr + offs_m, mask=mask_m, other=0.0)[:, None]
    else:
        sa = tl.load(scale_a_ptr)
    if SCALE_B_COLS:
        sb = tl.load(scale_b_ptr + offs_n, mask=mask_n, other=0.0)[None, :]
    else:
        sb = tl.load(scale_b_ptr)
    acc = acc * sa * sb
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


# M > 64: cached launchers of the large-M kernels (kernels/_launch.py), one signature dict for both
_LARGE = _launch.Launches(fp8_gemm_kernel)
_LARGE_TMA = _launch.Launches(fp8_gemm_tma_kernel, _LARGE.plans)


# ---------------------------------------------------------------------------------------------------------
# The wrapper: one argument check, then the decode kernel (M <= 64) or the large-M kernel.
# ---------------------------------------------------------------------------------------------------------
def _scale(scale, length: int, name: str, axis_name: str, device) -> tuple[torch.Tensor, bool]:
    """Validate a scale; return (fp32 tensor whose flat memory holds the values, per_axis). An fp32
    contiguous scale is returned as is (no copy, no view): the kernels only need its pointer."""
    if not isinstance(scale, torch.Tensor):
        raise ValueError(f"fp8_gemm: {name} must be a torch tensor (fp32), got {type(scale).__name__}")
    if not scale.dtype.is_floating_point:
        raise ValueError(f"fp8_gemm: {name} must be a floating-point tensor, got {scale.dtype}")
    if scale.device != device:
        raise ValueError(f"fp8_gemm: {name} is on {scale.device}, a is on {device}")
    n = scale.numel()
    if n == 1 and scale.ndim <= 2:
        per_axis = False
    elif n == length and scale.ndim <= 2 and sum(d != 1 for d in scale.shape) == 1:
        per_axis = True
    else:
        raise ValueError(f"fp8_gemm: {name} must have shape () or (1,) (per-tensor) or {length} values "
                         f"(per-{axis_name}), got {tuple(scale.shape)}")
    if scale.dtype != torch.float32 or not scale.is_contiguous():
        scale = scale.reshape(-1).to(torch.float32).contiguous()
    return scale, per_axis


def fp8_gemm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
             out_dtype: torch.dtype = torch.bfloat16, fast_accum: bool = False) -> torch.Tensor:
    """``(a @ b) * scale_a * scale_b`` for fp8 e4m3 a (M, K), b (K, N); returns a new (M, N) ``out_dtype``.

    ``fast_accum=True`` (like ``torch._scaled_mm(use_fast_accum=True)``) lets Hopper's fp8 tensor cores
    accumulate all of K in their reduced-precision accumulator for M > 64: faster, but not within fp32
    accuracy (decode shapes, M <= 64, always accumulate precisely). Deterministic. Decode launches on two
    streams at once each use their stream's workspace and counters (kernels/_scratch.py)."""
    # ---- steady state (decode, CUDA): a signature seen and fully checked before. The signature holds every
    # property the checks and Triton's specialisation depend on except the pointers' 16-byte alignment,
    # checked here; the scales were fp32 and contiguous (passed as they are). Cost: ~17 attribute reads,
    # one dict lookup, torch.empty and the launch of the already-compiled kernel. ---------------------------
    try:
        sig = _signature(a, b, scale_a, scale_b, out_dtype)
        plan = _PLANS.get(sig)
    except (AttributeError, TypeError):  # not tensors, unhashable out_dtype: the checks below say what
        sig = plan = None
    if (plan is not None and not ((a.data_ptr() | b.data_ptr() | scale_a.data_ptr() | scale_b.data_ptr()) & 15)
            and plan.usable()):
        c = torch.empty(plan.out_shape, device=plan.device, dtype=out_dtype)
        plan.launch(a, b, c, scale_a, scale_b)
        return c
    large_sig = None if sig is None else (sig, bool(fast_accum))
    if large_sig is not None and large_sig in _LARGE.plans:  # M > 64: the shared cached launcher
        launcher = _LARGE.plan(large_sig, a, b, scale_a, scale_b)
        if launcher is not None and _launch.PINNED:  # a tool pinned a tl config: not a raced Gluon plan either
            launcher = None
        if launcher is not None:
            if launcher.kernel is fp8_gemm_tma_kernel:
                _fp8_tma._ensure_allocator()  # a ContextVar: another thread may not have it yet
            c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=out_dtype)
            launcher(a, b, c, scale_a, scale_b)
            return c
    guard = _launch.device_guard(a)
    if guard is not None:  # a on another GPU than the current one: launch there, as torch ops do
        with guard:
            return fp8_gemm(a, b, scale_a, scale_b, out_dtype, fast_accum)

    # ---- every check, then one of the two kernels --------------------------------------------------------
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise ValueError("fp8_gemm: a and b must be torch tensors")
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"fp8_gemm: a and b must be 2-D, got a{tuple(a.shape)} and b{tuple(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"fp8_gemm: inner dimensions differ: a{tuple(a.shape)} @ b{tuple(b.shape)}")
    if a.dtype != FP8_DTYPE or b.dtype != FP8_DTYPE:
        raise ValueError(f"fp8_gemm: a and b must be torch.float8_e4m3fn, got {a.dtype} and {b.dtype}")
    if a.device != b.device:
        raise ValueError(f"fp8_gemm: a and b are on different devices ({a.device}, {b.device})")
    if out_dtype not in OUT_DTYPES:
        raise ValueError(f"fp8_gemm: out_dtype must be one of {OUT_DTYPES}, got {out_dtype}")
    if min(a.stride()) < 0 or min(b.stride()) < 0:
        raise ValueError("fp8_gemm: negative strides are not supported")
    M, K = a.shape
    N = b.shape[1]
    sa, sa_rows = _scale(scale_a, M, "scale_a", "row of a", a.device)
    sb, sb_cols = _scale(scale_b, N, "scale_b", "column of b", a.device)
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    if M == 0 or N == 0:
        return c
    if K == 0:
        return c.zero_()
    if M <= DECODE_MAX_M:
        c = _decode(a, b, c, sa, sa_rows, sb, sb_cols, sig, scale_a, scale_b)
        return _race_decode(a, b, c, scale_a, scale_b, out_dtype, sig)

    b_trans = _fp8_tma.tma_plan(a, b, c)
    if b_trans is not None:  # Hopper (or the interpreter), TMA-describable operands: the persistent TMA kernel
        grid, values = _fp8_tma.launch_args(a, b, c, sa, sb, sa_rows, sb_cols, b_trans, fast_accum)
        compiled = fp8_gemm_tma_kernel[grid](a, b, c, sa, sb, *values.values())
        if sa is scale_a and sb is scale_b:
            _LARGE_TMA.record(large_sig, compiled, grid, (a, b, c, sa, sb), values, out=c)
        return _race_gluon(a, b, c, scale_a, scale_b, out_dtype, fast_accum, large_sig)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    values = dict(M=M, N=N, K=K, stride_am=a.stride(0), stride_ak=a.stride(1), stride_bk=b.stride(0),
                  stride_bn=b.stride(1), stride_cm=c.stride(0), stride_cn=c.stride(1))
    consts = dict(SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols, FAST_ACCUM=bool(fast_accum))
    compiled = fp8_gemm_kernel[grid](a, b, c, sa, sb, *values.values(), **consts)
    if sa is scale_a and sb is scale_b:  # the scales went in as they are: a later call may pass them directly
        _LARGE.record(large_sig, compiled, grid, (a, b, c, sa, sb), {**values, **consts}, out=c)
    return _race_gluon(a, b, c, scale_a, scale_b, out_dtype, fast_accum, large_sig)


def _race_gluon(a, b, c, scale_a, scale_b, out_dtype, fast_accum, large_sig):
    """Hopper: the warp-specialised Gluon kernel against the tl path that just computed ``c``, once per call
    signature (kernels/_gemm_ws.py); a winner serves the signature's later calls. Returns ``c``."""
    if large_sig is None or not _WS.eligible_fp8(a, b, scale_a, scale_b, out_dtype):
        return c
    steady = lambda: fp8_gemm(a, b, scale_a, scale_b, out_dtype, fast_accum)  # noqa: E731 - the cached path
    return _WS.race(large_sig, a, b, c, True, _LARGE.plans, steady, _fp8_tma._num_sms(a.device),
                    scales=(scale_a, scale_b), precise=0 if fast_accum else 2)


class _GluonDecodePlan:
    """A Gluon plan that won a decode signature's race, in the decode steady state's shape (``_PLANS``)."""

    __slots__ = ("plan", "out_shape", "device")

    def __init__(self, plan, out_shape, device):
        self.plan, self.out_shape, self.device = plan, tuple(out_shape), device

    def launch(self, a, b, c, sa, sb) -> None:
        self.plan(a, b, c, sa, sb)

    def usable(self) -> bool:
        """Whether the steady state may launch this plan now: its Gluon kernel unpatched (``tritondbg ir``'s
        capture patches JITFunction.run) and no decode config pinned by a tool (that config runs instead). A tool
        that only watches the tl autotuners (tritondbg run / check without a pin) gets the kernel users get."""
        return _launch.pristine(self.plan.kernel) and _DECODE_KERNEL not in _launch.PINNED


_DECODE_KERNEL = "fp8_gemm_decode_kernel"  # its name in ``_launch.PINNED`` (tritondbg's config pinning)
RACE_DECODE_MIN_M = 16  # M at or below: no Gluon gemm tile in the race (its 64-token tiles lost there)
# The lead a candidate needs in the decode race (gemm's GEMM_MARGIN too, from session 22). The races' first 3% kept
# near-ties on the tl kernel (the one the interpreter checks); the Gluon decode kernel computes the same precise product and was 2.1-2.5% faster at M = 1 /
# 16, N = K = 8192 in the race's own rounds on the H200 (session 19: 27.4 / 27.6 us against 28.0 / 28.3), where
# the rounds' medians moved by under 1%: its lead is not noise, and 3% would leave it unused.
DECODE_MARGIN = 0.015


def _race_decode(a, b, c, scale_a, scale_b, out_dtype, sig):
    """Hopper, M <= 64: the Gluon decode kernel's candidates (kernels/_gluon_decode.py) and, for 16 < M, the Gluon
    gemm's small-M tiles against the decode kernel's steady call, once per signature (the decode path always
    accumulates precisely: the race's key is (sig, False), as a large-M call's without fast accumulation). On the
    H200 (session 16, GPU time, N = K = 8192) the gemm tiles won at M = 64 (29.4 us against the decode kernel's
    36.0; _scaled_mm 28.7) and M = 32 (30.1 / 33.1), and lost at M = 1 and 16 (31.4 / 31.3 against 27.9 / 28.3);
    the Gluon decode kernel (session 19) 27.5-27.7 us at M = 1 / 16 / 32 / 64. Returns ``c``."""
    if _DECODE_KERNEL in _launch.PINNED:  # a tool pinned a decode config (tritondbg run --config): it runs
        return c
    if sig is None or not _launch.aligned(a, b, scale_a, scale_b) or not _WS.eligible_fp8(a, b, scale_a, scale_b,
                                                                                           out_dtype):
        return c
    M = a.shape[0]
    num_sms = _fp8_tma._num_sms(a.device)
    extra = _WS.decode_candidates(a, b, True, num_sms, (scale_a, scale_b))
    gemm_tiles = M > RACE_DECODE_MIN_M
    if not extra and not gemm_tiles:
        return c
    key, won = (sig, False), {}
    steady = lambda: fp8_gemm(a, b, scale_a, scale_b, out_dtype)  # noqa: E731 - the decode kernel's cached path
    c = _WS.race(key, a, b, c, True, won, steady, num_sms, scales=(scale_a, scale_b), precise=2,
                 gemm_tiles=gemm_tiles, extra=extra, margin=DECODE_MARGIN)
    if key in won:
        _PLANS[sig] = _GluonDecodePlan(won[key], c.shape, c.device)
    return c


def ws_decision(a, b, scale_a, scale_b, out_dtype=torch.bfloat16, fast_accum=False) -> dict | None:
    """The Gluon race's record for this call's signature (``gemm.ws_decision``'s twin), or None where none ran."""
    return _race.DECISIONS.get((_signature(a, b, scale_a, scale_b, out_dtype), bool(fast_accum)))


def _signature(a, b, scale_a, scale_b, out_dtype) -> tuple:
    """Everything the checks and Triton's specialisation depend on but the pointers' 16-byte alignment."""
    return (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device, out_dtype,
            scale_a.shape, scale_a.dtype, scale_a.device, scale_a.is_contiguous(),
            scale_b.shape, scale_b.dtype, scale_b.device, scale_b.is_contiguous())


def reference(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
              out_dtype: torch.dtype = torch.bfloat16, fast_accum: bool = False) -> torch.Tensor:
    """fp32 reference: ``(a.float() @ b.float()) * scale_a * scale_b`` (out_dtype ignored: fp32 result)."""
    M, N = a.shape[0], b.shape[1]
    sa = scale_a.float().reshape(-1)
    sb = scale_b.float().reshape(-1)
    sa = sa.reshape(M, 1) if sa.numel() == M and sa.numel() != 1 else sa.reshape(())
    sb = sb.reshape(1, N) if sb.numel() == N and sb.numel() != 1 else sb.reshape(())
    return (a.float() @ b.float()) * sa * sb


def flops(M: int, N: int, K: int, **_) -> float:
    """2*M*N*K (the scaling's 2 flops per output are not counted)."""
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, dtype=FP8_DTYPE, out_dtype=torch.bfloat16, **_) -> float:
    """Minimal DRAM traffic: fp8 a and b read once (1 byte each), c written once in out_dtype. The decode
    path's workspace round trip (up to 2*SPLIT_K*M*N*4 bytes) is not counted; see the module docstring."""
    in_size = torch.empty((), dtype=dtype).element_size()
    out_size = torch.empty((), dtype=out_dtype).element_size()
    return float((M * K + K * N) * in_size + M * N * out_size)
