"""Shifts by the type's width or more, or by a negative amount: ``x >> 56`` on an int32 (helper-108: GPTQModel's
unpacking with its shifter scaled twice). LLVM makes such a shift poison and PTX clamps the amount, while numpy here
gives 0 (or -1): the interpreter's values are not the GPU's, and the code's are undefined.

Such lanes are marked in the result's shadow as undefined, under an id of the shift's line (as a masked load's
undefined lanes are, sanitize.poison_for), so a kernel that drops them later (a store mask, ``tl.where``: bits past
a row's end shifted out, helper-110) is not told; where they reach a store, an atomic or a reduction, a warning at
the shift's line says where. Padding lanes (a masked load's ``other=``) are no such lanes."""
from __future__ import annotations

import numpy as np

from tritondbg.interp.shadow_values import _set_pad, noted, pad_of, spoilt


def wrap(orig, op):
    """The interpreter's ``create_shl`` / ``create_lshr`` / ``create_ashr`` (ashr makes new handles: checked on
    the operands it was given), its result's bad lanes marked."""
    return noted(orig, lambda args, out: mark(args[0], args[1], out, op))


def mark(lhs, rhs, out, op) -> None:
    from tritondbg.interp.shadow_values import _sink

    san = _sink["san"]
    if san is None or lhs.data.dtype.kind not in "iu" or rhs.data.dtype.kind not in "iu":
        return
    if pad_of(out) is None and (pad_of(lhs) is not None or pad_of(rhs) is not None):
        # create_ashr runs binary_op on new handles, without the operands' shadow: a masked int32 load's undefined
        # lanes were lost at `(q >> 4) & 0xF` (helper-150: GPTQ / AWQ unpacking)
        from tritondbg.interp.shadow_pads import _elementwise_pad

        _elementwise_pad(out, (lhs, rhs))
    width = lhs.data.dtype.itemsize * 8
    amount = rhs.data.astype(np.int64, copy=False)
    bad = (amount < 0) | (amount >= width)
    if not np.any(bad):
        return
    shape = np.shape(out.data)
    found = spoilt(bad, shape, (lhs, rhs))
    if found is None:
        return
    bad, old, site, idx = found
    sid = san.lane_site(site, "shift", dict(op="<<" if op is np.left_shift else ">>", width=width, dtype=str(lhs.data.dtype),
                                    example=(list(idx), int(np.broadcast_to(amount, shape)[idx]))))
    _set_pad(out, np.where(bad, sid + 2, old).astype(np.uint8))


def check_store(san, ptrs, value, live) -> None:
    """A store (or atomic) of lanes a shift left undefined: the shift's warning, with the element they land in."""
    from tritondbg.interp.uninit_reads import tell_stored

    tell_stored(san, ptrs, value, live, san.lane_sids, lambda sid: san._poison_entry(san.poison_info[sid]))


def message(e: dict) -> str:
    idx, amount = e["example"]
    where = []
    if e.get("stored"):
        where.append(f"stored at line {e['stored_at']} into {e['stored']}")
    if e.get("reaches"):
        where.append("they enter " + ", ".join(e["reaches"]))
    used = f"; {'; '.join(where)}" if where else ""
    return (f"{e['op']} by {amount} on {e['dtype']} (lane {tuple(idx)}; {e['lanes']} lane(s) used shift by "
            f"{e['width']} or more, or by a negative amount{used}): such a shift is undefined (LLVM makes it poison; "
            f"PTX clamps the amount), so the interpreter's value there (numpy's) need not be the GPU's. Keep the "
            f"amount in 0..{e['width'] - 1} (a shifter scaled twice? a pack of {e['width']}-bit words?), or mask "
            "those lanes before the shift")
