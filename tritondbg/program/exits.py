"""What a program-mode process writes when it ends (its summary, the profiler's trace), also when it ends without
running ``atexit``: ``os._exit`` (multiprocessing's workers end that way; a program may too) and SIGTERM left at
its default action (``Pool.__exit__`` terminates its workers so; CI runners cancel jobs so). Before, such a process
left no summary: the run reported "no Triton launch ran", or "0 launch(es)" beside its streamed findings.

``on_exit(fn)`` registers a hook, run once per process: at interpreter exit (atexit), in ``os._exit`` before the
real one, or on SIGTERM (the hooks, then the default action: the exit status stays the signal's). ``on_fork(fn)``
runs in a forked child (its counts start at the fork: the parent's summary holds the launches before it); a hook
registered with ``in_forks=False`` (the profiler's, whose session belongs to the parent) does not run there.
"""
from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time

_hooks: list = []           # (fn, in_forks)
_ran: set = set()           # (pid, hook index) already run
_fork_listeners: list = []
_term_listeners: list = []
_state = {"installed": False, "forked_pid": None, "real_exit": None}


def on_exit(fn, in_forks: bool = True) -> None:
    _hooks.append((fn, in_forks))
    atexit.register(_run, len(_hooks) - 1)
    install()


def on_fork(fn) -> None:
    _fork_listeners.append(fn)
    install()


def forked() -> bool:
    """Whether this process is a fork of the attached program (not the program itself)."""
    return _state["forked_pid"] == os.getpid()


def _run(i: int) -> None:
    blocked = _block_sigterm()  # before the hook is marked as run: a SIGTERM handled between the two (Pool.__exit__
    try:  # terminating a worker as it exits) found it marked and ended the process without it (CI, 1 run in ~8)
        key = (os.getpid(), i)
        if key in _ran:
            return
        _ran.add(key)
        fn, in_forks = _hooks[i]
        if forked() and not in_forks:
            return
        _call(fn)
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _call(fn) -> None:
    # a SIGTERM arriving meanwhile (``Pool.__exit__`` terminates workers that are already exiting) waits until the
    # hook has written its file: its handler then finds the hooks run and ends the process. A second SIGINT (a
    # Ctrl-C sent to the whole process group reaches the program, and tritondbg passes its own on) is noted and
    # dropped: the program is already ending, and a KeyboardInterrupt here lost the summary (1 in ~15 CI runs)
    # The SIGINT handler is not put back between hooks: a SIGINT pending when one hook ends would otherwise raise in
    # the next one before its first line, and atexit would skip that hook (the process is ending either way; CPython
    # resets SIGINT itself to end with it after an uncaught KeyboardInterrupt)
    _hold_sigint()
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - an exit hook must never change how the program ends
        if os.environ.get("TRITONDBG_DEBUG"):
            print(f"tritondbg: exit hook {getattr(fn, '__name__', fn)} failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)


def _block_sigterm() -> bool:
    try:
        return signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask (Windows)
        return False


def _late_sigint(signum, frame) -> None:
    """SIGINT while an exit hook runs: the process is ending already."""


def _hold_sigint() -> None:
    """Replace the SIGINT handler from the first exit hook on (main thread only: elsewhere no handler can run
    anyway)."""
    try:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, _late_sigint)
    except (ValueError, OSError, TypeError):
        pass


def run_all() -> None:
    for i in range(len(_hooks)):
        _run(i)


def _exit(code=0):
    run_all()
    _state["real_exit"](code)


def on_term(fn) -> None:
    """``fn(frame)`` when a default SIGTERM ends the process, before the hooks: ``frame`` is where it landed."""
    _term_listeners.append(fn)
    install()


def _on_term(signum, frame):
    for fn in list(_term_listeners):
        try:
            fn(frame)
        except Exception:  # noqa: BLE001 - the process is ending: the hooks still run
            pass
    run_all()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _after_fork() -> None:
    _state["forked_pid"] = os.getpid()
    for fn in _fork_listeners:
        try:
            fn()
        except Exception:  # noqa: BLE001 - as above
            pass


SIGINT_TWIN_S = 0.5  # a second SIGINT this soon after one is the same Ctrl-C delivered twice


def _sigint_once(signum, frame) -> None:
    """SIGINT in the program: KeyboardInterrupt, as Python's own handler raises. A SIGINT sent to tritondbg's whole
    process group with no terminal to say so (``kill -INT -PGID``, a test harness, some CI runners) reaches the
    program, and tritondbg passes its own copy on (launcher.py): the second one, within SIGINT_TWIN_S, is dropped.
    It used to raise again inside the first one's handling and lose the "interrupted in ... at" line (1 run in 3
    of test_program_sites' Ctrl-C test). A later Ctrl-C interrupts as usual."""
    __tracebackhide__ = True  # pytest names the test's line, not this one, as where the interrupt landed
    now = time.monotonic()
    last, _state["sigint_at"] = _state.get("sigint_at"), now
    if last is not None and now - last < SIGINT_TWIN_S:
        return
    raise KeyboardInterrupt


def sigint_since(t0: float) -> bool:
    """Whether a SIGINT reached ``_sigint_once`` at or after ``t0`` (``time.monotonic``)."""
    at = _state.get("sigint_at")
    return at is not None and at >= t0


def install() -> None:
    """Route ``os._exit`` and a default SIGTERM through the hooks, and Python's default SIGINT handler through
    ``_sigint_once`` (once per process; a program that installs its own handlers keeps them)."""
    if _state["installed"]:
        return
    _state["installed"] = True
    _state["real_exit"] = os._exit
    os._exit = _exit
    try:
        if threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
                signal.signal(signal.SIGTERM, _on_term)
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                signal.signal(signal.SIGINT, _sigint_once)
    except (ValueError, OSError):
        pass
    _route_default_sigint()
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _excepthook
    os.register_at_fork(after_in_child=_after_fork)


def _excepthook(exc_type, exc, tb) -> None:
    """Python's own hook, less ``_sigint_once``'s frame at the end of a KeyboardInterrupt's traceback (the program's
    line is where Ctrl-C landed; the traceback's last line named tritondbg's handler)."""
    if exc_type is KeyboardInterrupt and tb is not None:
        tb = _without_handler(tb)
        if exc is not None:
            exc = exc.with_traceback(tb)
    sys.__excepthook__(exc_type, exc, tb)


def _without_handler(tb):
    """``tb`` without the ``_sigint_once`` entries at its end: the one raising, and the one a twin SIGINT landed in
    before it could note the first (CI: "exits.py, line 138, in _sigint_once" was the traceback's last line)."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    while entries and entries[-1].tb_frame.f_code is _sigint_once.__code__:
        entries.pop()
    if not entries:
        return None
    entries[-1].tb_next = None
    return entries[0]


def _route_default_sigint() -> None:
    """A program that installs Python's default SIGINT handler itself (one started with SIGINT ignored, a
    background job or a CI worker, takes Ctrl-C back so) gets ``_sigint_once`` in its place, and ``getsignal``
    still answers ``default_int_handler``: without it such a program took the group's SIGINT and tritondbg's copy
    of it, the second inside its own handling of the first. Any other handler is installed as given."""
    real_signal, real_getsignal = signal.signal, signal.getsignal

    def shown(handler):
        return signal.default_int_handler if handler is _sigint_once else handler

    def signal_(signalnum, handler):
        if signalnum == signal.SIGINT and handler is signal.default_int_handler:
            handler = _sigint_once
        return shown(real_signal(signalnum, handler))

    def getsignal(signalnum):
        return shown(real_getsignal(signalnum))

    signal_.__wrapped__, getsignal.__wrapped__ = real_signal, real_getsignal
    signal.signal, signal.getsignal = signal_, getsignal
