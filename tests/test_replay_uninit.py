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
    # the program reads the columns the launch wrote (out[:, :5].sum()), around the band: left by design, no
    # warning at its end (session 57: an integer read around a band counts as one, helper-129); none in the replay's
    # judgement below either way
    assert out.returncode == 0 and "uninit" not in out.stderr and "OK" in out.stdout, out.stderr[-2000:]
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


@pytest.mark.interpreter
def test_an_int_output_holding_the_mark_is_told_by_the_int_mark(tmp_path):
    """helper-107: an int32 output holding tritondbg's mark (0x5A5A5A5A) was told as holding "the mark (NaN)" that
    "matches only as NaN matches NaN"."""
    import json

    (tmp_path / "prog.py").write_text(
        "import torch, triton, triton.language as tl\n\n"
        "@triton.jit\n"
        "def copy_ids(src, dst, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)\n\n"
        "src = torch.empty(10, dtype=torch.int32, device='cuda')\n"
        "dst = torch.empty(10, dtype=torch.int32, device='cuda')\n"
        "copy_ids[(1,)](src, dst, 10, BLOCK=16)\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)

    assert cli("capture", "--out", "cap", "--", sys.executable, "prog.py").returncode == 0
    rep = cli("interpret", str(tmp_path / "cap" / "copy_ids_0.py"), "--no-sanitize", "--json")
    marked = [f["message"] for r in json.loads(rep.stdout)["results"] for f in r["findings"]
              if f["tensor"] == "dst" and "uninitialized-memory mark" in f["message"]]
    assert len(marked) == 1 and "mark (0x5A5A5A5A) in 10 of 10" in marked[0], marked
    assert "NaN" not in marked[0], marked[0]


HALF = '''
import torch, triton, triton.language as tl

@triton.jit
def half(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n // 2)  # half the rows

x = torch.randn(64, device="cuda")
y = torch.empty_like(x)
half[(1,)](x, y, 64, BLOCK=64)
print("max", y.max().item())
'''


@pytest.mark.interpreter
def test_a_band_the_program_read_is_an_error_in_its_reproducer_too(tmp_path):
    """helper-144 (applied-ai's MoE with pid_m = pid % grid_n): program mode told the output left unwritten and read
    as an error, exit 1; the reproducer --capture-on-finding saved passed with warnings, exit 0, and `check` passed
    it: a CI gate over reproducers let it through. The reproducer keeps the program's read; its replay fails."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)

    (tmp_path / "prog.py").write_text(HALF)
    out = cli("interpret", "--capture-on-finding", "--out", "cap", "--", sys.executable, "prog.py")
    assert out.returncode == 1 and "uninit" in out.stderr and "Tensor.max" in out.stderr, out.stderr[-3000:]
    rep = cli("interpret", str(tmp_path / "cap" / "half_0.py"), "--json")
    doc = json.loads(rep.stdout)
    errors = [f for r in doc["results"] for f in r["findings"] if f["severity"] == "error"]
    assert rep.returncode == 1 and not doc["passed"], json.dumps(doc["results"])[-3000:]
    line = next(i for i, ln in enumerate(HALF.splitlines(), 1) if ln.startswith("print"))
    assert [f["tensor"] for f in errors] == ["y_ptr"] and "the program read them after the captured launch " \
        f"(Tensor.max at prog.py:{line})" in errors[0]["message"], errors
    # a capture with no sanitizer knows of no read: the band stays a warning there
    assert cli("capture", "--out", "plain", "--", sys.executable, "prog.py").returncode == 0
    rep = cli("interpret", str(tmp_path / "plain" / "half_0.py"), "--json")
    assert rep.returncode == 0, rep.stdout[-2000:]
