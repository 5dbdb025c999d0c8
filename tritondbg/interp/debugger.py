"""pdb at a kernel line (``tritondbg interpret --break LINE``), with commands for block tensors.

The stepper's trace function calls ``KernelPdb.interact(frame)`` when the selected program reaches a
breakpoint; pdb runs its command loop in the kernel's frame (``p``, ``l``, ``w``... work as usual) and the
stepper resumes when the user continues. Stepping (``n``/``s``) is the stepper's: it stops at the next
kernel line (``s``: in any kernel function, ``n``: in this one), so stepping never walks into the
interpreter's own Python. Extra commands:

    show EXPR      the values of a block as an array (bf16/fp8 decoded), e.g. ``show acc``
    summary EXPR   one line: dtype, shape, min/max/mean, NaN/Inf, a few values
    ptr EXPR       which argument elements a pointer block points at
    pid            the program instance being debugged
"""
from __future__ import annotations

import pdb

import numpy as np

from tritondbg.interp import values


class KernelPdb(pdb.Pdb):
    """pdb whose continue/step/next/quit are driven by the stepper instead of bdb's own tracing."""

    def __init__(self, stepper, stdin=None, stdout=None):
        super().__init__(stdin=stdin, stdout=stdout, nosigint=True, readrc=False)
        self.reset()  # bdb's state (botframe, stop info) as set_trace would leave it, without its tracing
        self.stepper = stepper
        self.mode = None          # None: run to the next breakpoint; "step"; ("next", frame)
        self.quit_requested = False
        self.detached = False     # stdin closed: stop asking
        self.prompt = "(Pdb) "

    # -- driven by the stepper --------------------------------------------------------------------------
    def should_stop(self, frame) -> bool:
        if self.mode == "step":
            return True
        return isinstance(self.mode, tuple) and self.mode[1] is frame

    def frame_returned(self, frame) -> None:
        """``next`` out of a kernel function stops at the caller's next line."""
        if isinstance(self.mode, tuple) and self.mode[1] is frame:
            self.mode = "step"

    def interact(self, frame, reason: str) -> None:
        if self.detached:
            return
        self.mode = None
        pid = self.stepper.pid
        self.message(f"tritondbg: {reason} in pid {tuple(pid)}; `show NAME` prints a block as an array, "
                     f"`summary NAME`, `ptr NAME`, `c` continues")
        self.interaction(frame, None)

    # -- helpers for block tensors ----------------------------------------------------------------------
    def _value(self, arg: str):
        try:
            return self._getval(arg)
        except Exception:  # _getval already printed the error
            return None

    def do_show(self, arg):
        """show EXPR
        Print the values of a block tensor as an array (bf16/fp8 decoded to float32)."""
        v = self._value(arg)
        if v is None:
            return
        arr = values.array(v)
        if arr is None:
            self.message(repr(v))
            return
        s = values.summarize(v)
        self.message(f"{arg}: {values.text(s).split('  [')[0]}")
        with np.printoptions(threshold=1 << 20, linewidth=120, precision=5, suppress=True):
            self.message(np.array2string(np.asarray(arr)))

    def do_summary(self, arg):
        """summary EXPR
        One line about a value: dtype, shape, min/max/mean, NaN/Inf counts, a few values."""
        v = self._value(arg)
        if v is not None:
            self.message(f"{arg}: {values.text(values.summarize(v, self.stepper.argmap()))}")

    def do_ptr(self, arg):
        """ptr EXPR
        Where the lanes of a pointer block point: the argument tensor and element of its first and last lane."""
        v = self._value(arg)
        if v is not None:
            s = values.summarize(v, self.stepper.argmap())
            self.message(f"{arg}: {s.get('points_to', values.text(s))}")

    def do_pid(self, arg):
        """pid
        The program instance (pid x, y, z) being debugged, and the launch's grid."""
        launch = self.stepper.launch
        grid = f", grid {launch.grid}" if launch else ""
        self.message(f"pid {tuple(self.stepper.pid)}{grid}")

    # -- flow: the stepper resumes the kernel -----------------------------------------------------------
    def do_continue(self, arg):
        """c(ont(inue))
        Run to the next breakpoint of this program."""
        self.mode = None
        return 1

    do_c = do_cont = do_continue

    def do_step(self, arg):
        """s(tep)
        Stop at the next kernel line, in this or a called kernel function."""
        self.mode = "step"
        return 1

    do_s = do_step

    def do_next(self, arg):
        """n(ext)
        Stop at the next line of this kernel function."""
        self.mode = ("next", self.curframe)
        return 1

    do_n = do_next

    def do_quit(self, arg):
        """q(uit)
        Stop the kernel here (the run ends with an error)."""
        self.quit_requested = True
        return 1

    do_q = do_exit = do_quit

    def do_EOF(self, arg):
        """EOF: the input is closed: continue without stopping again."""
        self.message("")
        self.detached = True
        self.mode = None
        return 1
