"""Pieces both gemm kernels share (kernels/gemm.py's pointer kernel and kernels/_gemm_tma.py's TMA kernel),
kept apart so that neither kernel module imports the other: the config constructor, the config pruning
(``_prune_configs``), grouped tile ordering (``_tile_coords``: consecutive tiles sweep GROUP_M tile-rows of
``c`` column by column, so a few row-panels of ``a`` and the current column-panel of ``b`` stay hot in L2,
50 MB on H100, 60 MB on H200) and the activation epilogue (``_apply_activation``). gemm.py re-exports them."""
from __future__ import annotations

import triton
import triton.language as tl


def _cfg(bm, bn, bk, gm, warps, stages, **extra):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, **extra), num_warps=warps,
                         num_stages=stages)


_SMALL_TILE = 32 * 32  # configs with BLOCK_M*BLOCK_N at or below this are for small problems only
_NARROW_M = 128        # configs with BLOCK_M == 64 and BLOCK_N <= 64 are for M <= this only


def _prune_configs(configs, named_args, **kwargs):
    """Drop configs that do not suit (M, N); always returns at least one config (both kernels).

    - small tiles (<= 32x32) only when M*N <= 256*256 (elsewhere they re-read the operands 4-8x more);
    - tiles much larger than the problem: BLOCK_M > max(64, next_pow2(M)) or BLOCK_N > max(64,
      next_pow2(N)) (so a skinny M=1..64 problem keeps the 64x128 tile, not the 128/256-row ones);
    - the narrow tiles (64 x <= 64) only when M <= 128.
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
        if bm == 64 and bn <= 64 and bm * bn > _SMALL_TILE and M > _NARROW_M:
            continue
        kept.append(c)
    if not kept:  # cannot happen with the lists above, but a user-edited list must still launch
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


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Grouped ordering: tile index -> (pid_m, pid_n), GROUP_M tile-rows swept column by column (L2 reuse)."""
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)  # the last group may have fewer tile-rows
    pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n
