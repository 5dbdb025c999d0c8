"""A finding that comes again in another pytest test is printed there once, whole (h88: under
``tritondbg interpret -- python -m pytest``, later failing tests showed only "findings come again ... (its 5th launch
...)", or nothing at all, and pytest shows a failing test's own output only: its reader never saw the finding)."""
from __future__ import annotations

import re
import sys
import textwrap

import pytest

from conftest import run_cli

pytestmark = pytest.mark.interpreter

TESTS = '''
import torch, triton, triton.language as tl, pytest

@triton.jit
def shift(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs + 1), mask=offs < N)  # OOB

@pytest.mark.parametrize("n", [16, 32, 64])
def test_shift(n):
    x = torch.randn(n, device="cuda"); y = torch.empty(n, device="cuda")
    shift[(1,)](x, y, n, BLOCK=n)
    shift[(1,)](x, y, n, BLOCK=n)  # the same finding again in the same test: counted, not printed
    assert n == 16
'''


def test_a_repeat_in_another_test_prints_the_finding_in_that_tests_output(tmp_path, cli_env):
    (tmp_path / "test_k.py").write_text(textwrap.dedent(TESTS))
    out = run_cli(["interpret", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_k.py"],
                  cli_env, cwd=tmp_path)
    text = out.stdout + out.stderr
    assert "2 failed, 1 passed" in text, text[-3000:]
    for n in (32, 64):  # each failing test's own section holds the finding's text
        section = re.split(r"_{5,} test_shift\[\d+\] _{5,}", text.split(f" test_shift[{n}] ", 1)[1])[0]
        assert "tritondbg: out_of_bounds in shift at test_k.py:7 pid (0, 0, 0): load through x_ptr" in section \
            and f"in test test_k.py::test_shift[{n}]]" in section and \
            "(told first in test test_k.py::test_shift[16], at its 1st launch" in section, section
    # once per test: 3 lines of it, not one per launch
    assert sum(ln.startswith("tritondbg: out_of_bounds in shift") for ln in text.splitlines()) <= 3, text[-4000:]
