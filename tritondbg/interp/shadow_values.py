"""The sanitizers' shadows on interpreter values (see shadow.py): reading and writing them, decoding values to
float, and the check that an op made a NaN/Inf its inputs did not hold. shadow.py wraps the builder's ops with
these; sanitize.py reads the shadows and receives the findings (``set_sink``)."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tritondbg.interp import nan_origin

PAD = "tdbg_pad"
BASE = "tdbg_base"
# a value computed from indices and constants only (tl.arange, program ids, scalars, tl.full, and ops over those:
# a causal mask ``tl.where(offs_m[:, None] >= cols[None, :], 0, -inf)``): no element's own data
INDEX = "tdbg_index"

_sink: dict[str, Any] = {"san": None}


def set_sink(san) -> None:
    _sink["san"] = san


# ---------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------

def pad_of(h):
    attr = getattr(h, "attr", None)
    return attr.get(PAD) if attr else None


def from_indices(h) -> bool:
    """``h`` holds no loaded element's own data: index-derived (``INDEX``) or a scalar."""
    attr = getattr(h, "attr", None)
    if attr and INDEX in attr:
        return True
    data = getattr(h, "data", None)
    return data is not None and data.size <= 1 and not is_pointer(h)


def mark_indices(out, ins) -> None:
    """``out`` is index-derived when every value it was made from is."""
    attr = getattr(out, "attr", None)
    if attr is not None and all(from_indices(h) for h in ins):
        attr[INDEX] = True


def _scalar_ty(h):
    ty = getattr(h, "dtype", None)
    return getattr(ty, "scalar", ty)


def _is_bf16(h) -> bool:
    import triton.language as tl

    return h.data.dtype == np.uint16 and _scalar_ty(h) == tl.bfloat16


def floatlike(h) -> bool:
    """Whether ``h``'s lanes can hold NaN / Inf: a float, bf16 (uint16 here) or an fp8 type that has them (bytes)."""
    d = h.data
    return d.dtype.kind == "f" or _is_bf16(h) or (d.dtype == np.uint8 and str(_scalar_ty(h)) in _FP8_SPECIALS)


def is_pointer(h) -> bool:
    import triton.language as tl

    return isinstance(getattr(h, "dtype", None), tl.pointer_type)


def base_of(h) -> int | None:
    """The argument address a pointer value derives from (a scalar pointer argument is its own base)."""
    attr = getattr(h, "attr", None)
    if attr and BASE in attr:
        return attr[BASE]
    data = getattr(h, "data", None)
    if data is not None and data.size == 1 and is_pointer(h):
        return int(np.asarray(data).reshape(-1)[0])
    return None


def _debug_raise() -> None:
    """Shadow bookkeeping never breaks a kernel, except under TRITONDBG_DEBUG=1 (to find its own bugs)."""
    from tritondbg import settings

    if settings.get().debug:
        raise


def _set_pad(h, p) -> None:
    if p is not None and p.any():
        h.attr[PAD] = p


def _bcast(p, shape):
    if p is None:
        return None
    if p.shape == shape:
        return p
    try:
        return np.broadcast_to(p, shape)
    except ValueError:
        return None


def _max_pads(pads, shape):
    out = None
    for p in pads:
        p = _bcast(p, shape)
        if p is None:
            continue
        out = p if out is None else np.maximum(out, p)
    return out


def as_float(h) -> np.ndarray | None:
    """A value as a float64 array (bf16/fp8 storage decoded), or None for integers and pointers. Quiet:
    widening a signalling-NaN pattern (which kernels make, e.g. by bitcasts) raises numpy's "invalid value"
    RuntimeWarning, which is no business of the kernel's user."""
    from tritondbg.interp import lowp

    d = h.data
    with np.errstate(all="ignore"):
        if d.dtype.kind == "f":
            return d.astype(np.float64)
        ty = _scalar_ty(h)
        if d.dtype.kind == "u" and lowp.type_name(ty) in lowp.LOWP:  # raw bf16/fp8 storage: exact decode
            return lowp.decode(d, ty).astype(np.float64)
        if d.dtype.kind in "iub" and getattr(ty, "is_floating", lambda: False)():
            return d.astype(np.float64)  # a float-typed handle holding a comparison's booleans
    return None


def _nonzero(h) -> np.ndarray:
    d = h.data
    if _is_bf16(h):
        return (d & np.uint16(0x7FFF)) != 0
    return d != 0


def _nonfinite(h):
    """(nan, inf) boolean arrays when the value has any NaN/Inf, else None; integers never do."""
    d = h.data
    kind = d.dtype.kind
    if kind == "f":
        fin = np.isfinite(d)
        if fin.all():
            return None
        nan = np.isnan(d)
        return nan, ~fin & ~nan
    if kind == "u" and d.dtype.itemsize == 2 and _is_bf16(h):
        exp = (d & np.uint16(0x7F80)) == np.uint16(0x7F80)
        if not exp.any():
            return None
        nan = exp & ((d & np.uint16(0x007F)) != 0)
        return nan, exp & ~nan
    if kind == "u" and d.dtype.itemsize == 1:  # fp8 bytes (helper-135: a NaN stored into an e4m3 output was not told)
        return _fp8_nonfinite(d, _FP8_SPECIALS.get(str(_scalar_ty(h))))
    return None


# fp8 formats by Triton's names: (NaN when bits & mask == value, Inf when bits & mask == value), None: none
_FP8_SPECIALS = {"fp8e4nv": ((0x7F, 0x7F), None),               # e4m3fn: S.1111.111 is NaN, no Inf
                 "fp8e5": ((0x7C, 0x7C), (0x7F, 0x7C)),          # e5m2: IEEE-like, exponent 11111
                 "fp8e4b8": ((0xFF, 0x80), None), "fp8e5b16": ((0xFF, 0x80), None)}   # fnuz: 0x80 is the NaN


def _fp8_nonfinite(d, specials):
    if specials is None:  # not an fp8 type, or one with neither (fp8e4b15)
        return None
    (nmask, nval), inf = specials
    if nmask == 0x7C:  # e5m2: the exponent all ones, then NaN where the mantissa is not 0
        exp = (d & np.uint8(0x7C)) == np.uint8(0x7C)
        if not exp.any():
            return None
        nan = exp & ((d & np.uint8(0x03)) != 0)
        return nan, exp & ~nan
    nan = (d & np.uint8(nmask)) == np.uint8(nval)
    return (nan, np.zeros_like(nan)) if nan.any() else None


# ---------------------------------------------------------------------------------------------------------
# NaN / Inf creation
# ---------------------------------------------------------------------------------------------------------

def _check_new_nonfinite(name: str, out, ins, in_nf=None) -> None:
    """Report lanes of ``out`` that are NaN (Inf) while no input lane held NaN (NaN or Inf)."""
    san = _sink["san"]
    if san is None or not san.check_nonfinite:
        return
    nf = _nonfinite(out)
    if nf is None:
        return
    nan, inf = nf
    shape = out.data.shape
    if in_nf is None:
        in_nan = np.zeros(shape, dtype=bool)
        in_any = np.zeros(shape, dtype=bool)
        for h in ins:
            f = _nonfinite(h) if hasattr(h, "data") else None
            if f is None:
                continue
            n_, i_ = (_bcast(x, shape) for x in f)
            if n_ is None:
                continue
            in_nan |= n_
            in_any |= n_ | i_
    else:
        in_nan, in_any = in_nf
    new = (nan & ~in_nan) | (inf & ~in_any)
    p = pad_of(out)
    if p is not None:  # padding and undefined lanes (>= 2) are the reductions' checks' to judge; a lane a tl.where
        new &= _bcast(p, shape) < 2  # set (1) holds a real value, and a NaN made of it is one (helper-137: 0 / 0)
    finite = new & ~in_any  # lanes made from finite inputs only: the example shown, when there are some
    event = san.nonfinite_event(name, out, ins, new, _site_frame(), from_finite=bool(finite.any()),
                                example=finite if finite.any() else None) if new.any() else None
    nan_origin.after_op(out, ins, nan | inf, new, event)  # where each non-finite lane came from
    _repair_payload(out, ins, nan)


def _site_frame():
    from tritondbg.interp import frames

    return frames.kernel_frame(sys._getframe(1))


def _repair_payload(out, ins, nan) -> None:
    """numpy's exp/log return a canonical NaN; give such lanes back the NaN bits of the input lane they
    came from, so the poison id of an undefined lane survives (only same-dtype, same-shape inputs)."""
    san = _sink["san"]
    if san is None or not san.poison_used or not nan.any() or out.data.dtype.kind != "f":
        return
    for h in ins:
        d = getattr(h, "data", None)
        if d is None or d.dtype != out.data.dtype or d.shape != out.data.shape:
            continue
        src = np.isnan(d) & nan
        if src.any():
            if not out.data.flags.writeable:
                out.data = out.data.copy()
            out.data[src] = d[src]
            return


def undefined_lanes(pad) -> np.ndarray:
    """Lanes of ``pad`` a masked load left undefined (>= 3), less those an exact 0 multiplied (their value is 0 for
    any finite garbage, as on a GPU: the sanitizer's ``times_zero`` ids; helper-113: ``tl.min(c * valid)`` over an
    other-less ``c`` is 0 on any GPU, and its loop ran there)."""
    und = pad >= 3
    zeroed = getattr(_sink["san"], "times_zero_sids", None)
    if not zeroed or not und.any():
        return und
    return und & ~np.isin(pad.astype(np.int16) - 2, np.fromiter(zeroed, dtype=np.int16))


class UndefinedInt(Exception):
    """A kernel turned a value computed from undefined lanes into a Python int (a loop bound): the program stops."""


def check_int(h) -> None:
    """Before a kernel turns ``h`` (one value) into a Python int (``range(lo, hi)`` over tensors, a step): when it
    was computed from lanes a masked load left undefined (no other=), the load's poison finding is told to reach it,
    and the program stops with ``UndefinedInt``. The poison of an integer load is int64's minimum: ScatterMoE's
    ``tl.min`` over expert ids without ``other=E`` made its expert loop ``range(-2**63, ...)``, a hang with no
    finding (helper-111); on a GPU the bound is whatever those lanes held."""
    pad, san = pad_of(h), _sink["san"]
    if pad is None or san is None:
        return
    pad = np.asarray(pad)
    und = undefined_lanes(pad)
    if not und.any():
        return
    from tritondbg.interp import frames

    line = frames.site()[1]
    san._poison_reached(pad[und], f"a loop bound (a Python int) at line {line}")
    infos = [san.poison_info.get(int(i) - 2, {}) for i in np.unique(pad[und])]
    if all(i.get("oob_only") for i in infos):  # values an out-of-bounds load read: no masked load, no poison finding
        src = (f"values an out-of-bounds load read (line {infos[0]['line']}, its out_of_bounds finding)" if infos
               else "values an out-of-bounds load read")  # (helper-115: stk's offsets read one block row too far)
    elif all("uninit" in i for i in infos):
        src = "values read from memory nothing wrote (the uninit finding names the read)"
    else:
        src = "lanes a masked load left undefined (the poison finding names the load)"
    raise UndefinedInt(f"line {line} turns into a Python int (a loop bound) a value computed from {src}: on a GPU it is "
                       "whatever those lanes held; tritondbg stops this program here rather than run a loop of up to "
                       "2**63 steps")


def reduce_nonfinite(kind: str, srcs, outs, axis, keep) -> None:
    """A sum (or a custom combine, over every operand ``srcs``) whose result is Inf/NaN over finite lanes: an fp16
    sum of squares overflows (Liger's poly_norm at N = 4097 in fp16), then rsqrt(inf) = 0 makes the outputs finite
    and wrong. (helper-114: a NaN in a pair's second operand was "a NaN from finite inputs")"""
    nfs = [x for x in (_nonfinite(h) for h in srcs) if x is not None]
    src = srcs[0]
    nf = None if not nfs else (np.logical_or.reduce([np.broadcast_to(n, src.data.shape) for n, _ in nfs]),
                               np.logical_or.reduce([np.broadcast_to(i, src.data.shape) for _, i in nfs]))
    for o in outs:
        h = getattr(o, "handle", None)
        if h is None or not (h.data.dtype.kind == "f" or _is_bf16(h)) or _nonfinite(h) is None:
            continue
        shape = h.data.shape
        if nf is None:
            in_nf = (np.zeros(shape, bool), np.zeros(shape, bool))
        else:
            n_, i_ = nf
            red = (lambda a: a.any()) if axis is None else (lambda a: a.any(axis=axis, keepdims=keep))
            in_nf = tuple(np.broadcast_to(np.asarray(red(a)), shape) for a in (n_, n_ | i_))
        _check_new_nonfinite("tl.reduce" if kind == "other" else f"tl.{kind}", h, (src,), in_nf=in_nf)


def spoilt(bad, shape, operands):
    """The lanes ``bad`` of an op's result (of ``shape``) that hold no operand's padding (a masked load's
    ``other=`` lanes are no such lanes), with the operands' shadow, the op's kernel site and the first such lane:
    (bad, old, site, idx), or None where none is left (shifts.py, casts.py)."""
    old = np.zeros(shape, np.uint8)
    for h in operands:
        p = pad_of(h)
        if p is not None:
            old = np.maximum(old, _bcast(p, shape))
    bad = np.broadcast_to(bad, shape) & (old < 1)
    if not bad.any():
        return None
    frame = _site_frame()
    site = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name) if frame else ("?", 0, "?")
    return bad, old, site, tuple(int(i) for i in np.argwhere(bad)[0])


def noted(orig, note):
    """A builder op that runs ``orig`` and then ``note(args, out)`` (shifts.py, casts.py: the result's spoilt lanes
    marked); the note's bookkeeping never breaks a kernel."""
    def op(self, *args):
        out = orig(self, *args)
        try:
            note(args, out)
        except Exception:  # shadow bookkeeping must never break a kernel
            _debug_raise()
        return out
    return op
