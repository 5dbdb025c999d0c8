"""Persistent TMA matmul for Hopper with a fused activation epilogue: ``c = act(a @ b)`` (variant of kernels/gemm.py).

Same contract as ``tritondbg.kernels.gemm.gemm``: ``a`` (M, K) and ``b`` (K, N), both fp16 or both bf16, fp32
accumulation, ``act`` in None / "gelu" (tanh approximation) / "silu" evaluated in fp32 on the accumulator
(``_apply_activation`` is imported from the bundled kernel, so both round the same way), one rounding to the
output dtype. Also a tritondbg scenario (``SCENARIO_TMA``, name ``gemm_tma``) at the end of this file.

Design
------
- Persistent: ``min(#SMs, #tiles)`` programs; program ``p`` computes tiles ``p, p + #SMs, p + 2 #SMs, ...``.
  On the H200 (132 SMs) at 4096^3 with 128x256 tiles that is 512 tiles in 4 rounds (the last one 116 tiles:
  97% of the SM-rounds busy; 8192^3: 2048 tiles in 16 rounds, also 97%). The non-persistent bundled kernel
  pays a CTA launch + pipeline ramp per tile and cannot overlap one tile's epilogue with the next tile's loads.
- Grouped tile ordering (GROUP_M tile-rows swept column by column), the same mapping as kernels/gemm.py, so
  the 132 tiles in flight at once share a few row-panels of ``a`` and column-panels of ``b`` in L2.
- TMA through device-side tensor descriptors (``tl.make_tensor_descriptor``): one ``cp.async.bulk.tensor``
  (SASS ``UTMALDG``) per operand tile per K step instead of 128-256 threads computing addresses and masks;
  the tile lands in shared memory already swizzled for wgmma (``HGMMA``), with out-of-bounds rows/columns
  (M, N and the K tail) filled with zeros by the hardware, so no masks are needed anywhere. The output goes
  out through a TMA store (``UTMASTG``), which clips at M and N.
- Software pipelining: the tile loop is ``tl.range(..., flatten=True)``, so Triton flattens the (tile, k)
  loop nest into one loop and pipelines it over ``num_stages`` shared-memory buffers: the TMA loads of the
  next tile's first K steps are issued while this tile's last wgmmas and its epilogue run.
- Epilogue subtiling (``EPILOGUE_SUBTILE``, from Triton's persistent-matmul tutorial): the 128xBLOCK_N fp32
  accumulator is split into two 128x(BLOCK_N/2) halves, each activated, rounded and TMA-stored on its own.
  The store staging buffer in shared memory halves (128x256 bf16: 64 KiB -> 32 KiB), which is what lets the
  128x256x64 tile keep 4 stages (4 x 48 KiB + 32 KiB = 224 KiB <= 227 KiB). (It does not lower the register
  count: 171 vs 169 with gelu on 3.6; ptxas schedules the whole epilogue either way.)
- Operand layouts: ``a`` row-major (K contiguous) or its transpose view (M contiguous, e.g. ``x.t()``), ``b``
  row-major (N contiguous) or the ``.t()`` view of an (N, K) row-major tensor (an nn.Linear weight): the
  descriptor is built on the contiguous storage and the loaded tile is ``.T``-viewed: wgmma reads 16-bit
  operands of either major order straight from shared memory (HGMMA ``tnspA``/``tnspB``), no copy.

When TMA cannot be used, ``gemm_tma`` calls the bundled ``tritondbg.kernels.gemm.gemm`` (same results up to
fp32 summation order): a TMA descriptor needs a 16-byte aligned base and 16-byte aligned leading strides
(for fp16/bf16: a multiple of 8 elements, so an odd K or N falls back), a unit stride in the last dimension,
an NVIDIA target of sm_90 or newer (Triton's active target: pre-Hopper NVIDIA and AMD fall back), and a
non-empty problem. See ``tma_plan``.

Interpreter (TRITON_INTERPRET=1). Checked on Triton 3.9 (and 3.6): the interpreter implements tensor
descriptors (``make_tensor_descriptor``/``load``/``store`` become numpy gathers/scatters with the same bounds
and zero padding, and it even asserts the 16-byte stride rule), and ``tl.range(flatten=...)`` runs as a plain
loop, so the TMA kernel itself runs on the CPU: no separate non-TMA path is needed. The only
interpreter-specific choice is the persistent grid: ``_INTERP_NUM_SMS`` = 4 programs, so that each program
walks several tiles (15 tiles of the tiny 16x16 config on 4 programs: 4, 4, 4, 3). Tiny cases with odd K
(the base gemm's) check the fallback; the ``tiny_tma*`` cases have 8-aligned K and N (and odd M, N/K tails,
a partial GROUP_M group) and run the TMA kernel.

Scratch memory. A device-side descriptor is written by the kernel into a global scratch buffer (128 bytes per
descriptor per program) that Triton asks ``triton.set_allocator``'s allocator for at every launch, on 3.6
and 3.9 alike (no allocator: "Kernel requires a runtime memory allocation, but no allocator was set").
``gemm_tma`` installs a torch allocator unless one is installed already. With 132 programs and 3
descriptors it is a 50 KB ``torch.empty`` from the caching allocator per launch (a few us of CPU, no GPU time).

Limits: M, N, K and the leading strides are int32 arguments and TMA coordinates are int32 tile corners (the
kernel forms no element offset such as row * stride itself; operands above 2^31 elements are untested). A
TMA box is at most 256 elements per dimension (the configs respect it). Bitwise deterministic for one
config (no split-K, no atomics).

Configs and predictions
-----------------------
Shared memory = num_stages x (BLOCK_M + BLOCK_N) x BLOCK_K x 2 B + the store buffer (BLOCK_M x BLOCK_N x 2 B,
halved by EPILOGUE_SUBTILE); the H200 allows 227 KiB (232,448 B) per CTA. Registers and shared memory below
are ptxas's for sm_90 (``tritondbg ir ... --case square_4096 --all-configs --stats``, Triton 3.6 / 3.9; no
config spills; the gelu epilogue adds ~10 registers; details and the commands in gemm_tma.md).

Anchors, H200, Triton 3.6, do_bench median, same-run perf gate (tests/bench/kernels_h200.md, session 2):
torch.matmul bf16 4096^3 189.9 us, 8192^3 1612.5 us, fp16 4096^3 196.8 us, matmul then gelu bf16 8192^3
1657.4 us; bundled gemm bf16 4096^3 190.7 us (721 TF/s), 8192^3 1557.5 us (706), + GELU 1607.4 us (684).
Per tile, 128x256 at K=4096: 64 K steps of 4.2 MFLOP, ~36 us at the SM's peak; the gelu epilogue is ~4K
cycles of MUFU work (2 MUFU ops x 32K outputs / 16 per clock) ~2.2 us, during which the tensor cores idle
(no warp specialization: see gemm_tma.md), i.e. ~3% at K=8192, as the bundled kernel measured (1557 -> 1607).

PREDICTIONS (bf16, do_bench median on the H200; fp16 within ~2%):

  1. 128x256x64 G8 w8 s4, subtiled epilogue. 3.6: 162 regs (gelu 171), 3.9: 165 (175); 229,408 B smem.
     4096^3 ~183 us (750 TF/s, 1.04x torch)   8192^3 ~1.50 ms (733 TF/s, 1.07x)   8192^3+gelu ~1.54 ms (1.08x)
     Why: the tile the bundled kernel already wins with (2 warpgroups of 64x256, 85 flop per byte of smem
     fill) plus what persistence and TMA remove: the per-tile pipeline ramp (~1 us x 4 tiles per SM at 4096^3,
     x 16 at 8192^3), address/mask math and cp.async issue in the consumer warps, and the epilogue no longer
     waits for the next tile's first loads (already in flight, flattened loop). Expected the autotuned pick.
  2. 128x256x64 G8 w8 s3, subtiled. 3.6: 160 regs (gelu 171), 3.9: 164 (175); 180,248 B.
     4096^3 ~189 us (727 TF/s)   8192^3 ~1.55 ms (710 TF/s)
     Why: one stage less of TMA latency hiding; kernels/gemm.py measured 3 stages 5-8% behind 4 stages.
  3. 128x256x64 G8 w8 s3, whole-tile epilogue. 3.6: 160 regs (gelu 169), 3.9: 164 (173); 213,016 B.
     4096^3 ~190 us   8192^3 ~1.56 ms; with gelu ~1% behind config 2 (the whole 128 fp32 values/thread
     are activated at once). Kept to measure what subtiling buys on its own.
  4. 128x128x64 G8 w8 s4, subtiled. 3.6: 95 regs (gelu 101), 3.9: 98 (136); 147,488 B.
     4096^3 ~210 us (655 TF/s)   8192^3 ~1.70 ms (647 TF/s)
     Why: 1.33x the L2->smem traffic per flop of 128x256 (64x128 per warpgroup); kernels/gemm.py measured this
     tile at 595 TF/s non-persistent at 8192^3.
  5. 128x128x64 G8 w4 s4, subtiled. 3.6: 157 regs (gelu 175), 3.9: 160 (168); 147,488 B.
     4096^3 ~225 us (610 TF/s)   8192^3 ~1.83 ms (600 TF/s)
     Why: one warpgroup issues all 8 wgmmas of a K step and waits on them alone; nothing overlaps its waits.
  6. 64x128x64 and 128x64x64 G8 w4 s4, subtiled. 90 regs (gelu 96-137); 106,528 B.
     4096^3 ~265 us (520 TF/s)   8192^3 ~2.1 ms (520 TF/s). For skinny problems only (M or N ~ 100s).
  7. 16x16x32 G4 w4 s3, subtiled (mma.sync, 32-40 regs, 5,392 B): tiny problems and the interpreter;
     pruned for M*N > 256^2, never a candidate at these sizes.
  Against the targets: >= 1.00x cuBLAS at 4096^3 and 8192^3: predicted met (1.04x / 1.07x); >= 1.15x
  matmul-then-gelu at 8192^3: predicted NOT met (~1.08x): it needs the fused kernel at ~1.44 ms, i.e. the
  GEMM itself ~11% faster than cuBLAS, which a single-instruction-stream (no producer warp, no ping-pong
  consumers) Triton kernel is not expected to reach on Hopper. Risks: power/clock capping at 8192^3 (a
  faster kernel draws more power; torch is 10% slower per flop at 8192^3 than at 4096^3 on this GPU), and
  the serialized subtile stores (the second half waits until TMA has read the first out of the one
  staging buffer: visible in the TTGIR as async_tma_store_wait before the second store).
"""
from __future__ import annotations

import dataclasses
import functools

import torch
import triton
import triton.language as tl

from tritondbg import Case
from tritondbg.kernels import gemm as _bundled
from tritondbg.kernels.gemm import ACTIVATIONS, _apply_activation
from tritondbg.scenarios import gemm as _base_scenario  # the module, not SCENARIO: one Scenario in this file

# ---------------------------------------------------------------------------------------------------------
# Autotune configs (same knobs and pruning idea as kernels/gemm.py, plus EPILOGUE_SUBTILE). Shared memory:
#   128x256x64: 48 KiB/stage: s4 192 + 32 (subtiled store) = 224 KiB; s3 144 + 32 = 176; s3 no subtile 208
#   128x128x64: 32 KiB/stage: s4 128 + 16 = 144 KiB
#    64x128x64 / 128x64x64: 24 KiB/stage: s4 96 + 8 = 104 KiB
# Accumulators: 128x256 fp32 over 8 warps = 128 regs/thread (two warpgroups of 64x256), 128x128 over
# 8 warps = 64, over 4 warps = 128. Exact registers/shared memory from ptxas: gemm_tma.md.
# ---------------------------------------------------------------------------------------------------------
def _cfg(bm, bn, bk, gm, warps, stages, subtile=True):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, EPILOGUE_SUBTILE=subtile),
                         num_warps=warps, num_stages=stages)


CONFIGS = [
    # Large problems (>= 4096^3): the 128x256 wgmma tile; subtiling is what makes 4 stages fit.
    _cfg(128, 256, 64, 8, 8, 4),
    _cfg(128, 256, 64, 8, 8, 3),
    _cfg(128, 256, 64, 8, 8, 3, subtile=False),
    # Mid-size problems: 128x128 (more tiles per SM round when 128x256 would leave SMs idle).
    _cfg(128, 128, 64, 8, 8, 4),
    _cfg(128, 128, 64, 8, 4, 4),
    # Skinny problems (M or N of a few hundred).
    _cfg(64, 128, 64, 8, 4, 4),
    _cfg(128, 64, 64, 8, 4, 4),
    # Small problems (M*N <= 256*256) and the interpreter: the tiny cases pin BLOCK_M=16,BLOCK_N=16,BLOCK_K=32
    # (kernels/gemm.py's tiny config, which this matches). Subtiled: the store halves are 16x8 (16 bytes wide,
    # TMA's minimum box width), so the interpreter also runs the split epilogue.
    _cfg(16, 16, 32, 4, 4, 3),
]

_SMALL_TILE = 32 * 32  # configs with BLOCK_M*BLOCK_N at or below this are for small problems only
_INTERP_NUM_SMS = 4    # persistent programs under the interpreter: several tiles per program (see docstring)
_CPU_NUM_SMS = 132     # compile-only capture (`tritondbg ir`, CPU tensors): the H200's SM count as stand-in


def _prune_configs(configs, named_args, **kwargs):
    """Drop configs that do not suit (M, N), as kernels/gemm.py does; always returns at least one config.

    - small tiles (<= 32x32) only when M*N <= 256*256;
    - tiles much larger than the problem: BLOCK_M > max(64, next_pow2(M)) or BLOCK_N > max(64, next_pow2(N)).
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
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Grouped ordering, as kernels/gemm.py: tile index -> (pid_m, pid_n); GROUP_M tile-rows column by column."""
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)  # the last group may have fewer tile-rows
    pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.autotune(configs=CONFIGS, key=["M", "N", "K", "A_TRANS", "B_TRANS", "ACTIVATION"],
                 prune_configs_by={"early_config_prune": _prune_configs})
@triton.jit
def gemm_tma_kernel(
    a_ptr,  # (M, K) fp16/bf16; A_TRANS=False: row-major, stride_a = row stride; True: the (M, K) view of a
            # (K, M) row-major tensor, stride_a = its row stride. 16-byte aligned, stride_a % 8 == 0.
    b_ptr,  # (K, N) same dtype; B_TRANS=False: row-major, stride_b = row stride; True: the (K, N) view of an
            # (N, K) row-major tensor (nn.Linear weight .t()), stride_b = its row stride. Same alignment.
    c_ptr,  # (M, N) output, contiguous (row stride N, N % 8 == 0), same dtype
    M, N, K,
    stride_a, stride_b,
    A_TRANS: tl.constexpr, B_TRANS: tl.constexpr,
    ACTIVATION: tl.constexpr,  # None, "gelu" or "silu": fused into the epilogue, one specialization each
    NUM_SMS: tl.constexpr,     # number of persistent programs (the grid is min(NUM_SMS, #tiles))
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
    tile_id_c = start_pid - NUM_SMS
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        offs_m = pid_m * BLOCK_M
        offs_n = pid_n * BLOCK_N

        # ---- main loop: one TMA box per operand per K step, wgmma into an fp32 accumulator -------------
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_K
            if A_TRANS:
                a = a_desc.load([offs_k, offs_m]).T  # (BLOCK_K, BLOCK_M) box: wgmma reads it M-major
            else:
                a = a_desc.load([offs_m, offs_k])
            if B_TRANS:
                b = b_desc.load([offs_n, offs_k]).T  # (BLOCK_N, BLOCK_K) box: wgmma reads it K-major
            else:
                b = b_desc.load([offs_k, offs_n])
            acc = tl.dot(a, b, acc)

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


# ---------------------------------------------------------------------------------------------------------
# Launch wrapper
# ---------------------------------------------------------------------------------------------------------
def _interpreted() -> bool:
    """Whether gemm_tma_kernel was built for the interpreter (TRITON_INTERPRET is read when @triton.jit runs):
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


def _tma_layout(t: torch.Tensor) -> bool | None:
    """How a 2-D fp16/bf16 tensor can be a TMA descriptor: False = row-major (last dim contiguous), True =
    transposed (first dim contiguous), None = neither (base or leading stride not 16-byte aligned)."""
    if t.data_ptr() % 16 != 0:
        return None
    s0, s1 = t.stride()
    elem = t.element_size()
    if s1 == 1 and (s0 * elem) % 16 == 0:
        return False
    if s0 == 1 and (s1 * elem) % 16 == 0:
        return True
    return None


def tma_plan(a: torch.Tensor, b: torch.Tensor) -> tuple[bool, bool] | None:
    """(A_TRANS, B_TRANS) when the TMA kernel can run on these operands, else None (the wrapper falls back).

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


def _torch_scratch(size: int, alignment: int, stream):
    """Triton's allocator protocol: global scratch for the device-side TMA descriptors (torch's caching
    allocator; its blocks are 512-byte aligned, more than the 128 bytes a descriptor needs)."""
    return torch.empty(size, device="cuda", dtype=torch.int8)


def _ensure_allocator() -> None:
    """Install _torch_scratch unless an allocator is set already (3.6 and 3.9 keep it in a ContextVar)."""
    try:
        from triton.runtime import _allocation

        if not isinstance(_allocation._allocator.get(), _allocation.NullAllocator):
            return
    except (ImportError, AttributeError):  # private module moved: set ours
        pass
    triton.set_allocator(_torch_scratch)


def gemm_tma(a: torch.Tensor, b: torch.Tensor, activation: str | None = None) -> torch.Tensor:
    """``act(a @ b)`` with the persistent TMA kernel when possible (see ``tma_plan``), else the bundled gemm."""
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.ndim != 2 or b.ndim != 2:
        return _bundled.gemm(a, b, activation)  # let the bundled wrapper raise its own clear error
    if (a.shape[1] != b.shape[0] or a.dtype not in (torch.float16, torch.bfloat16) or b.dtype != a.dtype
            or a.device != b.device or activation not in ACTIVATIONS):
        return _bundled.gemm(a, b, activation)  # same: input errors are reported there
    layout = tma_plan(a, b)
    if layout is None:
        return _bundled.gemm(a, b, activation)
    a_trans, b_trans = layout
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    num_sms = _num_sms(a.device)
    if a.device.type == "cuda":
        _ensure_allocator()

    def grid(meta):
        return (min(num_sms, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])),)

    gemm_tma_kernel[grid](
        a, b, c, M, N, K,
        a.stride(1) if a_trans else a.stride(0),
        b.stride(1) if b_trans else b.stride(0),
        A_TRANS=a_trans, B_TRANS=b_trans, ACTIVATION=activation, NUM_SMS=num_sms,
    )
    return c


# ---------------------------------------------------------------------------------------------------------
# Scenario: the bundled gemm's cases (tiny ones have K=91: they exercise the fallback), plus tiny cases with
# 8-aligned K and N that run the TMA kernel under the interpreter. The tiny config BLOCK_M=16,BLOCK_N=16,
# BLOCK_K=32 is the last entry of CONFIGS (GROUP_M=4, subtiled epilogue).
# ---------------------------------------------------------------------------------------------------------
# M=67 -> 5 tile-rows of 16 (one full GROUP_M=4 group and a partial one, a 3-row tail), N=40 -> 3 tile-cols
# (an 8-column tail: the second store half of the last column is entirely outside and clipped), K=88 -> 3
# K steps with a 24-deep tail (zero-filled by the descriptor). 15 tiles on 4 persistent programs.
_TINY_TMA = dict(M=67, N=40, K=88)
_TINY_CONFIG = dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=32)


def make_inputs(case, dtype, device, generator):
    """The bundled gemm's inputs, plus ``a_transposed``: a as the (M, K) view of a (K, M) row-major tensor."""
    p = case.params
    inputs = _base_scenario.make_inputs(case, dtype, device, generator)
    if p.get("a_transposed", False):
        at = torch.randn(p["K"], p["M"], generator=generator, device="cpu").to(device=device, dtype=dtype)
        inputs["a"] = at.t()
    return inputs


_TMA_CASES = [
    Case("tiny_tma", params=dict(_TINY_TMA), dtypes=("float16", "bfloat16"), config=_TINY_CONFIG,
         description="8-aligned K and N: TMA kernel; odd M, N and K tails, partial GROUP_M group, 4 programs"),
    Case("tiny_tma_gelu", params=dict(_TINY_TMA, activation="gelu"), dtypes=("float16", "bfloat16"),
         config=_TINY_CONFIG, description="TMA kernel, fused tanh-approximation GELU on the subtiled epilogue"),
    Case("tiny_tma_silu", params=dict(_TINY_TMA, activation="silu"), dtypes=("float16",), config=_TINY_CONFIG,
         description="TMA kernel, fused SiLU epilogue"),
    Case("tiny_tma_bt", params=dict(_TINY_TMA, b_transposed=True), dtypes=("float16", "bfloat16"),
         config=_TINY_CONFIG, description="b as the .t() view of an (N, K) tensor: B_TRANS descriptor"),
    Case("tiny_tma_at", params=dict(M=72, N=40, K=88, a_transposed=True, b_transposed=True),
         dtypes=("bfloat16",), config=_TINY_CONFIG,
         description="a and b both transposed views (M=72: 8-aligned leading stride of a.t())"),
]

SCENARIO_TMA = dataclasses.replace(
    _base_scenario.SCENARIO,
    name="gemm_tma",
    description="c = act(a @ b), persistent TMA (device-side descriptors) kernel for sm_90+, grouped ordering, "
                "flattened pipelined loop, subtiled fused gelu/silu epilogue; bundled gemm as fallback",
    make_inputs=make_inputs,
    launch=gemm_tma,
    kernels=[gemm_tma_kernel],
    cases=([c for c in _base_scenario.SCENARIO.cases if c.interpret] + _TMA_CASES
           + [c for c in _base_scenario.SCENARIO.cases if not c.interpret]),
    source="",
)
