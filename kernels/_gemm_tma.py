"""gemm's Hopper path: the persistent TMA kernel ``gemm_tma_kernel`` (after Triton's persistent-matmul tutorial).

Same contract as kernels/gemm.py's pointer kernel (``c = act(a @ b)``, fp16/bf16, fp32 accumulation, one
rounding); gemm.py's ``tma_plan`` decides when it runs and ``_launch_tma`` launches it (``TAIL_SPLIT_MAX`` lives
there, beside the launch that passes it); gemm.py re-exports every name defined here. Grouped tile ordering and
the activation are kernels/_gemm_parts.py's, shared with the pointer kernel.

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
- Under the interpreter the persistent grid is gemm.py's ``_INTERP_NUM_SMS`` = 4 programs, so each walks
  several tiles; the scenario's ``tiny_tma*`` cases (8-aligned K and N) run this kernel, its ``tiny*`` cases
  (K = 91) the pointer kernel.
- Not used: ``tl.range(..., warp_specialize=True)`` compiles for sm_90 (Triton 3.6 and 3.9) but makes no
  partitions there (automatic warp specialization targets Blackwell), so the epilogue, GELU included, does
  not overlap the next tile's wgmmas; host-side ``TensorDescriptor`` arguments would avoid the scratch
  allocator and the per-program descriptor creation.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import _scratch
from ._autotune import autotune_bench
from ._gemm_parts import _apply_activation, _cfg, _prune_configs, _tile_coords

# Configs: kernels/gemm.py's CONFIGS (shared memory and registers per tile are explained there) plus, for this
# kernel, the store's staging buffer: BLOCK_M x BLOCK_N x 2 B, halved by EPILOGUE_SUBTILE
# (128x256 s4 subtiled: 192 + 32 = 224 KiB; s3: 176; s3 whole-tile: 208).
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


@triton.jit
def _tma_desc(ptr, rows, cols, stride, TRANS: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Device-side TMA descriptor of a (rows, cols) operand, boxes of BLOCK_R x BLOCK_C, built on its contiguous
    storage: row-major with row stride ``stride``, or (TRANS) the transpose, a (cols, rows) row-major tensor
    with row stride ``stride`` whose boxes are BLOCK_C x BLOCK_R. Out-of-bounds parts of a box read as 0 and
    are not written. Both TMA kernels (this one, kernels/_fp8_tma.py's) describe their operands with it."""
    # one return statement: Triton checks every return's type, a constexpr-dead one too (the two types differ)
    if TRANS:
        desc = tl.make_tensor_descriptor(ptr, shape=[cols, rows], strides=[stride, 1],
                                         block_shape=[BLOCK_C, BLOCK_R])
    else:
        desc = tl.make_tensor_descriptor(ptr, shape=[rows, cols], strides=[stride, 1],
                                         block_shape=[BLOCK_R, BLOCK_C])
    return desc


@triton.jit
def _tma_box(desc, row, col, TRANS: tl.constexpr):
    """The (BLOCK_R, BLOCK_C) box at (row, col) of an operand ``_tma_desc`` describes; a TRANS operand's box is
    loaded as stored and ``.T``-viewed (wgmma reads either major order from shared memory, no copy)."""
    if TRANS:
        box = desc.load([col, row]).T
    else:
        box = desc.load([row, col])
    return box


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
    a_desc = _tma_desc(a_ptr, M, K, stride_a, A_TRANS, BLOCK_M, BLOCK_K)
    b_desc = _tma_desc(b_ptr, K, N, stride_b, B_TRANS, BLOCK_K, BLOCK_N)
    c_desc = _tma_desc(c_ptr, M, N, N, False, BLOCK_M, BLOCK_N // 2 if EPILOGUE_SUBTILE else BLOCK_N)

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
            acc = tl.dot(_tma_box(a_desc, offs_m, k0, A_TRANS), _tma_box(b_desc, k0, offs_n, B_TRANS), acc)

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
                acc = tl.dot(_tma_box(a_desc, om, k0, A_TRANS), _tma_box(b_desc, k0, on, B_TRANS), acc)
            _split_tail_sum(acc, c_ptr, ws_ptr, cnt_ptr, M, N, pid_m, pid_n, t, s, n_split, ACTIVATION,
                            BLOCK_M, BLOCK_N)


def tma_programs(M: int, N: int, K: int, meta: dict, num_sms: int, tail_max: int) -> int:
    """gemm_tma_kernel's grid for config ``meta``: ``num_sms`` persistent programs, or with fewer tiles than
    SMs one per tile, times the K split of its rule when at most half the SMs would have a tile."""
    tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
    if tiles >= num_sms:
        return num_sms
    ways = min(num_sms // max(tiles, 1), tail_max, triton.cdiv(K, meta["BLOCK_K"]))
    return tiles * ways if ways > 1 else tiles


def _tail_scratch(device, num_sms: int):
    """The TMA kernel's split-tail workspace and counters (zero between launches), one set per (device, stream)
    for the process's life (kernels/_scratch.py). The workspace holds num_sms fp32 tiles of 256 x 256 (a
    TMA box's largest sides: 34.6 MB at 132 SMs), so any config, also one a tool pins from outside
    TMA_CONFIGS, fits (the kernel writes at most num_sms tiles)."""
    tile = max([256 * 256] + [c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"]
                              for c in getattr(gemm_tma_kernel, "configs", TMA_CONFIGS)])
    return _scratch.Scratch(device, ("tma_ws", num_sms * tile, torch.float32), ("tma_cnt", num_sms, torch.int32))


def _tail_buffers(device, num_sms: int):
    """(workspace, counters) of the current stream (``_tail_scratch``)."""
    return _tail_scratch(device, num_sms)()
