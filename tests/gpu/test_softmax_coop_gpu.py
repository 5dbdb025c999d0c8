"""softmax's coop path on the GPU: few long rows, each over several programs meeting at a barrier under one
cooperative launch (kernels/softmax.py). The rule must pick it where it applies; the result must match the
reference on the first call, from the cached launcher (new values, a row of -inf), in CUDA-graph replays, and on
two streams launched at the same moment (behind one gate), and, where CUDA refuses the cooperative launch, through
the fallback to one program per row; the barrier's counters must be back at zero after
every launch (the next launch counts from zero).

Skipped without CUDA; run on the GPU machine with `pytest -m gpu`.
"""
import pytest
from _gpu_code import run_gpu_code

pytestmark = pytest.mark.gpu

CODE = r'''
import torch
from tritondbg.kernels import _scratch
from tritondbg.kernels import softmax as SM

bad = []


def counters_left():
    torch.cuda.synchronize()
    return sum(int(t.count_nonzero()) for t in _scratch.buffers("softmax_count"))


def err(out, x):
    ref = SM.reference(x)
    tol = 1e-5 if x.dtype == torch.float32 else 1e-2
    d = (out.float() - ref).abs() - tol - tol * ref.abs()  # > 0 where out is off (NaN counts as off)
    return float(torch.nan_to_num(d, nan=1.0).max())


SHAPES = [(1, 128256, torch.bfloat16), (8, 32768, torch.bfloat16), (11, 24576, torch.float16),
          (4, 256000, torch.bfloat16), (32, 151936, torch.bfloat16), (64, 50257, torch.float16),
          (3, 50000, torch.float32), (1, 12289, torch.float32)]
for M, N, dtype in SHAPES:
    gen = torch.Generator(device="cuda").manual_seed(M + N)
    x = (8 * torch.randn(M, N, device="cuda", generator=gen)).to(dtype)
    x[0, N - 1] = 400.0 if dtype != torch.float16 else 60000.0  # the row's max in its last slice
    before = {id(p) for p in SM._PLANS.values()}
    out = SM.softmax(x)
    kernels = [p.kernel.__name__ for p in SM._PLANS.values() if id(p) not in before]
    e1 = err(out, x)
    x2 = (8 * torch.randn(M, N, device="cuda", generator=gen)).to(dtype)
    x2[-1] = -float("inf")
    out2 = SM.softmax(x2)  # the cached launcher
    nan_row = bool(torch.isnan(out2[-1]).all())
    e2 = err(out2[:-1], x2[:-1]) if M > 1 else 0.0
    left = counters_left()
    print(f"{M}x{N} {dtype}: kernels {kernels}, err {e1:.3g} / {e2:.3g}, -inf row NaN {nan_row}, counters {left}")
    if kernels != ["softmax_coop_kernel"] or e1 > 0 or e2 > 0 or not nan_row or left:
        bad.append(f"{M}x{N}")

# CUDA graph: captured once, replayed over new values
M, N = 8, 128256
static_in = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
SM.softmax(static_in)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    static_out = SM.softmax(static_in)
worst = 0.0
for s in range(3):
    static_in.copy_(torch.randn(M, N, device="cuda") * (s + 1))
    g.replay()
    worst = max(worst, err(static_out, static_in))
print(f"graph replays: worst err {worst:.3g}, counters {counters_left()}")
if worst > 0 or counters_left():
    bad.append("graph")

# two streams behind one gate: both launches start together, each counts in its own stream's scratch
s1, s2, gate = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
xs = [torch.randn(M, N, device="cuda", dtype=torch.bfloat16) * (i + 1) for i in range(2)]
refs = [SM.softmax(xi) for xi in xs]
wrong = 0
for _ in range(30):
    gate.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(gate):
        torch.cuda._sleep(400000)
        opened = torch.cuda.Event()
        opened.record()
    outs = []
    for s, xi in zip((s1, s2), xs):
        s.wait_event(opened)
        with torch.cuda.stream(s):
            outs.append(SM.softmax(xi))
    torch.cuda.synchronize()
    wrong += sum(not torch.equal(o, r) for o, r in zip(outs, refs))
print(f"two streams: {wrong} of 60 outputs differ from the call alone, counters {counters_left()}")
if wrong or counters_left():
    bad.append("streams")
# a cooperative launch CUDA refuses (more programs than fit at once: 320 of 32 warps, two per SM at most): the
# wrapper falls back to one program per row, right, and no longer tries coop on this device
from tritondbg.kernels._rows import RowConfig
real = SM._persistent_programs, SM.coop_configs
SM._persistent_programs = lambda *a: 10 ** 6
SM.coop_configs = lambda *a: [RowConfig("coop", 1024, 1, 32, 1, 1)]
try:
    x = torch.randn(8, 40000, device="cuda")
    before = {id(p) for p in SM._PLANS.values()}
    out = SM.softmax(x)
    kernels = [p.kernel.__name__ for p in SM._PLANS.values() if id(p) not in before]
    e = err(out, x)
    print(f"refused cooperative launch: fell back to {kernels}, err {e:.3g}, refused on {SM.COOP_REFUSED}")
    if e > 0 or "softmax_coop_kernel" in kernels or x.device not in SM.COOP_REFUSED:
        bad.append("refused")
finally:
    SM._persistent_programs, SM.coop_configs = real
print("BAD " + ", ".join(bad) if bad else "ALL OK")
'''


def test_coop_softmax_on_the_gpu():
    run_gpu_code(CODE, timeout=600)
