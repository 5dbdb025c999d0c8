"""Programs that wait for each other.

The interpreter runs a launch's programs one after another, so a program that polls memory only another program of
the same launch would change (a grid-wide barrier, a cooperative launch's arrival counter, a flag set by a later
program) waits forever: nothing else runs while it spins. ``SpinWatch`` counts, per program, atomics and volatile
loads that read the same values from the same addresses at the same line; past ``SPIN_LIMIT`` of them in a row the
launch stops with ``ProgramsWait``, which says so, instead of hanging.

Under the sanitizers the memory-op wrappers (memops.py) poll the sanitizer's watch. A run without them (``capture``,
``interpret --no-sanitize``) has the ``Spins`` instrument: the same watch over atomics and volatile loads only
(helper-141: ``capture`` of such a kernel hung with no line until killed, where ``interpret`` named the wait);
program mode enters it around every interpreted launch (attach.py), where it stands aside for a sanitizer.
"""
from __future__ import annotations

import contextlib

import numpy as np

from tritondbg.errors import KernelError
from tritondbg.interp import hooks
from tritondbg.interp.hooks import Listener
from tritondbg.interp.values import element_width
from tritondbg.runner import Instrument

SPIN_LIMIT = 5000  # atomics in a row reading the same values at one line (one program) before the launch stops


def atomic_name(rmw_op) -> str:
    """``tl.atomic_add`` ... for the interpreter's read-modify-write op (``RMW_OP.FADD`` and the like)."""
    op = str(rmw_op).rsplit(".", 1)[-1].lower()
    return "tl.atomic_" + {"fadd": "add", "umax": "max", "umin": "min"}.get(op, op)


class ProgramsWait(KernelError, RuntimeError):
    """A program spins on memory only another program of the same launch could change (interpreter: never)."""


class SpinWatch:
    """The running program's last atomic (line, addresses, values read) and how many times in a row it repeated."""

    def __init__(self):
        self.last = None
        self.count = 0

    def poll(self, san, what: str, ptr, old, live) -> None:
        """An atomic (``what``: 'tl.atomic_add', ...) or a volatile load that read ``old`` through ``ptr``."""
        from tritondbg.interp import frames

        addrs = np.asarray(ptr.data)
        vals = np.asarray(old.data)
        if live is not None:
            keep = np.broadcast_to(np.asarray(live, dtype=bool), vals.shape)
            addrs, vals = np.broadcast_to(addrs, vals.shape)[keep], vals[keep]
        key = (addrs.tobytes(), vals.tobytes())
        if key != (self.last and self.last[1:]):  # the line only matters when the rest repeats
            self.last, self.count = (None, *key), 0
            return
        site = frames.site()
        if self.last[0] not in (None, site[:2]):
            self.last, self.count = (site[:2], *key), 0
            return
        self.last = (site[:2], *key)
        self.count += 1
        if self.count < SPIN_LIMIT:
            return
        width = element_width(ptr.get_element_ty())
        first = int(addrs.reshape(-1)[0]) if addrs.size else 0
        desc = san.launch.argmap().describe(first, width)[1] if san.launch is not None else "memory"
        value = vals.reshape(-1)[0].item() if vals.size else "?"
        kernel = san.launch.kernel if san.launch else "the kernel"
        taken = san.abandoned.get(first)
        if taken is not None:  # an earlier program took this word with a CAS and ended holding it
            owner, at = taken
            where = f" at line {at[1]}" if at else ""
            raise ProgramsWait(
                f"program {tuple(san.pid)} of {kernel} ran {what} on {desc} at line {site[1]} {self.count + 1} "
                f"times in a row and read {value} every time: program {tuple(owner)} took that lock with "
                f"tl.atomic_cas{where} and ended without giving it back, so no program can take it, on a GPU as "
                "here. Release it at the end of the critical section (tl.atomic_xchg(lock, 0), or a CAS back)")
        raise ProgramsWait(
            f"program {tuple(san.pid)} of {kernel} ran {what} on "
            f"{desc} at line {site[1]} {self.count + 1} times in a row and read {value} every time: it waits for "
            "another program of this launch, and the interpreter runs programs one after another, so the wait can "
            "never end. A kernel whose programs wait for each other (a grid-wide barrier, a cooperative launch) "
            "runs on a GPU only; under the interpreter, split it into launches at the barrier")


class _Plain(Listener):
    """What ``SpinWatch.poll`` reads of a sanitizer, for a run without one: the launch and program running now."""

    abandoned: dict = {}

    def __init__(self):
        self.pid, self.spin = None, SpinWatch()

    @property
    def launch(self):
        return hooks.current_launch()

    def poll(self, what: str, ptr, old, live) -> None:
        pid = hooks.current_pid()
        if pid != self.pid:  # another program: its repeats start from none
            self.pid, self.spin = pid, SpinWatch()
        if self.launch is not None:
            self.spin.poll(self, what, ptr, old, live)


_NAMES = ("create_atomic_rmw", "create_atomic_cas", "create_masked_load")


class Spins(Instrument):
    """The spin watch alone, for runs without the sanitizers (they poll their own)."""

    name = "spins"

    @contextlib.contextmanager
    def active(self, scenario, case, inputs):
        from triton.runtime import interpreter as I

        from tritondbg.interp.memops import _active

        B, plain = I.InterpreterBuilder, _Plain()
        saved = {n: B.__dict__[n] for n in _NAMES if n in B.__dict__}

        def create_atomic_rmw(self, rmw_op, ptr, val, mask, *rest, _orig=saved.get("create_atomic_rmw"), **kw):
            old = _orig(self, rmw_op, ptr, val, mask, *rest, **kw)
            if _active["san"] is None:
                plain.poll(atomic_name(rmw_op), ptr, old, None if mask is None else mask.data)
            return old

        def create_atomic_cas(self, ptr, cmp, val, *rest, _orig=saved.get("create_atomic_cas"), **kw):
            old = _orig(self, ptr, cmp, val, *rest, **kw)
            if _active["san"] is None:
                plain.poll("tl.atomic_cas", ptr, old, None)
            return old

        def create_masked_load(self, ptrs, mask, other, *rest, _orig=saved.get("create_masked_load"), **kw):
            out = _orig(self, ptrs, mask, other, *rest, **kw)
            if rest and rest[-1] is True and _active["san"] is None:  # is_volatile: a poll?
                plain.poll("a volatile tl.load", ptrs, out, None if mask is None else mask.data)
            return out

        mine = dict(create_atomic_rmw=create_atomic_rmw, create_atomic_cas=create_atomic_cas,
                    create_masked_load=create_masked_load)
        for n in saved:
            setattr(B, n, mine[n])
        try:
            with hooks.listening(plain):  # (the launch and program running: the interpreter's grid hooks)
                yield self
        finally:
            for n, fn in saved.items():
                setattr(B, n, fn)
