"""How the row kernels (layernorm, softmax) tile a row of N columns: the config rule shared by both.

A row kernel reads each row once and writes it once, so it is bound by how many bytes each SM keeps in
flight. Two shapes of program:

- ``single``: a program holds ROWS whole rows in registers (a ROWS x BLOCK_N tile, BLOCK_N =
  next_power_of_2(N)), reads them once, reduces, writes. Short rows take several rows per program so that
  each program moves ~8 KiB (one 128-column row alone is 256 bytes: far too little to cover HBM latency),
  except on small inputs: there the rows per program shrink (to ~2 KiB, and to one row with more warps below
  FEW_PROGRAMS programs) until there are MIN_PROGRAMS programs: a 256K-element input in 8 KiB tiles would
  run on half the SMs.
  Warps: ~32 elements of the tile per thread (measured on the H200, Triton 3.6: 8192 columns at 85-91% of
  copy bandwidth with 8 warps, 68% with 16; 4096 at 89-90% with 4 warps).
- ``single`` / ``split`` for 8193..32768 columns (BLOCK_N up to WIDE_MAX_BLOCK): few rows (M <= FEW_ROWS) get one
  32-warp program per row holding the whole row; many rows of <= 16384 columns one 16-warp program per row.
- ``looped``: other long rows (many rows of > 16384 columns, or past WIDE_MAX_BLOCK)
  walk the row in chunks of BLOCK_N columns twice (statistics, then the output; the second pass reads the
  row back from L2). A 16384-column tile in registers leaves room for one program per SM, whose load,
  reduction and store then run one after another (the likely cause of issue 18's 0.40x F.layer_norm at a
  non-power-of-two length; the issue did not record which: tests/bench/sweep_h200.py measures them all).
- ``split``: rows of 4097..6144 columns held as two power-of-two blocks (4096 unmasked + a masked tail: 5000
  = 4096 + 904 of 1024) instead of one 8192 block with 25-50% padding, whose registers limit the programs
  per SM (run 1 on the H200: 5000 / 5120 at 67-73% of copy with the padded block, 86% at 8192).
- ``coop`` (softmax, on a GPU): few rows of 48 KiB or more (96 KiB above half the SM count), each cut into slices
  over several programs that meet at a per-row barrier in one cooperative launch (``coop_configs`` below;
  kernels/softmax.py ``softmax_coop_kernel``).
- ``stages`` >= 2 (single): persistent programs (as many as fit on the GPU at once, from the compiled
  kernel's registers and shared memory) walk tiles; Triton's pipeliner keeps the next tile's load in flight
  (cp.async into shared memory) while this tile is reduced and stored. Looped: the chunk loops pipelined
  (a config option: measured slower on the H200, LOOP_STAGES).

``VEC``: the largest power of two (up to 16 bytes of elements) dividing N and the row strides. The kernels
round N and the strides down to a multiple of VEC (a no-op by construction) so that Triton knows it: loads
and stores of rows whose length is not a multiple of 16 (N = 1000, 3000, 5000) then still vectorise to
16-byte accesses; without it Triton only assumes what its specialisation sees (divisible by 16, or nothing).

``VA`` (rows off 16-byte boundaries: an odd N such as GPT-2's 50257-token vocabulary, where no VEC > 1 divides
N): the kernels read each row from its 16-byte-aligned base in whole 16-byte vectors (``vec_step``: masks constant
over each vector) and take the row's ragged ends, under 16 bytes at each end, through 2 x 16 bytes of edge lanes
(``edges``); ``va`` says when (x and y must share the row stride: one offset serves both). softmax's rows of an
odd length held whole take that path one row per program; shorter ones (both kernels) small scalar tiles
(``odd_rows``). layernorm's looped kernel takes it; its single-pass and split kernels do not (weight and bias, read
at the row's columns, would go scalar: slower on the H200).
"""
from __future__ import annotations

from typing import NamedTuple

import triton
import triton.language as tl

from . import _launch

SINGLE_MAX_BLOCK = 8192   # largest BLOCK_N a single-pass program holds (see above)
TILE_BYTES = 8192         # bytes of input per single-pass program for short rows (rows per program)
LOOP_CHUNK = 4096         # columns per step of the looped kernels
LOOP_STAGES = 1           # pipelining depth of the looped kernels' chunk loops. H200 (runs 1 and 3 of session 6):
#                           2 (cp.async) was slower on every looped row: softmax 1024x32768 1.24x -> 0.97-1.03x
#                           torch, layernorm 3048x11008 1.37-1.44x -> 1.10-1.13x
SPLIT_MAX_FRACTION = 0.75  # rows of 4097..6144 columns: two blocks (4096 + tail) instead of a padded 8192
ELEMS_PER_THREAD = 32     # tile elements per thread (warps = tile / (32 * this), 4..16)
WIDE_MAX_BLOCK = 32768    # longest row (columns, padded) one program may hold whole (8193.. columns: see row_config)
FEW_ROWS = 264            # rows at or below which such long rows get one 32-warp program each (2 x an H200's SMs)
# Short rows of inputs too small for ~8 KiB tiles to fill the GPU (session 10, H200, fp16, do_bench with the L2
# flushed, tests/bench/explore_rows_small.py at 256K and 1M elements): tiles shrink towards MIN_TILE_BYTES until
# there are MIN_PROGRAMS programs, and below FEW_PROGRAMS programs to one row each, with more warps per row.
MIN_PROGRAMS = 1024        # ~8 per SM of an H200
MIN_TILE_BYTES = 2048
FEW_PROGRAMS = 256         # ~2 per SM
FEW_ELEMS_PER_THREAD = 16  # tile elements per thread below FEW_PROGRAMS programs


class RowConfig(NamedTuple):
    kind: str       # "single", "split" or "looped"
    block_n: int    # single: next_power_of_2(N); split: the largest power of two below N; looped: chunk
    rows: int       # rows per tile (single); 1 for looped
    num_warps: int
    stages: int = 1  # single: 1 = one tile per program; >= 2 = persistent programs, the next tile's load in
    #                 flight (cp.async into shared memory) while this one is reduced and stored. looped: the
    #                 pipelining depth of the chunk loops.
    per: int = 1     # coop: block_n-column steps per program (1: its slice of the row stays in registers)


def vec(n: int, *strides: int, elem_size: int) -> int:
    """Largest power of two <= 16 bytes / elem_size that divides n and every stride."""
    v = max(1, 16 // elem_size)
    while v > 1 and any(s % v for s in (n, *strides)):
        v //= 2
    return v


def _pow2_floor(n: int) -> int:
    """The largest power of two <= n, and 1 for n < 1."""
    return 1 << (max(n, 1).bit_length() - 1)


def _warps(tile: int) -> int:
    return min(16, max(4, tile // (32 * ELEMS_PER_THREAD)))


def row_config(N: int, elem_size: int, max_block_n: int, M: int | None = None,
               loop_chunk: int = LOOP_CHUNK) -> RowConfig:
    """The config the rule picks for rows of N columns of ``elem_size`` bytes.

    ``max_block_n`` (a power of two) caps every block (the wrappers' argument; tests lower it to force the
    looped path on small rows). ``M`` (rows), when given, caps the rows per program at what M needs and
    picks how rows of 8193..32768 columns are held. ``loop_chunk``: the looped kernel's chunk for many rows
    longer than 16384 columns (the wrapper's measured choice)."""
    block = triton.next_power_of_2(N)
    if block == SINGLE_MAX_BLOCK <= max_block_n and N <= SPLIT_MAX_FRACTION * block:
        # 4097..6144 columns: the 8192 block would leave >= 25% of its lanes padding (run 1: 5000 / 5120 at
        # 67-73% of copy against 86% at 8192): the row as 4096 + a power-of-two tail instead
        return RowConfig("split", block // 2, 1, 8)
    if block <= min(max_block_n, SINGLE_MAX_BLOCK):
        rows = max(1, TILE_BYTES // (block * elem_size))
        if M is not None and M < MIN_PROGRAMS * rows:
            # a small input: 8 KiB tiles would leave SMs idle or alone with HBM's latency (softmax 2048x128
            # fp16: 64 programs on 132 SMs, 6.30 us -> 4.67 us with 8 rows each; 4096x256: 7.22 -> 5.73 us
            # with 4; 64x4096: 6.18 -> 5.15 us with 16 warps; torch.softmax 5.9 / 6.8 / 6.1 us)
            lo = max(1, MIN_TILE_BYTES // (block * elem_size))
            rows = min(rows, max(lo, _pow2_floor(M // MIN_PROGRAMS)), _pow2_floor(M // FEW_PROGRAMS))
            tile = rows * block
            if triton.cdiv(M, rows) < FEW_PROGRAMS:
                return RowConfig("single", block, rows, min(16, max(4, tile // (32 * FEW_ELEMS_PER_THREAD))))
        return RowConfig("single", block, rows, _warps(rows * block))
    if SINGLE_MAX_BLOCK < block <= min(max_block_n, WIDE_MAX_BLOCK):
        # 8193..32768 columns (session 7, H200, bf16, tests/bench/sweep_h200.py --grid --long-rows): few rows
        # (8-24 rows of 11008-32768): the whole row in one program's registers with 32 warps, 7.9 us at
        # 8x32768 against 13.6 us looped (the row's two passes of 8 dependent chunk loads each were the cost);
        # many rows of <= 16384 columns: one program per row with 16 warps, as head + tail blocks when the
        # single block would be >= 25% padding (softmax 3048x11008 40.3 us vs 46.7 looped; 2048x16384
        # 40.8 vs 44.9).
        if M is not None and M <= FEW_ROWS:
            return RowConfig("single", block, 1, 32)
        if block <= 2 * SINGLE_MAX_BLOCK:
            if N <= SPLIT_MAX_FRACTION * block:
                return RowConfig("split", block // 2, 1, 16)
            return RowConfig("single", block, 1, 16)
    chunk = min(max_block_n, loop_chunk)
    # the looped kernels keep per-lane running state besides the chunk: ~16 chunk elements per thread
    return RowConfig("looped", chunk, 1, min(16, max(4, chunk // 512)), LOOP_STAGES)


# Rows of an odd length held whole (session 26, H200, softmax bf16, do_bench, tests/bench/explore_rows_long.py,
# runs/s26_short_odd.json): a row's start is off 16-byte boundaries, so the rule's even-N tiles run badly. Rows of
# at least ODD_ROW_BYTES (padded) take one row per program through the aligned path, ~16 elements a thread
# (32768x1001: 45.6 us with the rule's 4-row tiles, 37.0 so; an even 1000: 36.0); shorter ones keep scalar accesses
# in tiles of ~ODD_ROW_BYTES with a warp per 1024 elements (attention scores over CLIP's 77 tokens, 262144x77: 82.7
# -> 37.9 us; ViT's 197 patches, 151296x197: 61.6 -> 49.2; torch.softmax 54.6 / 60.0): one row per program is too
# little work there (95-162 us).
ODD_ROW_BYTES = 2048


def odd_rows(cfg: RowConfig, elem_size: int, aligned: bool = True, M: int | None = None) -> RowConfig:
    """The rule's single-pass config adapted to rows off 16-byte boundaries (above). ``aligned``: the kernel holds
    such rows whole through the aligned path (softmax); without it (layernorm, whose weight and bias loads then go
    scalar: slower, session 27) rows of ODD_ROW_BYTES or more keep the rule's config. ``M``: on inputs small enough
    that the rule shrank its tiles (row_config's small-input branch), short rows go two per program with a warp
    per 256 elements (session 27, softmax bf16, tests/bench/runs/s27_small_odd.json: 1331x197 7.3 us with 4 rows
    on one warp, 5.3 so, GPU time 3.05 -> 2.18, torch.softmax 5.4 / 2.1; 5323x197 8.0 -> 6.9): one warp per
    program leaves the GPU a few warps per SM there."""
    row_bytes = cfg.block_n * elem_size
    if row_bytes >= ODD_ROW_BYTES:
        if not aligned or cfg.rows == 1:
            return cfg
        return cfg._replace(rows=1, num_warps=min(4, max(1, cfg.block_n // 512)))
    if M is not None and M < MIN_PROGRAMS * max(1, TILE_BYTES // row_bytes):
        rows = min(cfg.rows, 2)
        return cfg._replace(rows=rows, num_warps=max(1, rows * cfg.block_n // 256))
    rows = min(cfg.rows, max(1, ODD_ROW_BYTES // row_bytes))
    return cfg._replace(rows=rows, num_warps=max(1, rows * cfg.block_n // 1024))


def va(x2, y2, v: int, block: int) -> int:
    """16 bytes of elements where x's rows start off 16-byte boundaries (v below that), x and y share their row
    stride (so one offset serves both) and the kernel's blocks hold whole vectors (``block`` >= that); else 1."""
    n = 16 // x2.element_size()
    return n if v < n <= block and x2.stride(0) == y2.stride(0) else 1


@triton.jit
def vec_step(start, cols, n_vec, lead, VA: tl.constexpr):
    """Offsets and mask of one step of BLOCK_N columns at ``start``. VA > 1: offsets from the row's aligned base,
    whole 16-byte vectors only (a mask constant over each), so that loads and stores vectorise; the ragged ends
    of the row are the edge lanes (``edges``)."""
    offs = start + cols
    if VA > 1:
        lo = lead - start  # the row's first column, in the step's lanes (start is a multiple of VA)
        hi = n_vec + lo
        lo = (lo + VA - 1) // VA * VA
        hi = hi // VA * VA
        return offs, (cols >= lo) & (cols < hi)
    return offs, offs < n_vec


@triton.jit
def edges(lead, n_vec, VA: tl.constexpr):
    """A row's ragged ends, relative to its 16-byte-aligned base (``lead``: the row's first column there; a scalar
    or a column of rows): 2 * VA edge lanes, the first VA over the row's first vector, the last VA over the vector
    after its last whole one. Returns their columns, the head lanes and the tail lanes that hold the row's
    elements outside its whole vectors (``vec_step``'s body), and the tail vector's column."""
    e = tl.arange(0, 2 * VA)
    body_at = (lead + VA - 1) // VA * VA  # the row's first whole vector
    tail_at = (lead + n_vec) // VA * VA  # the vector after its last whole one
    col = tl.where(e < VA, e, tail_at + e - VA)
    on_row = (col >= lead) & (col < lead + n_vec)
    return col, (e < VA) & (col < body_at) & on_row, (e >= VA) & (col >= body_at) & on_row, tail_at


@triton.jit
def aligned_row(x_ptr, y_ptr, row_at, n_vec, VA: tl.constexpr):
    """A row off 16-byte boundaries whose first element is ``row_at`` (x and y share the row stride): pointers to
    its 16-byte-aligned base in x and y, its first column there (``lead``), and its edge lanes (``edges``)."""
    base = row_at // VA * VA
    lead = (row_at - base).to(tl.int32)
    e_col, e_head, e_tail, tail_at = edges(lead, n_vec, VA)
    return x_ptr + base, y_ptr + base, lead, e_col, e_head, e_tail, tail_at


KINDS = ("single", "looped", "split", "coop")
# Few long rows (softmax's coop kernel): one program per row leaves most SMs idle while each row streams through
# one SM (H200, Triton 3.6, bf16, CUDA-graph GPU time, tests/bench/explore_rows_coop.py: 1x128256 25.8 us looped
# against 4.6 with the row over 63 programs; 8x32768 5.2 against 3.7; torch.softmax 30.3 / 9.2). Rows of at least
# COOP_MIN_ROW_BYTES, at most one row per two SMs, are cut into slices of COOP_MIN_SLICE columns or more: the
# smallest power of two giving at most COOP_PROGRAMS_PER_SM programs per SM. Up to one row per SM, rows of
# COOP_FULL_ROW_BYTES or more too. Session 26 (bf16, GPU time, tests/bench/runs/s26_coop_m128.json, s26_caps.json):
# one program per row against the rule's cut, 80x50257 12.6 -> 9.7 us, 100x128256 35.5 -> 20.7, 128x50257 13.2 ->
# 11.7, 128x151936 48.1 -> 36.5; rows of 64 KB stay whole there (128x32001: 7.6 whole, 8.1 cut). 4 programs per
# SM rather than 3: 3 doubles the slice to 64K columns at M >= 100 (100x128256 26.0 us against 20.7; 23 shapes of
# 1-128 rows of 24576-256000 columns: 258 us in all against 279; 32x32768 and 43x24576 4.4 -> 4.6-4.7).
COOP_MIN_ROW_BYTES = 48 * 1024
COOP_FULL_ROW_BYTES = 96 * 1024
COOP_MIN_SLICE = 2048
COOP_MAX_BLOCK = 8192      # columns held per step; longer slices loop (two passes, the second from L2)
COOP_PROGRAMS_PER_SM = 4


def coop_configs(M: int, N: int, elem_size: int, sms: int | None, max_block_n: int):
    """The coop configs worth trying for M rows of N columns on a GPU of ``sms`` SMs, best first (the wrapper
    takes the first whose programs fit on the GPU at once); empty when the rule keeps one program per row."""
    if not sms or M > sms or N * elem_size < (COOP_MIN_ROW_BYTES if 2 * M <= sms else COOP_FULL_ROW_BYTES):
        return []
    out = []
    slice_ = COOP_MIN_SLICE
    while slice_ < N:  # at least two slices a row
        if M * triton.cdiv(N, slice_) <= COOP_PROGRAMS_PER_SM * sms:
            block = min(slice_, COOP_MAX_BLOCK, max_block_n)
            out.append(RowConfig("coop", block, 1, min(8, max(4, block // 512)), 1, slice_ // block))
        slice_ *= 2
    return out


def split_tail(N: int, head: int) -> int:
    """The tail block of a split row: next_power_of_2(N - head)."""
    return triton.next_power_of_2(N - head)


def check_config(config, max_block_n: int, N: int) -> RowConfig:
    """A caller-given config (benchmarks): checked, returned as a RowConfig."""
    c = RowConfig(*config)
    if c.kind not in KINDS:
        raise ValueError(f"config kind must be one of {', '.join(map(repr, KINDS))}, got {c.kind!r}")
    if c.kind == "split" and not (c.block_n < N < 2 * c.block_n and c.rows == 1):
        raise ValueError(f"a split config needs block_n < N={N} < 2 * block_n and rows 1, got {tuple(c)}")
    for name in ("block_n", "rows", "num_warps"):
        v = getattr(c, name)
        if not isinstance(v, int) or v < 1 or v & (v - 1):
            raise ValueError(f"config {name} must be a power of two >= 1, got {v!r}")
    if c.kind == "single" and c.block_n < N:
        raise ValueError(f"config block_n {c.block_n} < N={N} for the single-pass kernel")
    if c.kind in ("looped", "coop") and c.rows != 1:
        raise ValueError(f"config rows must be 1 for the {c.kind} kernel")
    if not isinstance(c.per, int) or c.per < 1:
        raise ValueError(f"config per must be an int >= 1, got {c.per!r}")
    if not isinstance(c.stages, int) or not 1 <= c.stages <= 4:
        raise ValueError(f"config stages must be 1..4, got {c.stages!r}")
    return c


# ---------------------------------------------------------------------------------------------------------
# Launch (both wrappers): the grid, persistent programs by occupancy, the cached launcher
# ---------------------------------------------------------------------------------------------------------
_PROGRAMS: dict = {}  # (kernel, constexprs, warps, stages, device) -> persistent programs for the whole GPU


def _device_properties(index: int) -> dict:
    return triton.runtime.driver.active.utils.get_device_properties(index)


def _persistent_programs(kernel, tensors, scalars: dict, consts: dict, cfg: RowConfig) -> int:
    """Programs that fit on the GPU at once (SMs x CTAs per SM by registers, shared memory and warps), from
    the compiled kernel (as Triton's fused-softmax tutorial does): more would run as a second wave."""
    dev = tensors[0].device
    key = (kernel, tuple(sorted(consts.items())), cfg.num_warps, cfg.stages, dev)
    n = _PROGRAMS.get(key)
    if n is None:
        compiled = kernel.warmup(*tensors, *scalars.values(), **consts, num_warps=cfg.num_warps, grid=(1,))
        if hasattr(compiled, "result"):
            compiled = compiled.result()
        compiled._init_handles()
        props = _device_properties(dev.index or 0)
        threads = 32 * cfg.num_warps
        per_sm = min(props["max_num_regs"] // max(1, compiled.n_regs * threads), 2048 // threads, 32)
        smem = compiled.metadata.shared
        if smem:
            per_sm = min(per_sm, props["max_shared_mem"] // smem)
        n = _PROGRAMS[key] = props["multiprocessor_count"] * max(1, per_sm)
    return n


def launch(kernel, launches, sig, tensors: tuple, scalars: dict, consts: dict, cfg: RowConfig, n_tiles: int, out):
    """``kernel`` over ``n_tiles`` tiles (one program per tile, or persistent programs when cfg.stages > 1 on a
    GPU); records the cached launcher for ``sig``."""
    grid = (n_tiles,)
    if cfg.kind == "single" and cfg.stages > 1 and _launch.launchable(tensors[0]) and _launch.pristine(kernel):
        grid = (min(n_tiles, _persistent_programs(kernel, tensors, scalars, consts, cfg)),)
    compiled = kernel[grid](*tensors, *scalars.values(), **consts, num_warps=cfg.num_warps)
    launches.record(sig, compiled, grid, tensors, {**scalars, **consts}, out=out)
