"""A permuted tensor handed with some of its strides but not one a kernel must apply (interp/layouts.py): a row
kernel handed ``x.t()`` and only its row stride reads x's own elements in the wrong places (helper-126: xformers'
softmax backward handed a non-contiguous gradient), with no out-of-bounds to tell. Silent before."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def softmax_rows(x_ptr, y_ptr, stride_x, stride_y, n, BLOCK: tl.constexpr):  # BUGGY
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, 0), mask=cols < n)

@triton.jit
def softmax_strided(x_ptr, y_ptr, stride_xm, stride_xn, stride_y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_xm + cols * stride_xn, mask=cols < n, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, 0), mask=cols < n)

@triton.jit
def matvec_wt(w_ptr, v_ptr, o_ptr, stride_wn, K, BLOCK_K: tl.constexpr):
    # w_ptr is handed as weight.t() (K, N): read by design as the row-major (N, K) weight, unit stride along k
    n = tl.program_id(0)
    k = tl.arange(0, BLOCK_K)
    w = tl.load(w_ptr + n * stride_wn + k, mask=k < K, other=0.0)
    tl.store(o_ptr + n, tl.sum(w * tl.load(v_ptr + k, mask=k < K, other=0.0), 0))

@triton.jit
def scale_flat(x_ptr, y_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < numel) * 2.0, mask=offs < numel)

a = torch.randn(48, 40, device="cuda")
x = a.t()                      # (40, 48), strides (1, 40)
y = torch.empty(40, 48, device="cuda")
ref = torch.softmax(x, -1)
softmax_rows[(40,)](x, y, x.stride(0), y.stride(0), 48, BLOCK=64)
print("rows", (y - ref).abs().max().item() < 1e-5)
softmax_strided[(40,)](x, y, x.stride(0), x.stride(1), y.stride(0), 48, BLOCK=64)
print("strided", (y - ref).abs().max().item() < 1e-5)
weight = torch.randn(24, 40, device="cuda")   # (N, K)
v = torch.randn(40, device="cuda")
o = torch.empty(24, device="cuda")
wt = weight.t()
matvec_wt[(24,)](wt, v, o, wt.stride(1), 40, BLOCK_K=64)
print("matvec", torch.allclose(o, weight @ v, atol=1e-4))
yy = torch.empty_like(x)       # the same permuted layout: a flat kernel is right on it
scale_flat[(2,)](x, yy, x.numel(), BLOCK=1024)
print("flat", torch.equal(yy, x * 2))
''')


def test_a_row_kernel_handed_a_transpose_without_its_column_stride_is_a_warning(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    # the buggy kernel is wrong, the others right: what the warning must tell apart
    assert "rows False" in p.stdout and "strided True" in p.stdout and "matvec True" in p.stdout \
        and "flat True" in p.stdout, p.stdout
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: layout in")]
    line = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith("# BUGGY"))
    assert len(warn) == 1 and f"layout in softmax_rows at prog.py:{line}" in warn[0], p.stderr[-3000:]
    assert "x_ptr is a permuted view (shape (40, 48), strides (1, 40)" in warn[0], warn[0]
    assert "handed stride_x = 1 (x_ptr.stride(0)) but no stride-named integer equal to its stride(1) = 40" in warn[0]
