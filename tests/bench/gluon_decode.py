"""The Gluon decode kernel (kernels/_gluon_decode.py) beside the bundled wrapper's pick, torch and the bare read.

    python tests/bench/gluon_decode.py [--shapes 1x8192x8192,16x8192x8192] [--cands 128:16:1,128:8:2]
                                       [--dtype fp8|bfloat16|float16] [--b-layout nk|kn]
                                       [--rounds 3] [--out gluon_decode.json]
    python tests/bench/gluon_decode.py --compile-only [--shapes ...] [--cands ...] [--dtype ...] [--out F]  # CPU

fp8 (the default): beside fp8_gemm and torch._scaled_mm, b = w.t(). bfloat16 / float16: beside gemm and
torch.matmul, b = w.t() (``--b-layout nk``) or a row-major (K, N) b (``kn``, read through a transposed view).

Each candidate (BLOCK_K:STAGES:SPLIT_K; SPLIT_K "auto" sizes it as the race does, "sk" is the stream-K walk) is
built, checked against fp8_gemm's reference (fp32 product; max error within 2^-6 of the largest output, and its
cached launcher's bits: else WRONG, not timed, and exit 1), then timed with do_bench (median, L2 flushed) in
``--rounds`` rotated rounds beside fp8_gemm (whatever serves it: its race's pick once the race has run),
torch._scaled_mm and the bare read of the weight. Needs an sm_90 GPU.
``--compile-only`` compiles each shape's candidates for sm_90 on the CPU (no GPU) and prints, per candidate,
registers, spills, shared memory and the PTX that matters (the wgmma shape, TMA loads, mbarrier waits, the merge's
acq_rel atomic and .cg re-reads); exit 1 if one fails to compile. Run it in a process that has not run a kernel
under Triton 3.6's interpreter (which leaves triton.language patched: a later compile fails).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _runs import meta, rotated_rounds, save  # noqa: E402

SHAPES = "1x8192x8192,16x8192x8192,32x8192x8192,64x8192x8192,1x4096x4096,16x14336x4096,8x4096x14336"


DTYPES = {"fp8": "float8_e4m3fn", "bfloat16": "bfloat16", "float16": "float16"}


def _cands(text: str | None, elem_size: int = 1):
    from tritondbg.kernels import _gluon_decode as D

    if not text:
        return D.candidates(elem_size)
    out = []
    for item in text.split(","):
        bk, stages, split = item.split(":")
        out.append((int(bk), int(stages),
                    split if split == "auto" else D.STREAM if split in ("sk", D.STREAM) else int(split)))
    return tuple(out)


PTX_COUNTS = {"wgmma": r"wgmma\.mma_async\.sync\.aligned\.(m64n\d+k\d+\.f32\.\w+\.\w+)",
              "tma": r"cp\.async\.bulk\.tensor\.2d", "mbarrier_wait": r"mbarrier\.try_wait",
              "atom_acq_rel": r"atom\.global\.gpu\.acq_rel", "ld_cg": r"ld\.global\.cg"}


def compile_cfg(cfg, M: int, N: int, K: int, num_sms: int = 132, dtype: str = "fp8", kmajor: bool = True) -> dict:
    """Compile one candidate for sm_90 on the CPU: its figures and PTX counts (``PTX_COUNTS``)."""
    import re

    import torch
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    from tritondbg.ir.stages import cubin_usage
    from tritondbg.kernels import _gluon_decode as D

    bt, bk, stages, split = cfg
    dt = getattr(torch, DTYPES[dtype])
    a = torch.empty(M, K, dtype=dt)
    b = torch.empty(N, K, dtype=dt).t() if kmajor else torch.empty(K, N, dtype=dt)
    descs = D.descriptors(a, b, bt, bk, kmajor)
    _, split_k, slots, stream_k = D.walk(M, N, K, bt, bk, split, num_sms)
    out = "*fp16" if dtype == "float16" else "*bf16"
    types = dict(w_desc=mangle_type(descs[0]), a_desc=mangle_type(descs[1]), c_ptr=out, M="i32", N="i32", K="i32",
                 stride_cm="i32")
    const = dict(STAGES=stages, SPLIT_K=split_k, SLOTS=slots, STREAM_K=stream_k, W_KMAJOR=kmajor, num_warps=4)
    if dtype == "fp8":
        types.update(scale_a_ptr="*fp32", scale_b_ptr="*fp32")
    else:
        const.update(scale_a_ptr=None, scale_b_ptr=None)
    if slots > 1:
        types.update(ws_ptr="*fp32", cnt_ptr="*i32")
    else:
        const.update(ws_ptr=None, cnt_ptr=None)
    sig = {n: types.get(n, "constexpr") for n in D.gluon_decode_kernel.arg_names}
    k = triton.compile(GluonASTSource(D.gluon_decode_kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                       options=dict(num_warps=4, maxnreg=D.maxnreg(4)))
    ptx, usage = k.asm["ptx"], cubin_usage(k.asm["cubin"])
    row = dict(shape=f"{M}x{N}x{K}", dtype=dtype, kmajor=kmajor, name=D.name(cfg), merged=slots > 1, regs=usage["REG"], spill_bytes=usage["STACK"],
               shared=k.metadata.shared)
    for key, pat in PTX_COUNTS.items():
        found = re.findall(pat, ptx)
        row[key] = sorted(set(found)) if key == "wgmma" else len(found)
    return row


def compile_only(args) -> int:
    from tritondbg.kernels import _gluon_decode as D

    rows, failed = [], 0
    elem = 1 if args.dtype == "fp8" else 2
    kmajor = args.b_layout == "nk"
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        for cfg in D.expand(M, N, K, 132, _cands(args.cands, elem), elem):
            try:
                row = compile_cfg(cfg, M, N, K, dtype=args.dtype, kmajor=kmajor)
            except Exception as e:  # noqa: BLE001 - a candidate that does not compile is a line
                failed += 1
                msg = [line for line in str(e).splitlines() if line.strip()]
                row = dict(shape=shape, name=D.name(cfg), error=f"{type(e).__name__}: {(msg[-1] if msg else '')[:200]}")
                print(f"{shape} {D.name(cfg)}: FAILED {row['error']}", flush=True)
            else:
                print(f"{shape} {row['name']}: regs {row['regs']} spills {row['spill_bytes']} B "
                      f"smem {row['shared'] // 1024} KiB  wgmma {','.join(row['wgmma'])}  tma {row['tma']}  "
                      f"mbarrier waits {row['mbarrier_wait']}  acq_rel {row['atom_acq_rel']}  .cg {row['ld_cg']}",
                      flush=True)
            rows.append(row)
    if args.out:
        import json

        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


def main(argv=None) -> int:
    t0 = time.time()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--cands", default=None, help="BLOCK_K:STAGES:SPLIT_K,... (default: the race's candidates)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="gluon_decode.json")
    ap.add_argument("--compile-only", action="store_true", help="compile the candidates for sm_90 on the CPU")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="fp8")
    ap.add_argument("--b-layout", choices=("nk", "kn"), default="nk",
                    help="b = w.t() (nk) or a row-major (K, N) b (kn: 16-bit only)")
    args = ap.parse_args(argv)
    if args.dtype == "fp8" and args.b_layout == "kn":
        ap.error("fp8 takes a K-major b only (--b-layout nk)")
    if args.compile_only:
        return compile_only(args)
    import torch
    import triton

    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    if torch.cuda.get_device_capability() != (9, 0):
        print("needs an sm_90 GPU (the Gluon decode kernel is Hopper's)", file=sys.stderr)
        return 2
    import read_floor
    from tritondbg.kernels import _gluon_decode as D
    from tritondbg.kernels import fp8_gemm as F8
    from tritondbg.kernels import gemm as G

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    one = torch.ones((), device="cuda")
    fp8 = args.dtype == "fp8"
    kmajor = args.b_layout == "nk"
    dt = getattr(torch, DTYPES[args.dtype])
    elem = 1 if fp8 else 2
    scales = (one, one) if fp8 else ()
    rows, failed = [], 0
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        a = (torch.randn(M, K, device="cuda") / 4).to(dt)
        w = (torch.randn(N, K, device="cuda") / 4).to(dt)
        b = w.t() if kmajor else w.t().contiguous()
        if fp8:
            ref = F8.reference(a, b, one, one).float()
            ours, theirs = "fp8_gemm", "torch._scaled_mm"
            calls = {ours: lambda: F8.fp8_gemm(a, b, one, one),
                     theirs: lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)}
            decision = lambda: F8.ws_decision(a, b, one, one)  # noqa: E731
        else:
            ref = G.reference(a, b).float()
            ours, theirs = "gemm", "torch.matmul"
            calls = {ours: lambda: G.gemm(a, b), theirs: lambda: torch.matmul(a, b)}
            decision = lambda: G.ws_decision(a, b)  # noqa: E731
        tol = 2.0 ** -6 * float(ref.abs().max())
        calls[ours]()  # its autotuner and race, outside the timing
        x = w.view(torch.int32).reshape(-1)
        out = torch.empty(triton.cdiv(x.numel(), 16384), dtype=torch.float32, device="cuda")
        calls["bare read of b"] = lambda: read_floor._read_sum[(out.numel(),)](x, out, x.numel(), BLOCK=16384,
                                                                              num_warps=8)
        for cfg in D.expand(M, N, K, sms, _cands(args.cands, elem), elem):
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16 if fp8 else dt)
            try:
                plan = D.build(cfg, a, b, c, *scales, w_kmajor=kmajor)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - a candidate that fails is a line
                print(f"{shape} {D.name(cfg)}: FAILED {type(e).__name__}: {str(e).splitlines()[-1][:200]}")
                rows.append(dict(shape=shape, name=D.name(cfg), error=str(e)[-300:]))
                failed += 1
                continue
            err = float((c.float() - ref).abs().max())
            c2 = torch.full_like(c, float("nan"))
            plan(a, b, c2, *scales)  # the cached launcher's path
            same = bool(torch.equal(c, c2))
            if not err <= tol or not same:
                print(f"{shape} {D.name(cfg)}: WRONG (max err {err:.3g}, tol {tol:.3g}; launcher bits same: {same})")
                rows.append(dict(shape=shape, name=D.name(cfg), wrong=err, same=same))
                failed += 1
                continue
            calls[D.name(cfg)] = lambda plan=plan, c=c: plan(a, b, c, *scales)
        names = list(calls)
        times = rotated_rounds(calls, args.rounds)
        base = statistics.median(times[theirs])
        print(f"{shape} {args.dtype} b {args.b_layout}  ({ours} serves: {decision() and decision()['pick']})")
        for k in sorted(names, key=lambda k: statistics.median(times[k])):
            med = statistics.median(times[k])
            print(f"  {med:7.2f} us ({min(times[k]):.2f} .. {max(times[k]):.2f})  {base / med:5.2f}x  {k}")
            rows.append(dict(shape=shape, name=k, us=times[k], median_us=med))
        del calls
        torch.cuda.empty_cache()
    save(args.out, meta(t0, "tests/bench/gluon_decode.py", argv), rows)
    if failed:
        print(f"{failed} candidate(s) failed or wrong", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
