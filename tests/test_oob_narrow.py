"""An out-of-bounds access before a tensor's start after the kernel cast an index to an 8- or 16-bit integer names
the cast (helper-150: GPTQ's index narrowed to int16 gave offsets -85..-1 and derived findings, nothing naming the
wrap at the cast's line)."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def gather(X, Y, n, B: tl.constexpr):
    idx = (tl.program_id(0) * B + tl.arange(0, B)).to(tl.int8)  # CAST
    tl.store(Y + idx, tl.load(X + idx, mask=idx < n), mask=idx < n)  # ACCESS

x = torch.randn(300, device="cuda"); y = torch.empty_like(x)
gather[(5,)](x, y, 300, B=64)
''')


def test_offsets_before_the_start_name_an_index_narrowed_to_int8(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith("# ACCESS"))
    cast = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith("# CAST"))
    said = [ln for ln in p.stderr.splitlines() if ln.startswith(f"tritondbg: out_of_bounds in gather at prog.py:{line} ")]
    assert said and "before the start" in said[0], p.stderr[-3000:]
    assert (f"line {cast} casts to int8 (`idx = (tl.program_id(0) * B + tl.arange(0, B)).to(tl.int8)`): an index "
            f"past 127 wraps there") in said[0], said[0]


def test_two_programs_whose_wrapped_indices_meet_name_the_cast_not_the_axis(tmp_path, cli_env):
    """helper-151: pid 64's int16 index wrapped onto pid 0's block was told "its offsets do not depend on
    program_id(0)" (redundant programs, the wrong axis); they do: the cast wrapped them."""
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    cast = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith("# CAST"))
    said = [ln for ln in p.stderr.splitlines() if "race in gather" in ln]
    assert len(said) == 1 and "pid (0, 0, 0) (line" in said[0] and "pid (4, 0, 0)" in said[0], p.stderr[-3000:]
    assert f"line {cast} casts to int8" in said[0] and "another program's block lands on this one" in said[0], said[0]
    assert "do not depend on" not in said[0], said[0]
