"""The argument tensors of a launch as address ranges: address -> (tensor, element index), vectorised.

Under the interpreter a pointer is a plain uint64 address into the host copy of an argument (on a CPU
device, the tensor's own memory). A Buffer is one tensor argument: its byte extent [lo, hi) and its
shape/strides, so an address can be named ``x[3, 5]`` or "12 elements past the end of x".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Buffer:
    """One tensor argument of a launch."""

    name: str
    data_ptr: int                 # address of element [0, ..., 0]
    itemsize: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]      # in elements
    dtype: str                    # torch dtype name without "torch."
    lo: int                       # byte extent of the view's elements: [lo, hi)
    hi: int
    dense: bool                   # every aligned address in [lo, hi) is an element of the view
    storage: tuple[int, int] | None = None  # byte extent of the tensor's whole storage, where wider than the view

    def in_storage(self, addrs: np.ndarray, width: int) -> np.ndarray:
        """Which addresses lie in this view's storage (all of it, not only the view's elements): where a kernel
        that addresses the storage by strides of its own reads (FlagGems' gather through a stride-0 view)."""
        if self.storage is None:
            return np.zeros(addrs.shape, dtype=bool)
        a = addrs.astype(np.uint64, copy=False)
        return (a >= np.uint64(self.storage[0])) & (a + np.uint64(width) <= np.uint64(self.storage[1]))

    @property
    def restrided(self) -> bool:
        """A view whose elements do not tile its span as a slice's do: a stride 0 (expand, FlagGems' restride_dim)
        or dims that overlap (as_strided windows). Kernels handed such a view often address the storage with
        strides of their own; a plain slice (``x[:, :k]``, ``pool[a:b]``) read past its end is a missing mask."""
        dims = sorted((st, n) for n, st in zip(self.shape, self.strides) if n > 1)
        if any(st <= 0 for st, _ in dims):
            return True
        return any(dims[i + 1][0] < dims[i][0] * dims[i][1] for i in range(len(dims) - 1))

    @property
    def padded(self) -> bool:
        """A view at the start of a storage laid out row-major with some dims rounded up to a whole block (a power
        of two from 16 to 4096, less than one block more): ``torch.zeros(cdiv(n, 128) * 128)[:n]``, or rows padded
        one by one (``torch.empty((m, 512))[:, :28]``): a library's buffer padded so its kernels address whole
        blocks (triton_kernels' bitmatrix and routing)."""
        if self.storage is None or self.restrided or self.lo != self.storage[0] or not self.shape:
            return False
        dims = [(n, st) for n, st in zip(self.shape, self.strides)]
        if any(st <= 0 for _, st in dims) or dims[-1][1] != 1 and dims[-1][0] > 1:
            return False
        total = (self.storage[1] - self.storage[0]) // max(1, self.itemsize)
        padded = False
        for d, (n, st) in enumerate(dims):
            # the room dim d spans: the next outer stride (the storage for dim 0), in units of its own stride
            room = (dims[d - 1][1] if d else total)
            if room % st:
                return False
            have = room // st
            if have == n:
                continue
            if not _block_roundup(n, have):
                return False
            padded = True
        return padded

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    def label(self) -> str:
        dims = ", ".join(str(s) for s in self.shape)
        if 0 not in self.shape and any(n > 1 and st == 0 for n, st in zip(self.shape, self.strides)):
            # an expand()ed / broadcast view: its offsets run over the storage, not over the shape
            extent = (self.hi - self.lo) // max(1, self.itemsize)
            spans = f"{extent} element(s) of storage" if self.storage is None else f"spanning {extent} element(s)"
            return (f"{self.name} ({self.dtype}[{dims}], a broadcast view with strides "
                    f"({', '.join(str(st) for st in self.strides)}): {spans})")
        return f"{self.name} ({self.dtype}[{dims}])"

    def distance(self, addrs: np.ndarray) -> np.ndarray:
        """Signed byte distance of addresses from the start of the view's extent. An address computed below a
        low start wraps past 2**64 (a negative offset from a tensor in the first 4 GiB, as a non-PIE Python's
        heap is): as unsigned it looked 2**62 elements past the end."""
        return (np.asarray(addrs).astype(np.uint64, copy=False) - np.uint64(self.lo)).view(np.int64)

    def offsets(self, addrs: np.ndarray) -> np.ndarray:
        """Element offsets of addresses from element [0, ...] (floor division: misaligned ones round down)."""
        diff = addrs.astype(np.int64) - np.int64(self.data_ptr)
        return diff // self.itemsize

    def contains(self, addrs: np.ndarray, width: int) -> np.ndarray:
        """Which addresses are (the start of) an element of this view."""
        a = addrs.astype(np.uint64, copy=False)
        inside = (a >= np.uint64(self.lo)) & (a + np.uint64(width) <= np.uint64(self.hi))
        if not inside.any():
            return inside
        diff = a.astype(np.int64) - np.int64(self.data_ptr)
        inside &= (diff % self.itemsize) == 0
        if not self.dense:
            inside &= self._is_element(diff // self.itemsize)
        return inside

    def _is_element(self, off: np.ndarray) -> np.ndarray:
        """Greedy decomposition over dims by decreasing stride (exact for views of dense storage:
        transposes, slices, broadcast dims with stride 0)."""
        off = off.copy()
        ok = np.ones(off.shape, dtype=bool)
        dims = sorted((s, n) for s, n in zip(self.strides, self.shape) if s > 0 and n > 1)
        for stride, size in reversed(dims):
            q = off // stride
            ok &= (q >= 0) & (q < size)
            off -= np.clip(q, 0, size - 1) * stride
        return ok & (off == 0)

    def index(self, offset: int) -> tuple[int, ...] | None:
        """The index of the element at ``offset`` elements from element 0, or None if it is not one."""
        if not self.shape:
            return () if offset == 0 else None
        dims = sorted(((s, n, d) for d, (s, n) in enumerate(zip(self.strides, self.shape)) if s > 0 and n > 1),
                      reverse=True)
        idx = [0] * len(self.shape)
        rest = offset
        for stride, size, d in dims:
            q = rest // stride
            if q < 0 or q >= size:
                return None
            idx[d] = q
            rest -= q * stride
        return tuple(idx) if rest == 0 else None

    def where(self, addr: int) -> str:
        """A short description of an address relative to this buffer: ``x[3, 5]`` or how far outside."""
        rel = int(self.distance(np.array([int(addr) % 2**64], dtype=np.uint64))[0])
        off = (self.lo + rel - self.data_ptr) // self.itemsize
        if 0 <= rel < self.hi - self.lo:
            idx = self.index(off)
            if idx is not None:
                return f"{self.name}[{', '.join(str(i) for i in idx)}]"
            return f"{self.name} (offset {off}, between the view's elements)"
        if rel < 0:
            return f"{(-rel + self.itemsize - 1) // self.itemsize} element(s) before the start of {self.name}"
        return f"{(rel - (self.hi - self.lo)) // self.itemsize + 1} element(s) past the end of {self.name}"


def layout(shape, strides) -> tuple[int, int, bool]:
    """(min offset, max offset, dense) of a strided view, in elements."""
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0 and n > 0)
    hi = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0 and n > 0)
    dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n > 1)
    expect, dense = 1, True
    for s, n in dims:
        if s != expect:
            dense = False
            break
        expect = s * n
    return lo, hi, dense


def buffer_of(name: str, t) -> Buffer | None:
    """A Buffer for a torch tensor (or Triton TensorWrapper); None for anything else."""
    base = getattr(t, "base", None) if type(t).__name__ == "TensorWrapper" else t
    if not hasattr(base, "data_ptr") or not hasattr(base, "stride"):
        return None
    shape, strides = tuple(int(s) for s in base.shape), tuple(int(s) for s in base.stride())
    itemsize = int(base.element_size())
    ptr = int(base.data_ptr())
    if base.numel() == 0:
        return Buffer(name, ptr, itemsize, shape, strides, str(base.dtype).replace("torch.", ""), ptr, ptr, True)
    lo, hi, dense = layout(shape, strides)
    b = Buffer(name, ptr, itemsize, shape, strides, str(base.dtype).replace("torch.", ""),
               ptr + lo * itemsize, ptr + (hi + 1) * itemsize, dense)
    try:
        s = base.untyped_storage()
        start, end = int(s.data_ptr()), int(s.data_ptr()) + int(s.nbytes())
        if start < b.lo or end > b.hi:
            b.storage = (start, end)
    except Exception:  # noqa: BLE001 - a tensor without storage (meta, fake): its view is all there is
        pass
    return b


def overlapping(args: dict, name: str | None = None) -> list[str]:
    """The tensor arguments whose bytes overlap another's (with ``name``: those overlapping that one's)."""
    bufs = {n: b for n, b in ((n, buffer_of(n, v)) for n, v in args.items()) if b is not None and b.hi > b.lo}
    targets = [name] if name is not None else list(bufs)
    return [n for n, b in bufs.items() if any(t != n and t in bufs and b.lo < bufs[t].hi and bufs[t].lo < b.hi
                                              for t in targets)]


class ArgMap:
    """The tensor arguments of one launch."""

    def __init__(self, buffers: list[Buffer]):
        self.buffers = buffers

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> "ArgMap":
        buffers = []
        for name, value in args.items():
            items = [(f"{name}[{i}]", v) for i, v in enumerate(value)] if isinstance(value, tuple) else [(name, value)]
            for n, v in items:
                if hasattr(v, "block_shape") and hasattr(v, "base"):  # a TensorDescriptor: its base tensor
                    v = v.base
                b = buffer_of(n, v)
                if b is not None:
                    buffers.append(b)
        return cls(buffers)

    def by_base(self, addr: int) -> list[Buffer]:
        """Buffers whose element 0 is at ``addr`` (a pointer argument as passed)."""
        return [b for b in self.buffers if b.data_ptr == addr]

    def owner(self, addrs: np.ndarray, width: int) -> np.ndarray:
        """Index into ``buffers`` of the first buffer each address is an element of; -1 for none."""
        own = np.full(addrs.shape, -1, dtype=np.int64)
        for i, b in enumerate(self.buffers):
            hit = (own < 0) & b.contains(addrs, width)
            own[hit] = i
        return own

    def describe(self, addr: int, width: int = 1) -> tuple[Buffer | None, str]:
        """The buffer holding ``addr`` and a description; else the nearest buffer and how far outside."""
        a = np.array([addr], dtype=np.uint64)
        for b in self.buffers:
            if b.contains(a, width)[0]:
                return b, b.where(addr)
        try:  # a tensor reached through a pointer table (grouped GEMM): named by its entry
            from tritondbg.interp import guard

            tb = guard.table_buffer_at(int(addr), width)
        except Exception:  # noqa: BLE001 - a description only
            tb = None
        if tb is not None:
            return tb, tb.where(addr)
        if not self.buffers:
            return None, f"address 0x{int(addr):x} (the launch has no tensor argument)"
        near = min(self.buffers, key=lambda b: min(abs(int(addr) - b.lo), abs(int(addr) - b.hi)))
        return None, f"address 0x{int(addr):x}, in no argument tensor ({near.where(addr)})"


def _block_roundup(n: int, have: int) -> bool:
    """``have`` is ``n`` rounded up to a whole block: a power of two from 16 to 4096, less than one block more."""
    block = 16
    while block <= 4096:
        if have % block == 0 and n < have < n + block:
            return True
        block *= 2
    return False
