"""``--timeout SECONDS`` of the program forms (``interpret -- CMD``, ``capture -- CMD``, ``profile -- CMD``): a program whose kernel
loops forever under the interpreter is stopped (SIGTERM), says the launch, line and program id it was in, keeps
what finished, and exits 124 (helper-101: the kernel form had it, the program form refused the option)."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def spin(x, n):
    i = 0
    while i < n:  # WHILE
        i = i + tl.load(x) * 0 + (n == 3)  # LOOP (n = 3 moves on; any other n never does)
    tl.store(x, i)

x = torch.zeros(1, dtype=torch.int32, device="cuda")
spin[(1,)](x, 3)
print("first done", flush=True)
spin[(1,)](x, 5)
print("never")
''')


def _line(tag: str) -> int:
    return next(i for i, ln in enumerate(PROG.splitlines(), 1) if f"# {tag}" in ln)


def _stopped_in_the_loop(stderr: str, launch: str) -> bool:
    """The SIGTERM lands on the loop's condition or its body, whichever runs then."""
    return any(f"terminated (SIGTERM) in spin at prog.py:{n}, pid (0, 0, 0) (its {launch} launch)" in stderr
               for n in (_line("WHILE"), _line("LOOP")))


@pytest.mark.parametrize("form", ["interpret", "capture", "profile"])
def test_a_program_past_its_timeout_is_stopped_where_it_loops_and_exits_124(tmp_path, cli_env, form):
    (tmp_path / "prog.py").write_text(PROG)
    out = {"capture": ["--out", "cap", "--max-per-kernel", "2"], "profile": ["--out", "tr", "--json", "k.json"]}
    args = [form, "--timeout", "12"] + out.get(form, []) + ["--", sys.executable, "prog.py"]
    p = run_cli(args, cli_env, cwd=tmp_path)
    assert p.returncode == 124, (p.returncode, p.stderr[-3000:])
    assert "first done" in p.stdout and "never" not in p.stdout, p.stdout
    assert _stopped_in_the_loop(p.stderr, "2nd"), p.stderr[-3000:]
    if form == "profile":  # the summary is on stderr; the stopped launch is counted, traced and marked unfinished
        assert "the program timed out after 12 s (--timeout" in p.stderr, p.stderr[-3000:]
        doc = json.loads((tmp_path / "k.json").read_text())
        assert doc["exit_status"] == 124, doc
        record = json.loads((tmp_path / doc["record"]).read_text())
        spin, = [r for r in record["results"] if r["kernel"] == "spin"]
        assert spin["status"] == "error" and "SIGTERM" in spin["message"], spin
        assert record["extra"]["profile"]["program"]["kernels"][0]["launches"] == 2, record["extra"]["profile"]
        return
    last = p.stderr.strip().splitlines()[-1]
    assert "timed out after 12 s (--timeout" in last and "exit status 124" in last, last
    if form == "capture":  # the launch that finished is a reproducer; the one stopped is kept, marked unfinished
        doc = json.loads((tmp_path / "cap" / "captures.json").read_text())
        assert doc["exit_status"] == 124 and len(doc["captures"]) == 2, doc
        assert not doc["captures"][0].get("error") and "SIGTERM" in doc["captures"][1].get("error", ""), doc


def test_a_program_within_its_timeout_keeps_its_own_status(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text("import sys\nprint('ok')\nsys.exit(3)\n")
    p = run_cli(["interpret", "--timeout", "60", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 3 and "timed out" not in p.stderr, p.stderr[-2000:]


def test_the_timeout_stops_the_programs_own_children_too(tmp_path, cli_env):
    """helper-105: SIGTERM and SIGKILL went to the command alone; a shell script's python (pytest -n's workers,
    torchrun's) ran on, looping, after tritondbg had returned."""
    import subprocess

    (tmp_path / "prog.py").write_text(PROG)
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{sys.executable} {tmp_path / 'prog.py'} &\nwait\n")
    p = run_cli(["interpret", "--timeout", "12", "--", "bash", "run.sh"], cli_env, cwd=tmp_path)
    assert p.returncode == 124, (p.returncode, p.stderr[-3000:])
    assert _stopped_in_the_loop(p.stderr, "2nd"), p.stderr[-3000:]
    left = subprocess.run(["pgrep", "-f", str(tmp_path / "prog.py")], capture_output=True, text=True).stdout.split()
    assert not left, left


def test_a_scripts_python_gets_its_grace_after_the_shell_has_ended(tmp_path):
    """CI (stop 65): at the --timeout, the shell of `-- bash run.sh` ends at once on its SIGTERM; the SIGKILL that
    followed its exit cut off the report its python was still writing. The python now gets the same grace."""
    import time

    from tritondbg.program import launcher

    done = tmp_path / "wrote"
    (tmp_path / "slow.py").write_text(textwrap.dedent(f'''
        import signal, sys, time
        def on_term(*a):
            time.sleep(1.5)  # a report that takes a while to write
            open({str(done)!r}, "w").write("report")
            sys.exit(0)
        signal.signal(signal.SIGTERM, on_term)
        open({str(tmp_path / "ready")!r}, "w").close()
        time.sleep(120)
    '''))
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{sys.executable} {tmp_path / 'slow.py'} &\nwait\n")
    t0 = time.monotonic()
    rc = launcher.run(["bash", str(tmp_path / "run.sh")], {}, timeout=8)
    assert rc == launcher.TIMED_OUT
    assert (tmp_path / "ready").exists(), "the script's python never started (a slow host?)"
    assert done.exists() and done.read_text() == "report"
    assert time.monotonic() - t0 < 25  # it ended when the python did, not at the end of the grace


SLEEPER = textwrap.dedent('''
import time, torch, triton, triton.language as tl

@triton.jit
def one(x):
    tl.store(x, 1.0)

x = torch.zeros(1, device="cuda")
one[(1,)](x)
print("kernel done", flush=True)
time.sleep(600)  # SLEEP
''')


@pytest.mark.parametrize("form", ["interpret", "capture"])
def test_a_timeout_outside_any_launch_says_the_programs_line(tmp_path, cli_env, form):
    """helper-122: a program past its --timeout in its own code (after its last launch) got "timed out" with no
    place; the line it was on is said now, once."""
    (tmp_path / "prog.py").write_text(SLEEPER)
    p = run_cli([form, "--timeout", "20", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 124 and "kernel done" in p.stdout, (p.returncode, p.stderr[-3000:])
    line = next(i for i, ln in enumerate(SLEEPER.splitlines(), 1) if "# SLEEP" in ln)
    said = [ln for ln in p.stderr.splitlines() if "outside any launch" in ln]
    assert said == [f"tritondbg: terminated (SIGTERM) outside any launch, in the program at prog.py:{line} (<module>)"], \
        p.stderr[-3000:]
