"""A ``tl.dot`` operand's undefined lanes (a masked load without ``other=``) that meet exact, defined zeros of the
partner: each product is 0 for any finite garbage, as ``shadow_pads._times_zero`` has it for ``*``.

Where every lane of the partner that a lane meets is such a zero (the K tail of an other-less load against a
zero-padded partner), the lane becomes a defined zero and the sanitizer gets a warning naming the dot. Where only some
are (helper-152: FlagAttention's V tail rows met p's exact zeros in every row with a key, and p's NaN in the rows with
none, which the kernel drops later), the lane is a zero in the dot too and the outputs it reaches through a partner
lane that is not 0 hold the load's poison afterwards (``times_zero``'s ``after``): numpy's 0 * NaN had made every
output of the tile NaN, the rows with keys included, and the launch an error on a correct kernel."""
from __future__ import annotations

import numpy as np

from tritondbg.interp.shadow_pads import _stale
from tritondbg.interp.shadow_values import _bcast, _set_pad, _sink, _site_frame, pad_of


def times_zero(a, b, fa, fb):
    """``tl.dot(a, b)``'s operands with their undefined lanes that meet a defined zero made defined zeros, and
    ``after(out)`` (or None) that puts the poison in the outputs such a lane reaches through a partner lane that is
    not 0. ``fa`` / ``fb``: the operands' values as floats (``shadow._dot_values``)."""
    san = _sink["san"]
    pa, pb = pad_of(a), pad_of(b)
    if san is None or (pa is None and pb is None) or a.data.ndim < 2 or b.data.ndim < 2 or fa is None or fb is None:
        return a, b, None
    pa = None if pa is None else _bcast(pa, fa.shape)
    pb = None if pb is None else _bcast(pb, fb.shape)
    # (..., K): k whose every lane of the partner is an exact, defined zero, in the partner's rows (columns) that
    # hold a real lane: an all-padding row of a (a padded query row, NaN where its load had no other=) makes only
    # outputs that are padding themselves (helper-61: FlagAttention's V loaded without other= met p's exact zeros,
    # a warning, except in the partial query block, whose padded q rows made every valid output an error)
    dead_a = (pa >= 1).all(axis=-1, keepdims=True) if pa is not None else np.zeros(fa.shape[:-1] + (1,), bool)
    dead_b = (pb >= 1).all(axis=-2, keepdims=True) if pb is not None else np.zeros(fb.shape[:-2] + (1,) + fb.shape[-1:], bool)
    zero_a = (fa == 0) & ((pa < 3) if pa is not None else True)   # exact, defined zeros
    zero_b = (fb == 0) & ((pb < 3) if pb is not None else True)
    zero_k_of_b = (zero_b | dead_b).all(axis=-1)
    zero_k_of_a = (zero_a | dead_a).all(axis=-2)
    # a partner with no real row (column) at all: its every product lands in an output that is padding itself, so
    # nothing was multiplied by an exact zero (helper-111: ScatterMoE's expert with no token, every row of x
    # undefined, was told "multiplied by exact zeros")
    real_b = (~dead_b).any(axis=-1, keepdims=True)   # (..., 1, 1)
    real_a = (~dead_a).any(axis=-2, keepdims=True)   # (..., 1, 1)
    live_a, live_b = ~zero_a & ~dead_a, ~zero_b & ~dead_b  # partner lanes whose products are not known to be 0
    frame, hits, new, spoilt = None, [], [], []
    # a lane in an all-padding row of a (column of b) lands only in outputs that are padding themselves, whatever it
    # meets (helper-143: SageAttention's q rows past the sequence met the zeros of a head dim padded 40 -> 64)
    for side, h, p, zero_k, expand, real, dead in (
            ("a", a, pa, zero_k_of_b, -2, real_b, dead_a), ("b", b, pb, zero_k_of_a, -1, real_a, dead_b)):
        if p is None:
            new.append(h)
            continue
        undefined = (p >= 3) & ~np.asarray(_stale(p))
        sel = undefined & np.expand_dims(zero_k, expand)
        some = (zero_b & ~dead_b).any(axis=-1) if side == "a" else (zero_a & ~dead_a).any(axis=-2)
        rest = undefined & ~sel & ~dead & np.expand_dims(some, expand)  # zeros in some partner lanes, not in all
        if not sel.any() and not rest.any():
            new.append(h)
            continue
        told = sel & real & ~dead  # (rest: the poison where its products are not 0 tells it, after the dot)
        if told.any():
            frame = frame or _site_frame()
            hits += [san.times_zero_sid(int(k) - 2, frame) + 2 for k in np.unique(p[told])]
        if rest.any():  # the outputs these reach through a partner lane that is not 0: the poison, after the dot
            f32 = np.float32
            reach = (np.matmul(rest.astype(f32), live_b.astype(f32)) if side == "a" else
                     np.matmul(live_a.astype(f32), rest.astype(f32))) > 0
            if reach.any():
                spoilt.append((reach, int(p[rest].max())))
        zero = sel | rest
        data = np.array(np.broadcast_to(h.data, p.shape), copy=True)
        data[zero] = 0  # +0.0 in every float format (bf16 and fp8 stored as their bits)
        from triton.runtime import interpreter as I

        h2 = I.TensorHandle(data, h.dtype)
        p2 = np.array(p, dtype=np.uint8)
        p2[zero] = 2  # a defined pad lane holding 0, as other=0.0 makes (a row of pad lanes stays a pad row)
        _set_pad(h2, p2)
        new.append(h2)
    line = (frame or _site_frame()).f_lineno if (hits or spoilt) else 0
    if hits:
        san._poison_reached(np.asarray(hits, dtype=np.uint8), f"tl.dot at line {line}")
    if spoilt:
        san._poison_reached(np.asarray([fill for _, fill in spoilt], dtype=np.uint8), f"tl.dot at line {line}")
    return new[0], new[1], (lambda out: _poison_outputs(out, spoilt)) if spoilt else None


def _poison_outputs(out, spoilt) -> None:
    """The dot's outputs in ``spoilt`` [(reach mask, 2 + poison id)]: the load's poison value and an undefined mark."""
    from tritondbg.interp.poison import poison_array

    data = np.array(out.data, copy=True)
    pad = np.array(_bcast(pad_of(out), data.shape) if pad_of(out) is not None else np.zeros(data.shape, np.uint8))
    for reach, fill in spoilt:
        reach = np.broadcast_to(reach, data.shape)
        data[reach] = poison_array(data.shape, out.dtype, data.dtype, fill - 2)[reach]
        pad[reach] = np.maximum(pad[reach], fill)
    out.data = data
    _set_pad(out, pad.astype(np.uint8))
