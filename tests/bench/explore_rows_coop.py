"""Issue 18, few long rows: does cutting each row over several programs (softmax_coop_kernel) beat one program
per row?

With M rows of N columns and M well under the SM count, the single-pass kernels run M programs: each row's
bytes stream through one SM while most SMs idle (softmax 11x24576 bf16: 4.7 us of GPU time against a copy's
1.2). The coop kernel cuts each row into slices, one program each, meeting at a per-row barrier under a
cooperative launch. This times, per shape, torch, the wrapper's pick, the one-program-per-row rule's and coop
configs (slice = block_n x per columns), each checked against the reference first (and the barrier's counters
back at zero), under do_bench (median, L2 flushed) and as CUDA-graph replays (GPU time).

    python tests/bench/explore_rows_coop.py [--dtypes bfloat16] [--shapes 11x24576,...] [--out F.json]
    python tests/bench/explore_rows_coop.py --caps 3,4 ...   # the rule's pick under each programs-per-SM cap

Needs a CUDA GPU (exit 2 without one).
"""
from __future__ import annotations

import argparse
import json
import sys

SHAPES = ("52x5000,64x4096,87x3000,21x12288,24x11008,16x16384,18x14336,32x8192,11x24576,8x32768,43x6144,"
          "256x4096,210x5000,128x8192,95x11008,85x12288,73x14336,64x16384,43x24576,"
          "1x32000,1x128256,8x128256,32x151936,64x50257,4x256000")


def candidates(M: int, N: int, sms: int):
    import triton

    from tritondbg.kernels._rows import RowConfig

    out = []
    for slice_ in (1024, 2048, 4096, 8192, 16384, 32768):
        chunks = triton.cdiv(N, slice_)
        if chunks < 2 or M * chunks > 4 * sms:
            continue
        for block, per in ((slice_, 1), (slice_ // 2, 2), (slice_ // 4, 4)):
            if block < 512 or block > 16384:
                continue
            for warps in (4, 8, 16, 32):
                if 8 <= block // (32 * warps) <= 32:
                    out.append(RowConfig("coop", block, 1, warps, 1, per))
    return out


def graph_us(fn, n=20, reps=5):
    import torch

    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    best = float("inf")
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        g.replay()
        e.record()
        torch.cuda.synchronize()
        best = min(best, s.elapsed_time(e) * 1e3 / n)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtypes", default="bfloat16")
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--rep", type=int, default=100)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--picks-only", action="store_true", help="time the wrapper's pick and the one-program-per-row "
                    "rule only (no coop candidates)")
    ap.add_argument("--caps", default="", help="comma-separated values of _rows.COOP_PROGRAMS_PER_SM: time the "
                    "rule's coop pick under each (the first of its configs that launches) instead of the candidates")
    ap.add_argument("--out", default="explore_rows_coop.json")
    args = ap.parse_args(argv)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from tritondbg.kernels import _rows, _scratch
    from tritondbg.kernels import softmax as SM

    def bench(fn):
        return triton.testing.do_bench(fn, warmup=25, rep=args.rep, return_mode="median") * 1e3

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"Triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}, {sms} SMs",
          flush=True)
    rows_out = []
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        for shape in args.shapes.split(","):
            M, N = map(int, shape.split("x"))
            gen = torch.Generator(device="cuda").manual_seed(0)
            x = (4 * torch.randn(M, N, device="cuda", generator=gen)).to(dtype)
            ref = SM.reference(x)
            copy_out = torch.empty_like(x)
            t_copy = bench(lambda: copy_out.copy_(x))
            t_torch = [bench(lambda: torch.softmax(x, dim=-1))]
            rule = SM.config_for(N, x.element_size(), M=M)
            results = []
            cands = [] if args.picks_only or args.caps else candidates(M, N, sms)
            cap0 = _rows.COOP_PROGRAMS_PER_SM
            try:
                for cap in filter(None, args.caps.split(",")):
                    _rows.COOP_PROGRAMS_PER_SM = int(cap)
                    cands += [c for c in _rows.coop_configs(M, N, x.element_size(), sms, SM.MAX_FUSED_BLOCK_N)
                              if c not in cands][:2]  # the wrapper takes the first that launches
            finally:  # the wrapper's own pick (config None) under the module's cap, not the last one asked
                _rows.COOP_PROGRAMS_PER_SM = cap0
            for cfg in [None, rule, *cands]:
                fn = (lambda cfg=cfg: SM.softmax(x, config=cfg))  # None: the wrapper's own pick
                try:
                    err = (fn().float() - ref).abs().max().item()
                    torch.cuda.synchronize()
                except Exception as e:  # too many programs for a cooperative launch, or no compile: recorded
                    results.append(dict(config=cfg and list(cfg), error=f"{type(e).__name__}: {e}"[:200]))
                    continue
                left = sum(int(t.count_nonzero()) for t in _scratch.buffers("softmax_count"))
                if err > 2e-2 or left:
                    results.append(dict(config=cfg and list(cfg), error=f"max abs err {err:.3g}, counters left {left}"))
                    continue
                results.append(dict(config=None if cfg is None else list(cfg), us=bench(fn), graph_us=graph_us(fn),
                                    rule=cfg is rule, pick=cfg is None))
            t_torch.append(bench(lambda: torch.softmax(x, dim=-1)))
            g_torch = graph_us(lambda: torch.softmax(x, dim=-1))
            g_copy = graph_us(lambda: copy_out.copy_(x))
            tt = min(t_torch)
            timed = [r for r in results if "us" in r]
            ruled = next((r for r in timed if r["rule"]), None)
            picked = next((r for r in timed if r["pick"]), None)
            top = sorted((r for r in timed if r["config"] and not r["rule"]), key=lambda r: r["us"])[:args.top]
            bad = [r for r in results if "error" in r]
            rows_out.append(dict(dtype=dtype_name, M=M, N=N, torch_us=t_torch, torch_graph_us=g_torch,
                                 copy_us=t_copy, copy_graph_us=g_copy, configs=results))

            def fmt(r):
                c = r["config"]
                tag = "pick" if r["pick"] else "rule" if r["rule"] else f"coop {c[1]}x{c[5]} w{c[3]}"
                return f"{tag} {r['us']:.2f}/{r['graph_us']:.2f} ({tt / r['us']:.2f}x)"

            print(f"{dtype_name:8s} {M:4d}x{N:<6d} torch {tt:6.2f}/{g_torch:.2f}  copy {t_copy:.2f}/{g_copy:.2f}  "
                  + (fmt(picked) if picked else "pick ?") + "  " + (fmt(ruled) if ruled else "rule ?")
                  + ("  best: " + ", ".join(map(fmt, top)) if top else "")
                  + (f"  [{len(bad)} bad: {bad[0]['error'][:80]}]" if bad else ""), flush=True)
    with open(args.out, "w") as f:
        json.dump(dict(triton=triton.__version__, torch=torch.__version__, gpu=torch.cuda.get_device_name(),
                       rows=rows_out), f, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
