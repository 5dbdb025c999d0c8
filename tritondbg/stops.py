"""The stop signal a run's handler turned into KeyboardInterrupt (Ctrl-C's SIGINT, a CI cancel's SIGTERM), noted.

A KeyboardInterrupt raised while a C extension runs Python code can come back as another exception: numpy parsing a
shape ("TypeError: expected a sequence of integers or a single integer, got '(64)'"), a profiler's callback. The case
then kept it as its own error, the run went on to the next case and exited 1 instead of 130 (CI runs of
`interpret` and `profile`). Handlers that note the signal here (``handler``) let the code that catches a case's
error ask whether a stop is under way (``reraise``) and raise the interrupt again. ``clear`` at the start and the end
of a command: the note belongs to one run.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator

_STATE: dict = {"signal": None}


def note(signum: int) -> None:
    _STATE["signal"] = signal.Signals(signum).name


def noted() -> str | None:
    """"SIGINT" / "SIGTERM" when a handler raised KeyboardInterrupt for it since ``clear``; else None."""
    return _STATE["signal"]


def clear() -> None:
    _STATE["signal"] = None


def handler(signum, frame):
    """A signal handler: note the signal, raise KeyboardInterrupt (as Python's own SIGINT handler does)."""
    note(signum)
    raise KeyboardInterrupt


def reraise(exc: BaseException | None = None) -> None:
    """Raise KeyboardInterrupt again when a stop signal was noted (``exc``: the error it came back as)."""
    if _STATE["signal"] is not None:
        raise KeyboardInterrupt(f"{_STATE['signal']}") from exc


@contextlib.contextmanager
def noting() -> Iterator[None]:
    """For the block (main thread only): SIGTERM, and Ctrl-C where Python's own handler has it, raise
    KeyboardInterrupt through ``handler``; the previous handlers come back after it. An ignored SIGTERM stays
    ignored, a program's own SIGINT handler is kept. The note is cleared before and after."""
    clear()
    old = {}
    if threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
            old[signal.SIGTERM] = signal.signal(signal.SIGTERM, handler)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            old[signal.SIGINT] = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        clear()


def children(pid: int | str = "self") -> list[int]:
    """The child processes of ``pid`` (this process by default), from /proc (Linux; elsewhere none)."""
    import os

    pids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                pids += [int(p) for p in f.read().split()]
    except OSError:
        pass
    return pids


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, children first (what a timeout stops with it: a script's python, pytest -n's
    workers)."""
    out, todo = [], children(pid)
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += children(p)
    return out
