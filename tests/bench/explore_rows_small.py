"""Issue 18, launch-bound row kernels: how many rows per program (and warps) for small inputs (~256K elements)?

The rule (kernels/_rows.py) gives short rows ~8 KiB of input per program, which for 256K elements leaves 64
programs on a GPU of 132 SMs. Under do_bench with the L2 flushed, the input then comes from HBM through half
the SMs. This times every (rows, warps) of the single-pass kernels on the sweep's small shapes beside the
rule's pick and torch's op, each config checked against the reference first.

    python tests/bench/explore_rows_small.py [--kinds softmax,layernorm] [--dtypes float16] [--n 128,256,...]
        [--elems 262144] [--out explore_rows_small.json]

One line per (kernel, shape, dtype): torch, the rule, the fastest config; every row goes to the JSON. do_bench
median, L2 flushed. Needs a CUDA GPU (exit 2 without one); about 4 minutes on an H200 for the defaults.
"""
from __future__ import annotations

import argparse
import json
import sys

SMALL_ELEMS = 1 << 18
NS = (128, 256, 512, 768, 1000, 1024, 2048, 3000, 4096)


def candidates(N: int, M: int, elem_size: int):
    """Single-pass configs: rows per program 1..64 (at most next_power_of_2(M), tile <= 16 KiB of input) and
    warps with 4..64 tile elements per thread."""
    import triton

    from tritondbg.kernels._rows import RowConfig

    block = triton.next_power_of_2(N)
    out = []
    for rows in (1, 2, 4, 8, 16, 32, 64):
        if rows > triton.next_power_of_2(M) or rows * block * elem_size > 16384:
            continue
        for warps in (1, 2, 4, 8, 16):
            per_thread = rows * block // (32 * warps)
            if 4 <= per_thread <= 64:
                out.append(RowConfig("single", block, rows, warps))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default="softmax,layernorm")
    ap.add_argument("--dtypes", default="float16")
    ap.add_argument("--n", default=",".join(map(str, NS)))
    ap.add_argument("--elems", type=int, default=SMALL_ELEMS, help="elements per input (rows = elems / N)")
    ap.add_argument("--rep", type=int, default=100)
    ap.add_argument("--out", default="explore_rows_small.json")
    args = ap.parse_args(argv)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    from tritondbg.kernels import layernorm as LN
    from tritondbg.kernels import softmax as SM

    def bench(fn):
        return triton.testing.do_bench(fn, warmup=25, rep=args.rep, return_mode="median") * 1e3

    rows_out = []
    print(f"Triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}, "
          f"{torch.cuda.get_device_properties(0).multi_processor_count} SMs", flush=True)
    for kind in args.kinds.split(","):
        for dtype_name in args.dtypes.split(","):
            dtype = getattr(torch, dtype_name)
            for N in map(int, args.n.split(",")):
                M = max(1, round(args.elems / N))
                gen = torch.Generator(device="cuda").manual_seed(0)
                x = torch.randn(M, N, device="cuda", generator=gen).to(dtype)
                w = (1 + 0.1 * torch.randn(N, device="cuda", generator=gen)).to(dtype)
                b = (0.1 * torch.randn(N, device="cuda", generator=gen)).to(dtype)
                if kind == "layernorm":
                    ref = LN.reference(x, w, b)
                    torch_fn = lambda: torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5)  # noqa: E731
                    ours = lambda cfg: (lambda: LN.layernorm(x, w, b, 1e-5, config=cfg))  # noqa: E731
                    rule = LN.config_for(N, x.element_size(), M=M)
                else:
                    ref = SM.reference(x)
                    torch_fn = lambda: torch.softmax(x, dim=-1)  # noqa: E731
                    ours = lambda cfg: (lambda: SM.softmax(x, config=cfg))  # noqa: E731
                    rule = SM.config_for(N, x.element_size(), M=M)
                t_torch = [bench(torch_fn)]
                results = []
                cands = candidates(N, M, x.element_size())
                if rule not in cands:
                    cands.append(rule)
                for cfg in cands:
                    fn = ours(cfg)
                    try:
                        err = (fn().float() - ref).abs().max().item()
                    except Exception as e:  # a config that does not compile: recorded, not timed
                        results.append(dict(config=list(cfg), error=f"{type(e).__name__}: {e}"[:200]))
                        continue
                    if err > 2e-2:
                        results.append(dict(config=list(cfg), error=f"max abs err {err:.3g}"))
                        continue
                    results.append(dict(config=list(cfg), us=bench(fn), rule=cfg == rule))
                t_torch.append(bench(torch_fn))
                tt = min(t_torch)
                timed = [r for r in results if "us" in r]
                best = min(timed, key=lambda r: r["us"])
                ruled = next(r for r in timed if r["rule"]) if any(r["rule"] for r in timed) else None
                rows_out.append(dict(kind=kind, dtype=dtype_name, M=M, N=N, torch_us=t_torch, configs=results))
                rs = f"rule {tuple(ruled['config'][2:4])} {ruled['us']:.2f} ({tt / ruled['us']:.2f}x)" if ruled else "rule ?"
                top = sorted(timed, key=lambda r: r["us"])[:3]
                print(f"{kind:9s} {dtype_name:8s} {M:5d}x{N:<5d} torch {tt:5.2f} us  {rs}  best: "
                      + ", ".join(f"rows {r['config'][2]} w{r['config'][3]} {r['us']:.2f} ({tt / r['us']:.2f}x)"
                                  for r in top), flush=True)
                del x, w, b, ref
    with open(args.out, "w") as f:
        json.dump(dict(triton=triton.__version__, torch=torch.__version__, gpu=torch.cuda.get_device_name(),
                       rows=rows_out), f, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
