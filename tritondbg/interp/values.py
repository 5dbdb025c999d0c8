"""Interpreter values as numbers a person can read: decoded arrays and one-line summaries.

The interpreter keeps bf16 as uint16 and fp8 as uint8 storage; ``array`` decodes them to float32 so a
block prints as the values the kernel computes with.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

_SHOW = 6  # values shown from the start of a block (and 2 from its end)


def _tl():
    import triton.language as tl

    return tl


def element_width(ty) -> int:
    """Bytes per element of a pointer's element type ``ty`` (at least 1: an int1 is kept as a byte)."""
    return max(1, ty.primitive_bitwidth // 8)


def array(value) -> np.ndarray | None:
    """The values of a tl.tensor (or TensorHandle) as a numpy array, bf16/fp8 decoded; None otherwise."""
    tl = _tl()
    handle = getattr(value, "handle", value)
    data = getattr(handle, "data", None)
    if data is None or not isinstance(data, np.ndarray):
        return None
    ty = getattr(handle.dtype, "scalar", handle.dtype)
    if ty == tl.bfloat16 and data.dtype == np.uint16:
        out = (data.astype(np.uint32) << np.uint32(16)).view(np.float32)
    elif getattr(ty, "primitive_bitwidth", 0) == 8 and ty.is_floating() and data.dtype == np.uint8:
        from triton.runtime import interpreter as I

        out = I._convert_float(data, ty, tl.float32, None).view(np.float32)
    else:
        out = data
    if isinstance(value, tl.tensor) and not value.type.is_block():
        return out.reshape(())
    return out


def _num(x) -> Any:
    """A JSON-safe number: non-finite floats as strings."""
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer, int)):
        return int(x)
    x = float(x)
    return x if math.isfinite(x) else str(x)


def summarize(value, argmap=None) -> dict:
    """A JSON-safe summary: tensors (dtype, shape, min/max/mean of finite values, NaN/Inf counts, a few
    values), masks (lanes on), pointers (the argument elements they point at), scalars and constexprs."""
    tl = _tl()
    if isinstance(value, tl.tensor):
        return _summarize_tensor(value, argmap)
    if isinstance(value, tl.constexpr):
        return {"kind": "constexpr", "value": repr(value.value)}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return {"kind": "python", "value": _num(value) if isinstance(value, (int, float)) else repr(value)}
    if isinstance(value, (tuple, list)):
        return {"kind": "tuple", "items": [summarize(v, argmap) for v in value][:8]}
    if isinstance(value, tl.dtype):  # `x.dtype`, `o_ptr.dtype.element_ty`: its name (bf16), not "<dtype>"
        return {"kind": "python", "value": str(value)}
    return {"kind": type(value).__name__}


def _summarize_tensor(t, argmap) -> dict:
    tl = _tl()
    ty = t.dtype
    shape = [int(getattr(d, "value", d)) for d in t.shape] if t.type.is_block() else []
    data = t.handle.data
    if isinstance(ty, tl.pointer_type) or (hasattr(ty, "element_ty") and isinstance(ty, tl.pointer_type)):
        out = {"kind": "pointer", "dtype": str(ty), "shape": shape}
        if argmap is not None and data.size:
            flat = np.asarray(data).reshape(-1)
            width = element_width(ty.element_ty)
            first = argmap.describe(int(flat[0]), width)[1]
            last = argmap.describe(int(flat[-1]), width)[1]
            out["points_to"] = first if flat.size == 1 else f"{first} .. {last}"
        return out
    arr = array(t)
    if ty == tl.int1:
        out = {"kind": "mask", "dtype": "int1", "shape": shape, "true": int(np.count_nonzero(arr)),
               "size": int(arr.size)}
        if not shape:
            out["value"] = bool(arr.reshape(-1)[0])
        return out
    if not shape:
        return {"kind": "scalar", "dtype": str(ty), "value": _num(arr.reshape(-1)[0])}
    flat = np.asarray(arr).reshape(-1)
    out = {"kind": "tensor", "dtype": str(ty), "shape": shape}
    real = np.ones(flat.shape, dtype=bool)
    pad = t.handle.attr.get("tdbg_pad") if getattr(t.handle, "attr", None) else None
    if pad is not None and pad.size:
        # the sanitizers' shadow (shadow.py): lanes a masked load filled (other=) or left undefined (poison)
        p = np.broadcast_to(pad, np.shape(arr)).reshape(-1)
        out["padding"] = int((p == 2).sum())
        und = p >= 3
        oob = np.isin(p.astype(np.int64) - 2, sorted(_oob_ids())) & und
        out["undefined"] = int((und & ~oob).sum())
        out["out of bounds"] = int(oob.sum())  # lanes the sanitizer masked off, told there (helper-136: "undefined")
        real = p < 2
    if flat.dtype.kind == "f":
        fin = np.isfinite(flat)
        out["nan"] = int((np.isnan(flat) & real).sum())
        out["inf"] = int((~fin & real).sum()) - out["nan"]
        good = flat[fin & real].astype(np.float64)
    else:
        good = flat[real].astype(np.float64)
    if good.size:
        out.update(min=_num(good.min()), max=_num(good.max()), mean=_num(good.mean()))
    head = [_num(v) for v in flat[:_SHOW]]
    out["values"] = head if flat.size <= _SHOW + 2 else head + ["..."] + [_num(v) for v in flat[-2:]]
    return out


def _oob_ids() -> set[int]:
    """Poison ids of the lanes the active sanitizer masked off as out of bounds (sanitize.poison_for's oob_only):
    not lanes a mask left undefined (memops.py gives them an id of their own)."""
    from tritondbg.interp.shadow_values import _sink

    san = _sink.get("san")
    info = getattr(san, "poison_info", None) or {}
    return {sid for sid, i in info.items() if i.get("oob_only")}


def _fmt(x) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def text(s: dict) -> str:
    """One line for a summary."""
    kind = s.get("kind")
    if kind == "tensor":
        dims = "x".join(str(d) for d in s["shape"])
        parts = [f"{s['dtype']}[{dims}]"]
        if "min" in s:
            parts.append(f"min {_fmt(s['min'])} max {_fmt(s['max'])} mean {_fmt(s['mean'])}")
        if s.get("nan") or s.get("inf"):
            parts.append(f"NaN {s.get('nan', 0)} Inf {s.get('inf', 0)}")
        masked = [f"{s[k]} {k}" for k in ("padding", "undefined", "out of bounds") if s.get(k)]
        if masked:
            parts.append(f"masked lanes: {', '.join(masked)}")
        parts.append("[" + ", ".join(_fmt(v) for v in s["values"]) + "]")
        return "  ".join(parts)
    if kind == "mask":
        if not s["shape"]:
            return f"{s.get('value')} (int1)"
        dims = "x".join(str(d) for d in s["shape"])
        return f"int1[{dims}]  {s['true']} of {s['size']} true"
    if kind == "pointer":
        dims = "x".join(str(d) for d in s["shape"]) if s["shape"] else ""
        where = f"  -> {s['points_to']}" if s.get("points_to") else ""
        return f"{s['dtype']}{'[' + dims + ']' if dims else ''}{where}"
    if kind == "scalar":
        return f"{_fmt(s['value'])} ({s['dtype']})"
    if kind in ("constexpr", "python"):
        return f"{s['value']}" + (" (constexpr)" if kind == "constexpr" else "")
    if kind == "tuple":
        return "(" + "; ".join(text(i) for i in s["items"]) + ")"
    if kind == "error":
        return f"<{s['error']}>"
    return f"<{kind}>"


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
MEASURED = frozenset(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint16, np.uint32,
                                           np.uint64))  # gpu_int's table


def out_of_range(x: np.ndarray, dst) -> np.ndarray:
    """Which floats ``x`` a conversion to the integer type ``dst`` (toward zero) cannot hold: NaN, +-inf, past the
    range (int64's bounds exact: -2**63 fits, 2**63 does not)."""
    info = np.iinfo(dst)
    lo, hi = float(info.min), float(info.max)
    with np.errstate(invalid="ignore"):
        above_lo = x > lo - 1.0 if lo - 1.0 != lo else x >= lo
        below_hi = x < hi + 1.0 if hi + 1.0 != hi else x < hi
        return ~(above_lo & below_hi)


def gpu_int(x: np.ndarray, dst) -> np.ndarray | None:
    """What an H100 stores converting the floats ``x`` (rounded or truncated already) to the integer type ``dst``
    (Triton 3.6, ``python tests/bench/cvt_probe.py``, tests/bench/runs/s58_cvt_probe.txt): int8 / uint8 through a
    saturating 16-bit ``cvt`` whose low byte is kept (40000 -> int8 -1, uint8 64), the wider types saturated
    (negatives to 0 for the unsigned ones), NaN 0 (int64: its smallest value, as libdevice's ``llrint``; uint64:
    2**63). None for a type not measured."""
    dst = np.dtype(dst)
    x = np.asarray(x, dtype=np.float64)
    nan = np.isnan(x)
    if dst in (np.dtype(np.int8), np.dtype(np.uint8)):
        lo, hi = (-32768, 32767) if dst == np.int8 else (0, 65535)
        v = np.where(nan, 0.0, np.clip(x, lo, hi)).astype(np.int64)
        return (v & 0xFF).astype(np.uint8).view(dst)
    if dst in (np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.uint16), np.dtype(np.uint32)):
        info = np.iinfo(dst)
        return np.where(nan, 0.0, np.clip(x, info.min, info.max)).astype(dst)
    if dst == np.int64:
        with np.errstate(invalid="ignore"):
            inside = (x >= -2.0 ** 63) & (x < 2.0 ** 63)
            v = np.where(inside, x, 0.0).astype(np.int64)
        return np.where(nan | (x < 0) & ~inside, _INT64_MIN, np.where(inside, v, _INT64_MAX)).astype(np.int64)
    if dst == np.uint64:
        with np.errstate(invalid="ignore"):
            inside = (x >= 0) & (x < 2.0 ** 64)
            v = np.where(inside, x, 0.0).astype(np.uint64)
        return np.where(nan, np.uint64(1 << 63), np.where(inside, v, np.where(x < 0, 0, np.uint64((1 << 64) - 1))))\
            .astype(np.uint64)
    return None
