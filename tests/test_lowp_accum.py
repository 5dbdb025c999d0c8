"""A running sum kept in bf16 / fp16 across a loop is a warning at the add (helpers 144, 148, 149, 150: a bf16
accumulator over a K or head loop gave 0 findings; only the program's own comparison showed the error)."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def row_sum(X, Z, T, B: tl.constexpr, ACC: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([B], dtype=ACC)
    offs = tl.arange(0, B)
    for k in range(0, T, B):  # LOOP
        x = tl.load(X + row * T + k + offs, mask=k + offs < T, other=0.0)
        acc += x  # ADD
        offs += 0  # (an integer add to a loop-carried name: no warning)
    tl.store(Z + row, tl.sum(acc.to(tl.float32)))

x = torch.randn(2, 300, device="cuda")
acc = {"bf16": tl.bfloat16, "fp16": tl.float16, "fp32": tl.float32}[sys.argv[1]]
dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[sys.argv[1]]
row_sum[(2,)](x.to(dtype), torch.empty(2, device="cuda"), 300, B=64, ACC=acc)
''')


def _line(tag):
    return next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))


@pytest.mark.parametrize("which, name", [("bf16", "bfloat16"), ("fp16", "float16"), ("fp32", None)])
def test_a_running_sum_in_a_16_bit_float_is_a_warning_at_the_add(tmp_path, cli_env, which, name):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", which], cli_env, cwd=tmp_path)
    said = [ln for ln in p.stderr.splitlines() if "accumulator in row_sum" in ln]
    assert p.returncode == 0, p.stderr[-2000:]
    if name is None:
        assert not said and "1 launch(es), 0 finding(s)" in p.stderr, p.stderr[-2000:]
        return
    assert len(said) == 1 and said[0].startswith(f"tritondbg: warning: accumulator in row_sum at prog.py:{_line('ADD')} "), \
        p.stderr[-2000:]
    assert (f"acc is a running sum kept in {name} across the loop at line {_line('LOOP')} (this add ran 5 times in "
            f"pid (0, 0, 0))") in said[0] and "Accumulate in tl.float32" in said[0], said[0]


CAUSAL = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def causal_rows(X, Z, B: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([B], dtype=tl.bfloat16)
    offs = tl.arange(0, B)
    for k in range(0, (row + 1) * B, B):  # LOOP: program r runs r + 1 trips, as a causal attention's key loop
        acc += tl.load(X + k + offs)  # ADD
    tl.store(Z + row * B + offs, acc)

causal_rows[(3,)](torch.randn(48, device="cuda").to(torch.bfloat16), torch.empty(48, device="cuda").to(torch.bfloat16),
                  B=16)
''')


def test_the_program_that_runs_the_loop_most_counts_not_the_first(tmp_path, cli_env):
    """helper-158: a causal attention's pid 0 runs its key loop once, so a bf16 accumulator over it (NSA's
    ``acc_o``) was no finding: only the first program's trips were counted."""
    (tmp_path / "prog.py").write_text(CAUSAL)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    said = [ln for ln in p.stderr.splitlines() if "accumulator in causal_rows" in ln]
    add = next(i for i, ln in enumerate(CAUSAL.splitlines(), 1) if ln.rstrip().endswith("# ADD"))
    assert p.returncode == 0 and len(said) == 1 and f"at prog.py:{add} pid (2, 0, 0)" in said[0], p.stderr[-2000:]
    assert "(this add ran 3 times in pid (2, 0, 0))" in said[0], said[0]
