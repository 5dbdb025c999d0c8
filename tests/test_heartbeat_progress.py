"""The heartbeat of a long launch under the interpreter says how far through its grid it is, and asks "a loop that
never ends?" only when the program running is the one that ran at the last look (a stranger's 4096-program launch
at ~11 ms a program, under `interpret -- python -m pytest`, printed "pid (1372, 0, 0) ... (a loop that never
ends?)" though it was only long)."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from tritondbg import watchdog

BEAT = "tritondbg: still running after"

GRID = '''
import torch, triton, triton.language as tl

@triton.jit
def work(x_ptr, STEPS: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((16,), tl.float32)
    for i in tl.static_range(STEPS):
        acc += tl.load(x_ptr + tl.arange(0, 16))  # a few ms a program: a minute for the grid, stopped long before
    tl.store(x_ptr + pid * 16 + tl.arange(0, 16), acc)

x = torch.ones(20000 * 16, device="cuda")
work[(20000,)](x, STEPS=10)
'''

SPIN = '''
import torch, triton, triton.language as tl

@triton.jit
def spin(x_ptr, n):
    i = 0
    while n > 0:  # n never changes
        i += 1
    tl.store(x_ptr, i)

x = torch.zeros(4, device="cuda")
spin[(1,)](x, 1)
'''


def _heartbeats(tmp_path, cli_env, src: str, enough, limit: float = 60.0) -> list[str]:
    """The heartbeat lines of ``interpret -- python prog.py`` (first after 1 s, then every 2 s), until ``enough(lines)``
    or the program ends or ``limit`` seconds; then tritondbg and its program (one process group) are killed."""
    (tmp_path / "prog.py").write_text(src)
    env = dict(cli_env, TRITONDBG_HEARTBEAT_S="1")
    proc = subprocess.Popen([sys.executable, "-m", "tritondbg", "interpret", "--", sys.executable, "prog.py"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    got: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [got.put(ln) for ln in proc.stderr] + [got.put(None)], daemon=True).start()
    lines, everything = [], []
    try:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and not enough(lines):
            try:
                line = got.get(timeout=0.5)
            except queue.Empty:
                continue
            if line is None:
                break
            everything.append(line)
            if line.startswith(BEAT):
                lines.append(line.rstrip("\n"))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert lines, "no heartbeat line:\n" + "".join(everything)[-3000:]
    return lines


@pytest.mark.interpreter
def test_a_long_grid_says_how_far_it_is_not_that_it_may_never_end(tmp_path, cli_env):
    lines = _heartbeats(tmp_path, cli_env, GRID,
                        lambda lines: sum(" of 20000 of this launch" in ln for ln in lines) >= 2)
    moving = [ln for ln in lines if " of 20000 of this launch (not stuck: moving through a large grid" in ln]
    assert moving, lines
    assert "a smaller shape runs faster" in moving[0] and "Ctrl-C stops it and says where" in moving[0], moving[0]
    assert ", program " in moving[0] and "pid (" in moving[0], moving[0]
    assert not any("never ends" in ln for ln in lines), lines


@pytest.mark.interpreter
def test_a_loop_that_never_ends_is_still_asked_about(tmp_path, cli_env):
    lines = _heartbeats(tmp_path, cli_env, SPIN, lambda lines: any("never ends" in ln for ln in lines), limit=40)
    (line,) = [ln for ln in lines if "never ends" in ln][:1]
    assert "spin, pid (0, 0, 0) at " in line and "program 1 of 1 of this launch, the same program as " in line, line
    assert "(a loop that never ends? Ctrl-C stops it and says where)" in line, line


def test_the_wording_of_each_look():
    """What a line says from two looks at the grid ((time, (launch, programs started, programs in the grid)))."""
    hint = "HINT"
    launch = (7, 1234)
    assert watchdog._pace((10.0, None), None, hint) == " (a loop that never ends? HINT)"  # no interpreter grid
    assert watchdog._pace((10.0, (launch, 0, 1)), None, hint) == ", before the first program of this launch (HINT)"
    same = watchdog._pace((70.0, (launch, 5, 4096)), (10.0, (launch, 5, 4096)), hint)
    assert same == ", program 5 of 4096 of this launch, the same program as 60 s ago (a loop that never ends? HINT)"
    moved = watchdog._pace((70.0, (launch, 1373, 4096)), (10.0, (launch, 173, 4096)), hint)
    assert moved.startswith(", program 1373 of 4096 of this launch (not stuck: moving through a large grid at 20 "
                            "programs/s, about 136 s to go;"), moved
    assert "never ends" not in moved and moved.endswith("a smaller shape runs faster; HINT)"), moved
    other = watchdog._pace((70.0, (launch, 3, 4096)), (10.0, ((6, 99), 4000, 4096)), hint)  # a new launch since
    assert "moving through a large grid;" in other and "programs/s" not in other, other
    one = watchdog._pace((3.0, (launch, 1, 1)), (2.5, None), hint)
    assert one == ", program 1 of 1 of this launch, which began in the last 0.5 s (HINT)", one
    # helper-154: every program ran and the main thread is in the checks after them (not kernel code): "about 0 s to
    # go", then "the same program as 60 s ago (a loop that never ends?)" for tritondbg's own work
    for then in ((10.0, (launch, 1800, 1848)), (10.0, (launch, 1848, 1848))):
        after = watchdog._pace((70.0, (launch, 1848, 1848)), then, hint, in_kernel=False)
        assert after == (", after all 1848 program(s) of this launch: tritondbg checking it (races, NaN origins, the "
                         "runs again that test undefined lanes; HINT)"), after
    last = watchdog._pace((70.0, (launch, 1848, 1848)), (10.0, (launch, 1848, 1848)), hint, in_kernel=True)
    assert "the same program as 60 s ago (a loop that never ends?" in last, last  # the last program still running
