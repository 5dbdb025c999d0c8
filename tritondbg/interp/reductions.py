"""``tl.reduce`` / ``tl.associative_scan`` with a combine function of the kernel's own, vectorised.

The interpreter computes those (every reduction torch.compile writes: Inductor's ``triton_helpers.max2``, ``welford``;
a user's argmax with a tuple combine) one element at a time, calling the combine function on scalars: a 37 x 256
max took 19 s under the bare interpreter (helper report, session 36), where ``tl.max`` takes milliseconds.

- reduce: a tree over the reduced axis, adjacent pairs combined left with right as whole blocks (log2(n) calls of
  the combine function), an odd last element carried to the next round: the order of the operands is kept, so an
  associative combine (what ``tl.reduce`` requires: the GPU reduces as a tree too) gives the fold's value, up to
  the rounding of another association order.
- scan: the fold along the axis, each step on the whole slice across the other axes (n calls, not n x the rest):
  the same values, in the same order, as the interpreter's.

A combine function that cannot take blocks (a Python ``if`` on its arguments: asking a block for its truth value
raises while it runs) falls back to the interpreter's own element-by-element path.
"""
from __future__ import annotations

import contextlib

import numpy as np

from tritondbg.errors import KernelError


class _NotBlockwise(Exception):
    """The combine function asked a block for one truth value (``if a > b:``): it works on scalars only."""


@contextlib.contextmanager
def _blocks_have_no_truth():
    """While the block path runs, a block's truth value raises (the interpreter answers True for any block, so
    ``if a > b:`` on blocks gave a wrong result); a one-element value answers as before."""
    import triton.language as tl

    cls = tl.core.tensor
    had = "__bool__" in cls.__dict__
    old = cls.__dict__.get("__bool__")

    def strict(self):
        if np.size(self.handle.data) > 1:
            raise _NotBlockwise
        return old(self) if old is not None else bool(np.asarray(self.handle.data).all())

    cls.__bool__ = strict
    try:
        yield
    finally:
        if had:
            cls.__bool__ = old
        else:
            del cls.__bool__


class CombineReturnsNothing(KernelError, TypeError):
    """The combine function gave None: said as it is, not left to the interpreter's path (whose ``IndexError: tuple
    index out of range`` named neither the function nor the missing ``return``: helper-114)."""


def _no_return(fn) -> str:
    from tritondbg.interp.frames import site_name
    from tritondbg.missing_return import kernel_line

    py = getattr(fn, "fn", fn)
    at = kernel_line(py, 1)  # its ``def`` line
    where = f" ({site_name(at[0])}:{at[1]})" if at else ""
    return (f"the combine function {getattr(py, '__name__', '?')}{where} of this tl.reduce / "
            "tl.associative_scan returns nothing: a forgotten `return`?")


def _call(op, left, right, dtypes):
    """combine_fn(*left, *right) on numpy blocks -> numpy blocks, each in its operand's numpy dtype."""
    ret = op.combine_fn.fn(*(op.to_tensor(np.ascontiguousarray(x), dt) for x, dt in zip(left, dtypes)),
                           *(op.to_tensor(np.ascontiguousarray(x), dt) for x, dt in zip(right, dtypes)))
    if ret is None:
        raise CombineReturnsNothing(_no_return(op.combine_fn))
    ret = ret if isinstance(ret, tuple) else (ret,)
    if len(ret) != len(left):
        raise ValueError("the combine function returned another number of values")
    out = []
    for r, x in zip(ret, left):
        data = np.asarray(r.handle.data if hasattr(r, "handle") else r)
        out.append(np.array(np.broadcast_to(data, x.shape), dtype=x.dtype))
    return out


def _reduce(op, input):
    original_axis = op.axis
    input, axis = op.unravel(input, op.axis)
    dtypes = [arg.dtype for arg in input]
    xs = [np.moveaxis(arg.handle.data, axis, -1) for arg in input]
    shape = input[0].handle.data.shape
    if xs[0].shape[-1] == 0:
        raise ValueError("an empty axis")  # the interpreter's own path says what it says
    while xs[0].shape[-1] > 1:
        n = xs[0].shape[-1]
        half = n // 2
        merged = _call(op, [x[..., 0:2 * half:2] for x in xs], [x[..., 1:2 * half:2] for x in xs], dtypes)
        if n % 2:
            merged = [np.concatenate([m, x[..., -1:]], axis=-1) for m, x in zip(merged, xs)]
        xs = merged
    ret = []
    for x, dt in zip(xs, dtypes):
        data = x[..., 0]
        if op.keep_dims:
            if original_axis is not None:
                data = np.expand_dims(data, axis)
            else:
                for _ in range(len(shape)):
                    data = np.expand_dims(data, 0)
        elif original_axis is None:
            data = data.item()
        ret.append(op.to_tensor(data, dt))
    return ret


def _scan(op, input):
    dtypes = [arg.dtype for arg in input]
    xs = [np.moveaxis(arg.handle.data, op.axis, -1) for arg in input]
    outs = [np.array(x, copy=True) for x in xs]
    for i in range(1, xs[0].shape[-1]):  # slices keep the axis (length 1): never a 0-d block
        step = _call(op, [o[..., i - 1:i] for o in outs], [x[..., i:i + 1] for x in xs], dtypes)
        for o, s in zip(outs, step):
            o[..., i:i + 1] = s
    return [op.to_tensor(np.ascontiguousarray(np.moveaxis(o, -1, op.axis)), dt) for o, dt in zip(outs, dtypes)]


def install():
    from triton.runtime import interpreter as I

    reduce_cls, scan_cls = I.ReduceOps, I.ScanOps  # AttributeError: another interpreter, the shim is skipped
    slow_reduce, slow_scan = reduce_cls.generic_reduce, scan_cls.generic_scan

    def generic_reduce(self, input):
        try:
            with _blocks_have_no_truth():
                return _reduce(self, input)
        except CombineReturnsNothing:
            raise
        except Exception:  # noqa: BLE001 - a combine function that takes scalars only: the interpreter's path
            return slow_reduce(self, input)

    def generic_scan(self, input):
        try:
            with _blocks_have_no_truth():
                return _scan(self, input)
        except CombineReturnsNothing:
            raise
        except Exception:  # noqa: BLE001
            return slow_scan(self, input)

    reduce_cls.generic_reduce, scan_cls.generic_scan = generic_reduce, generic_scan

    def undo():
        reduce_cls.generic_reduce, scan_cls.generic_scan = slow_reduce, slow_scan
    return undo
