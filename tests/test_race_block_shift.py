"""A store race between programs whose blocks at one line are the same block moved by less than its width (a store
missing its mask on a row's end writes the next row's first elements): the race names the blocks and the step and
says to mask the store, where it used to advise tl.atomic_*, which would not fix it (session 63). A race of programs
that all write one element keeps the atomics advice."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def rows_1d(X, Y, N, stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0)
    tl.store(Y + row * stride + cols, x * 2)  # ROWS

@triton.jit
def tiles_2d(X, Y, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    m = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(X + rows[:, None] * stride + cols[None, :], mask=m, other=0.0)
    tl.store(Y + rows[:, None] * stride + cols[None, :], x * 3, mask=rows[:, None] < M)  # TILES

@triton.jit
def partial_sums(X, OUT, B: tl.constexpr):
    x = tl.load(X + tl.program_id(0) * B + tl.arange(0, B))
    tl.store(OUT, tl.sum(x))  # SUM

which = sys.argv[1]
x = torch.randn(16, 50, device="cuda")
y = torch.empty_like(x)
if which == "rows":
    rows_1d[(16,)](x, y, 50, x.stride(0), BLOCK_N=64)
elif which == "tiles":
    tiles_2d[(4,)](x, y, 16, 50, x.stride(0), BM=4, BN=64)
else:
    out = torch.zeros(1, device="cuda")
    partial_sums[(4,)](x, out, B=32)
''')


def _race(p, tag):
    line = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))
    said = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: race in ")
            and f"at prog.py:{line} " in ln and "plain stores from" in ln]
    assert len(said) == 1, p.stderr[-3000:]
    return said[0]


@pytest.mark.parametrize("which, tag, width, step, first", [
    ("rows", "ROWS", 64, 50, "Y[0, 0]..Y[1, 13]"),
    ("tiles", "TILES", 214, 200, "Y[0, 0]..Y[4, 13]"),  # 4 rows of 64 lanes, 50 apart: 3 * 50 + 64
])
def test_overlapping_blocks_at_one_line_say_mask_the_store_not_atomics(tmp_path, cli_env, which, tag, width, step,
                                                                         first):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", which], cli_env, cwd=tmp_path)
    said = _race(p, tag)
    assert f"each program writes a block of {width} elements (pid (0, 0, 0): {first})" in said, said
    assert f"the same block moved by {step} elements: the two share 14 element(s)" in said, said
    assert "Mask the store to the program's own elements" in said and "atomics would not fix it" in said, said
    assert "use tl.atomic_*" not in said, said
    assert p.returncode == 1, p.stderr[-2000:]


def test_programs_writing_one_element_keep_the_atomics_advice(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", "sum"], cli_env, cwd=tmp_path)
    said = _race(p, "SUM")
    assert "use tl.atomic_*" in said and "block" not in said, said
    assert p.returncode == 1, p.stderr[-2000:]


SAME = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def add2d(X, Y, O, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(0)  # the wrong axis: program_id(1) was meant
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    off = rm[:, None] * N + rn[None, :]
    tl.store(O + off, tl.load(X + off, mask=m) + tl.load(Y + off, mask=m), mask=m)  # AXIS

@triton.jit
def splitk(A, C, K, BK: tl.constexpr):
    k = tl.program_id(1)
    r = tl.arange(0, 4)
    part = tl.sum(tl.load(A + r[:, None] * K + k * BK + tl.arange(0, BK)[None, :]), axis=1)
    tl.store(C + r, part)  # SPLITK

x, y, o = (torch.randn(8, 8, device="cuda") for _ in range(3))
if sys.argv[1] == "axis":
    add2d[(2, 2)](x, y, o, 8, 8, BM=4, BN=4)
else:
    splitk[(1, 2)](x[:4], torch.zeros(4, device="cuda"), 8, BK=4)
''')


def test_programs_writing_the_very_same_block_are_told_which_axis_their_offsets_ignore(tmp_path, cli_env):
    """helper-148: a pid read from the wrong axis was a "done flag" warning; split-K's partial tiles stored plainly
    keep both fixes in view (atomics for parts of one result, the axis for blocks of their own)."""
    (tmp_path / "prog.py").write_text(SAME)
    for which, tag, warning in (("axis", "AXIS", True), ("splitk", "SPLITK", False)):
        p = run_cli(["interpret", "--", sys.executable, "prog.py", which], cli_env, cwd=tmp_path)
        line = next(i for i, ln in enumerate(SAME.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))
        said = [ln for ln in p.stderr.splitlines() if f"race in " in ln and f"at prog.py:{line} " in ln]
        assert len(said) == 1 and said[0].startswith("tritondbg: warning: " if warning else "tritondbg: race"), \
            p.stderr[-3000:]
        assert "both write the very same block of" in said[0], said[0]
        assert "its offsets do not depend on program_id(1), along which these programs differ" in said[0], said[0]
        if warning:
            assert "a program id read from the wrong axis" in said[0] and p.returncode == 0, said[0]
        else:
            assert "add the parts with tl.atomic_add or a second pass" in said[0] and p.returncode == 1, said[0]


WRAP = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def gemm_out(A, C, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    a = tl.load(A + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
    tl.store(C + rm[:, None] * N + rn[None, :], a * 2, mask=(rm[:, None] < M) & (rn[None, :] <= N))  # WRAP

a = torch.randn(5, 200, device="cuda")
c = torch.empty_like(a)
gemm_out[(1, 7)](a, c, 5, 200, BM=8, BN=32)
''')


def test_a_tile_whose_column_mask_is_off_by_one_is_told_it_runs_past_the_row_not_to_use_atomics(tmp_path, cli_env):
    """helper-154: DeepSeek-V3's fp8_gemm with its store's column mask `<= N`: the last column tile (8 columns of a
    32-wide block, not the same block moved: no block shift) wrote each row's column N, the next row's first element,
    which the first tile's program writes too; the race said "use tl.atomic_*". It names the row's last element and
    the next row's first, and says to mask the store."""
    (tmp_path / "prog.py").write_text(WRAP)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(WRAP.splitlines(), 1) if ln.rstrip().endswith("# WRAP"))
    said = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: race in ") and f"at prog.py:{line} " in ln]
    assert len(said) == 1, p.stderr[-3000:]
    assert "pid (0, 6, 0) wrote C[0, 199], a row's last element, and then C[1, 0], the next row's first, which pid " \
           "(0, 0, 0) writes too" in said[0], said[0]
    assert "mask it (cols < N), not atomics" in said[0] and "use tl.atomic_*" not in said[0], said[0]
    assert p.returncode == 1, p.stderr[-2000:]
