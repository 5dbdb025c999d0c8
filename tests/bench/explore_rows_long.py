"""Issue 18, the row kernels' configs on many long rows (11008..32768 columns) and on mid-size inputs.

The sweep's big inputs (~32M elements) of long rows run well under the copy's bandwidth: softmax 1024x32768
bf16 46 us (2.9 TB/s, looped kernel: pass 2 reads the row back from L2) against ~37 us for rows of <= 8192
columns (3.5 TB/s). This times, per shape, torch, the copy, the wrapper's pick and candidate configs of the
existing kernels: one program per row holding the whole row (16 or 32 warps), the same as persistent programs
with the next row's load in flight (stages 2-3), and the looped kernel at other chunks and warps. Each config is
checked against the reference first, then timed under do_bench (median, L2 flushed). Rows of <= 8192 columns
(mid-size inputs, ``--graph`` for CUDA-graph GPU time too): rows per program x warps, and the split kernel.

Session 26 (H200, bf16/fp16, runs/s26_long_*.json, s26_mid.json): no config beat the rule's by more than do_bench's
noise on the long rows (1024x32768: one row per program with 32 warps, 3 stages 44.4 us against the looped
kernel's 45.1; 1365x24576 looped 8192-column chunks with 8 warps 42.4 against 44.8 with 16) nor, in GPU time,
on the mid-size ones (every pick within 0.2 us of the best).

    python tests/bench/explore_rows_long.py [--kernel softmax|layernorm] [--dtypes bfloat16]
        [--shapes 1024x32768,...] [--graph] [--out F.json]

Needs a CUDA GPU (exit 2 without one).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

SHAPES = "1024x32768,1365x24576,2048x16384,2341x14336,2731x12288,3048x11008"


def candidates(M: int, N: int):
    import triton

    from tritondbg.kernels._rows import RowConfig

    block = triton.next_power_of_2(N)
    out = []
    if block <= 8192:  # short rows (mid-size inputs): rows per program and warps
        for rows in (1, 2, 4, 8, 16, 32, 64):
            for warps in (1, 2, 4, 8, 16):
                if 4 <= rows * block // (32 * warps) <= 64 and M // rows >= 64:
                    out.append(RowConfig("single", block, rows, warps, 1))
        out.append(RowConfig("single", block, 1, max(4, block // 1024), 2))
        if block // 2 < N <= 0.75 * block:
            out += [RowConfig("split", block // 2, 1, warps) for warps in (4, 8, 16)]
        return out
    for warps in (16, 32):
        for stages in (1, 2, 3):
            out.append(RowConfig("single", block, 1, warps, stages))
    if block // 2 < N <= 0.75 * block:
        for warps in (16, 32):
            out.append(RowConfig("split", block // 2, 1, warps))
    for chunk, warps in ((2048, 4), (4096, 4), (4096, 8), (8192, 8), (8192, 16), (16384, 16), (16384, 32)):
        if chunk < N:
            out.append(RowConfig("looped", chunk, 1, warps, 1))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default="softmax", choices=("softmax", "layernorm"))
    ap.add_argument("--dtypes", default="bfloat16")
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--rep", type=int, default=100)
    ap.add_argument("--no-align", action="store_true", help="rows off 16-byte boundaries with scalar "
                    "accesses (the path before session 26) instead of whole vectors from each row's aligned base")
    ap.add_argument("--graph", action="store_true", help="also time CUDA-graph replays (GPU time, no host cost)")
    ap.add_argument("--out", default="explore_rows_long.json")
    args = ap.parse_args(argv)
    import torch
    import triton
    from explore_rows_coop import graph_us

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    if args.kernel == "softmax":
        from tritondbg.kernels import softmax as K

        def ours(x, cfg):
            return K.softmax(x, config=cfg)

        def theirs(x):
            return torch.softmax(x, dim=-1)

        def ref(x):
            return K.reference(x)
    else:
        from tritondbg.kernels import layernorm as K

        def ours(x, cfg):
            return K.layernorm(x, w, b, config=cfg)

        def theirs(x):
            return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)

        def ref(x):
            return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float())

    if args.no_align:  # both wrappers call kernels/_rows.py's va through their module's global
        K.va = lambda *a: 1

    def bench(fn):
        return triton.testing.do_bench(fn, warmup=25, rep=args.rep, return_mode="median") * 1e3

    print(f"Triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    rows_out = []
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        for shape in args.shapes.split(","):
            M, N = map(int, shape.split("x"))
            gen = torch.Generator(device="cuda").manual_seed(0)
            x = (4 * torch.randn(M, N, device="cuda", generator=gen)).to(dtype)
            w = torch.randn(N, device="cuda", generator=gen).to(dtype)
            b = torch.randn(N, device="cuda", generator=gen).to(dtype)
            r = ref(x)
            copy_out = torch.empty_like(x)
            t_copy = bench(lambda: copy_out.copy_(x))
            g_copy = graph_us(lambda: copy_out.copy_(x)) if args.graph else None
            t_torch = [bench(lambda: theirs(x))]
            results = []
            for cfg in [None, *candidates(M, N)]:
                fn = (lambda cfg=cfg: ours(x, cfg))  # None: the wrapper's own pick
                try:
                    err = (fn().float() - r).abs().max().item()
                    torch.cuda.synchronize()
                except Exception as e:  # out of registers / shared memory: recorded
                    results.append(dict(config=cfg and list(cfg), error=f"{type(e).__name__}: {e}"[:200]))
                    continue
                if err > 5e-2:
                    results.append(dict(config=cfg and list(cfg), error=f"max abs err {err:.3g}"))
                    continue
                results.append(dict(config=None if cfg is None else list(cfg), us=bench(fn),
                                    **(dict(graph_us=graph_us(fn)) if args.graph else {})))
            t_torch.append(bench(lambda: theirs(x)))
            tt = min(t_torch)
            timed = sorted((q for q in results if "us" in q), key=lambda q: q["us"])
            rows_out.append(dict(dtype=dtype_name, M=M, N=N, torch_us=t_torch, copy_us=t_copy, copy_graph_us=g_copy,
                                 configs=results))
            pick = next((q for q in results if q["config"] is None and "us" in q), None)
            print(f"{dtype_name:8s} {M:5d}x{N:<6d} torch {tt:6.1f} copy {t_copy:5.1f} pick "
                  + (f"{pick['us']:.1f} ({tt / pick['us']:.2f}x)" if pick else "?") + "  best: "
                  + ", ".join(f"{q['config'] and q['config'][:5]} {q['us']:.1f}"
                              + (f"/{q['graph_us']:.2f}" if "graph_us" in q else "") + f" ({tt / q['us']:.2f}x)"
                              for q in timed[:5])
                  + "".join(f"\n    bad {q['config']}: {q['error'][:90]}" for q in results if "error" in q),
                  flush=True)
    with open(args.out, "w") as f:
        json.dump(dict(kernel=args.kernel, triton=triton.__version__, torch=torch.__version__,
                       gpu=torch.cuda.get_device_name(), rows=rows_out), f, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
