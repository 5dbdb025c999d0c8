"""fp8_ws: e4m3 scaled GEMM for large M on Hopper: TMA + warp specialisation, precise (promoted) accumulation.

Same function, arguments and precision as the bundled ``fp8_gemm`` (``kernels/fp8_gemm.py``):
``c = (a @ b) * scale_a * scale_b``, a (M, K) and b (K, N) ``torch.float8_e4m3fn``, fp32 scales per-tensor
or per-row of a / per-column of b, ``out_dtype`` bf16 (default) / fp16 / fp32, products accumulated in
fp32 with the wgmma partial promoted into the fp32 accumulator every BLOCK_K (=128) of K, or every 2 x 64
(never more than 128 products in Hopper's ~14-mantissa-bit wgmma accumulator). Scenario ``fp8_ws`` at the
end of the file. Nothing here has run on a GPU yet: compile-only results are in fp8_ws.md.

DESIGN
- Path taken: a row-major (K-major) and b K-major (``b = w.t()`` of a row-major (N, K) weight: the
  nn.Linear layout and the fast one for fp8 wgmma), 16-byte aligned bases and row strides (K % 16 == 0),
  M >= 128 (``MIN_M``), fast_accum=False, and a target with TMA (sm_90+) or the interpreter. Anything else
  (row-major (K, N) b, odd strides, decode-sized M, fast_accum=True, pre-Hopper) goes to the bundled
  ``fp8_gemm`` unchanged (its checks, its errors, its split-K).
- Loads: device-side TMA descriptors built in the kernel (``tl.make_tensor_descriptor``; the wrapper
  installs a torch scratch allocator with ``triton.set_allocator`` when none is set). a: [M, K] boxes
  [BLOCK_M, BLOCK_K]; b: its (N, K) storage, boxes [BLOCK_N (or BLOCK_N/2), BLOCK_K] used transposed
  (``.T``: wgmma reads them K-major). Out-of-range boxes are zero-filled, so the M/N/K tails need no masks
  in the main loop. Host descriptors are avoided: Triton 3.6 miscompiles warp specialisation with them
  (attention_prefill.md); with device descriptors the 3.6 TTGIR copies 64-row a boxes through 64-row
  descriptors, barrier byte counts match (checked).
- Warp specialisation (``WARP_SPEC``): ``tl.range(0, steps, warp_specialize=True)`` with num_warps=4 and one
  loop holding all the dots. Triton 3.6 and 3.9 both build ``ttg.warp_specialize``: a producer warpgroup
  (TMA only, gives registers back with setmaxnreg) and two consumer warpgroups (raised to 232) that split the
  tile along M, 12 warps launched. Each consumer waits on the stage's "full" barriers and releases it on
  its own, so the two consumers drift apart by up to num_stages - 1 steps: one's promotion FADDs run while
  the other's wgmma chain occupies the tensor cores (what cuBLAS' ping-pong gets by construction).
  Non-persistent grid (the persistent form's warp_specialize is ignored on sm_90: gemm_tma.md), grouped
  (GROUP_M) tile order for L2 reuse of b panels.
- Promotion written by hand: ``acc += tl.dot(a, b)`` (a fresh zero partial per step; Triton does not fold
  it into the dot because fp8 dots carry maxNumImpreciseAcc != 0). ``tl.dot(a, b, acc,
  max_num_imprecise_acc=BLOCK_K)``, the bundled kernel's form, has the same numerics but makes ptxas
  SERIALISE the step's wgmmas (``ptxas -v``: "C7514 Potential Performance Loss: wgmma.mma_async
  instructions are serialized due to non wgmma instructions reading accumulator registers"; SASS: a
  ``WARPGROUP.DEPBAR`` after every QGMMA.64xNx32). The bundled fp8_gemm has that warning too: probably a
  good part of its 25% loss. The hand-written form gives 4 back-to-back QGMMA per 128 of K, one wait.
- ``SPLIT_N``: two BLOCK_N/2 column halves with their own accumulators and partials, so a consumer holds
  64 x 256 fp32 of accumulator (128 registers) but only 64 x 128 of partial (64): 128x256 tiles fit the
  232-register consumers with no spill (one 64x256 partial: 36-38 spilled words).
  ``PROMOTE=2`` (BLOCK_K=64): two 64-deep steps chained in one partial, one add per 128 of K.
- Epilogue per consumer: the scales in fp32 (scalar or per-row/column vectors), one rounding to out_dtype,
  masked pointer store (any c layout), after a layout change through shared memory.

PREDICTIONS, H200, 8192^3, b K-major, bf16 out (torch._scaled_mm 1272 TFLOP/s; bundled fp8_gemm 935-983)
  Reasoning. Tensor-core work per SM at _scaled_mm's rate: a 64x128x128 chain (4 QGMMA) of one consumer is
  ~250 cycles; its promotion is 64 FADD per thread (~70-100 cycles with latency), run while the other
  consumer's chain issues, so the adds should mostly leave the critical path. What remains: the
  non-persistent epilogue does not overlap the next tile (1 CTA per SM at 148-214 KB of smem: ~3-5% at
  8192^3), wave tails (2048 tiles / 132 SMs = 15.5 waves -> 97%; 4096 / 132 = 31.03 -> 97%), and
  L2->SM traffic: 128x128 tiles move 256 B per 2*128*128 flops per K, 9.9 TB/s at 1272 TFLOP/s, near the
  L2's limit; 128x256 / 256x128 tiles need 7.4 TB/s.
  C1 WS 128x256x128 SPLIT_N w4 s3 (164 KB): ~1120 TFLOP/s (0.88x).
  C2 same, s4 (213 KB): ~1150 (0.90x); the extra stage gives the consumers more room to drift apart.
  C3 WS 256x128x128 SPLIT_N w4 s3 (consumers 128x128, 2 x m64 wgmma per half): ~1100 (0.86x).
  C4 WS 128x128x128 w4 s4: ~1020 (0.80x), L2 bandwidth-limited.
  C5 WS 128x128x64 PROMOTE=2 w4 s6: ~1000 (0.79x), same plus 64-deep TMA boxes (more barrier traffic).
  Best guess: C2 picked, 1100-1180 TFLOP/s = 0.86-0.93x of _scaled_mm; >= 0.90x is a coin flip. Risks: the
  warp-specialised schedule itself has not run (a hang or a mismatch would show in ``tritondbg run``),
  and the consumers may stay in lock step (then ~1000, like C4).
  Not listed (see fp8_ws.md): non-WS 128x256 / 256x128 tiles with the hand-written promotion spill 10-16
  words at 255 registers; a WS 128x256 without SPLIT_N spills 36-38 words.

Interpreter: runs the descriptor path (numpy gathers, zero fill) and ignores warp_specialize; three tiny
configs (16x32x64, mma.sync) cover PROMOTE=1, PROMOTE=2 and SPLIT_N; ``--all-configs`` runs all of them.
"""
from __future__ import annotations

import dataclasses

import torch
import triton
import triton.language as tl

from tritondbg import Case
from tritondbg.kernels import fp8_gemm as _bundled
from tritondbg.scenarios.fp8_gemm import SCENARIO as _BASE

FP8_DTYPE = torch.float8_e4m3fn


def _cfg(bm, bn, bk, gm, ws, promote, warps, stages, split_n=False):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, WARP_SPEC=ws, PROMOTE=promote,
                              SPLIT_N=split_n), num_warps=warps, num_stages=stages)


# Shared memory per stage: (BLOCK_M + BLOCK_N) * BLOCK_K bytes (+ barriers); limit 232,448 B on sm_90.
CONFIGS = [
    _cfg(128, 256, 128, 8, True, 1, 4, 3, True),   # C1 WS, consumers 64x256 in column halves, 48 KiB x 3
    _cfg(128, 256, 128, 8, True, 1, 4, 4, True),   # C2 same, 4 stages (213 KB)
    _cfg(256, 128, 128, 8, True, 1, 4, 3, True),   # C3 WS, consumers 128x128 in column halves
    _cfg(128, 128, 128, 8, True, 1, 4, 4),         # C4 WS, consumers 64x128, 32 KiB x 4
    _cfg(128, 128, 64, 8, True, 2, 4, 6),          # C5 WS, consumers 64x128, 16 KiB x 6, 2 steps per partial
    # Tiny problems and the interpreter (mma.sync, no WS); one per code path.
    _cfg(16, 32, 64, 4, False, 1, 4, 3),
    _cfg(16, 32, 64, 4, False, 2, 4, 3),
    _cfg(16, 32, 64, 4, False, 1, 4, 3, True),
]


def _prune(configs, named_args, **kwargs):
    """The 16x32 tiles only for small problems (M*N <= 256^2), the big ones only above; PROMOTE*BLOCK_K <= 128;
    SPLIT_N only with PROMOTE=1."""
    args = {**named_args, **kwargs}
    M, N = int(args["M"]), int(args["N"])
    kept = []
    for c in configs:
        bm, bn, bk, p = (c.kwargs[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "PROMOTE"))
        if p * bk > 128 or (c.kwargs.get("SPLIT_N", False) and p != 1):
            continue
        small = bm * bn <= 16 * 32
        if small != (M * N <= 256 * 256):
            continue
        kept.append(c)
    return kept or [configs[-1]]


@triton.jit
def _tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % size_m
    pid_n = (pid % in_group) // size_m
    return pid_m, pid_n


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"], prune_configs_by={"early_config_prune": _prune})
@triton.jit
def fp8_ws_kernel(
    a_ptr,        # (M, K) float8e4nv, row stride stride_am (K-major), 16-byte aligned
    w_ptr,        # b's storage: (N, K) float8e4nv row-major, row stride stride_wn (b = w.t())
    c_ptr,        # (M, N) out dtype, strides (stride_cm, stride_cn)
    scale_a_ptr,  # fp32: 1 value or M (SCALE_A_ROWS)
    scale_b_ptr,  # fp32: 1 value or N (SCALE_B_COLS)
    M, N, K,
    stride_am, stride_wn, stride_cm, stride_cn,
    SCALE_A_ROWS: tl.constexpr, SCALE_B_COLS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    WARP_SPEC: tl.constexpr,  # tl.range(..., warp_specialize=True): producer + 2 consumer warpgroups (w4)
    PROMOTE: tl.constexpr,    # BLOCK_K steps per fp32 promotion (hand-written partial): 1 or 2
    SPLIT_N: tl.constexpr,    # two BLOCK_N/2 column halves with their own accumulators (PROMOTE=1 only)
):
    pid_m, pid_n = _tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_am, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    HALF_N: tl.constexpr = BLOCK_N // 2
    if SPLIT_N:
        w_desc = tl.make_tensor_descriptor(w_ptr, shape=[N, K], strides=[stride_wn, 1],
                                           block_shape=[HALF_N, BLOCK_K])
    else:
        w_desc = tl.make_tensor_descriptor(w_ptr, shape=[N, K], strides=[stride_wn, 1],
                                           block_shape=[BLOCK_N, BLOCK_K])

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc0 = tl.zeros((BLOCK_M, HALF_N), dtype=tl.float32)
    acc1 = tl.zeros((BLOCK_M, HALF_N), dtype=tl.float32)
    STEP: tl.constexpr = BLOCK_K * PROMOTE
    n_steps = tl.cdiv(K, STEP)
    for i in tl.range(0, n_steps, warp_specialize=WARP_SPEC):
        k0 = i * STEP
        if SPLIT_N:
            # Two column halves, two accumulators: each dot's promotion partial is BLOCK_M x BLOCK_N/2, so
            # a consumer warpgroup holds 64 x BLOCK_N of acc but only 64 x BLOCK_N/2 of partial at a time.
            a = a_desc.load([off_m, k0])
            b0 = w_desc.load([off_n, k0]).T
            b1 = w_desc.load([off_n + HALF_N, k0]).T
            acc0 += tl.dot(a, b0)
            acc1 += tl.dot(a, b1)
        elif PROMOTE == 1:
            a = a_desc.load([off_m, k0])
            b = w_desc.load([off_n, k0]).T
            # Manual promotion: the wgmma chain of this step accumulates into a fresh zero partial that
            # is then added in fp32. Same numerics as max_num_imprecise_acc=BLOCK_K, but that form makes
            # ptxas serialise the step's wgmmas (C7514, see the docstring); this one does not.
            acc += tl.dot(a, b)
        else:
            # Two K steps chained in the wgmma accumulator (<= 128 products), then one fp32 add. A box
            # wholly past K (odd step count) is zero-filled by TMA and adds nothing.
            a0 = a_desc.load([off_m, k0])
            b0 = w_desc.load([off_n, k0]).T
            a1 = a_desc.load([off_m, k0 + BLOCK_K])
            b1 = w_desc.load([off_n, k0 + BLOCK_K]).T
            part = tl.dot(a0, b0)
            part = tl.dot(a1, b1, part)
            acc += part

    if SPLIT_N:
        _epilogue(acc0, c_ptr, scale_a_ptr, scale_b_ptr, M, N, off_m, off_n, stride_cm, stride_cn,
                  SCALE_A_ROWS, SCALE_B_COLS, BLOCK_M, HALF_N)
        _epilogue(acc1, c_ptr, scale_a_ptr, scale_b_ptr, M, N, off_m, off_n + HALF_N, stride_cm, stride_cn,
                  SCALE_A_ROWS, SCALE_B_COLS, BLOCK_M, HALF_N)
    else:
        _epilogue(acc, c_ptr, scale_a_ptr, scale_b_ptr, M, N, off_m, off_n, stride_cm, stride_cn,
                  SCALE_A_ROWS, SCALE_B_COLS, BLOCK_M, BLOCK_N)


@triton.jit
def _epilogue(acc, c_ptr, scale_a_ptr, scale_b_ptr, M, N, off_m, off_n, stride_cm, stride_cn,
              SCALE_A_ROWS: tl.constexpr, SCALE_B_COLS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """Scales in fp32 (scalar or per-row/column vectors), one rounding to c's dtype, masked store."""
    offs_m = off_m + tl.arange(0, BM)
    offs_n = off_n + tl.arange(0, BN)
    mask_m = offs_m < M
    mask_n = offs_n < N
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


# ---------------------------------------------------------------------------------------------------------
# Launch wrapper
# ---------------------------------------------------------------------------------------------------------
MIN_M = 128  # below this the bundled kernel's 64-row / split-K configs fit better (decode, small batches)


def _interpreted() -> bool:
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(fp8_ws_kernel.fn, InterpretedFunction)


def _has_tma() -> bool:
    """Triton's active target is NVIDIA sm_90+ (under `tritondbg ir` the stub driver reports --arch)."""
    try:
        target = triton.runtime.driver.active.get_current_target()
    except Exception:  # noqa: BLE001 - no driver at all: no TMA
        return False
    return target.backend == "cuda" and isinstance(target.arch, int) and target.arch >= 90


def _use_ws(a, b, fast_accum) -> bool:
    M, K = a.shape
    N = b.shape[1]
    if fast_accum or min(M, N, K) == 0:
        return False
    if M < MIN_M and not _interpreted():
        return False
    if a.stride(1) != 1 or b.stride(0) != 1:  # both operands K-major
        return False
    if a.data_ptr() % 16 or b.data_ptr() % 16 or a.stride(0) % 16 or b.stride(1) % 16:
        return False
    return _interpreted() or _has_tma()


def _scratch(size: int, alignment: int, stream):
    """Triton's allocator protocol: global scratch for the device-side descriptors (torch blocks are
    512-byte aligned, the descriptors need 128)."""
    return torch.empty(size, device="cuda", dtype=torch.int8)


def _ensure_allocator() -> None:
    try:
        from triton.runtime import _allocation

        if not isinstance(_allocation._allocator.get(), _allocation.NullAllocator):
            return
    except (ImportError, AttributeError):
        pass
    triton.set_allocator(_scratch)


def fp8_ws(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
           out_dtype: torch.dtype = torch.bfloat16, fast_accum: bool = False) -> torch.Tensor:
    """``(a @ b) * scale_a * scale_b`` like ``fp8_gemm``; TMA + warp-specialised kernel when it applies."""
    ok = (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.ndim == 2 and b.ndim == 2
          and a.shape[1] == b.shape[0] and a.dtype == FP8_DTYPE and b.dtype == FP8_DTYPE
          and a.device == b.device and out_dtype in _bundled.OUT_DTYPES)
    if not ok or not _use_ws(a, b, fast_accum):
        return _bundled.fp8_gemm(a, b, scale_a, scale_b, out_dtype, fast_accum)  # its checks, its errors
    M, K = a.shape
    N = b.shape[1]
    sa, sa_rows = _bundled._scale_vector(scale_a, M, "scale_a", "row of a", a.device)
    sb, sb_cols = _bundled._scale_vector(scale_b, N, "scale_b", "column of b", a.device)
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    if a.device.type == "cuda":
        _ensure_allocator()

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    fp8_ws_kernel[grid](
        a, b, c, sa, sb, M, N, K,
        a.stride(0), b.stride(1), c.stride(0), c.stride(1),
        SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols,
    )
    return c


# ---------------------------------------------------------------------------------------------------------
# Scenario: the bundled tiny non-split cases (their b is row-major (K, N) or K=200 is fine but b is not
# K-major: they run the fallback), tiny cases the TMA path takes (b K-major, K % 16 == 0), square_8192.
# ---------------------------------------------------------------------------------------------------------
_TINY_CONFIG = dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=64, SPLIT_K=1)  # both kernels' tiny config

_WS_CASES = [
    # M=37 -> 3 tile-rows (partial GROUP_M=4 group), N=53 -> 2 tile-cols (21-col tail), K=208 -> 4 steps of
    # 64 with a 16-deep tail zero-filled by the descriptor (PROMOTE=2: 2 pairs, the last box wholly past K).
    Case("tiny_tma", params=dict(M=37, N=53, K=208, b_layout="nk"), dtypes=("float8_e4m3fn",),
         config=_TINY_CONFIG, description="b K-major, 16-aligned K: the TMA kernel, per-tensor scales"),
    Case("tiny_tma_rowcol", params=dict(M=37, N=53, K=208, b_layout="nk", rowcol_scales=True),
         dtypes=("float8_e4m3fn",), config=_TINY_CONFIG,
         description="TMA kernel, per-row scale_a (M, 1) and per-column scale_b (N,)"),
    Case("tiny_tma_p2", params=dict(M=37, N=53, K=208, b_layout="nk", rowcol_scales=True),
         dtypes=("float8_e4m3fn",), config=dict(_TINY_CONFIG, PROMOTE=2),
         description="TMA kernel, PROMOTE=2: two 64-deep steps per partial, the last box wholly past K"),
    Case("tiny_tma_splitn", params=dict(M=37, N=53, K=208, b_layout="nk", rowcol_scales=True),
         dtypes=("float8_e4m3fn",), config=dict(_TINY_CONFIG, SPLIT_N=True),
         description="TMA kernel, SPLIT_N: two 16-column halves, two accumulators, two epilogue stores"),
]

SCENARIO = dataclasses.replace(
    _BASE,
    name="fp8_ws",
    description="fp8 e4m3 scaled GEMM for large M: device TMA descriptors, warp-specialised (producer + 2 "
                "consumer warpgroups), precise fp32 promotion; bundled fp8_gemm as fallback",
    launch=fp8_ws,
    # Only this kernel: listing the fallback's fp8_gemm_kernel would make a `--config BLOCK_M=...` meant for
    # fp8_ws_kernel a strict match against the bundled configs too (its keys overlap). The fallback still
    # runs (under the interpreter with its first config after pruning).
    kernels=[fp8_ws_kernel],
    cases=([c for c in _BASE.cases if c.interpret and (c.config or {}).get("SPLIT_K", 1) == 1] + _WS_CASES
           + [c for c in _BASE.cases if c.name == "square_8192"]),
    source="",
)
