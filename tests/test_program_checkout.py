"""Program mode attaches the tritondbg that started the program: run from a second source checkout (``python -m
tritondbg`` in the repo, as a developer does), the program's script elsewhere, the program gets that checkout's
package, not the one installed in the environment (before: the installed one, or none at all where tritondbg was
not installed: "could not attach: ModuleNotFoundError: No module named 'tritondbg'", seen on the GPU machine)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import run_cli

import tritondbg

pytestmark = [pytest.mark.interpreter]

REPO = Path(tritondbg.__file__).resolve().parent.parent

PROG = '''
import sys
import torch, triton, triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


x = torch.arange(100, dtype=torch.float32)
out = torch.empty_like(x)
double_kernel[(2,)](x, out, 100, BLOCK=64)
print("RIGHT", bool(torch.equal(out, x * 2)))
print("TRITONDBG", sys.modules["tritondbg"].__file__)
'''


def test_the_program_attaches_the_checkout_that_started_it(tmp_path, cli_env):
    checkout = tmp_path / "checkout"
    skip = shutil.ignore_patterns("__pycache__")
    for name in ("tritondbg", "kernels", "scenarios"):
        shutil.copytree(REPO / name, checkout / name, ignore=skip)
    (tmp_path / "elsewhere").mkdir()
    prog = tmp_path / "elsewhere" / "prog.py"
    prog.write_text(PROG)
    p = run_cli(["interpret", "--", "python", str(prog)], cli_env, cwd=checkout, timeout=600)
    assert "could not attach" not in p.stderr, p.stderr[-2000:]
    assert "RIGHT True" in p.stdout, (p.stdout[-2000:], p.stderr[-2000:])
    used = Path(p.stdout.split("TRITONDBG ", 1)[1].split()[0]).resolve()
    assert used == (checkout / "tritondbg" / "__init__.py").resolve(), used
    assert p.returncode == 0, p.stderr[-2000:]
