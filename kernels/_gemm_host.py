"""Host-side helpers of kernels/gemm.py (kept apart so gemm.py stays readable; gemm.py re-exports them): the
small-M path through kernels/_splitk.py's one-launch split-K decode kernel (``gemm_splitk``) and the TMA operand
layout test."""
from __future__ import annotations

import torch
import triton

from . import _launch
from . import _splitk as SK
from ._launch import ensure_allocator as _ensure_allocator  # noqa: F401 (gemm.py and _fp8_tma.py use it)


def _tma_layout(t: torch.Tensor) -> bool | None:
    """How a 2-D fp16/bf16 tensor can be a TMA descriptor: False = row-major (last dim contiguous), True =
    transposed (first dim contiguous), None = neither (base or other stride not 16-byte aligned, or 0)."""
    if t.data_ptr() % 16 != 0:
        return None
    s0, s1 = t.stride()
    elem = t.element_size()
    if s1 == 1 and s0 > 0 and (s0 * elem) % 16 == 0:
        return False
    if s0 == 1 and s1 > 0 and (s1 * elem) % 16 == 0:
        return True
    return None


SPLITK_MAX_M = 128  # M at or below this, no activation, on a GPU: the split-K decode kernel (issue 18)
SPLITK_MIN_NK = 1024  # 64 < M <= 128: split-K only when N and K are both at least this (weight-streaming shapes)
_ONES: dict = {}   # device -> fp32 scalar 1.0 (the decode kernel's scales)


def _one(device) -> torch.Tensor:
    t = _ONES.get(device)
    if t is None:
        t = _ONES[device] = torch.ones((), device=device, dtype=torch.float32)
    return t


def _splitk_sig(a, b, one):
    """The decode kernel's call signature for these operands (as fp8_gemm builds it: its cached launchers are
    keyed on it)."""
    return (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device, a.dtype,
            one.shape, one.dtype, one.device, True, one.shape, one.dtype, one.device, True)


def gemm_splitk(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` for checked fp16/bf16 operands with small M through the one-launch split-K decode
    kernel (fp32 partials, the last-arriving split sums them in a fixed order: deterministic; its cached
    launcher per call signature). Each of the K splits streams a slice of b, so a 1-row problem still
    spreads the read of b over every SM (the tiled kernels have only N / BLOCK_N programs then)."""
    c = _splitk_cached(a, b)
    if c is not None:
        return c
    guard = _launch.device_guard(a)
    if guard is not None:  # a on another GPU than the current one: launch there, as torch ops do
        with guard:
            return gemm_splitk(a, b)
    one = _one(a.device)
    c = a.new_empty((a.shape[0], b.shape[1]))
    return SK._decode(a, b, c, one, False, one, False, _splitk_sig(a, b, one), one, one)


def _splitk_cached(a, b) -> torch.Tensor | None:
    """``a @ b`` through the decode kernel's cached launcher for this signature (aligned pointers, nothing
    patched), or None when there is none yet."""
    one = _one(a.device)
    plan = SK._PLANS.get(_splitk_sig(a, b, one))
    if plan is None or (a.data_ptr() | b.data_ptr()) & 15 or not plan.usable():
        return None
    c = a.new_empty((a.shape[0], b.shape[1]))
    plan.launch(a, b, c, one, one)
    return c


def _use_splitk(a, b, activation) -> bool:
    """H200, session 7 (tests/bench/explore_gemm_small_m.py, bf16): with the 16-bit decode configs
    (kernels/_splitk.py WIDE_DECODE_CONFIGS) split-K was 0.96-1.09x torch.matmul at M = 17 and 48 on five LLM
    shapes where the tiled kernels were 0.70-0.96x, and at M = 127 0.80-0.99x against the tiled 0.68-0.91x.
    Above M = 64 only for weight-sized N and K (small problems keep the tiled kernels and their tests)."""
    M, K = a.shape
    N = b.shape[1]
    return (activation is None and 0 < M <= SPLITK_MAX_M and a.is_cuda and N > 0
            and (M <= 64 or min(N, K) >= SPLITK_MIN_NK))
