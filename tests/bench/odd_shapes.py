"""Issue 18, shapes the sweep does not hold: odd vocabulary sizes (GPT-2's 50257, a padded 32001) in the ops a
language model runs on them, against torch on the local GPU.

- softmax over logits rows of an odd length (many rows: a training step's tokens; few: a decode step), and over
  attention scores of an odd sequence length (eager attention: ViT's 197 patches, CLIP's 77 tokens);
- the LM head ``h @ wte.t()`` (N odd: the output rows are off 16-byte boundaries, so TMA cannot store them) and
  its backward products ``dlogits @ wte`` (K odd) and ``dlogits.t() @ h`` (M odd);
- layernorm on the same odd rows.

Each op is checked against its fp32 reference first, then ours and torch are timed with do_bench (median, L2
flushed) in interleaved rounds (kernels_h200.interleaved); ratio = torch / ours (> 1: ours faster).

    python tests/bench/odd_shapes.py [--only softmax,gemm,layernorm] [--dtype bfloat16] [--shapes MxN,...]
        [--before] [--out F.json]

Needs a CUDA GPU (exit 2 without one).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

SOFTMAX = ("4096x50257", "16384x50257", "512x50257", "2048x32001", "8192x32001", "128x50257", "1024x151655",
           "8192x5001", "32768x1001", "64x4097",
           "151296x197", "262144x77")  # attention probabilities: ViT's 197 patches (B 64, 12 heads), CLIP's 77 tokens
LAYERNORM = ("8192x4097", "4096x50257", "262144x77", "151296x197", "32768x1001", "8192x5001", "1024x32001")
# (M, N, K, layout): "nt" = a @ w.t() (w of N x K, row-major), "nn" = a @ b (b of K x N, row-major)
GEMM = (("8192x50257x768", "nt"), ("4096x50257x1024", "nt"), ("8192x32001x4096", "nt"),
        ("8192x768x50257", "nn"), ("4096x4096x32001", "nn"), ("50257x768x8192", "nn"), ("127x50257x768", "nt"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="softmax,gemm,layernorm")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", default="", help="softmax/layernorm: these MxN shapes instead of the op's list")
    ap.add_argument("--before", action="store_true", help="softmax/layernorm as before the odd-row path (sessions "
                    "26 / 27): every access of rows off 16-byte boundaries scalar, the even-N rule's tiles")
    ap.add_argument("--out", default="odd_shapes.json")
    args = ap.parse_args(argv)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    import kernels_h200 as kh
    from tritondbg.kernels import gemm as G
    from tritondbg.kernels import layernorm as L
    from tritondbg.kernels import softmax as S

    if args.before:  # both wrappers call kernels/_rows.py's va and odd_rows through their module's globals
        for K in (L, S):
            K.va = lambda *a: 1
            K.odd_rows = lambda cfg, *args, **kwargs: cfg  # (cfg, elem_size, aligned=, M=): the rule's own tiles
    dtype = getattr(torch, args.dtype)
    gen = torch.Generator(device="cuda").manual_seed(0)
    print(f"Triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}, {args.dtype}",
          flush=True)
    rows = []

    def run(op, shape, ours, theirs, ref, tol, note=""):
        err = (ours().float() - ref).abs().max().item()
        t = kh.interleaved({"ours": ours, "torch": theirs}, rounds=args.rounds)
        t = {k: statistics.median(v) * 1e3 for k, v in t.items()}
        row = dict(op=op, shape=shape, note=note, err=err, ok=err <= tol, ours_us=t["ours"], torch_us=t["torch"],
                   ratio=t["torch"] / t["ours"])
        rows.append(row)
        print(f"{op:9s} {shape:18s} {note:22s} ours {t['ours']:8.1f} us  torch {t['torch']:8.1f} us  "
              f"{row['ratio']:.2f}x  err {err:.3g}{'' if row['ok'] else '  FAIL'}", flush=True)

    only = args.only.split(",")
    if "softmax" in only:
        for shape in (args.shapes.split(",") if args.shapes else SOFTMAX):
            M, N = map(int, shape.split("x"))
            x = (4 * torch.randn(M, N, device="cuda", generator=gen)).to(dtype)
            cfg = S.config_for(N, x.element_size(), M=M, sms=torch.cuda.get_device_properties(0).multi_processor_count)
            run("softmax", shape, lambda: S.softmax(x), lambda: torch.softmax(x, dim=-1), S.reference(x), 2e-2,
                f"{cfg.kind} {cfg.block_n} w{cfg.num_warps}")
    if "layernorm" in only:
        for shape in (args.shapes.split(",") if args.shapes else LAYERNORM):
            M, N = map(int, shape.split("x"))
            x = torch.randn(M, N, device="cuda", generator=gen).to(dtype)
            w, b = (torch.randn(N, device="cuda", generator=gen).to(dtype) for _ in range(2))
            ref = torch.nn.functional.layer_norm(x.float(), (N,), w.float(), b.float())
            cfg = L.config_for(N, x.element_size(), M=M)
            # one ulp of the largest output in x's dtype (|y| reaches ~20 with these weights: bf16's ulp there 0.125)
            tol = max(6e-2, ref.abs().max().item() * 2.0 ** (-7 if dtype == torch.bfloat16 else -10))
            run("layernorm", shape, lambda: L.layernorm(x, w, b),
                lambda: torch.nn.functional.layer_norm(x, (N,), w, b), ref, tol, f"{cfg.kind} {cfg.block_n}")
    if "gemm" in only:
        for shape, layout in GEMM:
            M, N, K = map(int, shape.split("x"))
            a = torch.randn(M, K, device="cuda", generator=gen).to(dtype) / K ** 0.25
            if layout == "nt":
                b = (torch.randn(N, K, device="cuda", generator=gen).to(dtype) / K ** 0.25).t()
            else:
                b = torch.randn(K, N, device="cuda", generator=gen).to(dtype) / K ** 0.25
            ref = a.float() @ b.float()
            G.gemm(a, b)  # the first call (autotuning, the Gluon race where eligible)
            path = "tma" if G.tma_plan(a, b) else "pointer"
            run("gemm", shape, lambda: G.gemm(a, b), lambda: torch.matmul(a, b), ref,
                0.05 * ref.abs().max().item(), f"b={'w.t()' if layout == 'nt' else 'row'} {path}")
            del a, b, ref
            torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(dict(triton=triton.__version__, torch=torch.__version__, gpu=torch.cuda.get_device_name(),
                       dtype=args.dtype, rows=rows), f, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
