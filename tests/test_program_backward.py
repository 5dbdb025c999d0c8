"""Program mode serves "cuda" tensors asked for inside a custom autograd Function's backward (helper-63)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "program_data" / "backward_cuda.py"


@pytest.mark.interpreter
@pytest.mark.parametrize("command", ["interpret", "capture"])
def test_a_backward_that_allocates_on_cuda_runs_on_the_cpu_stand_in(command, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    extra = ["--out", str(tmp_path / "cap")] if command == "capture" else []
    out = subprocess.run([sys.executable, "-m", "tritondbg", command, *extra, "--", "python", str(PROGRAM)],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "OK", out.stdout + out.stderr[-3000:]
    assert "2 launch(es)" in out.stderr, out.stderr[-2000:]

