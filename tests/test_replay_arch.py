"""A reproducer is replayed for the GPU it was captured for (helper-157: aiter's fp8 e4m3fnuz GEMM captured with
`capture --arch gfx942` replayed as sm_90 in `interpret` and `check`, "type fp8e4b8 not supported in this
architecture (sm_90)", where `ir` took the captured gfx942; `check --arch gfx942` reached the compile gate only)."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl


@triton.jit
def widen(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32), mask=offs < n)


x = torch.randn(10).to(torch.float8_e4m3fnuz).to("cuda")  # AMD's fp8: sm_90 has no such type
o = torch.empty(10, device="cuda")
widen[(1,)](x, o, 10, BLOCK=16)
print("ok", torch.equal(o.cpu(), x.cpu().float()))
''')


def test_a_reproducer_captured_for_an_amd_gpu_replays_for_it_in_interpret_and_check(tmp_path, cli_env):
    (tmp_path / "nuz.py").write_text(PROG)
    p = run_cli(["capture", "--interpret", "--arch", "gfx942", "--out", "cap", "--", sys.executable, "nuz.py"],
                cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "ok True" in p.stdout, p.stderr[-3000:]
    p = run_cli(["interpret", "cap/widen_0.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "1/1 passed" in p.stdout, (p.stdout[-2000:], p.stderr[-2000:])
    assert "dtype=float8_e4m3fnuz" in p.stdout, p.stdout  # labelled by its input (it said float32, the output's)
    assert "note: the stand-in GPU is gfx942, the one this reproducer was captured for" in p.stderr, p.stderr
    p = run_cli(["interpret", "--arch", "sm_90", "cap/widen_0.py"], cli_env, cwd=tmp_path)  # --arch still rules
    assert p.returncode == 1 and "not supported in this architecture (sm_90)" in p.stdout + p.stderr, p.stdout
    p = run_cli(["check", "--gates", "correctness,sanitize", "cap/widen_0.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "2 passed, 0 failed" in p.stdout, (p.stdout[-3000:], p.stderr[-2000:])
    p = run_cli(["check", "--arch", "sm_90", "--gates", "correctness", "cap/widen_0.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1 and "not supported in this architecture (sm_90)" in p.stdout, p.stdout[-3000:]


AMD_ONLY = textwrap.dedent('''
import sys, triton

ARCH = triton.runtime.driver.active.get_current_target().arch  # READ (aiter's arch_info.py)
if ARCH != "gfx942":
    sys.exit(f"no config for {ARCH}")
print("arch", ARCH)
''')


def test_a_failed_program_that_read_the_default_target_is_told_of_arch(tmp_path, cli_env):
    """helper-157: aiter read sm_90, the stand-in's default, and failed on a config file named after it: nothing
    said --arch gfx942 was forgotten."""
    (tmp_path / "amd.py").write_text(AMD_ONLY)
    read = next(i for i, ln in enumerate(AMD_ONLY.splitlines(), 1) if "# READ" in ln)
    p = run_cli(["interpret", "--", sys.executable, "amd.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 1 and "no config for 90" in p.stderr, p.stderr[-2000:]
    assert (f"note: host code read the GPU target at {tmp_path / 'amd.py'}:{read} and heard sm_90, the stand-in's "
            "default: a program written for another GPU takes --arch") in p.stderr, p.stderr[-2000:]
    p = run_cli(["interpret", "--arch", "gfx942", "--", sys.executable, "amd.py"], cli_env, cwd=tmp_path)
    assert "arch gfx942" in p.stdout and "host code read" not in p.stderr, p.stderr[-2000:]
