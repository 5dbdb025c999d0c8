"""fp8_gemm's Hopper path for large M: a persistent TMA (tensor-descriptor) kernel, ``fp8_gemm_tma_kernel``.

Same contract as ``fp8_gemm_kernel`` (kernels/fp8_gemm.py): ``c = (a @ b) * scale_a * scale_b`` for fp8 e4m3
``a`` (M, K) and ``b`` (K, N), fp32 per-tensor or per-row / per-column scales, one rounding to ``out_dtype``,
precise accumulation (``max_num_imprecise_acc=BLOCK_K``: each BLOCK_K-deep wgmma chain is promoted to the fp32
accumulator) unless FAST_ACCUM. Modelled on gemm.py's ``gemm_tma_kernel``:

- persistent: ``min(#SMs, #tiles)`` programs walk the tiles in grouped (GROUP_M) order; the (tile, k) nest is
  flattened (``tl.range(..., flatten=True)``) so the next tile's first TMA loads overlap this tile's epilogue;
- ``a`` row-major (K-major) and ``b`` either the (K, N) view of an (N, K) row-major weight (``w.t()``: K-major,
  what Hopper's fp8 wgmma and torch._scaled_mm want; B_TRANS=True) or a row-major (K, N) tensor (B_TRANS=False:
  the compiler transposes the tile for wgmma; correct, expected slow, as with the pointer kernel);
- TMA zero-fills out-of-bounds boxes (M, N, K tails: no masks) and clips the TMA store at M and N;
- the scales multiply the fp32 accumulator in the epilogue (per-row / per-column vectors by masked loads);
  EPILOGUE_SUBTILE stores the tile as two BLOCK_M x BLOCK_N/2 halves (half the store's staging buffer).
- WARP_SPEC (explore candidates only, not in TMA_CONFIGS): one tile per program (not persistent), the K loop
  ``tl.range(..., warp_specialize=True)`` (Hopper, 4 warps: producer warps issue the TMA loads, consumer
  warpgroups the wgmmas; with 8 warps Triton makes no partitions), with EPILOGUE_SUBTILE=False (Triton 3.6's
  warp-specialisation pass fails on the subtiled epilogue's reshape/split: "unsupported op type"). A
  warp-specialised fp8 TMA kernel was wrong on the H200 once (see fp8_gemm.py's docstring) and the
  interpreter ignores warp_specialize: only a GPU check may admit it.

``tma_plan`` decides when this kernel applies (NVIDIA sm_90+ or the interpreter; 16-byte aligned bases and
leading strides; ``a`` row-major; the output row 16 bytes aligned); everything else takes the pointer kernel.
Under the interpreter the persistent grid is ``_INTERP_NUM_SMS`` programs (gemm.py's), so each walks several
tiles.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._autotune import autotune_bench
from .gemm import _ensure_allocator, _hopper_target, _num_sms, _tile_coords  # noqa: F401 (re-exported)
from ._gemm_tma import _tma_box, _tma_desc


def _cfg(bm, bn, bk, gm, warps, stages, sub=False, ws=False):
    return triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, EPILOGUE_SUBTILE=sub, WARP_SPEC=ws),
                         num_warps=warps, num_stages=stages)


# ---------------------------------------------------------------------------------------------------------
# Configs. Shared memory = stages x (BLOCK_M + BLOCK_N) x BLOCK_K bytes (fp8) + the store's staging buffer
# (BLOCK_M x BLOCK_N x 2 B for bf16, halved by EPILOGUE_SUBTILE); an H200 SM allows 227 KiB.
# Registers: the fp32 accumulator is BLOCK_M*BLOCK_N/(32*warps) a thread; precise accumulation adds a
# same-sized partial, so 4 warps (128x128: 128 + 128) or 128x256 / 256x128 at 8 warps sit at the cap of 255.
# Figures: sm_90 compile on the CPU (`python tests/bench/explore_fp8.py --survey`, Triton 3.9, bf16 out, b
# K-major), "regs/spills, shared KiB", precise accumulation | fast; Triton 3.6 within a few registers, same
# spills (tests/bench/explore_fp8.md). Spilling (precise) and left out:
# 128x256x128 w8 s3 (255/18; fast 255/0: kept for FAST_ACCUM only), 256x128x128 w4 (255/74),
# 128x256x128 w4 (255/148). The pointer kernel's 256x128x128 w8 s3 spills 4 words (255/4); this one does not.
# WARP_SPEC (module docstring) is not listed: right on the H200 but never the fastest (below).
# H200, Triton 3.6, 2026-11-30, `python tests/bench/explore_fp8.py --budget-s 80` (do_bench median, L2 flushed),
# 8192^3 precise against torch._scaled_mm's 756 us: 256x128x128 w8 s3 whole-tile store 959 us (0.79x), s4 sub
# 996, 128x128x256 s3 sub 1027, s3 sub 1033, 128x128x128 s4 sub 1261; warp-specialised 256x128x128 w4 s3 1012;
# the pointer kernel's best 1125 (0.67x). Fast accumulation: 128x256x128 s3 sub 750 us (1.04x; torch's fast
# 783) but 1884 outputs outside the 3e-2 bound, as torch's own fast mode. Other shapes' winners:
# 256x128x128 w8 s3 (1024x8192x8192, 0.86x), s3 sub (4096^3, 0.88x), s4 sub (8192x8192x4096, 0.79x).
# ---------------------------------------------------------------------------------------------------------
TMA_CONFIGS = [
    _cfg(256, 128, 128, 8, 8, 3),            # whole-tile store: 208 KiB; the 8192^3 winner
    _cfg(256, 128, 128, 8, 8, 3, sub=True),  # 254/0, 176 KiB | 255/0
    _cfg(128, 128, 256, 8, 8, 3, sub=True),  # 154/0, 208 KiB | 127/0
    _cfg(128, 128, 128, 8, 8, 4, sub=True),  # 155/0, 144 KiB | 128/0
    _cfg(256, 128, 128, 8, 8, 4, sub=True),  # 255/0, 224 KiB | 254/0
    _cfg(128, 256, 128, 8, 8, 3, sub=True),  # FAST_ACCUM only (_prune_configs): 255/0, 176 KiB (precise: 18 spills)
    # mid M (65..255) / few tiles
    _cfg(64, 128, 128, 8, 4, 4, sub=True),   # 155/0, 104 KiB | 95/0
    # small problems and the interpreter (the tiny_tma cases pin it): halves 16 x 16 (32 bytes wide in bf16)
    _cfg(16, 32, 64, 4, 4, 3, sub=True),     # 46/0, 9 KiB
]
FAST_ONLY = {(128, 256, 128)}  # tiles that spill with precise accumulation

# Row-major (K, N) b through TMA (B_TRANS=False): correct (the interpreter cases, explore_fp8.py --kn), but
# its speed on the H200 is unmeasured, so such calls keep the pointer kernel until a GPU run says otherwise.
ROW_MAJOR_B = False
# False: every large-M call takes the pointer kernel (one switch, should the H200 run say the TMA path loses)
ENABLED = True
_INTERP_NUM_SMS = 4  # persistent programs under the interpreter (gemm.py uses the same figure)


def _prune_configs(configs, named_args, **kwargs):
    """fp8_gemm.py's rule (BLOCK_M <= max(64, next_pow2(M)); 64+ rows for M >= 256; narrow tiles only for
    N <= 2048), and FAST_ONLY tiles only with FAST_ACCUM; always returns at least one config."""
    args = {**named_args, **kwargs}
    M, N = int(args["M"]), int(args["N"])
    fast = bool(args.get("FAST_ACCUM", False))
    max_bm = max(64, triton.next_power_of_2(M))
    kept = [c for c in configs
            if not (c.kwargs["BLOCK_M"] > max_bm or (c.kwargs["BLOCK_M"] < 64 and M >= 256)
                    or (c.kwargs["BLOCK_N"] < 64 and N > 2048)
                    or (not fast and (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"]) in FAST_ONLY))]
    return kept or [min(configs, key=lambda c: c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"])]


@triton.jit
def _fp8_tile_dot(a_desc, b_desc, offs_m, offs_n, ki, acc, B_TRANS: tl.constexpr, BLOCK_K: tl.constexpr,
                  FAST_ACCUM: tl.constexpr):
    offs_k = ki * BLOCK_K
    a = _tma_box(a_desc, offs_m, offs_k, False)
    b = _tma_box(b_desc, offs_k, offs_n, B_TRANS)  # B_TRANS: a (BLOCK_N, BLOCK_K) box of the (N, K) weight, K-major
    # one return statement (two put some of the dot's locations on the blank line after the function)
    if FAST_ACCUM:
        acc = tl.dot(a, b, acc)
    else:
        acc = tl.dot(a, b, acc, max_num_imprecise_acc=BLOCK_K)  # promotion every BLOCK_K products (fp8_gemm_kernel)
    return acc


@triton.autotune(configs=TMA_CONFIGS, key=["M", "N", "K", "B_TRANS", "FAST_ACCUM"],
                 prune_configs_by={"early_config_prune": _prune_configs}, do_bench=autotune_bench)
@triton.jit
def fp8_gemm_tma_kernel(
    a_ptr,        # (M, K) float8e4nv row-major, row stride stride_a (% 16 == 0), 16-byte aligned
    b_ptr,        # (K, N) float8e4nv; B_TRANS: the view of an (N, K) row-major tensor (stride_b its row
                  # stride), else row-major (K, N) with row stride stride_b; 16-byte aligned, stride % 16 == 0
    c_ptr,        # (M, N) out_dtype, contiguous (N * elem % 16 == 0)
    scale_a_ptr,  # fp32: 1 value or M (SCALE_A_ROWS)
    scale_b_ptr,  # fp32: 1 value or N (SCALE_B_COLS)
    M, N, K,
    stride_a, stride_b,
    SCALE_A_ROWS: tl.constexpr, SCALE_B_COLS: tl.constexpr,
    B_TRANS: tl.constexpr,
    FAST_ACCUM: tl.constexpr,
    NUM_SMS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    EPILOGUE_SUBTILE: tl.constexpr,
    WARP_SPEC: tl.constexpr,
):
    start_pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    num_tiles = num_pid_m * num_pid_n

    a_desc = _tma_desc(a_ptr, M, K, stride_a, False, BLOCK_M, BLOCK_K)
    b_desc = _tma_desc(b_ptr, K, N, stride_b, B_TRANS, BLOCK_K, BLOCK_N)  # B_TRANS: on the (N, K) storage
    c_desc = _tma_desc(c_ptr, M, N, N, False, BLOCK_M, BLOCK_N // 2 if EPILOGUE_SUBTILE else BLOCK_N)

    if WARP_SPEC:
        # one tile per program (grid = #tiles): the plain form of Triton's Hopper warp specialisation (a
        # warp-specialised loop nested in the persistent tile loop is untested on 3.6)
        pid_m, pid_n = _tile_coords(start_pid, num_pid_m, num_pid_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in tl.range(k_tiles, warp_specialize=True):
            acc = _fp8_tile_dot(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, ki, acc, B_TRANS, BLOCK_K,
                                FAST_ACCUM)
        _fp8_epilogue(c_ptr, c_desc, acc, scale_a_ptr, scale_b_ptr, pid_m * BLOCK_M, pid_n * BLOCK_N, M, N,
                      SCALE_A_ROWS, SCALE_B_COLS, BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE)
    else:
        # the epilogue's own tile counter (see gemm_tma_kernel: the pipeliner hoists the next tile's prologue)
        tile_id_c = start_pid - NUM_SMS
        for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
            pid_m, pid_n = _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for ki in range(k_tiles):
                acc = _fp8_tile_dot(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, ki, acc, B_TRANS, BLOCK_K,
                                    FAST_ACCUM)
            tile_id_c += NUM_SMS
            pid_m_c, pid_n_c = _tile_coords(tile_id_c, num_pid_m, num_pid_n, GROUP_M)
            _fp8_epilogue(c_ptr, c_desc, acc, scale_a_ptr, scale_b_ptr, pid_m_c * BLOCK_M, pid_n_c * BLOCK_N,
                          M, N,
                          SCALE_A_ROWS, SCALE_B_COLS, BLOCK_M, BLOCK_N, EPILOGUE_SUBTILE)


@triton.jit
def _fp8_epilogue(c_ptr, c_desc, acc, scale_a_ptr, scale_b_ptr, offs_cm, offs_cn, M, N,
                  SCALE_A_ROWS: tl.constexpr, SCALE_B_COLS: tl.constexpr, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr):
    """Scales in fp32, one rounding to c's dtype, TMA store clipped at M and N (two halves if subtiled)."""
    dtype = c_ptr.dtype.element_ty
    if SCALE_A_ROWS:
        rows = offs_cm + tl.arange(0, BLOCK_M)
        acc = acc * tl.load(scale_a_ptr + rows, mask=rows < M, other=0.0)[:, None]
    else:
        acc = acc * tl.load(scale_a_ptr)
    if SCALE_B_COLS:
        cols = offs_cn + tl.arange(0, BLOCK_N)
        acc = acc * tl.load(scale_b_ptr + cols, mask=cols < N, other=0.0)[None, :]
    else:
        acc = acc * tl.load(scale_b_ptr)
    if EPILOGUE_SUBTILE:
        halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
        acc0, acc1 = tl.split(halves)
        c_desc.store([offs_cm, offs_cn], acc0.to(dtype))
        c_desc.store([offs_cm, offs_cn + BLOCK_N // 2], acc1.to(dtype))
    else:
        c_desc.store([offs_cm, offs_cn], acc.to(dtype))


# ---------------------------------------------------------------------------------------------------------
# Host side: when the kernel applies, and its launch
# ---------------------------------------------------------------------------------------------------------
def interpreted() -> bool:
    """The kernels were built for the interpreter (TRITON_INTERPRET is read when @triton.jit runs)."""
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(fp8_gemm_tma_kernel.fn, InterpretedFunction)


def tma_plan(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> bool | None:
    """B_TRANS (True: b is K-major, the ``.t()`` view of an (N, K) row-major tensor; False: b row-major) when
    fp8_gemm_tma_kernel can run on these (checked, non-empty) operands, else None (the pointer kernel).
    A row-major b takes this kernel only under the interpreter or with ROW_MAJOR_B set.

    Needs Triton's target NVIDIA sm_90+ (or the interpreter), ``a`` row-major, every base 16-byte aligned,
    every descriptor's leading stride a multiple of 16 bytes, and ``c`` contiguous."""
    M, K = a.shape
    N = b.shape[1]
    if not ENABLED or min(M, N, K) == 0 or (N * c.element_size()) % 16 or not c.is_contiguous():
        return None
    if not (interpreted() or _hopper_target()):
        return None
    if (a.data_ptr() | b.data_ptr() | c.data_ptr()) % 16:
        return None
    sa0, sa1 = a.stride()
    if sa1 != 1 or sa0 <= 0 or sa0 % 16:
        return None
    sb0, sb1 = b.stride()
    if sb0 == 1 and sb1 > 0 and sb1 % 16 == 0 and not (sb1 == 1 and N == 1):
        b_trans = True
    elif sb1 == 1 and sb0 > 0 and sb0 % 16 == 0 and (ROW_MAJOR_B or interpreted()):
        b_trans = False
    else:
        return None
    return b_trans


def launch_args(a, b, c, sa, sb, sa_rows: bool, sb_cols: bool, b_trans: bool, fast_accum: bool):
    """(grid, values) for ``fp8_gemm_tma_kernel[grid](a, b, c, sa, sb, *values.values())``; installs the
    descriptor-scratch allocator on CUDA."""
    M, K = a.shape
    N = b.shape[1]
    num_sms = _INTERP_NUM_SMS if interpreted() else _num_sms(a.device)
    if a.device.type == "cuda":
        _ensure_allocator()

    def grid(meta):  # persistent: min(#SMs, #tiles) programs; WARP_SPEC: one program per tile
        tiles = triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])
        return (tiles if meta.get("WARP_SPEC") else min(num_sms, tiles),)

    values = dict(M=M, N=N, K=K, stride_a=a.stride(0), stride_b=b.stride(1) if b_trans else b.stride(0),
                  SCALE_A_ROWS=sa_rows, SCALE_B_COLS=sb_cols, B_TRANS=b_trans, FAST_ACCUM=bool(fast_accum),
                  NUM_SMS=num_sms)
    return grid, values
