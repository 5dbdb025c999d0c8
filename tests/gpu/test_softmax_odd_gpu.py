"""softmax on rows of an odd length on the GPU (session 26): rows whose start is off 16-byte boundaries are read
from each row's aligned base in whole vectors (the looped, split and coop kernels, and the single-pass kernel
with one row per program), short ones in small scalar tiles (kernels/_rows.py ``odd_rows``). Per shape: the
kernel the rule should pick, the result against the reference on the first call and from the cached launcher
(new values, the row's max in its first or last column, a row of -inf), and a view at an odd storage offset and
attention scores of a 4-D shape through the same paths.

Skipped without CUDA; run on the GPU machine with `pytest -m gpu`. ``TDBG_GPU_CODE_DEVICE=cpu`` runs the same code
on the CPU under TRITON_INTERPRET=1 with a few rows per shape (a dry run of this file: no kernel-choice check).
"""
import pytest
from _gpu_code import run_gpu_code

pytestmark = pytest.mark.gpu

CODE = r'''
import os
import torch
from tritondbg.kernels import softmax as SM

DEV = os.environ.get("TDBG_GPU_CODE_DEVICE", "cuda")
bad = []


def err(out, x):
    ref = SM.reference(x)
    tol = 1e-5 if x.dtype == torch.float32 else 1e-2
    d = (out.float() - ref).abs() - tol - tol * ref.abs()  # > 0 where out is off (NaN counts as off)
    return float(torch.nan_to_num(d, nan=1.0).max())


bf, f16, f32 = torch.bfloat16, torch.float16, torch.float32
SHAPES = [  # (M, N, dtype, the kernel the rule picks on an H200)
    (4096, 50257, bf, "softmax_looped_kernel"),   # GPT-2's vocabulary, many rows
    (128, 50257, bf, "softmax_coop_kernel"),      # up to one 96 KiB+ row per SM
    (8, 32001, f16, "softmax_coop_kernel"),
    (200, 32001, bf, "softmax_kernel"),           # held whole, 32 warps, one row per program
    (32768, 1001, bf, "softmax_kernel"),          # 2 KB rows: one per program, aligned
    (4096, 77, bf, "softmax_kernel"),             # CLIP's 77 tokens: small scalar tiles
    (2048, 197, f32, "softmax_kernel"),           # ViT's 197 patches
    (8192, 5001, bf, "softmax_split_kernel"),
    (64, 4097, f16, "softmax_split_kernel"),      # a tail of one element
    (1000, 3, bf, "softmax_kernel"),              # shorter than a vector
    (300, 1, f32, "softmax_kernel"),
]
for M, N, dtype, want in SHAPES:
    if DEV == "cpu":
        M = min(M, 17)
    gen = torch.Generator(device=DEV).manual_seed(M + N)
    x = (8 * torch.randn(M, N, device=DEV, generator=gen)).to(dtype)
    x[0, N - 1] = 400.0 if dtype != f16 else 60000.0  # the max in the row's last (tail) lane
    x[M // 2, 0] = 400.0 if dtype != f16 else 60000.0  # and in a row's first (head) lane
    before = {id(p) for p in SM._PLANS.values()}
    out = SM.softmax(x)
    kernels = [p.kernel.__name__ for p in SM._PLANS.values() if id(p) not in before]
    e1 = err(out, x)
    x2 = (8 * torch.randn(M, N, device=DEV, generator=gen)).to(dtype)
    x2[-1] = -float("inf")
    out2 = SM.softmax(x2)  # the cached launcher on a GPU
    nan_row = bool(torch.isnan(out2[-1]).all())
    e2 = err(out2[:-1], x2[:-1]) if M > 1 else 0.0
    print(f"{M}x{N} {dtype}: rule {tuple(SM.config_for(N, x.element_size(), M=M))[:4]} kernels {kernels}, "
          f"err {e1:.3g} / {e2:.3g}, -inf row NaN {nan_row}")
    if (DEV != "cpu" and kernels != [want]) or e1 > 0 or e2 > 0 or not nan_row:
        bad.append(f"{M}x{N}")

# x's rows off the alignment of y's (a view at an odd storage offset): the same element offsets, right
for N in (1001, 50257, 77):
    M = 5 if DEV == "cpu" else 300
    buf = (8 * torch.randn(M * N + 3, device=DEV)).to(bf)
    x = buf[3:].view(M, N)
    e = err(SM.softmax(x), x)
    print(f"storage offset 3, {M}x{N}: err {e:.3g}")
    if e > 0:
        bad.append(f"offset {N}")

# attention scores of an odd sequence length, 4-D: (B, H, L, L)
L = 197
s = (4 * torch.randn(2 if DEV == "cpu" else 16, 12, L, L, device=DEV)).to(bf)
e = err(SM.softmax(s).reshape(-1, L), s.reshape(-1, L))
print(f"scores {tuple(s.shape)}: err {e:.3g}")
if e > 0:
    bad.append("scores")
print("BAD " + ", ".join(bad) if bad else "ALL OK")
'''


def test_softmax_on_odd_rows_on_the_gpu():
    run_gpu_code(CODE, timeout=600)
