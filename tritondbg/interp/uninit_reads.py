"""Loads, stores and atomics of memory holding initcheck's uninitialized-memory mark: the sanitizer's side of
initcheck.py (memops.py and sanitize.py call these; ``san`` is the running Sanitizer), and the findings' text.

A load's live lanes that read the mark become undefined lanes of that load (the shadow's poison), found where they
reach a store, a reduction or an output; a store of such lanes names the element they land in; an atomic
read-modify-write of a marked element is a finding at once (a sum that starts from garbage), and an ``atomic_cas``
that keeps comparing against the mark stops the launch (a lock allocated with ``torch.empty``).
"""
from __future__ import annotations

import numpy as np

from tritondbg.errors import KernelError
from tritondbg.interp import byte_marks, initcheck
from tritondbg.interp.values import element_width


def value_kind(h) -> str | None:
    """The element kind of an interpreter value the mark can be in (see ``initcheck.marked``), or None."""
    import triton.language as tl

    from tritondbg.interp.poison import handle_kind
    from tritondbg.interp.shadow_values import _scalar_ty

    kind = handle_kind(h)
    if kind is not None:
        return kind
    return {tl.int32: "i32", tl.int64: "i64"}.get(_scalar_ty(h))


_CAS_SPIN = 2000  # compares of one atomic_cas line against the mark before the launch stops (a lock never freed)


class UninitializedLock(KernelError, RuntimeError):
    """A kernel spins on an atomic_cas of memory nothing wrote (a lock allocated with torch.empty)."""


def _hits(h, live, ptrs, token=None) -> np.ndarray | None:
    kind = value_kind(h)
    if kind is None:  # int8 / uint8 / int16 / fp8: the bytes' own record (byte_marks.py), for loads
        return None if token is None else byte_marks.read_hits(ptrs, live, token)
    data = np.asarray(h.data)
    hit = initcheck.marked(np.ascontiguousarray(data), kind)
    if hit is None:
        return None
    hit = hit.reshape(data.shape)
    if live is not None:
        hit = hit & np.broadcast_to(np.asarray(live, dtype=bool), hit.shape)
    if hit.any() and kind in ("i32", "i64"):
        # an integer equal to the mark is data (torch.full(..., 0x5A5A5A5A)) unless a marked allocation holds it
        addrs = np.broadcast_to(np.asarray(ptrs.data), hit.shape)
        hit[hit] = initcheck._allocated(addrs[hit])
    return hit if hit.any() else None


def _where(san, ptrs, hit) -> dict:
    """The first marked element's tensor, name (``c[0, 3]``) and allocation site."""
    addrs = np.broadcast_to(np.asarray(ptrs.data), hit.shape)[hit]
    addr = int(addrs.reshape(-1)[0])
    width = element_width(ptrs.get_element_ty())
    buf, desc = san.launch.argmap().describe(addr, width)
    alloc = initcheck.allocated_at(addr)
    # the mark in memory no factory handed out: values computed (by torch, or another launch) from memory nothing
    # wrote carry its NaN payload; the reader is where it shows, the launch that left it unwritten is the cause
    carried = alloc is None and ptrs.get_element_ty().is_floating()
    return dict(tensor=buf.name if buf is not None else None, element=desc, alloc=alloc, carried=carried)


def check_load(san, ptrs, out, live) -> None:
    """A load's live lanes that read the mark become undefined lanes of this load (the shadow's poison): found
    where they reach a store, a reduction or an output, like the lanes of a masked load without ``other=``."""
    from tritondbg.interp import frames, shadow
    from tritondbg.interp.poison import poison_array

    hit = _hits(out, live, ptrs, san.launch_token)
    if hit is None:
        return
    site = frames.site()
    sid, info = san.uninit_site(site, _where(san, ptrs, hit))
    info["read"] += int(hit.sum())
    data = out.data
    if (value_kind(out) or "").startswith(("fp", "bf")) and data.flags.writeable:  # the load's id in the payload
        data[hit] = poison_array(data.shape, ptrs.get_element_ty(), data.dtype, sid)[hit]
    pad = shadow.pad_of(out)
    pad = np.zeros(hit.shape, np.uint8) if pad is None else np.broadcast_to(pad, hit.shape)
    shadow._set_pad(out, np.where(hit, sid + 2, pad).astype(np.uint8))


def check_store(san, ptrs, value, live) -> None:
    """A store of lanes a load read from the mark: the element they land in names the finding."""
    tell_stored(san, ptrs, value, live, san.uninit_sids, san.uninit_entry)


def tell_stored(san, ptrs, value, live, sids, entry, place=None) -> None:
    """The lanes of a store (or atomic) of ``value`` through ``ptrs`` (``live``: its mask, or None) whose shadow
    holds one of the poison ids ``sids``: counted in ``entry(sid)``, with the first element they land in (the mark
    a load read, here; a shift's undefined lanes, shifts.py); ``place(e, where, line, lanes)`` records them instead
    (an integer load's poison: its output element, poison.py)."""
    from tritondbg.interp import frames, shadow

    pad = shadow.pad_of(value)
    if pad is None or not sids:
        return
    shape = np.asarray(ptrs.data).shape
    ids = np.broadcast_to(pad, shape).astype(np.int64) - 2
    sel = np.isin(ids, list(sids))
    if live is not None:
        sel &= np.broadcast_to(np.asarray(live, dtype=bool), shape)
    if not sel.any():
        return
    line = frames.site()[1]
    for sid in np.unique(ids[sel]):
        lanes = sel & (ids == sid)
        e = entry(int(sid))
        e["lanes"] += int(lanes.sum())
        if place is not None:
            place(e, lambda: _where(san, ptrs, lanes), line, int(lanes.sum()))
        elif e.get("stored") is None:
            e["stored"] = _where(san, ptrs, lanes)["element"]
            e["stored_at"] = line


_RMW_NAMES = {"fadd": "add", "umax": "max", "umin": "min"}


def check_atomic(san, op: str, ptrs, old, live) -> None:
    """An atomic read-modify-write whose old value is the mark: a finding at the atomic's line at once."""
    from tritondbg.interp import frames

    op = _RMW_NAMES.get(op, op)
    hit = _hits(old, live, ptrs)
    if hit is None:
        return
    site = frames.site()
    where = _where(san, ptrs, hit)
    e = san.atomic_uninit_entry(site, op, where)
    e["lanes"] += int(hit.sum())
    addrs = np.broadcast_to(np.asarray(ptrs.data), hit.shape)[hit]  # (the elements it wrote are no "never written"
    lo, hi = e.get("span", (int(addrs.min()), int(addrs.max())))   # output, though they carry the mark on)
    e["span"] = (min(lo, int(addrs.min())), max(hi, int(addrs.max())))
    if op == "cas":
        n = san.uninit_spins.get(site[:2], 0) + 1
        san.uninit_spins[site[:2]] = n
        if n >= _CAS_SPIN:
            raise UninitializedLock(
                f"tl.atomic_cas at line {site[1]} compared {where['element']} {n} times and it still holds memory "
                f"nothing wrote{_alloc_text(where)}: a lock that never reads its free value; the launch stops here "
                "(on the GPU: a hang, or a pass when the memory happens to hold it)")


def _alloc_text(where: dict) -> str:
    return f" (allocated by {where['alloc']})" if where.get("alloc") else " (allocated uninitialized)"


def message(e: dict, progs: str) -> str:
    """The finding's text (findings.py): a load's marked lanes that reach somewhere, or an atomic on the mark
    (outputs left unwritten: unstored.message)."""
    alloc = _alloc_text(e)
    gpu = ("On the GPU that memory holds whatever the allocator last put there (on a CPU often zeros, which is why "
           "a bare TRITON_INTERPRET=1 passes)")
    if e["op"] != "load":
        verb = "compares" if e["op"] == "cas" else "into"
        return (f"tl.atomic_{e['op']} {verb} memory nothing wrote before the launch{alloc}: {e['lanes']} lane(s) in "
                f"{progs}, the first on {e['element']}. {gpu}: allocate it with torch.zeros (or fill it before the "
                "launch)")
    parts = []
    if e.get("stored"):
        parts.append(f"stored to {e['stored']} at line {e['stored_at']}")
    if e.get("output"):
        parts.append(f"{e['output_count']} element(s) of the outputs hold them, first {e['output']}")
    if e.get("reaches"):
        parts.append("they enter " + ", ".join(e["reaches"]))
    if e.get("carried"):
        return (f"reads {e['element']} ({e['read']} lane(s)): values that carry tritondbg's uninitialized-memory mark "
                "in memory no factory handed out uninitialized, so they were computed (by torch, or another launch) "
                f"from memory nothing wrote, and uses them: {'; '.join(parts)}. This kernel is where they show; the "
                "cause is earlier: a launch that left part of an output unwritten (a warning names it) or a read of "
                "uninitialized memory in the program")
    return (f"reads {e['element']} ({e['read']} lane(s)), memory nothing wrote before the launch{alloc}, and uses "
            f"it: {'; '.join(parts)}. {gpu}: write it before it is read (torch.zeros, or a store first), or keep "
            "those lanes out of the result")
