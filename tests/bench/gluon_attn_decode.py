"""The Gluon decode-attention kernel (kernels/_gluon_attn_decode.py) beside the bundled decode (tl kernel) and SDPA.

    python tests/bench/gluon_attn_decode.py [--shapes B:H:H_KV:S,...] [--cands SPLITS:STAGES[:BLOCK_N],...] [--out F]
    python tests/bench/gluon_attn_decode.py --compile-only [--cands ...]     # sm_90 on the CPU, no GPU

Per shape (bf16, D = 128): each candidate (splits "auto" = the tl kernel's split rule; stages 0 = as deep as
``per_sm`` programs an SM allow) is checked against attention_decode (max error within 2e-2: else WRONG, exit 1),
then timed beside attention_decode and SDPA's default with do_bench (median, L2 flushed) and under CUDA-graph
replay (GPU time), in rotated rounds. ``--compile-only``: registers, spills, shared memory and PTX counts per
candidate (the wgmma shapes, TMA loads, the merge's acq_rel atomic).
"""
from __future__ import annotations

import argparse
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _runs import meta, save  # noqa: E402

SHAPES = "1:32:8:32768,1:32:8:8192,8:32:8:32768,4:32:8:16384,1:64:8:32768,32:32:8:4096,8:32:8:1024,2:32:8:30001"
CANDS = "auto:0,16:6,32:3,16:4,32:2"
PTX_COUNTS = {"wgmma": r"wgmma\.mma_async\.sync\.aligned\.(m64n\d+k\d+\.f32\.\w+\.\w+)",
              "tma": r"cp\.async\.bulk\.tensor\.2d", "acq_rel": r"atom\.global\.gpu\.acq_rel"}


def _cands(text):
    out = []
    for item in text.split(","):
        parts = item.split(":")
        out.append((parts[0], int(parts[1]), int(parts[2]) if len(parts) > 2 else 64))
    return out


def _resolve(cand, B, H_KV, S, D, num_sms):
    from tritondbg.kernels import _attention_decode as dec
    from tritondbg.kernels import _gluon_attn_decode as G

    splits, stages, bn = cand
    ns = dec._decode_num_splits(B * H_KV, S, num_sms) if splits == "auto" else int(splits)
    per_sm = max(1, -(-B * H_KV * ns // num_sms))
    return ns, stages or G.stages_for(bn, D, min(per_sm, 2)), bn, G.maxnreg_for(min(per_sm, 2))


def compile_only(args) -> int:
    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    from tritondbg.ir.stages import cubin_usage
    from tritondbg.kernels import _gluon_attn_decode as G

    failed, rows = 0, []
    for cand in _cands(args.cands):
        ns, stages, bn, nreg = _resolve(cand, 1, 8, 32768, 128, 132)
        k = torch.empty(1, 8, 32768, 128, dtype=torch.bfloat16)
        descs = G.descriptors(k, k, bn)
        types = dict(q_ptr="*bf16", k_desc=mangle_type(descs[0]), v_desc=mangle_type(descs[1]), o_ptr="*bf16",
                     ws_o="*fp32", ws_lse="*fp32", cnt="*i32", H="i32", H_KV="i32", S_MAX="i32", NUM_SPLITS="i32",
                     qk_scale="fp32")
        const = dict(STAGES=stages, SINGLE=ns == 1)
        sig = {n: types.get(n, "constexpr") for n in G.gluon_decode_attention_kernel.arg_names}
        try:
            ck = triton.compile(GluonASTSource(G.gluon_decode_attention_kernel, sig, const),
                                target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4, maxnreg=nreg))
        except Exception as e:  # noqa: BLE001 - a candidate that does not compile is a line
            failed += 1
            print(f"{cand}: FAILED {type(e).__name__}: {str(e)[-3000:]}", flush=True)
            continue
        ptx, usage = ck.asm["ptx"], cubin_usage(ck.asm["cubin"])
        counts = {key: (sorted(set(re.findall(p, ptx))) if key == "wgmma" else len(re.findall(p, ptx)))
                  for key, p in PTX_COUNTS.items()}
        rows.append(dict(splits=ns, stages=stages, block_n=bn, maxnreg=nreg, regs=usage["REG"],
                         spill_bytes=usage["STACK"], shared=ck.metadata.shared, **counts))
        print(f"splits {ns} stages {stages} block_n {bn} maxnreg {nreg}: regs {usage['REG']} spills {usage['STACK']} "
              f"smem {ck.metadata.shared // 1024} KiB {counts}", flush=True)
    if args.out:
        import json

        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--cands", default=CANDS)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    import time
    t0 = time.time()
    if args.compile_only:
        return compile_only(args)
    import torch
    from kernels_h200 import baselines
    from triton.testing import do_bench

    from tritondbg.check.perf import time_ms
    from tritondbg.kernels import _attention_decode as dec
    from tritondbg.kernels import _gluon_attn_decode as G
    from tritondbg.kernels.attention import attention_decode

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    sms = dec._num_sms(dev)
    rows, bad = [], 0
    for shape in args.shapes.split(","):
        B, H, HKV, S = (int(v) for v in shape.split(":"))
        g = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(B, H, 128, device=dev, dtype=torch.bfloat16, generator=g)
        k = torch.randn(B, HKV, S, 128, device=dev, dtype=torch.bfloat16, generator=g)
        v = torch.randn(B, HKV, S, 128, device=dev, dtype=torch.bfloat16, generator=g)
        ref = attention_decode(q, k, v)
        fns = dict(baselines("attention", {"q": q, "k_cache": k, "v_cache": v}))
        fns["bundled"] = lambda q=q, k=k, v=v: attention_decode(q, k, v)
        for cand in _cands(args.cands):
            ns, stages, bn, nreg = _resolve(cand, B, HKV, S, 128, sms)
            name = f"gluon s{ns} st{stages} bn{bn} r{nreg}"
            fn = lambda q=q, k=k, v=v, ns=ns, st=stages, bn=bn, nreg=nreg: G.gluon_decode_attention(  # noqa: E731
                q, k, v, num_splits=ns, stages=st, block_n=bn, maxnreg=nreg)
            try:
                out = fn()
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001
                print(f"{shape} {name}: FAILED {type(e).__name__}: {str(e)[-400:]}", flush=True)
                bad += 1
                continue
            err = (out.float() - ref.float()).abs().max().item()
            again = (fn().float() - out.float()).abs().max().item()
            if not err <= 2e-2 or again != 0:
                print(f"{shape} {name}: WRONG max err {err:.3g}, rerun differs by {again:.3g}", flush=True)
                bad += 1
                continue
            fns[name] = fn
        times = {n: [] for n in fns}
        for r in range(args.rounds):
            order = list(fns)[r % len(fns):] + list(fns)[:r % len(fns)]
            for n in order:
                times[n].append((do_bench(fns[n]) * 1e3, time_ms(fns[n], "graph") * 1e3))
        base = min(t[1] for t in times.get("sdpa default", [(0, float("nan"))]))
        print(f"\n{shape} (B:H:H_KV:S), bf16 D128, us (min over {args.rounds} rounds)")
        for n, ts in times.items():
            db, gr = min(t[0] for t in ts), min(t[1] for t in ts)
            rows.append(dict(shape=shape, name=n, do_bench_us=db, graph_us=gr))
            print(f"  {n:32s} do_bench {db:7.1f}  graph {gr:7.1f}  sdpa/graph {base / gr:5.2f}x", flush=True)
    if args.out:
        save(args.out, meta(t0, "tests/bench/gluon_attn_decode.py"), rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
