"""The memory guard of every interpreter run: no load, store or atomic lane touches memory outside the
launch's tensors.

Triton's interpreter dereferences pointer lanes as raw host addresses, so an out-of-bounds store writes
into the CPU heap (a segfault, "double free or corruption", or a silently corrupted neighbour) and an
out-of-bounds load reads whatever lies there. The guard wraps the interpreter builder's memory ops
(``create_masked_load``, ``create_masked_store``, ``create_atomic_rmw``, ``create_atomic_cas``; every other
memory op of Triton 3.6 and 3.9 goes through these) and masks off each live lane whose bytes are not inside
the storage of one of the launch's tensor arguments (or a region given to ``allow``, or a live CPU tensor whose
address an argument holds: a table of data pointers); a CAS lane, which has no mask, is pointed at a scratch word
instead. Masked-off load lanes read as ``other`` (0 without one).

It is installed with the shims (``runner.set_mode("interpret")``), so every interpreter run tritondbg makes
has it, with or without the sanitizers. Reporting is the sanitizer's job: it checks first (against the tensor
each pointer derives from, a stricter test), reports and masks, and while it checks the guard stands aside
(``deferred_to``); the guard only counts what it masked itself (``masked()``).

API (for any code that launches kernels under the interpreter, e.g. program mode):
    guard.install()          idempotent; guard.uninstall() undoes it; guard.installed() -> bool
    guard.allow(*regions)    extra memory kernels may reach through pointers that are not arguments
                             (torch tensors, or (address, nbytes)); guard.clear_allowed()
    guard.skipping(writes)   store / atomic lanes the sanitizer skipped, skipped again (program mode's rerun)
    guard.masked() -> int    lanes masked off since the last guard.reset(); guard.where() by line;
                             guard.kept_findings() the same as out_of_bounds errors (no sanitizer ran)
"""
from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from tritondbg.interp import hooks
from tritondbg.interp.values import element_width

SCRATCH = np.zeros(64, dtype=np.uint64)  # CAS lanes outside every tensor are redirected here
_saved: dict[str, Any] = {}
_state: dict[str, Any] = {"masked": 0, "allowed": [], "listener": None, "checker": None, "where": {}, "skip": None}


def masked() -> int:
    return _state["masked"]


def reset() -> None:
    _state["masked"] = 0
    _state["where"] = {}


def where() -> dict:
    """(op, file, line) -> lanes masked there since the last ``reset`` (the kernel line of each access)."""
    return dict(_state["where"])


def kept_findings() -> list[dict]:
    """The lanes ``where`` counts, as findings: with no sanitizer to report them (the correctness gate,
    ``--no-sanitize``, a program under ``interpret --no-sanitize -- CMD``), loads of them read 0 (or ``other=``),
    so a match proves nothing of the GPU, where they read garbage or fault (a K-tail left unmasked passed
    torchao's int8 matmul so). An error at each line."""
    from tritondbg.interp import frames

    return [dict(kind="out_of_bounds", severity="error", file=file, line=line, function="", kernel="", pid=[],
                 tensor=None, offsets=[], op=op, programs=0, lanes=n, source=frames.source_line(file, line),
                 message=(f"{n} lane(s) of a {op} here point outside every tensor the launch was given; the memory "
                          f"guard kept them out ({'they read 0 or other=' if op == 'load' else 'skipped'}), so this "
                          "run's output says nothing of the GPU's, where they read garbage or fault: the sanitize "
                          "gate, `tritondbg interpret` (without --no-sanitize), names the program id, tensor and "
                          "offsets"))
            for (op, file, line), n in _state["where"].items()]


def _count(op: str, n: int) -> None:
    from tritondbg.interp import frames

    _state["masked"] += n
    file, line, _ = frames.site()
    key = (op, file, line)
    _state["where"][key] = _state["where"].get(key, 0) + n


def installed() -> bool:
    return bool(_saved)


def _extent(obj) -> tuple[int, int] | None:
    """(first byte, end byte) of the memory a tensor argument's storage spans; None for non-tensors."""
    if isinstance(obj, tuple) and len(obj) == 2 and all(isinstance(v, int) for v in obj):
        return int(obj[0]), int(obj[0]) + int(obj[1])
    if hasattr(obj, "block_shape") and hasattr(obj, "base"):  # a TensorDescriptor: its base tensor
        obj = obj.base
    if type(obj).__name__ == "TensorWrapper":
        obj = getattr(obj, "base", obj)
    storage = getattr(obj, "untyped_storage", None)
    if storage is None or not hasattr(obj, "data_ptr"):
        return None
    try:
        s = storage()
        return int(s.data_ptr()), int(s.data_ptr()) + int(s.nbytes())
    except Exception:  # a tensor without storage (meta, fake): nothing a kernel may touch
        return None


def allow(*regions) -> None:
    """Let kernels touch these regions too (torch tensors or (address, nbytes) pairs), for the process."""
    for r in regions:
        ext = _extent(r)
        if ext is not None:
            _state["allowed"].append(ext)


def clear_allowed() -> None:
    _state["allowed"] = []


@contextlib.contextmanager
def deferred_to(checking):
    """While ``checking()`` is true, a stricter checker (the sanitizer) has already masked every lane that
    leaves its own tensor before the op reaches the guard: the guard does not check again (speed)."""
    saved = _state["checker"]
    _state["checker"] = checking
    try:
        yield
    finally:
        _state["checker"] = saved


@contextlib.contextmanager
def skipping(writes: dict):
    """Store and atomic lanes to leave out while the block runs: ``writes`` maps a kernel line (file, line) to arrays
    of the addresses the sanitizer skipped there (``oob.skip_writes``: lanes out of bounds that land in another
    argument, which the guard alone lets through). Program mode's run without the poison (checker.py) runs so."""
    saved = _state["skip"]
    _state["skip"] = {k: np.unique(np.concatenate(v)) for k, v in writes.items() if v} or None
    try:
        yield
    finally:
        _state["skip"] = saved


def _skipped(ptrs) -> np.ndarray | None:
    """The lanes of a store or atomic at the running kernel line whose addresses ``skipping`` names, or None."""
    from tritondbg.interp import frames

    addrs = _state["skip"].get(frames.site()[:2])
    if addrs is None:
        return None
    hit = np.isin(np.asarray(ptrs.data).astype(np.uint64, copy=False), addrs)
    return hit if hit.any() else None


def _merged(spans) -> tuple[np.ndarray, np.ndarray]:
    """Sorted, merged [lo, hi) byte intervals of (lo, hi) spans, as two uint64 arrays."""
    los, his = [], []
    for lo, hi in sorted(spans):
        if los and lo <= his[-1]:
            his[-1] = max(his[-1], hi)
        else:
            los.append(lo)
            his.append(hi)
    return np.array(los, dtype=np.uint64), np.array(his, dtype=np.uint64)


def _arg_values(launch):
    """The launch's argument values, the items of tuple / list arguments one by one."""
    for value in launch.args.values():
        yield from (value if isinstance(value, (tuple, list)) else (value,))


def _intervals(launch) -> tuple[np.ndarray, np.ndarray]:
    """Sorted, merged [lo, hi) byte intervals a launch may touch (cached on the launch)."""
    cached = launch.extra.get("guard")
    if cached is not None:
        return cached
    spans = [(int(SCRATCH.ctypes.data), int(SCRATCH.ctypes.data) + SCRATCH.nbytes)] + list(_state["allowed"])
    for v in _arg_values(launch):
        ext = _extent(v)
        if ext is not None and ext[1] > ext[0]:
            spans.append(ext)
    cached = launch.extra["guard"] = _merged(spans)
    return cached


def _inside(a: np.ndarray, width, los: np.ndarray, his: np.ndarray) -> np.ndarray:
    """Which addresses ``a`` (uint64) have their ``width`` bytes inside one of the intervals."""
    i = np.searchsorted(los, a, side="right").astype(np.int64) - 1
    return (i >= 0) & (a + np.uint64(width) <= his[np.maximum(i, 0)]) if los.size else np.zeros(a.shape, bool)


def _table_intervals(launch) -> tuple[np.ndarray, np.ndarray]:
    """The storages of the live CPU tensors whose addresses the launch was handed as values: an int64 tensor
    argument holding data pointers (grouped GEMM, Triton's tutorial 08; MoE) or an integer argument. A kernel
    reaches those tensors through pointers cast from integers, not through its arguments; a tensor no argument
    names stays out of reach (a wild pointer into a neighbour is still masked). Found through the garbage
    collector, once per launch and only when some lane falls outside the arguments."""
    cached = launch.extra.get("guard_tables")
    if cached is not None:
        return cached
    import torch

    values, views, names = [], set(), {}
    for name, arg in launch.args.items():
        items = arg if isinstance(arg, (tuple, list)) else (arg,)
        for j, v in enumerate(items):
            path = f"{name}[{j}]" if isinstance(arg, (tuple, list)) else name
            if isinstance(v, int) and not isinstance(v, bool):
                values.append(v)
                names.setdefault(v, path)
            elif (isinstance(v, torch.Tensor) and v.dtype in (torch.int64, torch.uint64) and v.device.type == "cpu"
                  and v.numel() <= 1 << 16):
                entries = v.reshape(-1).tolist()
                values.extend(entries)
                for k, e in enumerate(entries):  # the tensor an entry names: "group_a_ptrs[2]"
                    names.setdefault(e, f"{path}[{k}]")
    launch.extra["guard_table_names"] = names
    addrs = np.unique(np.array([x for x in values if x >= 1 << 16], dtype=np.uint64))
    spans = []
    if addrs.size:
        starts = set(addrs.tolist())
        for obj in live_tensors("cpu"):
            ext = _extent(obj)
            if ext is not None and ((addrs >= np.uint64(ext[0])) & (addrs < np.uint64(ext[1]))).any():
                spans.append(ext)
                if obj.data_ptr() in starts:  # a tensor the table names by its first element: its own extent
                    views.add((obj.data_ptr(), obj.data_ptr() + view_bytes(obj)))
    launch.extra["guard_table_views"] = sorted(views, key=lambda v: (v[0], v[1] - v[0]))
    cached = launch.extra["guard_tables"] = _merged(spans)
    return cached


def live_tensors(device_type: str) -> list:
    """Every live tensor on that device type with elements, found through the garbage collector (a kernel handed
    tensors by address: the guard here, capture's ``program/tables.py``)."""
    import gc

    import torch

    out = []
    for obj in gc.get_objects():  # type(), not isinstance: some objects warn when their __class__ is read
        if issubclass(type(obj), torch.Tensor):
            try:
                if obj.device.type == device_type and obj.numel() > 0 and not obj.is_sparse:
                    out.append(obj)
            except Exception:  # noqa: BLE001 - a tensor subclass without storage
                continue
    return out


def view_bytes(t) -> int:
    """Bytes from a tensor's first element to the end of its last (non-negative strides; 0 when empty)."""
    if t.numel() == 0:
        return 0
    last = sum((n - 1) * st for n, st in zip(t.shape, t.stride()) if st > 0)
    return (last + 1) * t.element_size()


def table_span(addr: int) -> tuple[int, int] | None:
    """The byte extent [lo, hi) of the tensor the launch was handed by address (``_table_intervals``) that starts
    at ``addr`` (the smallest, where views share it): the tensor a pointer cast from that table entry belongs to;
    None when no such tensor starts there."""
    launch = hooks.current_launch()
    if launch is None:
        return None
    _table_intervals(launch)
    for lo, hi in launch.extra.get("guard_table_views", ()):
        if lo == addr and hi > lo:
            return lo, hi
    return None


def table_buffer_at(addr: int, width: int = 1):
    """The Buffer of the tensor the launch was handed by address (a pointer table's entry) that holds ``addr``
    (the smallest such view), or None: a finding's element named ``group_c_ptrs[1][...]``, not "in no argument
    tensor"."""
    launch = hooks.current_launch()
    if launch is None:
        return None
    _table_intervals(launch)
    held = [(lo, hi) for lo, hi in launch.extra.get("guard_table_views", ()) if lo <= addr and addr + width <= hi]
    if not held:
        return None
    lo, _ = min(held, key=lambda v: v[1] - v[0])
    found = table_buffer(lo, width, "?")
    return found[0] if found else None


def reachable(addrs: np.ndarray, width: int) -> np.ndarray:
    """Which addresses (uint64) lie in a tensor the launch was handed by address (``_table_intervals``): where a
    pointer cast from an integer may go."""
    launch = hooks.current_launch()
    if launch is None:
        return np.zeros(np.shape(addrs), bool)
    return _inside(np.asarray(addrs, dtype=np.uint64), width, *_table_intervals(launch))


def table_buffer(base: int, width: int, dtype: str) -> list:
    """[a Buffer for the tensor starting at ``base``] when the launch was handed it by address (``table_span``),
    so that a pointer cast from that table entry is checked against its own tensor (a read running past it into
    the next one handed the same way is out of bounds); else []."""
    from tritondbg.interp.memory import Buffer

    span = table_span(int(base))
    if span is None:
        return []
    lo, hi = span
    launch = hooks.current_launch()
    named = (launch.extra.get("guard_table_names") or {}).get(lo) if launch is not None else None
    return [Buffer(name=named or f"table tensor @0x{lo:x}", data_ptr=int(base), itemsize=width, shape=((hi - lo) // width,),
                   strides=(1,), dtype=dtype, lo=lo, hi=hi, dense=True)]


def outside(ptrs, mask) -> np.ndarray | None:
    """The live lanes of a memory op (pointer handle, mask array or None) that fall outside every tensor
    of the current launch, as a boolean array of the pointers' shape; None when there are none (or when
    no launch is running)."""
    launch = hooks.current_launch()
    if launch is None or (_state["checker"] is not None and _state["checker"]()):
        return None
    p = np.asarray(ptrs.data)
    if p.size == 0:
        return None
    width = element_width(ptrs.get_element_ty())
    a = p.astype(np.uint64, copy=False)
    ok = _inside(a, width, *_intervals(launch))
    if mask is not None:
        ok |= ~np.broadcast_to(np.asarray(mask, dtype=bool), p.shape)
    if ok.all():
        return None
    ok |= _inside(a, width, *_table_intervals(launch))  # tensors handed to the launch by address
    if ok.all():
        return None
    return ~ok


def _install() -> None:
    from triton.runtime import interpreter as I

    B = I.InterpreterBuilder
    for n in ("create_masked_load", "create_masked_store", "create_atomic_rmw", "create_atomic_cas"):
        if n in B.__dict__:
            _saved[n] = B.__dict__[n]
    orig = dict(_saved)

    def _masked(ptrs, mask, op):
        """The mask handle with the outside lanes off, or the mask itself when none is outside."""
        bad = outside(ptrs, None if mask is None else mask.data)
        if bad is not None:
            _count(op, int(bad.sum()))
        skip = _skipped(ptrs) if op != "load" and _state["skip"] else None
        if skip is not None:  # (told by the sanitizer's run: not counted)
            bad = skip if bad is None else bad | skip
        if bad is None:
            return mask
        import triton.language as tl

        live = np.ones(bad.shape, bool) if mask is None else np.broadcast_to(np.asarray(mask.data, bool), bad.shape)
        return I.TensorHandle(np.ascontiguousarray(live & ~bad), tl.int1)

    def create_masked_load(self, ptrs, mask, other, *rest, **kw):
        return orig["create_masked_load"](self, ptrs, _masked(ptrs, mask, "load"), other, *rest, **kw)

    def create_masked_store(self, ptrs, value, mask, *rest, **kw):
        return orig["create_masked_store"](self, ptrs, value, _masked(ptrs, mask, "store"), *rest, **kw)

    def create_atomic_rmw(self, rmw_op, ptr, val, mask, *rest, **kw):
        return orig["create_atomic_rmw"](self, rmw_op, ptr, val, _masked(ptr, mask, "atomic"), *rest, **kw)

    def create_atomic_cas(self, ptr, cmp, val, *rest, **kw):
        bad = outside(ptr, None)
        if bad is not None:
            _count("atomic", int(bad.sum()))
        skip = _skipped(ptr) if _state["skip"] else None
        if skip is not None:
            bad = skip if bad is None else bad | skip
        if bad is not None:
            data = np.array(np.broadcast_to(ptr.data, bad.shape), dtype=np.uint64, copy=True)
            data[bad] = np.uint64(SCRATCH.ctypes.data)
            ptr = I.TensorHandle(data, ptr.dtype)
        return orig["create_atomic_cas"](self, ptr, cmp, val, *rest, **kw)

    wrappers = dict(create_masked_load=create_masked_load, create_masked_store=create_masked_store,
                    create_atomic_rmw=create_atomic_rmw, create_atomic_cas=create_atomic_cas)
    for n in orig:
        setattr(B, n, wrappers[n])
    listener = _state["listener"] = hooks.Listener()  # keeps the launch events (current_launch) on
    hooks.attach(listener)


def install():
    """Install the guard (idempotent); returns ``uninstall``."""
    if not _saved:
        _install()
    return uninstall


def uninstall() -> None:
    from triton.runtime import interpreter as I

    for n, f in _saved.items():
        setattr(I.InterpreterBuilder, n, f)
    _saved.clear()
    if _state["listener"] is not None:
        hooks.detach(_state["listener"])
        _state["listener"] = None
