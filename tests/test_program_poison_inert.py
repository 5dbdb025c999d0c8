"""Program mode: undefined lanes that enter only a reduction whose result reaches nothing the launch wrote
(program/filler_rerun.py). helper-104: OpenAI's triton_kernels computes an exclusive prefix sum block by block, and
the last block's undefined tail enters a running sum nothing reads after the loop: a poison error on every topk,
exit 1, on correct code. Run again with another value in those lanes, the launch writes the same bytes: a warning.
Where the value reaches a store (a sum stored, or laundered by tl.maximum / tl.where first) it stays an error."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl


@triton.jit
def excl_cumsum(X, n, BLOCK: tl.constexpr):
    running = 0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(X + offs, mask=offs < n)  # LOAD excl_cumsum
        out = tl.cumsum(x, 0) - x + running
        running += tl.sum(x, 0)
        tl.store(X + offs, out, mask=offs < n)


@triton.jit
def stored_sum(X, S, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n)  # LOAD stored_sum
    if MODE == 1:
        x = tl.maximum(x, 0)
    if MODE == 2:
        x = tl.where(x > 0, x, 0)
    tl.store(S, tl.sum(x, 0))


which, dtype = sys.argv[1], getattr(torch, sys.argv[2])
if which == "cumsum":
    for n in (13, 30):  # 3 and 2 undefined lanes: an even count of an integer poison must not cancel out
        x = torch.randint(0, 5, (n,), dtype=dtype, device="cuda")
        ref = torch.cumsum(x, 0) - x
        excl_cumsum[(1,)](x, n, BLOCK=16)
        assert torch.equal(x, ref.to(dtype)), (x, ref)
else:
    x = torch.randint(0, 5, (100,), device="cuda").to(dtype)
    s = torch.empty(1, dtype=dtype, device="cuda")
    stored_sum[(1,)](x, s, 100, MODE={"sum": 0, "maximum": 1, "where": 2}[which], BLOCK=128)
print("ok")
''')


def _line(tag: str) -> int:
    return next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith(f"# {tag}"))


def _run(tmp_path, cli_env, *args):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", *args], cli_env, cwd=tmp_path)
    assert "ok" in p.stdout, p.stdout + p.stderr[-3000:]
    return p


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_undefined_lanes_in_a_sum_nothing_reads_are_a_warning(tmp_path, cli_env, dtype):
    p = _run(tmp_path, cli_env, "cumsum", dtype)
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: poison in excl_cumsum")]
    assert len(warn) == 1 and f"prog.py:{_line('LOAD excl_cumsum')}" in warn[0], p.stderr[-3000:]
    assert "the launch wrote the same bytes, so nothing it wrote depends on them here" in warn[0], warn[0]
    assert p.returncode == 0 and "0 finding(s)" in p.stderr, p.stderr[-3000:]


@pytest.mark.parametrize("which", ["sum", "maximum", "where"])
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_undefined_lanes_whose_sum_is_stored_stay_an_error(tmp_path, cli_env, which, dtype):
    # (an int32 sum of 28 poison lanes: the poison's own value must not decide; tl.maximum / tl.where launder the
    # NaN poison into a value matching the plain run's, and the other filler changes the stored sum)
    p = _run(tmp_path, cli_env, which, dtype)
    err = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: poison in stored_sum")]
    assert len(err) == 1 and f"prog.py:{_line('LOAD stored_sum')}" in err[0], p.stderr[-3000:]
    assert p.returncode == 1, p.stderr[-2000:]
