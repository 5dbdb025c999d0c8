"""The launch that made masked-lane poison, run again without it (program mode: ``checker.instrument_launch``).

The sanitizers fill the lanes a masked load leaves undefined (no ``other=``) with a NaN that names the load, so their
uses show. A program has no reference and must go on computing what it computes without tritondbg: the launch
runs again from the state before it with the plain interpreter's filler (0), the program keeps what that run wrote,
and that run is the reference the first run's tensors are checked against (``Sanitizer.check_program_outputs``).
The state before the launch comes back from what the sanitizer's journal recorded the first run overwrote
(``interp.undo``: CPU tensors), else from the bytes copied before it (``capture.copy_before``).
"""
from __future__ import annotations

from tritondbg.program import capture, filler_rerun

_KEPT_POISON = ("the launch's writes were too large to undo for a run without the poison: the program's "
                "tensors keep it (NaN in those lanes)")


def without_poison(proceed, san, snap, result, value):
    """The launch run again from the state before it with the plain interpreter's filler for undefined lanes (the
    program keeps what it writes); the first run's tensors are checked against it. Returns (value, error, note)
    of that run. When that state is not known (too much to copy or undo) the program keeps the poison and the first
    run's ``value``: a NaN that names a load counts wherever it is in the launch's tensors (against a reference
    with no NaN)."""
    import torch

    from tritondbg.interp import guard

    journal = san.journal
    tensors = _tensors(snap)
    if snap.before:
        restore = again = lambda: _restore(snap)  # noqa: E731
    elif journal is not None and journal.complete:
        from tritondbg.interp.undo import put_back

        restore, written = journal.undo, list(journal.entries)
        again = lambda: put_back(written)  # noqa: E731  (once more, for filler_rerun)
        tensors = {k: t for k, t in tensors.items() if journal.touched(*_extent(t))}
    else:
        san.check_program_outputs(tensors, {k: torch.zeros((), dtype=torch.float32).expand(t.shape)
                                            for k, t in tensors.items()})
        return value, None, _KEPT_POISON
    capture.sync(snap)
    poisoned = {k: t.clone() for k, t in tensors.items()}
    restore()
    value, error = None, None
    try:
        # the store lanes the sanitized run skipped (out of bounds, in another argument) stay skipped, as its
        # findings say (h88: they were written into that argument when a load out of bounds made this run)
        with filler_rerun.quietly(), guard.skipping(san.skipped_writes):
            value = proceed()
    except Exception as exc:  # noqa: BLE001 - the plain interpreter's error: the program sees it
        error = exc
        result.status, result.message = "error", f"{type(exc).__name__}: {exc}"
    if error is None:
        capture.sync(snap)
        san.check_program_outputs(poisoned, tensors)
        # undefined lanes that entered only reductions: does anything the launch wrote depend on them?
        filler_rerun.settle(san, proceed, snap, again)
    return value, error, None


def _restore(snap) -> None:
    """Put back the bytes the launch's tensors held before it (``capture.copy_before``)."""
    for g, before in zip(snap.groups, snap.before):
        capture.group_view(g).copy_(before)


def _extent(t) -> tuple[int, int]:
    """[first byte, end byte) of a tensor's elements."""
    lo = t.data_ptr()
    return lo, lo + max(capture._extent(t) - t.storage_offset() * t.element_size(), 0)


def _tensors(snap) -> dict:
    """Argument path -> floating-point tensor argument of the launch (each view once)."""
    paths = capture.arg_paths(snap.args)
    out, seen = {}, set()
    for i, (t, spec) in enumerate(zip(snap.tensors, snap.specs)):
        key = (spec["group"], spec["byte_offset"], spec["dtype"], tuple(spec["shape"]), tuple(spec["stride"]))
        if t.dtype.is_floating_point and key not in seen:
            seen.add(key)
            out[paths.get(i, f"tensor{i}")] = t
    return out
