"""The Gluon prefill kernel (kernels/_attention_gluon.py) against the bundled tl kernel and SDPA flash, on the
sweep's prefill shapes (tests/bench/sweep_h200.py PREFILL), every (BLOCK_N, STAGES) variant.

    python tests/bench/gluon_attention.py --compile-only          # CPU: registers, spills, shared memory
    python tests/bench/gluon_attention.py [--shapes 0,6] [--variants 128s2,64s3] [--json out.json]

GPU mode: each variant is checked against SDPA flash (|d| <= 2e-2 + 2e-2 |ref|, bf16) and timed with the
sweep's timer (do_bench median, L2 flushed, interleaved rounds).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

VARIANTS = ("128s2", "64s3", "64s4", "128s3")  # persistent (parse_variant: suffixes t, f, q1)


def parse_variant(v: str) -> tuple[int, int, bool, bool, int | None]:
    """BLOCK_Ns<STAGES>[t|f][q1]: persistent programs taking the next untaken tile; t one program per tile; f
    persistent with the fixed stride (tiles p, p + grid, ...); q1 one Q buffer (else the kernel's default).
    Returns (BLOCK_N, STAGES, persistent, dynamic, q_bufs or None)."""
    m = re.fullmatch(r"(\d+)s(\d+)([tf])?(q1)?", v)
    if not m:
        raise SystemExit(f"gluon_attention: variant {v!r} is not BLOCK_Ns<STAGES>[t|f][q1] (e.g. 128s2, 128s2t, "
                         "128s2f, 128s2q1)")
    return int(m.group(1)), int(m.group(2)), m.group(3) != "t", m.group(3) is None, 1 if m.group(4) else None


def compile_variant(block_n: int, stages: int, d: int, causal: bool, persistent: bool = True, dynamic: bool = True,
                    q_bufs: int | None = None) -> dict:
    """Compile for sm_90 on the CPU (no GPU): registers, spills, shared memory, wgmma serialisation."""
    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    from gluon_gemm import _wgmma_serialised
    from kernels import _attention_gluon as G
    from tritondbg.ir.stages import cubin_usage

    t = torch.empty(1, 1, 256, d, dtype=torch.bfloat16)
    descs = G.make_descriptors(t, t, t, block_n)
    types = dict(zip(("q_desc", "k_desc", "v_desc"), (mangle_type(x) for x in descs)))
    types.update(o_ptr="*bf16", sched_ptr="*i32", H="i32", HK="i32", N_Q="i32", N_KV="i32", qk_scale="fp32")
    const = dict(CAUSAL=causal, STAGES=stages, DYNAMIC=dynamic and persistent,
                 Q_BUFS=q_bufs or G.q_buffers(block_n, stages, d, persistent))
    sig = {n: types.get(n, "constexpr") for n in G.gluon_attention_kernel.arg_names}
    k = triton.compile(GluonASTSource(G.gluon_attention_kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                       options=dict(num_warps=4, maxnreg=G.MAXNREG))
    usage = cubin_usage(k.asm["cubin"])
    ptx = k.asm["ptx"]
    return dict(variant=f"{block_n}s{stages}", d=d, causal=causal, regs=usage["REG"], spill_bytes=usage["STACK"],
                shared_kib=k.metadata.shared // 1024, wgmma=len(re.findall(r"wgmma\.mma_async", ptx)),
                wgmma_shapes=sorted(set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)", ptx))),
                setmaxnreg=sorted(set(re.findall(r"setmaxnreg\.\w+\.sync\.aligned\.u32\s+(\d+)", ptx))),
                wgmma_serialised=_wgmma_serialised(ptx, G.MAXNREG))


def compile_only(variants, dims=(128, 64)) -> int:
    import triton

    print(f"Triton {triton.__version__}, sm_90, bf16")
    failed = total = 0
    for v in variants:
        bn, st, persistent, dynamic, q_bufs = parse_variant(v)
        for d in dims:
            for causal in (False, True):
                total += 1
                try:
                    r = compile_variant(bn, st, d, causal, persistent, dynamic, q_bufs)
                    print(f"{v:6s} D{d:<4d} {'causal' if causal else 'full  '} regs {r['regs']:>3} "
                          f"(setmaxnreg {'/'.join(r['setmaxnreg']) or '-'}) spills {r['spill_bytes']} B  "
                          f"smem {r['shared_kib']} KiB  wgmma {r['wgmma']} ({'/'.join(r['wgmma_shapes'])})"
                          + {True: "  WGMMA SERIALISED (ptxas C7514)", None: "  (ptxas -v not run)"}.get(
                              r["wgmma_serialised"], ""), flush=True)
                except Exception as e:  # noqa: BLE001 - one failing variant is a line
                    failed += 1
                    msg = [ln for ln in str(e).splitlines() if ln.strip()]
                    print(f"{v:6s} D{d:<4d} {'causal' if causal else 'full  '} FAILED {type(e).__name__}: "
                          f"{(msg[-1] if msg else '')[:300]}", flush=True)
    return 1 if failed else 0


def bench(args) -> int:
    import torch
    import triton

    import kernels_h200 as kh
    from sweep_h200 import PREFILL, _close
    from kernels import _attention_gluon as G
    from tritondbg.kernels import attention as A

    shapes = [PREFILL[int(i)] for i in args.shapes.split(",")] if args.shapes else list(PREFILL)
    rows = []
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {torch.cuda.get_device_name()}, Triton {triton.__version__}, "
          f"torch {torch.__version__}", flush=True)
    for B, H, HKV, N, D, causal in shapes:
        gen = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(B, H, N, D, device="cuda", generator=gen, dtype=torch.bfloat16)
        k = torch.randn(B, HKV, N, D, device="cuda", generator=gen, dtype=torch.bfloat16)
        v = torch.randn(B, HKV, N, D, device="cuda", generator=gen, dtype=torch.bfloat16)
        bases = kh.baselines("attention", dict(q=q, k=k, v=v, causal=causal))
        flash = bases["sdpa flash"]
        ref = flash()
        name = f"B{B} H{H}/{HKV} N{N} D{D}" + (" causal" if causal else "")
        fns = {"tl": lambda: A.attention(q, k, v, causal=causal), "sdpa flash": flash}
        checks = {}
        for var in args.variant_list:
            bn, st, persistent, dynamic, q_bufs = parse_variant(var)
            fn = (lambda bn=bn, st=st, sms=None if persistent else B * H * N, dyn=dynamic, qb=q_bufs:
                  G.gluon_attention(q, k, v, causal=causal, block_n=bn, stages=st, num_sms=sms, dynamic=dyn,
                                    q_bufs=qb))
            try:
                ok, max_abs, n_bad = _close(fn(), ref, 2e-2, 2e-2)
                torch.cuda.synchronize()
                checks[var] = "ok" if ok else f"WRONG ({n_bad} bad, max {max_abs:.3g})"
                if ok:
                    fns["gluon " + var] = fn
            except Exception as e:  # noqa: BLE001
                checks[var] = f"ERROR {type(e).__name__}: {str(e).splitlines()[0][:150] if str(e) else ''}"
        fns["tl"]()
        torch.cuda.synchronize()
        runs = kh.interleaved(fns, rounds=args.rounds, rep=args.rep)
        times = {n: statistics.median(t) for n, t in runs.items()}
        flops = 4.0 * B * H * N * N * D * (0.5 if causal else 1.0)
        row = dict(shape=name, checks=checks, us={n: t * 1e3 for n, t in times.items()})
        rows.append(row)
        fl = times["sdpa flash"]
        parts = [f"{n} {t * 1e3:.1f} us ({fl / t:.2f}x flash, {flops / t / 1e9:.0f} TF/s)" for n, t in times.items()
                 if n != "sdpa flash"]
        print(f"{name:30s} flash {fl * 1e3:.1f} us | " + " | ".join(parts), flush=True)
        bad = {v: c for v, c in checks.items() if c != "ok"}
        if bad:
            print(f"{'':30s} {bad}", flush=True)
        del q, k, v
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(date=time.strftime("%Y-%m-%d %H:%M"), gpu=torch.cuda.get_device_name(),
                           triton=triton.__version__, rows=rows), f, indent=1)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compile-only", action="store_true")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--shapes", default="", help="indices into sweep_h200.PREFILL")
    p.add_argument("--dims", default="128,64", help="--compile-only: head dims")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rep", type=int, default=100)
    p.add_argument("--json", default="")
    args = p.parse_args(argv)
    args.variant_list = [v for v in args.variants.split(",") if v]
    for v in args.variant_list:
        parse_variant(v)
    if args.compile_only:
        return compile_only(args.variant_list, tuple(int(d) for d in args.dims.split(",")))
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
