"""Undefined lanes of a masked integer load (no ``other=``) that a store writes: a poison finding, as for a float
load (helper-150: AutoAWQ's zero points off by one group and GPTQ-style int4 unpacking, 0 findings). An integer has
no NaN to carry the load's id; the shadow follows its lanes through ``>>`` (whose handles the interpreter remakes),
``&``, casts, a broadcast and a dot over a row with no defined lane."""
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
    (["zero_points", "2"], "LOAD2", "STORE2", "O[0, 0]", 256),
])
def test_stored_lanes_of_an_integer_load_without_other_are_poison(tmp_path, cli_env, args, load, store, first, count):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", *args], cli_env, cwd=tmp_path)
    said = [ln for ln in p.stderr.splitlines() if ln.startswith(f"tritondbg: poison in ")]
    assert len(said) == 1 and f"at prog.py:{_line(load)} " in said[0], p.stderr[-3000:]
    assert f"{count} element(s) of output O hold them, first {first} (stored at line {_line(store)}" in said[0], said[0]
    assert "other=0" in said[0], said[0]
    assert p.returncode == 1 and "done" in p.stdout, p.stderr[-2000:]


@pytest.mark.parametrize("args", [["other"], ["zero_points", "1"]])
def test_defined_integer_lanes_are_no_finding(tmp_path, cli_env, args):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", *args], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "1 launch(es), 0 finding(s)" in p.stderr, p.stderr[-3000:]
