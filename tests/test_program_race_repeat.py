"""A finding told as a warning in one launch and an error at the same line in a later one (helper-107: TE's
grouped dbias with its atomic_add turned into load + add + store: a same-value race in the 1st launch, values that
differ in the 2nd). The error was said only as "findings come again ..." and the summary labelled the line a
warning, while the run counted one finding and exited 1."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def last_wins(v_ptr, out_ptr):
    tl.store(out_ptr, tl.load(v_ptr + tl.program_id(0)))  # STORE

out = torch.zeros(1, device="cuda")
for v in (torch.full((4,), 2.0), torch.arange(4.0)):  # every program stores 2.0: a warning; 0, 1, 2, 3: an error
    last_wins[(4,)](v.to("cuda"), out)
print("out", out.item())
''')


def test_an_error_at_a_line_that_was_a_warning_before_is_told_and_summed_up_as_an_error(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith("# STORE"))
    lines = p.stderr.splitlines()
    warned = [ln for ln in lines if ln.startswith(f"tritondbg: warning: race in last_wins at prog.py:{line}")]
    error = [ln for ln in lines if ln.startswith(f"tritondbg: race in last_wins at prog.py:{line}")]
    assert len(warned) == 1 and "each with the same value on this input" in warned[0], p.stderr[-3000:]
    assert len(error) == 1 and "different values" in error[0], p.stderr[-3000:]
    assert "(an error at its 2nd launch: the same line was a warning before)" in error[0], error[0]
    summary = [ln for ln in lines if f"prog.py:{line} in last_wins" in ln]
    assert len(summary) == 1 and summary[0].startswith("  race: ") and "(in 2 launches)" in summary[0], summary
    assert p.returncode == 1, p.stderr[-2000:]
