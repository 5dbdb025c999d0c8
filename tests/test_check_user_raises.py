"""Scenario code that raises what a test helper raises (session 35's notes): pytest.skip inside a launch gave a
traceback wall under `interpret` and "did not run: pytest exit status 0" under `check`; a KeyboardInterrupt the
code raised itself was reported as a Ctrl-C (exit 130, "the worker process died")."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from test_check_no_launch import CASES

pytestmark = pytest.mark.interpreter


def _write(tmp_path, body: str) -> str:
    path = tmp_path / "cases.py"
    path.write_text(CASES.replace("def scale(x, s):\n", f"def scale(x, s):\n    {body}\n"))
    return f"{path}::kernel"


def _check(tmp_path, target):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}  # this test may run in one
    out = subprocess.run([sys.executable, "-m", "tritondbg", "check", target, "--gates", "correctness",
                          "--json", str(tmp_path / "c.json")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    (gate,) = json.loads((tmp_path / "c.json").read_text())["extra"]["gates"]
    return out, gate


def test_pytest_skip_in_a_launch_is_a_case_that_did_not_run_with_its_reason(tmp_path):
    target = _write(tmp_path, "import pytest; pytest.skip('needs sm_90')")
    out, gate = _check(tmp_path, target)
    assert out.returncode == 1, out.stdout + out.stderr
    assert gate["status"] in ("FAIL", "error"), gate
    assert "pytest.skip('needs sm_90') called outside a pytest test" in gate["reason"], gate["reason"]
    assert "cases.py:" in gate["reason"], gate["reason"]

    run = subprocess.run([sys.executable, "-m", "tritondbg", "interpret", target], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr, run.stderr
    assert "pytest.skip('needs sm_90') called outside a pytest test: the case did not run" in run.stdout, run.stdout


def test_a_keyboardinterrupt_the_code_raises_is_an_error_not_a_ctrl_c(tmp_path):
    out, gate = _check(tmp_path, _write(tmp_path, "raise KeyboardInterrupt"))
    assert out.returncode == 1, out.stdout + out.stderr  # 130 before: an interrupt
    assert gate["status"] == "error", gate
    assert "raised KeyboardInterrupt at" in gate["reason"] and "cases.py:" in gate["reason"], gate["reason"]
