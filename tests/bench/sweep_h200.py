"""Issue 18's sweep: the bundled kernels on the shapes a user would run, beside torch, on the local GPU.

    python tests/bench/sweep_h200.py --only norm            # layernorm + softmax (or --only layernorm / softmax)
    python tests/bench/sweep_h200.py --only gemm --dtypes bfloat16
    python tests/bench/sweep_h200.py --only fp8,attn        # attn = prefill + decode
    python tests/bench/sweep_h200.py --only layernorm --grid --sizes big --dtypes bfloat16  # the rule's rivals

Every row: the kernel checked against its reference on the row's inputs first (a wrong result is still timed,
and its row says FAIL), then ours and the baseline(s) timed with ``triton.testing.do_bench`` (median, L2
flushed before each call) in interleaved rounds (kernels_h200.interleaved); ratio = baseline time / ours
(> 1: we are faster). Launch-bound rows (``small``, ``mid``) also get the GPU time under CUDA-graph replay and
the host time per call (Python + launch, no sync) of both sides. Each run writes a markdown table (date, GPU, Triton,
command, a summary against the issue's targets, every row) to ``--out`` and the rows as JSON beside it
(``.json``); rows of the groups not run this time are kept from the JSON already there, so the parts can run
in separate calls and still make one table.

Parts, with their estimated time on the H200 (compiles and autotuning included; one device call is 10 min):
  layernorm 2 dtypes x 23 row lengths x 3 sizes ~6 min (--quick ~2)     softmax the same
  gemm      per dtype: 7 M x 7 (N, K) + 2 squares + 2 GELU, ~4-5 min (run one dtype a call; --quick ~2)
  fp8       8192^3, decode M = 1 / 16 (bare read of the weight), six more large-M shapes, M = 32 / 64, three more
            decode weights: ~3 min
  prefill   10 shapes (causal and not, D 64/128, GQA, odd lengths): ~3-4 min
  decode    16 (B, KV) shapes: ~2 min
  --grid    (layernorm / softmax) 6-10 configs per row length, big size only: ~4 min per kernel and dtype
Needs a CUDA GPU (exits 2 with one line without one).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "0")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "sweep_h200.md"
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
# the table side (groups, targets, summary, markdown, merge, --render, --baseline-out), re-exported here
from sweep_table import (ALSO, GROUPS, SIZES, TARGETS, _part, _run_key, grid_summary, markdown,  # noqa: E402,F401
                         merge, render, summarize, write_baseline)

ALIASES = {"norm": ("layernorm", "softmax"), "attn": ("prefill", "decode"), "attention": ("prefill", "decode"),
           "all": GROUPS, "fp8_gemm": ("fp8",)}
# odd lengths (session 27): rows off 16-byte boundaries (ViT's 197 patches, 1001, 5001, a padded 32001 vocabulary)
NORM_N = (128, 197, 256, 512, 768, 1000, 1001, 1024, 2048, 3000, 4096, 5000, 5001, 5120, 6144, 8192, 11008, 12288,
          14336, 16384, 24576, 32001, 32768)
NORM_N_QUICK = (128, 256, 1000, 3000, 5000, 5120, 8192, 11008, 12288, 32768)
NORM_N_GRID = (256, 1000, 3000, 5000, 8192, 11008, 16384, 32768)  # --grid's default row lengths
BIG_ELEMS = 1 << 25    # ~32M elements per norm row ("big": bandwidth-bound)
SMALL_ELEMS = 1 << 18  # 256K elements ("small": launch-bound)
MID_ELEMS = 1 << 20    # 1M elements ("mid": a few microseconds of GPU time, still near launch-bound)
GEMM_M = (1, 17, 64, 127, 1024, 4096, 16384)  # 64: a batch of decode tokens (session 16)
GEMM_M_QUICK = (1, 127, 4096)
GEMM_M_NK = (64, 127, 1024)  # --b-layout nk (b = w.t(), an nn.Linear weight): these M unless --gemm-m (session 11; 64: 16)
# (N, K) of real models' linear layers: Llama-2-7B attention / MLP up / MLP down, Llama-2-13B MLP up / down,
# Mistral-7B MLP up; the last one (Llama-3-8B's GQA qkv, N = 4096 + 2 * 1024) is our choice.
GEMM_NK = ((4096, 4096), (11008, 4096), (4096, 11008), (13824, 5120), (5120, 13824), (14336, 4096), (6144, 4096))
GEMM_NK_QUICK = ((4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096))
# the squares and the GELU epilogue: (M, N, K, activation)
GEMM_EXTRA = ((4096, 4096, 4096, None), (8192, 8192, 8192, None), (8192, 8192, 8192, "gelu"),
              (4096, 11008, 4096, "gelu"))
FP8_SHAPES = ((8192, 8192, 8192), (1, 8192, 8192), (16, 8192, 8192),  # (M, N, K); b K-major
              # beyond the shape: a square half its side, LLM-like prefill projections, M = 127
              (4096, 4096, 4096), (4096, 14336, 4096), (4096, 4096, 14336), (1024, 8192, 8192), (127, 11008, 4096),
              # batched decode (session 16): the decode kernel's 32 / 64-token tiles against the Gluon race
              (32, 8192, 8192), (64, 8192, 8192),
              # decode on other weights (session 19: the decode kernel was 0.91-0.97x _scaled_mm on these)
              (1, 4096, 4096), (16, 14336, 4096), (8, 4096, 14336))
# prefill: (B, H, H_KV, N, D, causal)
PREFILL = ((4, 32, 32, 4096, 128, False), (4, 32, 32, 4096, 128, True), (4, 32, 32, 4096, 64, False),
           (4, 32, 32, 4096, 64, True), (4, 32, 8, 4096, 128, False), (4, 32, 8, 4096, 128, True),
           (8, 16, 16, 1000, 128, False), (8, 16, 16, 1000, 128, True), (2, 32, 8, 3001, 64, True),
           (4, 32, 32, 2047, 128, True))
PREFILL_QUICK = PREFILL[:2] + PREFILL[4:6] + PREFILL[8:9]
# decode: (B, H, H_KV, KV length, D)
DECODE = tuple((b, 32, 32, s, 128) for b in (1, 8, 32) for s in (1024, 4096, 8192, 32768)) + \
    ((8, 32, 8, 8192, 128), (8, 32, 8, 32768, 128), (64, 32, 8, 4096, 128), (1, 32, 8, 32768, 128))
DECODE_QUICK = ((1, 32, 32, 8192, 128), (8, 32, 32, 32768, 128), (32, 32, 32, 4096, 128), (8, 32, 8, 32768, 128))

def parse_groups(only: str) -> list[str]:
    """``--only`` -> the groups to run, in GROUPS order; ValueError naming an unknown one."""
    wanted: set[str] = set()
    for name in (s.strip() for s in only.split(",")):
        if not name:
            continue
        if name in ALIASES:
            wanted.update(ALIASES[name])
        elif name in GROUPS:
            wanted.add(name)
        else:
            raise ValueError(f"unknown part {name!r}; choose from {', '.join(GROUPS + tuple(ALIASES))}")
    return [g for g in GROUPS if g in wanted] or list(GROUPS)


def norm_shapes(ns, sizes) -> list[tuple[int, int, str]]:
    """(M, N, size) per row length: ~BIG_ELEMS, ~MID_ELEMS or ~SMALL_ELEMS elements."""
    out = []
    for size in sizes:
        elems = {"big": BIG_ELEMS, "mid": MID_ELEMS}.get(size, SMALL_ELEMS)
        out += [(max(1, round(elems / n)), n, size) for n in ns]
    return out


def _race_summary(race) -> str:
    """A race record (kernels/_race.py) for the config column: the pick, or "tl kernel" where the tl path kept
    the job, with the tl time and the winner's (or the best candidate's) time; "" where no race ran."""
    if not race or race.get("tl") is None:
        return ""
    timed = {c: us for c, us in race["ws"].items() if isinstance(us, (int, float))}
    best = race["pick"] or (min(timed, key=timed.get) if timed else None)
    won = f"{race['pick']} (race: " if race["pick"] else "tl kernel (race: "
    warm = race.get("warm") or {}
    tie = (f", warm L2: tl {warm['tl']:.1f} / gluon {warm[best]:.1f} us" if best in warm and "tl" in warm else "")
    return won + f"tl {race['tl']:.1f} us" + (f", gluon {timed[best]:.1f} us{tie})" if best else ")")


def grid_configs(N: int, elem_size: int, long_rows: bool = False):
    """The rule's rivals for rows of N columns: single-pass tiles (rows per tile, warps; one tile per program or
    persistent programs with the next tile's load in flight) and looped chunks (with or without pipelining)."""
    from tritondbg.kernels._rows import SINGLE_MAX_BLOCK, RowConfig

    import triton

    block = triton.next_power_of_2(N)
    head = block // 2
    if long_rows and block > SINGLE_MAX_BLOCK:
        # long rows: held whole in registers of one program (many warps), as head + tail blocks, or looped
        out = [RowConfig("single", block, 1, warps) for warps in (16, 32)]
        if head < N < block:
            out += [RowConfig("split", head, 1, warps) for warps in (16, 32)]
        return out + [RowConfig("looped", 4096, 1, 8), RowConfig("looped", 8192, 1, 16)]
    out = []
    if block <= 2 * SINGLE_MAX_BLOCK:
        for rows in (1, 2, 4, 8, 16, 32, 64):
            tile_bytes = rows * block * elem_size
            if not 2048 <= tile_bytes <= 16384 and not (rows == 1 and tile_bytes > 16384):
                continue
            for per_thread in (16, 32):
                warps = rows * block // (32 * per_thread)
                if 2 <= warps <= 32:
                    out += [RowConfig("single", block, rows, warps, stages) for stages in (1, 2)]
    if head >= 1024 and head < N < block <= 2 * SINGLE_MAX_BLOCK:  # two blocks: head + power-of-two tail
        out += [RowConfig("split", head, 1, warps) for warps in (4, 8, 16) if 8 <= head // (32 * warps) <= 64]
    if N >= 2048:
        for chunk in (2048, 4096):
            if chunk < block:
                out += [RowConfig("looped", chunk, 1, chunk // (32 * 16), stages) for stages in (1, 2)]
    return out


# ------------------------------------------------------------------------------------------------------------
# GPU side
# ------------------------------------------------------------------------------------------------------------

def _close(out, ref, atol, rtol):
    """(ok, max abs error, elements outside atol + rtol * |ref|), computed on the GPU in fp32."""
    import torch

    o, r = out.float(), ref.float()
    diff = (o - r).abs()
    bad = ~(diff <= atol + rtol * r.abs())  # NaN counts as bad
    n_bad = int(bad.sum())
    return n_bad == 0, float(torch.nan_to_num(diff, nan=float("inf")).max()), n_bad


def _sync(dev):
    import torch

    if dev == "cuda":
        torch.cuda.synchronize()


def _empty_cache(dev):
    import torch

    if dev == "cuda":
        torch.cuda.empty_cache()


def _host_us(fn, calls=200, dev="cuda"):
    fn()
    _sync(dev)
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t = (time.perf_counter() - t0) / calls
    _sync(dev)
    return t * 1e6


class Sweep:
    def __init__(self, args):
        import torch

        self.args = args
        self.rows: list[dict] = []
        self.rounds = 1 if args.quick else 3
        self.rep = 40 if args.quick else 100
        self.torch = torch
        self.dev = getattr(args, "device", "cuda")  # tests run the logic on the CPU (interpreter)

    def measure(self, group, name, dtype, ours, bases: dict, check, *, flops=None, nbytes=None, small=False,
                config=None, rounds=None, extra=None):
        """Check ``ours`` (check() -> (ok, message)), then time it beside ``bases`` (name -> callable)."""
        import kernels_h200 as kh

        torch = self.torch
        try:
            ok, msg = check()
            status = "pass" if ok else "fail"
        except Exception as e:  # noqa: BLE001 - a crash is a row, not the end of the sweep
            status, msg = "error", f"{type(e).__name__}: {str(e)[:120]}"
        row = dict(group=group, name=name, dtype=dtype, check=status, check_message=msg, baselines={},
                   config=config() if callable(config) else (config or ""), **(extra or {}))
        if status == "error":
            row["ours_ms"] = float("nan")
            self._emit(row)
            return row
        fns = {"ours": ours}
        for bname, fn in bases.items():
            try:
                fn()
                fns[bname] = fn
            except Exception as e:  # noqa: BLE001 - a backend missing for a shape is a note
                row["baselines"][bname] = {"error": f"{type(e).__name__}: {str(e)[:80]}"}
        _sync(self.dev)
        runs = kh.interleaved(fns, rounds=rounds or self.rounds, rep=self.rep)
        ours_ms = statistics.median(runs.pop("ours"))
        row.update(ours_ms=ours_ms, rounds_ms=runs)
        if flops:
            row["tflops"] = flops / ours_ms / 1e9
        if nbytes:
            row["tbps"] = nbytes / ours_ms / 1e9
        if small:
            row["ours_graph_ms"] = kh._graph_ms(ours)
            row["ours_host_us"] = _host_us(ours, dev=self.dev)
        for bname, times in runs.items():
            t = statistics.median(times)
            entry = {"ms": t, "ratio": t / ours_ms}
            if small:
                entry["graph_ms"] = kh._graph_ms(fns[bname])
                entry["host_us"] = _host_us(fns[bname], dev=self.dev)
            row["baselines"][bname] = entry
        self._emit(row)
        return row

    def _emit(self, row):
        self.rows.append(row)
        b = next(iter(row["baselines"].items()), None)
        rat = f"{b[0]} {b[1]['ratio']:.2f}x" if b and "ratio" in b[1] else ""
        print(f"{row['group']:9s} {row['name']:34s} {row['dtype']:8s} {row['ours_ms'] * 1e3:9.1f} us  {rat}  "
              f"{row['check']} {row.get('config', '')}", flush=True)

    # ---- layernorm / softmax ---------------------------------------------------------------------------------
    def norm(self, kind, dtypes, sizes, ns):
        import kernels_h200 as kh

        from tritondbg.kernels import layernorm as LN
        from tritondbg.kernels import softmax as SM

        torch = self.torch
        for dtype_name in dtypes:
            dtype = getattr(torch, dtype_name)
            for M, N, size in norm_shapes(ns, sizes):
                gen = torch.Generator(device=self.dev).manual_seed(0)
                x = torch.randn(M, N, device=self.dev, generator=gen).mul_(2).add_(0.5).to(dtype)
                if kind == "layernorm":
                    cfg = LN.config_for(N, x.element_size(), M=M)
                else:  # the coop config where few long rows get one (kernels/softmax.py)
                    sms = (torch.cuda.get_device_properties(self.dev).multi_processor_count
                           if str(self.dev).startswith("cuda") else None)
                    cfg = SM.config_for(N, x.element_size(), M=M, sms=sms)
                if kind == "layernorm":
                    w = (1 + 0.1 * torch.randn(N, device=self.dev, generator=gen)).to(dtype)
                    b = (0.1 * torch.randn(N, device=self.dev, generator=gen)).to(dtype)
                    inputs = dict(x=x, weight=w, bias=b, eps=1e-5)
                    ours = lambda x=x, w=w, b=b: LN.layernorm(x, w, b, 1e-5)  # noqa: E731
                    ref = lambda x=x, w=w, b=b: LN.reference(x, w, b, 1e-5)  # noqa: E731
                    nbytes = LN.bytes_moved(M, N, dtype)
                else:
                    inputs = dict(x=x)
                    ours = lambda x=x: SM.softmax(x)  # noqa: E731
                    ref = lambda x=x: SM.reference(x)  # noqa: E731
                    nbytes = SM.bytes_moved(M, N, dtype)
                tol = 1e-2 if dtype_name == "float16" else 2e-2
                check = lambda ours=ours, ref=ref, tol=tol: _ok_msg(*_close(ours(), ref(), tol, tol))  # noqa: E731
                # rows of chosen lengths (--n) replace their own rows only, not their size's (sweep_table._part)
                self.measure(kind, f"{M}x{N} ({size})", dtype_name, ours, kh.baselines(kind, inputs), check,
                             nbytes=nbytes, small=size != "big", config=_cfg_str(cfg),
                             extra=dict(by_row=True) if getattr(self.args, "n", "") else None)
                del x, inputs
                _empty_cache(self.dev)

    def norm_grid(self, kind, dtypes, ns, sizes=("big",), long_rows=False):
        """Every rival config of the rule (at the given sizes), each timed beside the rule's pick; the rule's
        row also beside torch. ``long_rows``: rows > 8192 also as one program's registers (16/32 warps),
        head + tail blocks, and 8192-column chunks."""
        import kernels_h200 as kh

        from tritondbg.kernels import layernorm as LN
        from tritondbg.kernels import softmax as SM

        torch = self.torch
        for dtype_name in dtypes:
            dtype = getattr(torch, dtype_name)
            for M, N, size in norm_shapes(ns, sizes):
                gen = torch.Generator(device=self.dev).manual_seed(0)
                x = torch.randn(M, N, device=self.dev, generator=gen).to(dtype)
                w = (1 + 0.1 * torch.randn(N, device=self.dev, generator=gen)).to(dtype)
                b = (0.1 * torch.randn(N, device=self.dev, generator=gen)).to(dtype)
                rule = (LN if kind == "layernorm" else SM).config_for(N, x.element_size(), M=M)
                ref = LN.reference(x, w, b) if kind == "layernorm" else SM.reference(x)
                tol = 1e-2 if dtype_name == "float16" else 2e-2
                inputs = dict(x=x, weight=w, bias=b, eps=1e-5) if kind == "layernorm" else dict(x=x)
                for cfg in [rule] + [c for c in grid_configs(N, x.element_size(), long_rows) if c != rule]:
                    if kind == "layernorm":
                        fn = lambda cfg=cfg: LN.layernorm(x, w, b, 1e-5, config=cfg)  # noqa: E731
                    else:
                        fn = lambda cfg=cfg: SM.softmax(x, config=cfg)  # noqa: E731
                    check = lambda fn=fn: _ok_msg(*_close(fn(), ref, tol, tol))  # noqa: E731
                    self.measure(f"{kind}-grid", f"{M}x{N} ({size})", dtype_name, fn,
                                 kh.baselines(kind, inputs) if cfg == rule else {}, check, rounds=1,
                                 small=size != "big",
                                 nbytes=2 * x.nbytes, config=_cfg_str(cfg) + (" (rule)" if cfg == rule else ""))
                del x, ref
                _empty_cache(self.dev)

    # ---- gemm --------------------------------------------------------------------------------------------------
    def gemm(self, dtypes, quick):
        import kernels_h200 as kh

        from tritondbg.configs import autotuners, config_dict
        from tritondbg.kernels import gemm as G

        torch = self.torch
        nk = getattr(self.args, "b_layout", "kn") == "nk"
        ms = getattr(self.args, "gemm_m", None) or (GEMM_M_QUICK if quick else GEMM_M_NK if nk else GEMM_M)
        shapes = [(m, n, k, None) for m in ms for n, k in (GEMM_NK_QUICK if quick else GEMM_NK)]
        shapes += list(GEMM_EXTRA)
        for dtype_name in dtypes:
            dtype = getattr(torch, dtype_name)
            for M, N, K, act in shapes:
                gen = torch.Generator(device=self.dev).manual_seed(0)
                a = torch.randn(M, K, device=self.dev, generator=gen).to(dtype)
                if getattr(self.args, "b_layout", "kn") == "nk":  # an nn.Linear weight (N, K), passed as w.t()
                    b = (torch.randn(N, K, device=self.dev, generator=gen) / K ** 0.5).to(dtype).t()
                else:
                    b = (torch.randn(K, N, device=self.dev, generator=gen) / K ** 0.5).to(dtype)
                ours = lambda a=a, b=b, act=act: G.gemm(a, b, act)  # noqa: E731

                def check(a=a, b=b, act=act, tol=1e-2 if dtype_name == "float16" else 2e-2):
                    ref = G.reference(a, b, act)
                    ok, msg = _ok_msg(*_close(G.gemm(a, b, act), ref, tol, tol))
                    if a.shape[0] <= G.SPLITK_MAX_M and ok:  # the tiled kernels too (timed beside, below)
                        ok, msg = _ok_msg(*_close(G.gemm_tiled(a, b, act), ref, tol, tol))
                        msg = "split-K and tiled: " + msg
                    return ok, msg

                def config(M=M, a=a, b=b, act=act):
                    from tritondbg.kernels import fp8_gemm as F8

                    race = G.ws_decision(a, b, act)  # Hopper: the Gluon kernel's race (kernels/_gemm_ws.py)
                    if race and race["pick"]:
                        return f"{race['pick']} (race: tl {race['tl']:.1f} us, gluon {race['ws'][race['pick']]:.1f} us)"
                    kernels = [F8.fp8_gemm_decode_kernel] if M <= G.SPLITK_MAX_M else [G.gemm_tma_kernel]
                    tuners = autotuners(kernels)
                    tl = "; ".join(f"{k}: " + ",".join(f"{a}={b}" for a, b in config_dict(t.best_config).items())
                                   for k, t in tuners.items() if getattr(t, "best_config", None) is not None)
                    timed = {c: us for c, us in (race or {}).get("ws", {}).items() if isinstance(us, (int, float))}
                    if race and race.get("tl") is not None and timed:  # the race ran and the tl kernel kept the job
                        best = min(timed, key=timed.get)
                        tl += f" (race: tl {race['tl']:.1f} us, best gluon {best} {timed[best]:.1f} us)"
                    return tl

                name = f"{M}x{N}x{K}" + (f" {act}" if act else "") + (" b=w.t()" if b.stride(0) == 1 else "")
                bases = kh.baselines("gemm", dict(a=a, b=b, activation=act))
                if M <= G.SPLITK_MAX_M and act is None:  # ours may be the split-K path: the tiled kernels beside
                    bases["ours, tiled kernels"] = lambda a=a, b=b: G.gemm_tiled(a, b)
                self.measure("gemm", name, dtype_name, ours, bases, check, flops=2.0 * M * N * K, small=M <= 17,
                             config=config)
                del a, b
                _empty_cache(self.dev)

    # ---- fp8 ---------------------------------------------------------------------------------------------------
    def fp8(self):
        import kernels_h200 as kh
        import read_floor
        import triton

        from tritondbg.kernels import fp8_gemm as F8

        torch = self.torch
        gen = torch.Generator(device=self.dev).manual_seed(0)
        one = torch.ones((), device=self.dev)
        for M, N, K in FP8_SHAPES:
            a = (torch.randn(M, K, device=self.dev, generator=gen) / 4).to(torch.float8_e4m3fn)
            w = (torch.randn(N, K, device=self.dev, generator=gen) / 4).to(torch.float8_e4m3fn)
            b = w.t()  # K-major: Hopper fp8 wgmma's layout, and _scaled_mm's
            inputs = dict(a=a, b=b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            ours = lambda a=a, b=b: F8.fp8_gemm(a, b, one, one)  # noqa: E731
            check = lambda a=a, b=b: _ok_msg(*_close(F8.fp8_gemm(a, b, one, one),  # noqa: E731
                                                     F8.reference(a, b, one, one), 3e-2, 3e-2))
            bases = kh.baselines("fp8_gemm", inputs)
            if M <= 16:
                out = torch.empty(4096, dtype=torch.float32, device=self.dev)
                x = w.view(torch.int32).reshape(-1)  # the weight's 64 MiB, read as int32
                blk = 16384
                bases["bare read of b"] = lambda x=x, out=out: read_floor._read_sum[(triton.cdiv(x.numel(), blk),)](
                    x, out, x.numel(), BLOCK=blk, num_warps=8)
            def config(a=a, b=b, M=M):
                from tritondbg.configs import autotuners, config_dict

                # Hopper, 16 < M: the Gluon kernel's race; the decode kernel's autotuned pick where it serves M
                race = _race_summary(F8.ws_decision(a, b, one, one))
                if M > 64 or race.startswith("gluon"):
                    return race
                t = autotuners([F8.fp8_gemm_decode_kernel]).get("fp8_gemm_decode_kernel")
                pick = getattr(t, "best_config", None)
                tl = ",".join(f"{k}={v}" for k, v in config_dict(pick).items()) if pick is not None else ""
                return f"fp8_gemm_decode_kernel: {tl}" + (f" {race[len('tl kernel '):]}" if race else "")

            self.measure("fp8", f"{M}x{N}x{K}", "float8_e4m3fn", ours, bases, check, flops=2.0 * M * N * K,
                         nbytes=M * K + N * K + 2 * M * N, small=M <= 16, config=config)
            del a, w, b
            _empty_cache(self.dev)

    # ---- attention ---------------------------------------------------------------------------------------------
    def prefill(self, quick):
        import kernels_h200 as kh

        from tritondbg.kernels import attention as A

        torch = self.torch
        for B, H, HKV, N, D, causal in (PREFILL_QUICK if quick else PREFILL):
            gen = torch.Generator(device=self.dev).manual_seed(0)
            q = torch.randn(B, H, N, D, device=self.dev, generator=gen, dtype=torch.bfloat16)
            k = torch.randn(B, HKV, N, D, device=self.dev, generator=gen, dtype=torch.bfloat16)
            v = torch.randn(B, HKV, N, D, device=self.dev, generator=gen, dtype=torch.bfloat16)
            bases = kh.baselines("attention", dict(q=q, k=k, v=v, causal=causal))
            ours = lambda q=q, k=k, v=v, c=causal: A.attention(q, k, v, causal=c)  # noqa: E731

            def config(q=q, k=k, v=v, causal=causal):
                from tritondbg.configs import autotuners, config_dict

                race = A.race_decision(q, k, v, causal)  # Hopper: the Gluon kernel's race
                if race and race["pick"]:
                    return _race_summary(race)
                t = autotuners([A._attn_fwd_kernel]).get("_attn_fwd_kernel")
                tl = ",".join(f"{a}={b}" for a, b in config_dict(t.best_config).items()) \
                    if getattr(t, "best_config", None) is not None else ""
                return (tl + " " + _race_summary(race)).strip()

            def check(ours=ours, flash=bases["sdpa flash"], q=q, k=k, v=v, causal=causal):
                try:
                    ref = flash()
                except Exception:  # noqa: BLE001 - no flash kernel for this shape: the fp32 reference
                    ref = A.reference(q, k, v, causal=causal)
                return _ok_msg(*_close(ours(), ref, 2e-2, 2e-2))
            flops = 4.0 * B * H * N * N * D * (0.5 if causal else 1.0)
            name = f"B{B} H{H}/{HKV} N{N} D{D}" + (" causal" if causal else "")
            self.measure("prefill", name, "bfloat16", ours, bases, check, flops=flops, config=config)
            del q, k, v
            _empty_cache(self.dev)

    def decode(self, quick):
        import kernels_h200 as kh

        from tritondbg.kernels import attention as A

        torch = self.torch
        for B, H, HKV, S, D in (DECODE_QUICK if quick else DECODE):
            gen = torch.Generator(device=self.dev).manual_seed(0)
            q = torch.randn(B, H, D, device=self.dev, generator=gen, dtype=torch.bfloat16)
            kc = torch.randn(B, HKV, S, D, device=self.dev, generator=gen, dtype=torch.bfloat16)
            vc = torch.randn(B, HKV, S, D, device=self.dev, generator=gen, dtype=torch.bfloat16)
            bases = kh.baselines("attention", dict(q=q, k_cache=kc, v_cache=vc))
            ours = lambda q=q, kc=kc, vc=vc: A.attention_decode(q, kc, vc)  # noqa: E731
            check = lambda ours=ours, ref=bases["sdpa default"]: _ok_msg(  # noqa: E731
                *_close(ours(), ref().squeeze(2), 2e-2, 2e-2))
            nbytes = kc.nbytes + vc.nbytes
            self.measure("decode", f"B{B} H{H}/{HKV} KV{S} D{D}", "bfloat16", ours, bases, check, nbytes=nbytes,
                         small=nbytes < (256 << 20))
            del q, kc, vc
            _empty_cache(self.dev)


def _ok_msg(ok, max_abs, n_bad):
    return ok, f"max abs err {max_abs:.3g}" + ("" if ok else f", {n_bad} outside tolerance")


def _cfg_str(c) -> str:
    if c.kind == "coop":
        return f"coop slices of {c.block_n * c.per} warps {c.num_warps}"
    return f"{c.kind} block {c.block_n} rows {c.rows} warps {c.num_warps} stages {c.stages}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated parts: " + ", ".join(GROUPS + tuple(ALIASES)))
    ap.add_argument("--quick", action="store_true", help="fewer shapes, one round, shorter timing")
    ap.add_argument("--gemm-m", type=lambda v: tuple(int(m) for m in v.split(",")), default=None,
                    help=f"gemm: these M only (comma-separated; default {','.join(map(str, GEMM_M))}), with the "
                         "squares and GELU rows")
    ap.add_argument("--dtypes", default="", help="layernorm/softmax/gemm dtypes (default float16,bfloat16)")
    ap.add_argument("--sizes", default=",".join(SIZES), help="layernorm/softmax sizes: big (~32M elements), mid "
                    "(1M), small (256K)")
    ap.add_argument("--n", default="", help="layernorm/softmax row lengths (default: the sweep's)")
    ap.add_argument("--b-layout", choices=("kn", "nk"), default="kn", help="gemm: b row-major (K, N), or the "
                    f".t() view of an (N, K) nn.Linear weight (M {','.join(map(str, GEMM_M_NK))} unless --gemm-m)")
    ap.add_argument("--grid", action="store_true", help="layernorm/softmax: time the rule's rival configs too")
    ap.add_argument("--long-rows", action="store_true", help="--grid: rows > 8192 also as one program's "
                    "registers (16/32 warps), head + tail blocks, 8192-column chunks")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="markdown table (the JSON rows go beside it)")
    ap.add_argument("--baseline-out", metavar="JSON", help="also write the perf gate's baseline for the sweep "
                    "shapes (tests/bench/sweep_scenarios.py) from the rows (with --render, or after a run)")
    ap.add_argument("--render", nargs="+", metavar="JSON", help="no GPU: join these runs' JSON files (a later "
                    "file's groups replace an earlier one's) into --out and its JSON, and stop")
    args = ap.parse_args(argv)
    if args.render:
        return render(args.render, Path(args.out), args.baseline_out)
    try:
        groups = parse_groups(args.only)
        dtypes = [d for d in args.dtypes.split(",") if d] or ["float16", "bfloat16"]
        bad = [d for d in dtypes if d not in ("float16", "bfloat16", "float32")]
        if bad:
            raise ValueError(f"unknown dtype {bad[0]!r}")
        sizes = [s for s in args.sizes.split(",") if s]
        if any(s not in SIZES for s in sizes):
            raise ValueError(f"--sizes takes {', '.join(SIZES)}, got {args.sizes!r}")
        ns = tuple(int(n) for n in args.n.split(",") if n) or (
            NORM_N_GRID if args.grid else NORM_N_QUICK if args.quick else NORM_N)
    except ValueError as e:
        print(f"sweep_h200: {e}", file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    import triton

    sys.path.insert(0, str(HERE))  # kernels_h200, read_floor
    from tritondbg import runner

    runner.set_mode("compiled")
    sweep = Sweep(args)
    ran = []
    for group in groups:
        t0 = time.time()
        if group in ("layernorm", "softmax"):
            if args.grid:
                sweep.norm_grid(group, dtypes, ns, tuple(sizes), args.long_rows)
                ran.append(f"{group}-grid")
            else:
                sweep.norm(group, dtypes, sizes, ns)
                ran.append(group)
        elif group == "gemm":
            sweep.gemm(dtypes, args.quick)
            ran.append(group)
        elif group == "fp8":
            sweep.fp8()
            ran.append(group)
        elif group == "prefill":
            sweep.prefill(args.quick)
            ran.append(group)
        elif group == "decode":
            sweep.decode(args.quick)
            ran.append(group)
        print(f"# {group}: {time.time() - t0:.0f} s", flush=True)
    meta = {"date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"), "gpu": torch.cuda.get_device_name(),
            "triton": triton.__version__, "torch": torch.__version__,
            "command": "python tests/bench/sweep_h200.py " + " ".join(sys.argv[1:] if argv is None else argv)}
    out = Path(args.out)
    js = out.with_suffix(".json")
    previous = json.loads(js.read_text()) if js.exists() else {}
    rows, metas = merge(previous, sweep.rows, {g: meta for g in ran}, ran)
    out.parent.mkdir(parents=True, exist_ok=True)
    js.write_text(json.dumps({"metas": metas, "rows": rows}, indent=1))
    out.write_text(markdown(rows, metas))
    for s in summarize(sweep.rows):
        print(f"# {s['group']}: {s['rows']} rows vs {s['baseline']}: min {s['min']:.2f}x median {s['median']:.2f}x "
              f"(worst {s['worst']}), wrong {s['wrong']}, met {s['met']}")
    print(f"# wrote {out} and {js}")
    if args.baseline_out:
        write_baseline(args.baseline_out, rows, metas)
    return 0


if __name__ == "__main__":
    sys.exit(main())
