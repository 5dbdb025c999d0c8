"""A reproducer replays the kernel of the file it captured, not another module of the same name (helper-88: two
capture folders of kernels in same-named modules, replayed in one `check` worker, passed the buggy one)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

KERNEL = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs {cmp} n)
''')
PROG = ("import torch\nfrom kern import scale_kernel\nx = torch.randn(100, device='cuda')\ny = torch.empty_like(x)\n"
        "scale_kernel[(2,)](x, y, 100, BLOCK=64)\n")


@pytest.mark.interpreter
def test_a_reproducer_runs_its_captured_file_when_a_same_named_module_imports_first(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def cli(*args, cwd=tmp_path, **extra):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True,
                              env={**env, **extra}, timeout=300, cwd=cwd)

    for name, cmp in (("fixed", "<"), ("buggy", "<=")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "kern.py").write_text(KERNEL.format(cmp=cmp))
        (tmp_path / name / "prog.py").write_text(PROG)
        cap = cli("capture", "--out", str(tmp_path / f"cap_{name}"), "--", sys.executable, "prog.py",
                  cwd=tmp_path / name)
        assert cap.returncode == 0, cap.stderr[-2000:]
    fixed, buggy = (str(tmp_path / f"cap_{n}" / "scale_kernel_0.py") for n in ("fixed", "buggy"))
    # the other copy first on the path: the captured file runs, and the run says which module name misled it
    rep = cli("interpret", buggy, PYTHONPATH=str(tmp_path / "fixed"))
    assert rep.returncode == 1 and "out_of_bounds" in rep.stdout + rep.stderr, (rep.stdout + rep.stderr)[-2000:]
    assert f"module kern imports from {tmp_path / 'fixed' / 'kern.py'}; replaying the captured file" in rep.stderr
    # both in one worker, the fixed one loaded first: the buggy one still fails (it passed: "4 passed")
    chk = cli("check", "-n", "1", "--gates", "correctness,sanitize", fixed, buggy)
    assert chk.returncode == 1 and "2 passed, 2 failed" in chk.stdout + chk.stderr, (chk.stdout + chk.stderr)[-3000:]
