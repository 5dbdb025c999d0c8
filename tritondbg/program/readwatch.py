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
- a call that moves or copies values (``.cpu()``, ``.clone()``, ``torch.cat``, advanced indexing: ``_MOVES``;
  ``buf[0] = out``) uses none of them: its results that hold the mark are watched in turn, with the same origin
  (helper-71: ``out.cpu()[valid]`` on a test that masks the holes after the copy);
- an elementwise op (a result as large as its input: ``out - ref``, ``out * 3``, ``isclose``) carries them: its
  floating-point results' NaN is watched in turn ("values computed from"; helper-73: ``(out - ref).abs()[valid]
  .max()`` masks them after), and a comparison's bools at the lanes the holes reach (``out == ref``: below);
- a floating-point result that holds no NaN used none of the marked values (``torch.where(valid, out, 0)``,
  ``out.tril()``: a hole left by design and masked by the program);
- a reduction (a smaller result) holding NaN or an integer one (``argmax``), a value used in Python
  (``item``, ``allclose``, ``equal``, ``bool()``), or printing (``__repr__``, ``__format__``: a program's printed
  result is its output; helpers 100 and 101) is a use, and so is a launch whose sanitizer finds it read
  values computed from them (``read_by_launch``): if the watched tensor it took holds
  the mark, it is an ``uninit`` error at the store that wrote the rest (or the kernel's line), naming the torch
  call and the program's line. Told once per watched tensor. ``.numpy()`` and ``.tolist()`` move values out of
  torch's sight: not told; numpy's comparisons (``np.testing.assert_allclose``) of an array over
  watched memory are a use (``_patch_numpy``).

Integer outputs (int32 / int64, whose mark is the value 0x5A5A5A5A...) and the bools of a comparison hold no NaN
to show where they went: they are followed by value (``_check_values``). A call taking them is run a second time
with their marked lanes flipped (a bool negated, a number ``-v - 1``): a value in Python or a reduction that
changes is a use (``(out == ref).all()``, ``idx.sum()``, ``torch.equal(idx, ref)``), an elementwise result or a
copy is watched at the lanes that changed (``idx[valid]``, ``torch.where(valid, idx, 0)``, ``isclose(out, ref) |
~valid`` change none), and a call that raises on them is told (``x[idx]``: index 1515870810 out of range). Calls
with ``out=``, random draws and in-place writes are not run again (a bool written in place is no longer watched).

A launch's argument that it neither wrote nor stored into, and that held data before it (a cache the program
filled in part, which the launch read), is not watched. Paused while a launch runs (the interpreter's own torch
calls) and while tritondbg reads tensors. The watch itself and its findings: watchstate.py; integers and bools
followed by value: watchvalues.py.
"""
from __future__ import annotations

import functools
import itertools

from tritondbg.program.watchstate import (MAX_WATCHED, _MOVES, _READERS, _WATCH, _by_value, _drop, _finding,
                                          _follow, _hits, _keep_alive, _markable, _marked, _no_modes, _state,
                                          _storage_ptr, _tell, _tensors, _watched, paused)
from tritondbg.program.watchvalues import _NAN_AWARE, _check_values, _follow_lanes, _follow_reduced, _raised

_WATCHES = itertools.count(1)

__all__ = ["watch", "forget", "paused", "set_teller", "install", "read_by_launch", "read_around", "watch_of",
           "_storage_ptr"]


def watch(t, **left) -> None:
    """After a launch: ``t`` (one of its arguments) still holds the mark; ``left``: launch, index, test, name,
    wrote (elements of ``t`` this launch wrote), stores (the store sites into it). The launch that wrote part of
    it is the one a read names: one that wrote none of it keeps the earlier writer's entry."""
    from tritondbg.interp import initcheck

    if not _markable(t):
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
                      watch=next(_WATCHES),  # (which launch's marks: what the program read around is per launch)
                      shape=tuple(t.shape), numel=t.numel(),  # (origin: the launch's tensor, kept by its copies)
                      **({} if t.is_floating_point() else {"mark": f"0x{initcheck.INT_MARK[t.element_size()]:X}",
                                                            "integer": True}))
    while len(_WATCH) > MAX_WATCHED:
        _WATCH.pop(next(iter(_WATCH)))


def forget(t) -> None:
    """``t``'s memory holds the mark no longer (a launch wrote the rest), or it was told another way."""
    lo = _storage_ptr(t)
    if lo is not None:
        _WATCH.pop(lo, None)


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
    from tritondbg.program import cpu_device, reentry

    reentry.add(mode, type(mode), _gradients_out)  # (a custom Function's backward, a custom op's kernel: no mode)
    if cpu_device._state["mode"] is not None:  # the CPU stand-in's: torch's warnings name the program's line,
        cpu_device._own_warnings_point_at_the_caller(type(mode).__torch_function__.__code__)  # past this one too
    _patch_numpy()


def _gradients_out(node, grads) -> None:
    """The gradients a custom Function's backward returned go on into the autograd engine (``.grad``, the next
    backward) out of torch functions' sight: one computed from holes is a use there."""
    if not _WATCH or _state["paused"] or _state["tell"] is None:
        return
    name = getattr(getattr(node, "_forward_cls", None), "__name__", type(node).__name__)
    with paused(), _no_modes():
        for t in _tensors(grads if isinstance(grads, (tuple, list)) else (grads,)):
            entry = _watched(t)  # (a live entry or None)
            if entry is None:
                continue
            marked = _marked(t, entry)
            if marked is not None and marked.any():
                _tell(entry, _finding(None, "backward", t, marked, entry, call=f"the gradient {name}.backward returned"))
                return


# numpy's comparisons that give a value in Python: a test comparing ``out.cpu().numpy()`` with its reference
# reads the tensor's memory without a torch call
_NUMPY_READERS = {"numpy.testing": ("assert_allclose", "assert_array_equal", "assert_array_almost_equal",
                                    "assert_equal", "assert_almost_equal", "assert_array_less"),
                  "numpy": ("allclose", "array_equal", "array_equiv")}


def _patch_numpy() -> None:
    import importlib

    for module, names in _NUMPY_READERS.items():
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        for name in names:
            fn = getattr(mod, name, None)
            if fn is not None and not getattr(fn, "_tdbg_readwatch", False):
                setattr(mod, name, _numpy_reader(fn, f"{module}.{name}"))


def _numpy_reader(fn, call: str):
    @functools.wraps(fn)
    def reader(*args, **kwargs):
        if _WATCH and not _state["paused"] and _state["tell"] is not None:
            _state["paused"] += 1
            try:
                with _no_modes():
                    _numpy_read(call, list(args) + list(kwargs.values()))
            except Exception:  # noqa: BLE001 - never break the program's own call
                pass
            finally:
                _state["paused"] -= 1
        return fn(*args, **kwargs)

    reader._tdbg_readwatch = True
    return reader


def _numpy_read(call: str, values: list) -> None:
    """Arrays over a watched tensor's memory (``out.cpu().numpy()``) handed to a numpy comparison: a use."""
    import numpy as np
    import torch

    for a in values:
        if not isinstance(a, np.ndarray) or not a.size or a.dtype.kind not in "fiu":
            continue
        try:
            t = torch.from_numpy(a)
        except (TypeError, ValueError):  # (a dtype torch has not)
            continue
        (hit,) = _hits([t], None) or [None]
        if hit is None:
            continue
        marked = _marked(t, hit[2])
        if marked is not None and marked.any():
            _tell(hit[2], _finding(None, call, t, marked, hit[2], call=call))
            return


@functools.lru_cache(maxsize=None)
def _mode_class():
    from torch.overrides import TorchFunctionMode

    class ReadWatch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            try:
                result = func(*args, **kwargs)
            except Exception as exc:
                if _WATCH and not _state["paused"] and _state["tell"] is not None:
                    _state["paused"] += 1
                    try:
                        with _no_modes():
                            _raised(func, args, kwargs, exc)
                    except Exception:  # noqa: BLE001 - the program's own error is the one it gets
                        pass
                    finally:
                        _state["paused"] -= 1
                raise
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


def _check(func, args, kwargs, result) -> None:
    import torch

    name = getattr(func, "__name__", "") or ""
    if "empty" in name:  # empty_like, new_empty: what they return is marked anew, not read from the input
        return
    hits = _hits(args, kwargs)
    if name in ("numpy", "__array__", "tolist") and hits:  # its values go out of torch's sight: a band in what
        # went out is told at the end, whatever was read around it; a part holding none (`out[:n].tolist()` of a
        # capacity buffer, helper-129) is a read around the band
        marked = [h for h in hits if _holds_mark(h)]
        _state["escaped"].update(_key(h[2]) for h in marked)
        _read_around([h for h in hits if not _holds_mark(h)])
    if name in ("numpy", "__array__") and hits:  # the array shares the memory: it keeps a copy's watch alive
        _keep_alive(hits[0][2], result)
        return
    if name == "__setitem__" and len(args) >= 3:  # `buf[0] = out`: buf holds a copy of the mark now
        src = [e for t, _, e in hits if t is args[2] and e.get("lanes") is None and not e.get("computed")]
        if src and isinstance(args[0], torch.Tensor) and _watched(args[0]) is None:
            _follow([args[0]], src[0])
    values = [h for h in hits if _by_value(h[2])]
    if values:  # integers holding the mark, bools computed from it: followed by their values (_check_values)
        if _check_values(func, name, args, kwargs, result, values):
            _read_around(values)  # (a read of a part holding none: `idx[:n].sum()`, helper-129)
        hits = [h for h in hits if not _by_value(h[2])]
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
            _read_around([h for h in hits if not _holds_mark(h)])  # (`out[:n].float()`, helper-129)
            return
        if min(r.numel() for r in results) >= max(t.numel() for t, _, _ in hits):
            # elementwise (`out - ref`, `out * 3`, `isclose`): what it computed from the holes may still be masked
            # (helper-73: `(out - ref).abs()[valid].max()`); a float result's NaN is watched in turn, a comparison's
            # bools (`out == ref`) and an integer cast at the lanes the holes reach, as is what `nan_to_num`
            # made of the NaN (on a GPU the holes hold whatever the memory held, no NaN to replace)
            _follow(results, hits[0][2], computed=True)
            _follow_lanes(name, results, hits, floats=name in _NAN_AWARE)
            _read_around([h for h in hits if not _holds_mark(h)])
            return
        floats = [r for r in results if r.is_floating_point()]
        if floats and len(floats) == len(results) and not any(bool(torch.isnan(r).any()) for r in floats) and \
                name not in _NAN_AWARE:
            _read_around(hits)
            return  # none of the marked values went into the result: a hole masked by the program
        if max(r.numel() for r in results) > 1:
            # a reduction along a dimension (`out.sum(1)`, `out @ w`, `out.argmax(1)`): its elements computed from
            # the holes are watched in turn, told where used; a program that keeps only the rows it wrote
            # (helper-76: `out.sum(1)[:R]` over an over-allocated buffer) uses none of them
            _follow(results, hits[0][2], computed=True)
            _follow_reduced(func, args, kwargs, results, hits)
            return
    for t, lo, entry in hits:  # (live entries: _watched dropped those of memory given out again)
        marked = _marked(t, entry)
        if marked is None or not marked.any():
            continue
        _tell(entry, _finding(func, name, t, marked, entry))
        return
    _read_around(hits)  # (a value read from a part that holds none: `out[:n].sum()`)


def _key(entry: dict) -> tuple:
    return entry["origin"], entry.get("watch")


def _span(t) -> tuple[int, int]:
    """The addresses ``t``'s elements lie in: [first, past its last)."""
    lo = t.data_ptr()
    last = sum((n - 1) * st for n, st in zip(t.shape, t.stride()) if n > 0 and st > 0)
    return lo, lo + (last + 1) * t.element_size()


def _read_around(hits: list) -> None:
    """The program read the watched tensors ``hits`` and used none of the marked values: it keeps what was
    written and leaves the rest (helper-120: attorch's losses fill cdiv(n, BLOCK) of cdiv(n, 32) partial sums and
    read back `out[:cdiv(n, BLOCK)].sum()`); the band the launch left in the tensor read (not in another view of
    the same memory, nor one a later launch left) is not told at the program's end, unless the program hands the
    tensor out of torch's sight."""
    for t, _, entry in hits:
        if not entry.get("computed") and entry.get("lanes") is None and entry.get("copy") is None:
            spans = _state["clean"].setdefault(_key(entry), [])
            if len(spans) < 16:
                spans.append(_span(t))


def _holds_mark(hit) -> bool:
    marked = _marked(hit[0], hit[2])
    return marked is None or bool(marked.any())


def watch_of(t):
    """Which launch's marks ``t``'s memory is watched for now (None: not watched)."""
    entry = _WATCH.get(_storage_ptr(t))
    return None if entry is None else _key(entry)


def read_around(t, key) -> bool:
    """Whether the program was seen reading ``t`` around the marks of the launch ``key`` (``watch_of`` then), never
    into them, and never handed it out of torch's sight (``.numpy()``, ``.tolist()``)."""
    if key is None or key in _state["escaped"]:
        return False
    a, b = _span(t)
    return any(x < b and a < y for x, y in _state["clean"].get(key, ()))


def read_by_launch(t, reader: str, arg: str):
    """(entry, finding) when ``t``, handed to a launch of ``reader`` that read the mark in it (the sanitizer's
    carried uninit finding), is watched: the launch that left the holes is told there (values torch computed from
    them, then a kernel: helper-73's compute-then-kernel chain blamed the reader alone), else None."""
    entry = _watched(t)
    if entry is None:
        return None
    marked = _marked(t, entry)
    if marked is None or not marked.any():
        return None
    _drop(entry)
    return entry, _finding(None, reader, t, marked, entry, call=f"the launch of {reader} (its {arg})")
