"""Tiled matrix multiply with a fused activation epilogue: ``c = act(a @ b)``.

Computes ``c[m, n] = act(sum_k a[m, k] * b[k, n])`` for ``a`` of shape (M, K) and ``b`` of shape (K, N), both
float16 or both bfloat16; ``c`` has the inputs' dtype. ``act`` is one of

- ``None``:   identity,
- ``"gelu"``: the tanh approximation, ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, i.e.
  ``torch.nn.functional.gelu(x, approximate="tanh")`` (NOT the exact erf form),
- ``"silu"``: ``x * sigmoid(x)``.

Design (after the Triton matmul tutorial):
- One program computes one BLOCK_M x BLOCK_N tile of ``c``, walking K in BLOCK_K steps with ``tl.dot``
  (wgmma on Hopper for the 64+-row tiles, mma.sync otherwise).
- Grouped program ordering: consecutive program ids sweep GROUP_M tile-rows of ``c`` column by column, so
  the GROUP_M row-panels of ``a`` and the current column-panel of ``b`` stay hot in L2 (50 MB on H100,
  60 MB on H200) instead of re-reading all of ``b`` for every tile-row.
- Any M, N, K: loads are masked on M, N and the K tail (``other=0.0``, so padded lanes add 0 to the dot),
  stores are masked on M and N. Strides are passed explicitly, so transposed / non-contiguous views work
  (e.g. ``b = w.t()`` for an nn.Linear weight ``w`` of shape (N, K)); no copy is made.
- Autotuned over a handful of Hopper-style configs keyed on (M, N, K) (plus the dtypes, which the autotuner
  adds); ``early_config_prune`` drops tiles that do not suit the problem size.

Numerics: fp32 accumulation in ``tl.dot``; the activation is evaluated in fp32 on the accumulator and the
result is rounded once to the output dtype. The reference (``reference``) is ``a.float() @ b.float()``
followed by the same activation in fp32. Expected error: one rounding of the output dtype
(fp16: 2^-11 relative, bf16: 2^-8) plus fp32 reordering error (~K * 2^-24 relative to sum |a||b|).

Limits: element offsets are int32, so M*K, K*N and M*N (in elements, times the strides) must stay below
2^31 (8192 x 8192 is 2^26: fine; a 65536 x 65536 operand is not). M, N, K of 0 are handled in the wrapper.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

ACTIVATIONS = (None, "gelu", "silu")


# ---------------------------------------------------------------------------------------------------------
# Autotune configs. Shared memory per stage is (BLOCK_M + BLOCK_N) * BLOCK_K * 2 bytes (fp16/bf16):
#   128x256x64: 48 KiB/stage x 4 stages = 192 KiB   (Hopper has up to 227 KiB per SM)
#   128x128x64: 32 KiB/stage x 4 stages = 128 KiB
#    64x128x64: 24 KiB/stage x 4 stages =  96 KiB
# Accumulator registers: 128x256 fp32 over 8 warps = 128 regs/thread (the standard Hopper wgmma tile:
# two warpgroups each own 64x256); 128x128 over 4 warps = 128 regs/thread as well.
# ---------------------------------------------------------------------------------------------------------
def _cfg(bm, bn, bk, gm, warps, stages):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm), num_warps=warps,
                         num_stages=stages)


CONFIGS = [
    # Large square problems (>= 4096^3): the 128x256 wgmma tile (two warpgroups of 64x256). Measured on an
    # H200 (Triton 3.6, bf16, CUDA-graph timing): 4 stages 645-669 TF/s at 8192^3 and 626-646 at 4096^3,
    # 3 stages 606-640 / 578-594 (torch.matmul: 669-703 / 658-677). 256x128x64 was slower (571-584): dropped.
    _cfg(128, 256, 64, 8, 8, 4),
    _cfg(128, 256, 64, 8, 8, 3),  # 144 KiB of shared memory instead of 192 KiB, for smaller-smem GPUs
    # Mid-size problems: 128x128 (595 TF/s at 8192^3 with 8 warps).
    _cfg(128, 128, 64, 8, 8, 4),
    _cfg(128, 128, 64, 8, 4, 4),
    # Skinny problems (M or N of a few hundred): smaller tiles give more programs for 132 SMs.
    _cfg(64, 128, 64, 8, 4, 4),
    _cfg(128, 64, 64, 8, 4, 4),
    # Small problems (M*N <= 256*256: even 128x128 tiles would fill 4 of 132 SMs). GROUP_M=4 so that the
    # tiny test shape (M=67 -> 5 tile-rows) has a full group and a partial group (tests the ordering).
    # This is also the config the tiny cases pin under the interpreter.
    _cfg(16, 16, 32, 4, 4, 3),
]

_SMALL_TILE = 32 * 32  # configs with BLOCK_M*BLOCK_N at or below this are for small problems only


def _prune_configs(configs, named_args, **kwargs):
    """Drop configs that do not suit (M, N); always returns at least one config.

    - small tiles (<= 32x32) only when M*N <= 256*256 (elsewhere they re-read the operands 4-8x more);
    - tiles much larger than the problem: BLOCK_M > max(64, next_pow2(M)) or BLOCK_N > max(64,
      next_pow2(N)) (so a skinny M=1..64 problem keeps the 64x128 tile, not the 128/256-row ones).
    """
    args = {**named_args, **kwargs}
    M, N = int(args["M"]), int(args["N"])
    max_bm = max(64, triton.next_power_of_2(M))
    max_bn = max(64, triton.next_power_of_2(N))
    kept = []
    for c in configs:
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        if bm * bn <= _SMALL_TILE and M * N > 256 * 256:
            continue
        if bm > max_bm or bn > max_bn:
            continue
        kept.append(c)
    if not kept:  # cannot happen with CONFIGS above, but a user-edited list must still launch
        kept = [min(configs, key=lambda c: c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"])]
    return kept


@triton.jit
def _sigmoid(z):
    """sigmoid(z) = 1 / (1 + exp(-z)) evaluated via exp(-|z|) <= 1, so exp never overflows (no inf, and no
    overflow warning under the numpy interpreter); costs one select over the naive form."""
    e = tl.exp(-tl.abs(z))
    r = 1.0 / (1.0 + e)
    return tl.where(z >= 0, r, e * r)


@triton.jit
def _apply_activation(x, ACTIVATION: tl.constexpr):
    """Activation on an fp32 tile (only exp is used, so GPU and interpreter agree)."""
    if ACTIVATION == "gelu":
        # gelu_tanh(x) = 0.5 x (1 + tanh(u)) = x * sigmoid(2u),  u = sqrt(2/pi) (x + 0.044715 x^3).
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        x = x * _sigmoid(2.0 * u)
    elif ACTIVATION == "silu":
        x = x * _sigmoid(x)
    return x


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"], prune_configs_by={"early_config_prune": _prune_configs})
@triton.jit
def gemm_kernel(
    a_ptr,  # (M, K) fp16/bf16, any strides (stride_am, stride_ak)
    b_ptr,  # (K, N) same dtype as a, any strides (stride_bk, stride_bn)
    c_ptr,  # (M, N) output, same dtype as a, strides (stride_cm, stride_cn)
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    ACTIVATION: tl.constexpr,  # None, "gelu" or "silu": fused into the epilogue, one specialization each
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,  # tile-rows per super-group (L2 reuse)
):
    # ---- grouped ordering: program id -> (pid_m, pid_n) -----------------------------------------------
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)  # the last group may have fewer tile-rows
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    # ---- main loop: fp32 accumulator, K tail masked with 0.0 (adds nothing to the dot) -----------------
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # ---- epilogue: activation in fp32, one rounding to the output dtype, masked store -----------------
    acc = _apply_activation(acc, ACTIVATION)
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=mask_m[:, None] & mask_n[None, :])


def gemm(a: torch.Tensor, b: torch.Tensor, activation: str | None = None) -> torch.Tensor:
    """``act(a @ b)`` for a (M, K) and b (K, N), fp16 or bf16 (same dtype); returns a new (M, N) tensor."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise ValueError("gemm: a and b must be torch tensors")
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"gemm: a and b must be 2-D, got a{tuple(a.shape)} and b{tuple(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"gemm: inner dimensions differ: a{tuple(a.shape)} @ b{tuple(b.shape)}")
    if a.dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(f"gemm: a must be float16 or bfloat16, got {a.dtype}")
    if b.dtype != a.dtype:
        raise ValueError(f"gemm: a and b must have the same dtype, got {a.dtype} and {b.dtype}")
    if a.device != b.device:
        raise ValueError(f"gemm: a and b are on different devices ({a.device}, {b.device})")
    if activation not in ACTIVATIONS:
        raise ValueError(f"gemm: activation must be one of {ACTIVATIONS}, got {activation!r}")
    if min(a.stride()) < 0 or min(b.stride()) < 0:
        raise ValueError("gemm: negative strides are not supported")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if M == 0 or N == 0:
        return c
    if K == 0:  # empty sum: act(0) == 0 for all three activations
        return c.zero_()

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    gemm_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        c.stride(0), c.stride(1),
        ACTIVATION=activation,
    )
    return c


def reference(a: torch.Tensor, b: torch.Tensor, activation: str | None = None) -> torch.Tensor:
    """fp32 reference: ``act(a.float() @ b.float())``; gelu uses the same tanh approximation."""
    c = a.float() @ b.float()
    if activation == "gelu":
        c = torch.nn.functional.gelu(c, approximate="tanh")
    elif activation == "silu":
        c = torch.nn.functional.silu(c)
    elif activation is not None:
        raise ValueError(f"reference: unknown activation {activation!r}")
    return c


def flops(M: int, N: int, K: int, **_) -> float:
    """2*M*N*K multiply-adds (the activation's ~10 flops per output element are not counted)."""
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, dtype=torch.float16, **_) -> float:
    """Minimal DRAM traffic: read a and b once, write c once (all in ``dtype``)."""
    size = torch.empty((), dtype=dtype).element_size()
    return float((M * K + K * N + M * N) * size)
