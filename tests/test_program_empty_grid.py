"""A launch whose grid has no program ((0,), (7, 0): a grid computed by floor division, N // BLOCK): helpers 106
and 107 found it told as "stored nothing into it: a store through the wrong pointer?", and its reproducer's replay
passed with only "NaN matches NaN". The program's read of the output names the empty grid; the replay warns."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

x = torch.randn(33, 7, device="cuda")
out = torch.empty_like(x)
scale_kernel[(33 // 64, 7)](x, out, 33, BLOCK=64)   # floor division: no program
print("max err", (out - 2 * x).abs().max().item())
''')


def test_a_read_after_a_launch_over_an_empty_grid_names_the_grid(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    told = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: uninit in scale_kernel")]
    assert p.returncode == 1 and len(told) == 1, p.stderr[-3000:]
    assert "the launch's grid (0, 7) has no program (a dimension of 0), so nothing ran" in told[0], told[0]
    assert "wrong pointer" not in told[0], told[0]


def test_the_reproducer_of_a_launch_over_an_empty_grid_warns_that_nothing_was_checked(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    run_cli(["capture", "--out", "cap", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    p = run_cli(["check", "cap", "--gates", "sanitize", "--json", "c.json"], cli_env, cwd=tmp_path)
    found = [f for r in json.loads((tmp_path / "c.json").read_text())["results"] for f in r["findings"]]
    empty = [f for f in found if "has no program" in f["message"]]
    assert len(empty) == 1 and empty[0]["severity"] == "warning", found
    assert "the captured launch's grid (0, 7, 1) has no program" in empty[0]["message"], empty[0]
    assert p.returncode == 0, p.stdout[-2000:]


def test_a_launch_over_no_work_is_no_empty_grid_warning(tmp_path, cli_env):
    """helper-110: an MoE expert with no token launches over a grid of 0 programs with empty tensors, by design."""
    (tmp_path / "prog.py").write_text(PROG.replace("torch.randn(33, 7", "torch.randn(0, 7")
                                      .replace("scale_kernel[(33 // 64, 7)](x, out, 33", "scale_kernel[(0, 7)](x, out, 0"))
    run_cli(["capture", "--out", "cap", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    p = run_cli(["check", "cap", "--gates", "sanitize", "--json", "c.json"], cli_env, cwd=tmp_path)
    found = [f for r in json.loads((tmp_path / "c.json").read_text())["results"] for f in r["findings"]]
    assert not [f for f in found if "has no program" in f["message"]], found
