"""Shadow state carried on the interpreter's values, for the sanitizers: the builder's ops wrapped so the
shadows propagate (the shadows themselves and the NaN/Inf check: shadow_values.py; the elementwise pad rules:
shadow_pads.py).

Every interpreter value is a ``TensorHandle`` (numpy ``data`` + Triton ``dtype`` + an ``attr`` dict). Two
shadows ride in ``attr``, propagated by wrapping the builder's value ops (names shared by Triton 3.6/3.9):

- ``tdbg_pad`` (uint8, the value's shape): 0 for a real lane; 2 for a lane that a masked load filled
  with ``other`` (padding); k >= 3 for a lane a masked load left undefined (no ``other``), k - 2 being the
  poison id of that load's line; 1 ("fill") for a lane where ``tl.where`` put a real value in place of
  padding (``tl.where(mask, x - mean, 0.0)``: a deliberate neutral value, not padding, but it does not
  make a padded row real either). Elementwise ops take the max over operands (a product whose other factor
  is exactly 0 is real again: ``delta * x`` with ``delta == 0`` on padded lanes does not depend on x; not so
  for an undefined factor, garbage that may be Inf or NaN; a finite padded term plus an Inf is a fill;
  shadow_pads.py has the rules);
  ``tl.where`` takes the chosen side; a reduction's result is padding where its slice had no real lane.
- ``tdbg_base`` (int, pointer values only): the address of the argument a pointer was derived from, so an
  out-of-bounds access is judged against *its* tensor, not whatever memory happens to lie there.

Checks made here, reported to the active sanitizer (``set_sink``):
- a reduction (sum/max/min/argmax/argmin) or ``tl.dot`` whose result changes when its padding lanes are
  dropped (e.g. a variance summed over padded lanes): ``masked_reduction`` at the reduction's line, or
  ``poison`` at the load's line when the lanes were undefined;
- an op that produces NaN/Inf its inputs did not hold (lanes that are padding do not count).
Checks are vectorised numpy on the op's whole block; the fast path (no shadow, all finite) is two tests.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tritondbg.interp import casts, dot_zeros, lowp_accum, nan_origin, nan_stores, shadow_pads, shifts
# the pad rules of elementwise ops (value-aware: x * 0, x + 0, max/min, m & cond) and undefined lanes times 0
from tritondbg.interp.shadow_pads import (_elementwise_pad, _from_uninit, _times_zero, _untold,
                                         padding_share, won_by_undefined)
# the shadows themselves (also what sanitize.py reads through this module: set_sink, _sink, base_of, as_float,
# _scalar_ty, PAD)
from tritondbg.interp.shadow_values import (BASE, INDEX, PAD, _bcast, _check_new_nonfinite, _debug_raise, _is_bf16,  # noqa: F401
                                            _max_pads, _nonfinite, _nonzero, _scalar_ty, _set_pad, _sink,
                                            _site_frame, as_float, base_of, floatlike, from_indices, is_pointer, mark_indices,
                                            pad_of, reduce_nonfinite, set_sink)

_saved: dict[str, Any] = {}  # (owner, name) -> the builder function install() replaced

# ---------------------------------------------------------------------------------------------------------
# wrappers: elementwise
# ---------------------------------------------------------------------------------------------------------

def _wrap_binary(orig):
    def binary_op(self, lhs, rhs, op):
        out = orig(self, lhs, rhs, op)
        mark_indices(out, (lhs, rhs))
        if PAD in lhs.attr or PAD in rhs.attr:
            _elementwise_pad(out, (lhs, rhs), op)
            if op is np.multiply:
                try:
                    _times_zero(out, lhs, rhs)
                except Exception:  # shadow bookkeeping must never break a kernel
                    _debug_raise()
        if floatlike(out):
            _check_new_nonfinite(getattr(op, "__name__", "op"), out, (lhs, rhs))
            if op is np.fmax or op is np.fmin:  # tl.maximum / tl.minimum / tl.clamp: a NaN in, a number out
                nan_stores.swallowed(out, (lhs, rhs), op)
            san = _sink["san"]
            if san is not None and san.accum_lines and (op is np.add or op is np.subtract):
                lowp_accum.note(san, out)  # a running sum in bf16 / fp16?
        return out
    return binary_op


def _wrap_ternary(orig):
    def ternary_op(self, lhs, rhs, other, op):
        out = orig(self, lhs, rhs, other, op)
        mark_indices(out, (lhs, rhs, other))
        if op is np.where:
            shape = out.data.shape
            pc, pa, pb = (pad_of(h) for h in (lhs, rhs, other))
            if pc is not None or pa is not None or pb is not None:
                cond = _bcast(lhs.data.astype(bool), shape)
                za = _bcast(pa, shape) if pa is not None else np.uint8(0)
                zb = _bcast(pb, shape) if pb is not None else np.uint8(0)
                chosen, skipped = np.where(cond, za, zb), np.where(cond, zb, za)
                p = np.where((chosen == 0) & (skipped >= 1), 1, chosen)  # a real value put over padding
                if pc is not None:
                    pcb = _bcast(pc, shape)
                    # a condition computed from padding that keeps a lane's own data (a running max
                    # `tl.where(x > acc, x, acc)` over `other=-inf`, helper-77): the lane holds real data, as
                    # designed; one that picks a constant there (`tl.where(x > 0, x, 1.0)`) stays padding
                    kept = (pcb == 2) & (chosen == 0) & np.where(cond, not from_indices(rhs),
                                                                 not from_indices(other))
                    p = np.where(kept, p, np.maximum(p, pcb))
                _set_pad(out, np.asarray(p, dtype=np.uint8))
            if is_pointer(out):
                ba, bb = base_of(rhs), base_of(other)
                if ba is not None and ba == bb:
                    out.attr[BASE] = ba
            nan_origin.where(out, lhs.data, rhs, other, _nonfinite)  # the id of the branch each lane takes
        else:
            _elementwise_pad(out, (lhs, rhs, other))
            _carry_origin(out, (lhs, rhs, other))
        return out
    return ternary_op


def _carry_origin(out, ins) -> None:
    """An op that cannot make a NaN/Inf (a select, a max over a slice): its non-finite lanes keep their ids."""
    if any(nan_origin.origin_of(h) is not None for h in ins):
        nf = _nonfinite(out)
        if nf is not None:
            nan_origin.after_op(out, ins, nf[0] | nf[1])


def _wrap_unary_like(orig, name, nargs=1, check_nonfinite=True):
    """Ops whose leading ``nargs`` arguments are the values: unary_op(arg, op), fma(x, y, z), casts..."""
    def wrapper(self, *args, **kwargs):
        out = orig(self, *args, **kwargs)
        if not hasattr(out, "attr"):
            return out
        ins = args[:nargs]
        mark_indices(out, ins)
        if any(PAD in getattr(h, "attr", ()) for h in ins):
            _elementwise_pad(out, ins, "fma" if name == "fma" else None)
        if check_nonfinite and floatlike(out):  # (a cast to fp8 too: its NaN lanes keep their origin)
            op = args[1] if name == "unary_op" and len(args) > 1 else None
            _check_new_nonfinite(getattr(op, "__name__", name), out, ins)
        return out
    return wrapper


# ---------------------------------------------------------------------------------------------------------
# wrappers: shape ops and pointers
# ---------------------------------------------------------------------------------------------------------

def _wrap_shape(orig, transform, src_index=0):
    """``transform(pad, out, args)`` maps the source's pad to the output's; pointer bases are copied."""
    def wrapper(self, *args, **kwargs):
        out = orig(self, *args, **kwargs)
        src = args[src_index]
        mark_indices(out, (src,))
        attr = getattr(src, "attr", None)
        if attr:
            nan_origin.moved(out, src, lambda o: transform(o, out, args))
            p = attr.get(PAD)
            if p is not None and hasattr(out, "attr"):
                try:
                    _set_pad(out, np.ascontiguousarray(transform(p, out, args)).astype(np.uint8))
                except Exception:  # a shape this transform does not know: drop the shadow, never fail
                    pass
        if hasattr(out, "attr") and is_pointer(src):
            b = base_of(src)
            if b is not None:
                out.attr[BASE] = b
        return out
    return wrapper


def _wrap_make_range(orig):
    def create_make_range(self, *args, **kwargs):
        out = orig(self, *args, **kwargs)
        if hasattr(out, "attr"):
            out.attr[INDEX] = True
        return out
    return create_make_range


def _wrap_pair(orig, combine):
    def wrapper(self, lhs, rhs, *args, **kwargs):
        out = orig(self, lhs, rhs, *args, **kwargs)
        pl, pr = pad_of(lhs), pad_of(rhs)
        if (pl is not None or pr is not None) and hasattr(out, "attr"):
            try:
                zl = pl if pl is not None else np.zeros(lhs.data.shape, np.uint8)
                zr = pr if pr is not None else np.zeros(rhs.data.shape, np.uint8)
                _set_pad(out, combine(zl, zr))
            except Exception:
                pass
        if hasattr(out, "attr") and is_pointer(lhs) and base_of(lhs) is not None and base_of(lhs) == base_of(rhs):
            out.attr[BASE] = base_of(lhs)
        return out
    return wrapper


def _wrap_split(orig):
    def create_split(self, val, *args, **kwargs):
        outs = orig(self, val, *args, **kwargs)
        p = pad_of(val)
        if p is not None:
            for i, o in enumerate(outs):
                _set_pad(o, np.ascontiguousarray(p[..., i]))
        return outs
    return create_split


def _wrap_addptr(orig):
    def create_addptr(self, ptr, offset):
        out = orig(self, ptr, offset)
        b = base_of(ptr)
        if b is not None:
            out.attr[BASE] = b
        if PAD in ptr.attr or PAD in offset.attr:  # an offset from undefined lanes: memops reports the access
            _elementwise_pad(out, (ptr, offset))
        return out
    return create_addptr


# ---------------------------------------------------------------------------------------------------------
# reductions and dot
# ---------------------------------------------------------------------------------------------------------

def _reduce_kind(combine_fn) -> str:
    import triton.language as tl

    std = tl.standard
    table = {"sum": ("_sum_combine",), "max": ("_elementwise_max",), "min": ("_elementwise_min",),
             "argmax": ("_argmax_combine_tie_break_left", "_argmax_combine_tie_break_fast"),
             "argmin": ("_argmin_combine_tie_break_left", "_argmin_combine_tie_break_fast")}
    for kind, names in table.items():
        for n in names:
            if getattr(std, n, None) is not None and combine_fn is getattr(std, n):
                return kind
    return "other"


def _unknown(x: np.ndarray, undefined: np.ndarray) -> np.ndarray:
    """``x`` with its undefined lanes (a masked load's without ``other``) as NaN: on the GPU they hold garbage,
    whatever the ops since the load made of the interpreter's poison (``tl.where(x > 0, x, 0.0)`` turns its
    NaN into 0; an integer's poison is the smallest value, which no max picks)."""
    if not undefined.any():
        return x
    return np.where(undefined, np.nan, x.astype(np.float64, copy=False))


def check_reduce(kind: str, x: np.ndarray, p: np.ndarray, axis: int | None, skip: np.ndarray | None = None,
                 nan_in_data: bool = False):
    """Lanes of padding that change a reduction: (defined_bad, undefined_bad) boolean arrays over x, the
    undefined ones holding poison ids; None when nothing changes. Slices that are all padding are skipped
    (their result is itself padding), and so are the lanes ``skip`` marks (NaN computed from uninitialized memory:
    the uninit finding says it). ``nan_in_data``: no op of the run made a NaN from finite values only, so a NaN
    here came in with the data (or from its Inf: 0 * inf, helper-84's inf scale after a forgotten eps upstream); a
    sum whose real lanes hold one is NaN whatever its padding holds."""
    if axis is None:
        x, p, axis = x.reshape(-1), p.reshape(-1), 0
        skip = None if skip is None else skip.reshape(-1)
    padded = p >= 2
    allpad = (p >= 1).all(axis=axis, keepdims=True)  # no real lane: the result is padding itself
    if kind == "sum":
        allpad = allpad | _selects(x, p, axis)
    live = padded & ~allpad
    if not live.any():
        return None
    x = _unknown(x, live & (p >= 3))
    if kind == "sum":
        bad = live & ((x != 0) | np.isnan(x))
        if nan_in_data:  # (defined padding only, as ``skip``)
            bad &= ~((np.isnan(x) & ~padded).any(axis=axis, keepdims=True) & (p == 2))
    elif kind in ("max", "argmax"):
        real = np.where(padded | np.isnan(x), -np.inf, x)
        top = real.max(axis=axis, keepdims=True)
        bad = live & ((x > top) | (np.isnan(x) & (p >= 3)))
    elif kind in ("min", "argmin"):
        real = np.where(padded | np.isnan(x), np.inf, x)
        low = real.min(axis=axis, keepdims=True)
        bad = live & ((x < low) | (np.isnan(x) & (p >= 3)))
    else:
        return None
    if skip is not None:  # (padding only: lanes an uninit load made undefined still reach the sum as its finding)
        bad = bad & ~(skip & (p == 2))
    if not bad.any():
        return None
    return bad & (p == 2), bad & (p >= 3)


def _selects(x: np.ndarray, p: np.ndarray, axis: int) -> np.ndarray:
    """Slices of a sum (keepdims) whose lanes other than padding all hold exactly 0 while a padding lane does not:
    the sum selects its padding rather than mixing it into data (a bitonic sort's ``tl.sum(y * (1 - mask), 1)``
    over pairs picks one lane, and a padded lane with a sentinel, other=-1, is sorted on purpose: helper-64,
    TransformerEngine's permutation). The result is that padding, passed on, not a finding. A row whose data and
    padding are all 0 sums to a real 0 (helper-97: ``x / tl.sum(x)`` of an all-zero row, other=0.0, made 0/0 = NaN
    in every lane, all taken for padding: no finding)."""
    with np.errstate(invalid="ignore"):
        return (((p >= 2) | (x == 0)).all(axis=axis, keepdims=True)
                & ((p >= 2) & (x != 0)).any(axis=axis, keepdims=True))


def _wrap_reduce(orig):
    def apply(self, input):
        # Triton 3.9's apply(x) calls apply((x,)) again: only the outermost call checks (once, not twice)
        depth = self.__dict__.get("_tdbg_depth", 0)
        self._tdbg_depth = depth + 1
        try:
            ret = orig(self, input)
        finally:
            self._tdbg_depth = depth
        if depth:
            return ret
        try:
            _post_reduce(self, input, ret)
        except Exception:  # shadow bookkeeping must never break a kernel
            _debug_raise()
        return ret
    return apply


def _post_reduce(op, input, ret) -> None:
    first = input[0] if isinstance(input, tuple) else input
    p = pad_of(first.handle)
    outs = ret if isinstance(ret, tuple) else (ret,)
    axis, keep = op.axis, getattr(op, "keep_dims", False)
    kind = _reduce_kind(op.combine_fn)
    if kind not in ("max", "min", "argmax", "argmin"):
        reduce_nonfinite(kind, [t.handle for t in input] if isinstance(input, tuple) else [first.handle], outs,
                         axis, keep)
        shadow_pads.custom_reduce_padding(kind, input, outs, axis, keep)
    elif kind in ("max", "min"):  # a NaN lane makes the max NaN: its id goes on
        for o in outs:
            if getattr(o, "handle", None) is not None:
                _carry_origin(o.handle, (first.handle,))
    if p is None:
        return
    san = _sink["san"]
    x = as_float(first.handle)
    if x is None:
        x = first.handle.data.astype(np.float64)
    p = _bcast(p, x.shape)
    res = check_reduce(kind, x, p, axis, _from_uninit(first.handle, san, x.shape),
                       nan_in_data=san is not None and not san.made_from_finite)
    if res is not None and san is not None:
        share = padding_share(kind, first.handle, x, p, axis, res[0]) if res[0].any() else None
        origin = nan_origin.origin_of(first.handle)  # (which op made a padding lane's NaN: helper-117)
        san.reduction_event(kind, x.reshape(res[0].shape), res[0], res[1], p.reshape(res[0].shape), _site_frame(),
                            integer=first.handle.data.dtype.kind in "iu", share=share,
                            origin=None if origin is None else _bcast(origin, x.shape).reshape(res[0].shape))
    # the result is padding where the reduced slice had no real lane (or, for a sum, selects its padding)
    padded = p >= 1
    if axis is None:
        whole = bool(padded.all()) or (kind == "sum" and bool(_selects(x.reshape(-1), p.reshape(-1), 0).all()))
        val = np.array([p.max() if whole else 0], dtype=np.uint8)
    else:
        allpad = padded.all(axis=axis, keepdims=keep)
        if kind == "sum":
            sel = _selects(x, p, axis)
            allpad = allpad | (sel if keep else np.squeeze(sel, axis=axis))
        val = np.where(allpad, p.max(axis=axis, keepdims=keep), 0).astype(np.uint8)
    if kind in ("max", "min"):
        val = won_by_undefined(kind, x, p, axis, keep, val)
    for o in outs:
        h = getattr(o, "handle", None)
        if h is not None and h.data.shape == val.shape:
            _set_pad(h, val)
        elif h is not None and h.data.size == val.size and bool((val >= 3).any()):
            _set_pad(h, val.reshape(h.data.shape))  # a block reduced to one value (data (1,), val ()) that an
            # undefined lane won (won_by_undefined); its padding alone stays unmarked there, as before


def _wrap_scan(orig):
    def apply(self, input):
        ret = orig(self, input)
        first = input[0] if isinstance(input, tuple) else input
        p = pad_of(first.handle)
        if p is not None:
            for o in (ret if isinstance(ret, tuple) else (ret,)):
                h = getattr(o, "handle", None)
                if h is not None and h.data.shape == p.shape:
                    _set_pad(h, p)
        return ret
    return apply


def check_dot(a: np.ndarray, b: np.ndarray, pa, pb):
    """Padding lanes of a (M, K) @ b (K, N) that change a real output element.

    Returns (out_pad, bad): out_pad marks outputs whose row of ``a`` or column of ``b`` has no real lane;
    bad is None, or (defined_a, defined_b, undefined_a, undefined_b, pa, pb) flagging the padded operand
    lanes (in real rows and columns) that change a real output element."""
    pa = np.zeros(a.shape, np.uint8) if pa is None else np.broadcast_to(pa, a.shape)
    pb = np.zeros(b.shape, np.uint8) if pb is None else np.broadcast_to(pb, b.shape)
    rowpad = (pa >= 1).all(axis=-1)                 # (..., M): no real lane in the row
    colpad = (pb >= 1).all(axis=-2)                 # (..., N)
    out_pad = rowpad[..., :, None] | colpad[..., None, :]
    live_a = (pa >= 2) & ~rowpad[..., :, None]
    live_b = (pb >= 2) & ~colpad[..., None, :]
    a, b = _unknown(a, live_a & (pa >= 3)), _unknown(b, live_b & (pb >= 3))
    bad_a = live_a & ((a != 0) | np.isnan(a))
    bad_b = live_b & ((b != 0) | np.isnan(b))
    if not bad_a.any() and not bad_b.any():
        return out_pad, None
    # a nonzero padded lane is harmless when every product it makes is 0: check the real outputs exactly
    with np.errstate(all="ignore"):
        full = np.matmul(np.nan_to_num(a, nan=1.0), np.nan_to_num(b, nan=1.0))
        clean = np.matmul(np.where(live_a, 0, np.nan_to_num(a, nan=1.0)), np.where(live_b, 0, np.nan_to_num(b, nan=1.0)))
        scale = np.matmul(np.abs(np.nan_to_num(a, nan=1.0)), np.abs(np.nan_to_num(b, nan=1.0)))
    nan_hit = (np.matmul(np.isnan(a) & live_a, np.ones(b.shape, bool)) |
               np.matmul(np.ones(a.shape, bool), np.isnan(b) & live_b)).astype(bool)
    changed = ((np.abs(full - clean) > 1e-9 * scale + 1e-300) | nan_hit) & ~out_pad
    if not changed.any():
        return out_pad, None
    return out_pad, (bad_a & (pa == 2), bad_b & (pb == 2), bad_a & (pa >= 3), bad_b & (pb >= 3), pa, pb)


def _dot_values(h):
    """A dot operand as float64: a float's values, or an integer's (int8 / uint8 GEMMs: exact in float64 for any
    K a kernel runs); None for pointers."""
    x = as_float(h)
    if x is None and h.data.dtype.kind in "iu" and not is_pointer(h):
        x = h.data.astype(np.float64)
    return x


def _wrap_dot(orig):
    def create_dot(self, a, b, d, *args, **kwargs):
        after = None
        try:
            a, b, after = dot_zeros.times_zero(a, b, _dot_values(a), _dot_values(b))
        except Exception:  # shadow bookkeeping must never break a kernel
            _debug_raise()
        out = orig(self, a, b, d, *args, **kwargs)
        try:
            pa, pb, pd = pad_of(a), pad_of(b), pad_of(d)
            shape = out.data.shape
            if pa is not None or pb is not None:
                fa, fb = _dot_values(a), _dot_values(b)
                if fa is not None and fb is not None:
                    out_pad, bad = check_dot(fa, fb, pa, pb)
                    san = _sink["san"]
                    bad = _untold(bad, a, b, san) if bad is not None and san is not None else None
                    if bad is not None:
                        san.dot_event(bad, _site_frame(), (fa, fb))
                    p = np.where(out_pad, 2, 0).astype(np.uint8)
                    if san is not None and out_pad.any():
                        shadow_pads.note_undefined_dot(san, pa, pb, fa.shape, fb.shape)
                    if pd is not None:
                        p = np.maximum(p, _bcast(pd, shape))
                    _set_pad(out, p)
            elif pd is not None:
                _set_pad(out, np.ascontiguousarray(_bcast(pd, shape)))
            if _nonfinite(out) is not None:
                nfa, nfb, nfd = _nonfinite(a), _nonfinite(b), _nonfinite(d)
                in_nan = np.zeros(shape, bool)
                in_any = np.zeros(shape, bool)
                for nf, reduce_axis, expand in ((nfa, -1, -1), (nfb, -2, -2)):
                    if nf is None:
                        continue
                    n_ = np.expand_dims(nf[0].any(axis=reduce_axis), expand)
                    i_ = np.expand_dims(nf[1].any(axis=reduce_axis), expand)
                    in_nan |= np.broadcast_to(n_, shape)
                    in_any |= np.broadcast_to(n_ | i_, shape)
                if nfd is not None:
                    in_nan |= _bcast(nfd[0], shape)
                    in_any |= _bcast(nfd[0] | nfd[1], shape)
                _check_new_nonfinite("dot", out, (a, b, d), in_nf=(in_nan, in_any))
            if after is not None:  # outputs an undefined lane reached through a partner that is not 0 there
                after(out)
        except Exception:  # shadow bookkeeping must never break a kernel
            _debug_raise()
        return out
    return create_dot


# ---------------------------------------------------------------------------------------------------------
# install
# ---------------------------------------------------------------------------------------------------------

def _patches():
    """(owner, attribute, wrapper factory) for every wrapped op that exists in this Triton."""
    from triton.runtime import interpreter as I

    B = I.InterpreterBuilder
    shape_ops = {
        "create_expand_dims": lambda p, out, a: np.expand_dims(p, a[1]),
        "create_broadcast": lambda p, out, a: np.broadcast_to(p, out.data.shape),
        "create_reshape": lambda p, out, a: p.reshape(out.data.shape),
        "create_trans": lambda p, out, a: np.transpose(p, a[1]) if len(a) > 1 else np.transpose(p),
        "create_gather": lambda p, out, a: np.take_along_axis(p, a[1].data, axis=a[2]),
        "create_unsplat": lambda p, out, a: p.reshape(-1)[:1],
    }
    out = [(B, "create_make_range", _wrap_make_range)]
    for name, fn in shape_ops.items():
        out.append((B, name, lambda orig, fn=fn: _wrap_shape(orig, fn)))
    out.append((B, "create_splat", lambda orig: _wrap_shape(orig, lambda p, o, a: np.full(o.data.shape, p.reshape(-1)[0]),
                                                              src_index=1)))
    out.append((B, "create_cat", lambda orig: _wrap_pair(orig, lambda l, r: np.concatenate([l, r]))))
    out.append((B, "create_join", lambda orig: _wrap_pair(orig, lambda l, r: np.stack([l, r], axis=-1))))
    out.append((B, "create_split", _wrap_split))
    out.append((B, "create_addptr", _wrap_addptr))
    out.append((B, "binary_op", _wrap_binary))
    out.append((B, "ternary_op", _wrap_ternary))
    out.append((B, "unary_op", lambda orig: _wrap_unary_like(orig, "unary_op")))
    for name, n in (("create_fma", 3), ("create_rsqrt", 1), ("create_erf", 1), ("create_fabs", 1),
                    ("create_idiv", 2), ("create_umulhi", 2), ("cast_impl", 1), ("create_fp_to_fp", 1),
                    ("create_bitcast", 1), ("create_int_to_ptr", 1), ("create_ptr_to_int", 1)):
        label = {"cast_impl": "cast", "create_fp_to_fp": "cast"}.get(name, name.replace("create_", ""))
        # a bitcast reinterprets bits: a NaN pattern there is the kernel's intent, not an overflow
        check = name not in ("create_bitcast", "create_int_to_ptr", "create_ptr_to_int")
        out.append((B, name, lambda orig, label=label, n=n, check=check: _wrap_unary_like(orig, label, n, check)))
    out.append((B, "create_dot", _wrap_dot))
    for name, op in (("create_shl", np.left_shift), ("create_lshr", np.right_shift), ("create_ashr", np.right_shift)):
        out.append((B, name, lambda orig, op=op: shifts.wrap(orig, op)))  # (ashr makes new handles: checked before)
    for name, from_float in (("create_fp_to_si", True), ("create_fp_to_ui", True), ("create_int_cast", False)):
        out.append((B, name, lambda orig, f=from_float: casts.wrap(orig, f)))  # (they call cast_impl, wrapped above)
    out.append((I.ReduceOps, "apply", _wrap_reduce))
    out.append((I.ScanOps, "apply", _wrap_scan))
    return out


def install() -> None:
    """Wrap the value ops (idempotent); ``uninstall`` restores them."""
    if _saved:
        return
    for owner, name, factory in _patches():
        own = name in owner.__dict__
        orig = getattr(owner, name, None)  # ReduceOps/ScanOps inherit ``apply``: wrap it on the subclass
        if orig is None:
            continue
        _saved[(owner, name)] = (orig, own)
        setattr(owner, name, factory(orig))


def uninstall() -> None:
    for (owner, name), (orig, own) in list(_saved.items()):
        if own:
            setattr(owner, name, orig)
        else:
            delattr(owner, name)
    _saved.clear()
