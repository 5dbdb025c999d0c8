"""Undefined lanes of a tl.dot operand that meet exact zeros in some rows of the partner and NaN in others
(helper-152: FlagAttention's causal forward with more queries than keys: V's tail rows, loaded without other=, met
p's zeros in every row with a key and p's NaN in the rows with none, which the kernel then drops). numpy's 0 * NaN
had made every output of the tile NaN: a poison error on a correct kernel and a nan_inf warning blaming -inf - -inf
for the NaN of a row with keys. Now the rows with a key are clean, the poison stays in the rows the kernel drops."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def attn(Q, K, V, O, M, N, P_SEQ, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr, DROP: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_d = tl.arange(0, D)
    q = tl.load(Q + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < M, other=0.0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for start in range(0, N, BN):
        offs_n = start + tl.arange(0, BN)
        k = tl.load(K + offs_n[None, :] * D + offs_d[:, None], mask=offs_n[None, :] < N)
        v = tl.load(V + offs_n[:, None] * D + offs_d[None, :], mask=offs_n[:, None] < N)  # V
        s = tl.dot(q, k)
        s = tl.where(offs_n[None, :] < N, s, float("-inf"))
        s = tl.where(P_SEQ + offs_m[:, None] >= offs_n[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        acc = acc * alpha[:, None] + tl.dot(p, v)
        l_i = l_i * alpha + tl.sum(p, 1)
        m_i = m_new
    empty = P_SEQ + offs_m < 0
    if DROP:
        acc = tl.where(empty[:, None], 0.0, acc / l_i[:, None])
    else:
        acc = acc / l_i[:, None]
    tl.store(O + offs_m[:, None] * D + offs_d[None, :], acc, mask=offs_m[:, None] < M)

M, N, D = 40, 29, 16
q, k, v = (torch.randn(n, D, device="cuda") for n in (M, N, N))
o = torch.empty(M, D, device="cuda")
attn[(triton.cdiv(M, 16),)](q, k, v, o, M, N, N - M, BM=16, BN=16, D=D, DROP=sys.argv[1] == "drop")
print("nan rows", int(o.isnan().any(1).sum()))
''')


def test_the_rows_with_a_key_are_clean_and_the_dropped_rows_tell_nothing(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "drop"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "nan rows 0" in p.stdout, p.stdout + p.stderr[-3000:]
    assert "0 finding(s)" in p.stderr and "nan_inf" not in p.stderr, p.stderr[-3000:]
    assert not [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: poison")], p.stderr[-3000:]


def test_rows_that_keep_the_nan_still_name_it(tmp_path, cli_env):
    """Without the tl.where the empty rows store NaN (-inf - -inf): told at that subtract, and no row with a key is
    named for it."""
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "keep"], cli_env, cwd=tmp_path)
    assert "nan rows 11" in p.stdout, p.stdout + p.stderr[-3000:]
    nan = [ln for ln in p.stderr.splitlines() if "nan_inf in attn" in ln]
    assert nan and "first O[0, 0]" in " ".join(nan), p.stderr[-3000:]
    assert "O[11," not in p.stderr, p.stderr[-3000:]
