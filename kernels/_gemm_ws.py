"""Which kernel runs a ``gemm`` (or a large-M ``fp8_gemm``) call on Hopper: the tl kernels or the warp-specialised
Gluon kernel (kernels/_gemm_gluon.py), decided by a race on a call signature's first call.

Why a race and not a rule: on the H200 (session 11, ``python tests/bench/gluon_gemm.py --timer graph``, GPU time)
the Gluon kernel beat the tl kernels at M = 127 by 10-37% (127x4096x4096 10.3 vs 14.1 us, torch 9.4), tied
them at M = 1024 on 4096 / 6144 columns, and lost at 1024x5120x13824 (240 vs 229 us: the tl kernel's split tail);
its best tile changed with N at one M. A rule fitted to those eight shapes would be wrong on the ninth: the race
measures the call itself, on the user's GPU.

``race`` runs after the tl path has computed a signature's first call and cached its launcher, when ``eligible``:
Gluon's Hopper API imports, an sm_90 GPU, CUDA 16-bit operands, no activation, 0 < M <= 2048 (the gemm tiles above
M = 32, the Gluon decode kernel's candidates up to M = 64: ``decode_candidates``), a row-major a and a
row-major or K-major b that TMA can describe (16-byte aligned base and row stride), the Gluon kernel's launch path
unpatched (``tritondbg ir`` captures the tl kernels), no tl config pinned by a tool (``_launch.PINNED``:
``tritondbg run --config``), no CUDA graph capture under way. Each candidate tile (``candidates``: by M) is built,
checked against the tl output (max error within 2^-6 of the largest output) and timed against the tl path's steady
call on the GPU (kernels/_race.py: the mechanism, GPU time, rotated rounds; GEMM_MARGIN); a winner replaces the
signature's cached launcher.
Not above M = 2048: there the tl persistent kernel ties cuBLAS (tests/bench/sweep_h200.md), and on the H200 the
Gluon kernel's race wins at 4096^3 and 8192^3 (196.8 vs 205.0 us, 1596 vs 1707 us, timed one after the other)
did not hold in the sweep's interleaved rounds (0.94x / 0.96x torch against the tl kernel's 0.97-1.01x).
fp8_gemm (``eligible_fp8``: K-major b, per-tensor scales, a 16-bit output) races its tiles the same way, at every
M (M <= 64 against the decode kernel, fp8_gemm ``_race_decode``): on the H200 the pipelined promotion
(kernels/_gemm_gluon.py) took 8192^3 from 997 us (tl) to 770.
``TRITONDBG_GLUON_GEMM=0`` turns the race off (both).
Each call the Gluon kernel serves sets ``_launch.SERVED``, which tritondbg run / check / the perf gate report beside
the autotuners' configs ("gluon_gemm_kernel ... (raced)").
The race costs its launches once per signature, like the autotuner's (~0.1-0.5 s; the Gluon compile once per
config and dtype, cached on disk).
"""
from __future__ import annotations

import os

import torch

from . import _launch, _race
from ._gemm_host import _tma_layout
from ._race import MARGIN, agrees, pick  # noqa: F401 - re-exported: the tests and bench scripts use them here

try:
    from . import _gemm_gluon as GK
except ImportError:  # Triton without Gluon's Hopper API (or a later one that moved it): the tl kernels only
    GK = None
except AssertionError:  # Gluon imported first after TRITON_INTERPRET was turned off in a process whose triton.language
    GK = None            # was built interpreted (Gluon asserts on it): the tl kernels only, never an import error
try:
    from . import _gluon_decode as GD
except (ImportError, AssertionError):  # as above: no Gluon decode candidate
    GD = None

# The lead a Gluon candidate needs over the tl path in gemm's and fp8_gemm's races (kernels/_race.py's default is
# 3%). H200, session 22 (``TRITONDBG_RACE_MARGIN=0.01 python tests/bench/sweep_h200.py --only gemm --gemm-m 1024
# --dtypes bfloat16``, tests/bench/runs/s22_sweep_gemm_1024_m1.*): candidates 2.2-2.8% ahead in their race, which
# 3% left unused, took 1024x4096x11008 from 0.97x to 0.99x torch and 1024x5120x13824 from 0.91x to 0.95x, no row
# lower; a race's rounds move by under 1% (fp8_gemm DECODE_MARGIN, session 19)
GEMM_MARGIN = 0.015
WS_MIN_M = 32  # M at or below: no gemm tile in the race (a 64-row tile would be at least half padding)
DECODE_MAX_M = 64  # M at or below: the Gluon decode kernel's candidates (kernels/_gluon_decode.py) race too
WS_MAX_M = 2048  # above: the tl persistent kernel, which ties cuBLAS there (module docstring)
GROUP_M = 8
# (BLOCK_M, BLOCK_N, BLOCK_K, STAGES, num_warps[, ping-pong]); shared memory <= 227 KiB each (16-bit)
SPLIT = "sk"  # a candidate's 7th item: split K (the number of splits per shape, ``expand``)
# or: the split tail (kernels/_gemm_gluon.py ``TAIL``: the last partial round's tiles split along K over the
# programs it leaves idle; session 21, H200, GPU time: 2048x11008x4096 252.7 us against 259.6 unsplit (b = w.t():
# 254.9 / 270.1), 1024x11008x4096 b = w.t() 139.3 / 143.9; ties elsewhere, tests/bench/runs/s21_tail_*.json)
TAIL = "tail"
# M <= 128, split-K (session 16, H200, GPU time): one 128-row tile row with K split until tiles x splits fill the SMs
# once; won where few column tiles meet a long K (127x4096x11008: 38.5 us against the tl path's 40.2, torch 37.5)
_SMALL_M = ((64, 64, 128, 5, 4), (64, 128, 64, 8, 4), (128, 128, 64, 5, 8), (128, 64, 64, 8, 4),
            (128, 64, 64, 8, 4, False, SPLIT))
_MID_M = ((64, 128, 64, 8, 4), (128, 128, 64, 4, 4), (128, 128, 64, 5, 8), (128, 256, 64, 3, 8),
          (128, 128, 64, 5, 8, False, TAIL))
_LARGE_M = ((128, 128, 64, 4, 4), (128, 128, 64, 5, 8), (128, 256, 64, 3, 8), (128, 128, 64, 4, 4, True),
            (128, 128, 64, 5, 8, False, TAIL))
# fp8 e4m3 (fp8_gemm, M > 64): 128x128x128 over two warpgroups, the partials added pipelined (session 12 on the
# H200: 8192^3 770 us against the tl kernel's 997 and _scaled_mm's 746; 4096^3 103 against 130 and 118)
_FP8 = ((128, 128, 128, 5, 8), (128, 128, 128, 4, 8))
# M <= 128: 128x128 tiles leave most SMs idle (127x11008x4096: 86 programs); one warpgroup on narrower tiles
_FP8_SMALL_M = ((64, 128, 128, 6, 4), (128, 64, 128, 6, 4), (64, 64, 128, 8, 4), (128, 128, 128, 5, 8))
_TL_KERNELS = frozenset({"gemm_kernel", "gemm_tma_kernel", "fp8_gemm_decode_kernel"})  # gemm's tl paths
_TL_FP8_KERNELS = frozenset({"fp8_gemm_kernel", "fp8_gemm_tma_kernel"})  # fp8_gemm's large-M tl paths
_SM90: dict = {}  # device index -> bool


def candidates(M: int, fp8: bool = False) -> tuple:
    """The Gluon tiles raced at this M (session 11 on the H200: 64-row and narrow tiles for M <= 128, where 128x128
    tiles leave most SMs idle; the 128x256 / 128x128 tiles cuBLAS uses above). fp8: ``_FP8``, and narrower
    one-warpgroup tiles for M <= 128. A split-K candidate carries ``SPLIT`` until ``expand`` sizes it."""
    if fp8:
        return _FP8_SMALL_M if M <= 128 else _FP8
    return _SMALL_M if M <= 128 else _MID_M if M <= 512 else _LARGE_M


def expand(cands, M: int, N: int, K: int, num_sms: int) -> tuple:
    """``cands`` for one shape: a split-K candidate gets its number of splits (kernels/_gemm_gluon.py
    ``split_k_for``: tiles x splits within one wave), or drops out where that is 1 (it would be its unsplit twin);
    a split-tail candidate stays where the shape leaves a tail to split (``tail_split``), else drops out."""
    out = []
    for cfg in cands:
        if len(cfg) > 6 and cfg[6] == SPLIT:
            split = GK.split_k_for(M, N, K, cfg[0], cfg[1], cfg[2], num_sms) if GK is not None else 1
            if split <= 1:
                continue
            cfg = cfg[:6] + (split,)
        elif len(cfg) > 6 and cfg[6] == TAIL:
            if GK is None or GK.tail_split(M, N, K, cfg[0], cfg[1], cfg[2], num_sms)[1] <= 1:
                continue
        out.append(cfg)
    return tuple(out)


def _unpack(cfg) -> tuple:
    """(BLOCK_M, BLOCK_N, BLOCK_K, STAGES, num_warps, ping-pong, splits, split tail) of a candidate tuple."""
    bm, bn, bk, stages, warps, *rest = cfg
    split = rest[1] if len(rest) > 1 and isinstance(rest[1], int) else 1
    return bm, bn, bk, stages, warps, bool(rest and rest[0] is True), split, len(rest) > 1 and rest[1] == TAIL


def tile_dict(cfg) -> dict:
    """A candidate as the config dict tritondbg reports (run/check's config line, profile's decisions)."""
    bm, bn, bk, stages, warps, pp, split, tail = _unpack(cfg)
    d = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, STAGES=stages, PINGPONG=pp, num_warps=warps)
    if split > 1:
        d["SPLIT_K"] = split
    if tail:
        d["SPLIT_TAIL"] = True
    return d


def config_name(cfg) -> str:
    """The candidate's name in race records and reports; " split-K" before ``expand`` sizes it, then " split-K N";
    " split tail"."""
    bm, bn, bk, stages, warps, pp, split, tail = _unpack(cfg)
    sk = f" split-K {split}" if split > 1 else " split-K" if len(cfg) > 6 and cfg[6] == SPLIT else ""
    return (f"gluon_gemm_kernel: {bm}x{bn}x{bk} s{stages} w{warps}" + (" pingpong" if pp else "") + sk
            + (" split tail" if tail else ""))


def _sm90(device) -> bool:
    index = device.index if device.index is not None else torch.cuda.current_device()
    hit = _SM90.get(index)
    if hit is None:
        hit = _SM90[index] = torch.cuda.get_device_capability(index) == (9, 0)
    return hit


def enabled() -> bool:
    """``TRITONDBG_GLUON_GEMM=0`` turns the race off (the tl kernels only: the same kernels, and so the same
    bits, in every process, as far as the tl autotuner's picks agree)."""
    return os.environ.get("TRITONDBG_GLUON_GEMM", "1").strip().lower() not in ("0", "false", "no", "off")


def eligible(a, b, activation) -> bool | None:
    """None when the Gluon kernels cannot take these (checked) operands; else whether b is K-major (``w.t()``).
    Which of them race at this M: ``race`` (gemm tiles above WS_MIN_M, ``decode_candidates`` up to DECODE_MAX_M)."""
    if GK is None or not enabled() or activation is not None:
        return None
    if a.dtype not in (torch.float16, torch.bfloat16) or b.dtype != a.dtype:
        return None
    M, K = a.shape
    N = b.shape[1]
    if not 0 < M <= WS_MAX_M or K % 8 or N % 8 or _tma_layout(a) is not False:
        return None
    b_nk = _tma_layout(b)
    if b_nk is None or not _on_hopper(a) or not _launch.pristine(GK.gluon_gemm_kernel):
        return None
    if _launch.PINNED & _TL_KERNELS:  # a tool pinned a tl config (tritondbg run --config): that config runs
        return None
    return b_nk


def eligible_fp8(a, b, scale_a, scale_b, out_dtype) -> bool:
    """Whether the Gluon kernel can take this (checked) fp8_gemm call: row-major a, K-major b (``w.t()``),
    both TMA-describable (16-byte aligned bases and row strides), K % 16 and N % 8, one fp32 scale each on a's
    device, a 16-bit output."""
    if GK is None or not enabled() or out_dtype not in (torch.bfloat16, torch.float16):
        return False
    K, N = b.shape
    if K % 16 or N % 8 or _tma_layout(a) is not False or _tma_layout(b) is not True:
        return False
    if any(s.numel() != 1 or s.dtype != torch.float32 or s.device != a.device for s in (scale_a, scale_b)):
        return False
    if not _on_hopper(a) or not _launch.pristine(GK.gluon_gemm_kernel) or _launch.PINNED & _TL_FP8_KERNELS:
        return False
    return True


def decode_candidates(a, b, b_nk: bool, num_sms: int, scales: tuple = ()) -> tuple:
    """The Gluon decode kernel's candidates for an eligible call with M <= DECODE_MAX_M, as ``race``'s ``extra``
    (name, build(out) -> plan, tile dict, kernel name); none without the kernel or with its launch path patched.
    fp8: ``scales`` (scale_a, scale_b), b K-major."""
    M, K = a.shape
    N = b.shape[1]
    if GD is None or not 0 < M <= DECODE_MAX_M or not _launch.pristine(GD.gluon_decode_kernel):
        return ()
    elem = a.element_size()
    return tuple((GD.name(cfg), (lambda out, cfg=cfg: GD.build(cfg, a, b, out, *scales, w_kmajor=b_nk)),
                  GD.tile_dict(cfg), GD.KERNEL)
                 for cfg in GD.expand(M, N, K, num_sms, GD.candidates(elem), elem))


def _on_hopper(a) -> bool:
    """A CUDA tensor on an sm_90 GPU, no CUDA graph capture under way (the race synchronises)."""
    return a.is_cuda and _sm90(a.device) and not torch.cuda.is_current_stream_capturing()


class WSPlan:
    """The Gluon kernel bound to one call signature: ``plan(a, b, c)`` launches it over descriptors rebased on
    the call's tensors (the templates hold no tensor). ``kernel`` is what ``_launch.pristine`` asks about."""
    __slots__ = ("kernel", "launcher", "templates", "report", "trailing")

    def __init__(self):
        self.trailing = ()  # what a call without scales passes after the descriptors (``build``)

    def __call__(self, a, b, c, *scales) -> None:
        _launch.SERVED["gluon_gemm_kernel"] = self.report  # what tritondbg run/check report as the config that ran
        # b itself is the base of a K-major b's descriptor: same data pointer as b.t(), shape from the template;
        # fp8: the call's scale tensors follow the descriptors (split-K: the launcher adds the stream's
        # workspace and counters after them, so a 16-bit call passes its two None scales)
        self.launcher.with_templates((), self.templates, (a, b, c), scales or self.trailing)


def build(cfg, a, b, c, b_nk: bool, num_sms: int, scales: tuple = (), precise: int = 0) -> WSPlan:
    """Compile ``cfg`` for these operands, launch it once into ``c`` and return its plan. fp8: ``scales``
    (scale_a, scale_b), ``precise`` the kernel's PRECISE (0 fast accumulation, 2 pipelined promotion)."""
    bm, bn, bk, stages, warps, pp, split, split_tail = _unpack(cfg)
    descs = GK.make_descriptors(a, b.t() if b_nk else b, c, bm, bn, bk, b_nk)
    compiled, grid, tail, scratch = GK.launch(descs, scales or (None, None), a.shape[0], b.shape[1], bm, bn, GROUP_M,
                                              stages, b_nk, precise, pp, warps, num_sms, split, split_tail)
    plan = WSPlan()
    plan.kernel = GK.gluon_gemm_kernel
    # the scale tensors are per call (WSPlan.__call__): the launcher's tail starts after them; a 16-bit split
    # launch passes its None scales per call too (the stream's scratch follows them)
    plan.trailing = (None, None) if scratch is not None else ()
    plan.launcher = _launch.Launcher(compiled, grid, tail[max(len(scales), len(plan.trailing)):], GK.gluon_gemm_kernel,
                                     scratch)
    plan.templates = tuple(_launch.descriptor_template(d) for d in descs)
    plan.report = tile_dict(cfg)
    return plan


def race(sig, a, b, c, b_nk: bool, plans: dict, steady, num_sms: int, timer=None, scales: tuple = (),
         precise: int = 0, gemm_tiles: bool = True, extra: tuple = (), margin: float = GEMM_MARGIN, warm_timer=None):
    """After the tl path computed ``c`` (the first call of ``sig``, its launcher cached): race the Gluon
    candidates against ``steady`` (the steady-state call; kernels/_race.py); a winner goes into ``plans[sig]`` and
    recomputes ``c``. fp8_gemm: ``scales`` (scale_a, scale_b) and ``precise`` (``build``); a winning plan takes
    (a, b, c, *scales). ``gemm_tiles``: race this module's tiles (fp8 decode at M <= 16: not, they lost there);
    ``extra``: more candidates, (name, build(out) -> plan, tile dict, kernel name) each; ``margin``: the lead a
    candidate needs, ``warm_timer`` the near-tie's timer (kernels/_race.py). Returns ``c``."""
    if not gemm_tiles and not extra:  # nothing to race
        return c
    M, N = a.shape[0], b.shape[1]
    cands = expand(candidates(M, fp8=bool(scales)), M, N, a.shape[1], num_sms) if gemm_tiles else ()
    key = {"op": "fp8_gemm" if scales else "gemm", "M": M, "N": N, "K": a.shape[1],
           "dtype": str(a.dtype).replace("torch.", ""), "b": "w.t()" if b_nk else "(K, N)"}
    builds = {config_name(cfg): (lambda out, cfg=cfg: build(cfg, a, b, out, b_nk, num_sms, scales, precise))
              for cfg in cands}
    tiles = {config_name(cfg): tile_dict(cfg) for cfg in cands}
    kernels = ["gluon_gemm_kernel"] if gemm_tiles else []  # the record names the first
    for name, make, tile, kernel in extra:
        builds[name] = make
        tiles[name] = {"path": kernel, **tile}
        if kernel not in kernels:
            kernels.append(kernel)
    _race.run(sig, key, c, steady, builds, lambda plan, out: plan(a, b, out, *scales), plans, kernel=tuple(kernels),
              tiles=tiles, timer=timer, margin=margin, warm_timer=warm_timer)
    return c
