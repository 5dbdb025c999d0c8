"""A store's (or an atomic's) lanes out of bounds that land in another argument are skipped, as the finding says, in
every path of program mode (h88: where a load of the launch also went out of bounds, program mode ran the launch
again without the checks' poison and that run wrote them into the other argument: the program's ``x`` got 7s
while the message said "tritondbg skipped these lanes")."""
from __future__ import annotations

import sys
import textwrap

import pytest

from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = '''
import torch, triton, triton.language as tl

@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr, LOAD: tl.constexpr, ATOMIC: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs <= n + 3  # 4 lanes past the end of out, into x
    if LOAD:
        v = tl.load(out_ptr + offs, mask=mask)  # no other=: poison, so program mode runs the launch again
    else:
        v = tl.zeros([BLOCK], dtype=tl.float32)
    if ATOMIC:
        tl.atomic_add(out_ptr + offs, v + 7.0, mask=mask)
    else:
        tl.store(out_ptr + offs, v + 7.0, mask=mask)

for load in (True, False):
    for atomic in (False, True):
        buf = torch.zeros(64, device="cuda")
        out, x = buf[:16], buf[16:]
        k[(1,)](x, out, 16, BLOCK=32, LOAD=load, ATOMIC=atomic)
        print("case", load, atomic, "x", x[:6].tolist(), "out", out[:2].tolist())
'''


def test_store_lanes_out_of_bounds_into_another_argument_stay_skipped_in_the_run_without_poison(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROG))
    out = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    cases = [ln for ln in out.stdout.splitlines() if ln.startswith("case")]
    assert len(cases) == 4, out.stderr[-3000:]
    for ln in cases:  # x untouched; out got its 7s (the load's undefined lanes read 0 in the program's run)
        assert "x [0.0, 0.0, 0.0, 0.0, 0.0, 0.0] out [7.0, 7.0]" in ln, out.stdout
    assert "tritondbg skipped these lanes" in out.stderr, out.stderr[-3000:]
