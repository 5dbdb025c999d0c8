"""The pad shadow of elementwise ops (shadow.py wraps the builder's ops and calls these): a result lane is
padding or undefined where an operand's is, except where the result does not depend on that operand's value
(``_value_aware_pad``: x * 0, x + 0 onto a lane's own data, x + inf, the operand max/min did not choose, m & cond
where m is False); and an undefined lane times an exact 0 (``_times_zero``), 0 for any finite leftover: a warning,
not poison."""
from __future__ import annotations

import numpy as np

from tritondbg.interp.shadow_values import (_bcast, _max_pads, _nonzero, _set_pad, _sink, _site_frame, as_float,
                                            from_indices, pad_of, undefined_lanes)


def _elementwise_pad(out, ins, op=None) -> None:
    pads = [pad_of(h) for h in ins]
    if all(p is None for p in pads):
        return
    shape = out.data.shape
    if op == "fma" and len(ins) == 3:
        p = _fma_pad(ins, pads, shape)
    elif len(ins) == 2 and op in _VALUE_AWARE:
        p = _value_aware_pad(op, ins, pads, shape)
    else:
        p = _max_pads(pads, shape)
    if p is not None:
        _set_pad(out, np.asarray(p, dtype=np.uint8))
        if len(ins) >= 2:
            _note_merged(pads, p, shape)


def _note_merged(pads, p, shape) -> None:
    """A lane holds one poison id: where an op meets the undefined lanes of two loads (``w * dy + w1 * dy1``), the
    id it keeps stands for the other too (``san.merged_sids``), so a reduction they reach names both loads
    (helper-137: flash-attn's layer-norm backward had two such loads and only one was told)."""
    san = _sink["san"]
    if san is None or not isinstance(p, np.ndarray):
        return
    kept = p >= 3
    if not kept.any():
        return
    for q in pads:
        q = _bcast(q, shape)
        if q is None:
            continue
        lost = kept & (q >= 3) & (q != p)
        if lost.any():
            for a, b in set(zip(p[lost].tolist(), q[lost].tolist())):
                san.merged_sids.setdefault(int(a) - 2, set()).add(int(b) - 2)


def with_merged(merged: dict, lanes: dict) -> dict:
    """``lanes`` (poison id -> lanes) with the ids merged into them (``_note_merged``), each given the lanes of
    the id that kept it."""
    lanes, todo = dict(lanes), list(lanes)
    while todo:
        kept = todo.pop()
        for other in merged.get(kept, ()):
            if other not in lanes:
                lanes[other] = lanes[kept]
                todo.append(other)
    return lanes


_VALUE_AWARE = (np.multiply, np.add, np.subtract, np.maximum, np.minimum, np.fmax, np.fmin, np.bitwise_and,
                np.bitwise_or)


def _value_aware_pad(op, ins, pads, shape):
    """Lanes whose result does not depend on the padded operand are real again:
    x * 0 (the other factor exactly 0), x + 0 / x - 0 (the padded operand exactly 0, e.g. ``acc += load``
    of a zero-filled tail), max/min (the padded operand is not the one chosen, e.g. other=-inf)."""
    a, b = ins
    pa, pb = _bcast(pads[0], shape), _bcast(pads[1], shape)
    zero = np.uint8(0)
    if op is np.multiply:  # depends on a padded factor only where the other factor is not 0; an undefined
        # factor (k >= 3) is garbage on the GPU, Inf or NaN as well: times 0 it stays undefined (``_times_zero``
        # then gives those lanes their own id: 0 for finite garbage, a warning where they reach a result)
        # (both factors padding: a value for an element that does not exist, padding still; a padded Inf or NaN
        # times 0 is NaN: padding still)
        ta = np.where(_bcast(_nonzero(b), shape) | (pa >= 3) | _padded(pb) | _nonfinite_lanes(a, shape), pa,
                      zero) if pa is not None else None
        tb = np.where(_bcast(_nonzero(a), shape) | (pb >= 3) | _padded(pa) | _nonfinite_lanes(b, shape), pb,
                      zero) if pb is not None else None
    elif op in (np.add, np.subtract):
        # a padded term that is exactly 0 adds nothing to a lane that holds its own data (``acc += load``
        # of a zero-filled tail); against a value the same along an axis (a scalar, ``x - mean[:, None]``, a
        # mask row ``qk += tl.where(cols < n, 0, -inf)``), or against a value made from indices and constants
        # only (a causal mask ``tl.where(rows[:, None] >= cols[None, :], 0, -inf)``, which varies along both axes)
        # the lane stays padding: its result is a value for an element that does not exist, and a row of padding
        # (a query row past the end) stays one
        ta = (np.where(_bcast(_nonzero(a), shape) | _padded(pb), pa, zero) if not _no_data(b, shape) else pa) \
            if pa is not None else None
        tb = (np.where(_bcast(_nonzero(b), shape) | _padded(pa), pb, zero) if not _no_data(a, shape) else pb) \
            if pb is not None else None
        ta, tb = _swamped(a, b, ta, shape), _swamped(b, a, tb, shape)
        ta, tb = _times_zero_added(ta, tb, pa, pb)
    elif op in (np.bitwise_and, np.bitwise_or):  # x & 0 is 0, a boolean x | True is True, whatever x holds: a
        # mask and-ed with a comparison of padded or undefined lanes (``m & (x > 0)``) is real where m is False
        def decides(h):
            d = np.asarray(h.data)
            if op is np.bitwise_and:
                return d == 0
            return d if d.dtype == np.bool_ else np.zeros(d.shape, bool)
        ta = np.where(_bcast(decides(b), shape), zero, pa) if pa is not None else None
        tb = np.where(_bcast(decides(a), shape), zero, pb) if pb is not None else None
    else:  # max/min: the result is the chosen operand
        fa, fb = as_float(a), as_float(b)
        if fa is None or fb is None:
            return _max_pads(pads, shape)
        fa, fb = np.broadcast_to(fa, shape), np.broadcast_to(fb, shape)
        za = pa if pa is not None else np.zeros(shape, np.uint8)
        zb = pb if pb is not None else np.zeros(shape, np.uint8)
        take_a = fa > fb if op in (np.maximum, np.fmax) else fa < fb
        tie = fa == fb
        chosen = np.where(tie, np.minimum(za, zb), np.where(take_a, za, zb))
        # an undefined operand (k >= 3) holds garbage on the GPU, which may win whatever the interpreter's
        # poison did (``tl.maximum(x, 0.0)`` drops the NaN): the result stays undefined
        return np.maximum(chosen, np.maximum(np.where(za >= 3, za, zero), np.where(zb >= 3, zb, zero)))
    if ta is None:
        return tb
    return ta if tb is None else np.maximum(ta, tb)


def _times_zero_added(ta, tb, pa, pb):
    """``x + y`` where x's lane is undefined lanes times an exact 0 (``_times_zero``: it holds 0) and y's is
    defined (real, a fill or padding): on the GPU the lane is y's value for finite garbage, so it takes y's pad.
    helper-114: trident's layer-norm backward adds such products to the padding's ``x - mean``, whose -mean the
    row's tl.sum then took; the lane stayed undefined, and the masked_reduction there went untold (a warning said
    the results were right). The products are not told at the addition: lanes a store's mask then drops reach
    nothing (helper-118: that warning failed --strict on correct code)."""
    san = _sink["san"]
    tz = getattr(san, "times_zero_sids", None)
    if not tz or ta is None or tb is None:
        return ta, tb
    ids = np.fromiter(tz, dtype=np.int64) + 2
    out = []
    for mine, other, p_other in ((ta, tb, pb), (tb, ta, pa)):
        hit = np.isin(mine, ids) & (p_other < 3)
        if hit.any():
            mine = np.where(hit, np.uint8(0), mine)
        out.append(mine)
    return out[0], out[1]


def _fma_pad(ins, pads, shape):
    """``tl.fma(a, b, c)`` as ``a * b + c``: the product's pad by the multiply rule, then the add rule against c
    (unsloth's RMSNorm sums ``fma(a_hi, b_hi, a_lo * b_lo)`` where the hi half is padding, exactly 0: the result
    is c's own data; every lane was padding when an operand's pad was taken whole)."""
    import types

    a, b, c = ins
    fa, fb = as_float(a), as_float(b)
    if fa is None or fb is None:
        return _max_pads(pads, shape)
    p_ab = _value_aware_pad(np.multiply, (a, b), pads[:2], shape)
    with np.errstate(all="ignore"):
        product = types.SimpleNamespace(data=np.broadcast_to(fa * fb, shape), dtype=None)
    return _value_aware_pad(np.add, (product, c), [p_ab, pads[2]], shape)


def _padded(p):
    """Lanes an operand's pad marks (False everywhere for an operand without one)."""
    return p > 0 if p is not None else False


def _no_data(h, shape) -> bool:
    """A term that is no element's own data: index-derived, or the same along an axis."""
    return from_indices(h) or _spread(h, shape)


def _spread(h, shape) -> bool:
    """A value the same along some axis of the op's shape (a scalar, a row or a column broadcast): a lane of it
    is no element's own data."""
    d = h.data
    if d.size <= 1:
        return True
    d = np.broadcast_to(d, shape) if d.shape != shape else d
    for ax, n in enumerate(shape):
        if n > 1 and bool((d == d.take([0], axis=ax)).all()):
            return True
    return False


def _nonfinite_lanes(h, shape):
    f = as_float(h)
    return False if f is None else ~np.isfinite(np.broadcast_to(f, shape))


def _swamped(x, other, tx, shape):
    """``x + inf`` (or ``- inf``) is that Inf whatever finite value x holds: where x is defined padding and the
    other term a real (or filled) Inf, x's pad becomes a fill (1), as ``tl.where(mask, x, -inf)`` makes it: no
    longer padding a reduction counts, nor a lane that makes a padded row real (an additive mask
    ``qk += tl.where(cols < n, 0, -inf)`` over a padded k tail or a padded query row)."""
    if tx is None:
        return None
    fx, fo = as_float(x), as_float(other)
    if fx is None or fo is None:
        return tx
    po = _bcast(pad_of(other), shape)
    po = np.zeros(shape, np.uint8) if po is None else po
    # an integer load's undefined lanes too: whatever an integer holds, it is finite (helper-151: SageAttention's
    # int8 causal softmax biases them with tl.where(mask, 0, -inf) before its max / exp / sum)
    ints = getattr(_sink["san"], "int_sids", None)
    finite = (tx == 2) | (np.isin(tx.astype(np.int64) - 2, list(ints)) & (tx >= 3)) if ints else (tx == 2)
    with np.errstate(all="ignore"):
        hit = (np.isinf(np.broadcast_to(fo, shape)) & (po <= 1) & np.isfinite(np.broadcast_to(fx, shape))
               & finite)
    return np.where(hit, np.uint8(1), tx) if hit.any() else tx


def _stale(p) -> np.ndarray | bool:
    """Lanes of pad ``p`` that hold memory nothing wrote (initcheck's ids: ``torch.empty``), whose old bits may well
    be Inf or NaN (a freed tensor's -inf scores): times 0 they stay undefined."""
    san = _sink["san"]
    stale = getattr(san, "uninit_sids", None)
    if not stale:
        return False
    return np.isin(p.astype(np.int16) - 2, np.fromiter(stale, dtype=np.int16)) & (p >= 3)


def _times_zero(out, lhs, rhs):
    """``x * 0`` where x is a lane a masked load left undefined (the NaN poison) and the 0 is a defined lane (a
    padded ``other=0.0`` tail): the product is 0 for any finite garbage. Those lanes get the value 0 (the poison
    made them NaN) and, from the sanitizer, a pad id of their own (``times_zero_sid``): where they reach a
    reduction or a dot the finding is a warning that names the product (fla's layer-norm backward multiplies an
    other-less weight load by a zero-padded gradient: every dx was reported as poisoned, and it is right on the
    GPU). Called after ``_elementwise_pad`` gave the product its pad: those lanes' pad is replaced."""
    san = _sink["san"]
    if san is None:
        return
    shape = out.data.shape
    pa, pb = pad_of(lhs), pad_of(rhs)
    hit = np.zeros(shape, bool)
    new = np.zeros(shape, np.uint8)
    frame = None
    for p, other, p_other in ((pa, rhs, pb), (pb, lhs, pa)):
        if p is None:
            continue
        p = _bcast(p, shape)
        undefined = (p >= 3) & ~np.asarray(_stale(p))
        if not undefined.any():
            continue
        zero_other = ~_bcast(_nonzero(other), shape)
        if p_other is not None:
            zero_other = zero_other & (_bcast(p_other, shape) < 3)
        sel = undefined & zero_other & ~hit
        if not sel.any():
            continue
        frame = frame or _site_frame()
        for k in np.unique(p[sel]):
            lanes = sel & (p == k)
            new[lanes] = san.times_zero_sid(int(k) - 2, frame) + 2
        hit |= sel
    if not hit.any():
        return
    out.data[hit] = 0  # +0.0 in every float format (bf16 and fp8 stored as their bits), 0 for integers
    p = pad_of(out)
    p = np.zeros(shape, np.uint8) if p is None else np.array(p, dtype=np.uint8)
    p[hit] = new[hit]
    _set_pad(out, p)


def padding_share(kind: str, h, x: np.ndarray, p: np.ndarray, axis, bad: np.ndarray):
    """How much the padding lanes ``bad`` (defined padding a ``kind`` reduction of ``h`` takes, over ``x``'s shape,
    or flat for ``axis`` None) move its result: (share, padding's part, result without it, dtype, its rounding) of
    the result they move most, share = |part| / |result|; None where it is no number (NaN padding, an argmax's
    index, integers). helper-84: "change the result" over padding of ~1e-17 against a sum of 1: none could weigh it."""
    from tritondbg.interp.shadow_values import _is_bf16

    dtype = "bfloat16" if _is_bf16(h) else str(h.data.dtype) if h.data.dtype.kind == "f" else None
    if kind not in ("sum", "max", "min") or dtype is None:
        return None
    eps = 2.0 ** -8 if dtype == "bfloat16" else float(np.finfo(h.data.dtype).eps) / 2
    if axis is None:
        x, p, axis = x.reshape(-1), p.reshape(-1), 0
    bad = bad.reshape(x.shape)
    x = x.astype(np.float64, copy=False)
    real = p < 2
    with np.errstate(all="ignore"):
        if kind == "sum":
            part = np.where(bad, x, 0).sum(axis=axis)
            base = np.where(real, x, 0).sum(axis=axis)
        else:
            fill = -np.inf if kind == "max" else np.inf
            pick = np.max if kind == "max" else np.min
            base = pick(np.where(real, x, fill), axis=axis)
            part = pick(np.where(real | bad, x, fill), axis=axis) - base
        hit = bad.any(axis=axis)
        if not hit.any() or not np.isfinite(part[hit]).all() or not np.isfinite(base[hit]).all():
            return None
        share = np.where(hit & (part != 0), np.abs(part) / np.abs(base), np.where(hit, 0.0, -1.0))
    i = np.unravel_index(int(np.argmax(share)), share.shape) if share.ndim else ()
    return float(share[i]), float(part[i]), float(base[i]), dtype, eps


def won_by_undefined(kind: str, x, p, axis, keep, val):
    """A max / min whose value came from a lane a masked load left undefined (pad >= 3), not from a real one, is
    undefined too: ``val`` with those results marked so (the poison's id of such a lane). ScatterMoE's expert
    range ``tl.min(E_idxs)`` without ``other=`` was int64's minimum, a real-looking bound (helper-111)."""
    und = undefined_lanes(p)
    if not und.any():
        return val
    red = np.min if kind == "min" else np.max
    clean = np.where(und, np.inf if kind == "min" else -np.inf, x)
    with np.errstate(invalid="ignore"):
        full, real = (red(x), red(clean)) if axis is None else (red(x, axis=axis, keepdims=keep),
                                                                red(clean, axis=axis, keepdims=keep))
        won = (np.asarray(full) != np.asarray(real)) & ~(np.isnan(full) & np.isnan(real))
    upad = np.where(und, p, 0)
    upad = np.array([upad.max()]) if axis is None else upad.max(axis=axis, keepdims=keep)
    won = np.reshape(won, np.shape(upad))
    return np.where(won, np.maximum(val.reshape(np.shape(upad)), upad), val.reshape(np.shape(upad))).astype(np.uint8)


def custom_reduce_padding(kind: str, input, outs, axis, keep) -> None:
    """``tl.reduce`` with a combine function of the kernel's own (``kind`` "other"; trident's softmax reduces a
    (max, sum) pair): what it computes is unknown here, but a NaN result where no real lane of any operand holds
    NaN was made so by padding lanes holding NaN: a masked_reduction at the reduce.
    helper-114: a softmax whose ``tl.where`` guard was dropped made exp(-inf - -inf) = NaN in its padding, every
    output was NaN, and nothing was told (the same bug through tl.max and tl.sum was)."""
    san = _sink["san"]
    ins = input if isinstance(input, tuple) else (input,)
    hs = [getattr(t, "handle", None) for t in ins]
    if kind != "other" or san is None or any(h is None for h in hs):
        return
    shape = hs[0].data.shape
    pads = [pad_of(h) for h in hs]
    if all(p is None for p in pads):
        return
    p = _max_pads(pads, shape)
    vals = [as_float(h) for h in hs]
    if any(v is None for v in vals):
        return
    flat = axis is None
    red = (lambda a: a.any()) if flat else (lambda a: a.any(axis=axis, keepdims=True))
    with np.errstate(invalid="ignore"):  # NaN: no padding value a reduce wants (-inf is a max's; an Inf result
        bad_in = [np.isnan(np.broadcast_to(v, shape)) for v in vals]  # may be the data's overflow: helper-118)
    nan = np.logical_or.reduce(bad_in)
    padded = p == 2
    allpad = (p >= 1).all() if flat else (p >= 1).all(axis=axis, keepdims=True)
    from_data = red(nan & (p < 2))  # a real lane's NaN: the data's, not the padding's
    from_pad = red(nan & padded)
    kept = [1] * len(shape) if flat else [1 if i == axis % len(shape) else n for i, n in enumerate(shape)]
    out_bad = np.zeros(kept, bool)
    for o in outs:
        f = as_float(getattr(o, "handle", None)) if getattr(o, "handle", None) is not None else None
        if f is not None and f.size == out_bad.size:  # (a result with or without its reduced axis kept)
            with np.errstate(invalid="ignore"):
                out_bad = out_bad | np.isnan(f).reshape(kept)
    slices = out_bad & from_pad & ~from_data & ~allpad
    if not np.any(slices):
        return
    lanes = nan & padded & np.broadcast_to(slices, shape)
    # the example lane from the operand with the most NaN there (the sum's, not the max's -inf)
    x = np.broadcast_to(vals[int(np.argmax([int((b & lanes).sum()) for b in bad_in]))], shape)
    san.reduction_event("reduce", x, lanes, np.zeros(shape, bool), p, _site_frame())


def _from_uninit(h, san, shape) -> np.ndarray | None:
    """Lanes whose NaN was computed from memory nothing wrote (initcheck's mark, or a load's uninit poison id) or
    from a masked load's undefined lanes (its poison id): padding that holds such a NaN is no masked_reduction
    (Liger's cross entropy, given NaN from a band a buggy kernel upstream left unwritten, took 9 findings in a
    correct kernel); the uninit or poison finding names the cause."""
    from tritondbg.interp.initcheck import UNINIT_ID
    from tritondbg.interp.poison import handle_kind, payload_ids

    kind = handle_kind(h)
    if kind is None or san is None:
        return None
    ids = payload_ids(np.ascontiguousarray(h.data), kind)
    told = san.uninit_sids | set(san.poison_info)
    hit = (ids == UNINIT_ID) | np.isin(ids, list(told)) if told else ids == UNINIT_ID
    return np.broadcast_to(hit, shape) if hit.any() else None


def _untold(bad, a, b, san):
    """check_dot's lanes less the defined padding whose NaN a poison or uninit finding already tells (its payload's
    id: helper-142, ColossalAI's attention, a block-pointer load without padding_option, its poison made NaN by the
    row max in the causal mask's -inf lanes, was also two masked_reduction errors blaming an other= it has not)."""
    def_a, def_b, und_a, und_b, pa, pb = bad
    skip_a, skip_b = _from_uninit(a, san, def_a.shape), _from_uninit(b, san, def_b.shape)
    def_a = def_a if skip_a is None else def_a & ~skip_a
    def_b = def_b if skip_b is None else def_b & ~skip_b
    if not (def_a.any() or def_b.any() or und_a.any() or und_b.any()):
        return None
    return def_a, def_b, und_a, und_b, pa, pb


def note_undefined_dot(san, pa, pb, a_shape, b_shape) -> None:
    """A tl.dot whose output rows / columns have no real lane and got them from lanes a masked load left undefined
    (no other=: SpargeAttn's ``k = tl.load(K_ptrs, mask=k_mask)`` then ``tl.dot(q, k)``): those outputs count as
    padding (shadow._wrap_dot; README: int8 attention masks such columns with a large finite bias), which a
    masked_reduction said was "filled by a masked load's other=" (helper-158). Kept in ``san.dot_pads``: (file,
    dot line) -> the loads' lines, for its wording (findings._padded_by)."""
    if len(san.dot_pads) >= 4:
        return
    lines = set()
    for pad, shape, axis in ((pa, a_shape, -1), (pb, b_shape, -2)):
        if pad is not None and bool((pad >= 3).any()):  # (padding an other= filled: nothing to find, no frame)
            pad = np.broadcast_to(pad, shape)
            whole = (pad >= 1).all(axis=axis, keepdims=True)  # rows of a / columns of b with no real lane
            for sid in np.unique(np.where(whole, pad, 0)).tolist():
                info = san.poison_info.get(int(sid) - 2) if sid >= 3 else None
                if info is not None and not info.get("oob_only"):
                    lines.add(info["line"])
    frame = _site_frame() if lines else None
    if frame is not None:
        key = (frame.f_code.co_filename, frame.f_lineno)
        san.dot_pads[key] = tuple(sorted(set(san.dot_pads.get(key, ())) | lines))


def pad_dots(san) -> list:
    """A padding's source where no masked load's other= padded anything: the tl.dots whose rows / columns undefined
    lanes made (``note_undefined_dot``), for a masked_reduction's wording (findings._padded_by)."""
    return [] if san.pad_loads else list(san.dot_pads.items())[:2]
