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


def test_determinism_does_not_need_the_reference(tmp_path):
    """A scenario whose reference raises: correctness fails on it, but determinism (two launches compared with
    each other) failed with the reference's exception too."""
    from tritondbg import loader
    from tritondbg.check.gates import GateContext, run_gate

    path = tmp_path / "cases.py"
    path.write_text(CASES.replace("ref = lambda x, s: x.float() * s", "def ref(x, s):\n    raise RuntimeError('no')"))
    scenario = loader.load(f"{path}::kernel")
    ctx = GateContext(device="cpu", target=f"{path}::kernel")
    assert run_gate("determinism", scenario, ctx).status == "pass"
    bad = run_gate("correctness", scenario, ctx)
    assert bad.status != "pass" and "RuntimeError: no" in bad.reason, bad.reason


NAN_THEN_SUM = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def logen_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), tl.float32)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=0.0)
    acc += tl.sqrt(x) * tl.log(x * x)  # NAN
    tl.store(out_ptr + row, tl.sum(tl.where(offs < N + 3, acc, 0.0), axis=0))  # SUM


def launch(x):
    out = torch.empty(x.shape[0])
    logen_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=64)
    return out


s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.randn(3, 50, generator=generator)), launch,
             lambda x: (x.abs().sqrt() * torch.log(x * x)).sum(1), [Case("tiny", dtypes=("float32",))],
             kernels=[logen_kernel])
'''


def test_findings_are_listed_in_the_order_they_happened(tmp_path):
    """The first NaN (sqrt of a negative) came after the reduction it spoils in the list, and the sanitize gate's
    reason named the reduction: the finding made first comes first."""
    from tritondbg import loader
    from tritondbg.check.gates import GateContext, run_gate

    (tmp_path / "cases.py").write_text(NAN_THEN_SUM)
    line = lambda tag: next(i for i, ln in enumerate(NAN_THEN_SUM.splitlines(), 1) if ln.rstrip().endswith(tag))  # noqa: E731
    out = run_gate("sanitize", loader.load(f"{tmp_path / 'cases.py'}::s"), GateContext(device="cpu"))
    assert out.status == "FAIL", out.reason
    kinds = [(f["kind"], f["line"]) for f in out.details["findings"]]
    assert kinds[0] == ("nan_inf", line("# NAN")), kinds
    assert ("masked_reduction", line("# SUM")) in kinds, kinds
    assert out.reason.startswith("nan_inf at "), out.reason


def test_a_scenario_with_nothing_to_compare_runs_the_launch_and_is_no_pass(tmp_path):
    """A reproducer of a launch that did not finish in the program: its launch runs (to show a hang or a fault
    again), the reference is not asked, and a launch that ends is still an error naming why nothing compared."""
    import dataclasses

    from tritondbg import loader, runner

    path = tmp_path / "cases.py"
    path.write_text(CASES.replace("ref = lambda x, s: x.float() * s", "def ref(x, s):\n    raise RuntimeError('no')"))
    scenario = dataclasses.replace(loader.load(f"{path}::kernel"), nothing_to_compare="it was cut short")
    r = runner.run_case(scenario, scenario.cases[0], "float32", device="cpu", seed=0)
    assert r.status == "error" and r.message.startswith("nothing to compare: it was cut short"), r.message
    assert r.wall_s > 0  # the launch ran
    # a reproducer's launch returns {} (no outputs were captured): it said "launch `load_scenario.<locals>.launch`
    # (.../tritondbg/program/replay.py:237) returned an empty dict" (helper-66)
    launch = scenario.launch

    def empty(**kw):
        launch(**kw)
        return {}
    scenario = dataclasses.replace(scenario, launch=empty)
    r = runner.run_case(scenario, scenario.cases[0], "float32", device="cpu", seed=0)
    assert r.status == "error" and r.message.startswith("nothing to compare: it was cut short"), r.message


def test_a_long_gate_is_named_while_it_runs(tmp_path):
    """helper-139 waited 327 s on one all-configs gate (98 configs) with no line between two items' lines: each
    minute (here each second) one line names the items still running, with their times."""
    target = _write(tmp_path, "import time; time.sleep(3.5)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["TRITONDBG_CHECK_BEAT"] = "1"
    out = subprocess.run([sys.executable, "-m", "tritondbg", "check", target, "--gates", "correctness"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    beats = [ln for ln in out.stderr.splitlines() if ln.startswith("  still running: cases::kernel::correctness (")]
    assert len(beats) >= 2, out.stderr
    done = [i for i, ln in enumerate(out.stderr.splitlines()) if "cases::kernel::correctness: passed" in ln]
    assert done and out.stderr.splitlines().index(beats[-1]) < done[0], out.stderr
