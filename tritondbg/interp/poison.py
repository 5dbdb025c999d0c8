"""The poison of undefined lanes (a masked load without ``other=``): its values and where it ended up.

The sanitizer (sanitize.py) fills such lanes with ``poison_array``: a NaN whose payload carries the load's id
(1..63), so an output element that holds it names its load (``payload_ids``). ``poisoned`` is the one test of an
output: its elements holding a poison NaN where the reference does not hold a NaN. The reference is the torch
reference under ``tritondbg interpret KERNEL``; under ``interpret -- CMD`` it is the same launch run again with
the plain interpreter's filler (0) for those lanes, which is also what the program keeps (program/checker.py).

An integer load has no NaN to carry an id (its poison is the type's smallest value, which a shift and a mask turn
into 0): its undefined lanes are followed by the shadow's marks instead, and ``tell_int_stored`` counts those a
store writes (helper-150: AutoAWQ's zero-point load off by one group, int32 without other=, wrong output and
0 findings).
"""
from __future__ import annotations

import numpy as np

from tritondbg.interp.shadow_values import _scalar_ty


def poison_array(shape, tl_ty, np_dtype, site_id: int) -> np.ndarray:
    """A block of poison for undefined lanes: a NaN whose payload carries ``site_id`` (1..63) in bits
    that survive fp32 <-> fp16/bf16 conversions; the min (signed) or max (unsigned) integer; fp8: its NaN."""
    import triton.language as tl

    sid = int(site_id) & 0x3F
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.float32:
        return np.full(shape, 0x7FC00000 | (sid << 16), dtype=np.uint32).view(np.float32)
    if np_dtype == np.float64:
        return np.full(shape, 0x7FF8000000000000 | (sid << 45), dtype=np.uint64).view(np.float64)
    if np_dtype == np.float16:
        return np.full(shape, 0x7E00 | (sid << 3), dtype=np.uint16).view(np.float16)
    if tl_ty == tl.bfloat16:
        return np.full(shape, 0x7FC0 | sid, dtype=np.uint16)
    if np_dtype == np.uint8 and tl_ty.is_floating():
        fnuz = tl_ty in (getattr(tl, "float8e4b8", None), getattr(tl, "float8e5b16", None))
        return np.full(shape, 0x80 if fnuz else 0x7F, dtype=np.uint8)
    if np_dtype == np.bool_:
        return np.zeros(shape, dtype=np.bool_)
    info = np.iinfo(np_dtype)
    return np.full(shape, info.min if info.min < 0 else info.max, dtype=np_dtype)


def payload_ids(values: np.ndarray, kind: str) -> np.ndarray:
    """Poison ids (0 = none) of the NaN lanes of raw float storage; ``kind`` is fp32/fp64/fp16/bf16."""
    if kind == "fp32":
        bits = values.view(np.uint32)
        return np.where(np.isnan(values.view(np.float32)), (bits >> np.uint32(16)) & np.uint32(0x3F), 0)
    if kind == "fp64":
        bits = values.view(np.uint64)
        return np.where(np.isnan(values.view(np.float64)), (bits >> np.uint64(45)) & np.uint64(0x3F), 0)
    if kind == "fp16":
        bits = values.view(np.uint16)
        return np.where(np.isnan(values.view(np.float16)), (bits >> np.uint16(3)) & np.uint16(0x3F), 0)
    if kind == "bf16":
        bits = values.view(np.uint16)
        nan = ((bits & np.uint16(0x7F80)) == np.uint16(0x7F80)) & ((bits & np.uint16(0x7F)) != 0)
        return np.where(nan, bits & np.uint16(0x3F), 0)
    return np.zeros(values.shape, dtype=np.int64)


def handle_kind(h) -> str | None:
    import triton.language as tl

    ty = _scalar_ty(h)
    return {tl.float32: "fp32", tl.float64: "fp64", tl.float16: "fp16", tl.bfloat16: "bf16"}.get(ty)


def torch_payload_ids(t):
    """(poison ids, NaN mask) of a torch tensor's elements, or None for dtypes without payload."""
    import torch

    t = t.detach().cpu().contiguous()
    views = {torch.float32: (torch.int32, "fp32"), torch.float64: (torch.int64, "fp64"),
             torch.float16: (torch.int16, "fp16"), torch.bfloat16: (torch.int16, "bf16")}
    if t.dtype not in views:
        return None
    as_int, kind = views[t.dtype]
    raw = t.view(as_int).numpy()
    unsigned = raw.view({"fp32": np.float32, "fp64": np.float64, "fp16": np.float16, "bf16": np.uint16}[kind])
    return payload_ids(unsigned, kind), torch.isnan(t.float()).numpy()


def poisoned(out, ref):
    """(poison ids, hit) over the elements of a float output tensor: ``hit`` where ``out`` holds a poison NaN
    and ``ref`` (same shape) holds no NaN; None for dtypes without a payload (integers: no id to attribute)."""
    import torch

    ids = torch_payload_ids(out)
    if ids is None:
        return None
    pid_ids, _ = ids
    hit = (pid_ids > 0) & ~torch.isnan(ref.detach().float().cpu()).numpy()
    return pid_ids, hit


def hidden_nan(o, r, hits, nf):
    """Elements of output ``o`` that hold a poison NaN here where ``r`` (a reproducer's captured output) holds a NaN
    that is no poison's (``hits``: ``poisoned(o, r)``; ``nf``: o's non-finite elements counted against ``r``): the
    program got a NaN there while it read 0 in the undefined lanes, so an op of the kernel made it, and in this run
    the poison came through first and hid which op (helper-82: a 0/0 beside a load without other=). None if none."""
    if hits is None:
        return None
    ref = torch_payload_ids(r)
    if ref is None:
        return None
    h = nf & (hits[0] > 0) & ref[1] & (ref[0] == 0)
    return h if h.any() else None


def tell_int_stored(san, ptrs, value, live) -> None:
    """A store (or atomic) of lanes whose shadow says a masked integer load left them undefined (``san.int_sids``):
    the load's poison finding, counting those lanes, with the first output element, line and pid of the store."""
    from tritondbg.interp.uninit_reads import tell_stored

    def place(e, where, line, n):
        if e["output"] is None:
            at = where()
            e["output"], e["output_count"], e["stored_at"] = at["element"], 0, line
            e["pid"], e["tensor"] = tuple(san.pid), at["tensor"]
        e["output_count"] += n

    tell_stored(san, ptrs, value, live, san.int_sids, lambda sid: san._poison_entry(san.poison_info[sid]), place)


def note_payload_stores(san, value, live, site) -> None:
    """A store's lanes holding a poison NaN: the first store (pid, file, line) of each id (``san.poison_stores``)."""
    kind = handle_kind(value)
    if kind is None:
        return
    data = np.broadcast_to(value.data, live.shape if live is not None else value.data.shape)
    vals = data if live is None else data[live]
    ids = payload_ids(np.ascontiguousarray(vals), kind)
    for sid in np.unique(ids[ids > 0]):
        san.poison_stores.setdefault(int(sid), dict(pid=list(san.pid), file=site[0], line=site[1]))
