"""layernorm on rows of an odd length on the GPU (session 27): the looped kernel reads rows whose start is off
16-byte boundaries from each row's aligned base in whole vectors (as softmax: tests/gpu/test_softmax_odd_gpu.py),
the single-pass and split kernels with scalar accesses, short rows in small tiles (kernels/_rows.py ``odd_rows``). Per shape: the kernel the rule should pick, the result against the reference on the first call and
from the cached launcher (new values, with bias and without), rows of a large mean (the centred variance), and a
view at an odd storage offset.

Skipped without CUDA; run on the GPU machine with `pytest -m gpu`. ``TDBG_GPU_CODE_DEVICE=cpu`` runs the same code
on the CPU under TRITON_INTERPRET=1 with a few rows per shape (a dry run of this file: no kernel-choice check).
"""
import pytest
from _gpu_code import run_gpu_code

pytestmark = pytest.mark.gpu

CODE = r'''
import os
import torch
from tritondbg.kernels import layernorm as LN

DEV = os.environ.get("TDBG_GPU_CODE_DEVICE", "cuda")
bad = []


def err(out, x, w, b):
    ref = LN.reference(x, w, b)
    tol = 1e-4 if x.dtype == torch.float32 else 2e-2
    d = (out.float() - ref).abs() - tol - tol * ref.abs()  # > 0 where out is off (NaN counts as off)
    return float(torch.nan_to_num(d, nan=1.0).max())


bf, f16, f32 = torch.bfloat16, torch.float16, torch.float32
SHAPES = [  # (M, N, dtype, the kernel the rule picks)
    (4096, 50257, bf, "layernorm_fwd_looped_kernel"),  # GPT-2's vocabulary
    (200, 32001, bf, "layernorm_fwd_kernel"),          # held whole, one row per program (32 warps)
    (1024, 32001, f16, "layernorm_fwd_looped_kernel"),
    (32768, 1001, bf, "layernorm_fwd_kernel"),         # 2 KB rows: the rule's tiles
    (4096, 77, bf, "layernorm_fwd_kernel"),            # small scalar tiles
    (2048, 197, f32, "layernorm_fwd_kernel"),
    (8192, 5001, bf, "layernorm_fwd_split_kernel"),
    (2048, 11007, f16, "layernorm_fwd_split_kernel"),  # many rows of 8193..12288: head + tail, 16 warps
    (64, 4097, f16, "layernorm_fwd_split_kernel"),     # a tail of one element
    (1000, 3, bf, "layernorm_fwd_kernel"),             # shorter than a vector
]
for M, N, dtype, want in SHAPES:
    if DEV == "cpu":
        M = min(M, 17)
    gen = torch.Generator(device=DEV).manual_seed(M + N)
    x = (2 * torch.randn(M, N, device=DEV, generator=gen) + 50).to(dtype)
    w = (1 + 0.2 * torch.randn(N, device=DEV, generator=gen)).to(dtype)
    b = (0.2 * torch.randn(N, device=DEV, generator=gen)).to(dtype)
    before = {id(p) for p in LN._PLANS.values()}
    out = LN.layernorm(x, w, b)
    kernels = [p.kernel.__name__ for p in LN._PLANS.values() if id(p) not in before]
    e1 = err(out, x, w, b)
    x2 = (3 * torch.randn(M, N, device=DEV, generator=gen)).to(dtype)
    e2 = err(LN.layernorm(x2, w, b), x2, w, b)  # the cached launcher on a GPU
    e3 = err(LN.layernorm(x2, w, None), x2, w, None)
    print(f"{M}x{N} {dtype}: rule {tuple(LN.config_for(N, x.element_size(), M=M))[:4]} kernels {kernels}, "
          f"err {e1:.3g} / {e2:.3g} / {e3:.3g}")
    if (DEV != "cpu" and kernels != [want]) or max(e1, e2, e3) > 0:
        bad.append(f"{M}x{N}")

for N in (1001, 50257, 77):  # x's rows off the alignment of y's (a view at an odd storage offset)
    M = 5 if DEV == "cpu" else 300
    buf = torch.randn(M * N + 3, device=DEV).to(bf)
    x = buf[3:].view(M, N)
    w, b = torch.randn(N, device=DEV).to(bf), torch.randn(N, device=DEV).to(bf)
    e = err(LN.layernorm(x, w, b), x, w, b)
    print(f"storage offset 3, {M}x{N}: err {e:.3g}")
    if e > 0:
        bad.append(f"offset {N}")
print("BAD " + ", ".join(bad) if bad else "ALL OK")
'''


def test_layernorm_on_odd_rows_on_the_gpu():
    run_gpu_code(CODE, timeout=600)
