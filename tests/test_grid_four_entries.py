"""A grid of more than 3 entries (h88: FlagGems' cumsum launches ``kernel[(M, num_ctas, 1, 1)]``): compiled Triton
launches grid[0..2] and ignores the rest; the interpreter asserted "grid must have at most 3 dimensions", which
tritondbg reported as a kernel_error and the program died of."""
from __future__ import annotations

import sys
import textwrap

import pytest

from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = '''
import torch, triton, triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

@triton.jit
def count(c_ptr):
    tl.atomic_add(c_ptr, 1)

x = torch.randn(100, device="cuda")
y = torch.empty_like(x)
k[(1, triton.cdiv(100, 32), 1, 1)](x, y, 100, BLOCK=32)
torch.testing.assert_close(y, x * 2)
y = torch.empty_like(x)
k[lambda meta: [1, triton.cdiv(100, meta["BLOCK"]), 1, 1]](x, y, 100, BLOCK=32)
torch.testing.assert_close(y, x * 2)
c = torch.zeros(1, dtype=torch.int32, device="cuda")
count[(2, 3, 1, 5)](c)  # the GPU runs 2 * 3 programs: the 5 is ignored
count[(2, 3, 1, 5)](c)
print("programs", int(c.item()))
'''


def test_a_grid_of_four_entries_runs_its_first_three_as_compiled_triton_does(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROG))
    out = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert out.returncode == 0 and "programs 12" in out.stdout, out.stderr[-3000:]
    assert "kernel_error" not in out.stderr and "0 finding(s)" in out.stderr, out.stderr[-3000:]
    # an ignored entry other than 1 is said, once per kernel
    notes = [ln for ln in out.stderr.splitlines() if "ignores the rest" in ln]
    assert len(notes) == 1 and "count was launched with the grid (2, 3, 1, 5)" in notes[0] and \
        "so 5 is ignored" in notes[0], out.stderr[-3000:]
