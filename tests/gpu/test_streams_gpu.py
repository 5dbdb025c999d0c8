"""The bundled kernels' one-launch merges on two CUDA streams at once (kernels/_scratch.py).

Each kernel below keeps device memory between launches: fp32 partials and arrival counters (the split-K decode
kernel of gemm and fp8_gemm, gemm_tma_kernel's split tail, the Gluon gemm's split-K tiles, decode attention's split
merge) or tile counters (the persistent Gluon prefill). Two launches on two streams that shared them would count
each other's arrivals and sum each other's partials. Here both streams wait on one event behind a GPU sleep, so the
two launches (different inputs) start together, 30 times over; every output must have the bits the same call gives
alone on the default stream, and every counter must be back at zero. On the H200 the per-device buffers of before
(commit e4daa85) got 54-60 of 60 outputs wrong in five of the seven cases
(tests/bench/runs/s17_streams_old_kernels.txt; the TMA split tail's persistent launch fills every SM, so its two
launches never ran at once, and prefill's counters were per stream already); with a sleep on each stream instead of
one gate the second launch started ~5-10 us after the first, and those buffers passed. The gemm and fp8 decode
cases check that their plan split K, or they would test nothing. Skipped without CUDA; run on the GPU machine with
`pytest -m gpu`.
"""
import pytest
from _gpu_code import run_gpu_code

pytestmark = pytest.mark.gpu

CODE = r'''
import os
import torch
from tritondbg.kernels import attention as A, fp8_gemm as F8, gemm as G, _attention_race as AR, _gemm_ws as WS
from tritondbg.kernels import _splitk as SK
try:
    from tritondbg.kernels import _scratch
    BUFFERS = _scratch._BUFFERS
except ImportError:  # before per-stream scratch (the comparison run on the old kernels): nothing to list
    BUFFERS = {}
dev = torch.device("cuda")
torch.manual_seed(0)
s1, s2, gate = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
bad = []
ITERS = 30


def together(name, f, in1, in2):
    ref1, ref2 = f(*in1), f(*in2)  # alone, on the default stream
    torch.cuda.synchronize()
    wrong = 0
    for _ in range(ITERS):
        # one gate for both streams: a GPU sleep (~200 us, longer than queueing both calls takes), then an event
        # both streams wait on, so the two launches start within a microsecond or two of each other
        gate.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(gate):
            torch.cuda._sleep(400000)
            opened = torch.cuda.Event()
            opened.record()
        outs = []
        for s, inp in ((s1, in1), (s2, in2)):
            s.wait_event(opened)
            with torch.cuda.stream(s):
                outs.append(f(*inp))
        torch.cuda.synchronize()
        wrong += (not torch.equal(outs[0], ref1)) + (not torch.equal(outs[1], ref2))
    left = [k[:2] for k, t in BUFFERS.items() if k[0].endswith(("cnt", "sched")) and bool(t.any())]
    print(f"{name}: {wrong} of {2 * ITERS} outputs differ from the call alone; counters left non-zero: {left}")
    if wrong or left:
        bad.append(name)


def new_plans(before):
    return [p for k, p in SK._PLANS.items() if k not in before]


# gemm's split-K decode kernel (M <= 32) and fp8_gemm's decode path: splits picked by the autotuner
for M, N, K in ((1, 4096, 11008), (17, 4096, 11008)):
    a1, a2 = (torch.randn(M, K, device=dev, dtype=torch.bfloat16) for _ in range(2))
    b1, b2 = (torch.randn(K, N, device=dev, dtype=torch.bfloat16) / K ** 0.5 for _ in range(2))
    before = set(SK._PLANS)
    G.gemm(a1, b1)
    splits = [p.runner.grid[1] for p in new_plans(before)]
    if not splits or max(splits) < 2:
        bad.append(f"gemm {M}x{N}x{K}: no split-K plan (grids {splits}): the case tests nothing")
    together(f"gemm decode {M}x{N}x{K} (SPLIT_K {splits})", G.gemm, (a1, b1), (a2, b2))
f8 = torch.float8_e4m3fn
a1, a2 = ((torch.randn(1, 8192, device=dev) / 4).to(f8) for _ in range(2))
b1, b2 = ((torch.randn(8192, 8192, device=dev) / 4).to(f8).t() for _ in range(2))
sa, sb = torch.tensor(0.5, device=dev), torch.tensor(0.25, device=dev)
# the tl split-K kernel: on the H200 the Gluon decode kernel wins this signature's race, unsplit (128 CTAs, no
# partials: nothing shared between streams), and its plan has no tl runner
os.environ["TRITONDBG_GLUON_GEMM"] = "0"
before = set(SK._PLANS)
F8.fp8_gemm(a1, b1, sa, sb)
splits = [p.runner.grid[1] for p in new_plans(before)]
together(f"fp8_gemm decode 1x8192x8192 (SPLIT_K {splits})", lambda a, b: F8.fp8_gemm(a, b, sa, sb), (a1, b1), (a2, b2))
if not splits or max(splits) < 2:
    bad.append(f"fp8 decode: no split-K plan (grids {splits})")
del os.environ["TRITONDBG_GLUON_GEMM"]

# gemm_tma_kernel's split tail (160 tiles of 128x256 on 132 SMs: the last 28 split along K)
a1, a2 = (torch.randn(1024, 13824, device=dev, dtype=torch.bfloat16) for _ in range(2))
b1, b2 = (torch.randn(13824, 5120, device=dev, dtype=torch.bfloat16) / 13824 ** 0.5 for _ in range(2))
together("gemm_tiled 1024x5120x13824 (TMA split tail)", G.gemm_tiled, (a1, b1), (a2, b2))

# decode attention, 8 splits per (b, kv head)
q1, q2 = (torch.randn(2, 32, 128, device=dev, dtype=torch.bfloat16) for _ in range(2))
k1, k2, v1, v2 = (torch.randn(2, 8, 16384, 128, device=dev, dtype=torch.bfloat16) for _ in range(4))
together("attention_decode B2 H32/8 KV16384 (8 splits)", lambda q, k, v: A.attention_decode(q, k, v, num_splits=8),
         (q1, k1, v1), (q2, k2, v2))

if WS.GK is not None and torch.cuda.get_device_capability() == (9, 0):
    sms = G._num_sms(dev)
    # the Gluon gemm's split-K tiles through their cached launcher (WSPlan)
    a1, a2 = (torch.randn(127, 11008, device=dev, dtype=torch.bfloat16) for _ in range(2))
    b1, b2 = (torch.randn(11008, 4096, device=dev, dtype=torch.bfloat16) / 11008 ** 0.5 for _ in range(2))
    plan = WS.build((128, 64, 64, 8, 4, False, 2), a1, b1, torch.empty(127, 4096, device=dev, dtype=torch.bfloat16),
                    False, sms)

    def gluon_split(a, b):
        c = torch.empty(127, 4096, device=dev, dtype=torch.bfloat16)
        plan(a, b, c)
        return c
    together("Gluon gemm 127x4096x11008 split-K 2", gluon_split, (a1, b1), (a2, b2))
    # the persistent Gluon prefill: its tile counters
    q1, q2, k1, k2, v1, v2 = (torch.randn(2, 16, 2047, 128, device=dev, dtype=torch.bfloat16) for _ in range(6))
    pplan = AR.build((128, 2, True), q1, k1, v1, torch.empty_like(q1), True, 128 ** -0.5, sms)

    def prefill(q, k, v):
        o = torch.empty_like(q)
        pplan.launch(q, k, v, o)
        return o
    together("Gluon prefill B2 H16 N2047 causal, persistent", prefill, (q1, k1, v1), (q2, k2, v2))
else:
    print("no Gluon / sm_90: the Gluon cases were not run")
print("\n".join(bad) if bad else "ALL OK")
'''


def test_two_streams_at_once_get_the_bits_of_one_call_alone():
    run_gpu_code(CODE, timeout=900)


CODE_GRAPH = r'''
import torch
from tritondbg.kernels import attention as A, fp8_gemm as F8, gemm as G, _scratch
dev = torch.device("cuda")
torch.manual_seed(0)
bad = []


def graphed(name, f, args):
    """Eager calls first (compile, autotune, race, cache the launcher), a warm-up on a side stream, then a CUDA
    graph captured on torch's own capture stream, whose scratch set is made during the capture. Each replay after
    new values went into the captured inputs must give the bits of the eager call on those values."""
    f(*args)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        f(*args)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = f(*args)
    wrong = 0
    for _ in range(4):
        for t in args:
            if t.dtype in (torch.bfloat16, torch.float16):
                t.copy_(torch.randn_like(t) / t.shape[-1] ** 0.5)
        want = f(*args)
        g.replay()
        torch.cuda.synchronize()
        wrong += not torch.equal(out, want)
    left = [k[:3] for k, t in _scratch._BUFFERS.items() if k[0].endswith(("cnt", "sched")) and bool(t.any())]
    print(f"{name}: {wrong} of 4 replays differ from the eager call; counters left non-zero: {left}")
    if wrong or left:
        bad.append(name)


bf = torch.bfloat16
graphed("gemm decode 1x4096x11008", G.gemm,
        (torch.randn(1, 11008, device=dev, dtype=bf), torch.randn(11008, 4096, device=dev, dtype=bf) / 100))
graphed("gemm 127x4096x11008 (the race's pick)", G.gemm,
        (torch.randn(127, 11008, device=dev, dtype=bf), torch.randn(11008, 4096, device=dev, dtype=bf) / 100))
f8 = torch.float8_e4m3fn
a8, b8 = (torch.randn(1, 8192, device=dev) / 4).to(f8), (torch.randn(8192, 8192, device=dev) / 4).to(f8).t()
sa, sb = torch.tensor(0.5, device=dev), torch.tensor(0.25, device=dev)
graphed("fp8_gemm decode 1x8192x8192", lambda a, b: F8.fp8_gemm(a, b, sa, sb), (a8, b8))
graphed("attention_decode B2 H32/8 KV4096, 8 splits", lambda q, k, v: A.attention_decode(q, k, v, num_splits=8),
        (torch.randn(2, 32, 128, device=dev, dtype=bf), torch.randn(2, 8, 4096, 128, device=dev, dtype=bf),
         torch.randn(2, 8, 4096, 128, device=dev, dtype=bf)))
print("\n".join(bad) if bad else "ALL OK")
'''


def test_cuda_graph_replays_use_the_capture_streams_scratch():
    """Captured on a stream whose scratch is first made during the capture (torch's capture stream): replays
    with new input values give the eager call's bits and leave the counters at zero."""
    run_gpu_code(CODE_GRAPH, timeout=900)
