"""Interpreter shims for what compiled Triton accepts and the interpreter does not, found on libraries' kernels.

Installed through ``shims.py`` (each maker returns its undo):

- ``dtype_value``: ``dtype.value`` in a ``@triton.jit`` helper handed a dtype (FlagGems' ``get_dtype_min``).
- ``tensor_like_args``: launch arguments that are not torch tensors but have ``data_ptr()`` and ``dtype``
  (FlagGems' ``StridedBuffer``), which Triton's launcher takes as pointers.
- ``constexpr_operands``: a ``tl.constexpr`` global on the left of an operator with a tensor (``ALPHA * x``).
- ``list_grids``: a grid given as a list, or a grid function returning one (Triton's layer-norm tutorial in
  tritonbench: ``grid = lambda meta: [triton.cdiv(N, meta["BLOCK_SIZE_N"])]``), or one of more than 3 entries
  (FlagGems' cumsum: ``(M, num_ctas, 1, 1)``; compiled Triton ignores the entries past the third).
"""
from __future__ import annotations

from typing import Any

from tritondbg.interp import memory


def dtype_value():
    """``dtype.value`` on a ``tl.dtype``: compiled Triton hands a ``@triton.jit`` helper's dtype argument over as a
    ``tl.constexpr``, whose ``.value`` is the dtype; the interpreter hands the dtype itself, which has no ``value``
    (FlagGems' ``utils/limits.py``: ``dtype_ = dtype.value`` in ``get_dtype_min(x_ptr.type.element_ty)``, used by
    argmax/argmin/max/min/cummax: AttributeError). While installed, a dtype's ``value`` is the dtype, as
    ``tl.constexpr(dtype).value`` is. Nothing in Triton asks a dtype for ``value`` (its own unwrapping tests
    ``isinstance(x, constexpr)``), and no dtype class defines one. Returns the undo."""
    import triton.language as tl

    cls = tl.core.dtype
    if any("value" in vars(k) for k in cls.__mro__) or any("value" in vars(k) for k in _subclasses(cls)):
        return lambda: None  # a Triton whose dtypes have one already: leave it

    cls.value = property(lambda self: self, doc="The dtype itself, as a constexpr's value (tritondbg's shim).")

    def undo():
        if isinstance(vars(cls).get("value"), property):
            del cls.value
    return undo


def _subclasses(cls) -> list[type]:
    out, todo = [], list(cls.__subclasses__())
    while todo:
        k = todo.pop()
        out.append(k)
        todo.extend(k.__subclasses__())
    return out


class HostView:
    """A tensor-like launch argument on the host when torch has no view for it (a negative stride: FlagGems' flip
    hands a ``StridedBuffer`` over its base reversed). ``span`` is a 1-D tensor over the bytes the view covers;
    ``data_ptr()`` is element [0, ..., 0] inside it, and shape/strides are the argument's, so the memory guard
    bounds the view as the original names it."""

    def __init__(self, span, first: int, shape, strides, dtype):
        self.span, self._first = span, int(first)   # element offset of element [0, ...] within span
        self.shape, self._strides, self.dtype = tuple(shape), tuple(strides), dtype
        self.device = span.device

    def data_ptr(self) -> int:
        return self.span.data_ptr() + self._first * self.span.element_size()

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def element_size(self) -> int:
        return self.span.element_size()

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= int(s)
        return n

    def dim(self) -> int:
        return len(self.shape)

    def untyped_storage(self):
        return self.span.untyped_storage()


def _torch_dtype(dtype):
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    found = getattr(torch, str(dtype).split(".")[-1], None)  # "torch.float16", "fp16" has no match: None
    return found if isinstance(found, torch.dtype) else None


def _is_tensor_like(arg) -> bool:
    """Not a torch tensor / Triton TensorWrapper / descriptor / our HostView, yet a pointer to Triton's launcher."""
    import torch

    if isinstance(arg, (torch.Tensor, HostView)) or type(arg).__name__ in ("TensorWrapper", "TensorDescriptor"):
        return False
    return callable(getattr(arg, "data_ptr", None)) and _torch_dtype(getattr(arg, "dtype", None)) is not None


def _layout(arg) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The argument's (shape, strides in elements), or None if it names neither."""
    shape = getattr(arg, "shape", None)
    stride = getattr(arg, "stride", None)
    if shape is None:
        size = getattr(arg, "size", None)
        shape = size() if callable(size) else None
    if shape is None or stride is None:
        return None
    strides = stride() if callable(stride) else stride
    try:
        shape, strides = tuple(int(s) for s in shape), tuple(int(s) for s in strides)
    except TypeError:
        return None
    return (shape, strides) if len(shape) == len(strides) else None


def _base_tensor(arg):
    import torch

    for name in ("_base", "base"):
        base = getattr(arg, name, None)
        if isinstance(base, torch.Tensor):
            return base
    return None


def as_tensor(arg) -> Any:
    """A torch tensor over the memory a tensor-like argument names (the same bytes: writes land in it), or a
    ``HostView`` where torch has no such view (negative strides). Over its base tensor's storage where it has one
    (``_base`` / ``base``; any device); otherwise over its address, on the CPU only. ``arg`` itself when neither."""
    import torch

    dtype = _torch_dtype(arg.dtype)
    itemsize = dtype.itemsize
    ptr = int(arg.data_ptr())
    layout = _layout(arg)
    if layout is None:
        numel = getattr(arg, "numel", None)
        n = int(numel()) if callable(numel) else 1
        layout = ((n,), (1,))
    shape, strides = layout
    lo, hi = (0, -1) if any(n == 0 for n in shape) else memory.layout(shape, strides)[:2]  # (empty: nothing)
    negative = any(s < 0 for n, s in zip(shape, strides) if n > 1)
    base = _base_tensor(arg)
    if base is not None:
        storage = base.untyped_storage()
        rel = ptr - int(storage.data_ptr())
        if rel % itemsize == 0 and rel + lo * itemsize >= 0 and rel + (hi + 1) * itemsize <= storage.nbytes():
            first = rel // itemsize
            out = torch.empty(0, dtype=dtype, device=base.device)
            if not negative:
                return out.set_(storage, first, shape, strides)
            out.set_(storage, first + lo, (hi - lo + 1,), (1,))
            return HostView(out, -lo, shape, strides, dtype)
    device = getattr(arg, "device", None)
    if device is not None and torch.device(device).type != "cpu":
        raise TypeError(f"a {type(arg).__name__} launch argument on {device} without a torch tensor base "
                        "(`_base` / `base`): the interpreter cannot reach its memory")
    if hi < lo or ptr == 0:  # nothing to read: an empty tensor (any access is outside it)
        return torch.empty(0, dtype=dtype)
    import ctypes

    raw = (ctypes.c_char * ((hi - lo + 1) * itemsize)).from_address(ptr + lo * itemsize)
    flat = torch.frombuffer(raw, dtype=dtype)
    if negative:
        return HostView(flat, -lo, shape, strides, dtype)
    return flat.as_strided(shape, strides, 0)


def tensor_like_args():
    """Launch arguments that are not torch tensors but have ``data_ptr()`` and ``dtype``: compiled Triton takes them
    as pointers (FlagGems wraps every pointwise operand in its ``StridedBuffer``); the interpreter's copy to the
    host calls tensor methods on them (``untyped_storage``, ``new_empty``, ``set_``: AttributeError). Its two
    helpers around that copy (``_unwrap_tensor`` / ``_rewrap_tensor``, which unwrap Triton's ``TensorWrapper``)
    hand the copy a torch tensor over the same memory instead (``as_tensor``), so the kernel sees the same address
    and its writes land in the argument's memory. Returns the undo."""
    from triton.runtime import interpreter as I

    orig_unwrap, orig_rewrap = I._unwrap_tensor, I._rewrap_tensor

    def unwrap_tensor(t):
        if isinstance(t, HostView):
            return t.span
        if _is_tensor_like(t):
            t = as_tensor(t)
            return t.span if isinstance(t, HostView) else t
        return orig_unwrap(t)

    def rewrap_tensor(t, original_tensor):
        if _is_tensor_like(original_tensor):
            view = as_tensor(original_tensor)
            if isinstance(view, HostView):  # the host copy of its span, seen with the argument's own strides
                return HostView(t, view._first, view.shape, view._strides, view.dtype)
            return t
        return orig_rewrap(t, original_tensor)

    I._unwrap_tensor, I._rewrap_tensor = unwrap_tensor, rewrap_tensor

    def undo():
        I._unwrap_tensor, I._rewrap_tensor = orig_unwrap, orig_rewrap
    return undo


def list_grids():
    """A grid that is a list, or a grid function that returns one: compiled Triton's launcher takes any sequence;
    the interpreter pads the grid with ``grid + (1,) * (3 - len(grid))`` ("can only concatenate list (not "tuple")
    to list": helper-67, tritonbench's layer_norm backward). ``GridExecutor`` gets a tuple.

    A grid of more than 3 entries: compiled Triton (``JITFunction.run``, 3.6 to 3.9) launches
    ``grid[0], grid[1], grid[2]`` and ignores the rest, whatever they hold; the interpreter asserts "grid must have
    at most 3 dimensions" (h88: FlagGems' cumsum launches ``kernel[(M, num_ctas, 1, 1)]`` for rows longer than
    16384). The grid keeps its first 3 entries, as on the GPU; an ignored entry other than 1 is said once per
    kernel on stderr (the GPU runs fewer programs than that grid names). Returns the undo."""
    from triton.runtime import interpreter as I

    original = I.GridExecutor.__init__
    told: set = set()

    def fit(g, fn):
        if isinstance(g, list):
            g = tuple(g)
        if isinstance(g, tuple) and len(g) > 3:
            extra = [v for v in g[3:] if not (isinstance(v, int) and v == 1)]
            name = getattr(fn, "__name__", "the kernel")
            if extra and name not in told:
                told.add(name)
                import sys

                print(f"tritondbg: note: {name} was launched with the grid {g}: Triton launches grid[0], grid[1] and "
                      f"grid[2] only and ignores the rest, so {', '.join(map(str, extra))} "
                      f"{'is' if len(extra) == 1 else 'are'} ignored here as on the GPU (fewer programs than that "
                      "grid names)", file=sys.stderr, flush=True)
            g = g[:3]
        return g

    def init(self, fn, arg_names, grid, *args, **kwargs):
        if callable(grid):
            inner = grid

            def grid(meta, _inner=inner):
                return fit(_inner(meta), fn)
        else:
            grid = fit(grid, fn)
        original(self, fn, arg_names, grid, *args, **kwargs)

    I.GridExecutor.__init__ = init

    def undo():
        I.GridExecutor.__init__ = original
    return undo


def quiet_all_nan():
    """The interpreter's tl.max / tl.min call numpy's nanmax / nanmin, which warn "RuntimeWarning: All-NaN slice
    encountered" (two lines naming triton's interpreter.py) when a whole slice is NaN: the sanitizers' poison or
    uninit mark there, whose finding tritondbg prints anyway (helper-94: the lines sat among the findings). Only
    warnings raised from the interpreter's own code are ignored, while the shims are installed."""
    import warnings

    warnings.filterwarnings("ignore", message="All-NaN (slice|axis) encountered", category=RuntimeWarning,
                            module=r"triton\.runtime\.interpreter")
    added = warnings.filters[0]

    def undo():
        if added in warnings.filters:
            warnings.filters.remove(added)
    return undo


def nan_number_ops():
    """``tl.maximum`` / ``tl.minimum`` / ``tl.clamp`` with propagate_nan's default (NONE) return the other operand
    where one is NaN on the GPU (PTX max.f32 / min.f32). Triton 3.6's interpreter computed them with np.maximum,
    np.minimum and np.clip, which return the NaN: a clamp that stores its bound on the GPU stored NaN under the
    interpreter (3.9 has np.fmax / np.fmin, as here). Installed as 3.9 has them; returns the undo."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as I

    B = I.InterpreterBuilder
    names = ("create_maxnumf", "create_minnumf", "create_clampf")
    saved = {n: B.__dict__[n] for n in names}
    none = getattr(tl.PropagateNan, "NONE", None)

    def create_clampf(self, arg, lo, hi, propagate_nans):
        if propagate_nans == none or str(propagate_nans).endswith("NONE"):
            return self.binary_op(self.binary_op(arg, lo, np.fmax), hi, np.fmin)
        return saved["create_clampf"](self, arg, lo, hi, propagate_nans)

    B.create_maxnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmax)
    B.create_minnumf = lambda self, lhs, rhs: self.binary_op(lhs, rhs, np.fmin)
    B.create_clampf = create_clampf

    def undo():
        for n, f in saved.items():
            setattr(B, n, f)
    return undo


_CONSTEXPR_OPS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift")


def constexpr_operands():
    """``ALPHA * x`` with ``ALPHA = tl.constexpr(...)`` a global and ``x`` a tensor: the compiler applies the
    tensor's operator; the interpreter ran ``constexpr.__mul__``, which wrapped the tensor it got back in a
    constexpr, and the next op failed ("TypeError: cannot convert [...] of type tensor to tensor", plain
    TRITON_INTERPRET=1 too; helper-126: xformers' gelu with the constexpr global tritondbg's own message advises).
    A constexpr operator's result that holds a tensor is the tensor, and the comparisons alike. Returns the undo."""
    import triton.language as tl

    cls, tensor = tl.core.constexpr, tl.core.tensor
    names = [f"__{p}{n}__" for n in _CONSTEXPR_OPS for p in ("", "r")] + \
        ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"]
    saved = {n: vars(cls)[n] for n in names if n in vars(cls)}

    def wrap(orig):
        def op(self, other):
            out = orig(self, other)
            value = getattr(out, "value", None) if isinstance(out, cls) else None
            return value if isinstance(value, tensor) else out
        op.__wrapped__ = orig
        return op

    for n, f in saved.items():
        setattr(cls, n, wrap(f))

    def undo():
        for n, f in saved.items():
            setattr(cls, n, f)
    return undo
