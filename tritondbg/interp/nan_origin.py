"""Where the NaN/Inf an op made went: each value's non-finite lanes carry the id of the event that made them.

The nan_inf finding named the first op that made a NaN/Inf its inputs did not hold, whether or not that NaN went
anywhere. The guarded divide ``tl.where(x == 0, 0.0, a / x)`` makes 0/0 = NaN in lanes the ``where`` then drops:
in a correct kernel beside a real bug the finding named that line, not the ``sqrt`` of a negative whose NaN
reached the output (helper-47, unsloth's cross entropy: it sent the user into the right kernel's backward).

Each value with NaN/Inf lanes may carry ``ORIGIN`` (int32 per lane: the sanitizer's event id, 0 none). An op
whose result has such lanes gives them its own event's id where it made them, else the lowest (earliest) id of its
inputs' for the lane (elementwise; a reduction or a dot, whose inputs have another shape: the lowest id among its inputs), also
where it made them from an earlier event's Inf (inf / inf: the overflow is the cause);
``tl.where`` takes the id of the branch it selects; shape ops move ids as they move lanes. A store of lanes
holding an id marks that event as reaching memory (``Sanitizer.nonfinite_reached``), and the finding names the
first event that reached memory, when one did. A NaN loaded back from memory starts without an id: the store
already marked its event.
"""
from __future__ import annotations

import numpy as np

ORIGIN = "tdbg_nan_origin"


def origin_of(h):
    attr = getattr(h, "attr", None)
    return attr.get(ORIGIN) if attr else None


def _bcast(o, shape):
    try:
        return np.broadcast_to(o, shape)
    except ValueError:
        return None


def carried(ins, shape) -> np.ndarray | None:
    """Per lane of ``shape``: the lowest of its inputs' ids there (an input of another shape: its lowest id, everywhere)."""
    out = None
    for h in ins:
        o = origin_of(h)
        if o is None:
            continue
        b = _bcast(o, shape)
        if b is None:
            ids = o[o > 0]
            if not ids.size:
                continue
            b = np.full(shape, int(ids.min()), dtype=np.int32)
        # two causes in one lane: the earlier event (ids count up), the first op that made NaN (helper-143: l * alpha
        # + sum(p) named alpha's line, made after p's)
        out = np.array(b, dtype=np.int32) if out is None else np.where((out == 0) | ((b > 0) & (b < out)), b, out)
    return out


def give(out, nonfinite, ids) -> None:
    """Set ``out``'s ids to ``ids`` on its ``nonfinite`` lanes (dropped where there is none)."""
    if ids is None or not hasattr(out, "attr"):
        return
    ids = np.where(nonfinite, ids, 0).astype(np.int32)
    if ids.any():
        out.attr[ORIGIN] = ids
    else:
        out.attr.pop(ORIGIN, None)


def after_op(out, ins, nonfinite, new=None, event: int | None = None) -> None:
    """``out`` (with ``nonfinite`` lanes) made from ``ins``: ``new`` lanes are event ``event``'s, the rest carried."""
    ids = carried(ins, nonfinite.shape)
    if new is not None and event:  # a lane whose input held an earlier event's Inf (inf / inf) keeps that cause
        ids = np.where(new & (ids == 0) if ids is not None else new, np.int32(event),
                       ids if ids is not None else np.int32(0))
    give(out, nonfinite, ids)


def where(out, cond, a, b, nonfinite_of) -> None:
    """``tl.where(cond, a, b)``: each lane's id is the selected branch's."""
    oa, ob = origin_of(a), origin_of(b)
    if oa is None and ob is None:
        return
    nf = nonfinite_of(out)
    if nf is None:
        return
    shape = out.data.shape
    za = carried((a,), shape) if oa is not None else np.zeros(shape, np.int32)
    zb = carried((b,), shape) if ob is not None else np.zeros(shape, np.int32)
    c = _bcast(np.asarray(cond, dtype=bool), shape)
    if c is None:
        return
    give(out, nf[0] | nf[1], np.where(c, za, zb))


def moved(out, src, transform) -> None:
    """A shape op: the ids move with the lanes (``transform`` as for the pad shadow)."""
    o = origin_of(src)
    if o is None or not hasattr(out, "attr"):
        return
    try:
        out.attr[ORIGIN] = np.ascontiguousarray(transform(o)).astype(np.int32)
    except Exception:  # noqa: BLE001 - a shape this transform does not know: the ids are dropped
        pass


def stored(value, live, shape) -> set:
    """The event ids a store writes to memory (``live``: the store's mask over ``shape``, or None)."""
    o = origin_of(value)
    if o is None:
        return set()
    b = _bcast(o, shape)
    if b is None:
        return set()
    if live is not None:
        b = b[np.asarray(live, dtype=bool)]
    return {int(i) for i in np.unique(b) if i > 0}


def dot_products(a, b, idx) -> dict | None:
    """For lane ``idx`` of a dot: its row of ``a`` times its column of ``b``, the largest product and the sum of
    their magnitudes (an overflow of a float16 accumulation shows as that sum past the type's largest value)."""
    from tritondbg.interp import shadow_values

    fa, fb = shadow_values.as_float(a), shadow_values.as_float(b)
    if fa is None or fb is None or fa.ndim < 2 or fb.ndim < 2:
        return None
    try:
        row, col = fa[idx[:-2] + (idx[-2],)], fb[idx[:-2] + (slice(None), idx[-1])]
        with np.errstate(over="ignore", invalid="ignore"):
            prod = np.abs(row.astype(np.float64) * col.astype(np.float64))
    except (IndexError, ValueError):
        return None
    if np.isinf(prod).any():
        return None
    prod = prod[~np.isnan(prod)]  # (the poison of undefined lanes times an exact 0: shadow's times_zero)
    return dict(max_product=float(prod.max(initial=0.0)), abs_sum=float(prod.sum()))
