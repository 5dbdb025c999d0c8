"""Casts to an integer type whose lanes do not hold the value they were given.

- A float cast to an integer type, explicit (``.to(tl.int8)``) or a store's implicit one, of NaN or of a value
  outside the destination's range (a quantiser missing its clamp, a scale too small): LLVM makes such an
  ``fptosi`` / ``fptoui`` poison, and the GPU's value depends on the lowering (sm_90, Triton 3.9: a saturating
  ``cvt.rzi.s16.f32`` whose low byte an int8 store keeps), while numpy here converts through int32 or int64: the
  interpreter's value need not be the GPU's, and no value is promised.
- An integer narrowed by a store's implicit cast (``tl.store(int8_ptr, x)`` with ``x`` int32 or int64, an atomic's
  operand likewise) whose value changes: defined (the low bits), the same on the GPU, and almost never meant (helper-126:
  -381 stored as -125). Explicit integer casts are left alone: a hash or a packer truncates on purpose.

Such lanes are marked in the result's shadow under an id of the cast's line, as shifts.py marks a shift's
undefined lanes: a kernel that drops them later (a store mask, ``tl.where``) is not told; where they reach a store,
an atomic or a reduction, a warning at the cast's line says where. Padding lanes (a masked load's ``other=``) are
no such lanes."""
from __future__ import annotations

import sys

import numpy as np

from tritondbg.interp.shadow_values import _bcast, _debug_raise, _set_pad, _site_frame, pad_of

# the semantic functions (Triton 3.6 and 3.9) whose cast of the value is a store's or an atomic's implicit one
_IMPLICIT = frozenset({"store", "_store_legacy", "_store_block_pointer", "descriptor_store", "atomic_store",
                       "atom_red_typechecking_impl"})


def wrap(orig, from_float: bool):
    """The interpreter's ``create_fp_to_si`` / ``create_fp_to_ui`` (``from_float``) or ``create_int_cast``, its
    result's lanes that lost their value marked."""
    def cast(self, src, dst_type, *rest):
        out = orig(self, src, dst_type, *rest)
        try:
            mark(src, out, from_float)
        except Exception:  # shadow bookkeeping must never break a kernel
            _debug_raise()
        return out
    return cast


def _implicit() -> bool:
    """The running cast is a store's (or an atomic's) conversion to the pointer's element type."""
    f = sys._getframe(3)
    for _ in range(6):
        if f is None:
            return False
        if f.f_code.co_name in _IMPLICIT and f.f_code.co_filename.endswith("semantic.py"):
            return True
        f = f.f_back
    return False


def _type_name(dtype) -> str:
    return {"f": "float", "i": "int", "u": "uint"}.get(dtype.kind, dtype.kind) + str(dtype.itemsize * 8)


def mark(src, out, from_float: bool) -> None:
    from tritondbg.interp import values
    from tritondbg.interp.shadow_values import _sink

    san = _sink["san"]
    dst = getattr(out, "data", None)
    if san is None or not isinstance(dst, np.ndarray) or dst.dtype.kind not in "iu" or dst.dtype == np.bool_:
        return
    if from_float:
        x = values.array(src)
        if x is None or x.dtype.kind != "f":
            return
        info = np.iinfo(dst.dtype)
        x = x.astype(np.float64, copy=False)
        with np.errstate(invalid="ignore"):
            bad = ~((x > info.min - 1.0) & (x < info.max + 1.0))  # truncation toward zero; NaN is bad
        implicit = _implicit()
    else:
        x = getattr(src, "data", None)
        if not isinstance(x, np.ndarray) or x.dtype.kind not in "iu" or x.dtype.itemsize <= dst.dtype.itemsize \
                or not _implicit():
            return
        bad = dst.astype(x.dtype) != x
        implicit = True
    if not np.any(bad):
        return
    shape = np.shape(dst)
    old = np.zeros(shape, np.uint8)  # the operand's shadow: padding lanes are no such lanes
    p = pad_of(src)
    if p is not None:
        old = np.maximum(old, _bcast(p, shape))
    bad = np.broadcast_to(bad, shape) & (old < 1)
    if not bad.any():
        return
    frame = _site_frame()
    site = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name) if frame else ("?", 0, "?")
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    given, got = np.broadcast_to(x, shape)[idx], np.broadcast_to(dst, shape)[idx]
    given = float(given) if from_float else int(given)
    info = np.iinfo(dst.dtype)
    sid = san.lane_site(site, "cast", dict(op="fptosi" if from_float else "narrow", implicit=implicit,
                                           src=_type_name(x.dtype) if not from_float else _src_name(src),
                                           dst=_type_name(dst.dtype), lo=int(info.min), hi=int(info.max),
                                           example=(list(idx), given, int(got))))
    _set_pad(out, np.where(bad, sid + 2, old).astype(np.uint8))


def _src_name(src) -> str:
    ty = getattr(getattr(src, "dtype", None), "scalar", getattr(src, "dtype", None))
    return getattr(ty, "name", "float")


def message(e: dict) -> str:
    idx, given, got = e["example"]
    where = []
    if e.get("stored"):
        at = "" if e.get("implicit") and e["stored_at"] == e["line"] else f" at line {e['stored_at']}"
        where.append(f"stored{at} into {e['stored']}")
    if e.get("reaches"):
        where.append("they enter " + ", ".join(e["reaches"]))
    used = f"; {'; '.join(where)}" if where else ""
    how = "the store's implicit cast" if e.get("implicit") else "the cast"
    if e["op"] == "narrow":
        return (f"{how} from {e['src']} to {e['dst']} changed {given} to {got} (lane {tuple(idx)}; {e['lanes']} "
                f"lane(s) outside {e['lo']}..{e['hi']}{used}): a store narrows an integer by keeping its low bits, on "
                f"the GPU too. Clamp to {e['lo']}..{e['hi']} first (a quantiser missing its clamp?), or store into a "
                "wider tensor")
    shown = "NaN" if given != given else f"{given:.6g}"
    return (f"{how} from {e['src']} to {e['dst']} of {shown} (lane {tuple(idx)}; {e['lanes']} lane(s) NaN or outside "
            f"{e['lo']}..{e['hi']}{used}): undefined (LLVM makes an out-of-range float-to-int conversion poison; the "
            f"GPU's value depends on the lowering, here numpy gave {got}). Clamp to {e['lo']}..{e['hi']} before the "
            "cast (tl.clamp; a quantiser missing its clamp, a scale too small?) and keep NaN out")
