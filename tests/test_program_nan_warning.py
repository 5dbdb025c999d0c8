"""Program mode (``tritondbg interpret -- CMD``): a NaN an op made from finite inputs and a store wrote is a warning.

h88's stranger test: a softmax without its max subtraction (exp overflows, inf / inf) wrote NaN into its output and
the run said "0 finding(s)", exit 0, while a reproducer's replay named the op. Only such a NaN: not one the inputs
held, not one made from a -inf a mask put there, not one a tl.where or the store's mask dropped, not an Inf.
"""
from __future__ import annotations

import json
import sys
import textwrap

import pytest

from conftest import run_cli

pytestmark = [pytest.mark.interpreter, pytest.mark.filterwarnings("ignore::RuntimeWarning")]

PROG = '''
import torch, triton, triton.language as tl

@triton.jit
def softmax(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=-float("inf"))
    num = tl.exp(x)  # EXP
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * n + offs, y, mask=offs < n)

@triton.jit
def ratio(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs, mask=offs < n, other=1.0)
    b = tl.load(b_ptr + offs, mask=offs < n, other=1.0)
    tl.store(y_ptr + offs, a / b, mask=offs < n)  # DIV

@triton.jit
def fine(x_ptr, d_ptr, y_ptr, z_ptr, w_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)  # holds a NaN of the program's: copied, not made
    d = tl.load(d_ptr + offs, mask=offs < n, other=1.0)
    tl.store(y_ptr + offs, x + tl.where(d == 0, 0.0, x / d), mask=offs < n)  # guarded divide: 0/0 dropped
    tl.store(z_ptr + offs, tl.exp(x * 1000.0), mask=offs < n)  # an Inf stored as an Inf (a -inf may be meant)
    tl.store(w_ptr + offs, 0.0 / d, mask=(offs < n) & (d != 0))  # 0/0 in lanes the mask keeps out

@triton.jit
def masked_row(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))  # n = 0: every lane is the mask's -inf
    tl.store(y_ptr + offs, x - tl.max(x, axis=0))  # -inf - -inf: NaN from the mask's -inf, no finite origin

torch.manual_seed(0)  # (unseeded, 1 run in ~40 drew no v > 0.09: exp(v * 1000) stored no Inf, CI of session 59)
x = 100 * torch.randn(3, 37, device="cuda")
x[0, 0] = 100.0
y = torch.empty_like(x)
softmax[(3,)](x, y, 37, BLOCK=64)
softmax[(3,)](x, y, 37, BLOCK=64)  # again: told once
a = torch.zeros(8, device="cuda"); y8 = torch.empty(8, device="cuda")
ratio[(1,)](a, a, y8, 8, BLOCK=8)
v = torch.randn(8, device="cuda"); v[2] = float("nan")
d = torch.ones(8, device="cuda"); d[3] = 0.0
v[3] = 0.0
outs = [torch.zeros(8, device="cuda") for _ in range(3)]
fine[(1,)](v, d, *outs, 8, BLOCK=8)
m = torch.empty(8, device="cuda")
masked_row[(1,)](x, m, 0, BLOCK=8)
print("nan:", [int(torch.isnan(t).sum()) for t in (y, y8, *outs, m)], "inf:", int(torch.isinf(outs[1]).sum()))
'''


def _line(src: str, tag: str) -> int:
    return next(i for i, ln in enumerate(src.splitlines(), 1) if ln.rstrip().endswith(tag))


def test_program_mode_warns_of_a_nan_an_op_made_from_finite_inputs_and_a_store_wrote(tmp_path, cli_env):
    src = textwrap.dedent(PROG)
    (tmp_path / "prog.py").write_text(src)
    report = tmp_path / "report.json"
    out = run_cli(["interpret", "--json", str(report), "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    # a warning: the exit status is the program's
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(report.read_text())["findings"]
    nan = [f for f in found if f["kind"] == "nan_inf"]
    assert {(f["kernel"], f["line"], f["severity"]) for f in nan} == {
        ("softmax", _line(src, "# EXP"), "warning"), ("ratio", _line(src, "# DIV"), "warning")}, nan
    assert not [f for f in found if f["kind"] != "nan_inf"], found
    soft = next(f for f in nan if f["kernel"] == "softmax")
    assert soft["op"] == "exp" and soft["tensor"] == "y_ptr" and soft["pid"], soft
    assert "an Inf from finite inputs" in soft["message"] and "NaN lane(s) made from it were stored" in \
        soft["message"] and f"(line {_line(src, '# EXP') + 2}, into y_ptr" in soft["message"], soft["message"]
    div = next(f for f in nan if f["kernel"] == "ratio")
    assert "a NaN from finite inputs, in 8 lane(s) of 1 program" in div["message"], div["message"]
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: warning: nan_inf")]
    assert len(lines) == 2 and f"prog.py:{_line(src, '# EXP')} pid (" in lines[0], out.stderr[-3000:]
    assert "5 launch(es), 0 finding(s), 3 warning(s)" in out.stderr, out.stderr[-2000:]  # (softmax's 2nd launch)
    # what the kernels that get no warning made: a NaN copied, a -inf - -inf stored, an Inf stored
    counts = out.stdout.split("nan:")[1]
    assert counts.split("inf:")[0].strip().endswith("8, 1, 1, 0, 8]") and counts.split("inf:")[1].strip() != "0", \
        out.stdout


DOT = '''
import torch, triton, triton.language as tl

@triton.jit
def attn_row(p_ptr, v_ptr, o_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    p = tl.load(p_ptr + r[:, None] * N + r[None, :])
    v = tl.load(v_ptr + r[:, None] * N + r[None, :])
    acc = tl.dot(p, v, out_dtype=tl.float16)  # DOT
    tl.store(o_ptr + r[:, None] * N + r[None, :], acc - acc)

p = torch.full((16, 16), 300.0, dtype=torch.float16, device="cuda")
v = torch.full((16, 16), 300.0, dtype=torch.float16, device="cuda")
v[:, 0] = float("inf")  # column 0 of the result meets an Inf operand: no dot made its Inf
o = torch.empty(16, 16, dtype=torch.float16, device="cuda")
attn_row[(1,)](p, v, o, N=16)
'''


def test_a_dot_whose_float16_accumulation_overflows_is_told_by_its_products(tmp_path, cli_env):
    """helper-94: a float16-accumulating tl.dot overflowing (SageAttention's PV without the softmax max) was told
    "dot(2.05469, 0) = nan: a NaN from finite inputs", two unrelated operand elements of a lane whose row held an
    Inf. The example lane is one made from finite operands, and a dot's is told by its row-times-column products
    against the accumulator type's largest value."""
    (tmp_path / "prog.py").write_text(DOT)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(DOT.splitlines(), 1) if "# DOT" in ln)
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: nan_inf") and f"prog.py:{line}" in ln]
    assert warn, p.stderr[-3000:]
    assert "tl.dot = inf (from finite operands: the products of its first such lane reach 9e+04 and their magnitudes " \
           "sum to 1.44e+06, past float16's largest value 65504: a float16 accumulation can overflow" in warn[0], warn[0]



ATOMIC = '''
import sys, torch, triton, triton.language as tl

@triton.jit
def dot_rows(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr, ATOMIC: tl.constexpr):
    r = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    s = tl.sum(tl.load(a_ptr + r * BLOCK + offs) * tl.load(b_ptr + offs))  # PRODUCT (fp16: +inf and -inf)
    if ATOMIC:
        tl.atomic_add(out_ptr + r, s)
    else:
        tl.store(out_ptr + r, s)

a = torch.tensor([[400.0, -400.0, 1.0, 0.0]] * 4, device="cuda").half()
b = torch.tensor([300.0, 300.0, 1.0, 0.0], device="cuda").half()
out = torch.zeros(4, device="cuda")
dot_rows[(4,)](a, b, out, BLOCK=4, ATOMIC=sys.argv[1] == "atomic")
'''


@pytest.mark.parametrize("how", ["store", "atomic"])
def test_a_nan_an_atomic_add_writes_is_told_as_stored(tmp_path, cli_env, how):
    """helper-107: TransformerEngine's grouped dscales adds its fp16 sums with tl.atomic_add; a NaN made of an
    overflow, added so, was told "No NaN made of it was stored", with every output NaN."""
    (tmp_path / "prog.py").write_text(ATOMIC)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", how], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(ATOMIC.splitlines(), 1) if "# PRODUCT" in ln)
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith(f"tritondbg: warning: nan_inf in dot_rows at prog.py:{line}")]
    assert len(warn) == 1, p.stderr[-3000:]
    assert "4 NaN lane(s) made from it were stored" in warn[0] and "into out_ptr" in warn[0], warn[0]
    assert "No NaN made of it was stored" not in p.stderr, p.stderr[-3000:]


ZERO_ROW = '''
import torch, triton, triton.language as tl

@triton.jit
def normalize(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(o_ptr + row * n + offs, x / tl.sum(x, axis=0), mask=offs < n)  # DIV

x = torch.rand(4, 100, device="cuda")
x[1] = 0  # a row of zeros: 0 / 0
o = torch.empty_like(x)
normalize[(4,)](x, o, 100, BLOCK=128)
'''


def test_a_nan_made_from_a_sum_over_padding_and_zeros_is_told(tmp_path, cli_env):
    """helper-97: ``x / tl.sum(x)`` of an all-zero row loaded with other=0.0 over a padded block (any odd hidden
    size: FlashInfer's RMSNorm with rsqrt -> exp(-0.5 * log)) made 0/0 = NaN in every lane: the sum of zeros and
    zero padding was taken for "a sum that selects its padding", so its lanes were padding: 0 findings."""
    (tmp_path / "prog.py").write_text(ZERO_ROW)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(ZERO_ROW.splitlines(), 1) if "# DIV" in ln)
    assert f"warning: nan_inf in normalize at prog.py:{line} pid (1, 0, 0): divide(0, 0) = nan" in p.stderr, \
        p.stderr[-3000:]



WHERE_ZERO = '''
import torch, triton, triton.language as tl

@triton.jit
def sumsq(X, Y, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + cols, mask=cols < N, other=0.0)
    xbar = tl.where(cols < N, x, 0.0)
    tl.store(Y, tl.sum(xbar * xbar * (xbar / xbar), axis=0))  # DIV

x = torch.randn(100, device="cuda") + 5
y = torch.empty(1, device="cuda")
sumsq[(1,)](x, y, 100, BLOCK=128)
print("y", y.item())
'''


def test_a_nan_made_in_lanes_a_where_set_is_told(tmp_path, cli_env):
    """helper-137 (a planted 0/0 in flash-attn's RMS norm): ``xbar / xbar`` over ``tl.where(cols < N, x, 0.0)``
    makes NaN in the lanes the where set to 0 (real values, not padding), and tl.sum carries it into the output;
    the NaN check skipped every lane that had been padding, the reduction check every lane that no longer was:
    0 findings, exit 0."""
    (tmp_path / "prog.py").write_text(WHERE_ZERO)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(WHERE_ZERO.splitlines(), 1) if "# DIV" in ln)
    assert "y nan" in p.stdout, p.stdout + p.stderr[-2000:]
    assert (f"warning: nan_inf in sumsq at prog.py:{line} pid (0, 0, 0): divide(0, 0) = nan: a NaN from finite "
            "inputs, in 28 lane(s)") in p.stderr, p.stderr[-3000:]


ONLINE = '''
import torch, triton, triton.language as tl

@triton.jit
def online_sum(X, M, Out, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m_i = float("-inf")
    l_i = 0.0
    acc = 0.0
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(X + row * N + cols, mask=cols < N, other=0.0)
        keep = tl.load(M + row * N + cols, mask=cols < N, other=0) != 0
        s = x + tl.where(keep, 0.0, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(s, 0))
        p = tl.exp(s - m_ij)  # FIRST
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 0)
        acc = acc * alpha + tl.sum(p * x, 0)
        m_i = m_ij
    tl.store(Out + row, acc / l_i)

x = torch.randn(4, 40, device="cuda")
m = torch.ones(4, 40, dtype=torch.int32, device="cuda")
m[0, :16] = 0  # row 0: its first block all masked, valid keys after
out = torch.empty(4, device="cuda")
online_sum[(4,)](x, m, out, 40, BLOCK=16)
print("nan:", int(torch.isnan(out).sum()))
'''


def test_a_nan_an_online_softmax_makes_of_its_masks_infinities_is_told(tmp_path, cli_env):
    """helper-143 / helper-145 (SageAttention with -inf for its -1e6, flash attention's causal mask off by one): a
    running max still at its -inf start over a block all masked to -inf makes exp(-inf - -inf) = NaN, stored in a row
    that had valid keys later; the program printed NaN and the run said 0 finding(s). Told as a warning at the
    first op that made it (not alpha's line, made after p's), with the fix."""
    (tmp_path / "prog.py").write_text(ONLINE)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert "nan: 1" in p.stdout, p.stdout + p.stderr[-2000:]
    line = next(i for i, ln in enumerate(ONLINE.splitlines(), 1) if "# FIRST" in ln)
    assert (f"warning: nan_inf in online_sum at prog.py:{line} pid (0, 0, 0): subtract(-inf, -inf) = nan: a NaN made "
            "of infinities") in p.stderr, p.stderr[-3000:]
    assert "first Out[0]" in p.stderr and "tl.where(m == float('-inf'), 0.0, m)" in p.stderr, p.stderr[-3000:]
    # the other cause, a row with no key at all (helper-152: a causal mask `>` for `>=` left query 0 without its own
    # key; the advice named only the -inf start, which hides nothing of a mask bug), and the lane
    assert "(the first: lane [0] of pid (0, 0, 0)'s block)" in p.stderr, p.stderr[-3000:]
    assert "or the row has no key at all" in p.stderr and "`>` where `>=` was meant" in p.stderr, p.stderr[-3000:]
    assert p.returncode == 0 and "0 finding(s), 1 warning(s)" in p.stderr, p.stderr[-3000:]
    report = tmp_path / "report.json"
    run_cli(["interpret", "--json", str(report), "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    (f,) = [f for f in json.loads(report.read_text())["findings"] if f["kind"] == "nan_inf"]
    assert f["output"] == "Out[0]" and f["output_count"] == 1 and f["severity"] == "warning", f


RMS = '''
import sys, torch, triton, triton.language as tl

@triton.jit
def rms_fwd(X, Y, W, N, eps, UP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask, other=0.0)
    if UP:
        x = x.to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    var = tl.sum(x * x, axis=0) / N  # SUM
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Y + row * N + cols, x * rstd * w, mask=mask)

@triton.jit
def sigmoid(X, Y, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < N, other=0.0)
    tl.store(Y + offs, 1 / (1 + tl.exp(-x)), mask=offs < N)  # exp(100) = inf on purpose: 1 / inf = 0

torch.manual_seed(0)
x = torch.randn(6, 100, device="cuda", dtype=torch.float16) * 40
w = torch.randn(100, device="cuda", dtype=torch.float16)
y = torch.empty_like(x)
rms_fwd[(6,)](x, y, w, 100, 1e-6, UP=sys.argv[1] == "up", BLOCK=128)
s = torch.full((8,), -100.0, device="cuda")
sigmoid[(1,)](s, torch.empty_like(s), 8, BLOCK=8)
print("zeros:", int((y == 0).sum()))
'''


@pytest.mark.parametrize("form", ["program", "reproducer"])
def test_an_fp16_sum_that_overflows_into_finite_outputs_is_a_warning(tmp_path, cli_env, form):
    """helper-101: applied-ai's RMS norm without its .to(tl.float32): the float16 sum of squares overflows, rsqrt(inf)
    = 0 makes every output 0, and the run said "0 finding(s)" (no reference in a program; a reproducer's is the
    captured zeros). The sum's Inf from finite lanes is a warning at its line; an elementwise Inf (a sigmoid's
    exp(-x)) is not, nor the same kernel accumulating in float32."""
    (tmp_path / "prog.py").write_text(RMS)
    line = _line(RMS, "# SUM")
    for mode in ("fp16", "up"):
        if form == "program":
            p = run_cli(["interpret", "--", sys.executable, "prog.py", mode], cli_env, cwd=tmp_path)
        else:
            run_cli(["capture", "--kernel", "rms_fwd", "--out", f"cap_{mode}", "--", sys.executable, "prog.py", mode],
                    cli_env, cwd=tmp_path)
            p = run_cli(["interpret", str(tmp_path / f"cap_{mode}" / "rms_fwd_0.py")], cli_env, cwd=tmp_path)
        text = p.stderr + p.stdout
        if mode == "up":
            assert "nan_inf" not in text, text[-3000:]
            continue
        # (a program's warning is one line; a reproducer's case block gives the site, its source, then the text)
        assert text.count("a float16 sum of finite values") == 1 and (f"nan_inf in rms_fwd at prog.py:{line}" in text
                                                                     or f"nan_inf prog.py:{line}" in text), text[-3000:]
        assert "tl.sum = inf: a float16 sum of finite values went past float16's largest value 65504, in 6 lane(s) " \
               "of 6 programs" in text and "rsqrt(inf) = 0" in text, text[-3000:]
        assert p.returncode == 0, p.stderr[-2000:]  # a warning (--strict fails on it)


PAIR = '''
import torch, triton, triton.language as tl

@triton.jit
def combine(m_a, s_a, m_b, s_b):
    m = tl.maximum(m_a, m_b)
    return m, s_a * tl.exp(m_a - m) + s_b * tl.exp(m_b - m)

@triton.jit
def lse(x_ptr, w_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    w = tl.load(w_ptr + offs, mask=offs < n, other=0.0)  # the data's NaN, in the pair's second operand
    m, s = tl.reduce((x, w), 0, combine)
    tl.store(y_ptr, m + tl.log(s))

x = torch.randn(64, device="cuda")
w = torch.ones(64, device="cuda")
w[5] = float("nan")
y = torch.empty(1, device="cuda")
lse[(1,)](x, w, y, 64, BLOCK=64)
print("y", y.item())
'''


def test_a_nan_in_a_custom_reduces_second_operand_is_the_datas_not_made_from_finite_inputs(tmp_path, cli_env):
    """helper-114: a tl.reduce over a pair whose second operand held the NaN was told "tl.other(...) = nan: a NaN
    from finite inputs" (only the first operand was looked at, and the combine was named tl.other)."""
    (tmp_path / "prog.py").write_text(PAIR)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert "y nan" in p.stdout, p.stdout
    assert "from finite inputs" not in p.stderr and "tl.other" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 0 and "0 finding(s)" in p.stderr, p.stderr[-3000:]


ACT_QUANT = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def act_quant(x_ptr, y_ptr, N, BLOCK: tl.constexpr, EPS: tl.constexpr, KEEP: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=m, other=0.0)
    amax = tl.max(tl.abs(x), axis=0)
    if EPS > 0:
        amax = tl.maximum(amax, EPS)
    scale = 448.0 / amax  # DIV
    if KEEP:
        y = tl.clamp(x * scale, -448.0, 448.0, propagate_nan=tl.PropagateNan.ALL)
    else:
        y = tl.clamp(x * scale, -448.0, 448.0)  # CLAMP
    tl.store(y_ptr + row * N + offs, y, mask=m)


x = torch.randn(4, 100, device="cuda")
x[2] = 0.0  # an all-zero row: its amax is 0
y = torch.empty_like(x)
act_quant[(4,)](x, y, 100, BLOCK=128, EPS=float(sys.argv[1]), KEEP=sys.argv[2] == "keep")
print("row 2", y[2, 0].item())
'''


@pytest.mark.parametrize("form", ["program", "reproducer"])
def test_a_nan_a_clamp_turns_into_a_number_is_a_warning_at_the_op_that_made_it(tmp_path, cli_env, form):
    """helper-119: torchao's act quant without its EPS clamp: 448 / 0 = inf on an all-zero row, 0 * inf = NaN, and
    tl.clamp (propagate_nan's default) stores -448 there: 0 finding(s), exit 0, in the program and its reproducer.
    A warning at the divide now, naming the clamp; not with the EPS, nor where the clamp keeps the NaN (then the
    stored NaN is told as such)."""
    (tmp_path / "prog.py").write_text(ACT_QUANT)
    div, clamp = _line(ACT_QUANT, "# DIV"), _line(ACT_QUANT, "# CLAMP")
    for eps, keep in (("0", "no"), ("1e-12", "no"), ("0", "keep")):
        if form == "program":
            p = run_cli(["interpret", "--", sys.executable, "prog.py", eps, keep], cli_env, cwd=tmp_path)
        else:
            out = f"cap_{eps}_{keep}"
            run_cli(["capture", "--out", out, "--", sys.executable, "prog.py", eps, keep], cli_env, cwd=tmp_path)
            p = run_cli(["interpret", str(tmp_path / out / "act_quant_0.py")], cli_env, cwd=tmp_path)
        text = p.stderr + p.stdout
        said = f"a NaN made of it reached tl.clamp at line {clamp}"
        if eps == "0" and keep == "no":
            assert said in text and "divide(448, 0) = inf from finite inputs" in text, text[-3000:]
            assert f"{said} (100 lane(s))" in text, text[-3000:]  # the row's 100, not the block's 128 (padding)
            assert f"nan_inf in act_quant at prog.py:{div}" in text or f"nan_inf prog.py:{div}" in text, text[-3000:]
            assert p.returncode == 0, text[-2000:]  # a warning (--strict fails on it)
        else:
            assert said not in text, text[-3000:]


QUANT = '''
import sys, torch, triton, triton.language as tl

@triton.jit
def quant_row(x_ptr, q_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0).to(tl.float32)
    q = x / (tl.max(tl.abs(x)) / 448.0)  # DIV (no eps: 0 / 0 on a row of zeros)
    tl.store(q_ptr + row * n + cols, q, mask=cols < n)

x = torch.randn(4, 100, device="cuda", dtype=torch.bfloat16)
x[1] = 0
q = torch.empty(4, 100, device="cuda", dtype=getattr(torch, sys.argv[1]))
quant_row[(4,)](x, q, 100, BLOCK=128)
print("NaN in q:", int(torch.isnan(q.float()).sum()))
'''


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "float16"])
def test_a_nan_stored_into_an_fp8_output_is_told(tmp_path, cli_env, dtype):
    """helper-135: a quantiser without its eps clamp (lmdeploy's per-token quant with the clamp removed) stored
    0/0 into an e4m3 / e5m2 output; the float16 output got the warning, the fp8 ones nothing (their lanes are bytes
    to the interpreter, so no NaN was seen and the cast dropped the NaN's origin)."""
    (tmp_path / "prog.py").write_text(QUANT)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", dtype], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "NaN in q: 100" in p.stdout, p.stderr[-3000:]
    line = next(i for i, ln in enumerate(QUANT.splitlines(), 1) if "# DIV" in ln)
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith(f"tritondbg: warning: nan_inf in quant_row at prog.py:{line}")]
    assert len(warn) == 1 and "100 NaN lane(s) of it were stored" in warn[0] and "into q_ptr" in warn[0], p.stderr[-3000:]
