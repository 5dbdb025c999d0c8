"""The watch readwatch.py keeps (``_WATCH``: what each launch left unwritten, its copies and the values computed from
it) and what reads it: which entry a tensor lies in, which of its elements hold what the entry watches, following a
copy or an elementwise result, and the finding told when the program uses them. readwatch.py decides, per torch
call, what a call does with them; watchvalues.py follows those that hold no NaN (integers, bools) by value."""
from __future__ import annotations

import contextlib

MAX_WATCHED = 64  # tensors watched at once (the oldest dropped first)
# calls that use values of a tensor in Python (their result is no tensor), printing one among them (what a program
# prints is its output: helpers 100 and 101 saw a printed NaN row with exit 0); handing it to numpy or a list
# (``out.cpu().numpy()[mask]``) moves the values without using them
_READERS = frozenset({"allclose", "equal", "item", "__bool__", "__float__", "__int__", "__index__", "__repr__",
                      "__str__", "__format__"})
# calls that move or copy values (a copy of an output whose holes the program masks afterwards, helper-71:
# ``out.cpu()[valid]``, ``out.clone()[v]``): their results are watched in turn, with the same origin
_MOVES = frozenset({"clone", "cpu", "cuda", "to", "contiguous", "float", "half", "bfloat16", "double", "type",
                    "type_as", "copy_", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "__getitem__",
                    "index_select", "gather", "take", "masked_select", "repeat", "roll", "flip", "reshape",
                    "flatten", "pad", "narrow_copy", "detach", "view", "permute", "transpose", "t", "unsqueeze",
                    "squeeze", "expand", "split", "chunk", "unbind"})

_WATCH: dict[int, dict] = {}  # storage data_ptr -> what left it (readwatch.watch)
_state: dict = {"paused": 0, "tell": None, "mode": None,
                "clean": {},        # (origin, watch) -> address ranges the program read holding none of the mark
                "escaped": set()}   # (origin, watch) the program handed out of torch's sight (.numpy(), .tolist())


def _storage_ptr(t) -> int | None:
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - a tensor without storage (meta, a subclass)
        return None


@contextlib.contextmanager
def paused():
    _state["paused"] += 1
    try:
        yield
    finally:
        _state["paused"] -= 1


def _no_modes():
    import torch

    return torch._C.DisableTorchFunction()


def _watched(t) -> dict | None:
    """The watch entry whose memory ``t`` starts in (by data pointer: cheaper than its storage), or None. An entry
    of memory given out again (a copy or a computed value freed, a result of the program's next call in its place:
    torch's allocator reuses it at once) is dropped, not returned: it made a fresh result look like a view of the
    watched one, and what the program computed from the holes went unwatched (helper-112: `(out.float() -
    ref).abs().nan_to_num(1e9).max()` over an output with a hole was told in some runs, silent in others)."""
    p = t.data_ptr()
    for lo, entry in list(_WATCH.items()):
        if entry["storage"] <= p < entry["end"]:
            if _live(entry, t):
                return entry
            _WATCH.pop(lo, None)
    return None


def _tensors(value) -> list:
    from torch import Tensor

    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in (_tensors(v) if isinstance(v, (list, tuple, dict)) else
                                           [v] if isinstance(v, Tensor) else ())]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _markable(t) -> bool:
    """Floating-point tensors and the integer dtypes the mark is written in (int32, int64)."""
    import torch

    return t.is_floating_point() or t.dtype in (torch.int32, torch.int64)


def _hits(args, kwargs) -> list:
    hits = []
    for t in _tensors(args) + (_tensors(kwargs) if kwargs else []):
        entry = _watched(t)
        if entry is not None:
            hits.append((t, entry["storage"], entry))
    return hits


def _by_value(entry: dict) -> bool:
    """Entries followed through their values (an integer's mark, the lanes of a comparison), not their NaN."""
    return bool(entry.get("integer")) or entry.get("lanes") is not None


def _live(entry: dict, t) -> bool:
    """Whether ``entry`` still describes the memory ``t`` lies in: the same allocation (a copy's: the copy alive)."""
    from tritondbg.interp import initcheck

    ref = entry.get("copy")
    if ref is not None:
        return ref() is not None or any(a() is not None for a in entry.get("arrays", ()))
    return initcheck._allocation(t.data_ptr()) is entry["alloc"]


def _keep_alive(entry: dict, array) -> None:
    import weakref

    if entry.get("copy") is not None:
        try:
            entry["arrays"] = [*entry.get("arrays", ()), weakref.ref(array)][-4:]
        except TypeError:
            pass


def _marked(t, entry: dict):
    """Which elements of ``t`` (flat) hold what ``entry`` watches: the mark, or for values computed from it its NaN
    (arithmetic keeps the NaN, not always its payload)."""
    import torch

    from tritondbg.interp import initcheck

    lanes = entry.get("lanes")
    if lanes is not None:  # values computed from them that hold no mark: the lanes, kept over their storage
        if t.element_size() != entry["itemsize"] or _storage_ptr(t) != entry["storage"]:
            return None
        return lanes.as_strided(tuple(t.shape), t.stride(), t.storage_offset()).reshape(-1).numpy()
    if entry.get("computed"):
        return torch.isnan(t.detach()).reshape(-1).numpy()
    return initcheck._holding_mark(t.detach().contiguous())


def _follow(results: list, entry: dict, computed: bool = False) -> None:
    """A move's (or, ``computed``, an elementwise op's) floating-point results that hold the mark (its NaN):
    watched as copies of what ``entry`` watches."""
    import weakref

    if computed and not entry.get("computed"):
        entry = dict(entry, computed=True)
    for r in results:
        if not _markable(r) or (computed and not r.is_floating_point()) or _watched(r) is not None:
            continue
        marked = _marked(r, entry)
        if marked is None or not marked.any():
            continue
        try:
            ref = weakref.ref(r)
        except TypeError:
            continue
        lo = _storage_ptr(r)
        if lo is None:
            continue
        _WATCH[lo] = dict(entry, storage=lo, end=lo + r.untyped_storage().nbytes(), copy=ref)
        while len(_WATCH) > MAX_WATCHED:
            _WATCH.pop(next(iter(_WATCH)))


def _tell(entry: dict, finding: dict) -> None:
    _drop(entry)
    _state["tell"](entry, finding)


def _drop(entry: dict) -> None:
    """Told once per launch's tensor: its copies and the values computed from it are watched no more."""
    for lo in [lo for lo, e in _WATCH.items() if e["origin"] == entry["origin"]]:
        _WATCH.pop(lo, None)


def _marked_hits(hits: list) -> dict:
    """{id(tensor): (tensor, its marked lanes flat, entry)} of the hits that hold any."""
    out = {}
    for t, _, entry in hits:  # (live entries: _watched dropped those of memory given out again)
        mk = _marked(t, entry)
        if mk is not None and mk.any():
            out[id(t)] = (t, mk, entry)
    return out


def _watch_lanes(r, lanes, entry: dict, computed: bool = True) -> None:
    """Watch ``r`` (a result computed from what ``entry`` watches) at ``lanes`` (a bool tensor of its shape),
    kept over its storage so that views of it find theirs."""
    import weakref

    import torch

    lo = _storage_ptr(r)
    if lo is None or not r.numel() or 0 in r.stride() or r.device.type != "cpu":
        return
    try:
        ref = weakref.ref(r)
    except TypeError:
        return
    size = r.untyped_storage().nbytes() // r.element_size()
    over = torch.zeros(size, dtype=torch.bool)
    over.as_strided(tuple(r.shape), r.stride(), r.storage_offset()).copy_(lanes)
    _WATCH[lo] = dict(entry, storage=lo, end=lo + r.untyped_storage().nbytes(), copy=ref, computed=computed,
                      lanes=over, itemsize=r.element_size())
    while len(_WATCH) > MAX_WATCHED:
        _WATCH.pop(next(iter(_WATCH)))


def _call_name(func, name: str) -> str:
    """``torch.isclose``, ``Tensor.sum``, ``torch.nn.functional.softmax``: the call as the program wrote it."""
    qual = getattr(func, "__qualname__", "") or ""
    if "Tensor" in qual.split(".")[0]:
        return f"Tensor.{name}"
    module = getattr(func, "__module__", None) or "torch"
    return f"{module}.{name}" if module.startswith("torch.") and not module.startswith("torch._") else f"torch.{name}"


def _finding(func, name: str, t, marked, entry: dict, call: str | None = None) -> dict:
    import numpy as np

    from tritondbg.interp import initcheck
    from tritondbg.interp.frames import short_path

    first = int(np.flatnonzero(marked)[0])
    index = tuple(int(i) for i in np.unravel_index(first, tuple(t.shape))) if t.dim() else ()
    site = initcheck.caller_site()
    where = f" at {short_path(site[0])}:{site[1]} ({site[2]})" if site else ""
    call = call or _call_name(func, name)
    of = (f"values computed from {entry['name']}" if entry.get("computed") else
          f"a copy {tuple(t.shape)} of {entry['name']}" if entry.get("copy") is not None else entry["name"]
          if tuple(t.shape) == entry["shape"] else f"a view {tuple(t.shape)} of {entry['name']}")
    grid = getattr(entry["launch"], "empty_grid", None)
    if grid is not None:  # (helpers 106, 107: told as a store through the wrong pointer)
        why = (f"the launch's grid {grid} has no program (a dimension of 0), so nothing ran: a grid computed by "
               "floor division, N // BLOCK, where triton.cdiv(N, BLOCK) was meant?")
    elif entry["stores"] and entry.get("causes"):  # it stored the mark it read outside a tensor (helper-81)
        kind, line, through = entry["causes"][0]
        why = (f"the launch's store at line {entry['stores'][0][1]} wrote into {entry['name']}, but the values it "
               f"stored carry the mark: they were computed from what its load at line {line} read outside "
               f"{through} (the {kind} finding of this launch), memory nothing wrote; a follow-on of that finding")
    elif entry["wrote"]:
        why = (f"the launch wrote {entry['wrote']} element(s) of {entry['name']} and left these: a store mask too "
               "strict, a stride or offset that skips them, or a grid that does not cover the tensor?")
    elif entry["stores"]:  # its stores reached the tensor, yet every element holds the mark
        why = (f"the launch's store at line {entry['stores'][0][1]} reached {entry['name']}, yet its elements still "
               "hold the mark: the values stored were computed from memory nothing wrote (read out of bounds or "
               "through a wrong pointer?), or the store's mask is always false for them")
    elif entry.get("forgotten"):  # (helper-84: a layer norm's Y, reported at its Mean store as a wrong pointer)
        why = (f"the launch was given {entry['name']} and stored nothing into it: {entry['launch'].name} has no "
               f"store (nor atomic) through {entry['name']} in its code: a forgotten tl.store?")
    elif entry.get("masked_off"):  # (helper-119: gemlite's tail rows never stored, M = 5 under one block)
        why = (f"the launch was given {entry['name']} and stored nothing into it: its store or atomic at line "
               f"{entry['masked_off'][0][1]} through it ran with every lane masked off, in every program: a mask "
               "false for every element of this shape (one that keeps whole blocks only, a bound off by a block?)")
    elif entry.get("elsewhere"):
        (_, line), into = entry["elsewhere"][0]
        why = (f"the launch was given {entry['name']} and stored nothing into it; its store at line {line} wrote "
               f"into {into}: through the wrong pointer?")
    else:
        why = f"the launch was given {entry['name']} and stored nothing into it: a store through the wrong pointer?"
    held = "that no launch wrote" if entry["wrote"] or not entry["stores"] else \
        "that hold what the launch stored there"  # (stored, yet still the mark: below)
    message = (f"{call}{where} read {int(marked.sum())} of {t.numel()} element(s) of {of} (first at index {index}) "
               f"{held}; memory from {entry['alloc'][1]}: they hold tritondbg's uninitialized-memory "
               f"mark ({entry.get('mark', 'NaN')}) where a GPU gives whatever the memory held; {why}")
    f = {"kind": "uninit", "severity": "error", "tensor": entry["name"], "message": message, "file": None,
         "line": None, "pid": None, "read_by": call, **({"read_at": list(site[:2])} if site else {})}
    if not entry["stores"] and entry.get("masked_off"):
        f["file"], f["line"] = entry["masked_off"][0]
    elif not entry["stores"] and entry.get("elsewhere") and not entry.get("forgotten"):
        f["file"], f["line"] = entry["elsewhere"][0][0]
    if entry["stores"] and entry.get("causes"):
        f["severity"] = "warning"
        f["follows"] = list(entry["causes"][0])
    return initcheck.at_stores(f, entry["name"], entry["stores"])
