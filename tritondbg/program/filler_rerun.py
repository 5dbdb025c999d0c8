"""Program mode: undefined lanes that entered only reductions whose results reach nothing the launch wrote.

A masked load without ``other=`` whose undefined lanes enter a reduction is a ``poison`` error where the result is
not known to be dropped. helper-104 found the case where it is: OpenAI's triton_kernels computes an exclusive
prefix sum block by block (``out = tl.cumsum(x) - x + running; running += tl.sum(x)``), and the last block's
undefined tail enters ``running``, which nothing reads after the loop: an error on every ``topk``, correct code.

Such an entry (the poison's only uses reductions, no output holding it) is put to the test here: the launch, after
the run the program keeps (the plain interpreter's filler, 0, in those lanes), is run once more from the state
before it with another value there (``FILL``); when every tensor of the launch ends the same, nothing it wrote
depends on those lanes in this run, and the entry becomes a warning saying so. A value laundered into the result
(``tl.maximum(x, 0)``, a ``tl.where``, an integer max) changes with the filler and stays an error. Only where the
launch's bytes before it were copied (``snap.before``); the program's tensors end as the kept run left them.
"""
from __future__ import annotations

import io

FILL = 7  # (as an fp value 7.0: a value neither the interpreter's 0 nor a NaN)


def candidates(san) -> list[dict]:
    """The launch's poison entries whose undefined lanes entered reductions only and reached no output."""
    return [e for e in san.agg.values()
            if e["kind"] == "poison" and e["op"] == "load" and not e.get("output") and e.get("reaches")
            and all(r.startswith("tl.") for r in e["reaches"]) and e.get("severity", "error") == "error"]


def settle(san, proceed, snap, restore, tensors: dict) -> None:
    """Run the launch again with ``FILL`` in its undefined lanes (``restore`` puts back the bytes before it);
    ``tensors``: every tensor argument, as the kept run left them (they are left so again)."""
    import numpy as np

    from tritondbg.interp import memops, shims
    from tritondbg.interp.output_checks import same_bytes
    from tritondbg.program import capture

    entries = candidates(san)
    if not entries or not tensors:
        return
    kept = {k: t.clone() for k, t in tensors.items()}
    restore()
    stream = shims._prints["stream"]
    shims.set_print_stream(io.StringIO())  # (printed once already, by the sanitized run)
    installed = bool(memops._saved)  # (the sanitizer's hooks are off once its launch ended: on for this run)
    if not installed:
        memops.install()
    memops._plain["fill"] = FILL
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            proceed()
        capture.sync(snap)
        inert = same_bytes(tensors, kept)
    except Exception:  # noqa: BLE001 - the other filler made an error: the lanes matter
        inert = False
    finally:
        memops._plain["fill"] = None
        if not installed:
            memops.uninstall()
        shims.set_print_stream(stream)
        shims.take_prints()
        for k, t in tensors.items():
            t.copy_(kept[k])
        capture.sync(snap)
    if inert:
        for e in entries:
            e["severity"], e["inert"] = "warning", True
