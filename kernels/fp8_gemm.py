"""FP8 (e4m3) matrix multiply with scales and split-K: ``c = (a @ b) * scale_a * scale_b``.

Computes ``c[m, n] = scale_a[m] * scale_b[n] * sum_k a[m, k] * b[k, n]`` for ``a`` (M, K) and ``b`` (K, N) in
``torch.float8_e4m3fn`` (Triton's ``float8e4nv``), with fp32 scales that are either per-tensor (shape () or
(1,)) or per-row of ``a`` (shape (M,) or (M, 1)) / per-column of ``b`` (shape (N,) or (1, N)). ``c`` is
written in ``out_dtype`` (bfloat16 by default; float16 and float32 also accepted).

Design:
- ``tl.dot`` on fp8 operands with an fp32 accumulator (Hopper: wgmma e4m3 for 64+-row tiles, mma.sync
  m16n8k32 for the 16/32-row decode tiles). The scales are applied once, in fp32, in the epilogue.
- Split-K for small M (decode: M in 1..64 with N = K = 8192 has only N/BLOCK_N = 64-128 output tiles for
  132 SMs, and each tile is a long, latency-bound walk over K). Grid = (output tiles, SPLIT_K); split ``s``
  reduces the contiguous K slice [s*K_SPLIT, (s+1)*K_SPLIT), K_SPLIT = cdiv(K, BLOCK_K*SPLIT_K)*BLOCK_K, and
  writes its fp32 partial tile to a workspace of shape (SPLIT_K, M, N). A second small kernel sums the
  SPLIT_K partials in a fixed order (deterministic: same bits on every run, unlike atomics), applies the
  scales and casts to ``out_dtype``. Splits whose slice starts past K (possible when K is small) write zeros.
- SPLIT_K = 1 (large M): the main kernel applies the scales and writes ``c`` directly; no workspace.
- Any M, N, K: loads are masked on M, N and on the end of each split's K slice (``other=0.0``), stores on
  M and N. Strides are explicit, so ``b`` may be a transposed view. On Hopper, fp8 wgmma wants both operands
  K-major: pass ``b`` as ``w.t()`` for a row-major (N, K) weight ``w`` (strides (1, K)) for the fast path. A
  row-major (K, N) ``b`` is correct but measured 5x slower on an H200 at 8192^3 (6.7 ms vs 1.3 ms; the
  compiler has to bring the tiles to K-major order itself); the ``square_8192_kn`` case shows it.
- Autotuned over (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT_K, num_warps, num_stages), keyed on (M, N, K);
  ``early_config_prune`` keeps the configs that suit M (no 128-row tiles for M=1, no split-K for M > 64).
  ``FAST_ACCUM`` is part of the key.
  The wrapper sizes the workspace for the splits the autotuner may run (each config's ``pre_hook`` grows it
  if a config pinned from outside needs more) and reads ``best_config`` to launch the reduction.

Numerics: products of e4m3 values are exact in fp32 and accumulate in fp32. Hopper's fp8 wgmma accumulates
in reduced precision (~14 mantissa bits), so by default each BLOCK_K-deep tile product is promoted to the
fp32 accumulator (``max_num_imprecise_acc=BLOCK_K``); ``fast_accum=True`` skips that (measured on an H200
at 8192^3, unit-variance inputs, scale 1/8: max error 0.564 with fast accumulation, 0.228 precise, the same
two numbers as torch._scaled_mm with use_fast_accum True / False; precise costs ~25% at 8192^3 and nothing
measurable for decode, where 16/32-row tiles use mma.sync). The scales multiply the fp32 sum; one
rounding to ``out_dtype``. The split-K sum adds SPLIT_K fp32 partials in order 0..SPLIT_K-1.
Reference: ``(a.float() @ b.float()) * scale_a * scale_b`` in fp32.

Limits: int32 element offsets, so M*K, K*N and SPLIT_K*M*N must stay below 2^31. The workspace takes
SPLIT_K*M*N*4 bytes and adds 2*SPLIT_K*M*N*4 bytes of DRAM traffic (M=16, N=8192, SPLIT_K=8: a 4 MiB
workspace, 8 MiB written and read back, 12.5% on top of the 64 MiB of ``b``); ``bytes_moved`` counts the
minimal traffic (inputs + output) only.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

FP8_DTYPE = torch.float8_e4m3fn
OUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)


# ---------------------------------------------------------------------------------------------------------
# Autotune configs. fp8 is 1 byte, so BLOCK_K=128 is a 128-byte row per operand tile (full cp.async lines).
# Shared memory per stage = (BLOCK_M + BLOCK_N) * BLOCK_K bytes: 256x128x128: 48 KiB x 3 stages = 144 KiB;
# 128x128x256: 64 KiB x 3 = 192 KiB; 128x128x128: 32 KiB x 4 = 128 KiB.
# Measured on an H200 (Triton 3.6, CUDA-graph timing, default precise accumulation, b K-major):
#   8192^3: 256x128x128 w8 s3 912 TF/s, 128x128x256 w8 s3 899, 128x128x128 w8 s4 837 (torch._scaled_mm:
#   ~1280); 128x256x128 only 425-446 (probably register spills: its accumulator plus the promotion
#   partial are 256 fp32 registers a thread): not listed.
#   Decode N = K = 8192 (b = 64 MiB, memory-bound): 22-24 us (2.8-3.0 TB/s) for each decode config below
#   (torch._scaled_mm: 19 us); split-K with 256-512 programs (2-4 per SM).
# ---------------------------------------------------------------------------------------------------------
def _grow_workspace(nargs):
    """Config pre_hook, run right before every launch of a config (benchmark runs included): make the fp32
    workspace hold this config's SPLIT_K partial tiles. The wrapper sizes it for the configs it expects;
    this covers a config pinned from outside (e.g. a split config forced on a large M). ``resize_`` keeps
    the tensor object that is already bound as the ``ws_ptr`` argument, so the launch sees the new memory."""
    split = nargs["SPLIT_K"]
    if split > 1:
        ws = nargs["ws_ptr"]
        need = split * nargs["M"] * nargs["N"]
        if ws.numel() < need:
            ws.resize_(need)


def _cfg(bm, bn, bk, gm, sk, warps, stages):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, SPLIT_K=sk), num_warps=warps,
                         num_stages=stages, pre_hook=_grow_workspace)


CONFIGS = [
    # Large M (prefill / training; the prune admits 128-row tiles from M = 65, 256-row from M = 129):
    # compute-bound, big tiles, no split.
    _cfg(256, 128, 128, 8, 1, 8, 3),
    _cfg(128, 128, 256, 8, 1, 8, 3),
    _cfg(128, 128, 128, 8, 1, 8, 4),
    # Mid M (65..256), or small M when N alone gives enough tiles: 64-row tiles, no split.
    _cfg(64, 128, 128, 8, 1, 4, 4),
    # Decode / small M (<= 64): N/64 = 128 tiles x 2 splits = 256 programs at N = 8192 (21.9 us at M=1).
    _cfg(64, 64, 128, 8, 2, 4, 4),
    # 128 tiles x 4 splits = 512 programs (22.9 us at M=1).
    _cfg(32, 64, 128, 8, 4, 4, 4),
    # 16-row tiles (the smallest mma M): 64 tiles x 4 / x 8 splits (22.3 / 23.1 us at M=1).
    _cfg(16, 128, 256, 8, 4, 4, 4),
    _cfg(16, 128, 128, 8, 8, 4, 4),
    # Narrow problems (N <= 2048, e.g. small heads or tests): small tiles, with and without split-K. GROUP_M=4
    # so a 37-row test (3 tile-rows) sits in one partial group. The tiny test cases pin these two.
    _cfg(16, 32, 64, 4, 1, 4, 3),
    _cfg(16, 32, 64, 4, 4, 4, 3),
]


def _prune_configs(configs, named_args, **kwargs):
    """Keep the configs suited to (M, N, K); always returns at least one.

    - BLOCK_M <= max(64, next_pow2(M)): no 128/256-row tiles for small M (M = 1 would mask 255 of 256
      rows; up to 64 rows cost nothing measurable when b's bandwidth is the limit: 21.9 us with 64 rows vs
      23.1 us with 16 at M = 1);
    - SPLIT_K > 1 only for M <= 64: for larger M there are enough output tiles to fill the SMs, and the
      workspace round trip (2 * SPLIT_K * M * N * 4 bytes) would cost more than it hides;
    - BLOCK_M >= 64 for M >= 256: small row tiles re-read b M/BLOCK_M times;
    - BLOCK_N < 64 only for N <= 2048 (narrow tiles: short rows of b per load);
    - no split whose K slice would be empty (SPLIT_K * BLOCK_K > K rounds up to idle programs).
    """
    args = {**named_args, **kwargs}
    M, N, K = int(args["M"]), int(args["N"]), int(args["K"])
    max_bm = max(64, triton.next_power_of_2(M))
    kept = []
    for c in configs:
        bm, bn, bk, sk = (c.kwargs[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K"))
        if bm > max_bm:
            continue
        if sk > 1 and (M > 64 or sk * bk > K):
            continue
        if bm < 64 and M >= 256:
            continue
        if bn < 64 and N > 2048:
            continue
        kept.append(c)
    if not kept:  # a user-edited list: fall back to the smallest no-split tile
        kept = [min(configs, key=lambda c: (c.kwargs["SPLIT_K"], c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"]))]
    return kept


# FAST_ACCUM is in the key so that precise and fast calls on one shape keep separate tuned configs.
@triton.autotune(configs=CONFIGS, key=["M", "N", "K", "FAST_ACCUM"],
                 prune_configs_by={"early_config_prune": _prune_configs})
@triton.jit
def fp8_gemm_kernel(
    a_ptr,        # (M, K) float8e4nv, strides (stride_am, stride_ak)
    b_ptr,        # (K, N) float8e4nv, strides (stride_bk, stride_bn); K-major (stride_bk == 1) is fastest
    c_ptr,        # (M, N) out_dtype, strides (stride_cm, stride_cn); written only when SPLIT_K == 1
    ws_ptr,       # (SPLIT_K, M, N) fp32 contiguous partials (flat, >= SPLIT_K*M*N); written if SPLIT_K > 1
    scale_a_ptr,  # fp32: 1 value (per-tensor) or M values (SCALE_A_ROWS); read only when SPLIT_K == 1
    scale_b_ptr,  # fp32: 1 value (per-tensor) or N values (SCALE_B_COLS); read only when SPLIT_K == 1
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    SCALE_A_ROWS: tl.constexpr,  # scale_a has one value per row of a
    SCALE_B_COLS: tl.constexpr,  # scale_b has one value per column of b
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,  # tile-rows per super-group (L2 reuse of b's column panel)
    SPLIT_K: tl.constexpr,  # programs along K per output tile (grid axis 1)
    FAST_ACCUM: tl.constexpr,  # True: let Hopper's fp8 wgmma accumulate the whole K imprecisely (see below)
):
    # ---- grouped ordering over output tiles; axis 1 is the K split ------------------------------------
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # ---- this split's K slice: [k_start, k_end), a whole number of BLOCK_K steps except at K's end -----
    k_per_split = tl.cdiv(K, BLOCK_K * SPLIT_K) * BLOCK_K
    k_start = pid_k * k_per_split
    k_end = min(k_start + k_per_split, K)  # may be <= k_start: an empty slice, all loads masked off

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = k_start + tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, k_per_split // BLOCK_K):
        k_ok = offs_k < k_end - k * BLOCK_K  # slice end and K tail; other=0.0 adds nothing to the dot
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
            # does every 128). No effect on mma.sync (16/32-row tiles) or other GPUs.
            acc = tl.dot(a, b, acc, max_num_imprecise_acc=BLOCK_K)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    mask_c = mask_m[:, None] & mask_n[None, :]
    if SPLIT_K == 1:
        # ---- direct epilogue: scales in fp32, one rounding to out_dtype ---------------------------------
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
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask_c)
    else:
        # ---- split-K: unscaled fp32 partial to workspace[pid_k], reduced by splitk_reduce_kernel --------
        ws_ptrs = ws_ptr + pid_k * M * N + offs_m[:, None] * N + offs_n[None, :]
        tl.store(ws_ptrs, acc, mask=mask_c)


@triton.jit
def splitk_reduce_kernel(
    ws_ptr,       # (split_k, M, N) fp32 contiguous partials from fp8_gemm_kernel
    c_ptr,        # (M, N) out_dtype, strides (stride_cm, stride_cn)
    scale_a_ptr,  # fp32: 1 value or M values (SCALE_A_ROWS)
    scale_b_ptr,  # fp32: 1 value or N values (SCALE_B_COLS)
    M, N, split_k,
    stride_cm, stride_cn,
    SCALE_A_ROWS: tl.constexpr,
    SCALE_B_COLS: tl.constexpr,
    BLOCK: tl.constexpr,  # flat elements of c per program; 1024 with 4 warps = 8 fp32 per thread (2x16 B)
):
    # Flat over the M*N outputs, so M = 1 still uses full, coalesced vectors (a 2-D tile would mask 15/16).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < M * N
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, split_k):  # fixed order 0..split_k-1: deterministic
        acc += tl.load(ws_ptr + s * M * N + offs, mask=mask, other=0.0)
    row = offs // N
    col = offs % N
    if SCALE_A_ROWS:
        sa = tl.load(scale_a_ptr + row, mask=mask, other=0.0)
    else:
        sa = tl.load(scale_a_ptr)
    if SCALE_B_COLS:
        sb = tl.load(scale_b_ptr + col, mask=mask, other=0.0)
    else:
        sb = tl.load(scale_b_ptr)
    acc = acc * sa * sb
    tl.store(c_ptr + row * stride_cm + col * stride_cn, acc.to(c_ptr.dtype.element_ty), mask=mask)


_REDUCE_BLOCK = 1024


def _scale_vector(scale, length, name, axis_name, device):
    """Validate a scale; return (fp32 contiguous 1-D tensor, per_axis: bool)."""
    if not isinstance(scale, torch.Tensor):
        raise ValueError(f"fp8_gemm: {name} must be a torch tensor (fp32), got {type(scale).__name__}")
    if not scale.dtype.is_floating_point:
        raise ValueError(f"fp8_gemm: {name} must be a floating-point tensor, got {scale.dtype}")
    if scale.device != device:
        raise ValueError(f"fp8_gemm: {name} is on {scale.device}, a is on {device}")
    n = scale.numel()
    squeezed = [d for d in scale.shape if d != 1]
    if n == 1 and scale.ndim <= 2:
        per_axis = False
    elif n == length and len(squeezed) == 1 and scale.ndim <= 2:
        per_axis = True
    else:
        raise ValueError(f"fp8_gemm: {name} must have shape () or (1,) (per-tensor) or {length} values "
                         f"(per-{axis_name}), got {tuple(scale.shape)}")
    return scale.reshape(-1).to(torch.float32).contiguous(), per_axis


def _max_split(M, N, K):
    """Largest SPLIT_K the autotuner may run for this shape (it benchmarks every candidate into the
    workspace): all listed configs for M <= 64 (at most 8 * 64 * N * 4 bytes), the pruned ones (no split)
    above. A config pinned from outside with a larger split is handled by ``_grow_workspace``."""
    configs = fp8_gemm_kernel.configs
    if len(configs) > 1 and M > 64:
        configs = _prune_configs(configs, dict(M=M, N=N, K=K))
    return max(c.kwargs["SPLIT_K"] for c in configs)


def fp8_gemm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
             out_dtype: torch.dtype = torch.bfloat16, fast_accum: bool = False) -> torch.Tensor:
    """``(a @ b) * scale_a * scale_b`` for fp8 e4m3 a (M, K), b (K, N); returns a new (M, N) ``out_dtype``.

    ``fast_accum=True`` (like ``torch._scaled_mm(use_fast_accum=True)``) lets Hopper's fp8 tensor cores
    accumulate all of K in their reduced-precision accumulator: faster, but not within fp32 accuracy."""
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
    sa, sa_rows = _scale_vector(scale_a, M, "scale_a", "row of a", a.device)
    sb, sb_cols = _scale_vector(scale_b, N, "scale_b", "column of b", a.device)
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)
    if M == 0 or N == 0:
        return c
    if K == 0:
        return c.zero_()

    # fp32 workspace, flat: (split, M, N) partials. Sized here for the splits the autotuner may try; the
    # configs' pre_hook grows it if a larger split is run. Never aliased with c (the hook may resize it).
    max_split = _max_split(M, N, K)
    ws = torch.empty(max_split * M * N if max_split > 1 else 1, device=a.device, dtype=torch.float32)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), meta["SPLIT_K"])

    fp8_gemm_kernel[grid](
        a, b, c, ws, sa, sb, M, N, K,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols, FAST_ACCUM=bool(fast_accum),
    )
    split_k = fp8_gemm_kernel.best_config.kwargs["SPLIT_K"]  # the config that just ran
    if split_k > 1:
        if ws.numel() < split_k * M * N:  # a split config without the pre_hook wrote past ws: fail loudly
            raise RuntimeError(f"fp8_gemm: SPLIT_K={split_k} ran with a workspace of {ws.numel()} floats "
                               f"< {split_k}*{M}*{N}; split-K configs need pre_hook=_grow_workspace")
        splitk_reduce_kernel[(triton.cdiv(M * N, _REDUCE_BLOCK),)](
            ws, c, sa, sb, M, N, split_k,
            c.stride(0), c.stride(1),
            SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols, BLOCK=_REDUCE_BLOCK, num_warps=4,
        )
    return c


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
    """Minimal DRAM traffic: fp8 a and b read once (1 byte each), c written once in out_dtype. Split-K's
    workspace round trip (2*SPLIT_K*M*N*4 bytes) is not counted; see the module docstring."""
    in_size = torch.empty((), dtype=dtype).element_size()
    out_size = torch.empty((), dtype=out_dtype).element_size()
    return float((M * K + K * N) * in_size + M * N * out_size)
