"""The bits a plain store or load moves, as the race checks compare them (races.py, race_reads.py): ``stored_bits``
per live lane, ``float_code`` for what kind of floats they are."""
from __future__ import annotations

import numpy as np


def stored_bits(value, live, shape):
    """The raw bits a plain store writes, one per live lane (as ``record_store`` takes the addresses), or None
    when they cannot be read (then any cross-program write of that store counts as a race), and when a lane holds
    values computed from undefined lanes (the sanitizers' poison: their NaN, the same bits in every program, made
    a layernorm whose stride was wrong "the same value on this input: harmless", helper-74; a GPU has garbage)."""
    from tritondbg.interp.shadow_values import _is_bf16, pad_of

    pad = pad_of(value)
    if pad is not None:
        pad = np.broadcast_to(np.asarray(pad), shape)
        if bool(((pad.reshape(-1) if live is None else pad[live]) >= 2).any()):
            return None
    try:
        data = np.broadcast_to(np.asarray(value.data), shape)
        data = np.ascontiguousarray(data.reshape(-1) if live is None else data[live])
        if data.dtype.itemsize not in (1, 2, 4, 8):
            return None
        # a NaN (the poison a reduction carried on, the uninitialized-memory mark) stands for bits unknown
        if (data.dtype.kind == "f" and bool(np.isnan(data).any())) or \
                (_is_bf16(value) and bool((((data & 0x7F80) == 0x7F80) & ((data & 0x7F) != 0)).any())):
            return None
        return np.array(data.view(f"u{data.dtype.itemsize}"), copy=True)
    except (AttributeError, TypeError, ValueError):
        return None


def float_code(value) -> int:
    """What a stored block's floats are, for ``rounding_gap``: their size in bytes (fp16 2, fp32 4, fp64 8), 3 for
    bf16; 0 for unsigned integers, fp8 (one unit in its last place is no rounding of a sum) and anything
    unreadable; minus its size for signed integers (an int8 -13 was told as 243: helper-158), which no rounding
    judges (``code > 0`` only)."""
    from tritondbg.interp.shadow_values import _is_bf16

    try:
        if _is_bf16(value):
            return 3
        dt = np.asarray(value.data).dtype
    except (AttributeError, TypeError, ValueError):
        return 0
    if dt.kind == "i":
        return -dt.itemsize
    return dt.itemsize if dt.kind == "f" and dt.itemsize >= 2 else 0
