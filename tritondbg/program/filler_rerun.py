"""Program mode: undefined lanes that entered only reductions whose results reach nothing the launch wrote.

A masked load without ``other=`` whose undefined lanes enter a reduction is a ``poison`` error where the result is
not known to be dropped. helper-104 found the case where it is: OpenAI's triton_kernels computes an exclusive
prefix sum block by block (``out = tl.cumsum(x) - x + running; running += tl.sum(x)``), and the last block's
undefined tail enters ``running``, which nothing reads after the loop: an error on every ``topk``, correct code.

Such an entry (the poison's only uses reductions, no output holding it) is put to the test here: the launch, after
the run the program keeps (the plain interpreter's filler, 0, in those lanes), is run again from the state before
it with other values there (``FILLS``); when the launch's memory ends the same each time, nothing it wrote depends
on those lanes in this run, and the entry becomes a warning saying so. A reproducer's replay (the kernel form:
``tritondbg interpret NAME.py``, ``check``'s sanitize gate) puts its launch to the same test on fresh copies of the
captured inputs (``settle_fresh``), so the reproducer of such a launch says what its program run said. A value laundered into a stored result
(``tl.maximum(x, 0)``, a ``tl.where``) changes with the filler and stays an error; a ``tl.max`` / ``tl.min`` is
never put to this test (a filler that loses to every real value proves nothing). The program's memory ends as the
kept run left it, byte for byte.
"""
from __future__ import annotations

import contextlib
import io

FILLS = (7, -7)  # the sign and seed of each run's lane values, 1..8 and -1..-8 drawn per lane (neither the
                 # interpreter's 0 nor a NaN; either sign, for a clamp after; no two loads' lanes cancel out)
_SUMS = ("tl.sum", "tl.dot", "tl.cumsum")  # a max / min may ignore a filler that loses to every real value


def candidates(san) -> list[dict]:
    """The launch's poison entries whose undefined lanes entered only sums (or dots) and reached no output. None
    where the launch stored out of bounds: its plain re-runs would write there (the sanitized run skipped it)."""
    if any(len(v) for v in getattr(san, "skipped_writes", {}).values()):
        return []
    return [e for e in san.agg.values()
            if e["kind"] == "poison" and e["op"] == "load" and not e.get("output") and e.get("reaches")
            and all(r.startswith(_SUMS) for r in e["reaches"]) and e.get("severity", "error") == "error"]


@contextlib.contextmanager
def quietly():
    """A launch run again (the sanitized run printed already, a kernel's Python ``print`` too, and numpy's overflow
    warnings were said there; helper-148: a puzzle's print() ran twice); ``--trace`` / ``--watch`` leave it out."""
    import numpy as np

    from tritondbg.interp import hooks, shims

    stream = shims._prints["stream"]
    shims.set_print_stream(io.StringIO())
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"), hooks.rerunning(), \
                contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        shims.set_print_stream(stream)
        shims.take_prints()


def settle(san, proceed, snap, restore) -> None:
    """Run the launch again with each of ``FILLS`` in its undefined lanes (``restore`` puts back the bytes before
    it); the launch's memory ends as the kept run left it (by storage bytes: a Parameter, an expanded view)."""
    import torch

    from tritondbg.interp import memops
    from tritondbg.program import capture

    entries = candidates(san)
    if not entries or not snap.groups:
        return
    capture.sync(snap)
    views = [capture.group_view(g) for g in snap.groups]
    kept = [v.clone() for v in views]
    installed = bool(memops._saved)  # (the sanitizer's hooks are off once its launch ended: on for these runs)
    if not installed:
        memops.install()

    def again():
        restore()
        proceed()
        capture.sync(snap)
        return views

    try:
        inert = _same_each_fill(FILLS, again, kept)
    finally:
        if not installed:
            memops.uninstall()
        with torch.no_grad():
            for v, k in zip(views, kept):
                v.copy_(k)
        capture.sync(snap)
    if inert:
        _mark(entries)


def _same_each_fill(fills, run, want=None) -> bool:
    """Whether ``run()`` (the launch again, returning the bytes it leaves) gives ``want`` (else its first run's
    bytes) with each of ``fills`` in the undefined lanes; an error of one of those runs: False (the lanes matter)."""
    import torch

    from tritondbg.interp import memops

    try:
        for fill in fills:
            memops._plain["fill"], memops._plain["rng"] = fill, None  # (a fresh draw of lane values per run)
            with quietly():
                got = run()
            if want is None:
                want = [g.clone() for g in got]
            elif not all(torch.equal(a, b) for a, b in zip(want, got)):
                return False
        return True
    except Exception:  # noqa: BLE001 - another filler made an error: the lanes matter
        return False
    finally:
        memops._plain["fill"] = None


def _mark(entries) -> None:
    for e in entries:
        e["severity"], e["inert"] = "warning", True


def settle_fresh(san, run) -> None:
    """A reproducer's replay: ``run()`` launches once more on fresh copies of the captured inputs and returns them;
    run with the interpreter's filler and each of ``FILLS`` (the sanitizer suspended), the same bytes each time
    make the entries warnings, as ``settle`` does in program mode."""
    from tritondbg.interp import guard, sanitize

    entries = candidates(san)
    if not entries:
        return
    # what the memory guard kept out of these runs is the sanitized run's again, told once (helper-110)
    counted = (guard._state["masked"], dict(guard._state["where"]))
    try:
        with sanitize.suspended():
            inert = _same_each_fill((None, *FILLS), lambda: [_bytes(t) for t in run()])
    finally:
        guard._state["masked"], guard._state["where"] = counted
    if inert:
        _mark(entries)


def _bytes(t):
    import torch

    t = t.detach().cpu().contiguous().reshape(-1)
    return t.view(torch.uint8) if t.numel() else t
