"""Loading a scenario file under `check` (session 35's notes): an import that hung in a gate worker hung the whole
check (--timeout covered only the gates), one that hung in check's own process too, and a worker killed by a signal
while importing said only "pytest exit status 5 (pytest collected nothing)"."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from test_check_no_launch import CASES

pytestmark = pytest.mark.interpreter


def _check(tmp_path, *extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}  # this test may run in one
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "tritondbg", "check", f"{tmp_path / 'cases.py'}::kernel",
                          "--gates", "correctness", "--json", str(tmp_path / "c.json"), *extra],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    return out, time.monotonic() - t0


def _gate(tmp_path) -> dict:
    (gate,) = json.loads((tmp_path / "c.json").read_text())["extra"]["gates"]
    return gate


def test_an_import_that_hangs_in_a_worker_ends_at_the_timeout_and_names_the_line(tmp_path):
    (tmp_path / "cases.py").write_text("import os, time\n" + CASES + "\nif os.environ.get('PYTEST_XDIST_WORKER'):\n"
                                       "    time.sleep(3600)  # a lock only the worker waits on\n")
    out, took = _check(tmp_path, "--timeout", "5")
    assert out.returncode == 1, out.stdout + out.stderr
    assert took < 120, took
    gate = _gate(tmp_path)
    assert gate["status"] == "error", gate
    assert "did not finish in 5 s" in gate["reason"] and "cases.py:" in gate["reason"], gate["reason"]


def test_an_import_that_hangs_in_checks_own_process_is_one_line(tmp_path):
    (tmp_path / "cases.py").write_text("import time\n" + CASES + "\ntime.sleep(3600)\n")
    out, took = _check(tmp_path, "--timeout", "3")
    assert out.returncode == 2, out.stdout + out.stderr
    assert took < 60, took
    assert "did not finish in 3 s" in out.stderr and "cases.py:" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr, out.stderr


def test_a_worker_killed_while_importing_names_the_signal_and_line(tmp_path):
    (tmp_path / "cases.py").write_text("import os\n" + CASES + "\nif os.environ.get('PYTEST_XDIST_WORKER'):\n"
                                       "    os.abort()\n")
    out, _ = _check(tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    reason = _gate(tmp_path)["reason"]
    assert "SIGABRT" in reason and "while loading" in reason and "cases.py" in reason, reason
    assert "collected nothing" not in reason, reason
