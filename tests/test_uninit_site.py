"""helper-91: an output a reproducer's replayed launch left unwritten (``uninit``, "never written") is located at
the launch the program made (its captured call site), never at tritondbg's replay (program/replay.py, under
`interpret`) or xdist's frame (xdist/remote.py, under `check`)."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import run_cli

KERN = '''
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * 2.0, mask=mask)


def scale(x):
    y = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
    return y
'''

DRIVER = '''
import torch
from mykern import scale

if __name__ == "__main__":
    print(scale(torch.randn(100)).sum().item())
'''


@pytest.mark.interpreter
def test_an_unwritten_output_of_a_replay_is_at_the_captured_launch(tmp_path, cli_env):
    kern = tmp_path / "mykern.py"
    kern.write_text(textwrap.dedent(KERN))
    (tmp_path / "driver.py").write_text(textwrap.dedent(DRIVER))
    cap = run_cli(["capture", "--out", "cap", "--", sys.executable, "driver.py"], cli_env, cwd=tmp_path)
    assert cap.returncode == 0, cap.stderr[-2000:]
    kern.write_text(kern.read_text().replace("mask = offs < n", "mask = offs < n - 10"))  # last 10 never written
    launch = next(i for i, ln in enumerate(kern.read_text().splitlines(), 1) if "scale_kernel[" in ln)
    repro = str(tmp_path / "cap" / "scale_kernel_0.py")
    rep = run_cli(["interpret", repro, "--json"], cli_env, cwd=tmp_path)
    found = [f for r in json.loads(rep.stdout)["results"] for f in r["findings"] if f["kind"] == "uninit"]
    assert rep.returncode != 0 and found, rep.stderr[-2000:]
    assert all("tritondbg" not in f["file"] and "xdist" not in f["file"] for f in found), found
    never = [f for f in found if "never written" in f["message"]]
    assert [(f["file"], f["line"]) for f in never] == [(str(kern), launch)], found
    assert "this launch of scale_kernel" in never[0]["message"], never[0]["message"]
    chk = run_cli(["check", repro, "--gates", "sanitize", "--json", str(tmp_path / "check.json")], cli_env,
                  cwd=tmp_path)
    assert chk.returncode != 0, chk.stdout[-2000:]
    doc = json.loads((tmp_path / "check.json").read_text())
    found = [f for r in doc["results"] for f in r.get("findings", []) if f["kind"] == "uninit"]
    assert found and all("xdist" not in f["file"] and "tritondbg" not in f["file"] for f in found), found
    assert (str(kern), launch) in {(f["file"], f["line"]) for f in found}, found


def test_a_replay_names_the_captured_call_site_as_the_launchs():
    from tritondbg.interp import initcheck

    here = initcheck.caller_site()[::2]  # (file, function)
    with initcheck.launched_from(["/src/prog.py", 17, "scale"]):
        assert initcheck.caller_site() == ("/src/prog.py", 17, "scale")
        with initcheck.launched_from(None):
            assert initcheck.caller_site() == ("/src/prog.py", 17, "scale")
    assert initcheck.caller_site()[::2] == here
