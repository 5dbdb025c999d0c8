"""A deadline for a run (`interpret`/`run --timeout`, each `check` gate item): when it passes, say where the
process was stuck (kernel, case, and under the interpreter the program id and kernel line) and stop it.

Two stages, so that both a kernel looping in Python (the interpreter runs kernel code as Python) and one
spinning on the GPU (the main thread waits in C and never returns to Python) end:

1. SIGALRM at the deadline: its handler runs in the main thread at the next Python bytecode, describes the
   frame it interrupted and raises ``Timeout`` (a BaseException, so no ``except Exception`` of a launch or a
   gate swallows it).
2. A watchdog thread ``grace`` seconds later, if the main thread is still inside: it describes the main
   thread's stack (``sys._current_frames``), calls ``on_stuck(message)`` (write what is known) and ends the
   process with exit status 124 (what `timeout(1)` uses).
3. If the main thread waits in C while holding the GIL (neither stage can run Python then), faulthandler's
   own C thread dumps every thread's stack to stderr and ends the process ``BACKSTOP`` seconds after stage 2
   (exit status 1: an error, never a pass).

What the main thread runs (kernel, case, dtype) is kept by ``activity`` (set by the runner per case).
"""
from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable

from tritondbg.errors import not_users_file

EXIT_STUCK = 124
BACKSTOP = 20.0  # seconds after stage 2 before faulthandler ends a process whose main thread holds the GIL

_activity: dict[str, str] = {}
_end: list = [None]   # monotonic time of the current deadline
trail: list = [None]  # an open file each activity is written to (pytest_plugin: the item's fault log)
TRAIL_PREFIX = "tritondbg: running "


def remaining(default: float) -> float:
    """Seconds left before the current deadline (for a subprocess's own timeout), else ``default``."""
    if _end[0] is None:
        return default
    return max(1.0, min(default, _end[0] - time.monotonic()))


class Timeout(BaseException):
    """The deadline passed; ``str(exc)`` is the one-line report."""


@contextmanager
def activity(**what: str):
    """Record what the main thread is doing (kernel=..., case=..., dtype=...) for a timeout report, and in the
    ``trail`` file when one is set (a check worker's fault log: a crash then says which case it died in)."""
    saved = dict(_activity)
    _activity.update({k: str(v) for k, v in what.items()})
    if trail[0] is not None and "case" in what:
        try:
            trail[0].write(f"{TRAIL_PREFIX}{_activity.get('kernel', '?')} case {_activity['case']}/"
                           f"{_activity.get('dtype', '?')}\n")
            trail[0].flush()
        except (OSError, ValueError):
            pass
    try:
        yield
    finally:
        _activity.clear()
        _activity.update(saved)


def where(frame, after: bool = False) -> str:
    """Where ``frame``'s thread is, said so that it cannot be misread: under the interpreter in kernel code, the
    program id and kernel line (``pid (x, y, z) at FILE:LINE (in KERNEL)``); inside a launch but outside its kernel
    code (between two programs of its grid, the interpreter copying arguments, tritondbg checking what the launch
    did), that, with the line that launched it; else ``in host code at FILE:LINE (in FUNCTION)``: the innermost frame
    of the user's own code (a launch wrapper, a reference), else the innermost frame. (helper-83: program mode's
    line named the kernel line with no program id, and a host line the same way as a kernel line.) Where the
    interpreter was: frames.interrupted_at, as program mode's interrupt line (attach.say_interrupted). ``after``: all
    of the launch's programs ran (the heartbeat's pace then says tritondbg checks it: said once, helper-156)."""
    if frame is None:
        return ""
    from tritondbg.interp.frames import interrupted_at

    site, pid, between = interrupted_at(None, frame)
    if site is not None:
        return f"{f'pid {pid} ' if pid is not None else ''}at {site[0]}:{site[1]} (in {site[2]})"
    f, innermost, host = frame, frame, None
    while f is not None:
        if not not_users_file(f.f_code.co_filename):
            host = f
            break
        f = f.f_back
    f = host or innermost
    at = f"at {f.f_code.co_filename}:{f.f_lineno} (in {f.f_code.co_name})"
    launch = _launch_running()
    if launch is None:
        return f"in host code {at}"
    how = ("between two programs of its grid" if between else "outside its kernel code" if after else
           "outside its kernel code: the interpreter setting it up or copying its arguments, or tritondbg checking it")
    return f"in {launch}, {how} (launched {at})"


def _in_kernel(frame) -> bool:
    """Whether the main thread (``frame``: its stack) runs kernel code or the interpreter's grid loop between two
    programs, not the set-up before a launch's programs or the checks after them."""
    if frame is None:
        return False
    from tritondbg.interp.frames import interrupted_at

    site, _, between = interrupted_at(None, frame)
    return site is not None or bool(between)


def _launch_running() -> str | None:
    """``KERNEL's 2nd launch`` (program mode: ``activity(launch=...)``) or ``a launch of KERNEL`` (the interpreter's
    hooks: inside its GridExecutor call) while the main thread is in a launch; None in host code."""
    if _activity.get("launch"):
        return f"{_activity.get('kernel', '?')}'s {_activity['launch']} launch"
    if "tritondbg.interp.hooks" in sys.modules:
        from tritondbg.interp import hooks

        launch = hooks.current_launch()
        if launch is not None:
            return f"a launch of {launch.kernel}"
    return None


def _doing() -> str:
    """`` kernel case c/dtype`` of what the main thread runs (``activity``), or ""."""
    what = ""
    if _activity.get("kernel"):
        what = f" {_activity['kernel']}"
        if _activity.get("case"):
            what += f" case {_activity['case']}" + (f"/{_activity['dtype']}" if _activity.get("dtype") else "")
    return what


def report(seconds: float, frame, *, stuck: bool = False) -> str:
    what = _doing()
    loc = where(frame)
    tail = "; the main thread did not come back to Python (a compiled kernel or a C call): ending the process" \
        if stuck else ""
    return f"timed out after {seconds:g} s:{what or ' (no kernel running)'}" \
           f"{', ' + loc if loc else ''} (process {os.getpid()}){tail}"


def _join(thread: threading.Thread, timeout: float = 5.0) -> None:
    """Wait for a watcher thread told to stop (its event set). A daemon thread still waking from its wait when the
    process ends is cut down by the interpreter's finalization inside C code, and the process aborted: "terminate
    called without an active exception", exit 134 after every result was printed (seen on the GPU machine under
    load, where the first look had run, and on the CPU with a 0.05 s heartbeat: 1 run in 3)."""
    if thread.is_alive() and thread is not threading.current_thread():
        thread.join(timeout)


@contextmanager
def deadline(seconds: float | None, *, grace: float = 10.0, on_stuck: Callable[[str], None] | None = None):
    """Raise ``Timeout`` in the main thread after ``seconds`` (None or <= 0: no deadline)."""
    if not seconds or seconds <= 0:
        yield
        return
    main = threading.main_thread()
    if threading.current_thread() is not main:
        raise RuntimeError("a deadline must be set from the main thread")
    done = threading.Event()
    saved_end = _end[0]
    _end[0] = time.monotonic() + seconds

    def on_alarm(signum, frame):
        if not done.is_set():
            raise Timeout(report(seconds, frame))

    def watch():
        if done.wait(seconds + grace):
            return
        msg = report(seconds, sys._current_frames().get(main.ident), stuck=True)
        if done.is_set():
            return
        try:
            if on_stuck is not None:
                on_stuck(msg)
            else:
                print(f"error: {msg}", file=sys.stderr, flush=True)
        finally:
            os._exit(EXIT_STUCK)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    thread = threading.Thread(target=watch, name="tritondbg-watchdog", daemon=True)
    thread.start()
    try:  # stderr may be a stand-in without a file descriptor (pytest's capture): the process's own fd 2
        faulthandler.dump_traceback_later(seconds + grace + BACKSTOP, exit=True, file=sys.__stderr__)
    except (AttributeError, ValueError, OSError, RuntimeError):
        pass
    try:
        yield
    finally:
        done.set()
        _join(thread)
        faulthandler.cancel_dump_traceback_later()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        _end[0] = saved_end


HEARTBEAT_S = float(os.environ.get("TRITONDBG_HEARTBEAT_S", "60"))


def grid_progress(frame=None) -> tuple | None:
    """(which launch, how many of its programs have started, how many its grid has) of the interpreter launch the
    main thread is in (``frame``: its stack; 0 programs before its grid), None outside one (host code, a compiled
    kernel). From the interpreter hooks' launch where they are on (the memory guard keeps them), else from the
    interpreter's builder (its loop runs x, then y, then z, innermost) while kernel code runs or its grid loop does."""
    hooks = sys.modules.get("tritondbg.interp.hooks")
    launch = hooks.current_launch() if hooks is not None else None
    if launch is not None:
        gx, gy, gz = launch.grid
        return (launch.index, id(launch)), int(launch.programs), gx * gy * gz  # (0 programs: not in its grid yet)
    interpreter = sys.modules.get("triton.runtime.interpreter")
    if interpreter is None or frame is None:
        return None
    from tritondbg.interp.frames import interrupted_at

    site, pid, between = interrupted_at(None, frame)
    dims = getattr(getattr(interpreter, "interpreter_builder", None), "grid_dim", None)
    if pid is None or dims is None or (site is None and not between):
        return None
    gx, gy, gz = (int(d) for d in dims)
    return ("builder", gx, gy, gz), pid[0] * gy * gz + pid[1] * gz + pid[2] + 1, gx * gy * gz


def _secs(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{round(x, 1):g}"


def _pace(now: tuple, then: tuple | None, hint: str, in_kernel: bool = True) -> str:
    """What a heartbeat says of the grid (``now``/``then``: (time, grid_progress) at this look and the last one):
    the same program as at the last look is maybe a loop that never ends; another one, a launch moving through a
    large grid (a stranger's 4096-program launch at 11 ms a program read as a hang, "a loop that never ends?")."""
    t, prog = now
    if prog is None:  # not in an interpreter launch's grid: nothing tells a long run from an endless one
        return f" (a loop that never ends? {hint})"
    key, n, total = prog
    if not n:  # no kernel code ran yet: the interpreter or tritondbg setting the launch up
        return f", before the first program of this launch ({hint})"
    said = f", program {n} of {total} of this launch"
    if n >= total and not in_kernel:  # (helper-154: "program 1848 of 1848 (not stuck: ... about 0 s to go)" while
        # the checks after the programs ran)
        return (f", after all {total} program(s) of this launch: tritondbg checking it (races, NaN origins, the "
                f"runs again that test undefined lanes; {hint})")
    if then is not None and then[1] is not None and then[1][:2] == (key, n):
        return f"{said}, the same program as {_secs(t - then[0])} s ago (a loop that never ends? {hint})"
    if total <= 1:
        return f"{said}, which began in the last {_secs(t - then[0])} s ({hint})" if then else f"{said} ({hint})"
    pace = ""
    if then is not None and then[1] is not None and then[1][0] == key and n > then[1][1] and t > then[0]:
        rate = (n - then[1][1]) / (t - then[0])
        pace = f" at {rate:.3g} programs/s, about {_secs((total - n) / rate)} s to go"
    return (f"{said} (not stuck: moving through a large grid{pace}; the interpreter runs its programs one after "
            f"another, so a smaller shape runs faster; {hint})")


@contextmanager
def heartbeat(first: float | None = None, every: float | None = None,
              hint: str = "Ctrl-C stops it and says where; --timeout SECONDS ends a run"):
    """While the main thread runs: after ``first`` seconds (``TRITONDBG_HEARTBEAT_S``, 60) and then every
    ``every`` (twice ``first``), one line on stderr saying what it runs and where (a kernel line and program id
    under the interpreter): an endless loop in a kernel was a silent hang, with no deadline by default. Under the
    interpreter it says which program of how many of the launch runs; "a loop that never ends?" only when it is the
    one that ran at the last look (the last line, or a silent look halfway to the first), else that the launch moves
    through a large grid, at what pace."""
    first = HEARTBEAT_S if first is None else first
    if not first or first <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return
    every = 2 * first if every is None else every
    main, done, t0 = threading.main_thread(), threading.Event(), time.monotonic()

    def look() -> tuple:
        frame = sys._current_frames().get(main.ident)
        try:
            prog = grid_progress(frame)
        except Exception:  # noqa: BLE001 - the line without it still helps
            prog = None
        return frame, (time.monotonic(), prog)

    def beat():
        if done.wait(first / 2):
            return
        _, then = look()  # a silent look: the first line tells a program that ran since from one still running
        wait = first - first / 2
        while not done.wait(wait):
            frame, now = look()
            inside = _in_kernel(frame)
            after = not inside and now[1] is not None and now[1][1] >= now[1][2]  # (the pace says what runs then)
            what, loc = _doing(), where(frame, after)
            line = (f"tritondbg: still running after {now[0] - t0:.0f} s:{what}{', ' + loc if loc else ''}"
                    f"{_pace(now, then, hint, inside)}")
            # to the stderr the program started with: under pytest's capture the line went nowhere (helper-83)
            from tritondbg.program import child

            child.say(line)
            then, wait = now, every

    thread = threading.Thread(target=beat, name="tritondbg-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        _join(thread)
