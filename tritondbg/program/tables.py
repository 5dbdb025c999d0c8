"""Tensors a launch reaches through a table of their addresses, for capture and replay.

A grouped GEMM (Triton's tutorial 08) or a MoE kernel gets int64 (or uint64: vLLM's LoRA) tensors of data pointers (``torch.tensor([a.data_ptr()
for a in group_a])``) and casts each entry to a pointer in the kernel. Its argument list names the tables, not the
tensors behind them: a reproducer that saved the arguments alone replayed addresses of the capturing process,
and the interpreter reported every load as out of bounds ("point into no argument tensor").

``addressed(snap)`` finds, for each int64 / uint64 tensor argument whose every non-zero entry lands in a live tensor of its
device (an argument of the launch, else one found through the garbage collector), the tensors behind it, adds them
to the snapshot (their bytes are saved before and after the launch like the arguments') and records each entry as
(table, entry, tensor, byte offset). ``rewrite`` points the replay's tables at the replay's tensors. A table
with an entry that lands in no tensor is left as plain integers (hash values, indices): nothing is added or
rewritten for it.
"""
from __future__ import annotations

from tritondbg.interp.guard import live_tensors, view_bytes

MAX_ENTRIES = 1 << 16
_LOW = 1 << 16  # no tensor lives below this address: smaller values are indices, sizes, null


def _table_dtypes():
    import torch

    return (torch.int64, getattr(torch, "uint64", torch.int64))  # vLLM's LoRA tables are uint64 (helper-69)


def _entries(table):
    """The table's entries as int64 (a uint64 table read through an int64 view: addresses are below 2**63, and
    torch's CPU build lacks most uint64 ops)."""
    import torch

    flat = table.detach().reshape(-1)
    return flat.view(torch.int64) if flat.dtype != torch.int64 else flat


def _holder(addr: int, tensors: list):
    """The tensor of ``tensors`` that ``addr`` falls in: one starting there first, else the one whose view spans it."""
    best = None
    for t in tensors:
        lo = t.data_ptr()
        hi = lo + view_bytes(t)
        if lo == addr and hi > lo:
            return t
        if best is None and lo <= addr < hi:
            best = t
    return best


def addressed(snap) -> None:
    """Add the tensors behind the snapshot's address tables to ``snap.tensors``; set ``snap.pointers``."""
    import torch

    snap.pointers = []
    _TABLE_DTYPES = _table_dtypes()
    tables = [(i, t) for i, t in enumerate(snap.tensors)
              if t.dtype in _TABLE_DTYPES and 0 < t.numel() <= MAX_ENTRIES and t.layout == torch.strided]
    live: dict[str, list] = {}
    for ti, table in tables:
        values = _entries(table).tolist()
        if not any(v >= _LOW for v in values) or any(0 < v < _LOW or v < 0 for v in values):
            continue                                   # indices, sizes or hashes: not a table of addresses
        device = table.device.type
        own = [t for t in snap.tensors if t.device.type == device]
        found = []
        for k, v in enumerate(values):
            if v == 0:
                continue
            t = _holder(v, own)
            if t is None:
                if device not in live:
                    live[device] = live_tensors(device)
                t = _holder(v, live[device])
            if t is None:
                found = None                           # an entry that lands nowhere: leave the table alone
                break
            found.append((k, t, v - t.data_ptr()))
        if not found:
            continue
        for k, t, offset in found:
            idx = next((j for j, x in enumerate(snap.tensors) if x is t), None)
            if idx is None:
                snap.tensors.append(t)
                own.append(t)
                idx = len(snap.tensors) - 1
            snap.pointers.append({"table": ti, "entry": k, "tensor": idx, "offset": offset})


def paths(pointers: list, arg_paths: dict) -> dict[int, str]:
    """Tensor index -> a name for the tensors found through a table: ``group_a_ptrs[2]`` (its first entry)."""
    out: dict[int, str] = {}
    for p in pointers:
        if p["tensor"] not in arg_paths and p["tensor"] not in out:
            out[p["tensor"]] = f"{arg_paths.get(p['table'], 'tensor%d' % p['table'])}[{p['entry']}]"
    return out


def _write_entries(table, values) -> None:
    """Put int64 ``values`` (flat, host) into ``table`` (int64 or uint64, any device): ``_entries``' inverse."""
    import torch

    with torch.no_grad():
        target = table if table.dtype == torch.int64 else table.view(torch.int64)
        target.copy_(values.reshape(table.shape).to(table.device))


def rewrite(pointers: list, tensors: list) -> None:
    """Point each recorded table entry at the replay's copy of its tensor (same byte offset)."""
    by_table: dict[int, list] = {}
    for p in pointers:
        by_table.setdefault(p["table"], []).append(p)
    for ti, entries in by_table.items():
        table = tensors[ti]
        values = _entries(table).cpu().clone()
        for p in entries:
            values[p["entry"]] = tensors[p["tensor"]].data_ptr() + p["offset"]
        _write_entries(table, values)


def relocate(meta: dict, expected: list, tensors: list, compared: dict) -> None:
    """Entries of the captured outputs that hold an address of a tensor of the launch (a grouped GEMM's or MoE setup
    kernel that writes ``x + indptr * k`` into int64 pointer tables: FlashInfer's compute_sm80_group_gemm_args)
    are the program's addresses: they are moved to the replay's address of the same byte (``tensors``: those the
    replay launches with; the groups' capture-time ``address``), so a correct kernel's tables compare equal
    (helper-97: "3/3 elements of x_ptr outside atol=0"). In place on ``expected`` (the reference, host tensors):
    the launch's own outputs are left as it wrote them (timed launches pay nothing; a kernel reading its table
    back reads its own addresses)."""
    spans = []  # (capture-time start, end, replay-time start) of each group's saved bytes
    for gi, g in enumerate(meta.get("groups") or ()):
        j = next((j for j, spec in enumerate(meta["tensors"]) if spec["group"] == gi), None)
        if g.get("address") is None or j is None or j >= len(tensors):
            continue
        base = tensors[j].data_ptr() - (meta["tensors"][j]["byte_offset"] - g["start"])
        spans.append((g["address"] + g["start"], g["address"] + g["end"], base))
    for i in compared.values() if spans else ():
        ref = expected[i]
        if ref.dtype not in _table_dtypes() or not 0 < ref.numel() <= MAX_ENTRIES:
            continue
        values = _entries(ref).clone()
        moved = False
        for k, v in enumerate(values.tolist()):
            span = next((sp for sp in spans if sp[0] <= v < sp[1]), None) if v >= _LOW else None
            if span is not None:
                values[k] = span[2] + (v - span[0])
                moved = True
        if moved:
            _write_entries(ref, values)
