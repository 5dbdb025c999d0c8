"""Issue 18, fp8 e4m3 gemm at large M: every candidate config of both large-M kernels (the pointer kernel
``fp8_gemm_kernel`` and the TMA kernel ``fp8_gemm_tma_kernel``) pinned one by one against torch._scaled_mm.

    python tests/bench/explore_fp8.py --out /tmp/r/explore_fp8.json          # GPU (an H200): < 3 min
    python tests/bench/explore_fp8.py --survey [--out survey.json]           # CPU: sm_90 regs/spills/smem
    python tests/bench/explore_fp8.py --kn --shapes 8192x8192x8192 --out kn.json  # GPU: row-major b
    python tests/bench/explore_fp8.py --survey-listed                         # CPU: the listed TMA configs

GPU: for each shape (8192^3, 4096^3, 8192x8192x4096, M=1024 N=K=8192; b K-major, the ``.t()`` of an (N, K)
weight, as _scaled_mm wants it) torch._scaled_mm (use_fast_accum False and True), ``fp8_gemm`` (today's
rule, autotuned) and each candidate launched directly (no autotuner) with precise accumulation (and, on
8192^3, fast accumulation too). Each output is checked first against ``reference`` with the fp8 tolerance
(|out - ref| <= 3e-2 + 3e-2 |ref|); a wrong or failing config is a row with its error and no time.
do_bench median, L2 flushed (Triton's default), one JSON row per (shape, candidate, accumulation).

Survey (no GPU needed): compiles every candidate of the wider grid for sm_90 on the CPU and prints registers,
spills and shared memory; ``CANDIDATES`` below keeps those that neither spill nor pass 227 KiB.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SHAPES = ((8192, 8192, 8192), (4096, 4096, 4096), (8192, 8192, 4096), (1024, 8192, 8192))
SMEM_LIMIT = 227 * 1024
TOL = 3e-2  # tritondbg/compare.py's float8_e4m3fn (atol, rtol)

# (kernel, BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, extra, accumulations): the GPU run's list, most
# promising first, warp-specialised last (a run out of its compile budget drops the tail). "p": precise, "f":
# fast accumulation (on the first shape only). Picked from the CPU survey (--survey: sm_90, Triton 3.9, bf16
# out): no spills, <= 227 KiB; the comment gives regs / spills / shared KiB, precise then fast.
# WARP_SPEC with a whole-tile store: Triton 3.6's warp specialisation fails on the subtiled epilogue
_SUB, _WS = dict(EPILOGUE_SUBTILE=True), dict(EPILOGUE_SUBTILE=False, WARP_SPEC=True)
CANDIDATES = [
    ("tma", 256, 128, 128, 8, 3, _SUB, "pf"),     # 254/0 176 | 255/0  (the pointer kernel's twin spills 4)
    ("tma", 128, 128, 256, 8, 3, _SUB, "pf"),     # 154/0 208 | 127/0
    ("tma", 128, 128, 128, 8, 4, _SUB, "pf"),     # 155/0 144 | 128/0
    ("ptr", 256, 128, 128, 8, 3, {}, "pf"),       # 255/4 144 | 254/0  today's best (912 TF/s), spills 4
    ("ptr", 128, 128, 256, 8, 3, {}, "p"),        # 198/0 192          today's 2nd (899 TF/s)
    ("tma", 256, 128, 128, 8, 4, _SUB, "p"),      # 254/0 224
    ("tma", 128, 128, 128, 8, 5, _SUB, "p"),      # 157/0 176
    ("tma", 128, 128, 128, 8, 3, _SUB, "p"),      # 154/0 112
    ("tma", 128, 256, 128, 8, 3, _SUB, "f"),      # 255/18 176 | 255/0: fast accumulation only
    ("tma", 128, 128, 128, 4, 4, _SUB, "p"),      # 254/0 144 (at the cap)
    ("tma", 128, 128, 256, 4, 3, _SUB, "p"),      # 254/0 208 (at the cap)
    ("tma", 256, 128, 128, 8, 3, dict(EPILOGUE_SUBTILE=False), "p"),  # whole-tile store: 208 KiB
    ("tma", 128, 128, 128, 8, 4, dict(EPILOGUE_SUBTILE=False), "p"),  # 160 KiB
    ("tma", 128, 128, 128, 8, 4, _WS, "p"),       # 8 warps: no partitions, i.e. one tile per program
    ("ptr", 128, 128, 128, 8, 4, {}, "p"),        # 170/0 128          today's 3rd (837 TF/s)
    # warp-specialised last: a hang or a fault there (one such kernel was wrong on the H200 before) costs only
    # these rows; the JSON is rewritten after every row
    # (one tile per program; 4 warps: producer/consumer partitions with setmaxnreg, 3.6 and 3.9 alike)
    ("tma", 256, 128, 128, 4, 3, _WS, "pf"),      # 168/0 209 | 168/0
    ("tma", 128, 128, 128, 4, 3, _WS, "p"),       # 168/0 129
    ("tma", 128, 128, 256, 4, 3, _WS, "p"),       # 168/0 225
]


def survey_grid():
    """The wider grid the survey compiles: tiles x warps x stages x accumulation (x WARP_SPEC for TMA)."""
    tiles = ((128, 128, 128), (128, 256, 128), (256, 128, 128), (128, 128, 256))
    for kernel, (bm, bn, bk), warps, stages, fast in itertools.product(("ptr", "tma"), tiles, (4, 8), (3, 4, 5),
                                                                        (False, True)):
        smem = stages * (bm + bn) * bk + (bm * bn if kernel == "tma" else 0)  # + subtiled bf16 staging
        if smem > SMEM_LIMIT:
            continue
        extra = dict(EPILOGUE_SUBTILE=True) if kernel == "tma" else {}
        yield kernel, bm, bn, bk, warps, stages, extra, fast
        if kernel == "tma" and warps in (4, 8) and stages == 3:
            yield kernel, bm, bn, bk, warps, stages, dict(EPILOGUE_SUBTILE=False, WARP_SPEC=True), fast


def listed_grid():
    """The TMA kernel's listed configs of 128x128 and up (the ones near the register cap), as autotuning would
    run them: precise accumulation, FAST_ONLY tiles with fast."""
    from tritondbg.kernels import _fp8_tma as T

    for c in T.TMA_CONFIGS:
        kw = dict(c.kwargs)
        bm, bn, bk = kw.pop("BLOCK_M"), kw.pop("BLOCK_N"), kw.pop("BLOCK_K")
        if bm * bn >= 128 * 128:
            kw.pop("GROUP_M")
            yield "tma", bm, bn, bk, c.num_warps, c.num_stages, kw, (bm, bn, bk) in T.FAST_ONLY


def survey(out: str | None, listed: bool = False) -> int:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    import triton

    import _fp8_survey as S

    rows = []
    t0 = time.time()
    print(f"{'kernel':6} {'tile':13} {'w':>2} {'s':>2} {'accum':7} {'extra':28} {'regs':>4} {'spill':>5} "
          f"{'smem KiB':>8}", flush=True)
    bad = 0
    for kernel, bm, bn, bk, warps, stages, extra, fast in (listed_grid() if listed else survey_grid()):
        meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, **extra)
        try:
            fig = (S.compile_tma if kernel == "tma" else S.compile_ptr)(meta, warps, stages, fast_accum=fast)
        except Exception as e:  # noqa: BLE001 - a config that does not compile is a row
            fig = dict(regs=None, spills=None, smem=None, error=f"{type(e).__name__}: {str(e)[:120]}")
        row = dict(kernel=kernel, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=stages,
                   fast_accum=fast, **extra, **fig)
        rows.append(row)
        bad += not (fig.get("spills") == 0 and (fig.get("smem") or 1 << 30) <= SMEM_LIMIT)
        smem = "-" if fig.get("smem") is None else f"{fig['smem'] / 1024:.0f}"
        ex = ",".join(f"{k}={int(v)}" for k, v in extra.items())
        print(f"{kernel:6} {f'{bm}x{bn}x{bk}':13} {warps:2d} {stages:2d} {'fast' if fast else 'precise':7} "
              f"{ex:28} {fig.get('regs') or '-':>4} {fig.get('spills') if fig.get('spills') is not None else '-':>5} "
              f"{smem:>8} {fig.get('error', '')}", flush=True)
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), triton=triton.__version__, target="cuda sm_90 (CPU compile)",
                command="python tests/bench/explore_fp8.py --survey", seconds=round(time.time() - t0))
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as f:
            json.dump(dict(meta=meta, rows=rows), f, indent=1)
        print(f"# wrote {out} ({len(rows)} rows, {meta['seconds']} s)")
    if listed and bad:
        print(f"# {bad} listed config(s) spill or exceed {SMEM_LIMIT // 1024} KiB", file=sys.stderr)
        return 1
    return 0


def gpu(args) -> int:
    if args.cpu_smoke:  # the whole GPU loop under the interpreter on tiny shapes (a test of this script)
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    if not args.cpu_smoke and not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)  # as the other H200 scripts; --survey runs on the CPU
        return 2
    import triton
    from triton.testing import do_bench

    if args.cpu_smoke:
        def do_bench(fn, warmup=0, rep=0):  # noqa: F811 - one timed call, no GPU
            t = time.perf_counter()
            fn()
            return (time.perf_counter() - t) * 1e3

    from tritondbg.kernels import _fp8_tma as T
    from tritondbg.kernels import fp8_gemm as F8

    t_start = time.time()
    dev = "cpu" if args.cpu_smoke else "cuda"
    one = torch.ones((), device=dev, dtype=torch.float32)
    rows = []
    budget = args.budget_s
    ptr_fn, tma_fn = F8.fp8_gemm_kernel.fn, T.fp8_gemm_tma_kernel.fn
    T._ensure_allocator()
    if args.kn:
        T.ROW_MAJOR_B = True  # let tma_plan describe a row-major b (B_TRANS=False)
    compiled, skipped = set(), set()
    gpu_name = "cpu-smoke" if args.cpu_smoke else torch.cuda.get_device_name()
    run_meta = dict(date=time.strftime("%Y-%m-%d %H:%M"), gpu=gpu_name,
                triton=triton.__version__, torch=torch.__version__,
                command="python tests/bench/explore_fp8.py " + " ".join(sys.argv[1:]))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)

    def save(done: bool) -> None:
        with open(args.out, "w") as f:
            json.dump(dict(meta=dict(run_meta, seconds=round(time.time() - t_start), complete=done), rows=rows), f,
                      indent=1)
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")] if args.shapes else SHAPES
    first = shapes[0]
    for M, N, K in shapes:
        gen = torch.Generator(device=dev).manual_seed(0)
        a = (torch.randn(M, K, device=dev, generator=gen) / 4).to(torch.float8_e4m3fn)
        w = (torch.randn(N, K, device=dev, generator=gen) / 4).to(torch.float8_e4m3fn)
        b_km = w.t()  # K-major: what _scaled_mm takes
        b = w.t().contiguous() if args.kn else b_km  # --kn: a row-major (K, N) b for our kernels
        ref = F8.reference(a, b, one, one)
        tf = lambda us: 2.0 * M * N * K / us / 1e6  # noqa: E731 - TFLOP/s from microseconds
        shape = f"{M}x{N}x{K}"

        def row(name, fn, config=None, fast=False):
            r = dict(shape=shape, M=M, N=N, K=K, name=name, fast_accum=fast, config=config, us=None, tflops=None)
            try:
                out = fn()
                if dev == "cuda":
                    torch.cuda.synchronize()
                err = (out.float() - ref).abs()
                bad = int((err > TOL + TOL * ref.abs()).sum())
                r.update(max_abs_err=float(err.max()), mismatched=bad)
                if bad == 0 or fast:  # fast accumulation is timed even where it misses the precise bound
                    ms = do_bench(fn, warmup=10, rep=args.rep)
                    r.update(us=ms * 1e3, tflops=tf(ms * 1e3))
            except Exception as e:  # noqa: BLE001 - a config that fails is a row
                r["error"] = f"{type(e).__name__}: {str(e)[:160]}"
            rows.append(r)
            save(False)  # partial results survive a hang or a crash
            base = rows_base.get(fast)
            ratio = f"{base / r['us']:.2f}x" if base and r["us"] else "-"
            print(f"{shape:16} {name:8} {'fast' if fast else 'precise':7} {_cfg_str(config):44} "
                  f"{r['us'] or 0:9.1f} us {r['tflops'] or 0:7.0f} TF/s {ratio:>6} err {r.get('max_abs_err', -1):.3f} "
                  f"bad {r.get('mismatched', '-')} {r.get('error', '')}", flush=True)
            return r

        rows_base = {}
        for fast in (False, True):
            r = row("_scaled_mm", lambda fast=fast: torch._scaled_mm(a, b_km, scale_a=one, scale_b=one,
                                                                      out_dtype=torch.bfloat16,
                                                                      use_fast_accum=fast), fast=fast)
            rows_base[fast] = r["us"]
        row("fp8_gemm", lambda: F8.fp8_gemm(a, b, one, one))
        c = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        for kernel, bm, bn, bk, warps, stages, extra, accs in CANDIDATES:
            meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, **extra)
            cfg = dict(kernel=kernel, **meta, num_warps=warps, num_stages=stages)
            for fast in (False, True):
                if ("f" if fast else "p") not in accs or (fast and (M, N, K) != first):
                    continue
                key = (repr(cfg), fast)  # compiled once (sizes are not specialised beyond % 16)
                if key not in compiled and time.time() - t_start > budget:
                    skipped.add(key)
                    continue
                compiled.add(key)
                if kernel == "ptr":
                    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)

                    def fn(meta=meta, grid=grid, warps=warps, stages=stages, fast=fast):
                        ptr_fn[grid](a, b, c, one, one, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                     b.stride(1), c.stride(0), c.stride(1), SCALE_A_ROWS=False,
                                     SCALE_B_COLS=False, FAST_ACCUM=fast, **meta, num_warps=warps,
                                     num_stages=stages)
                        return c
                else:
                    b_trans = T.tma_plan(a, b, c)
                    grid_fn, values = T.launch_args(a, b, c, one, one, False, False, b_trans, fast)
                    full = {"EPILOGUE_SUBTILE": False, "WARP_SPEC": False, **meta}
                    grid = grid_fn(full)

                    def fn(full=full, grid=grid, values=values, warps=warps, stages=stages):
                        tma_fn[grid](a, b, c, one, one, *values.values(), **full, num_warps=warps,
                                     num_stages=stages)
                        return c
                c.fill_(float("nan"))
                row(kernel, fn, cfg, fast)
        del a, w, b, b_km, ref, c
        if dev == "cuda":
            torch.cuda.empty_cache()
    if skipped:
        print(f"# compile budget ({budget:.0f} s) spent: {len(skipped)} (candidate, accumulation) pairs not run; "
              "a second run (warm Triton cache) or --budget-s runs them", flush=True)
    _summary(rows)
    save(True)
    print(f"# wrote {args.out} ({len(rows)} rows, {time.time() - t_start:.0f} s)")
    return 0


def _cfg_str(cfg) -> str:
    if not cfg:
        return ""
    short = dict(BLOCK_M="", BLOCK_N="x", BLOCK_K="x")
    tile = "".join(f"{short[k]}{cfg[k]}" for k in short)
    flags = "".join(f" {n}" for k, n in (("EPILOGUE_SUBTILE", "sub"), ("WARP_SPEC", "ws")) if cfg.get(k))
    return f"{tile} w{cfg['num_warps']} s{cfg['num_stages']}{flags}"


def _summary(rows) -> None:
    """Per shape and accumulation: the best correct config of each kernel, ratio to _scaled_mm."""
    print("\n# best correct config per (shape, accumulation, kernel); ratio = _scaled_mm time / ours")
    keys = sorted({(r["shape"], r["fast_accum"]) for r in rows})
    for shape, fast in keys:
        sel = [r for r in rows if r["shape"] == shape and r["fast_accum"] == fast]
        base = next((r["us"] for r in sel if r["name"] == "_scaled_mm"), None)
        for name in ("fp8_gemm", "ptr", "tma"):
            ok = [r for r in sel if r["name"] == name and r["us"] and (fast or r.get("mismatched") == 0)]
            if not ok:
                continue
            best = min(ok, key=lambda r: r["us"])
            ratio = f"{base / best['us']:.2f}x" if base else "-"
            print(f"{shape:16} {'fast' if fast else 'precise':7} {name:8} {best['us']:9.1f} us {ratio:>6} "
                  f"{_cfg_str(best['config'])}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="JSON file [GPU default: explore_fp8.json]")
    ap.add_argument("--survey", action="store_true", help="compile for sm_90 on the CPU: regs/spills/smem")
    ap.add_argument("--survey-listed", action="store_true",
                    help="--survey of the TMA kernel's listed big-tile configs only; exit 1 if one spills")
    ap.add_argument("--shapes", default="", help="MxNxK,... [default: the four above]")
    ap.add_argument("--rep", type=int, default=40, help="do_bench rep (ms)")
    ap.add_argument("--budget-s", type=float, default=120.0,
                    help="compile no new candidate after this many seconds (the compiled ones still run)")
    ap.add_argument("--kn", action="store_true",
                    help="b row-major (K, N) for our kernels (TMA B_TRANS=False); _scaled_mm keeps K-major")
    ap.add_argument("--cpu-smoke", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.survey or args.survey_listed:
        return survey(args.out, listed=args.survey_listed)
    args.out = args.out or "explore_fp8.json"
    return gpu(args)


if __name__ == "__main__":
    sys.exit(main())
