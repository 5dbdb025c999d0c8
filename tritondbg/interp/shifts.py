"""Shifts by the type's width or more, or by a negative amount: ``x >> 56`` on an int32 (helper-108: GPTQModel's
unpacking with its shifter scaled twice). LLVM makes such a shift poison and PTX clamps the amount, while numpy here
gives 0 (or -1): the interpreter's values are not the GPU's, and the code's are undefined. A warning at the shift's
line, with its first such lane (the kernel may drop those lanes later), not in padding lanes (a masked load's
``other=``), which real code shifts by anything."""
from __future__ import annotations

import numpy as np

from tritondbg.interp.shadow_values import _bcast, _site_frame, pad_of


def wrap(orig, op):
    """The interpreter's ``create_shl`` / ``create_lshr`` / ``create_ashr``, checked first."""
    def shift(self, lhs, rhs):
        try:
            check(lhs, rhs, op)
        except Exception:  # shadow bookkeeping must never break a kernel
            from tritondbg.interp.shadow_values import _debug_raise

            _debug_raise()
        return orig(self, lhs, rhs)
    return shift


def check(lhs, rhs, op) -> None:
    """``lhs`` shifted by ``rhs`` (interpreter handles) with numpy's ``op``; told to the active sanitizer."""
    from tritondbg.interp.shadow_values import _sink

    san = _sink["san"]
    if san is None or lhs.data.dtype.kind not in "iu" or rhs.data.dtype.kind not in "iu":
        return
    width = lhs.data.dtype.itemsize * 8
    amount = rhs.data.astype(np.int64, copy=False)
    bad = (amount < 0) | (amount >= width)
    if not np.any(bad):
        return
    shape = np.broadcast_shapes(np.shape(lhs.data), np.shape(amount))
    bad = np.broadcast_to(bad, shape)
    for h in (lhs, rhs):
        p = pad_of(h)
        if p is not None:
            bad = bad & ~(_bcast(p, shape) >= 1)
    if not bad.any():
        return
    frame = _site_frame()
    site = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name) if frame else ("?", 0, "?")
    e = san._entry("shift", site, None, "<<" if op is np.left_shift else ">>", example=None, width=width,
                   dtype=str(lhs.data.dtype))
    e["severity"] = "warning"
    e["lanes"] += int(bad.sum())
    if e["example"] is None:
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        e["example"] = (list(idx), int(np.broadcast_to(amount, shape)[idx]))


def message(e: dict) -> str:
    idx, amount = e["example"]
    return (f"{e['op']} by {amount} on {e['dtype']} (lane {tuple(idx)}; {e['lanes']} lane(s) shift by {e['width']} "
            f"or more, or by a negative amount): such a shift is undefined (LLVM makes it poison; PTX clamps the "
            f"amount), so the interpreter's value there (numpy's) need not be the GPU's. Keep the amount in "
            f"0..{e['width'] - 1} (a shifter scaled twice? a pack of {e['width']}-bit words?), or mask those lanes "
            "before the shift")
