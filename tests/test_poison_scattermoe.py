"""Poison on ScatterMoE's patterns (helper-111).

A loop bound computed from lanes a masked load left undefined (helper-111: ScatterMoE's ``tl.min(E_idxs)`` with
the load's ``other=E`` removed). The sanitizers' poison of an integer load is its type's smallest value; a min over
the block took it, and the expert loop ran ``range(-2**31, ...)``: a hang with no finding, stopped by --timeout
after minutes. A max / min won by an undefined lane is undefined itself, and turning such a value into a Python
int (a loop bound) tells the load's poison finding and stops the program at that line. An expert with no row
(every row of x undefined) is no product with exact zeros."""
from __future__ import annotations

import sys
import textwrap
import time

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def experts(idx_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    e = tl.load(idx_ptr + offs, mask=offs < n{OTHER})  # LOAD
    lo = tl.min(e, axis=0)
    hi = tl.max(e, axis=0)
    acc = tl.zeros((BLOCK,), tl.float32)
    for k in range(lo, hi + 1):  # LOOP
        acc += tl.load(x_ptr + k)
    tl.store(out_ptr + offs, acc, mask=offs < n)

idx = torch.tensor([1, 2, 2, 3, 1], dtype=torch.int32, device="cuda")
x = torch.arange(8.0, device="cuda")
out = torch.empty(5, device="cuda")
experts[(1,)](idx, x, out, 5, BLOCK=8)
print("out", out.tolist())
''')


def _line(text, tag):
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))


def test_a_loop_bound_from_undefined_lanes_is_told_and_stops_the_program(tmp_path, cli_env):
    prog = PROG.replace("{OTHER}", "")
    (tmp_path / "prog.py").write_text(prog)
    t0 = time.monotonic()
    p = run_cli(["interpret", "--timeout", "40", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert time.monotonic() - t0 < 35, "the loop ran on"
    lines = p.stderr.splitlines()
    poison = [ln for ln in lines if ln.startswith(f"tritondbg: poison in experts at prog.py:{_line(prog, 'LOAD')}")]
    assert len(poison) == 1, p.stderr[-3000:]
    assert f"a loop bound (a Python int) at line {_line(prog, 'LOOP')}" in poison[0], poison[0]
    # an integer load's advice is an integer sentinel, not float('-inf')
    assert "give the load other= (an integer no real lane reaches" in poison[0] and "float(" not in poison[0], poison[0]
    stop = [ln for ln in lines if ln.startswith(f"tritondbg: kernel_error in experts at prog.py:{_line(prog, 'LOOP')}")]
    assert len(stop) == 1 and "UndefinedInt" in stop[0] and "stops this program here" in stop[0], p.stderr[-3000:]
    assert p.returncode == 1, p.stderr[-2000:]


def test_the_same_kernel_with_other_runs_its_loop_and_is_clean(tmp_path, cli_env):
    prog = PROG.replace("{OTHER}", ", other=1")  # the lanes past n read 1: the expert range is [1, 3]
    (tmp_path / "prog.py").write_text(prog)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "out [6.0, 6.0, 6.0, 6.0, 6.0]" in p.stdout, p.stderr[-3000:]
    assert "1 launch(es), 0 finding(s)" in p.stderr, p.stderr[-3000:]


EMPTY_EXPERT = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def expert_block(x_ptr, w_ptr, out_ptr, rows, N, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :], mask=(r < rows)[:, None])  # X: rows of this expert
    w = tl.load(w_ptr + r[:, None] * BLOCK + r[None, :], mask=(r < N)[None, :])     # W: N tail undefined
    acc = tl.dot(x, w)
    tl.store(out_ptr + r[:, None] * BLOCK + r[None, :], acc, mask=(r < rows)[:, None] & (r < N)[None, :])

x = torch.randn(16, 16, device="cuda")
w = torch.randn(16, 16, device="cuda")
out = torch.zeros(16, 16, device="cuda")
expert_block[(1,)](x, w, out, 0, 12, BLOCK=16)  # an expert with no token: every row of x undefined, none stored
print("ok")
''')


def test_an_expert_with_no_row_is_no_product_with_exact_zeros(tmp_path, cli_env):
    """helper-111: ScatterMoE at 3 tokens, an expert with no row: every row of x undefined, w's N tail undefined
    too (the store drops it). The w lanes were told "multiplied by exact zeros" (x's all-undefined rows counted as
    zeros); their products land only in rows that are padding themselves, which nothing stores."""
    (tmp_path / "prog.py").write_text(EMPTY_EXPERT)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert "exact zeros" not in p.stderr, p.stderr[-3000:]
    assert p.returncode == 0 and "1 launch(es), 0 finding(s)" in p.stderr, p.stderr[-3000:]


GATHER = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def gather(idx_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs, mask=offs <= n, other=4)  # IDX
    v = tl.load(x_ptr + i * 2 + offs, mask=offs <= n)  # GATHER
    tl.store(out_ptr + offs, v, mask=offs < n)

idx = torch.zeros(5, dtype=torch.int64, device="cuda")
x = torch.randn(8, device="cuda")
out = torch.empty(5, device="cuda")
gather[(1,)](idx, x, out, 5, BLOCK=8)
''')


def test_addresses_from_an_out_of_bounds_load_name_that_load_not_a_poison_finding(tmp_path, cli_env):
    """helper-111 (ScatterMoE's boundary mask made <=): the bias load's addresses came from the lane an index load
    read past its tensor, and its finding said "computed from lanes a masked load left undefined (the poison
    finding names it)", with no poison finding in the run."""
    (tmp_path / "prog.py").write_text(GATHER)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    at = [ln for ln in p.stderr.splitlines()
          if ln.startswith(f"tritondbg: out_of_bounds in gather at prog.py:{_line(GATHER, 'GATHER')}")]
    assert len(at) == 1, p.stderr[-3000:]
    assert (f"computed from values an out-of-bounds load read (line {_line(GATHER, 'IDX')}, its out_of_bounds "
            "finding)") in at[0], at[0]
    assert "the poison finding names it" not in p.stderr, p.stderr[-3000:]


HELPER = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def _block_sum(x_ptr, offs, n):
    return tl.sum(tl.load(x_ptr + offs, mask=offs < n), axis=0)  # LOAD

@triton.jit
def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.store(out_ptr, _block_sum(x_ptr, tl.arange(0, BLOCK), n))

x = torch.randn(5, device="cuda")
out = torch.empty(1, device="cuda")
total[(1,)](x, out, 5, BLOCK=8)
''')


def test_a_finding_in_a_jit_helper_names_the_helper(tmp_path, cli_env):
    """helper-111: ScatterMoE's findings at ops.py:32 said "in _scatter2scatter", while line 32 is in the helper
    _compute_expert_block it calls; the record had the helper's name, the console line did not."""
    (tmp_path / "prog.py").write_text(HELPER)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert f"tritondbg: poison in total at prog.py:{_line(HELPER, 'LOAD')} (in _block_sum) pid (0, 0, 0):" in p.stderr, \
        p.stderr[-3000:]


TIMES_ZERO_BOUND = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def k(c_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    valid = offs < n
    c = tl.load(c_ptr + offs, mask=valid)
    lo = tl.min(c * valid.to(tl.int32), axis=0)  # the undefined lanes times an exact 0: 0 on any GPU
    acc = tl.zeros((BLOCK,), tl.float32)
    for i in range(lo, 3):
        acc += tl.load(x_ptr + i)
    tl.store(out_ptr + offs, acc, mask=valid)

c = torch.tensor([1, 2, 2, 1, 1], dtype=torch.int32, device="cuda")
out = torch.empty(5, device="cuda")
k[(1,)](c, torch.arange(4.0, device="cuda"), out, 5, BLOCK=8)
print("out", out.tolist())
''')


def test_a_loop_bound_from_undefined_lanes_times_zero_runs(tmp_path, cli_env):
    """helper-113: undefined integer lanes multiplied by an exact 0 are 0 on any GPU; the min that took them was
    stopped as a loop bound from undefined lanes. Only the product's warning is told; the loop runs."""
    (tmp_path / "prog.py").write_text(TIMES_ZERO_BOUND)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert "UndefinedInt" not in p.stderr and "out [3.0, 3.0, 3.0, 3.0, 3.0]" in p.stdout, p.stderr[-3000:]
    assert "1 launch(es), 0 finding(s), 1 warning(s)" in p.stderr and p.returncode == 0, p.stderr[-3000:]


OOB_BOUND = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def k(offsets, out_ptr):
    pid = tl.program_id(0)
    start = tl.load(offsets + pid + 1)  # OOB (one row too far: stk's offsets + pid_m + 1)
    end = tl.load(offsets + pid + 2)
    acc = 0.0
    for i in range(start, end):  # BOUND
        acc += 1.0
    tl.store(out_ptr + pid, acc)

offsets = torch.tensor([0, 2, 5], dtype=torch.int32, device="cuda")
out = torch.empty(2, device="cuda")
k[(2,)](offsets, out)
''')


def test_a_loop_bound_read_out_of_bounds_names_that_load_not_a_masked_one(tmp_path, cli_env):
    """helper-115: stk's block-sparse kernel read its offsets one row too far; the loop-bound stop said the value
    came from "lanes a masked load left undefined (the poison finding names the load)": no masked load, no poison
    finding. It names the out-of-bounds load and its finding now."""
    (tmp_path / "prog.py").write_text(OOB_BOUND)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stderr[-3000:]
    oob = next(i for i, ln in enumerate(OOB_BOUND.splitlines(), 1) if "# OOB" in ln) + 1  # (end's load)
    bound = next(i for i, ln in enumerate(OOB_BOUND.splitlines(), 1) if "# BOUND" in ln)
    assert (f"line {bound} turns into a Python int (a loop bound) a value computed from values an out-of-bounds "
            f"load read (line {oob}, its out_of_bounds finding)") in p.stderr, p.stderr[-3000:]
    assert f"out_of_bounds in k at prog.py:{oob}" in p.stderr, p.stderr[-3000:]
    assert "masked load" not in p.stderr.split("UndefinedInt")[1].split("\n")[0], p.stderr[-3000:]
    # as it happened: the out_of_bounds load, then the stop it caused (helper-115: told the other way round), in the
    # streamed lines and in the summary
    streamed = (f"tritondbg: out_of_bounds in k at prog.py:{oob}", f"tritondbg: kernel_error in k at prog.py:{bound}")
    for head, stop in (streamed, (f"  out_of_bounds: prog.py:{oob}", f"  kernel_error: prog.py:{bound}")):
        assert head in p.stderr and stop in p.stderr, p.stderr[-3000:]
        assert p.stderr.index(head) < p.stderr.index(stop), p.stderr[-3000:]
