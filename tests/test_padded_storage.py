"""A view of a storage padded to a whole block (helper-62: triton_kernels allocates
``torch.zeros(cdiv(n, 128) * 128)[:n]`` and its kernels address whole blocks): program mode said ``outside_view``
error (a missing mask) on a right program, and the capture kept only the view's bytes, so the reproducer's replay
called the same accesses out of bounds (an illegal-address fault). Now a warning that says the storage is padded,
and the replay meets the storage the program had. A slice elsewhere in a larger tensor stays an error."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "program_data" / "padded_storage.py"
TRITONDBG = [sys.executable, "-m", "tritondbg"]
pytestmark = pytest.mark.interpreter


def _cli(args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run(TRITONDBG + list(args), capture_output=True, text=True, env=env, timeout=300, cwd=cwd)


def _findings(doc):
    return [f for r in doc["results"] for f in r["findings"]]


def test_a_padded_buffer_used_in_whole_blocks_is_a_warning_in_the_program_and_its_replay(tmp_path):
    out = _cli(["interpret", "--", "python", str(PROGRAM), "padded"], tmp_path)
    assert out.returncode == 0 and "OK" in out.stdout, out.stdout[-2000:] + out.stderr[-3000:]
    assert "outside_view" in out.stderr and "rounded up to a whole block" in out.stderr, out.stderr[-3000:]
    folder = tmp_path / "cap"
    cap = _cli(["capture", "--out", str(folder), "--", "python", str(PROGRAM), "padded"], tmp_path)
    assert cap.returncode == 0, cap.stderr[-3000:]
    (repro,) = [c["reproducer"].split("::")[0] for c in json.loads((folder / "captures.json").read_text())["captures"]]
    rep = _cli(["interpret", str(folder / repro), "--json"], tmp_path)
    doc = json.loads(rep.stdout)
    kinds = [(f["kind"], f["severity"]) for f in _findings(doc)]
    assert rep.returncode == 0 and doc["passed"] and kinds == [("outside_view", "warning")], (kinds, rep.stderr[-2000:])


def test_a_slice_inside_a_larger_tensor_written_past_its_end_stays_an_error_in_the_replay(tmp_path):
    out = _cli(["interpret", "--", "python", str(PROGRAM), "slice"], tmp_path)
    assert out.returncode == 1 and "outside_view" in out.stderr and "a slice of a larger tensor" in out.stderr, \
        out.stderr[-3000:]
    folder = tmp_path / "cap"
    cap = _cli(["capture", "--out", str(folder), "--", "python", str(PROGRAM), "slice"], tmp_path)
    assert cap.returncode == 0, cap.stderr[-3000:]
    (repro,) = [c["reproducer"].split("::")[0] for c in json.loads((folder / "captures.json").read_text())["captures"]]
    rep = _cli(["interpret", str(folder / repro), "--json"], tmp_path)
    kinds = [(f["kind"], f["severity"]) for f in _findings(json.loads(rep.stdout))]
    # the replay meets the neighbours the program wrote, as the program did: not an out-of-bounds fault
    assert rep.returncode == 1 and kinds == [("outside_view", "error")], (kinds, rep.stderr[-2000:])
