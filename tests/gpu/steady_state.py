"""The bundled wrappers' steady state on the GPU: the third call of each signature (through the cached launcher,
no checks, no autotuner) against the reference, on the shapes whose paths session 7 changed (long rows held
whole, split-K gemm up to M = 128, the fp8 decode plan's direct launch), decode and prefill attention's launchers
and a few odd ones. Prints one line per
shape and "OK n" or "FAILED ..." last; exit 1 on any mismatch. Run by tests/gpu/test_launch_gpu.py."""
import sys

import torch

from tritondbg import runner

runner.set_mode("compiled")

from tritondbg.kernels import attention as A  # noqa: E402
from tritondbg.kernels import fp8_gemm as F8  # noqa: E402
from tritondbg.kernels import gemm as G  # noqa: E402
from tritondbg.kernels import layernorm as LN  # noqa: E402
from tritondbg.kernels import softmax as SM  # noqa: E402


def third(fn):
    fn()
    fn()
    return fn()


def main() -> int:
    torch.manual_seed(0)
    bad, n = [], 0

    def check(name, out, ref, tol):
        nonlocal n
        n += 1
        err = (out.float() - ref.float()).abs().max().item()
        scale = max(1.0, ref.float().abs().max().item())
        ok = bool(torch.isfinite(out.float()).all()) and err <= tol * scale
        print(f"{'ok ' if ok else 'BAD'} {name}: max abs err {err:.3g} (scale {scale:.3g})", flush=True)
        if not ok:
            bad.append(name)

    for M, N in ((8, 32768), (24, 11008), (300, 11008), (2048, 16384), (1365, 24576), (3, 9001), (1000, 5000)):
        for dt in (torch.bfloat16, torch.float16):
            x = (torch.randn(M, N, device="cuda") * 3 + 1).to(dt)
            w = (1 + 0.1 * torch.randn(N, device="cuda")).to(dt)
            b = (0.1 * torch.randn(N, device="cuda")).to(dt)
            check(f"softmax {M}x{N} {dt}", third(lambda: SM.softmax(x)), SM.reference(x), 2e-2)
            check(f"layernorm {M}x{N} {dt}", third(lambda: LN.layernorm(x, w, b)), LN.reference(x, w, b), 3e-2)
    # (127, 4096, 4096), (200, 1024, 512), (1024, 6144, 4096): where the Gluon kernel won its race on the H200
    # (session 11): its cached plan, descriptors expanded once per base pointer; a 4th call with new tensors
    for M, N, K in ((1, 4096, 4096), (17, 11008, 4096), (48, 5120, 13824), (127, 4096, 11008), (100, 3000, 1000),
                    (5, 257, 1024), (67, 45, 91), (127, 4096, 4096), (200, 1024, 512), (1024, 6144, 4096)):
        a = torch.randn(M, K, device="cuda").to(torch.bfloat16)
        bw = (torch.randn(K, N, device="cuda") / K ** 0.5).to(torch.bfloat16)
        check(f"gemm {M}x{N}x{K}", third(lambda: G.gemm(a, bw)), G.reference(a, bw), 2e-2)
        check(f"gemm w.t() {M}x{N}x{K}", third(lambda: G.gemm(a, bw.t().contiguous().t())), G.reference(a, bw), 2e-2)
        a2, b2 = torch.randn_like(a), torch.randn_like(bw) / K ** 0.5
        check(f"gemm {M}x{N}x{K} new tensors", G.gemm(a2, b2), G.reference(a2, b2), 2e-2)
    # leading dims (session 18): layernorm's (..., N) on the launcher of its rows; gemm's (..., K) through the 2-D
    # call's launcher (split-K decode at 15 rows, the tl / Gluon paths at 4 x 100)
    x3 = torch.randn(4, 7, 1000, device="cuda").to(torch.bfloat16)
    w3, b3 = torch.randn(1000, device="cuda").to(torch.bfloat16), torch.randn(1000, device="cuda").to(torch.bfloat16)
    check("layernorm 4x7x1000", third(lambda: LN.layernorm(x3, w3, b3)), LN.reference(x3, w3, b3), 3e-2)
    for lead, K, N in (((3, 5), 4096, 4096), ((4, 100), 1024, 3000)):
        a = torch.randn(*lead, K, device="cuda").to(torch.bfloat16)
        bw = (torch.randn(K, N, device="cuda") / K ** 0.5).to(torch.bfloat16)
        out, name = third(lambda: G.gemm(a, bw)), f"gemm {lead}x{K} @ {K}x{N}"
        if out.shape != (*lead, N):
            print(f"BAD {name}: output shape {tuple(out.shape)}", flush=True)
            bad.append(name)
            continue
        check(name, out, a.float() @ bw.float(), 2e-2)
    one = torch.ones((), device="cuda")
    for M in (1, 16, 33):
        a = torch.randn(M, 8192, device="cuda").to(F8.FP8_DTYPE)
        bw = torch.randn(8192, 8192, device="cuda").to(F8.FP8_DTYPE).t()
        check(f"fp8_gemm decode M={M}", third(lambda: F8.fp8_gemm(a, bw, one, one)),
              F8.reference(a, bw, one, one), 2e-2)
    # fp8, the race's plans (Gluon on the H200; M <= 64 against the decode kernel since session 16) take each call's
    # scales; new tensors and new scale values on the fourth call (a plan that kept the first call's scales would be
    # off by their ratio)
    for M, N, K in ((37, 1000, 3008), (64, 8192, 8192), (127, 11008, 4096), (1000, 1000, 3008), (4096, 4096, 4096)):
        a = (torch.randn(M, K, device="cuda") / 4).to(F8.FP8_DTYPE)
        bw = (torch.randn(N, K, device="cuda") / 4).to(F8.FP8_DTYPE).t()
        sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda")
        check(f"fp8_gemm {M}x{N}x{K}", third(lambda: F8.fp8_gemm(a, bw, sa, sb)), F8.reference(a, bw, sa, sb), 3e-2)
        a2, sa2, sb2 = (torch.randn_like(a.float()) / 4).to(F8.FP8_DTYPE), sa * 4, sb * 3
        check(f"fp8_gemm {M}x{N}x{K} new tensors and scales", F8.fp8_gemm(a2, bw, sa2, sb2),
              F8.reference(a2, bw, sa2, sb2), 3e-2)
    # decode attention: its plan's launcher (integer pointers into Triton's C entry, session 8), split and not,
    # GQA, per-sequence lengths
    for B, H, HKV, S, dt, lens in ((1, 32, 8, 4096, torch.bfloat16, None), (8, 32, 32, 1024, torch.float16, None),
                                  (3, 8, 2, 1000, torch.bfloat16, (1000, 1, 517))):
        q = torch.randn(B, H, 128, device="cuda").to(dt)
        k = torch.randn(B, HKV, S, 128, device="cuda").to(dt)
        v = torch.randn(B, HKV, S, 128, device="cuda").to(dt)
        sl = None if lens is None else torch.tensor(lens, device="cuda", dtype=torch.int32)
        check(f"attention_decode B{B} H{H}/{HKV} S{S} {dt}", third(lambda: A.attention_decode(q, k, v, sl)),
              A.reference_decode(q, k, v, sl), 2e-2)
    # prefill attention: its plan's launcher (session 9), host TMA descriptors rebuilt per call on the call's
    # tensors (the fourth call below uses new tensors: a descriptor left on the first call's would show), the
    # warp-specialised configs' device descriptors (D 128, even N, non-causal), fp32, a (B, N, H, D) layout
    for B, H, HKV, N, D, causal, dt, bnhd in ((2, 8, 2, 1000, 128, True, torch.bfloat16, False),
                                              (2, 8, 8, 1024, 128, False, torch.bfloat16, False),
                                              (1, 4, 4, 777, 64, False, torch.float16, False),
                                              (2, 4, 4, 256, 64, True, torch.float32, False),
                                              (2, 8, 4, 333, 128, True, torch.bfloat16, True)):
        def make():
            def one(h):
                if bnhd:
                    return torch.randn(B, N, h, D, device="cuda").to(dt).transpose(1, 2)
                return torch.randn(B, h, N, D, device="cuda").to(dt)
            return one(H), one(HKV), one(HKV)
        q, k, v = make()
        name = f"attention B{B} H{H}/{HKV} N{N} D{D}{' causal' if causal else ''} {dt}{' bnhd' if bnhd else ''}"
        check(name, third(lambda: A.attention(q, k, v, causal=causal)), A.reference(q, k, v, causal=causal), 2e-2)
        q, k, v = make()
        check(name + " new tensors", A.attention(q, k, v, causal=causal), A.reference(q, k, v, causal=causal), 2e-2)
    print(f"OK {n}" if not bad else f"FAILED {len(bad)} of {n}: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
