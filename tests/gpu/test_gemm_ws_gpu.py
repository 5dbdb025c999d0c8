"""gemm's warp-specialised Gluon kernel on an sm_90 GPU (kernels/_gemm_gluon.py, kernels/_gemm_ws.py).

Every candidate tile of each M class, pinned, against the fp32 product: bf16 and fp16, row-major and K-major b
(``w.t()``), edges no tile divides (M = 100, 200, 1000; N = 1000; K = 3000 with a 64-deep K tail). Then gemm
itself: the race ran and left a record, the first call and the cached calls after it return the same bits, and
the output is right whichever path won. No timing is asserted (which path wins is the race's business; the
sweep records it). Split-K candidates (M <= 128) and split-tail ones (M > 128, 1000x11008x3000) are sized per shape
as the race sizes them, give the same bits through their launcher and leave their counters at zero. gemm at M <= 64 also runs each of the Gluon decode kernel's 16-bit candidates (kernels/_gluon_decode.py, both b layouts), twice.
fp8_gemm likewise (M <= 64: raced against the decode kernel, precise only, with the Gluon decode
kernel's candidates too, kernels/_gluon_decode.py): each fp8 candidate, precise (pipelined promotion) and fast, against
the fp32 product within the bundled fp8 tolerance, then fp8_gemm's race, its later calls and new tensors with new
scale values (a plan that kept the first call's scales would be off by their ratio). A subprocess: compiled mode
needs a process without TRITON_INTERPRET. Skipped without CUDA; run on the GPU machine with `pytest -m gpu`.
The race's timer: GPU time only (a call with 300 us of Python measures its kernel), a GPU-bound call as do_bench.
"""
import pytest
from _gpu_code import run_gpu_code

pytestmark = pytest.mark.gpu

SHOW = r'''
def show(name, rec):  # one line per race: its pick, the tl path's time, each candidate's time or why it dropped
    times = ", ".join(f"{k.split(': ')[1]} {v if isinstance(v, str) else round(v, 1)}" for k, v in rec["ws"].items())
    print(f"{name}: pick {rec['pick']}; tl {rec['tl']}; {times}")
'''

CODE = SHOW + r'''
import sys, torch
from tritondbg.kernels import gemm as G, _gemm_ws as WS
if WS.GK is None or torch.cuda.get_device_capability() != (9, 0):
    print("SKIP: needs Gluon and an sm_90 GPU"); sys.exit(0)
dev = torch.device("cuda")
sms = G._num_sms(dev)
bad = []
for M, N, K in ((127, 4096, 4096), (127, 4096, 11008), (64, 4096, 4096), (100, 1000, 3000), (200, 1024, 512),
                (1000, 1000, 3000), (1024, 4096, 4096), (1, 4096, 4096), (17, 1000, 3000), (3, 4160, 1000),
                (1000, 11008, 3000)):  # 688 tiles of 128x128 = 5 x 132 + 28: the split tail (4 slices, a K tail)
    for dtype in (torch.bfloat16, torch.float16):
        for kn in (True, False):
            g = torch.Generator(device=dev).manual_seed(M + N + K)
            a = torch.randn(M, K, device=dev, generator=g).to(dtype)
            w = (torch.randn(N, K, device=dev, generator=g) / K ** 0.5).to(dtype)
            b = w.t().contiguous() if kn else w.t()
            ref = a.float() @ b.float()
            tol = 2.0 ** -6 * ref.abs().max().item()
            name = f"{M}x{N}x{K} {str(dtype)[6:]} b={'(K, N)' if kn else 'w.t()'}"
            for cfg in WS.expand(WS.candidates(M), M, N, K, sms):  # split-K / split-tail candidates sized for the shape
                c = torch.full((M, N), float("nan"), device=dev, dtype=dtype)
                plan = WS.build(cfg, a, b, c, not kn, sms)
                err = (c.float() - ref).abs().max().item()
                if not err <= tol:
                    bad.append(f"{name} {WS.config_name(cfg)}: max error {err:.3g} > {tol:.3g}")
                if plan.launcher.scratch is not None:  # merged tiles: again through the launcher, same bits, counters 0
                    c2 = torch.full_like(c, float("nan"))
                    plan(a, b, c2)
                    if not torch.equal(c, c2) or bool(plan.launcher.scratch()[1].any()):
                        bad.append(f"{name} {WS.config_name(cfg)}: launcher same bits: {torch.equal(c, c2)}, "
                                   f"counters left non-zero: {bool(plan.launcher.scratch()[1].any())}")
            # M <= 64: the Gluon decode kernel's candidates (16-bit: no scales; a row-major b through a transposed
            # view), each launched twice (the second through its cached launcher: same bits), counters left at zero
            for extra_name, make, _, _ in WS.decode_candidates(a, b, not kn, sms):
                c = torch.full((M, N), float("nan"), device=dev, dtype=dtype)
                plan = make(c)
                c2 = torch.full_like(c, float("nan"))
                plan(a, b, c2)
                err = (c.float() - ref).abs().max().item()
                counters = plan.launcher.scratch()[1] if plan.launcher.scratch is not None else torch.zeros(1)
                if not err <= tol or not torch.equal(c, c2) or bool(counters.any()):
                    bad.append(f"{name} {extra_name}: max error {err:.3g} (tol {tol:.3g}), launcher same bits: "
                               f"{torch.equal(c, c2)}, counters left non-zero: {bool(counters.any())}")
            outs = [G.gemm(a, b) for _ in range(3)]
            rec = G.ws_decision(a, b)
            if rec is None:
                bad.append(f"{name}: no race record")
                continue
            err = (outs[0].float() - ref).abs().max().item()
            same = all(torch.equal(outs[0], o) for o in outs[1:])
            if not err <= tol or not same:
                bad.append(f"{name}: gemm error {err:.3g} (tol {tol:.3g}), same bits on later calls: {same}")
            # new tensors, same signature: the cached launcher with descriptors over the new pointers
            a2, w2 = torch.randn_like(a), torch.randn_like(w) / K ** 0.5
            b2 = w2.t().contiguous() if kn else w2.t()
            err2 = (G.gemm(a2, b2).float() - a2.float() @ b2.float()).abs().max().item()
            if not err2 <= 2.0 ** -6 * (a2.float() @ b2.float()).abs().max().item():
                bad.append(f"{name}: new tensors, gemm error {err2:.3g}")
            show(name, rec)
from tritondbg.kernels import _scratch
left = [k for k, t in _scratch._BUFFERS.items() if k[0] == "gluon_cnt" and bool(t.any())]
if left:
    bad.append(f"split-K counters left non-zero: {left}")
print("\n".join(bad) if bad else "ALL OK")
'''

CODE_FP8 = SHOW + r'''
import sys, torch
from tritondbg.kernels import fp8_gemm as F8, _gemm_ws as WS
if WS.GK is None or torch.cuda.get_device_capability() != (9, 0):
    print("SKIP: needs Gluon and an sm_90 GPU"); sys.exit(0)
dev = torch.device("cuda")
sms = F8._fp8_tma._num_sms(dev)
bad = []
f8 = torch.float8_e4m3fn


def within(out, ref):  # the bundled fp8 tolerance (tritondbg/compare.py): |d| <= 3e-2 + 3e-2 |ref|
    return int((~((out.float() - ref).abs() <= 3e-2 + 3e-2 * ref.abs())).sum())


GD = WS.GD
for M, N, K in ((1, 8192, 8192), (3, 1000, 3008), (16, 14336, 4096), (37, 1000, 3008), (64, 8192, 8192),
                (100, 1000, 3008), (127, 11008, 4096), (200, 1024, 512), (1000, 1000, 3008), (4096, 4096, 4096)):
    for fast in (False, True) if M > 64 else (False,):  # M <= 64: the decode path, always precise
        g = torch.Generator(device=dev).manual_seed(M + N + K)
        a = (torch.randn(M, K, device=dev, generator=g) / 4).to(f8)
        b = (torch.randn(N, K, device=dev, generator=g) / 4).to(f8).t()
        sa, sb = torch.tensor(0.5, device=dev), torch.tensor(0.25, device=dev)
        ref = (a.float() @ b.float()) * 0.125
        name = f"fp8 {M}x{N}x{K} {'fast' if fast else 'precise'}"
        for cfg in WS.candidates(M, fp8=True):
            c = torch.full((M, N), float("nan"), device=dev, dtype=torch.bfloat16)
            WS.build(cfg, a, b, c, True, sms, (sa, sb), 0 if fast else 2)
            n_bad = within(c, ref)
            if n_bad and not (fast and bool(torch.isfinite(c).all())):
                bad.append(f"{name} {WS.config_name(cfg)}: {n_bad} outputs outside the tolerance")
        # M <= 64: the Gluon decode kernel's candidates, and split and stream-K ones (the bench's), each launched
        # twice (the second through its cached launcher: same bits)
        extra = ((256, 6, "auto"), (128, 8, 2), (512, 4, GD.STREAM)) if GD is not None else ()
        cands = GD.expand(M, N, K, sms) + GD.expand(M, N, K, sms, extra) if GD is not None else ()
        for cfg in cands if M <= F8.DECODE_MAX_M else ():
            c = torch.full((M, N), float("nan"), device=dev, dtype=torch.bfloat16)
            plan = GD.build(cfg, a, b, c, sa, sb)
            c2 = torch.full_like(c, float("nan"))
            plan(a, b, c2, sa, sb)
            n_bad = within(c, ref)
            counters = plan.launcher.scratch()[1] if plan.launcher.scratch is not None else torch.zeros(1)
            if n_bad or not torch.equal(c, c2) or bool(counters.any()):
                bad.append(f"{name} {GD.name(cfg)}: {n_bad} outputs outside the tolerance, launcher same bits: "
                           f"{torch.equal(c, c2)}, counters left non-zero: {bool(counters.any())}")
        outs = [F8.fp8_gemm(a, b, sa, sb, fast_accum=fast) for _ in range(3)]
        rec = F8.ws_decision(a, b, sa, sb, fast_accum=fast)
        if rec is None:  # every shape here races (M <= 16: the Gluon decode candidates only)
            bad.append(f"{name}: no race record")
            continue
        same = all(torch.equal(outs[0], o) for o in outs[1:])
        n_bad = 0 if fast else within(outs[0], ref)
        if n_bad or not same or not bool(torch.isfinite(outs[0]).all()):
            bad.append(f"{name}: fp8_gemm {n_bad} outside, same bits on later calls: {same}")
        a2, b2 = (torch.randn_like(a.float()) / 4).to(f8), (torch.randn_like(b.t().float()) / 4).to(f8).t()
        sa2, sb2 = torch.tensor(2.0, device=dev), torch.tensor(0.75, device=dev)
        ref2 = (a2.float() @ b2.float()) * 1.5
        n_bad2 = within(F8.fp8_gemm(a2, b2, sa2, sb2, fast_accum=fast), ref2)
        if n_bad2 and not fast:
            bad.append(f"{name}: new tensors and scales, {n_bad2} outputs outside the tolerance")
        show(name, rec)
print("\n".join(bad) if bad else "ALL OK")
'''


CODE_TIMER = r'''
import time, torch
from triton.testing import do_bench
from tritondbg.kernels import _race as R
x = torch.zeros(1 << 20, device="cuda")


def slow_host():  # 300 us of Python before a ~5 us kernel: a patched launch path's steady call
    t = time.perf_counter()
    while time.perf_counter() - t < 300e-6:
        pass
    x.add_(1)


gpu, db = R._time(slow_host), do_bench(slow_host, warmup=2, rep=20) * 1e3
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
mm, mm_db = R._time(lambda: a @ a), do_bench(lambda: a @ a, warmup=2, rep=20) * 1e3
print(f"slow host: race timer {gpu:.1f} us, do_bench {db:.1f} us; 4096^3 matmul: {mm:.1f} vs {mm_db:.1f} us")
ok = gpu < 60 and db > 200 and abs(mm / mm_db - 1) < 0.15
print("ALL OK" if ok else "race timer: host time not excluded, or the kernel time off")
'''


@pytest.mark.parametrize("code", [CODE, CODE_FP8, CODE_TIMER], ids=["gemm", "fp8_gemm", "race_timer"])
def test_gluon_gemm_candidates_and_race_are_right_on_the_gpu(code):
    run_gpu_code(code)
