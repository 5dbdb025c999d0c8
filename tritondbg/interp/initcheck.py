"""Uninitialized memory: ``torch.empty`` and friends filled with a mark the sanitizers recognise when a kernel reads it.

``torch.empty`` gives whatever the allocator's memory held. On a CPU that is often zeros, so a kernel that
accumulates into a ``torch.empty`` output (split-K with ``tl.atomic_add``), spins on a ``torch.empty`` lock, or
reads an output element nothing wrote, passes under a bare ``TRITON_INTERPRET=1`` and fails on the GPU, where the
memory holds the last tensor's bytes. While the sanitizers run (``install``), the empty-family factories of torch
fill what they return with a mark, as PyTorch's own ``fill_uninitialized_memory`` does with NaN:

- floats (fp16 / bf16 / fp32 / fp64): a NaN whose payload is ``UNINIT_ID`` (poison.py's payload scheme, an id
  the per-load poison never takes), so a read of it is told apart from a NaN the data holds;
- int32 / int64: ``INT_MARK`` (0x5A5A5A5A...), an index or count no real data is likely to hold;
- int8 / uint8 / int16 / fp8: 0x5A in every byte, with the bytes the kernels store recorded (byte_marks.py: any
  byte is data, so only an element no launch stored counts as unwritten); bool is left as torch gives it.

uninit_reads.py checks what each load and atomic reads against the mark (``marked``): a load marks the lanes
undefined (the shadow's poison of that load), so they count only where they reach a store, a reduction or an
output, the way a masked load without ``other=`` does; an atomic read-modify-write of a marked element is a
finding at once (a sum that starts from garbage, a lock that never reads 0). ``allocated_at`` says which line
of the user's code allocated the memory.
"""
from __future__ import annotations

import os
import sys
import threading
import weakref
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any

import numpy as np

from tritondbg.interp import byte_marks

UNINIT_ID = 63                       # poison.py payload id reserved for this mark (load sites take 1..62)
INT_MARK = {4: 0x5A5A5A5A, 8: 0x5A5A5A5A5A5A5A5A}
_MAX_SITES = 4096                    # allocations remembered for ``allocated_at``

_state = {"depth": 0, "saved": {}, "sites": OrderedDict()}
_lock = threading.Lock()


def _float_bits(dtype) -> tuple | None:
    """(integer view dtype, bit pattern) of the mark for a float torch dtype, or None."""
    import torch

    return {torch.float32: (torch.int32, 0x7FC00000 | (UNINIT_ID << 16)),
            torch.float64: (torch.int64, 0x7FF8000000000000 | (UNINIT_ID << 45)),
            torch.float16: (torch.int16, 0x7E00 | (UNINIT_ID << 3)),
            torch.bfloat16: (torch.int16, 0x7FC0 | UNINIT_ID)}.get(dtype)


def fill(t, factory: str = "torch.empty") -> None:
    """Fill a fresh tensor with the mark (floats, integers but bool; nothing on meta/fake)."""
    import torch

    if type(t) is not torch.Tensor or t.layout != torch.strided or t.numel() == 0 or t.device.type == "meta":
        return
    bits = _float_bits(t.dtype)
    with torch.no_grad():
        if bits is not None:
            t.view(bits[0]).fill_(bits[1])
        elif t.dtype in (torch.int32, torch.int64):
            t.fill_(INT_MARK[t.element_size()])
        elif not byte_marks.fill(t):  # int8 / uint8 / int16 / fp8: the mark in every byte of the storage
            return
    _remember(t, factory)


def _remember(t, factory: str, text: str | None = None, site=None) -> None:
    try:
        storage = t.untyped_storage()
        lo, n = storage.data_ptr(), storage.nbytes()
    except (RuntimeError, NotImplementedError):
        return
    from tritondbg.interp.frames import short_path

    site = _user_frame() if text is None else site
    if text is None:
        text = f"{factory} at {short_path(site[0])}:{site[1]} ({site[2]})" if site else factory
    entry = (n, text, site)
    with _lock:
        sites = _state["sites"]
        sites.pop(lo, None)
        sites[lo] = entry
        if byte_marks.small(t):  # which of its bytes the kernels store (a byte equal to the mark is data too)
            byte_marks.track(lo, n, entry, t)
        else:  # (an earlier small-dtype allocation at this address: gone)
            byte_marks.forget(lo)
        while len(sites) > _MAX_SITES:
            byte_marks.forget(*sites.popitem(last=False))
    try:  # freed, its memory is no longer marked: torch.full(..., 0x5A5A5A5A) reusing it holds data
        weakref.finalize(t, _forget, lo, entry)
    except TypeError:
        pass


def _forget(lo: int, entry) -> None:
    with _lock:
        if _state["sites"].get(lo) is entry:
            del _state["sites"][lo]
        byte_marks.forget(lo, entry)


@contextmanager
def launched_from(site) -> Any:
    """Within the block a launch's call site is ``site`` (file, line, function; None: no change): a reproducer's
    replay, at the captured call site (helper-90: an unwritten output was placed at xdist/remote.py, replay.py)."""
    if not site:
        yield
        return
    saved = _state.get("launched_from")
    _state["launched_from"] = (str(site[0]), int(site[1] or 0), str(site[2] if len(site) > 2 else "?"))
    try:
        yield
    finally:
        _state["launched_from"] = saved


def caller_site() -> tuple[str, int, str] | None:
    """(file, line, function) of the first frame outside torch, triton, tritondbg and click (the CLI's, under a
    reproducer's replay: helper-64 got an uninit finding at click/core.py), pytest, xdist and the console scripts
    beside the interpreter (a check gate's replay named `_pytest/runner.py:184`, `interpret` `bin/tritondbg:8`:
    helper-68): a launch's call site, None when only those made it. In a replay (``launched_from``), the site the
    program launched it from."""
    if _state.get("launched_from"):
        return _state["launched_from"]
    import sysconfig

    import click
    import triton

    mods = [triton, click] + [sys.modules[m] for m in ("_pytest", "pluggy", "xdist", "execnet") if m in sys.modules]
    skip = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in mods if getattr(m, "__file__", None))
    paths = sysconfig.get_paths()
    stdlib = os.path.abspath(paths["stdlib"]) + os.sep  # (runpy, under `python -m tritondbg`)
    installed = tuple(os.path.abspath(paths[k]) + os.sep for k in ("purelib", "platlib"))  # (inside it, at times)
    return _user_frame(skip + (os.path.dirname(os.path.abspath(sys.executable)) + os.sep,), weak=(stdlib,),
                       keep=installed)


def _user_frame(more=(), weak=(), keep=()) -> tuple[str, int, str] | None:
    """(file, line, function) of the first caller outside torch and tritondbg (and ``more`` package dirs, and the
    ``weak`` dirs but for what lies in ``keep``: the standard library, not the site-packages inside it)."""
    import torch

    import tritondbg

    skip = (os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,
            os.path.dirname(os.path.abspath(tritondbg.__file__)) + os.sep, *more)
    f = sys._getframe(2)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        if not path.startswith(skip) and (not weak or not path.startswith(weak) or keep and path.startswith(keep)):
            return path, f.f_lineno, f.f_code.co_name
        f = f.f_back
    return None


def allocated_at(addr: int) -> str | None:
    """Where the marked memory at ``addr`` was allocated (the newest allocation that covers it): "torch.empty at
    file:line (function)", if known."""
    found = _allocation(addr)
    return found[1] if found else None


def allocation_site(addr: int) -> tuple[str, int, str] | None:
    found = _allocation(addr)
    return found[2] if found else None


def _allocation(addr: int):
    with _lock:
        items = list(_state["sites"].items())
    for lo, entry in reversed(items):  # (the entry itself: a new allocation at the same address is another)
        if lo <= addr < lo + entry[0]:
            return entry
    return None


def _allocated(addrs: np.ndarray) -> np.ndarray:
    """Which of ``addrs`` lie in memory the factories marked (the newest ``_MAX_SITES`` allocations)."""
    with _lock:
        spans = [(lo, lo + n) for lo, (n, _, _) in _state["sites"].items()]
    inside = np.zeros(addrs.shape, dtype=bool)
    for lo, hi in spans:
        inside |= (addrs >= lo) & (addrs < hi)
    return inside


def unwritten(out, ref, capture: bool = False) -> np.ndarray | None:
    """Elements of an output tensor that still hold the mark (no launch wrote them) where the reference holds a
    value, or None when there are none. ``capture``: the reference is a reproducer's captured output."""
    import torch

    if byte_marks.small(out):
        return _unwritten_bytes(out, ref, capture)
    t = out.detach().cpu().contiguous()
    if t.dtype in (torch.int32, torch.int64) and out.numel() and _allocation(out.data_ptr()) is None:
        return None  # integers equal to the mark, in memory no factory marked: data
    m = _holding_mark(t)
    if m is None:
        return None
    if t.is_floating_point():
        m = m & ~torch.isnan(ref.detach().float().cpu()).numpy().reshape(-1)
    elif ref.dtype == t.dtype and ref.numel() == t.numel():  # an integer reference holding the mark itself: a
        # reproducer's captured output, which the program's launch left unwritten there too (helper-64: that is
        # the band warning's to say, and program mode said a warning where the replay failed)
        held = _holding_mark(ref.detach().cpu().contiguous())
        if held is not None:
            m = m & ~held
    m = m.reshape(tuple(t.shape))
    return m if m.any() else None


def left_unwritten(out) -> np.ndarray | None:
    """Which elements of ``out`` (its shape) hold the mark: no launch wrote them, or one stored the mark it read (a
    float's payload says which, not whether a store happened); None where none do, or the mark is not tracked for
    its dtype."""
    if byte_marks.small(out):
        m = byte_marks.unwritten_mask(out)
    else:
        m = _holding_mark(out.detach().cpu().contiguous())
        m = None if m is None else m.reshape(tuple(out.shape))
    return m if m is not None and m.any() else None


def _unwritten_bytes(out, ref, capture: bool) -> np.ndarray | None:
    """``unwritten`` of a small-dtype output (byte_marks.py): elements no launch stored that hold the mark in
    every byte; of a reproducer (``capture``), not where the captured output holds the mark too (the program's
    launch left them unwritten: the band warning's to say, as for the 32/64-bit integers)."""
    m = byte_marks.unwritten_mask(out)
    if m is None or not m.any():
        return None
    m = m.reshape(-1)
    if capture and ref.dtype == out.dtype and ref.numel() == out.numel():
        m = m & ~byte_marks.holding_mark(ref)
    m = m.reshape(tuple(out.shape))
    return m if m.any() else None


def _holding_mark(c) -> np.ndarray | None:
    """Which elements of a contiguous CPU tensor hold the mark (flat), or None for a dtype the mark is never
    written in."""
    import torch

    from tritondbg.interp.poison import torch_payload_ids

    if c.dtype in (torch.int32, torch.int64):
        return np.asarray(marked(c.numpy(), "i32" if c.dtype == torch.int32 else "i64")).reshape(-1)
    ids = torch_payload_ids(c)  # floats: the NaN payload ids poison.py reads back
    return None if ids is None else np.asarray(ids[0] == UNINIT_ID).reshape(-1)


def band(m: np.ndarray) -> bool:
    """Whether the True elements of ``m`` (some, not all) are a flat tail, or whole slices along one dimension
    making one run at its start or its end: what a store mask too strict or a grid of ``n // BLOCK`` leaves, not a
    shape such as a causal triangle, which kernels leave by design (fla's chunked A)."""
    flat = m.reshape(-1)
    if flat[int(flat.argmax()):].all():
        return True
    for d in range(m.ndim):
        if m.shape[d] < 2:
            continue
        rest = tuple(i for i in range(m.ndim) if i != d)
        full, some = (m.all(axis=rest), m.any(axis=rest)) if rest else (m, m)
        idx = np.nonzero(full)[0]
        if (full == some).all() and idx.size and idx[-1] - idx[0] + 1 == idx.size and \
                (idx[0] == 0 or idx[-1] == m.shape[d] - 1):
            return True
    return False


def marked_elements(t) -> np.ndarray | None:
    """Which elements of tensor ``t`` (in memory a factory marked) still hold the mark, or None (not such memory,
    another dtype, too big to look at each launch)."""
    import torch

    if not isinstance(t, torch.Tensor) or not t.numel() or t.numel() > _MAX_LOOK or t.device.type == "meta" or \
            _allocation(t.data_ptr()) is None:
        return None
    if byte_marks.small(t):  # no launch stored them and they hold the mark (byte_marks.py)
        m = byte_marks.unwritten_mask(t)
        return None if m is None else m.reshape(-1)
    return _holding_mark(t.detach().cpu().contiguous())


_MAX_LOOK = 1 << 24  # elements: an output checked for holes after each launch


def marks_of(args: dict) -> dict:
    """{name: which of its elements hold the mark} for the tensors of ``args`` in marked memory that hold any
    (before a launch: what ``bands`` compares with after it); {} when the factories are not marked."""
    if not installed():
        return {}
    out = {}
    for name, v in args.items():
        m = marked_elements(v)
        if m is not None and m.any():
            out[name] = m
    return out


def bands(args: dict, before: dict, after: dict | None = None) -> list[tuple[str, Any, Any, int]]:
    """(argument name, tensor, unwritten elements, how many the launch wrote) for each tensor the launch wrote
    part of (elements that held the mark before it and not after) while leaving a band of it marked (``band``:
    a slab along one dimension or a flat tail). ``before``: {name: ``marked_elements`` before the launch};
    ``after``: the same after it, where the caller has it."""
    out = []
    for name, was in before.items():
        now = after[name] if after is not None and name in after else marked_elements(args[name])
        if now is None or now.shape != was.shape:
            continue
        wrote = int((was & ~now).sum())
        if wrote and now.any() and band(now.reshape(tuple(args[name].shape) or (1,))):
            out.append((name, args[name], now, wrote))
    return out


def band_finding(name: str, t, left, wrote: int, *, later: str = "and no later launch wrote them") -> dict:
    """The warning for a band ``left`` unwritten in ``t``; ``later`` says what ran after the launch."""
    first = int(left.nonzero()[0][0])
    index = tuple(int(i) for i in np.unravel_index(first, tuple(t.shape))) if t.dim() else ()
    where = allocated_at(t.data_ptr())
    mark = "0x5A in every byte" if byte_marks.small(t) else "NaN" if t.is_floating_point() else \
        f"0x{INT_MARK.get(t.element_size(), 0):X}"
    return {"kind": "uninit", "severity": "warning", "tensor": name, "message": (
        f"a launch wrote {wrote} element(s) of {name} and left {int(left.sum())} of {t.numel()} unwritten (first at "
        f"index {index}){f', memory from {where}' if where else ''}, {later}: they hold "
        f"tritondbg's uninitialized-memory mark ({mark}) where a GPU gives whatever the memory held; a store mask "
        "too strict, or a grid that does not cover the tensor?")}


def stores_cover(t, left, stores: dict) -> bool:
    """Whether the first and last element of ``left`` (a mask over ``t``) lie inside one store site's address
    span (``stores``: the sanitizer's ``store_spans``): the launch stored around them, so they may hold values it
    computed from marked memory rather than be elements it left unwritten."""
    flat = left.reshape(-1).nonzero()
    if not len(flat) or not t.dim():
        return False
    size = t.element_size()

    def address(i: int) -> int:
        return t.data_ptr() + size * sum(int(k) * st for k, st in
                                         zip(np.unravel_index(i, tuple(t.shape)), t.stride()))
    lo, hi = address(int(flat[0][0])), address(int(flat[-1][0]))
    return any(a <= lo and hi <= b for a, b in stores.values())


def stores_into(t, stores: dict) -> list:
    """The (file, line) of the stores whose addresses fall in ``t``'s memory, in line order (``stores``: the
    sanitizer's ``store_spans``, {(file, line): (lowest, highest) address})."""
    try:
        lo = t.data_ptr()
        hi = lo + max(t.untyped_storage().nbytes() - t.storage_offset() * t.element_size(), 1)
    except Exception:  # noqa: BLE001
        return []
    return sorted(site for site, (a, b) in stores.items() if a < hi and b >= lo)


def at_stores(f: dict, name: str, stores: list) -> dict:
    """A band finding placed at the store that wrote the rest (its mask or the grid is the suspect), not the
    kernel's def line; the other stores into the tensor named."""
    if stores:
        f["file"], f["line"] = stores[0]
        if len(stores) > 1:
            f["message"] += f" (stores into {name} at lines {', '.join(str(ln) for _, ln in stores)})"
    return f


def remember_as(t, text: str, site=None) -> None:
    """Count ``t``'s memory as a factory's uninitialized memory, allocated where ``text`` says (a reproducer's
    tensor that was such memory in the program it was captured from); ``site``: (file, line, function) of that
    allocation in the program, when the capture recorded it."""
    _remember(t, text, text=text, site=tuple(site) if site else None)


# ---------------------------------------------------------------------------------------------------------
# the factories
# ---------------------------------------------------------------------------------------------------------

def _wrap(fn, label: str):
    def empty(*args, **kwargs):
        t = fn(*args, **kwargs)
        if kwargs.get("out") is None:
            fill(t, label)
        return t
    empty.__wrapped__ = fn
    empty.__name__ = getattr(fn, "__name__", "empty")
    empty.__doc__ = getattr(fn, "__doc__", None)
    return empty


# the wrappers' code: a frame of it calls the factory for the program (tritondbg/program/cpu_device.py looks past it
# for the program's own frame)
WRAPPER_CODE = _wrap(len, "").__code__


def _targets():
    import torch

    return [(torch, "empty"), (torch, "empty_like"), (torch, "empty_strided"),
            (torch.Tensor, "new_empty"), (torch.Tensor, "new_empty_strided")]


def install() -> None:
    """Fill what the empty-family factories return, until the matching ``uninstall`` (calls nest)."""
    with _lock:
        _state["depth"] += 1
        if _state["depth"] > 1:
            return
        _state["sites"].clear()  # an earlier run's allocations: their memory may hold data now
        byte_marks.clear()
        for owner, name in _targets():
            fn = getattr(owner, name, None)
            if fn is None:
                continue
            _state["saved"][(owner, name)] = (fn, name in owner.__dict__)
            label = f"torch.{name}" if owner.__name__ == "torch" else f"Tensor.{name}"
            setattr(owner, name, _wrap(fn, label))


def uninstall() -> None:
    with _lock:
        if _state["depth"] == 0:
            return
        _state["depth"] -= 1
        if _state["depth"]:
            return
        for (owner, name), (fn, own) in _state["saved"].items():
            if own:
                setattr(owner, name, fn)
            else:  # a method torch.Tensor inherits from its C base: drop the override
                delattr(owner, name)
        _state["saved"].clear()


@contextmanager
def marking():
    """``install`` until the block ends (calls nest): the determinism gate's runs, where an output element no
    program writes then holds the same mark in both runs."""
    install()
    try:
        yield
    finally:
        uninstall()


def count_marked(t) -> int:
    """How many elements of a float tensor still hold the mark (integers: data can equal it; 0)."""
    import torch

    if not isinstance(t, torch.Tensor) or not t.numel() or not t.is_floating_point() or t.element_size() < 2:
        return 0
    m = _holding_mark(t.detach().cpu().contiguous())
    return int(m.sum()) if m is not None else 0


def installed() -> bool:
    return _state["depth"] > 0


# ---------------------------------------------------------------------------------------------------------
# reading the mark back (interpreter values: numpy data + the Triton element type's kind; uninit_reads.py)
# ---------------------------------------------------------------------------------------------------------

def marked(values: np.ndarray, kind: str | None) -> np.ndarray | None:
    """Which of ``values`` (raw interpreter data of one element kind: fp32/fp64/fp16/bf16/i32/i64) hold the mark;
    None for kinds the mark is never written in."""
    from tritondbg.interp.poison import payload_ids

    if kind in ("fp32", "fp64", "fp16", "bf16"):
        return payload_ids(values, kind) == UNINIT_ID
    if kind in ("i32", "i64"):
        size = 4 if kind == "i32" else 8
        return values.view(f"u{size}") == np.dtype(f"u{size}").type(INT_MARK[size])
    return None
