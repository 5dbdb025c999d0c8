"""Casts to an integer type whose lanes do not hold the value they were given.

- A float cast to an integer type, explicit (``.to(tl.int8)``) or a store's implicit one, of NaN or of a value
  outside the destination's range (a quantiser missing its clamp, a scale too small): LLVM makes such an
  ``fptosi`` / ``fptoui`` poison, and the GPU's value depends on the lowering (sm_90: a saturating
  ``cvt.rzi.s16.f32`` whose low byte an int8 store keeps). The interpreter stores what an H100 stored (lowp.py,
  values.gpu_int; numpy's own values differ), but no value is promised.
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

from tritondbg.interp import values
from tritondbg.interp.shadow_values import _set_pad, noted, spoilt

# the semantic functions (Triton 3.6 and 3.9) whose cast of the value is a store's or an atomic's implicit one
_STORES = frozenset({"store", "_store_legacy", "_store_block_pointer", "descriptor_store"})
_ATOMICS = frozenset({"atomic_store", "atom_red_typechecking_impl"})
# what NaN converted to int64 is, on the GPU and here (libdevice.llrint, .to(tl.int64); values.gpu_int)
_INDEFINITE = (-(1 << 63),)


def wrap(orig, from_float: bool):
    """The interpreter's ``create_fp_to_si`` / ``create_fp_to_ui`` (``from_float``) or ``create_int_cast``, its
    result's lanes that lost their value marked."""
    return noted(orig, lambda args, out: mark(args[0], out, from_float))


def _implicit() -> str:
    """"store" / "atomic" where the running cast is a store's (an atomic's) conversion to the pointer's element
    type, else ""."""
    f = sys._getframe(3)
    for _ in range(6):
        if f is None:
            return ""
        if f.f_code.co_filename.endswith("semantic.py"):
            if f.f_code.co_name in _STORES:
                return "store"
            if f.f_code.co_name in _ATOMICS:
                return "atomic"
        f = f.f_back
    return ""


def _source_type(src) -> str:
    """The type the kernel cast from: Triton casts fp16 / bf16 to an integer through fp32 (``cast`` calling itself),
    so the outermost ``cast`` frame of Triton's semantic above this one holds the kernel's own operand."""
    name = _src_name(src)
    f = sys._getframe(1)
    for _ in range(12):
        if f is None:
            break
        if f.f_code.co_name == "cast" and f.f_code.co_filename.endswith("semantic.py"):
            handle = getattr(f.f_locals.get("input"), "handle", None)
            if handle is not None:
                name = _src_name(handle)
        f = f.f_back
    return name


def _type_name(dtype) -> str:
    return {"f": "float", "i": "int", "u": "uint"}.get(dtype.kind, dtype.kind) + str(dtype.itemsize * 8)


def mark(src, out, from_float: bool) -> None:
    from tritondbg.interp.shadow_values import _sink

    san = _sink["san"]
    dst = getattr(out, "data", None)
    if san is None or not isinstance(dst, np.ndarray) or dst.dtype.kind not in "iu" or dst.dtype == np.bool_:
        return
    if from_float:
        x = values.array(src)
        if x is None or x.dtype.kind != "f":
            return
        x = x.astype(np.float64, copy=False)
        bad = values.out_of_range(x, dst.dtype)  # truncation toward zero; NaN is bad
        if not bad.any():
            return
        implicit = _implicit()
    else:
        x = getattr(src, "data", None)
        if not isinstance(x, np.ndarray) or x.dtype.kind not in "iu" or x.dtype.itemsize <= dst.dtype.itemsize:
            return
        # values that keep their bits in the narrow type, read signed or unsigned (-128..255 for a byte: a packer's
        # (hi << 4) | lo, helper-130) are no change; -381 into int8 is
        bits = dst.dtype.itemsize * 8
        wide = x.astype(np.int64, copy=False) if x.dtype != np.uint64 else x
        bad = (wide < -(1 << (bits - 1))) | (wide > (1 << bits) - 1)
        if not bad.any():
            return
        implicit = _implicit()
        if not implicit:
            return
    shape = np.shape(dst)
    found = spoilt(bad, shape, (src,))
    if found is None:
        return
    bad, old, site, idx = found
    given, got = np.broadcast_to(x, shape)[idx], np.broadcast_to(dst, shape)[idx]
    given = float(given) if from_float else int(given)
    info = np.iinfo(dst.dtype)
    span = (int(info.min), int(info.max)) if from_float else (-(1 << (bits - 1)), (1 << bits) - 1)
    sid = san.lane_site(site, "cast", dict(op="fptosi" if from_float else "narrow", implicit=implicit,
                                           src=_type_name(x.dtype) if not from_float else _source_type(src),
                                           dst=_type_name(dst.dtype), lo=span[0], hi=span[1],
                                           measured=dst.dtype in values.MEASURED,
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
        verb = "reached through the atomic" if e.get("implicit") == "atomic" else "stored"
        where.append(f"{verb}{at} into {e['stored']}")
    if e.get("reaches"):
        where.append("they enter " + ", ".join(e["reaches"]))
    used = f"; {'; '.join(where)}" if where else ""
    n = len(e.get("programs") or ())  # (helper-143: "128 lane(s)" under one pid were two programs' lanes)
    lanes = f"{e['lanes']} lane(s)" + (f" of {n} programs" if n > 1 else "")
    how = {"store": "the store's implicit cast", "atomic": "the atomic's implicit cast"}.get(e.get("implicit"),
                                                                                             "the cast")
    if e["op"] == "narrow":
        head = (f"{how} from {e['src']} to {e['dst']} changed {given} to {got} (lane {tuple(idx)}; {lanes} "
                f"outside {e['lo']}..{e['hi']}{used})")
        if given in _INDEFINITE:  # what a NaN became on its way to an integer here (llrint, .to(tl.int64))
            return (f"{head}: {given} is what a NaN or an out-of-range float becomes here when converted to "
                    f"{e['src']} (libdevice.llrint / float2int, .to()): a NaN upstream (0 / 0 of an all-zero row or "
                    "block?) or a value past the range; guard it before the conversion")
        what = "an atomic narrows its operand" if e.get("implicit") == "atomic" else "a store narrows an integer"
        return (f"{head}: {what} by keeping its low bits, on the GPU too, and these do not fit them. Clamp to the "
                f"{e['dst']} range first (a quantiser missing its clamp?), or use a wider tensor")
    shown = "NaN" if given != given else f"{given:.6g}"
    held = ("what an H100 with Triton 3.6 stored" if e.get("measured", True) else
            "numpy's value; the GPU's was not measured for this type")
    return (f"{how} from {e['src']} to {e['dst']} of {shown} (lane {tuple(idx)}; {lanes} NaN or outside "
            f"{e['lo']}..{e['hi']}{used}): undefined (LLVM makes an out-of-range float-to-int conversion poison; the "
            f"interpreter stores {got} there, {held}, but no compiler promises it). Clamp to {e['lo']}..{e['hi']} before the "
            "cast (tl.clamp; a quantiser missing its clamp, a scale too small?) and keep NaN out")
