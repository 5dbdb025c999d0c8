"""initcheck's mark for the small dtypes (int8, uint8, int16, float8 e4m3 / e5m2), where any byte is real data.

A float has a NaN payload no data holds and a 32/64-bit integer a value no index is likely to hold; a byte has
neither, so a quantisation kernel whose store mask is too strict left an int8 output's last row as torch.empty
gave it, and tritondbg said nothing. While the sanitizers run, the empty-family factories fill such memory with
``MARK`` in every byte (``fill``, the whole storage) and remember it (``track``), and the kernels' stores and
atomics into it are recorded byte by byte (``record``: memops.py, a bitmap per allocation, made at its first
store). An element counts as unwritten (``unwritten_mask``) only where no launch stored it and every byte still
holds the mark, so a kernel that stores the mark's value itself (90 into an int8 output) leaves nothing
unwritten. An allocation with a byte that is neither the mark nor a kernel's store was written by something else
(torch, numpy, a kernel run without the sanitizers): from then on its marks say nothing (``touched``), as data
equal to the mark (1 element in 256 of random int8 data) cannot be told from memory nothing wrote.

What remains (false findings): an allocation that torch (or a kernel run without the sanitizers) wrote only with
bytes equal to the mark (``q.fill_(90)`` on int8, ``q[L:] = 90``), every other byte of it stored by sanitized
launches or untouched, is told as unwritten there. Missed: a hole in an allocation torch also wrote some other
value into (before or after the kernel), and an element a reference computed equal to the mark (output_checks
counts it as data, as for the 32/64-bit integers). Reads (``read_hits``, from uninit_reads.py) are checked the same
way: a load's live lane whose bytes no launch stored and all hold the mark, in an allocation nothing else wrote
(looked at once a launch: a torch write between launches makes its marks say nothing), reads memory nothing wrote.
"""
from __future__ import annotations

import numpy as np

MARK = 0x5A
_MAX_BYTES = 1 << 28  # an allocation larger than this is filled but not tracked (its bitmap would be as large)


def _small_dtypes() -> tuple:
    import torch

    names = ("int8", "uint8", "int16", "float8_e4m3fn", "float8_e5m2")
    return tuple(getattr(torch, n) for n in names if hasattr(torch, n))


def small(t) -> bool:
    """Whether ``t`` is of a dtype this mark is for."""
    return getattr(t, "dtype", None) in _small_dtypes()


class _Track:
    __slots__ = ("entry", "n", "stored", "touched", "seen", "ref")

    def __init__(self, entry, n: int, ref=None):
        self.entry, self.n, self.ref = entry, n, ref  # ref: the factory's tensor (weak), to read its bytes
        self.seen = None  # the launch token ``read_hits`` last looked for foreign bytes under
        self.stored: np.ndarray | None = None  # bytes a sanitized launch stored (bool per byte), made at the first
        self.touched = False                   # a byte neither the mark nor stored was seen: marks say nothing now


_tracks: dict[int, _Track] = {}  # storage address -> its track
_spans = {"key": None, "los": None, "his": None, "tracks": ()}
_version = [0]  # bumped when _tracks changes (a finalizer may change it: the span index is rebuilt from a copy)


def _flat(t):
    """The bytes of ``t``'s storage, as a uint8 tensor over it."""
    import torch

    return torch.zeros(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())


def fill(t) -> bool:
    """Fill the storage of a fresh small-dtype tensor with the mark; False for other dtypes."""
    import torch

    if not small(t):
        return False
    with torch.no_grad():
        _flat(t).fill_(MARK)
    return True


def track(lo: int, n: int, entry, t=None) -> None:
    """Remember the storage at ``lo`` (``n`` bytes, initcheck's allocation ``entry``; ``t``: its tensor) as marked
    memory."""
    import weakref

    if n <= _MAX_BYTES:
        try:
            ref = weakref.ref(t) if t is not None else None
        except TypeError:
            ref = None
        _tracks[lo] = _Track(entry, n, ref)
    else:
        _tracks.pop(lo, None)
    _version[0] += 1  # after the change: an index built meanwhile under the old number is rebuilt (review)


def forget(lo: int, entry=None) -> None:
    """The storage at ``lo`` is no longer ``entry``'s (None: whoever's it was)."""
    tr = _tracks.get(lo)
    if tr is not None and (entry is None or tr.entry is entry):
        _tracks.pop(lo, None)
        _version[0] += 1


def clear() -> None:
    _tracks.clear()
    _version[0] += 1


def _span_index():
    while _spans["key"] != _version[0]:
        key = _version[0]
        try:
            tracks = list(_tracks.items())
        except RuntimeError:  # changed while copied
            continue
        _spans.update(key=key, los=np.array([lo for lo, _ in tracks], dtype=np.uint64),
                      his=np.array([lo + tr.n for lo, tr in tracks], dtype=np.uint64),
                      tracks=tuple(tr for _, tr in tracks))
    return _spans["los"], _spans["his"], _spans["tracks"]


def _overlapping(a_lo: int, a_hi: int) -> list:
    """(track, its address) of each tracked allocation that overlaps the bytes [a_lo, a_hi)."""
    los, his, tracks = _span_index()
    return [(tracks[i], int(los[i])) for i in np.nonzero((los < np.uint64(a_hi)) & (his > np.uint64(a_lo)))[0]]


def record(ptrs, mask) -> None:
    """A store's (or an atomic's) live lanes (``mask``: None for all): the bytes they write in tracked memory."""
    if not _tracks:
        return
    p = np.asarray(ptrs.data)
    if p.size == 0:
        return
    if not _overlapping(int(p.min()), int(p.max()) + 1):
        return  # (every lane, live or not, outside tracked memory: the common case, before any masking)
    addrs = p.reshape(-1) if mask is None else p[np.broadcast_to(np.asarray(mask, dtype=bool), p.shape)]
    if addrs.size == 0:
        return
    addrs = addrs.astype(np.uint64, copy=False)
    try:
        width = max(1, int(ptrs.get_element_ty().primitive_bitwidth) // 8)
    except Exception:  # noqa: BLE001 - not a pointer handle: one byte a lane
        width = 1
    for tr, lo in _overlapping(int(addrs.min()), int(addrs.max()) + width):
        sel = addrs[(addrs >= np.uint64(lo)) & (addrs < np.uint64(lo + tr.n))]
        if not sel.size:
            continue
        if tr.stored is None:
            tr.stored = np.zeros(tr.n, dtype=bool)
        off = (sel - np.uint64(lo)).astype(np.int64)
        for k in range(width):
            o = off + k
            tr.stored[o[o < tr.n]] = True


def _bytes_of(tr, lo: int) -> np.ndarray | None:
    """The track's bytes, read through its tensor (None when it is gone, or its storage is no longer the one at
    ``lo`` of that size: ``resize_``, ``set_``, a storage freed under it; the memory is not read then)."""
    t = tr.ref() if tr.ref is not None else None
    if t is None or t.device.type != "cpu":
        return None
    try:
        storage = t.untyped_storage()
        if storage.data_ptr() != lo or storage.nbytes() < tr.n:
            return None
        return _flat(t).detach()[:tr.n].numpy()
    except (RuntimeError, NotImplementedError):
        return None


def _foreign(tr, raw: np.ndarray, a: int = 0) -> bool:
    """Whether ``raw`` (the track's bytes from offset ``a``) holds a byte neither the mark nor a launch's store."""
    foreign = raw != MARK
    if tr.stored is not None:
        foreign &= ~tr.stored[a:a + raw.size]
    return bool(foreign.any())


def read_hits(ptrs, live, token) -> np.ndarray | None:
    """Which lanes of a load (``ptrs``; ``live``: its mask, None for all) read an element of tracked memory that no
    sanitized launch stored and that holds the mark in every byte; None when none does. An allocation is looked
    at for foreign bytes once per ``token`` (a launch): one torch wrote into since is data from then on."""
    if not _tracks:
        return None
    p = np.asarray(ptrs.data)
    if p.size == 0:
        return None
    overlapping = _overlapping(int(p.min()), int(p.max()) + 1)
    if not overlapping:
        return None
    try:
        width = max(1, int(ptrs.get_element_ty().primitive_bitwidth) // 8)
    except Exception:  # noqa: BLE001 - not a pointer handle
        return None
    p = p.astype(np.uint64, copy=False)
    live = np.ones(p.shape, bool) if live is None else np.broadcast_to(np.asarray(live, dtype=bool), p.shape)
    hit = np.zeros(p.shape, bool)
    for tr, lo in overlapping:
        if tr.touched:
            continue
        raw = _bytes_of(tr, lo)
        if raw is None:  # (its memory is someone else's now: the marks say nothing)
            tr.touched = True
            continue
        if tr.seen != token:
            tr.seen = token
            if _foreign(tr, raw):
                tr.touched = True
                continue
        inside = live & (p >= np.uint64(lo)) & (p + np.uint64(width) <= np.uint64(lo + tr.n))
        if not inside.any():
            continue
        off = (p[inside] - np.uint64(lo)).astype(np.int64)
        left = np.ones(off.shape, bool)
        for k in range(width):
            left &= raw[off + k] == MARK
            if tr.stored is not None:
                left &= ~tr.stored[off + k]
        hit[inside] = left
    return hit if hit.any() else None


def _offsets(t, base: int) -> np.ndarray:
    """The byte offset in its storage of each element of ``t`` (``t.shape``)."""
    es = t.element_size()
    off = np.full(tuple(t.shape), base, dtype=np.int64)
    for d, (size, stride) in enumerate(zip(t.shape, t.stride())):
        shape = [1] * t.dim()
        shape[d] = size
        off = off + (np.arange(size, dtype=np.int64) * stride * es).reshape(shape)
    return off


def unwritten_mask(t) -> np.ndarray | None:
    """Which elements of ``t`` (its shape) no sanitized launch stored and still hold the mark in every byte; None
    for memory not tracked (not a factory's, another dtype, written by something else: ``touched``)."""
    if not small(t) or t.device.type == "meta":
        return None
    try:
        storage = t.untyped_storage()
        lo = storage.data_ptr()
    except (RuntimeError, NotImplementedError):
        return None
    tr = _tracks.get(lo)
    if tr is None or tr.touched or storage.nbytes() < tr.n:
        return None
    off = _offsets(t, t.data_ptr() - lo)
    if off.size and (off.min() < 0 or off.max() + t.element_size() > tr.n):
        return None
    a, b = (int(off.min()), int(off.max()) + t.element_size()) if off.size else (0, 0)  # the view's bytes only
    raw = _flat(t).detach()[a:b].cpu().numpy()
    if _foreign(tr, raw, a):  # torch (or a kernel run without the sanitizers) wrote into it: 90s may be its data
        tr.touched = True
        return None
    left = np.ones(off.shape, dtype=bool)
    if tr.stored is not None:
        for k in range(t.element_size()):
            left &= ~tr.stored[off + k]
    return left


def holding_mark(t) -> np.ndarray | None:
    """Which elements of a small-dtype tensor hold the mark in every byte (flat, by value alone), or None."""
    if not small(t):
        return None
    import torch

    c = t.detach().cpu().contiguous()
    raw = c.reshape(-1).view(torch.uint8).numpy().reshape(c.numel(), c.element_size())
    return (raw == MARK).all(axis=1)
