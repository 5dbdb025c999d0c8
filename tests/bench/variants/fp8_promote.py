"""fp8_promote: the bundled large-M fp8 GEMM with its fp32 promotion written by hand (trial, 2026-11-30).

Same function, arguments, numerics and fallbacks as ``fp8_gemm`` (``kernels/fp8_gemm.py``). One change in
the large-M kernel (M > 64, precise accumulation): ``acc += tl.dot(a, b)`` instead of
``acc = tl.dot(a, b, acc, max_num_imprecise_acc=BLOCK_K)``. Both accumulate each BLOCK_K-deep step in a fresh
partial and add it to the fp32 accumulator, so the bits should match; the bundled form makes ptxas serialise
every wgmma of a step ("C7514 ... non wgmma instructions reading accumulator registers": a
``WARPGROUP.DEPBAR`` after every ``QGMMA.64xNx32``), the hand-written one gives 4 back-to-back QGMMA per
128 of K and one wait (compile-only finding of session 3, ``git show 7f88c00:tests/bench/variants/fp8_ws.md``).
Decode (M <= 64) and fast_accum=True go to the bundled function unchanged.

PREDICTION (H200, 8192^3, b K-major, bf16 out; same-run bundled 0.72x torch._scaled_mm, ~912-935 TFLOP/s):
without warp specialisation the add still sits between two steps' wgmma chains (the next chain reuses the
partial's registers), but the 4 waits per step become 1: 1000-1100 TFLOP/s, 0.78-0.86x. Winner: 256x128x128
w8 s3 as in the bundled list; 128x256x128 spills (10-16 words, fp8_ws.md) and should lose. Bits equal to
the bundled kernel's (same partial per step, same fp32 add order).
"""
from __future__ import annotations

import dataclasses

import torch
import triton
import triton.language as tl

from tritondbg.kernels import fp8_gemm as _bundled
from tritondbg.scenarios.fp8_gemm import SCENARIO as _BASE


def _cfg(bm, bn, bk, gm, warps, stages):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm), num_warps=warps,
                         num_stages=stages)


CONFIGS = [
    _cfg(256, 128, 128, 8, 8, 3),
    _cfg(128, 128, 256, 8, 8, 3),
    _cfg(128, 128, 128, 8, 8, 4),
    _cfg(128, 256, 128, 8, 8, 3),
    _cfg(128, 128, 128, 8, 4, 4),
    _cfg(64, 128, 128, 8, 4, 4),
    _cfg(16, 32, 64, 4, 4, 3),  # the tiny cases' (interpreter) config
]


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"],
                 prune_configs_by={"early_config_prune": _bundled._prune_configs})
@triton.jit
def fp8_promote_kernel(a_ptr, b_ptr, c_ptr, scale_a_ptr, scale_b_ptr, M, N, K,
                       stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                       SCALE_A_ROWS: tl.constexpr, SCALE_B_COLS: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr):
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
        k_ok = offs_k < K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        acc += tl.dot(a, b)  # THE change: fresh partial per step, promoted by this fp32 add
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
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


def fp8_promote(a, b, scale_a, scale_b, out_dtype=torch.bfloat16, fast_accum=False):
    ok = (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.ndim == 2 and b.ndim == 2
          and a.shape[1] == b.shape[0] and a.dtype == b.dtype == _bundled.FP8_DTYPE and a.device == b.device
          and out_dtype in _bundled.OUT_DTYPES and min(a.stride() + b.stride()) >= 0)
    if not ok or fast_accum or a.shape[0] <= _bundled.DECODE_MAX_M or a.shape[1] == 0 or b.shape[1] == 0:
        return _bundled.fp8_gemm(a, b, scale_a, scale_b, out_dtype, fast_accum)  # its checks, its paths
    M, K = a.shape
    N = b.shape[1]
    sa, sa_rows = _bundled._scale(scale_a, M, "scale_a", "row of a", a.device)
    sb, sb_cols = _bundled._scale(scale_b, N, "scale_b", "column of b", a.device)
    c = torch.empty((M, N), device=a.device, dtype=out_dtype)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    fp8_promote_kernel[grid](a, b, c, sa, sb, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                             c.stride(0), c.stride(1), SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols)
    return c


SCENARIO = dataclasses.replace(
    _BASE,
    name="fp8_promote",
    description="fp8 e4m3 scaled GEMM, large-M kernel with hand-written per-step fp32 promotion (trial)",
    launch=fp8_promote,
    kernels=[fp8_promote_kernel],
    cases=[c for c in _BASE.cases if c.name in ("tiny", "tiny_rowcol", "square_8192")],
    source="",
)
