"""Tiled matrix multiply with a fused activation epilogue: ``c = act(a @ b)``.

Computes ``c[m, n] = act(sum_k a[m, k] * b[k, n])`` for ``a`` of shape (M, K) and ``b`` of shape (K, N), both
float16 or both bfloat16; ``c`` has the inputs' dtype. ``act`` is one of

- ``None``:   identity,
- ``"gelu"``: the tanh approximation, ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, i.e.
  ``torch.nn.functional.gelu(x, approximate="tanh")`` (NOT the exact erf form),
- ``"silu"``: ``x * sigmoid(x)``.

Three tl paths; ``gemm`` picks one per call:

- ``gemm_splitk`` (decode-like M <= 64, or <= 128 with N, K >= 1024; no activation; CUDA tensors): the
  one-launch split-K decode kernel (kernels/_splitk.py) on the fp16/bf16 operands (scales of 1): K is split
  so that a 1-row problem still spreads the read of
  b over every SM; the last-arriving split sums the fp32 partials in a fixed order (deterministic).
  ``gemm_tiled`` skips this path (benchmarks). Under the interpreter and ``tritondbg ir`` (CPU tensors) such
  calls take the tiled kernels, which also offer narrow 64 x 16/32/64 tiles for M <= 128.

and, for every other call, one of two tiled tl kernels (``tma_plan``):

- ``gemm_tma_kernel`` (Hopper path): when Triton's target is NVIDIA sm_90 or newer (or the interpreter, which
  implements tensor descriptors) and both operands can be TMA descriptors: 16-byte aligned base, unit stride
  in one dimension and a positive 16-byte aligned stride in the other (fp16/bf16: a multiple of 8 elements;
  for contiguous operands, K % 8 == 0 and N % 8 == 0), plus N % 8 == 0 for the rows of ``c``.
- ``gemm_kernel`` (pointer path): everything else: AMD, pre-Hopper NVIDIA, and operands TMA cannot describe
  (an odd K or N, no unit stride, a broadcast operand).

Measured on an H200 (Triton 3.6): the pointer kernel 0.95-1.02x torch.matmul on 4096^3 / 8192^3, the TMA
kernel 0.98-1.08x (runs move by several % with the GPU's power state); tests/bench/kernels_h200.md, sessions 3
and 7, and tests/bench/sweep_h200.md for the LLM shapes.

On an sm_90 GPU, a signature's first call then races the warp-specialised Gluon kernel (kernels/_gemm_gluon.py:
a TMA producer warp and wgmma consumer warpgroups, as cuBLAS) against the path above (kernels/_gemm_ws.py:
32 < M <= 2048, no activation, row-major a, row-major or K-major b; and at M <= 64 the Gluon decode kernel,
kernels/_gluon_decode.py, the swapped product c^T = w a^T; each candidate tile is checked against the
first call's output, then timed); a winner at least 1.5% faster serves that signature from then on
(``ws_decision`` shows the race). On the H200 it won at M = 127 and at some M = 1024 shapes (session 11,
tests/bench/kernels_h200.md). The interpreter, ``tritondbg ir`` and ``gemm_tiled`` keep the tl kernels.

Shared by both tl kernels: grouped tile ordering (``_tile_coords``), the activation epilogue
(``_apply_activation``) and the config pruning (``_prune_configs``), all in kernels/_gemm_parts.py (re-exported
here), and the argument check (``_check_args``).

Pointer kernel (after the Triton matmul tutorial): one program per BLOCK_M x BLOCK_N tile of ``c``, walking
K in BLOCK_K steps with ``tl.dot`` (wgmma on Hopper for the 64+-row tiles, mma.sync otherwise). Any M, N, K:
loads are masked on M, N and the K tail (``other=0.0``, so padded lanes add 0 to the dot), stores are masked
on M and N. Strides are passed explicitly, so transposed / non-contiguous views work without a copy.

TMA kernel (kernels/_gemm_tma.py, re-exported here): persistent over the SMs, operands through device-side
tensor descriptors, wgmma, a split tail (``TAIL_SPLIT_MAX``, below: K-split tail tiles when the last round
would leave most SMs idle) and an optionally subtiled TMA-store epilogue; that module's docstring has the
design and its measurements.

Both are autotuned over Hopper-style configs keyed on (M, N, K) (plus the dtypes, which the autotuner adds;
the TMA kernel also on the layouts and the activation); ``_prune_configs`` drops tiles that do not suit the
problem size.

Numerics: fp32 accumulation in ``tl.dot``; the activation is evaluated in fp32 on the accumulator and the
result is rounded once to the output dtype. The reference (``reference``) is ``a.float() @ b.float()``
followed by the same activation in fp32. Expected error: one rounding of the output dtype
(fp16: 2^-11 relative, bf16: 2^-8) plus fp32 reordering error (~K * 2^-24 relative to sum |a||b|). Bitwise
deterministic for one config (the split tail and the split-K path sum their partials in a fixed order); the
kernels, and a split tail tile against a full-round one, may differ in the last bit.

Limits: the pointer kernel's element offsets are int32, so M*K, K*N and M*N (in elements, times the strides)
must stay below 2^31 (8192 x 8192 is 2^26: fine; a 65536 x 65536 operand is not); TMA coordinates are int32
tile corners (operands above 2^31 elements are untested). M, N, K of 0 are handled in the wrapper.
"""
from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

from . import _gemm_ws as _WS, _launch, _race
from ._gemm_host import (SPLITK_MAX_M, SPLITK_MIN_NK, _ensure_allocator, _one, _splitk_cached,  # noqa: F401
                         _splitk_sig, _tma_layout, _use_splitk, gemm_splitk)
from ._autotune import autotune_bench
from ._gemm_parts import (_NARROW_M, _SMALL_TILE, _apply_activation, _cfg, _prune_configs, _sigmoid,  # noqa: F401
                          _tile_coords)
from ._gemm_tma import (TMA_CONFIGS, _split_tail_sum, _tail_buffers, _tail_scratch, _tma_box, _tma_desc,  # noqa: F401
                        gemm_tma_kernel, tma_programs)

ACTIVATIONS = (None, "gelu", "silu")


# ---------------------------------------------------------------------------------------------------------
# Autotune configs. Shared memory per stage is (BLOCK_M + BLOCK_N) * BLOCK_K * 2 bytes (fp16/bf16):
#   128x256x64: 48 KiB/stage x 4 stages = 192 KiB   (Hopper has up to 227 KiB per SM)
#   128x128x64: 32 KiB/stage x 4 stages = 128 KiB
#    64x128x64: 24 KiB/stage x 4 stages =  96 KiB
# Accumulator registers: 128x256 fp32 over 8 warps = 128 regs/thread (the standard Hopper wgmma tile:
# two warpgroups each own 64x256); 128x128 over 4 warps = 128 regs/thread as well.
# ---------------------------------------------------------------------------------------------------------
CONFIGS = [  # the pointer kernel's
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
    # Small M <= 128 (GEMV-like: the time is the read of b): narrow tiles so that N / BLOCK_N programs per
    # 64-row tile cover the SMs (N = 4096: 64 / 128 / 256 programs), long K steps and deep pipelines to keep
    # ~40 KiB of b in flight per SM; GROUP_M = 2: the two 64-row tiles of M = 65..128 take each b tile from
    # L2 one after the other. Only offered when M <= 128 (_prune_configs).
    _cfg(64, 64, 128, 2, 4, 5),
    _cfg(64, 32, 128, 2, 4, 6),
    _cfg(64, 16, 256, 2, 4, 5),
]

_INTERP_NUM_SMS = 4    # TMA kernel's persistent programs under the interpreter: several tiles each
_CPU_NUM_SMS = 132     # compile-only capture (`tritondbg ir`, CPU tensors): the H200's SM count as stand-in


@triton.autotune(configs=CONFIGS, key=["M", "N", "K"], prune_configs_by={"early_config_prune": _prune_configs},
                 do_bench=autotune_bench)
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
    pid_m, pid_n = _tile_coords(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
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
    c = _apply_activation(acc, ACTIVATION).to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=mask_m[:, None] & mask_n[None, :])


# ---------------------------------------------------------------------------------------------------------
# Launch: argument check, path choice (tma_plan), one launcher per kernel
# ---------------------------------------------------------------------------------------------------------
def _check_args(a, b, activation) -> None:
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise ValueError("gemm: a and b must be torch tensors")
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"gemm: a must be (..., K) and b 2-D (K, N), got a{tuple(a.shape)} and b{tuple(b.shape)}")
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


def _interpreted() -> bool:
    """Whether the kernels were built for the interpreter (TRITON_INTERPRET is read when @triton.jit runs):
    the object under the autotuner is then an InterpretedFunction instead of a JITFunction."""
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(gemm_tma_kernel.fn, InterpretedFunction)


def _hopper_target() -> bool:
    """Triton's active target is NVIDIA sm_90+ (TMA). Under `tritondbg ir` the active driver is a stub that
    reports the requested --arch; on a machine without a GPU and outside it, there is no target at all."""
    try:
        target = triton.runtime.driver.active.get_current_target()
    except Exception:  # noqa: BLE001 - no driver (CPU-only machine): no TMA
        return False
    return target.backend == "cuda" and isinstance(target.arch, int) and target.arch >= 90


def tma_plan(a: torch.Tensor, b: torch.Tensor) -> tuple[bool, bool] | None:
    """(A_TRANS, B_TRANS) when gemm_tma_kernel can run on these (checked) operands, else None (pointer kernel).

    Needs: Triton's target NVIDIA sm_90+ (or the interpreter, which implements descriptors), a 16-byte aligned
    base and leading stride for a and b, N % 8 == 0 (the output's row stride), M, N, K > 0."""
    M, K = a.shape
    N = b.shape[1]
    if min(M, N, K) == 0 or (N * a.element_size()) % 16 != 0:
        return None
    if not (_interpreted() or _hopper_target()):
        return None
    a_trans, b_trans = _tma_layout(a), _tma_layout(b)
    if a_trans is None or b_trans is None:
        return None
    return a_trans, b_trans


def _num_sms(device: torch.device) -> int:
    if _interpreted():
        return _INTERP_NUM_SMS
    if device.type != "cuda":  # only `tritondbg ir` compiles for a GPU from CPU tensors
        return _CPU_NUM_SMS
    return _num_sms_of(device.index if device.index is not None else torch.cuda.current_device())


@functools.lru_cache(maxsize=None)
def _num_sms_of(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


_PLANS: dict = {}  # call signature -> cached launcher (of either kernel)
_TMA = _launch.Launches(gemm_tma_kernel, _PLANS)
_PTR = _launch.Launches(gemm_kernel, _PLANS)


TAIL_SPLIT_MAX = 8  # gemm_tma_kernel's split tail: at most this many K splits per tail tile (< 2: off)


def _launch_tma(a, b, c, a_trans: bool, b_trans: bool, activation, sig=None) -> None:
    M, K = a.shape
    N = b.shape[1]
    num_sms = _num_sms(a.device)
    if a.device.type == "cuda":
        _ensure_allocator()
    scratch = _tail_scratch(a.device, num_sms)  # the split tail's workspace and counters, per stream
    ws, cnt = scratch()

    def grid(meta):
        return (tma_programs(M, N, K, meta, num_sms, TAIL_SPLIT_MAX),)

    values = dict(M=M, N=N, K=K, stride_a=a.stride(1) if a_trans else a.stride(0),
                  stride_b=b.stride(1) if b_trans else b.stride(0),
                  A_TRANS=a_trans, B_TRANS=b_trans, ACTIVATION=activation, NUM_SMS=num_sms,
                  TAIL_SPLIT=TAIL_SPLIT_MAX)
    compiled = gemm_tma_kernel[grid](a, b, c, ws, cnt, *values.values())
    if a.device.type == "cpu" and bool(cnt.any()):  # the interpreter ran the launch synchronously
        cnt.zero_()
        raise RuntimeError("gemm: the split-tail launch left arrival counters non-zero")
    _TMA.record(sig, compiled, grid, (a, b, c), values, out=c, scratch=scratch)


def _launch_pointer(a, b, c, activation, sig=None) -> None:
    M, K = a.shape
    N = b.shape[1]

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)

    values = dict(M=M, N=N, K=K, stride_am=a.stride(0), stride_ak=a.stride(1), stride_bk=b.stride(0),
                  stride_bn=b.stride(1), stride_cm=c.stride(0), stride_cn=c.stride(1), ACTIVATION=activation)
    compiled = gemm_kernel[grid](a, b, c, *values.values())
    _PTR.record(sig, compiled, grid, (a, b, c), values, out=c)


# Decode-like M (GEMV regime): ``gemm_splitk`` (kernels/_gemm_host.py: kernels/_splitk.py's decode kernel)
USE_SPLITK = True  # False: such calls take the tiled kernels (their narrow decode tiles); the sweep times both


def gemm(a: torch.Tensor, b: torch.Tensor, activation: str | None = None) -> torch.Tensor:
    """``act(a @ b)`` for a (M, K) and b (K, N), fp16 or bf16 (same dtype); returns a new (M, N) tensor. An a of
    shape (..., K) is taken as rows of K, as torch.matmul takes it, and gives (..., N).
    M <= SPLITK_MAX_M without an activation on a GPU: ``gemm_splitk``; else gemm_tma_kernel where
    ``tma_plan`` allows it, gemm_kernel otherwise; on sm_90 the Gluon kernel where it won its race (see the
    module docstring). A call with the signature
    (shapes, strides, dtypes, devices, activation) of an earlier CUDA call reuses that call's compiled kernel
    and config through a cached launcher (kernels/_launch.py)."""
    return _gemm(a, b, activation, USE_SPLITK, True)


def gemm_tiled(a: torch.Tensor, b: torch.Tensor, activation: str | None = None) -> torch.Tensor:
    """``gemm`` with the tl tiled kernels only, for every M: no split-K path, no Gluon race (benchmarks)."""
    return _gemm(a, b, activation, False, False)


def _sig(a, b, activation, splitk: bool, ws: bool) -> tuple:
    """A call's signature: what the path choice, the kernels' specialisation and their configs depend on."""
    return (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device, activation, splitk, ws)


def ws_decision(a, b, activation=None) -> dict | None:
    """The Gluon race's record for ``gemm(a, b, activation)``'s signature (kernels/_gemm_ws.py ``DECISIONS``:
    the tl path's time, each candidate's, the pick), or None where no race ran."""
    return _race.DECISIONS.get(_sig(a, b, activation, USE_SPLITK, True))


def _gemm(a, b, activation, splitk: bool, ws: bool):
    try:
        sig = _sig(a, b, activation, splitk, ws)
        launcher = _TMA.plan(sig, a, b)
        if launcher is not None and _launch.PINNED:  # a tool pinned a tl config: not the Gluon kernel's plan
            launcher = None
    except (AttributeError, TypeError):  # not tensors, unhashable activation: the checks below say what
        sig = launcher = None
    if launcher is None and splitk and sig is not None and activation is None and a.ndim == 2 \
            and a.shape[0] <= SPLITK_MAX_M and a.is_cuda:
        c = _splitk_cached(a, b)
        if c is not None:
            return c
    if launcher is not None:
        if launcher.kernel is gemm_tma_kernel:
            _ensure_allocator()  # the allocator lives in a ContextVar: another thread may not have it yet
        c = a.new_empty((a.shape[0], b.shape[1]))
        launcher(a, b, c)
        return c
    guard = _launch.device_guard(a)
    if guard is not None:  # a on another GPU than the current one: launch there, as torch ops do
        with guard:
            return _gemm(a, b, activation, splitk, ws)
    if isinstance(a, torch.Tensor) and a.ndim not in (0, 2) and isinstance(b, torch.Tensor) and b.ndim == 2:
        # a (..., K) @ b (K, N), as torch.matmul takes an activation against a weight: rows of K (a view where
        # the leading dims allow one), the (..., N) view of the 2-D result; its 2-D call has its own launcher
        return _gemm(a.reshape(-1, a.shape[-1]), b, activation, splitk, ws).view(*a.shape[:-1], b.shape[1])
    _check_args(a, b, activation)
    M, K = a.shape
    N = b.shape[1]
    if splitk and _use_splitk(a, b, activation) and K > 0:
        c = gemm_splitk(a, b)
    else:
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)
        if M == 0 or N == 0:
            return c
        if K == 0:  # empty sum: act(0) == 0 for all three activations
            return c.zero_()
        plan = tma_plan(a, b)
        if plan is not None:
            _launch_tma(a, b, c, *plan, activation, sig=sig)
        else:
            _launch_pointer(a, b, c, activation, sig=sig)
    # Hopper: the warp-specialised Gluon kernel against the path above, once per signature (kernels/_gemm_ws.py)
    # (M <= 64: the Gluon decode kernel's candidates too, kernels/_gluon_decode.py; gemm tiles above M = 32)
    b_nk = _WS.eligible(a, b, activation) if ws and sig is not None and K > 0 else None
    if b_nk is not None:
        steady = lambda: _gemm(a, b, activation, splitk, ws)  # noqa: E731 - the cached path, as later calls take it
        num_sms = _num_sms(a.device)
        c = _WS.race(sig, a, b, c, b_nk, _PLANS, steady, num_sms, gemm_tiles=M > _WS.WS_MIN_M,
                     extra=_WS.decode_candidates(a, b, b_nk, num_sms))
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
