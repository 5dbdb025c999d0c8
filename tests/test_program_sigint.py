"""A SIGINT sent to tritondbg's whole process group with no terminal (``kill -INT -PGID``: test harnesses, CI
runners) reaches the program twice: directly and as the copy tritondbg passes on (it cannot tell such a signal
from one sent to it alone). The program's process drops the second within 0.5 s (program/exits.py), also when the
program installs Python's default handler itself, as one started with SIGINT ignored (a background job, some CI
workers) must: before, that program took a second KeyboardInterrupt inside its own handling of the first (seen as
a lost traceback in test_profile_program's Ctrl-C test, about one CI run in ten)."""
import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.interpreter

PROG = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # started with SIGINT ignored: take it back
print("SAME", signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
import triton
open(sys.argv[1], "w").close()
try:
    time.sleep(60)
except KeyboardInterrupt:
    time.sleep(0.3)  # cleanup: a second KeyboardInterrupt here would cut it short
    print("CLEANED UP", flush=True)
"""


def test_a_group_sigint_interrupts_the_program_once(tmp_path, cli_env):
    prog, ready = tmp_path / "prog.py", tmp_path / "ready"
    prog.write_text(PROG)
    proc = subprocess.Popen([sys.executable, "-m", "tritondbg", "interpret", "--", "python", str(prog), str(ready)],
                            env=cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.time() + 120
        while not ready.exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.1)
        time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "SAME True" in out, (out, err[-2000:])  # getsignal still answers what the program installed
    assert "CLEANED UP" in out, (out, err[-2000:])
    # it ended well after the interrupt, but the run was interrupted: 130, and the program's own status said
    # (session 48: a Ctrl-C'd pytest's status 2 came out as tritondbg's own)
    assert proc.returncode == 130, err[-2000:]
    assert "the program was interrupted (Ctrl-C / SIGINT; it exited with status 0)" in err, err[-2000:]


def test_both_handler_entries_of_a_twin_sigint_leave_the_traceback():
    """CI (session 42): a twin SIGINT landed inside the first one's handler before it noted the time; the traceback
    ended "exits.py, line 138, in _sigint_once" (the inner entry was dropped, the outer kept)."""
    from types import SimpleNamespace as Entry

    from tritondbg.program import exits

    def entry(code, nxt=None):
        return Entry(tb_frame=Entry(f_code=code), tb_next=nxt)

    program = (lambda: None).__code__
    handler = exits._sigint_once.__code__
    tb = entry(program, entry(handler, entry(handler)))
    kept = exits._without_handler(tb)
    assert kept is tb and kept.tb_next is None, kept
    assert exits._without_handler(entry(handler)) is None
    lone = entry(program)
    assert exits._without_handler(lone) is lone


def test_an_interrupt_between_two_programs_of_a_grid_is_told_so(monkeypatch):
    """helper-74: Ctrl-C in a 2049-program grid, landing in the interpreter's loop between two programs, read
    "outside its kernel code (its arguments being copied in or out, its grid being set up, or tritondbg checking what it did)"; frames.in_grid_loop
    tells the loop from the rest (a pre-run hook here)."""
    import torch
    import triton
    import triton.language as tl
    from triton.runtime import interpreter as I

    from tritondbg.interp import frames

    if os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("the interpreter's grid loop (TRITON_INTERPRET=1)")

    @triton.jit
    def ones(x_ptr):
        tl.store(x_ptr + tl.program_id(0), 1.0)

    original = I.interpreter_builder.set_grid_idx

    def stop_at_third(x, y, z):
        if x == 3:
            raise KeyboardInterrupt
        return original(x, y, z)

    monkeypatch.setattr(I.interpreter_builder, "set_grid_idx", stop_at_third)
    with pytest.raises(KeyboardInterrupt) as caught:
        ones[(8,)](torch.zeros(8))
    assert frames.in_grid_loop(caught.value, None)
    monkeypatch.undo()

    def hook(*args, **kwargs):
        raise KeyboardInterrupt
    ones.add_pre_run_hook(hook)
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            ones[(8,)](torch.zeros(8))
    finally:
        ones.pre_run_hooks.remove(hook)
    assert not frames.in_grid_loop(caught.value, None)


SWALLOWED = '''
import os, signal, time, traceback, torch, triton, triton.language as tl


def swallow():  # as numpy's C code does: the Ctrl-C's KeyboardInterrupt comes out as a TypeError
    if any("code_generator" in f.filename for f in traceback.extract_stack()):
        return  # (the compile check's front end calls it too)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
    except KeyboardInterrupt:
        raise TypeError("expected a sequence of integers or a single integer, got '(1024)'") from None


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    swallow()  # SWALLOW
    tl.store(x_ptr + offs, 2 * x, mask=offs < n)


x = torch.ones(10, device="cuda")
scale[(1,)](x, 10, BLOCK=16)
print("finished")
'''


@pytest.mark.parametrize("form", ["interpret", "capture"])
def test_a_ctrl_c_that_surfaces_as_another_error_is_an_interrupt(tmp_path, cli_env, form):
    """helper-132: a Ctrl-C during a capture landed in numpy, which turned its KeyboardInterrupt into a TypeError;
    the reproducer said the launch failed with that TypeError (a kernel bug hunt for nothing). A launch's exception
    that came with a SIGINT is an interrupt: said where, the program ends by it, the reproducer says so."""
    import json

    from conftest import run_cli

    (tmp_path / "prog.py").write_text(SWALLOWED)
    env = dict(cli_env, TRITON_ALLOW_NON_CONSTEXPR_GLOBALS="1")  # (the kernel calls a Python function)
    p = run_cli([form, "--out", str(tmp_path / "o"), "--", sys.executable, "prog.py"], env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(SWALLOWED.splitlines(), 1) if "# SWALLOW" in ln)
    assert p.returncode == 130 and "finished" not in p.stdout, (p.returncode, p.stderr[-3000:])
    assert f"tritondbg: interrupted in scale at prog.py:{line}, pid (0, 0, 0)" in p.stderr, p.stderr[-3000:]
    assert "kernel_error" not in p.stderr and "TypeError" not in p.stderr.split("tritondbg: interrupted")[1] \
        .split(f"tritondbg {form}:")[0], p.stderr[-3000:]
    if form == "capture":
        (entry,) = json.loads((tmp_path / "o" / "captures.json").read_text())["captures"]
        assert entry["error"].startswith("KeyboardInterrupt (Ctrl-C during the launch; it surfaced as "), entry
