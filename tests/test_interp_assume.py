"""A false ``tl.assume`` (helper-157: aiter's GEMMs assume ``stride_ck > 0`` and pass 0 when K is not split):
Triton's interpreter stops the launch ("AssertionError: Assume failed"), where the GPU compiles it as a hint and
runs; nothing after it was checked. It is a warning naming the condition and its values, and the run goes on."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl


@triton.jit
def k(x_ptr, y_ptr, stride_k, n, BLOCK: tl.constexpr):
    tl.assume(stride_k > 0)  # ASSUME
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


x = torch.randn(10, device="cuda")
y = torch.empty_like(x)
k[(3,)](x, y, 0, 10, BLOCK=16)
k[(1,)](x, y, 4, 10, BLOCK=16)  # true: nothing
print("ok", torch.allclose(y, 2 * x))
''')
LINE = next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.endswith("# ASSUME"))
SAID = ("tl.assume(stride_k > 0) is false here (stride_k = 0): the GPU compiler takes it as true and optimises with "
        "it, so code that depends on it may be wrong for these values")


def test_a_false_assume_is_a_warning_and_the_run_goes_on(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "ok True" in p.stdout, p.stderr[-3000:]
    told = [ln for ln in p.stderr.splitlines() if "is false here" in ln]
    assert len(told) == 1 and told[0].startswith(f"tritondbg: warning: assume in k at prog.py:{LINE} pid (0, 0, 0)")
    assert SAID in told[0] and "(3 programs)" in told[0], told[0]
    assert "2 launch(es), 0 finding(s), 1 warning(s)" in p.stderr, p.stderr[-3000:]
    # without the sanitizers: one line, and the run goes on
    p = run_cli(["interpret", "--no-sanitize", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    told = [ln for ln in p.stderr.splitlines() if "is false here" in ln]
    assert p.returncode == 0 and "ok True" in p.stdout and len(told) == 1, p.stderr[-3000:]
    assert told[0].startswith(f"tritondbg: warning: prog.py:{LINE} pid (0, 0, 0): {SAID}"), told[0]
