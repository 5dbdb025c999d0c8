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

@triton.jit
def matmul_nostride_bn(a_ptr, b_ptr, c_ptr, K, N, stride_am, stride_bk, stride_bn, stride_cm,
                       BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):  # BUGGY_MM
    m = tl.program_id(0)
    k = tl.arange(0, BLOCK_K)
    n = tl.arange(0, BLOCK_N)
    a = tl.load(a_ptr + m * stride_am + k, mask=k < K, other=0.0)
    b = tl.load(b_ptr + k[:, None] * stride_bk + n[None, :], mask=(k[:, None] < K) & (n[None, :] < N), other=0.0)
    tl.store(c_ptr + m * stride_cm + n, tl.sum(a[:, None] * b, 0), mask=n < N)

@triton.jit
def rownorm(X, Y, stride, N, BLOCK: tl.constexpr):  # BUGGY_GENERIC
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0)
    tl.store(Y + row * N + cols, x / tl.sqrt(tl.sum(x * x, 0) / N), mask=cols < N)  # (Y: contiguous)

@triton.jit
def softmax_ld(x_ptr, y_ptr, stride_xm, ld_x, stride_y, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_xm + cols * ld_x, mask=cols < n, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, 0), mask=cols < n)

@triton.jit
def scale_bnhd(q_ptr, o_ptr, stride_qb, stride_qh, H: tl.constexpr, D: tl.constexpr, N: tl.constexpr):
    # q handed as (B, N, H, D).transpose(1, 2): the kernel knows its token stride is H * D
    b, h = tl.program_id(0), tl.program_id(1)
    n = tl.arange(0, N)
    d = tl.arange(0, D)
    src = q_ptr + b * stride_qb + h * stride_qh + n[:, None] * (H * D) + d[None, :]
    tl.store(o_ptr + ((b * H + h) * N + n[:, None]) * D + d[None, :], tl.load(src) * 2.0)

@triton.jit
def scale_shared(Q, O, stride_z, stride_h, stride_tok, stride_d, N: tl.constexpr, D: tl.constexpr):
    # one set of strides for q and o = empty_like(q) (tutorial 06's backward hands one set for q, k, v and o)
    z, h = tl.program_id(0), tl.program_id(1)
    offs = z * stride_z + h * stride_h + tl.arange(0, N)[:, None] * stride_tok + tl.arange(0, D)[None, :] * stride_d
    tl.store(O + offs, tl.load(Q + offs) * 2.0)

@triton.jit
def scale_bnhd_rt(q_ptr, o_ptr, stride_qb, stride_qh, H, D: tl.constexpr, N: tl.constexpr):
    b, h = tl.program_id(0), tl.program_id(1)   # the token stride built from a runtime H: n * (H * D)
    n = tl.arange(0, N)
    d = tl.arange(0, D)
    src = q_ptr + b * stride_qb + h * stride_qh + n[:, None] * (H * D) + d[None, :]
    tl.store(o_ptr + ((b * H + h) * N + n[:, None]) * D + d[None, :], tl.load(src) * 2.0)

@triton.jit
def rows_bias(x_ptr, b_ptr, y_ptr, stride_x, stride_y, n, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)     # kernl's linear layer hands x as the bias placeholder when there is none
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n, other=0.0)
    if HAS_BIAS:
        x += tl.load(b_ptr + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + row * stride_y + cols, x, mask=cols < n)

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
xm = torch.randn(3, 40, device="cuda")
cm = torch.empty(3, 24, device="cuda")
matmul_nostride_bn[(3,)](xm, wt, cm, 40, 24, xm.stride(0), wt.stride(0), wt.stride(1), cm.stride(0),
                         BLOCK_K=64, BLOCK_N=32)
print("mm", torch.allclose(cm, xm @ wt, atol=1e-4))
x2 = torch.randn(48, 40, device="cuda").t()
y2 = torch.empty(40, 48, device="cuda")
rownorm[(40,)](x2, y2, x2.stride(0), 48, BLOCK=64)
print("generic", torch.allclose(y2, x2 / x2.pow(2).mean(-1, keepdim=True).sqrt(), atol=1e-4))
softmax_ld[(40,)](x, y, x.stride(0), x.stride(1), y.stride(0), 48, BLOCK=64)
print("ld", (y - ref).abs().max().item() < 1e-5)
q = torch.randn(2, 8, 4, 16, device="cuda").transpose(1, 2)
oq = torch.empty(2, 4, 8, 16, device="cuda")
scale_bnhd[(2, 4)](q, oq, q.stride(0), q.stride(1), H=4, D=16, N=8)
print("bnhd", torch.equal(oq, q * 2))
q3 = torch.randn(2, 16, 3, 8, device="cuda").transpose(1, 2)
o3 = torch.empty_like(q3)
scale_shared[(2, 3)](q3, o3, *q3.stride(), N=16, D=8)
print("shared", torch.equal(o3, q3 * 2))
scale_bnhd_rt[(2, 4)](q, oq, q.stride(0), q.stride(1), 4, D=16, N=8)
print("runtime", torch.equal(oq, q * 2))
xc = x.contiguous()
rows_bias[(40,)](xc, x, y, xc.stride(0), y.stride(0), 48, HAS_BIAS=False, BLOCK=64)
print("bias", torch.equal(y, xc))


@triton.jit
def grad_twin(C, dC, Valids, V, D, stride_cv, stride_cd, stride_vb, BV: tl.constexpr, BD: tl.constexpr):
    v = tl.arange(0, BV)[:, None]
    d = tl.arange(0, BD)[None, :]
    m = (v < V) & (d < D)
    x = tl.load(C + v * stride_cv + d * stride_cd, mask=m, other=0.0)
    x += tl.load(Valids + stride_vb * 0) * 0.0
    tl.store(dC + v * stride_cv + d * stride_cd, 2 * x, mask=m)


c = torch.randn(100, 13, device="cuda").t()  # helper-140 (Cut Cross-Entropy): dC = zeros_like(c), c's strides
dc = torch.zeros_like(c)
valids = torch.arange(5, device="cuda", dtype=torch.int32)
grad_twin[(1,)](c, dc, valids, c.size(0), c.size(1), c.stride(0), c.stride(1), valids.stride(0), BV=16, BD=128)
print("twin", torch.equal(dc, 2 * c))
''')


def _line(tag):
    return next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith("# " + tag))


def test_a_kernel_handed_a_transpose_without_one_of_its_strides_is_a_warning(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    # the buggy kernels are wrong, the others right: what the warning must tell apart
    for tag, right in (("rows", False), ("strided", True), ("matvec", True), ("flat", True), ("mm", False),
                       ("generic", False), ("ld", True), ("bnhd", True), ("shared", True),
                       ("runtime", True), ("bias", True), ("twin", True)):
        assert f"{tag} {right}" in p.stdout, p.stdout
    warn = {}
    for ln in p.stderr.splitlines():
        if ln.startswith("tritondbg: warning: layout in "):
            warn.setdefault(ln.split(" in ")[1].split(" at ")[0], []).append(ln)
    # (rows_bias: the permuted placeholder it is handed is never read under HAS_BIAS=False: helper-139, kernl)
    assert set(warn) == {"softmax_rows", "matmul_nostride_bn", "rownorm"}, p.stderr[-3000:]
    (rows,) = warn["softmax_rows"]  # y is contiguous: only x is told
    assert f"softmax_rows at prog.py:{_line('BUGGY')}" in rows, rows
    assert "the tensor handed as x_ptr is a permuted view (shape (40, 48), strides (1, 40)" in rows, rows
    assert "was handed stride_x = 1 (its stride(0)), no stride argument equal to its stride(1) = 40" in rows, rows
    # helper-128: w.t()'s stride(1) is K, the activation's row stride too; only b's own stride names count
    (mm,) = warn["matmul_nostride_bn"]
    assert f"prog.py:{_line('BUGGY_MM') - 1}" in mm and "handed as b_ptr" in mm and "stride(1) = 40" in mm, mm
    # a bare `stride` speaks of every tensor (tutorial 05's layer norm, Liger's swiglu)
    (generic,) = warn["rownorm"]
    assert "handed as X " in generic and "was handed stride = 1 (its stride(0))" in generic, generic
