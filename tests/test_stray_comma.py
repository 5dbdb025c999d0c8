"""A stray trailing comma (``x = tl.load(...),``) makes a kernel value a 1-tuple; the kernel fails where it is used
with Triton's "cannot convert (array([...]), array([...])) of type <class 'tuple'> to tensor", both blocks printed
whole over many lines (session 63). The finding names the comma's line, the error's blocks are cut to their size,
and a compile for a GPU target (``tritondbg ir``) says the same."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def twice(X, Y, N, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < N
    x = tl.load(X + offs, mask=m, other=0.0),  # COMMA
    y = x * 2  # (a tuple repeated: no error yet)
    tl.store(Y + offs, y, mask=m)  # FAILS

@triton.jit
def direct(X, Y, N, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    keep = (offs,)  # on purpose: parentheses
    x = tl.load(X + offs, mask=offs < N, other=0.0),  # COMMA2
    tl.store(Y + offs, x, mask=offs < N)  # FAILS2

x = torch.randn(100, device="cuda"); y = torch.empty_like(x)
(twice if sys.argv[1] == "twice" else direct)[(4,)](x, y, 100, B=32)
''')


def _line(tag):
    return next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))


@pytest.mark.parametrize("which, comma, headed", [("twice", "COMMA", "FAILS"), ("direct", "COMMA2", "COMMA2")])
def test_a_stray_comma_is_named_and_the_blocks_are_not_printed(tmp_path, cli_env, which, comma, headed):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", which], cli_env, cwd=tmp_path)
    said = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: kernel_error in ")]
    assert len(said) == 1, p.stderr[-3000:]
    assert f"at prog.py:{_line(headed)} " in said[0], said[0]
    assert f"line {_line(comma)} (`x = tl.load(" in said[0] and "makes x a 1-element tuple" in said[0], said[0]
    assert "array(<32 float32 values>)" in said[0] and "array([" not in said[0], said[0]
    if which == "direct":
        assert f"(the tuple fails at line {_line('FAILS2')})" in said[0], said[0]
    assert p.returncode == 1, p.stderr[-2000:]


def test_capture_says_the_error_in_one_line_and_ir_names_the_comma(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["capture", "--out", "cap", "--", sys.executable, "prog.py", "twice"], cli_env, cwd=tmp_path)
    said = [ln for ln in p.stdout.splitlines() + p.stderr.splitlines() if "the launch did not finish" in ln]
    assert len(said) == 1 and "array(<32 float32 values>)" in said[0] and "array([" not in said[0], p.stderr[-2000:]
    (entry,) = json.loads((tmp_path / "cap" / "captures.json").read_text())["captures"]
    assert "\\\\n" not in entry["error"] and "array([" not in entry["error"], entry["error"]
    q = run_cli(["ir", "cap/" + entry["reproducer"].split("::")[0], "--stage", "ttir"], cli_env, cwd=tmp_path)
    assert q.returncode != 0 and f"line {_line('COMMA')} (`x = tl.load(" in q.stderr, q.stderr[-2000:]
