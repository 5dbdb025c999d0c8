"""What a launch returns under the interpreter (standin_kernel.py): on a GPU ``kernel[grid](...)`` returns the
CompiledKernel and host code reads it; Triton's interpreter returns None (helper-144: applied-ai's
``k = kern[grid](...); print(k.n_regs)`` died with "'NoneType' object has no attribute 'n_regs'", no word of why)."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def add1(x_ptr, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) + 1, mask=o < n)

x = torch.zeros(100, device="cuda")
k = add1[(2,)](x, 100, B=64)
print("regs", k.n_regs, k.n_spills, k.n_regs, "shared", k.metadata.shared)
k[(2, 1, 1)](x, 100)  # a later call through what the launch returned: launches the kernel again
print("sum", x.sum().item())
try:
    k.asm["ttir"]
except KeyError as exc:
    print("asm:", exc)
''')


def test_a_launch_returns_a_compiled_kernel_look_alike_whose_placeholders_say_so(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "regs 32 0 32 shared 4096" in p.stdout and "sum 200.0" in p.stdout, p.stdout
    assert "nothing was compiled for a GPU (the interpreter ran add1)" in p.stdout, p.stdout
    notes = [ln for ln in p.stderr.splitlines() if "is a placeholder" in ln]
    assert notes == ["tritondbg: note: add1's n_regs is a placeholder (32): nothing is compiled for a GPU under the "
                     "interpreter; `tritondbg ir REPRODUCER --stats` gives the target's registers and spills"], notes
    assert "2 launch(es)" in p.stderr, p.stderr[-2000:]
