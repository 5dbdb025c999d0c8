"""Tiled matrix multiply with a fused activation epilogue: ``c = act(a @ b)``.

Computes ``c[m, n] = act(sum_k a[m, k] * b[k, n])`` for ``a`` of shape (M, K) and ``b`` of shape (K, N), both
float16 or both bfloat16; ``c`` has the inputs' dtype. ``act`` is one of

- ``None``:   identity,
- ``"gelu"``: the tanh approximation, ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, i.e.
  ``torch.nn.functional.gelu(x, approximate="tanh")`` (NOT the exact erf form),
- ``"silu"``: ``x * sigmoid(x)``.

Three paths; ``gemm`` picks one per call:

- ``gemm_splitk`` (decode-like M <= 64, or <= 128 with N, K >= 1024; no activation; CUDA tensors): the
  one-launch split-K decode kernel (kernels/_splitk.py) on the fp16/bf16 operands (scales of 1): K is split
  so that a 1-row problem still spreads the read of
  b over every SM; the last-arriving split sums the fp32 partials in a fixed order (deterministic).
  ``gemm_tiled`` skips this path (benchmarks). Under the interpreter and ``tritondbg ir`` (CPU tensors) such
  calls take the tiled kernels, which also offer narrow 64 x 16/32/64 tiles for M <= 128.

and, for every other call, one of two tiled kernels (``tma_plan``):

- ``gemm_tma_kernel`` (Hopper path): when Triton's target is NVIDIA sm_90 or newer (or the interpreter, which
  implements tensor descriptors) and both operands can be TMA descriptors: 16-byte aligned base, unit stride
  in one dimension and a positive 16-byte aligned stride in the other (fp16/bf16: a multiple of 8 elements;
  for contiguous operands, K % 8 == 0 and N % 8 == 0), plus N % 8 == 0 for the rows of ``c``.
- ``gemm_kernel`` (pointer path): everything else: AMD, pre-Hopper NVIDIA, and operands TMA cannot describe
  (an odd K or N, no unit stride, a broadcast operand).

Measured on an H200 (Triton 3.6): the pointer kernel 0.95-1.02x torch.matmul on 4096^3 / 8192^3, the TMA
kernel 0.98-1.08x (runs move by several % with the GPU's power state); tests/bench/kernels_h200.md, sessions 3
and 7, and tests/bench/sweep_h200.md for the LLM shapes.

Shared by both kernels: grouped tile ordering (``_tile_coords``: consecutive tiles sweep GROUP_M tile-rows of
``c`` column by column, so a few row-panels of ``a`` and the current column-panel of ``b`` stay hot in L2,
50 MB on H100, 60 MB on H200), the activation epilogue (``_apply_activation``), the config pruning
(``_prune_configs``) and the argument check (``_check_args``).

Pointer kernel (after the Triton matmul tutorial): one program per BLOCK_M x BLOCK_N tile of ``c``, walking
K in BLOCK_K steps with ``tl.dot`` (wgmma on Hopper for the 64+-row tiles, mma.sync otherwise). Any M, N, K:
loads are masked on M, N and the K tail (``other=0.0``, so padded lanes add 0 to the dot), stores are masked
on M and N. Strides are passed explicitly, so transposed / non-contiguous views work without a copy.

TMA kernel (after Triton's persistent-matmul tutorial):
- Persistent: ``min(#SMs, #tiles)`` programs; program ``p`` computes tiles ``p, p + #SMs, ...`` (H200, 132
  SMs, 128x256 tiles: 4096^3 is 512 tiles in 4 rounds, 8192^3 2048 in 16).
- TMA through device-side tensor descriptors (``tl.make_tensor_descriptor``): one ``cp.async.bulk.tensor``
  (SASS ``UTMALDG``) per operand tile per K step; the tile lands in shared memory swizzled for wgmma
  (``HGMMA``), with out-of-bounds rows/columns (M, N and the K tail) zero-filled, so no masks. The output
  leaves through a TMA store (``UTMASTG``), clipped at M and N.
- The (tile, k) loop nest is flattened (``tl.range(..., flatten=True)``) and software-pipelined over
  ``num_stages`` buffers: the next tile's first loads are in flight during this tile's epilogue.
- Split tail (``TAIL_SPLIT``, issue 18's mid-M shapes; ``_split_tail_sum``): when the
  last round would hold ``tail = #tiles % #SMs`` <= #SMs / 2 tiles (1024x5120x13824 at 128x256: 160 tiles =
  132 + 28, so 104 SMs idle for a whole tile's time), the full rounds run as above and each tail tile's K is
  split ``min(#SMs // tail, TAIL_SPLIT_MAX, K steps)`` ways over the idle programs (28 tiles x 4 splits =
  112 programs a quarter tile long). fp32 partials go to a cached workspace (#SMs x 256 x 256 fp32: 35 MB
  on an H200), the last arrival (acq_rel counter, kernels/_splitk.py's protocol) sums them in the fixed order
  0..n-1 (deterministic bits; a tail tile's bits may differ from a full-round tile's in the last place),
  applies the activation once and stores c with masked pointer stores. Decided in the kernel from (#tiles,
  #SMs, K steps), so each autotune candidate is timed with its own tail, and the host's steady state is
  unchanged (workspace and counters are bound into the cached launcher). With at most #SMs / 2 tiles in all
  (small M: 127x4096 at 128x128 is 32 tiles) the tail is every tile: plain split-K over
  ``tma_programs`` programs. sm_90 (Triton 3.9, compile-only,
  tests/bench/gemm_regs.py --tma): registers and shared memory as without it (128x256 s4: 171 regs, no
  spill, 224 KiB; 128x128 w8: 133 regs, 144 KiB). H200 (Triton 3.6, 2026-11-30, tests/bench/explore_gemm_mid_m.py
  --m 1024): 1024x5120x13824 242.8 -> 207.7 us (0.81x -> 0.95x torch.matmul), with GELU 0.76x -> 0.90x,
  1024x14336x4096 0.98x -> 1.03x; shapes whose last round is more than half full are unchanged.
- Epilogue subtiling (``EPILOGUE_SUBTILE``): the accumulator is activated, rounded and stored as two
  BLOCK_M x BLOCK_N/2 halves, which halves the store's staging buffer so 128x256x64 keeps 4 stages
  (4 x 48 KiB + 32 KiB = 224 KiB of the 227 KiB an H200 SM allows).
- Operand layouts: ``a`` row-major or the ``.t()`` view of a (K, M) row-major tensor, ``b`` row-major or the
  ``.t()`` view of an (N, K) one (an nn.Linear weight): the descriptor is built on the contiguous storage and
  the tile is ``.T``-viewed; wgmma reads either major order from shared memory, no copy (A_TRANS, B_TRANS).
- Device-side descriptors need global scratch (128 B per descriptor per program) from the allocator of
  ``triton.set_allocator``; ``gemm`` installs a torch one unless one is set (~50 KB per launch from torch's
  caching allocator at 132 programs).
- Under the interpreter the persistent grid is ``_INTERP_NUM_SMS`` = 4 programs, so each walks several tiles;
  the scenario's ``tiny_tma*`` cases (8-aligned K and N) run this kernel, its ``tiny*`` cases (K = 91) the
  pointer kernel.
- Not used: ``tl.range(..., warp_specialize=True)`` compiles for sm_90 (Triton 3.6 and 3.9) but makes no
  partitions there (automatic warp specialization targets Blackwell), so the epilogue, GELU included, does
  not overlap the next tile's wgmmas; host-side ``TensorDescriptor`` arguments would avoid the scratch
  allocator and the per-program descriptor creation.

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

from . import _launch
from . import _splitk as SK
from ._gemm_host import (SPLITK_MAX_M, SPLITK_MIN_NK, _ensure_allocator, _one, _splitk_cached,  # noqa: F401
                         _splitk_sig, _tma_layout, _use_splitk, gemm_splitk)
from ._autotune import autotune_bench

ACTIVATIONS = (None, "gelu", "silu")


# ---------------------------------------------------------------------------------------------------------
# Autotune configs. Shared memory per stage is (BLOCK_M + BLOCK_N) * BLOCK_K * 2 bytes (fp16/bf16):
#   128x256x64: 48 KiB/stage x 4 stages = 192 KiB   (Hopper has up to 227 KiB per SM)
#   128x128x64: 32 KiB/stage x 4 stages = 128 KiB
#    64x128x64: 24 KiB/stage x 4 stages =  96 KiB
# plus, for the TMA kernel, the store's staging buffer: BLOCK_M x BLOCK_N x 2 B, halved by EPILOGUE_SUBTILE
# (128x256 s4 subtiled: 192 + 32 = 224 KiB; s3: 176; s3 whole-tile: 208).
# Accumulator registers: 128x256 fp32 over 8 warps = 128 regs/thread (the standard Hopper wgmma tile:
# two warpgroups each own 64x256); 128x128 over 4 warps = 128 regs/thread as well.
# ---------------------------------------------------------------------------------------------------------
def _cfg(bm, bn, bk, gm, warps, stages, **extra):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, **extra), num_warps=warps,
                         num_stages=stages)


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

TMA_CONFIGS = [  # the same tiles plus EPILOGUE_SUBTILE (store the tile in two halves)
    # Large problems: the 128x256 tile; subtiling is what makes 4 stages fit. The whole-tile s3 entry is
    # kept to measure what subtiling buys on its own.
    _cfg(128, 256, 64, 8, 8, 4, EPILOGUE_SUBTILE=True),
    _cfg(128, 256, 64, 8, 8, 3, EPILOGUE_SUBTILE=True),
    _cfg(128, 256, 64, 8, 8, 3, EPILOGUE_SUBTILE=False),
    # Mid-size problems: 128x128 (more tiles per SM round when 128x256 would leave SMs idle).
    _cfg(128, 128, 64, 8, 8, 4, EPILOGUE_SUBTILE=True),
    _cfg(128, 128, 64, 8, 4, 4, EPILOGUE_SUBTILE=True),
    # Skinny problems (M or N of a few hundred).
    _cfg(64, 128, 64, 8, 4, 4, EPILOGUE_SUBTILE=True),
    _cfg(128, 64, 64, 8, 4, 4, EPILOGUE_SUBTILE=True),
    # Small problems and the interpreter (the tiny cases pin 16x16x32). Subtiled: the store halves are 16x8
    # (16 bytes wide, TMA's minimum box width), so the interpreter also runs the split epilogue.
    _cfg(16, 16, 32, 4, 4, 3, EPILOGUE_SUBTILE=True),
    # Small M <= 128 (see CONFIGS). Not subtiled: a 16-column half would be 16 bytes wide.
    _cfg(64, 64, 128, 2, 4, 5, EPILOGUE_SUBTILE=False),
    _cfg(64, 32, 128, 2, 4, 6, EPILOGUE_SUBTILE=False),
    _cfg(64, 16, 256, 2, 4, 5, EPILOGUE_SUBTILE=False),
]

_SMALL_TILE = 32 * 32  # configs with BLOCK_M*BLOCK_N at or below this are for small problems only
_NARROW_M = 128        # configs with BLOCK_M == 64 and BLOCK_N <= 64 are for M <= this only
_INTERP_NUM_SMS = 4    # TMA kernel's persistent programs under the interpreter: several tiles each
_CPU_NUM_SMS = 132     # compile-only capture (`tritondbg ir`, CPU tensors): the H200's SM count as stand-in


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


@triton.jit
def _box_a(a_desc, offs_m, offs_k, A_TRANS: tl.constexpr):
    """The TMA kernel's (BLOCK_M, BLOCK_K) operand box of a at (offs_m, offs_k)."""
    # one return statement: Triton checks every return's type, a constexpr-dead one too (the two shapes differ)
    if A_TRANS:
        a = a_desc.load([offs_k, offs_m]).T  # (BLOCK_K, BLOCK_M) box: wgmma reads it M-major
    else:
        a = a_desc.load([offs_m, offs_k])
    return a


@triton.jit
def _box_b(b_desc, offs_n, offs_k, B_TRANS: tl.constexpr):
    """The TMA kernel's (BLOCK_K, BLOCK_N) operand box of b at (offs_k, offs_n)."""
    if B_TRANS:
        b = b_desc.load([offs_n, offs_k]).T  # (BLOCK_N, BLOCK_K) box: wgmma reads it K-major
    else:
        b = b_desc.load([offs_k, offs_n])
    return b


@triton.jit
def _split_tail_sum(acc, c_ptr, ws_ptr, cnt_ptr, M, N, pid_m, pid_n, t, s, n_split, ACTIVATION: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """gemm_tma_kernel's split tail, after split s of tail tile t computed its K slice into acc: store the fp32
    partial in ws and count arrivals; the last split of the tile sums the n_split partials in the order
    0..n_split-1 (deterministic bits), applies the activation once and writes c. The protocol (barrier,
    acq_rel atomic, .cg re-reads, counter reset) is kernels/_splitk.py's."""
    # partial s of tail tile t at ws[(t * n_split + s) * BLOCK_M * BLOCK_N ...], row-major BLOCK_M x BLOCK_N
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    ws_tile = ws_ptr + t * n_split * (BLOCK_M * BLOCK_N)
    tl.store(ws_tile + s * (BLOCK_M * BLOCK_N) + rows[:, None] * BLOCK_N + cols[None, :], acc)
    tl.debug_barrier()  # every thread's partial stores before the one thread's release (kernels/_splitk.py)
    arrived = tl.atomic_add(cnt_ptr + t, 1, sem="acq_rel", scope="gpu")
    if arrived == n_split - 1:
        # Last arrival: sum the partials column half by column half (a whole 128x256 fp32 sum plus one loaded
        # partial would not fit the registers beside each other), in the fixed order 0..n_split-1, from L2.
        offs_m = pid_m * BLOCK_M + rows
        for h in tl.static_range(2):
            hcols = h * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
            part_ptrs = ws_tile + rows[:, None] * BLOCK_N + hcols[None, :]
            total = tl.zeros((BLOCK_M, BLOCK_N // 2), dtype=tl.float32)
            for j in range(n_split):
                total += tl.load(part_ptrs + j * (BLOCK_M * BLOCK_N), cache_modifier=".cg")
            offs_n = pid_n * BLOCK_N + hcols
            c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
            tl.store(c_ptrs, _apply_activation(total, ACTIVATION).to(c_ptr.dtype.element_ty),
                     mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
        tl.store(cnt_ptr + t, 0)  # every split of this tile has arrived: reset for the next launch


@triton.autotune(configs=TMA_CONFIGS, key=["M", "N", "K", "A_TRANS", "B_TRANS", "ACTIVATION", "TAIL_SPLIT"],
                 prune_configs_by={"early_config_prune": _prune_configs}, do_bench=autotune_bench)
@triton.jit
def gemm_tma_kernel(
    a_ptr,  # (M, K) fp16/bf16; A_TRANS=False: row-major, stride_a = row stride; True: the (M, K) view of a
            # (K, M) row-major tensor, stride_a = its row stride. 16-byte aligned, stride_a % 8 == 0.
    b_ptr,  # (K, N) same dtype; B_TRANS=False: row-major, stride_b = row stride; True: the (K, N) view of an
            # (N, K) row-major tensor (nn.Linear weight .t()), stride_b = its row stride. Same alignment.
    c_ptr,  # (M, N) output, contiguous (row stride N, N % 8 == 0), same dtype
    ws_ptr,   # fp32 split-tail workspace, >= NUM_SMS * BLOCK_M * BLOCK_N floats (unused for TAIL_SPLIT < 2)
    cnt_ptr,  # int32 split-tail arrival counters, >= NUM_SMS, 0 on entry and (reset by the kernel) on exit
    M, N, K,
    stride_a, stride_b,
    A_TRANS: tl.constexpr, B_TRANS: tl.constexpr,
    ACTIVATION: tl.constexpr,  # None, "gelu" or "silu": fused into the epilogue, one specialization each
    NUM_SMS: tl.constexpr,     # number of persistent programs (the grid is min(NUM_SMS, #tiles))
    TAIL_SPLIT: tl.constexpr,  # most K splits per tile of a partial last round (< 2: no split tail)
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,           # tile-rows per super-group (L2 reuse)
    EPILOGUE_SUBTILE: tl.constexpr,  # store the tile as two BLOCK_M x BLOCK_N/2 halves (half the store smem)
):
    dtype = c_ptr.dtype.element_ty
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n

    # ---- TMA descriptors, built once per program on the contiguous storage of each operand -------------
    # Out-of-bounds parts of a box read as 0 (the K tail adds nothing to the dot) and are not written.
    if A_TRANS:
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[K, M], strides=[stride_a, 1],
                                           block_shape=[BLOCK_K, BLOCK_M])
    else:
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[stride_a, 1],
                                           block_shape=[BLOCK_M, BLOCK_K])
    if B_TRANS:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[stride_b, 1],
                                           block_shape=[BLOCK_N, BLOCK_K])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[stride_b, 1],
                                           block_shape=[BLOCK_K, BLOCK_N])
    if EPILOGUE_SUBTILE:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                           block_shape=[BLOCK_M, BLOCK_N // 2])
    else:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                           block_shape=[BLOCK_M, BLOCK_N])

    # The epilogue recomputes its tile from a counter of its own (tile_id_c) rather than reusing the
    # main loop's pid_m/pid_n: after flattening, the pipeliner hoists the next tile's prologue above this
    # tile's epilogue, and a value used by both would have to be kept alive across the software-pipeline
    # stages (Triton's persistent-matmul tutorial does the same).
    # ---- split tail (data-parallel + split-K, Stream-K paper's "DP + SK" hybrid): when the last round would
    # hold tail = num_tiles % NUM_SMS <= NUM_SMS / 2 tiles (most SMs idle for a whole tile's time), the full
    # rounds run as usual and each tail tile's K is split n_split ways over the idle programs. With fewer
    # tiles than half the SMs (small M: one round, the tail is every tile) it is plain split-K; the grid
    # (``tma_programs``) then has num_tiles * n_split programs.
    num_dp = num_tiles
    n_split = num_tiles * 0 + 1
    if TAIL_SPLIT > 1:
        tail = num_tiles % NUM_SMS
        ways = tl.minimum(tl.minimum(NUM_SMS // tl.maximum(tail, 1), TAIL_SPLIT), k_tiles)
        if (tail > 0) & (ways > 1):
            n_split = ways
            num_dp = num_tiles - tail

    tile_id_c = start_pid - NUM_SMS
    for tile_id in tl.range(start_pid, num_dp, NUM_SMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        offs_m = pid_m * BLOCK_M
        offs_n = pid_n * BLOCK_N

        # ---- main loop: one TMA box per operand per K step, wgmma into an fp32 accumulator -------------
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            k0 = ki * BLOCK_K
            # loads and dot on one line: ptxas attributes the wgmma to either (the source map, tests/test_ir.py)
            acc = tl.dot(_box_a(a_desc, offs_m, k0, A_TRANS), _box_b(b_desc, offs_n, k0, B_TRANS), acc)

        # ---- epilogue: activation in fp32, one rounding, TMA store (clipped at M and N) ----------------
        tile_id_c += NUM_SMS
        pid_m_c, pid_n_c = _tile_coords(tile_id_c, num_pid_m, num_pid_n, GROUP_M)
        offs_cm = pid_m_c * BLOCK_M
        offs_cn = pid_n_c * BLOCK_N
        if EPILOGUE_SUBTILE:
            # (BLOCK_M, BLOCK_N) -> (BLOCK_M, 2, BLOCK_N/2) -> (BLOCK_M, BLOCK_N/2, 2) -> two column halves
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            acc0, acc1 = tl.split(halves)
            c_desc.store([offs_cm, offs_cn], _apply_activation(acc0, ACTIVATION).to(dtype))
            c_desc.store([offs_cm, offs_cn + BLOCK_N // 2], _apply_activation(acc1, ACTIVATION).to(dtype))
        else:
            c_desc.store([offs_cm, offs_cn], _apply_activation(acc, ACTIVATION).to(dtype))

    if TAIL_SPLIT > 1:
        if (n_split > 1) & (start_pid < (num_tiles - num_dp) * n_split):
            # ---- split tail: program p computes K slice (p % n_split) of tail tile (p // n_split), i.e. of
            # tile num_dp + p // n_split; a split past K's end (k_lo >= k_tiles) adds a zero partial.
            t = start_pid // n_split
            s = start_pid % n_split
            pid_m, pid_n = _tile_coords(num_dp + t, num_pid_m, num_pid_n, GROUP_M)
            k_per = tl.cdiv(k_tiles, n_split)
            k_lo = s * k_per
            k_hi = tl.minimum(k_lo + k_per, k_tiles)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            om = pid_m * BLOCK_M
            on = pid_n * BLOCK_N
            for ki in range(k_lo, k_hi):
                k0 = ki * BLOCK_K
                acc = tl.dot(_box_a(a_desc, om, k0, A_TRANS), _box_b(b_desc, on, k0, B_TRANS), acc)
            _split_tail_sum(acc, c_ptr, ws_ptr, cnt_ptr, M, N, pid_m, pid_n, t, s, n_split, ACTIVATION,
                            BLOCK_M, BLOCK_N)


# ---------------------------------------------------------------------------------------------------------
# Launch: argument check, path choice (tma_plan), one launcher per kernel
# ---------------------------------------------------------------------------------------------------------
def _check_args(a, b, activation) -> None:
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


def tma_programs(M: int, N: int, K: int, meta: dict, num_sms: int, tail_max: int) -> int:
    """gemm_tma_kernel's grid for config ``meta``: ``num_sms`` persistent programs, or with fewer tiles than
    SMs one per tile, times the K split of its rule when at most half the SMs would have a tile."""
    tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
    if tiles >= num_sms:
        return num_sms
    ways = min(num_sms // max(tiles, 1), tail_max, triton.cdiv(K, meta["BLOCK_K"]))
    return tiles * ways if ways > 1 else tiles


def _tail_buffers(device, num_sms: int):
    """The TMA kernel's split-tail workspace and counters (zero between launches), cached per device for the
    process's life (kernels/_splitk.py ``_buffer``). The workspace holds num_sms fp32 tiles of 256 x 256 (a
    TMA box's largest sides: 34.6 MB at 132 SMs), so any config, also one a tool pins from outside
    TMA_CONFIGS, fits (the kernel writes at most num_sms tiles)."""
    tile = max([256 * 256] + [c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"]
                              for c in getattr(gemm_tma_kernel, "configs", TMA_CONFIGS)])
    return (SK._buffer("tma_ws", device, num_sms * tile, torch.float32),
            SK._buffer("tma_cnt", device, num_sms, torch.int32))


def _launch_tma(a, b, c, a_trans: bool, b_trans: bool, activation, sig=None) -> None:
    M, K = a.shape
    N = b.shape[1]
    num_sms = _num_sms(a.device)
    if a.device.type == "cuda":
        _ensure_allocator()
    ws, cnt = _tail_buffers(a.device, num_sms)

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
    _TMA.record(sig, compiled, grid, (a, b, c), dict(ws_ptr=ws, cnt_ptr=cnt, **values), out=c)


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
    """``act(a @ b)`` for a (M, K) and b (K, N), fp16 or bf16 (same dtype); returns a new (M, N) tensor.
    M <= SPLITK_MAX_M without an activation on a GPU: ``gemm_splitk``; else gemm_tma_kernel where
    ``tma_plan`` allows it, gemm_kernel otherwise (see the module docstring). A call with the signature
    (shapes, strides, dtypes, devices, activation) of an earlier CUDA call reuses that call's compiled kernel
    and config through a cached launcher (kernels/_launch.py)."""
    return _gemm(a, b, activation, USE_SPLITK)


def gemm_tiled(a: torch.Tensor, b: torch.Tensor, activation: str | None = None) -> torch.Tensor:
    """``gemm`` without the split-K path: the tiled kernels for every M (benchmarks of the small-M choice)."""
    return _gemm(a, b, activation, False)


def _gemm(a, b, activation, splitk: bool):
    try:
        sig = (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device, activation, splitk)
        launcher = _TMA.plan(sig, a, b)
    except (AttributeError, TypeError):  # not tensors, unhashable activation: the checks below say what
        sig = launcher = None
    if launcher is None and splitk and sig is not None and activation is None and a.shape[0] <= SPLITK_MAX_M \
            and a.is_cuda:
        c = _splitk_cached(a, b)
        if c is not None:
            return c
    if launcher is not None:
        if launcher.kernel is gemm_tma_kernel:
            _ensure_allocator()  # the allocator lives in a ContextVar: another thread may not have it yet
        c = a.new_empty((a.shape[0], b.shape[1]))
        launcher(a, b, c)
        return c
    _check_args(a, b, activation)
    M, K = a.shape
    N = b.shape[1]
    if splitk and _use_splitk(a, b, activation) and K > 0:
        return gemm_splitk(a, b)
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
