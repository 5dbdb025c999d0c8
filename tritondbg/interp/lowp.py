"""bf16 and fp8 arithmetic under the interpreter, computed as the GPU computes it.

Triton's interpreter stores bf16 as uint16 and fp8 as uint8 and hands those raw patterns to numpy:
``x + y``, ``x * y``, ``tl.maximum``, comparisons, ``tl.sum``/``tl.max``/``tl.cumsum`` and ``tl.fma`` on
bf16 add, compare and sum the bit patterns (garbage, NaN, wrong signs), and ``tl.atomic_add`` on bf16
raises "Unsupported data type". On the GPU these ops run in fp32 (or natively, which rounds the same)
and round to the storage type to nearest even. Here one wrapper per builder entry point decodes such
operands to fp32, calls Triton's own implementation and encodes the float result back (round to nearest
even; fp8 saturates to its largest finite value, as ``cvt.rn.satfinite`` does). Comparisons keep their
boolean result. ``tl.where`` (a bit-exact select) and loads/stores are left alone.

fp16 elementwise ops need nothing: numpy's float16 is native and rounds each op to nearest even, like the
GPU. Reductions and scans (``tl.sum`` keeps the input's float type: ``_pick_sum_dtype``) accumulate in fp32
and round once, for fp16 too (numpy would round after every element along a strided axis: 4096 fp16 ones
sum to 2048); the GPU rounds each partial result of its tree, in an order the interpreter does not
reproduce (the results differ by the storage type's rounding, within the comparison's tolerance).

Names wrapped exist in Triton 3.6 and 3.9 (``binary_op``, ``ternary_op``, ``unary_op``, ``create_fma``,
``create_erf``, ``create_rsqrt``, ``cast_impl``, ``create_fp_to_fp``, ``create_atomic_rmw``,
``ReduceOps/ScanOps.apply_impl``); one that is missing is skipped. Triton 3.6's builder also lacks
``get_bf16`` (a bf16 scalar constant, e.g. ``tl.where(mask, x_bf16, 0.0)``): added when missing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

# Triton's names of the float types the interpreter keeps as raw integer storage
LOWP = frozenset({"bf16", "fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16"})
_fp8_tables: dict[str, tuple] = {}
_saved: dict[tuple, tuple] = {}


def type_name(ty) -> str:
    ty = getattr(ty, "scalar", ty)
    return getattr(ty, "name", "")


def is_lowp(h) -> bool:
    """A TensorHandle (or tl.tensor) of a float type the interpreter stores as raw bits (a comparison's
    boolean result keeps its operands' type in Triton's interpreter: not one)."""
    h = getattr(h, "handle", h)
    return type_name(getattr(h, "dtype", None)) in LOWP and h.data.dtype.kind == "u"


# ---------------------------------------------------------------------------------------------------------
# codecs
# ---------------------------------------------------------------------------------------------------------

def _fp8_table(name: str, ty) -> tuple:
    """(value of each of the 256 codes as fp32, positive finite values sorted, their codes, NaN code)."""
    t = _fp8_tables.get(name)
    if t is not None:
        return t
    m = int(ty.fp_mantissa_width)
    e = 7 - m
    bias = int(ty.exponent_bias)
    codes = np.arange(256, dtype=np.int64)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp = (codes >> m) & ((1 << e) - 1)
    man = codes & ((1 << m) - 1)
    val = np.where(exp == 0, man / (1 << m) * 2.0 ** (1 - bias), (1 + man / (1 << m)) * 2.0 ** (exp - bias)) * sign
    top = exp == (1 << e) - 1
    if name == "fp8e5":                      # IEEE-like: exponent all ones is Inf / NaN
        val = np.where(top & (man == 0), sign * np.inf, np.where(top, np.nan, val))
        nan_code = 0x7F
    elif name in ("fp8e4b8", "fp8e5b16"):    # FNUZ: 0x80 is the only NaN, no Inf, no -0
        val[0x80] = np.nan
        nan_code = 0x80
    elif name == "fp8e4nv":                  # e4m3fn: S.1111.111 is NaN, no Inf
        val[0x7F] = val[0xFF] = np.nan
        nan_code = 0x7F
    else:                                    # fp8e4b15: every code is a number
        nan_code = 0x7F
    val = val.astype(np.float32)
    pos = np.arange(0x80)
    keep = np.isfinite(val[:0x80])
    t = _fp8_tables[name] = (val, val[:0x80][keep].astype(np.float64), pos[keep].astype(np.uint8), nan_code)
    return t


def decode(data: np.ndarray, ty) -> np.ndarray:
    """Raw bf16/fp8 storage -> float32 values (exact)."""
    name = type_name(ty)
    if name == "bf16":
        return (np.asarray(data).astype(np.uint32) << np.uint32(16)).view(np.float32)
    return _fp8_table(name, getattr(ty, "scalar", ty))[0][np.asarray(data)]


def encode_bf16(f: np.ndarray, rtz: bool = False) -> np.ndarray:
    """float32 -> bf16 storage, round to nearest even (``rtz``: toward zero). A NaN keeps its sign and the
    top of its payload with the quiet bit set (the sanitizers' poison ids live there)."""
    f = np.asarray(f, dtype=np.float32)
    u = np.ascontiguousarray(f).view(np.uint32)
    hi = u >> np.uint32(16)
    if rtz:
        rounded = hi
    else:
        rounded = (u + np.uint32(0x7FFF) + (hi & np.uint32(1))) >> np.uint32(16)
    nan = f != f
    if nan.any():
        rounded = np.where(nan, hi | np.uint32(0x0040), rounded)
    return rounded.astype(np.uint16).reshape(np.shape(f))


def encode_fp8(f: np.ndarray, ty, rtz: bool = False) -> np.ndarray:
    """float32 -> fp8 storage: round to nearest even (``rtz``: toward zero), saturating at the largest
    finite value; NaN -> the format's NaN."""
    name = type_name(ty)
    _, vals, codes, nan_code = _fp8_table(name, getattr(ty, "scalar", ty))
    f = np.asarray(f, dtype=np.float64)
    a = np.minimum(np.abs(f), vals[-1])
    hi = np.clip(np.searchsorted(vals, a, side="left"), 0, len(vals) - 1)
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = a - vals[lo], vals[hi] - a
    if rtz:
        pick = np.where(vals[hi] == a, hi, lo)
    else:
        tie_even = (codes[hi] & 1) == 0
        pick = np.where((d_hi < d_lo) | ((d_hi == d_lo) & tie_even), hi, lo)
    out = codes[pick].astype(np.uint8)
    neg = np.signbit(f) & (out != 0 if name in ("fp8e4b8", "fp8e5b16") else True)
    out = np.where(neg, out | np.uint8(0x80), out)
    out = np.where(np.isnan(f), np.uint8(nan_code), out)
    return out.astype(np.uint8).reshape(np.shape(f))


def encode(f: np.ndarray, ty, rtz: bool = False) -> np.ndarray:
    """float32 values -> raw storage of ``ty`` (bf16, an fp8 type, or fp16: numpy's own rounding)."""
    name = type_name(ty)
    if name == "fp16":
        return np.asarray(f).astype(np.float16)
    return encode_bf16(f, rtz) if name == "bf16" else encode_fp8(f, ty, rtz)


# ---------------------------------------------------------------------------------------------------------
# handles
# ---------------------------------------------------------------------------------------------------------

def _tl():
    import triton.language as tl

    return tl


def _I():
    from triton.runtime import interpreter as I

    return I


def up(h):
    """A handle as fp32 when its type is bf16/fp8 (else itself)."""
    import triton.language as tl

    if type_name(h.dtype) not in LOWP or h.data.dtype.kind != "u":
        return h
    return _I().TensorHandle(decode(h.data, h.dtype), tl.float32)


def down(out, ty):
    """Triton's result computed on fp32 operands, as the handle it would be for operands of type ``ty``:
    float results rounded to ``ty``'s storage, comparisons as int1."""
    import triton.language as tl

    data = out.data
    if data.dtype == np.float32 or data.dtype == np.float64:
        return _I().TensorHandle(encode(data, ty), getattr(ty, "scalar", ty))
    if data.dtype == np.bool_:
        out.dtype = tl.int1
    return out


def _tensor(handle, like):
    """A tl.tensor of ``handle`` shaped like the tl.tensor ``like``."""
    import triton.language as tl

    ty = handle.dtype
    block = like.type.is_block() if hasattr(like.type, "is_block") else False
    return tl.core.tensor(handle, tl.block_type(ty, list(like.type.shape)) if block else ty)


# ---------------------------------------------------------------------------------------------------------
# wrappers
# ---------------------------------------------------------------------------------------------------------

_SELECT = (np.where,)


def _binary(orig):
    bitwise = (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift)

    def binary_op(self, lhs, rhs, op):
        ty = lhs.dtype
        if type_name(ty) not in LOWP and type_name(rhs.dtype) not in LOWP or op in bitwise:
            return orig(self, lhs, rhs, op)
        if type_name(ty) not in LOWP:
            ty = rhs.dtype
        return down(orig(self, up(lhs), up(rhs), op), ty)
    return binary_op


def _ternary(orig):
    def ternary_op(self, a, b, c, op):
        if op in _SELECT or not (type_name(b.dtype) in LOWP or type_name(c.dtype) in LOWP
                                 or type_name(a.dtype) in LOWP):
            return orig(self, a, b, c, op)
        ty = c.dtype if type_name(c.dtype) in LOWP else b.dtype if type_name(b.dtype) in LOWP else a.dtype
        return down(orig(self, up(a), up(b), up(c), op), ty)
    return ternary_op


def _values(orig, nargs: int, result_from: int):
    """Ops whose first ``nargs`` arguments are float values (unary_op(arg, op), fma(x, y, z), erf...)."""
    def wrapper(self, *args, **kwargs):
        vals = args[:nargs]
        if not any(type_name(getattr(h, "dtype", None)) in LOWP for h in vals):
            return orig(self, *args, **kwargs)
        ty = vals[result_from].dtype
        return down(orig(self, *[up(h) for h in vals], *args[nargs:], **kwargs), ty)
    return wrapper


def _cast(orig):
    """Casts to/from bf16/fp8 other than the fp32 <-> bf16 pair (which the rounding shim handles):
    bf16 -> int, int -> bf16, fp16/fp32/fp64 -> fp8 and back go through exact fp32 values."""
    import triton.language as tl

    def cast_impl(self, src, dst_type):
        s, d = type_name(src.dtype), type_name(dst_type)
        if s not in LOWP and d not in LOWP:
            return _as_gpu(src, orig(self, src, dst_type))
        src = up(src)
        if d in LOWP:
            f = src.data if src.data.dtype == np.float32 else orig(self, src, tl.float32).data
            return _I().TensorHandle(encode(f, dst_type), dst_type.scalar)
        return _as_gpu(src, orig(self, src, dst_type))
    return cast_impl


def _as_gpu(src, out):
    """A float-to-integer conversion's lanes of NaN or past the type's range as an H100 stores them (values.gpu_int:
    LLVM makes them poison; numpy's own values differ, 40000 -> int8 64 where the GPU stores -1); interp/casts.py
    warns where they are used."""
    x, y = getattr(src, "data", None), getattr(out, "data", None)
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray) or x.dtype.kind != "f" or y.dtype.kind not in "iu" \
            or y.dtype == np.bool_:
        return out
    from tritondbg.interp.values import gpu_int, out_of_range

    bad = out_of_range(x, y.dtype)
    if bad.any():
        fixed = gpu_int(np.trunc(x.astype(np.float64)), y.dtype)
        if fixed is not None:
            out.data = np.where(bad, fixed, y).astype(y.dtype)
    return out


def _fp_to_fp(orig):
    """fp8 conversions (and explicitly rounded bf16 ones): Triton's ``_convert_float`` rounds half up and
    mishandles the mantissa carry and fp8 NaN; decode exactly, round to nearest even (or toward zero)."""
    def create_fp_to_fp(self, src, dst_type, rounding_mode, *args, **kwargs):
        s, d = type_name(src.dtype), type_name(dst_type)
        if s not in LOWP and d not in LOWP:
            return orig(self, src, dst_type, rounding_mode, *args, **kwargs)
        src = up(src)
        if d in LOWP:
            rtz = "RTZ" in str(rounding_mode).upper()
            f = src.data.astype(np.float32)
            return _I().TensorHandle(encode(f, dst_type, rtz), dst_type.scalar)
        return _I().TensorHandle(src.data.astype(_I()._get_np_dtype(dst_type)), dst_type.scalar)
    return create_fp_to_fp


def _atomic_rmw(orig):
    """``tl.atomic_xchg`` on fp32 / fp64 (the C++ atomics refuse float exchanges); ``tl.atomic_add`` (and xchg)
    on bf16: the interpreter's C++ atomics refuse uint16 storage. Programs
    run one at a time, so read-modify-write the lanes in order (lanes hitting one address one after the
    other), adding in fp32 and rounding to bf16 as the GPU's ``red.add.bf16`` does. Returns the old values."""
    I = _I()
    ops = getattr(I._ir, "ATOMIC_OP", None)
    fadd, xchg = getattr(ops, "FADD", None), getattr(ops, "XCHG", None)

    def create_atomic_rmw(self, rmw_op, ptr, val, mask, *rest, **kwargs):
        ty = val.dtype
        if rmw_op == xchg and val.data.dtype in (np.float32, np.float64):
            # fp32 / fp64 exchange (the GPU's atom.exch.b32 / .b64): the C++ atomics take integers only
            # ("Unsupported data type"); an exchange moves bits, so it runs on the same bits as integers
            bits = I.TensorHandle(val.data.view(np.int32 if val.data.dtype == np.float32 else np.int64),
                                  _tl().int32 if val.data.dtype == np.float32 else _tl().int64)
            old = orig(self, rmw_op, ptr, bits, mask, *rest, **kwargs)
            return I.TensorHandle(np.asarray(old.data).view(val.data.dtype), getattr(ty, "scalar", ty))
        if type_name(ty) not in LOWP or rmw_op not in (fadd, xchg):
            return orig(self, rmw_op, ptr, val, mask, *rest, **kwargs)
        p = np.asarray(ptr.data)
        shape = p.shape
        flat_p = p.reshape(-1)
        flat_v = np.broadcast_to(val.data, shape).reshape(-1)
        flat_m = np.broadcast_to(np.asarray(mask.data, dtype=bool), shape).reshape(-1)
        storage = val.data.dtype
        old = np.zeros(flat_p.size, dtype=storage)
        live = np.flatnonzero(flat_m)
        if live.size:
            addrs = flat_p[live]
            order = np.argsort(addrs, kind="stable")
            srt = addrs[order]
            start = np.r_[True, srt[1:] != srt[:-1]]
            group = np.maximum.accumulate(np.where(start, np.arange(srt.size), 0))
            rank = np.empty(srt.size, dtype=np.int64)
            rank[order] = np.arange(srt.size) - group
            for r in range(int(rank.max()) + 1):
                sel = live[rank == r]
                pp = np.ascontiguousarray(flat_p[sel])
                ones = np.ones(sel.size, dtype=bool)
                cur = I._interpreter.load(pp, ones, np.zeros(sel.size, dtype=storage), storage)
                v = flat_v[sel]
                new = v if rmw_op == xchg else encode(decode(cur, ty) + decode(v, ty), ty)
                I._interpreter.store(pp, np.ascontiguousarray(new), ones)
                old[sel] = cur
        return I.TensorHandle(old.reshape(shape), getattr(ty, "scalar", ty))
    return create_atomic_rmw


def _fast_combine(fn) -> bool:
    import triton.language as tl

    std = tl.standard
    names = ("_sum_combine", "_elementwise_max", "_elementwise_min", "_prod_combine",
             "_argmax_combine_tie_break_left", "_argmax_combine_tie_break_fast",
             "_argmin_combine_tie_break_left", "_argmin_combine_tie_break_fast")
    return any(getattr(std, n, None) is fn for n in names)


def _reduce_scan(orig):
    """tl.sum/max/min/argmax/argmin/cumsum/cumprod on bf16/fp8: Triton's numpy fast paths sum and compare
    raw bits; run them on fp32 values and round the float results back (other combine functions run
    through the wrapped elementwise ops, one rounded op at a time, as on the GPU). fp16 too: numpy sums a
    strided axis (``tl.sum(x, axis=0)`` of a 2-D block) and scans one fp16 rounding after another, so
    4096 ones sum to 2048; the GPU's tree rounds ~log2(n) times, fp32 with one rounding is closer."""
    import triton.language as tl

    def narrow(t) -> bool:
        return is_lowp(t) or t.handle.data.dtype == np.float16

    def widen(t):
        h = t.handle
        if h.data.dtype == np.float16:
            return _tensor(_I().TensorHandle(h.data.astype(np.float32), tl.float32), t)
        return _tensor(up(h), t)

    def apply_impl(self, input):
        if not any(narrow(t) for t in input) or not _fast_combine(self.combine_fn):
            return orig(self, input)
        ret = orig(self, tuple(widen(t) if narrow(t) else t for t in input))
        outs = list(ret) if isinstance(ret, (list, tuple)) else [ret]
        for i, o in enumerate(outs):
            src = input[min(i, len(input) - 1)]
            h = getattr(o, "handle", None)
            if h is not None and narrow(src) and h.dtype == tl.float32:
                outs[i] = _tensor(down(h, src.handle.dtype), o)
        if isinstance(ret, tuple):
            return tuple(outs)
        return outs if isinstance(ret, list) else outs[0]
    return apply_impl


def _patches():
    I = _I()
    B = I.InterpreterBuilder
    out: list[tuple[Any, str, Any]] = [
        (B, "binary_op", _binary),
        (B, "ternary_op", _ternary),
        (B, "unary_op", lambda o: _values(o, 1, 0)),
        (B, "create_fma", lambda o: _values(o, 3, 2)),
        (B, "create_erf", lambda o: _values(o, 1, 0)),
        (B, "create_rsqrt", lambda o: _values(o, 1, 0)),
        (B, "cast_impl", _cast),
        (B, "create_fp_to_fp", _fp_to_fp),
        (B, "create_atomic_rmw", _atomic_rmw),
        (I.ReduceOps, "apply_impl", _reduce_scan),
        (I.ScanOps, "apply_impl", _reduce_scan),
    ]
    return out


def _get_bf16(self, value):
    """A bf16 scalar constant (``tl.where(m, x_bf16, 0.0)``); Triton 3.6's builder lacks it (3.9 has it)."""
    import triton.language as tl

    return self.create_fp_trunc(self.get_fp32(value), tl.bfloat16)


def install():
    """Wrap the builder's value ops (idempotent); returns the function that undoes it."""
    if not _saved:
        for owner, name, factory in _patches():
            orig = owner.__dict__.get(name)
            if orig is None:
                continue
            _saved[(owner, name)] = (orig,)
            setattr(owner, name, factory(orig))
        B = _I().InterpreterBuilder
        if not hasattr(B, "get_bf16") and hasattr(B, "get_fp32") and hasattr(B, "create_fp_trunc"):
            B.get_bf16 = _get_bf16
            _saved[(B, "get_bf16")] = (None,)
    return uninstall


def uninstall() -> None:
    for (owner, name), (orig,) in list(_saved.items()):
        if orig is None:
            delattr(owner, name)
        else:
            setattr(owner, name, orig)
    _saved.clear()
