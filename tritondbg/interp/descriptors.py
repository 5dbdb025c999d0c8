"""Tensor descriptors under the interpreter: a descriptor TMA cannot take is refused with its numbers.

Triton's interpreter checks a device-side ``tl.make_tensor_descriptor`` and each descriptor load/store against
the rules of TMA (a 16-byte aligned base, every stride but the last a multiple of 16 bytes, the last one 1;
offsets along the last dimension 16-byte multiples, as ``tensor_descriptor.load`` documents), with bare
assertions: "stride must be 16-byte aligned" names neither the stride nor the tensor. A row of 70 float32 values
(280 bytes) is the usual cause, and the fix (pad the row to a multiple of 16 bytes) needs the numbers. Here the
same rules are checked first and a break raises ``DescriptorError`` (an AssertionError, as before) saying which
dimension, its value in elements and bytes, and the fix. Rules this module does not know about still reach the
interpreter's own check. Installed with the other shims (interp/shims.py).
"""
from __future__ import annotations

import numpy as np

from tritondbg.errors import KernelError


class DescriptorError(KernelError, AssertionError):
    """A tensor descriptor (or a load/store through one) that TMA cannot take."""


def _itemsize(desc) -> tuple[int, object]:
    ty = desc.base.dtype.element_ty
    return ty.primitive_bitwidth // 8, ty


def _ints(handles) -> list[int]:
    return [int(np.asarray(h.data).ravel()[0]) for h in handles]


def check(desc) -> None:
    """Raise DescriptorError when ``desc`` (an interpreter TensorDescHandle) breaks a TMA rule."""
    size, ty = _itemsize(desc)
    if size < 1:  # sub-byte element types: the interpreter's own check
        return
    base = int(np.asarray(desc.base.data).ravel()[0])
    shape, strides = _ints(desc.shape), _ints(desc.strides)
    what = f"tensor descriptor over {ty} shape {shape} strides {strides}"
    if base % 16:
        raise DescriptorError(f"{what}: base address {base:#x} is {base % 16} bytes past a 16-byte boundary; TMA "
                              f"needs a 16-byte aligned base (a view starting at an element offset that is not a "
                              f"multiple of {max(16 // size, 1)} {ty} elements breaks it)")
    for i, stride in enumerate(strides[:-1]):
        if stride * size % 16:
            raise DescriptorError(f"{what}: strides[{i}] = {stride} elements = {stride * size} bytes, not a multiple "
                                  f"of 16; TMA needs every stride but the last 16-byte aligned (pad each row to a "
                                  f"multiple of {max(16 // size, 1)} elements, or load this tensor with pointers)")
    if strides and strides[-1] != 1:
        raise DescriptorError(f"{what}: strides[-1] = {strides[-1]}; the last dimension must be contiguous "
                              "(stride 1)")


def check_offsets(desc, offsets) -> None:
    """Raise DescriptorError when a load/store through ``desc`` starts off a 16-byte multiple on the last dim."""
    size, ty = _itemsize(desc)
    if size < 1 or not offsets:
        return
    last = np.asarray(offsets[-1].data).ravel()
    bad = last[(last.astype(np.int64) * size) % 16 != 0]
    if bad.size:
        o = int(bad[0])
        raise DescriptorError(f"descriptor load/store over {ty} at offsets {_ints(offsets)}: the last offset is {o} "
                              f"elements = {o * size} bytes, not a multiple of 16 (Triton's tensor descriptors take "
                              f"last-dimension offsets in 16-byte steps: multiples of {max(16 // size, 1)} elements)")


DESC = "tdbg_descriptor"  # a pointer handle's attr: the descriptor it was made from, for an out-of-bounds finding


def _tag(desc, ptrs) -> None:
    """The pointers a descriptor load/store materialized derive from the descriptor's base (the tensor's argument,
    so a finding names it and how far past its end) and say which descriptor made them: its mask is the
    descriptor's shape, not a mask the kernel wrote."""
    from tritondbg.interp.shadow_values import BASE

    if not hasattr(ptrs, "attr"):
        return
    shape, strides = _ints(desc.shape), _ints(desc.strides)
    ptrs.attr[BASE] = int(np.asarray(desc.base.data).ravel()[0])
    ptrs.attr[DESC] = f"shape {shape}, strides {strides}"


def _quietly(fn, *args) -> None:
    """Run a check; a descriptor laid out otherwise than this module reads it (another Triton) is left to the
    interpreter's own check instead of failing the kernel here."""
    try:
        fn(*args)
    except DescriptorError:
        raise
    except (AttributeError, TypeError, ValueError, IndexError):
        return


def install():
    """Check before the interpreter's ``TensorDescHandle.validate`` / ``materialize_pointers``; returns the undo.
    AttributeError where this Triton's interpreter has no such class (the shim is then left out)."""
    from triton.runtime import interpreter as I

    cls = I.TensorDescHandle
    validate, materialize = cls.validate, cls.materialize_pointers

    def checked_validate(self, *args, **kwargs):
        _quietly(check, self)
        return validate(self, *args, **kwargs)

    def checked_materialize(self, offsets, *args, **kwargs):
        _quietly(check_offsets, self, offsets)
        out = materialize(self, offsets, *args, **kwargs)
        try:
            _tag(self, out[0])
        except Exception:  # noqa: BLE001 - a description only
            pass
        return out

    cls.validate, cls.materialize_pointers = checked_validate, checked_materialize

    def undo():
        cls.validate, cls.materialize_pointers = validate, materialize
    return undo
