"""A reproducer's replay judges memory nothing wrote as its program did (helper-64)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

INT_BAND = REPO / "tests" / "program_data" / "int_band.py"


@pytest.mark.interpreter
def test_an_int_band_the_program_left_is_a_warning_in_its_replay_too(tmp_path):
    """helper-64 (TransformerEngine's row_id_map): an int32 output whose unwritten band the captured output holds
    too failed the replay as "never written", located at click/core.py; program mode said a warning."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)

    out = cli("interpret", "--", "python", str(INT_BAND))
    assert out.returncode == 0 and "warning: uninit" in out.stderr, out.stderr[-2000:]
    cap = cli("capture", "--out", str(tmp_path / "cap"), "--", "python", str(INT_BAND))
    assert cap.returncode == 0, cap.stderr[-2000:]
    rep = cli("interpret", str(tmp_path / "cap" / "fill_ids_0.py"), "--json")
    doc = json.loads(rep.stdout)
    found = [(f["kind"], f["severity"], f["file"], f["line"]) for r in doc["results"] for f in r["findings"]]
    assert rep.returncode == 0 and doc["passed"], found
    assert all(sev == "warning" and "click" not in file for _, sev, file, _ in found), found
    # at the store that wrote the rest, as program mode places it (helper-65/67: the replay said the def line), once
    store = next(i for i, ln in enumerate(INT_BAND.read_text().splitlines(), 1) if "tl.store" in ln)
    assert [line for *_, line in found] == [store], found


UNINIT_C = REPO / "tests" / "program_data" / "uninit_c.py"


@pytest.mark.interpreter
def test_a_capture_whose_output_is_the_uninit_mark_says_the_comparison_checks_nothing(tmp_path):
    """helper-66: FlashInfer's gemm read an uninitialized C; the captured output was all NaN marks and the replay
    matched it as NaN matches NaN, so the correctness gate passed."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)

    cap = cli("capture", "--out", str(tmp_path / "cap"), "--", "python", str(UNINIT_C))
    assert cap.returncode == 0 and "nan 10" in cap.stdout, cap.stdout + cap.stderr[-2000:]
    rep = cli("interpret", str(tmp_path / "cap" / "axpby_0.py"), "--no-sanitize", "--json")
    found = [f for r in json.loads(rep.stdout)["results"] for f in r["findings"]]
    marked = [f for f in found if "holds tritondbg's uninitialized-memory mark" in f.get("message", "")]
    assert marked and "10 of 10 element(s)" in marked[0]["message"], found
