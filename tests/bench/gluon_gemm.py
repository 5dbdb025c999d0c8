"""Issue 18, gemm: a hand-written warp-specialised Hopper gemm in Gluon, beside torch.matmul and ``gemm``.

    python tests/bench/gluon_gemm.py [--shapes 1024x4096x4096,...] [--timer graph|gpu] [--out gluon_gemm.json]  # GPU
    python tests/bench/gluon_gemm.py --fp8 [--fast-accum] [--out gluon_fp8.json]              # GPU: fp8 e4m3
    python tests/bench/gluon_gemm.py --compile-only [--fp8] [--configs 0,2|race]             # CPU: sm_90 PTX

The kernel and its design: kernels/_gemm_gluon.py (bundled since session 11: ``gemm`` races it against the tl
kernels on a call signature's first call, kernels/_gemm_ws.py). This script times each of its configs pinned.

The GPU run checks every result against an fp32 product (error > 1e-2 of the largest output: WRONG, not timed)
and times torch.matmul, the bundled ``gemm`` and each config with do_bench (median, L2 flushed),
or with ``--timer graph`` from a CUDA graph (GPU time, L2 warm), or ``--timer gpu`` with the race's timer
(kernels/_gemm_ws.py ``_time``: GPU time, L2 flushed, host part excluded; this script's wrappers build their
descriptors on every call, so plain do_bench times host work for the bf16 configs under ~60 us).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

import triton

try:  # the kernel lives in kernels/_gemm_gluon.py (bundled: gemm's warp-specialised path, kernels/_gemm_ws.py)
    from tritondbg.kernels._gemm_gluon import (PRODUCER_REGS, gluon_fp8_gemm, gluon_gemm, gluon_gemm_kernel,
                                              make_descriptors, maxnreg as _maxnreg)
except ImportError as e:  # Gluon's Hopper API: Triton 3.6 .. 3.9
    if __name__ == "__main__":
        print(f"needs Triton's Gluon Hopper API (triton {triton.__version__}: {e})", file=sys.stderr)
        sys.exit(2)
    raise

SHAPES = ("127x4096x4096,127x14336x4096,1024x4096x4096,1024x5120x13824,1024x6144x4096,4096x4096x4096,"
          "8192x8192x8192,1000x3000x1000")
# (block_m, block_n, block_k, stages, num_warps): num_warps 4 = one consumer warpgroup, 8 = two (64 rows each).
# Shared memory (16-bit): stages * (bm + bn) * bk * 2 + bm * bn * 2 <= 227 KiB.
# Small-M tiles (64 rows) give M = 127 more programs: 64x64 makes 128 tiles of 4096 columns, ~one per SM.
# "pp": ping-pong, two consumer warpgroups (num_warps each) on alternate tiles, main loops taking turns.
CONFIGS = ((128, 128, 64, 4, 4), (128, 128, 64, 5, 8), (128, 256, 64, 3, 8), (128, 128, 64, 4, 4, "pp"),
           (64, 128, 64, 6, 4), (64, 64, 128, 5, 4),
           # deep rings for few-tile shapes (M = 127: 128 tiles of 64x64, cuBLAS's 64x64 with 13 stages)
           (64, 64, 64, 12, 4), (64, 128, 64, 8, 4), (128, 64, 64, 8, 4))
           # M = 127 in one tile row (B read by one program per column block): 64 and 32 columns
CONFIGS += ((128, 64, 128, 4, 4), (128, 32, 128, 5, 4), (64, 64, 128, 6, 4))
# split-K for few tiles (M <= 128): one 128-row tile row, K split so tiles x splits fill the SMs once ("sk": the
# split per shape, kernels/_gemm_gluon.py split_k_for; "skN": N splits); b is read once, by all SMs
CONFIGS += ((128, 128, 64, 5, 8, "sk"), (128, 64, 64, 8, 4, "sk"), (128, 64, 128, 4, 4, "sk"), (128, 128, 64, 5, 8, "sk2"))
# M <= 64: 64-row tiles split along K (64x4096x4096: 64 tiles of 64x64 leave half the SMs idle unsplit). Session 17
# on the H200 (--timer gpu, tests/bench/runs/s17_sk64_gpu.json): none beat gemm's pick (64x4096x4096: 19.2 us at
# best against 18.5, torch 17.2), so the race does not list them
CONFIGS += ((64, 64, 128, 5, 4, "sk"), (64, 128, 64, 8, 4, "sk"), (64, 64, 64, 8, 4, "sk"), (64, 64, 128, 5, 4, "sk4"))
# M <= 64, 32 columns: 128 tiles of 4096 columns (cuBLAS's pick at 64x4096x4096: nvjet 64x32, 16 stages; ncu)
CONFIGS += ((64, 32, 64, 16, 4), (64, 32, 128, 8, 4), (64, 32, 64, 12, 4))
# the split tail ("st", session 21): whole rounds, then the last round's tiles split along K over the programs it
# leaves idle (kernels/_gemm_gluon.py ``TAIL``); a shape whose last round is over half full has none (an error row).
# Session 21's first version, a stream-K tail, was slower everywhere (tests/bench/runs/s21_st_*.json)
CONFIGS += ((128, 256, 64, 3, 8, "st"), (128, 128, 64, 5, 8, "st"), (128, 128, 64, 4, 4, "st"),
            (128, 64, 64, 8, 4, "st"), (64, 64, 128, 5, 4, "st"), (64, 128, 64, 8, 4, "st"))
# fp8 e4m3 (b K-major): precise accumulation keeps a partial accumulator: 128x256 and 256x128 spill ~250 B there.
# Precise configs add the partials pipelined (stage k's partial while stage k+1's wgmma runs) unless "sync".
FP8_SHAPES = "8192x8192x8192,4096x4096x4096,1024x8192x8192"
FP8_CONFIGS = ((128, 128, 128, 5, 8), (128, 128, 64, 6, 8), (128, 256, 128, 3, 8), (128, 128, 128, 4, 4, "pp"),
               (128, 128, 128, 5, 8, "sync"), (128, 128, 128, 4, 8), (128, 128, 64, 8, 8),
               # M <= 128: one warpgroup, narrower tiles (more programs)
               (64, 128, 128, 6, 4), (128, 64, 128, 6, 4), (64, 64, 128, 8, 4),
               # M <= 128, split-K (see CONFIGS)
               (128, 128, 128, 5, 8, "sk"), (128, 64, 128, 6, 4, "sk"),
               # the split tail (see CONFIGS)
               (128, 128, 128, 5, 8, "st"), (128, 64, 128, 6, 4, "st"))
FP8_TOL = 3e-2


def _split_flag(flags):
    """"skN": split K in N; "sk" (kernels/_gemm_ws.py's split candidates): per shape (``split_k_for``) -> "auto"."""
    for f in flags:
        if isinstance(f, str) and f.startswith("sk"):
            return int(f[2:]) if f[2:] else "auto"
    return 1


def _cfg_kwargs(cfg, fp8=False) -> dict:
    """A config tuple's keyword arguments; trailing flags: "pp" (or True: kernels/_gemm_ws.py's tuples), "sync",
    "sk[N]" (split-K), "st" (or "tail": kernels/_gemm_ws.py's tuples; the split tail)."""
    bm, bn, bk, stages, warps, *flags = cfg
    kw = dict(block_m=bm, block_n=bn, block_k=bk, stages=stages, num_warps=warps,
              pingpong="pp" in flags or True in flags, split_k=_split_flag(flags),
              tail="st" in flags or "tail" in flags)
    if fp8:
        kw["pipelined"] = "sync" not in flags
    return kw


def cfg_name(cfg) -> str:
    k = _cfg_kwargs(cfg)
    sk = k["split_k"]
    return ("{block_m}x{block_n}x{block_k} s{stages} w{num_warps}".format(**k) + (" pp" if k["pingpong"] else "")
            + (" sync" if "sync" in cfg[5:] else "") + ("" if sk == 1 else f" sk{'' if sk == 'auto' else sk}")
            + (" st" if k["tail"] else ""))


# ---------------------------------------------------------------- compile only (CPU, no GPU needed)
PTX_COUNTS = {"wgmma": r"wgmma\.mma_async", "cp.async.bulk.tensor": r"cp\.async\.bulk\.tensor",
              "mbarrier": r"mbarrier\.", "setmaxnreg": r"setmaxnreg",
              # split-K's merge: the counter's gpu-scope acq_rel atomic, the partials re-read from L2
              "atom.acq_rel": r"atom\.global\.gpu\.acq_rel", "ld.global.cg": r"ld\.global\.cg"}


def compile_config(cfg, fp8=False, fast_accum=False, b_nk=None) -> dict:
    """Compile one config for sm_90 on the CPU: registers, spills, shared memory and PTX instruction counts.
    ``b_nk``: b read K-major (a ``w.t()`` weight; always for fp8)."""
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    from tritondbg.ir.stages import cubin_usage

    k = _cfg_kwargs(cfg)
    bm, bn, bk, warps, pp = k["block_m"], k["block_n"], k["block_k"], k["num_warps"], k["pingpong"]
    t = torch.float8_e4m3fn if fp8 else torch.bfloat16
    a, b = torch.empty(256, 256, dtype=t), torch.empty(256, 256, dtype=t)
    c = torch.empty(256, 256, dtype=torch.bfloat16)
    b_nk = fp8 if b_nk is None else (b_nk or fp8)
    descs = make_descriptors(a, b, c, bm, bn, bk, b_nk=b_nk)  # CPU tensors: only the types matter here
    split = 4 if k["split_k"] == "auto" else k["split_k"]
    const = dict(GROUP_M=8, STAGES=k["stages"], B_NK=b_nk, PINGPONG=pp,
                 PRECISE=(0 if fast_accum else 1 if "sync" in cfg[5:] else 2) if fp8 else 0,
                 SPLIT_K=split, TAIL=3 if k["tail"] else 0, num_warps=warps)
    types = dict(zip(("a_desc", "b_desc", "c_desc"), (mangle_type(d) for d in descs)))
    if split > 1 or k["tail"]:
        types.update(ws_ptr="*fp32", cnt_ptr="*i32")
    else:
        const.update(ws_ptr=None, cnt_ptr=None)
    if fp8:
        types.update(scale_a_ptr="*fp32", scale_b_ptr="*fp32")
    else:
        const.update(scale_a_ptr=None, scale_b_ptr=None)
    sig = {n: types.get(n, "constexpr") for n in gluon_gemm_kernel.arg_names}
    src = GluonASTSource(gluon_gemm_kernel, sig, const)
    maxnreg = _maxnreg(warps, pp)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=warps, maxnreg=maxnreg))
    ptx = k.asm["ptx"]
    row = dict(config=cfg_name(cfg) + (" b=w.t()" if b_nk and not fp8 else ""), shared_kib=k.metadata.shared // 1024, maxnreg=maxnreg,
               **{name: len(re.findall(pat, ptx)) for name, pat in PTX_COUNTS.items()},
               setmaxnreg_values=sorted(set(re.findall(r"setmaxnreg\.\w+\.sync\.aligned\.u32\s+(\d+)", ptx))))
    usage = cubin_usage(k.asm["cubin"])
    row["regs"], row["spill_bytes"] = usage["REG"], usage["STACK"]
    row["wgmma_serialised"] = _wgmma_serialised(ptx, maxnreg)
    return row


def _wgmma_serialised(ptx: str, maxnreg: int) -> bool | None:
    """Whether ptxas serialises the wgmma pipeline (its C7514 / C7515 "Potential Performance Loss" notes, which
    Triton's compile does not show): the PTX assembled again with -v. None where ptxas cannot be run."""
    import subprocess
    import tempfile

    try:
        from triton.backends.nvidia.compiler import get_ptxas

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "k.ptx")
            with open(path, "w") as f:
                f.write(ptx)
            p = subprocess.run([get_ptxas(90).path, "-arch=sm_90a", "-v", f"--maxrregcount={maxnreg}", path,
                                "-o", os.path.join(d, "k.cubin")], capture_output=True, text=True, timeout=120)
    except Exception:  # noqa: BLE001 - another Triton's ptxas lookup: unknown, not a failure
        return None
    return bool(re.search(r"C751[45]", p.stdout + p.stderr))


def compile_only(configs, fp8=False, fast_accum=False, layouts=(False,)) -> int:
    kind = ("fp8 e4m3 -> bf16, " + ("fast" if fast_accum else "precise") + " accumulation") if fp8 else "bf16"
    print(f"Triton {triton.__version__}, sm_90, {kind}, producer {PRODUCER_REGS.value} regs")
    failed = 0
    jobs = [(cfg, b_nk) for cfg in configs for b_nk in layouts]
    for cfg, b_nk in jobs:
        try:
            r = compile_config(cfg, fp8, fast_accum, b_nk)
            print(f"{r['config']:<28} regs {r['regs']:>3} (maxnreg {r['maxnreg']}, setmaxnreg "
                  f"{'/'.join(r['setmaxnreg_values']) or '-'})  spills {r['spill_bytes']} B  "
                  f"smem {r['shared_kib']} KiB  "
                  f"wgmma {r['wgmma']}  cp.async.bulk.tensor {r['cp.async.bulk.tensor']}  mbarrier {r['mbarrier']}  "
                  f"setmaxnreg {r['setmaxnreg']}  atom.acq_rel {r['atom.acq_rel']}  ld.global.cg {r['ld.global.cg']}"
                  + {True: "  WGMMA SERIALISED (ptxas C7514)", None: "  (ptxas -v not run)"}.get(r["wgmma_serialised"], ""),
                  flush=True)
        except Exception as e:  # noqa: BLE001 - a config that does not compile is a line, the others still run
            failed += 1
            msg = [line for line in str(e).splitlines() if line.strip()]
            print(f"{cfg_name(cfg) + (' b=w.t()' if b_nk else ''):<28} FAILED {type(e).__name__}: {(msg[-1] if msg else '')[:200]}", flush=True)
    return 1 if failed == len(jobs) else 0


# ---------------------------------------------------------------- GPU: check, then time
def _shape_kwargs(cfg, M, N, K, fp8=False) -> dict:
    """``_cfg_kwargs`` with an "auto" split resolved for this shape, as the race does (``split_k_for``)."""
    import torch

    from tritondbg.kernels._gemm_gluon import split_k_for

    kw = _cfg_kwargs(cfg, fp8)
    if kw["split_k"] == "auto":
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        kw["split_k"] = split_k_for(M, N, K, kw["block_m"], kw["block_n"], kw["block_k"], sms)
    return kw


def _nan_out(M, N, dtype):
    import torch

    return torch.full((M, N), float("nan"), device="cuda", dtype=dtype)


def _problem(args, M, N, K):
    """Inputs, the contenders (name -> fn) and a check(out) -> (error figure, ok) for one shape."""
    import torch

    from tritondbg.kernels import fp8_gemm as F8
    from tritondbg.kernels import gemm as G

    g = torch.Generator(device="cuda").manual_seed(0)
    if args.fp8:
        a = (torch.randn(M, K, device="cuda", generator=g) / 4).to(torch.float8_e4m3fn)
        b = (torch.randn(N, K, device="cuda", generator=g) / 4).to(torch.float8_e4m3fn).t()  # K-major, as _scaled_mm
        sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda")
        ref = (a.float() @ b.float()) * (0.5 * 0.25)
        fast = args.fast_accum

        def check(out):  # the bundled fp8 tolerance (tritondbg/compare.py float8_e4m3fn): |d| <= 3e-2 + 3e-2 |ref|
            bad = int((~((out.float() - ref).abs() <= FP8_TOL + FP8_TOL * ref.abs())).sum())  # NaN counts as bad
            # fast accumulation is timed even where it misses the precise bound, if every output is finite
            return bad, bad == 0 or (fast and bool(torch.isfinite(out).all()))

        fns = {"torch._scaled_mm": lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                                            use_fast_accum=fast),
               "fp8_gemm": lambda: F8.fp8_gemm(a, b, sa, sb, fast_accum=fast)}
        for cfg in args.config_list:  # own NaN-filled output each: a kernel writing nothing cannot pass
            fns[cfg_name(cfg)] = lambda cfg=cfg, c=_nan_out(M, N, torch.bfloat16): gluon_fp8_gemm(
                a, b, sa, sb, fast_accum=fast, out=c, **_shape_kwargs(cfg, M, N, K, fp8=True))
        return fns, check
    dtype = getattr(torch, args.dtype)
    a = torch.randn(M, K, device="cuda", generator=g).to(dtype)
    b = (torch.randn(K, N, device="cuda", generator=g) / K ** 0.5).to(dtype)
    if args.b_layout == "nk":  # b = w.t() of a row-major (N, K) weight, as nn.Linear holds it
        b = b.t().contiguous().t()
    ref = a.float() @ b.float()
    scale = ref.abs().max().item()

    def check(out):
        rel = (out.float() - ref).abs().max().item() / scale
        return rel, rel < 1e-2

    fns = {"torch.matmul": lambda: a @ b, "gemm": lambda: G.gemm(a, b)}
    for cfg in args.config_list:  # own NaN-filled output each: a kernel writing nothing cannot pass
        fns[cfg_name(cfg)] = lambda cfg=cfg, c=_nan_out(M, N, dtype): gluon_gemm(a, b, out=c, **_shape_kwargs(cfg, M, N, K))
    return fns, check


def measure(key: dict, fns: dict, check, timer, before=lambda name: None):
    """Check each contender's output, time the right ones (timer: fn -> ms); the first contender (torch's) is
    the ratios' denominator. Returns the rows and a one-line summary."""
    rows, cells = [], []
    for i, (name, fn) in enumerate(fns.items()):
        before(name)  # the partial JSON names the contender running, should it hang
        r = dict(key, name=name, us=None)
        try:
            r["err"], ok = check(fn())
            if ok:
                r["us"] = timer(fn) * 1e3
            else:
                r["error"] = "WRONG"
        except Exception as e:  # noqa: BLE001 - a config that does not compile or launch is a row
            msg = [line for line in str(e).splitlines() if line.strip()]
            r["error"] = f"{type(e).__name__}: {(msg[-1] if msg else '')[:160]}"
        if i and r["us"] is not None and rows[0]["us"] is not None:
            r["x_torch"] = rows[0]["us"] / r["us"]  # > 1: faster than torch
        rows.append(r)
        cells.append(f"{name} " + (r.get("error", "")[:60] if r["us"] is None else f"{r['us']:.1f} us"
                                   + (f" {r['x_torch']:.3f}x" if "x_torch" in r else "")))
    return rows, " | ".join(cells)


def bench(args) -> int:
    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    if torch.cuda.get_device_capability()[0] != 9:
        print(f"needs a Hopper GPU (sm_90), not {torch.cuda.get_device_name()}", file=sys.stderr)
        return 2
    from triton.testing import do_bench, do_bench_cudagraph

    from tritondbg.kernels._launch import ensure_allocator

    ensure_allocator()  # the bundled kernels' device-side TMA descriptors need Triton's allocator
    if args.timer == "graph":  # GPU time: the launch replayed from a CUDA graph (no host cost, L2 warm)
        def timer(fn):
            return do_bench_cudagraph(fn, rep=args.rep, return_mode="median")
    elif args.timer == "gpu":  # GPU time with the L2 flushed, host part excluded: the race's own timer
        from tritondbg.kernels._race import _time

        def timer(fn):
            return _time(fn) / 1e3
    else:  # do_bench: L2 flushed, host cost included where the kernel is shorter than the launch path
        def timer(fn):
            return do_bench(fn, warmup=10, rep=args.rep, return_mode="median")
    rows, wrong, t0 = [], 0, time.time()
    dtype = "float8_e4m3fn" if args.fp8 else args.dtype
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        fns, check = _problem(args, M, N, K)
        key = dict(M=M, N=N, K=K, dtype=dtype, b_layout="nk" if args.fp8 else args.b_layout)
        shape_rows, line = measure(key, fns, check, timer,
                                   lambda name: _save(args.out, dict(partial=True, running=f"{shape} {name}"), rows))
        rows += shape_rows
        wrong += sum(r.get("error") == "WRONG" for r in shape_rows)
        print(f"{shape}: {line}", flush=True)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), gpu=torch.cuda.get_device_name(), triton=triton.__version__,
                torch=torch.__version__, seconds=round(time.time() - t0), fast_accum=bool(args.fast_accum),
                timer=args.timer,
                command="python tests/bench/gluon_gemm.py " + " ".join(args.argv))
    _save(args.out, meta, rows)
    print(json.dumps(meta))
    return 1 if wrong else 0


def _save(path, meta, rows):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=None, help=f"comma-separated MxNxK [default: {SHAPES}; --fp8: {FP8_SHAPES}]")
    ap.add_argument("--configs", default=None, help="comma-separated indices into CONFIGS / FP8_CONFIGS [all]; "
                    "'race': the tiles gemm races (kernels/_gemm_ws.py), each with b row-major and b = w.t(); "
                    "with --fp8, the tiles fp8_gemm races")
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16"))
    ap.add_argument("--fp8", action="store_true", help="fp8 e4m3 inputs, per-tensor scales, bf16 out")
    ap.add_argument("--b-layout", default="kn", choices=("kn", "nk"),
                    help="bf16: b row-major (K, N), or nk: b = w.t() of a row-major (N, K) weight")
    ap.add_argument("--fast-accum", action="store_true", help="--fp8: fast accumulation (ours and _scaled_mm's)")
    ap.add_argument("--timer", default="bench", choices=("bench", "graph", "gpu"),
                    help="bench: do_bench (L2 flushed, host cost included); graph: CUDA-graph replay (GPU time, "
                    "L2 warm); gpu: the race's timer (GPU time, L2 flushed)")
    ap.add_argument("--rep", type=int, default=50, help="do_bench rep (ms)")
    ap.add_argument("--out", default="gluon_gemm.json")
    ap.add_argument("--compile-only", action="store_true", help="compile the configs for sm_90 on the CPU")
    args = ap.parse_args(argv)
    args.argv = argv
    table = FP8_CONFIGS if args.fp8 else CONFIGS
    args.shapes = args.shapes or (FP8_SHAPES if args.fp8 else SHAPES)
    try:
        if args.configs == "race":
            from tritondbg.kernels import _gemm_ws as WS

            ms = (64, 1024) if args.fp8 else (64, 256, 1024)
            args.config_list = list(dict.fromkeys(c for m in ms for c in WS.candidates(m, fp8=args.fp8)))
        else:
            args.config_list = table if args.configs is None else [table[int(i)] for i in args.configs.split(",")]
        for s in args.shapes.split(","):
            if len([int(v) for v in s.split("x")]) != 3:
                raise ValueError(s)
    except (ValueError, IndexError) as e:
        print(f"bad --configs or --shapes: {e}", file=sys.stderr)
        return 2
    if args.compile_only:
        layouts = (False, True) if args.configs == "race" and not args.fp8 else (args.fp8,)
        return compile_only(args.config_list, args.fp8, args.fast_accum, layouts)
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
