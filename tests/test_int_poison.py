"""Undefined lanes of a masked integer load (no ``other=``) that a store writes: a poison finding, as for a float
load (helper-150: AutoAWQ's zero points off by one group and GPTQ-style int4 unpacking, 0 findings). An integer has
no NaN to carry the load's id; the shadow follows its lanes through ``>>`` (whose handles the interpreter remakes),
``&`` and casts to the store; an integer lane plus -inf is -inf (helper-151: SageAttention's int8 causal softmax)."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def unpack(Q, O, n, UNPACK: tl.constexpr, OTHER: tl.constexpr):
    offs = tl.arange(0, 8)
    if OTHER:
        q = tl.load(Q + offs, mask=offs < n, other=0)
    else:
        q = tl.load(Q + offs, mask=offs < n)  # LOAD1
    if UNPACK:
        v = ((q >> 4) & 0xF).to(tl.float32)
    else:
        v = q.to(tl.float32)
    tl.store(O + offs, v)  # STORE1

@triton.jit
def zero_points(Z, A, O, G, GROUP):
    zk = tl.arange(0, 1) + GROUP  # a group past the end when GROUP == G
    offs = tl.arange(0, 8)
    z = tl.load(Z + zk[:, None] * 8 + offs[None, :], mask=(zk < G)[:, None])  # LOAD2
    z = tl.broadcast_to(tl.interleave(z, z), (16, 16))
    w = ((z >> 4) & 0xF).to(tl.float32)
    r = tl.arange(0, 16)
    acc = tl.dot(tl.load(A + r[:, None] * 16 + r[None, :]), w)
    tl.store(O + r[:, None] * 16 + r[None, :], acc)  # STORE2

which = sys.argv[1]
if which == "zero_points":
    z = torch.randint(0, 2**30, (2, 8), dtype=torch.int32, device="cuda")
    a, o = torch.randn(16, 16, device="cuda"), torch.empty(16, 16, device="cuda")
    zero_points[(1,)](z, a, o, 2, int(sys.argv[2]))
else:
    q = torch.randint(0, 2**30, (5,), dtype=torch.int32, device="cuda")
    o = torch.empty(8, device="cuda")
    unpack[(1,)](q, o, 5, UNPACK=which == "unpack", OTHER=which == "other")
print("done")
''')


def _line(tag):
    return next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))


@pytest.mark.parametrize("args, load, store, first, count", [
    (["convert"], "LOAD1", "STORE1", "O[5]", 3),
    (["unpack"], "LOAD1", "STORE1", "O[5]", 3),
])
def test_stored_lanes_of_an_integer_load_without_other_are_poison(tmp_path, cli_env, args, load, store, first, count):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", *args], cli_env, cwd=tmp_path)
    said = [ln for ln in p.stderr.splitlines() if ln.startswith(f"tritondbg: poison in ")]
    assert len(said) == 1 and f"at prog.py:{_line(load)} " in said[0], p.stderr[-3000:]
    assert f"{count} element(s) of output O hold them, first {first} (stored at line {_line(store)}" in said[0], said[0]
    assert "other=0" in said[0], said[0]
    assert p.returncode == 1 and "done" in p.stdout, p.stderr[-2000:]


@pytest.mark.parametrize("args", [["other"], ["zero_points", "1"], ["zero_points", "2"]])
def test_defined_integer_lanes_are_no_finding(tmp_path, cli_env, args):
    """(["zero_points", "2"]: a group past the end, its undefined row broadcast over the K block and through a dot:
    not followed through the dot, as the README says: int8 attention masks such columns with a large finite bias,
    helper-151)"""
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", *args], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "1 launch(es), 0 finding(s)" in p.stderr, p.stderr[-3000:]


BIASED = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def online_max(S, O, N, BN: tl.constexpr, NBLK: tl.constexpr):
    offs = tl.arange(0, BN)
    m = float("-inf")
    l = 0.0
    for b in range(NBLK):
        msk = b * BN + offs < N
        s = tl.load(S + b * BN + offs, mask=msk)  # int32, lanes >= N undefined
        x = s.to(tl.float32) + tl.where(msk, 0.0, float("-inf"))  # -inf there, whatever the integer held
        m_new = tl.maximum(m, tl.max(x, 0))
        l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), 0)
        m = m_new
    tl.store(O, m)
    tl.store(O + 1, l)

s = torch.randint(-50, 50, (13,), dtype=torch.int32, device="cuda")
o = torch.empty(2, device="cuda")
online_max[(1,)](s, o, 13, BN=16, NBLK=int(sys.argv[1]))
print("m", o[0].item() == s.max().item())
''')


@pytest.mark.parametrize("blocks", ["1", "2"])
def test_an_integer_lane_plus_minus_inf_is_minus_inf_whatever_it_held(tmp_path, cli_env, blocks):
    """helper-151 (SageAttention's int8 causal softmax): an integer's undefined lanes biased with tl.where(mask, 0,
    -inf) before a max / exp / sum were an error (and, with a block wholly past the end, the stored max held them)."""
    (tmp_path / "prog.py").write_text(BIASED)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", blocks], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "m True" in p.stdout, p.stdout + p.stderr[-3000:]
    assert "1 launch(es), 0 finding(s)" in p.stderr, p.stderr[-3000:]
