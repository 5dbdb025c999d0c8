"""The Gluon prefill kernel (kernels/_attention_gluon.py) on an sm_90 GPU, against the fp32 reference.

Every (BLOCK_N, STAGES) variant on shapes that hit each edge: N not a multiple of 64 or of BLOCK_N (Q rows
past N_Q computed and not stored, K/V blocks reading the next head's rows), causal with N_Q < N_KV and
N_Q > N_KV (bottom-right aligned; rows that see no key give 0), GQA, D = 64 and 128, fp16 and bf16, a scale
that is not 1/sqrt(D), and 1 or 3 persistent programs for many tiles (the K/V ring and the Q buffers wrap
around from tile to tile; tiles taken in turn from the stream's counters, which every launch must leave at
zero), and launches on two streams at once (a counter pair each). Then ``attention`` itself (its race, later
calls, new tensors). A subprocess: compiled mode needs a process without TRITON_INTERPRET. Skipped without
CUDA; run on the GPU machine with `pytest -m gpu`.
"""
import pytest
from _gpu_code import run_gpu_code

pytestmark = pytest.mark.gpu

CODE = r'''
import sys, torch
from tritondbg.kernels import attention as A
try:
    from tritondbg.kernels import _attention_gluon as G
except ImportError:
    G = None
if G is None or torch.cuda.get_device_capability() != (9, 0):
    print("SKIP: needs Gluon and an sm_90 GPU"); sys.exit(0)
dev = torch.device("cuda")
bad = []
CASES = [  # B, H, H_KV, N_Q, N_KV, D, causal, dtype, sm_scale
    (1, 2, 2, 1, 1, 128, False, torch.bfloat16, None),
    (2, 4, 2, 100, 300, 128, True, torch.bfloat16, None),
    (1, 2, 2, 300, 100, 128, True, torch.bfloat16, None),
    (2, 3, 3, 129, 1000, 64, False, torch.float16, 0.3),
    (1, 4, 1, 1000, 1000, 128, True, torch.float16, None),
    (2, 2, 2, 2047, 2047, 64, True, torch.bfloat16, None),
    (1, 2, 2, 512, 512, 128, False, torch.bfloat16, 0.05),
    (1, 4, 2, 300, 700, 64, True, torch.bfloat16, None),
]
for B, H, HK, NQ, NKV, D, causal, dtype, scale in CASES:
    g = torch.Generator(device=dev).manual_seed(NQ + NKV + D)
    q = torch.randn(B, H, NQ, D, device=dev, generator=g).to(dtype)
    k = torch.randn(B, HK, NKV, D, device=dev, generator=g).to(dtype)
    v = torch.randn(B, HK, NKV, D, device=dev, generator=g).to(dtype)
    ref = A.reference(q, k, v, causal=causal, sm_scale=scale)
    name = f"B{B} H{H}/{HK} N{NQ}/{NKV} D{D} {'causal ' if causal else ''}{str(dtype)[6:]} scale {scale}"
    for bn, st in ((128, 2), (128, 3), (64, 3)):
        for sms in (None, 3, 1):
            o = torch.full_like(q, float("nan"))
            G.gluon_attention(q, k, v, causal=causal, sm_scale=scale, block_n=bn, stages=st, num_sms=sms, out=o)
            n_bad = int((~((o.float() - ref).abs() <= 2e-2 + 2e-2 * ref.abs())).sum())
            if n_bad:
                bad.append(f"{name} {bn}s{st} sms={sms}: {n_bad} of {o.numel()} outside 2e-2")
            left = G.sched_buffer(dev).tolist()
            if left != [0, 0]:
                bad.append(f"{name} {bn}s{st} sms={sms}: tile counters left at {left}")
    print(name, "checked")
# two streams at once, each with its own counters: 4 persistent programs over 1024 causal tiles per stream
q = torch.randn(2, 16, 4096, 64, device=dev, dtype=torch.bfloat16)
ref = A.reference(q, q, q, causal=True)
streams = [torch.cuda.Stream() for _ in range(2)]
outs = [torch.full_like(q, float("nan")) for _ in streams]
torch.cuda.synchronize()
for _ in range(3):
    for s, o in zip(streams, outs):
        with torch.cuda.stream(s):
            G.gluon_attention(q, q, q, causal=True, num_sms=4, out=o)
torch.cuda.synchronize()
for i, (s, o) in enumerate(zip(streams, outs)):
    n_bad = int((~((o.float() - ref).abs() <= 2e-2 + 2e-2 * ref.abs())).sum())
    with torch.cuda.stream(s):
        left = G.sched_buffer(dev).tolist()
    if n_bad or left != [0, 0]:
        bad.append(f"stream {i}: {n_bad} outside 2e-2, counters {left}")
print("two streams checked")
print("\n".join(bad) if bad else "ALL OK")
'''


def test_gluon_attention_every_variant_and_edge():
    run_gpu_code(CODE)
