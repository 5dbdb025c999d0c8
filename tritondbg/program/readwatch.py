"""`tritondbg interpret -- CMD`: the program's own torch code reading what a launch left unwritten.

A kernel whose store mask or grid misses part of its ``torch.empty`` output leaves that part holding
tritondbg's uninitialized-memory mark (NaN; initcheck.py). A later launch that reads it is a finding at its load
(the sanitizer's), and a band left unwritten (a tail, whole rows) a warning at the program's end (checker.py). A
hole of any other shape (every other element: a wrong stride; all of it: a store into the wrong pointer), read by
the program's torch code (its ``assert_close``, a loss, ``print``), was silent: the program saw NaN, or on a GPU
garbage, with nothing to say which launch left it.

Each launch's floating-point arguments that still hold the mark after it are watched here (by storage: a view of
one is watched too), with the launch that last wrote part of them. A torch function mode, pushed at the bottom of
the program's stack when torch is imported, looks at each torch call that takes a watched tensor:

- a call whose tensor results alias its inputs (a view, an in-place op) reads nothing yet;
- a call that moves or copies values (``.cpu()``, ``.clone()``, ``torch.cat``, advanced indexing: ``_MOVES``)
  uses none of them: its results that hold the mark are watched in turn, with the same origin (helper-71:
  ``out.cpu()[valid]`` on a test that masks the holes after the copy);
- an elementwise op (a result as large as its input: ``out - ref``, ``out * 3``, ``isclose``) carries them: its
  floating-point results' NaN is watched in turn ("values computed from"), a comparison's bools are dropped
  (helper-73: ``(out - ref).abs()[valid].max()``, ``torch.isclose(out, ref)[valid].all()`` mask them after);
- a floating-point result that holds no NaN used none of the marked values (``torch.where(valid, out, 0)``,
  ``out.tril()``: a hole left by design and masked by the program);
- a reduction (a smaller result) holding NaN or an integer one (``argmax``), or a value used in Python
  (``item``, ``allclose``, ``equal``, ``bool()``) is a use, and so is a launch whose sanitizer finds it read
  values computed from them (``read_by_launch``): if the watched tensor it took holds
  the mark, it is an ``uninit`` error at the store that wrote the rest (or the kernel's line), naming the torch
  call and the program's line. Told once per watched tensor. Printing, ``.numpy()`` and ``.tolist()`` move
  values out of torch's sight: not told.

A launch's argument that it neither wrote nor stored into, and that held data before it (a cache the program
filled in part, which the launch read), is not watched. Integer outputs are not watched (their mark is a value,
not a NaN that shows where it went). Paused while a launch runs (the interpreter's own torch calls) and while
tritondbg reads tensors.
"""
from __future__ import annotations

import contextlib
import functools

MAX_WATCHED = 64  # tensors watched at once (the oldest dropped first)
# calls that use values of a tensor in Python (their result is no tensor); printing one, or handing it to numpy
# or a list (``out.cpu().numpy()[mask]``), moves the values without using them
_READERS = frozenset({"allclose", "equal", "item", "__bool__", "__float__", "__int__", "__index__"})
# calls that move or copy values (a copy of an output whose holes the program masks afterwards, helper-71:
# ``out.cpu()[valid]``, ``out.clone()[v]``): their results are watched in turn, with the same origin
_MOVES = frozenset({"clone", "cpu", "cuda", "to", "contiguous", "float", "half", "bfloat16", "double", "type",
                    "type_as", "copy_", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "__getitem__",
                    "index_select", "gather", "take", "masked_select", "repeat", "roll", "flip", "reshape",
                    "flatten", "pad", "narrow_copy", "detach", "view", "permute", "transpose", "t", "unsqueeze",
                    "squeeze", "expand", "split", "chunk", "unbind"})

_WATCH: dict[int, dict] = {}  # storage data_ptr -> what left it (below, ``watch``)
_state: dict = {"paused": 0, "tell": None, "mode": None}


def _storage_ptr(t) -> int | None:
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - a tensor without storage (meta, a subclass)
        return None


def watch(t, **left) -> None:
    """After a launch: ``t`` (one of its arguments) still holds the mark; ``left``: launch, index, test, name,
    wrote (elements of ``t`` this launch wrote), stores (the store sites into it). The launch that wrote part of
    it is the one a read names: one that wrote none of it keeps the earlier writer's entry."""
    from tritondbg.interp import initcheck

    if not t.is_floating_point():
        return
    lo = _storage_ptr(t)
    alloc = initcheck._allocation(t.data_ptr()) if lo is not None else None
    if alloc is None:
        return
    old = _WATCH.get(lo)
    if old is not None and old["alloc"] is alloc and not left["wrote"]:
        return
    _WATCH.pop(lo, None)
    _WATCH[lo] = dict(left, alloc=alloc, storage=lo, origin=lo, end=lo + t.untyped_storage().nbytes(),
                      shape=tuple(t.shape), numel=t.numel())  # (origin: the launch's tensor, kept by its copies)
    while len(_WATCH) > MAX_WATCHED:
        _WATCH.pop(next(iter(_WATCH)))


def forget(t) -> None:
    """``t``'s memory holds the mark no longer (a launch wrote the rest), or it was told another way."""
    lo = _storage_ptr(t)
    if lo is not None:
        _WATCH.pop(lo, None)


@contextlib.contextmanager
def paused():
    _state["paused"] += 1
    try:
        yield
    finally:
        _state["paused"] -= 1


def set_teller(tell) -> None:
    """``tell(entry, finding)``: the checker's, which prints the finding and writes it down."""
    _state["tell"] = tell


def install() -> None:
    """Push the mode (for the program's life, at the bottom of its stack: before any mode of its own)."""
    if _state["mode"] is not None:
        return
    mode = _mode_class()()
    mode.__enter__()
    _state["mode"] = mode
    import sys

    cpu = sys.modules.get("tritondbg.program.cpu_device")
    if cpu is not None:  # torch's warnings name the program's line, past this handler too
        cpu._own_warnings_point_at_the_caller(type(mode).__torch_function__.__code__)


@functools.lru_cache(maxsize=None)
def _mode_class():
    from torch.overrides import TorchFunctionMode

    class ReadWatch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            result = func(*args, **kwargs)
            if _WATCH and not _state["paused"] and _state["tell"] is not None:
                _state["paused"] += 1
                try:
                    with _no_modes():  # its own tensor calls go through no mode (the CPU stand-in's below)
                        _check(func, args, kwargs, result)
                except Exception:  # noqa: BLE001 - never break the program's own call
                    pass
                finally:
                    _state["paused"] -= 1
            return result

    return ReadWatch


def _no_modes():
    import torch

    return torch._C.DisableTorchFunction()


def _watched(t) -> dict | None:
    """The watch entry whose memory ``t`` starts in (by data pointer: cheaper than its storage), or None."""
    if not t.is_floating_point():
        return None
    p = t.data_ptr()
    for entry in _WATCH.values():
        if entry["storage"] <= p < entry["end"]:
            return entry
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


def _check(func, args, kwargs, result) -> None:
    import torch

    name = getattr(func, "__name__", "") or ""
    if "empty" in name:  # empty_like, new_empty: what they return is marked anew, not read from the input
        return
    hits = []
    for t in _tensors(args) + (_tensors(kwargs) if kwargs else []):
        entry = _watched(t)
        if entry is not None:
            hits.append((t, entry["storage"], entry))
    if not hits:
        return
    results = _tensors(result)
    if not results and name not in _READERS:
        return  # .shape, .data_ptr(), .stride(): no value read
    if results:
        if all(_watched(r) is not None for r in results):
            return  # a view, an in-place op, .cpu() of a CPU tensor: nothing read yet
        if name in _MOVES:
            _follow(results, hits[0][2])
            return
        if min(r.numel() for r in results) >= max(t.numel() for t, _, _ in hits):
            # elementwise (`out - ref`, `out * 3`, `isclose`): what it computed from the holes may still be masked
            # (helper-73: `(out - ref).abs()[valid].max()`); a float result's NaN is watched in turn, a comparison's
            # bools are not (they hold no mark)
            _follow(results, hits[0][2], computed=True)
            return
        floats = [r for r in results if r.is_floating_point()]
        if floats and len(floats) == len(results) and not any(bool(torch.isnan(r).any()) for r in floats):
            return  # none of the marked values went into the result: a hole masked by the program
    for t, lo, entry in hits:
        if not _live(entry, t):
            _WATCH.pop(lo, None)  # freed, and the memory given out again
            continue
        marked = _marked(t, entry)
        if marked is None or not marked.any():
            continue
        _WATCH.pop(lo, None)
        _state["tell"](entry, _finding(func, name, t, marked, entry))
        return


def _live(entry: dict, t) -> bool:
    """Whether ``entry`` still describes the memory ``t`` lies in: the same allocation (a copy's: the copy alive)."""
    from tritondbg.interp import initcheck

    ref = entry.get("copy")
    if ref is not None:
        return ref() is not None
    return initcheck._allocation(t.data_ptr()) is entry["alloc"]


def _marked(t, entry: dict):
    """Which elements of ``t`` (flat) hold what ``entry`` watches: the mark, or for values computed from it its NaN
    (arithmetic keeps the NaN, not always its payload)."""
    import torch

    from tritondbg.interp import initcheck

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
        if not r.is_floating_point() or _watched(r) is not None:
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


def _call_name(func, name: str) -> str:
    """``torch.isclose``, ``Tensor.sum``, ``torch.nn.functional.softmax``: the call as the program wrote it."""
    qual = getattr(func, "__qualname__", "") or ""
    if "Tensor" in qual.split(".")[0]:
        return f"Tensor.{name}"
    module = getattr(func, "__module__", None) or "torch"
    return f"{module}.{name}" if module.startswith("torch.") and not module.startswith("torch._") else f"torch.{name}"


def read_by_launch(t, reader: str, arg: str):
    """(entry, finding) when ``t``, handed to a launch of ``reader`` that read the mark in it (the sanitizer's
    carried uninit finding), is watched: the launch that left the holes is told there (values torch computed from
    them, then a kernel: helper-73's compute-then-kernel chain blamed the reader alone), else None."""
    entry = _watched(t) if t.is_floating_point() else None
    if entry is None or not _live(entry, t):
        return None
    marked = _marked(t, entry)
    if marked is None or not marked.any():
        return None
    _WATCH.pop(entry["storage"], None)
    return entry, _finding(None, reader, t, marked, entry, call=f"the launch of {reader} (its {arg})")


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
    if entry["wrote"]:
        why = (f"the launch wrote {entry['wrote']} element(s) of {entry['name']} and left these: a store mask too "
               "strict, a stride or offset that skips them, or a grid that does not cover the tensor?")
    elif entry["stores"]:
        why = f"the launch wrote none of {entry['name']}: a store mask that is always false?"
    elif entry.get("elsewhere"):
        (_, line), into = entry["elsewhere"][0]
        why = (f"the launch was given {entry['name']} and stored nothing into it; its store at line {line} wrote "
               f"into {into}: through the wrong pointer?")
    else:
        why = f"the launch was given {entry['name']} and stored nothing into it: a store through the wrong pointer?"
    message = (f"{call}{where} read {int(marked.sum())} of {t.numel()} element(s) of {of} (first at index {index}) "
               f"that no launch wrote; memory from {entry['alloc'][1]}: they hold tritondbg's uninitialized-memory "
               f"mark (NaN) where a GPU gives whatever the memory held; {why}")
    f = {"kind": "uninit", "severity": "error", "tensor": entry["name"], "message": message, "file": None,
         "line": None, "pid": None, "read_by": call, **({"read_at": list(site[:2])} if site else {})}
    if not entry["stores"] and entry.get("elsewhere"):
        f["file"], f["line"] = entry["elsewhere"][0][0]
    return initcheck.at_stores(f, entry["name"], entry["stores"])
