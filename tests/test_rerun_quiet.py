"""tritondbg's own runs again of a launch (the poison-free rerun of program mode, the filler reruns that test
whether undefined lanes matter) are neither traced nor printed (helper-148: a reproducer's `--watch acc --pid 3`
showed the pid three times, the last over the fillers' made-up values, 104.5 for a sum of -0.47; a puzzle's
print() ran twice, NaN the first time)."""
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
def row_sum(X, Z, N, T, B: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([1], dtype=tl.float32)
    for k in range(0, T, B):
        cols = k + tl.arange(0, B)
        x = tl.load(X + row * T + cols, mask=cols < T)  # no other=: the last block's tail is undefined
        print("row", row, "k", k)
        acc += tl.sum(x)
    tl.store(Z + row + tl.arange(0, 1), acc)

x = torch.randn(2, 40, device="cuda")
z = torch.empty(2, device="cuda")
row_sum[(2,)](x, z, 2, 40, B=32)
print("sums", z.tolist())
''')


def test_a_rerun_is_neither_printed_nor_traced(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["capture", "--out", "cap", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    q = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert "tritondbg: poison in row_sum" in q.stderr, q.stderr[-3000:]
    assert q.stdout.count("row [1] k [32]") == 1 and q.stdout.count("row [0] k [0]") == 1, q.stdout
    (entry,) = json.loads((tmp_path / "cap" / "captures.json").read_text())["captures"]
    r = run_cli(["interpret", "cap/" + entry["reproducer"].split("::")[0], "--watch", "acc", "--pid", "1"],
                cli_env, cwd=tmp_path)
    heads = [ln for ln in r.stdout.splitlines() if ln.startswith("trace row_sum")]
    assert heads == [heads[0]] and "(1st launch) pid (1, 0, 0)" in heads[0], r.stdout[-3000:]
    assert r.stdout.count("row [1] k [32]") == 1, r.stdout[-3000:]
