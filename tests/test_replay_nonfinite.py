"""A reproducer's replay finds the NaN a kernel made (helper report, session 35): its reference is the captured
output, which held the same NaN, so the nan_inf sanitizer (an output NaN/Inf "where the reference is finite")
passed it; program mode points users to capture-and-replay for exactly this."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "program_data" / "nonfinite.py"
TRITONDBG = [sys.executable, "-m", "tritondbg"]


def _cli(args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run(TRITONDBG + list(args), capture_output=True, text=True, env=env, timeout=300, cwd=cwd)


def _capture_and_replay(tmp_path, mode):
    folder = tmp_path / "cap"
    out = _cli(["capture", "--out", str(folder), "--", "python", str(PROGRAM), mode], tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == {"nan": "nan", "inf": "inf"}.get(mode, "ok"), out.stdout
    (repro,) = [c["reproducer"].split("::")[0] for c in json.loads((folder / "captures.json").read_text())["captures"]]
    rep = _cli(["interpret", str(folder / repro), "--json"], tmp_path)
    return rep, json.loads(rep.stdout)


@pytest.mark.interpreter
def test_the_replay_of_a_launch_that_made_a_nan_names_the_op(tmp_path):
    rep, doc = _capture_and_replay(tmp_path, "nan")
    assert rep.returncode == 1, rep.stderr[-3000:]
    (f,) = [f for r in doc["results"] for f in r["findings"]]
    assert f["kind"] == "nan_inf" and f["severity"] == "error" and f["file"].endswith("nonfinite.py"), f
    assert "1.0 / tl.sqrt" in f["source"] and "first NaN" in f["message"]
    assert "the captured output held 120 of them too: the program got them" in f["message"], f["message"]
    assert f["line"] == 15 and doc["passed"] is False


@pytest.mark.interpreter
def test_a_meant_inf_in_a_replay_is_a_warning_not_a_failure(tmp_path):
    """log(0) = -inf may be what the kernel means (a log-probability of a masked token): said, not failed."""
    rep, doc = _capture_and_replay(tmp_path, "inf")
    assert rep.returncode == 0, rep.stdout[-3000:] + rep.stderr[-2000:]
    (f,) = [f for r in doc["results"] for f in r["findings"]]
    assert f["kind"] == "nan_inf" and f["severity"] == "warning" and "first Inf" in f["message"], f


@pytest.mark.interpreter
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_nan_only_in_masked_off_lanes_beside_memory_the_launch_leaves_unwritten_is_no_finding(tmp_path, dtype):
    """helper-123 (sglang's grouped decode): splits past the batch's length write nothing, so the captured output
    holds the uninitialized mark there, and padded head rows make -inf - -inf = NaN in lanes the store masks off.
    The replay failed with nan_inf at that subtract, counting the mark as the NaN the op made; the launch's
    output is right and the unwritten band is the uninit warning's to tell."""
    rep, doc = _capture_and_replay(tmp_path, f"skipped:{dtype}")
    assert rep.returncode == 0, rep.stdout[-3000:] + rep.stderr[-2000:]
    kinds = [(f["kind"], f["severity"]) for r in doc["results"] for f in r["findings"]]
    assert ("nan_inf", "error") not in kinds and ("uninit", "warning") in kinds, kinds
