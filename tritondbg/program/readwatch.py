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
- a reduction (a smaller result) holding NaN or an integer one (``argmax``), or a value used in Python
  (``item``, ``allclose``, ``equal``, ``bool()``) is a use, and so is a launch whose sanitizer finds it read
  values computed from them (``read_by_launch``): if the watched tensor it took holds
  the mark, it is an ``uninit`` error at the store that wrote the rest (or the kernel's line), naming the torch
  call and the program's line. Told once per watched tensor. Printing, ``.numpy()`` and ``.tolist()`` move
  values out of torch's sight: not told; numpy's comparisons (``np.testing.assert_allclose``) of an array over
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
calls) and while tritondbg reads tensors.
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
    from tritondbg.program import cpu_device

    cpu_device._in_backward(mode, type(mode), _gradients_out)  # (a custom Function's backward runs with no mode
    # on the stack)
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
            entry = _watched(t)
            if entry is None or not _live(entry, t):
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
        if hit is None or not _live(hit[2], t):
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


def _no_modes():
    import torch

    return torch._C.DisableTorchFunction()


def _watched(t) -> dict | None:
    """The watch entry whose memory ``t`` starts in (by data pointer: cheaper than its storage), or None."""
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
    hits = _hits(args, kwargs)
    if name in ("numpy", "__array__") and hits:  # the array shares the memory: it keeps a copy's watch alive
        _keep_alive(hits[0][2], result)
        return
    if name == "__setitem__" and len(args) >= 3:  # `buf[0] = out`: buf holds a copy of the mark now
        src = [e for t, _, e in hits if t is args[2] and e.get("lanes") is None and not e.get("computed")]
        if src and isinstance(args[0], torch.Tensor) and _watched(args[0]) is None:
            _follow([args[0]], src[0])
    values = [h for h in hits if _by_value(h[2])]
    if values:  # integers holding the mark, bools computed from it: followed by their values (_check_values)
        _check_values(func, name, args, kwargs, result, values)
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
            return
        if min(r.numel() for r in results) >= max(t.numel() for t, _, _ in hits):
            # elementwise (`out - ref`, `out * 3`, `isclose`): what it computed from the holes may still be masked
            # (helper-73: `(out - ref).abs()[valid].max()`); a float result's NaN is watched in turn, a comparison's
            # bools (`out == ref`) and an integer cast at the lanes the holes reach, as is what `nan_to_num`
            # made of the NaN (on a GPU the holes hold whatever the memory held, no NaN to replace)
            _follow(results, hits[0][2], computed=True)
            _follow_lanes(name, results, hits, floats=name in _NAN_AWARE)
            return
        floats = [r for r in results if r.is_floating_point()]
        if floats and len(floats) == len(results) and not any(bool(torch.isnan(r).any()) for r in floats) and \
                name not in _NAN_AWARE:
            return  # none of the marked values went into the result: a hole masked by the program
        if max(r.numel() for r in results) > 1:
            # a reduction along a dimension (`out.sum(1)`, `out @ w`, `out.argmax(1)`): its elements computed from
            # the holes are watched in turn, told where used; a program that keeps only the rows it wrote
            # (helper-76: `out.sum(1)[:R]` over an over-allocated buffer) uses none of them
            _follow(results, hits[0][2], computed=True)
            _follow_reduced(func, args, kwargs, results, hits)
            return
    for t, lo, entry in hits:
        if not _live(entry, t):
            _WATCH.pop(lo, None)  # freed, and the memory given out again
            continue
        marked = _marked(t, entry)
        if marked is None or not marked.any():
            continue
        _tell(entry, _finding(func, name, t, marked, entry))
        return


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


# elementwise calls whose result at a lane depends on the operands' values there, whatever they are (a replay with
# other values can tie: `idx == 5` is False for the mark and for its flip)
_COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
                          "__ge__", "isclose", "isin", "isnan", "isfinite", "isinf", "isneginf", "isposinf",
                          "greater", "less", "greater_equal", "less_equal", "not_equal", "logical_not",
                          "__invert__", "bitwise_not"})
_FAILED = object()
# calls that treat NaN as no value: what they make of the holes is a use of them (a GPU has garbage there, no NaN)
_NAN_AWARE = frozenset({"nan_to_num", "nan_to_num_", "nansum", "nanmean", "nanmedian", "nanquantile", "fmax",
                        "fmin"})
_RANDOM = ("rand", "multinomial", "bernoulli", "normal", "poisson", "dropout", "exponential", "geometric",
           "cauchy", "shuffle", "perm")


def _in_place(name: str) -> bool:
    return (name.endswith("_") and not name.endswith("__")) or name == "__setitem__" or \
        (name.startswith("__i") and name.endswith("__") and name not in ("__index__", "__int__", "__invert__"))


def _check_values(func, name: str, args, kwargs, result, hits: list) -> None:
    """A call taking integers that hold the mark, or values computed from holes that hold none (a comparison's
    bools): it is run again with those lanes flipped (``_flipped_call``); a value in Python or a reduction that
    changes with them is a use, an elementwise result or a copy whose lanes change is watched in turn."""
    if _in_place(name):  # written in place: the lanes kept for it no longer say what it holds
        if args and any(e.get("lanes") is not None and t is args[0] for t, _, e in hits):
            _WATCH.pop(_watched(args[0])["storage"], None)
        return
    results = _tensors(result)
    if not results and name not in _READERS:
        return
    if results and all(_watched(r) is not None for r in results):
        return  # a view
    if (kwargs and "out" in kwargs) or any(w in name for w in _RANDOM):
        return  # run again, it would write into the program's tensor / draw from its random stream
    marked = _marked_hits(hits)
    if not marked:
        return
    flipped = _flipped_call(func, args, kwargs, marked)
    if flipped is _FAILED:
        return
    t0, mk0, entry0 = next(iter(marked.values()))
    tell = lambda: _tell(entry0, _finding(func, name, t0, mk0, entry0))  # noqa: E731
    if not results:  # a value in Python (item, equal, allclose, bool): it compared or read them (helper-76:
        tell()       # torch.equal(idx, ref) over holes is False with them flipped too)
        return
    again = _tensors(flipped)
    if len(again) != len(results) or any(a.shape != b.shape or a.dtype != b.dtype for a, b in zip(results, again)):
        tell()  # the result's shape follows them: a mask or an index made of them
        return
    lanes = [_ne(a, b) for a, b in zip(results, again)]
    if name not in _MOVES and max(r.numel() for r in results) < max(t.numel() for t, _, _ in marked.values()):
        if max(r.numel() for r in results) > 1:  # along a dimension (`(idx == ref).all(1)`): its elements that
            for r, m in zip(results, lanes):      # changed watched in turn
                if bool(m.any()):
                    _watch_lanes(r, m, entry0)
        elif any(bool(m.any()) for m in lanes):  # a reduction over them
            tell()
        return
    for r, m in zip(results, lanes):
        if name in _COMPARISONS:
            m = _spread(marked.values(), r.shape, m)
        if bool(m.any()):
            _watch_lanes(r, m, entry0, computed=name not in _MOVES or bool(entry0.get("computed")))


def _raised(func, args, kwargs, exc) -> None:
    """A call taking integers that hold the mark raised (an index out of range: the mark is 0x5A5A5A5A): told."""
    name = getattr(func, "__name__", "") or ""
    marked = _marked_hits([h for h in _hits(args, kwargs) if _by_value(h[2])])
    if not marked:
        return
    t, mk, entry = next(iter(marked.values()))
    f = _finding(func, name, t, mk, entry)
    f["message"] += f" (the call raised {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''})"
    _tell(entry, f)


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
    for t, lo, entry in hits:
        if not _live(entry, t):
            _WATCH.pop(lo, None)
            continue
        mk = _marked(t, entry)
        if mk is not None and mk.any():
            out[id(t)] = (t, mk, entry)
    return out


def _flipped_call(func, args, kwargs, marked: dict):
    """``func`` again, each marked lane of its watched tensors flipped (a bool negated, a number ``-v - 1``: the
    mark 0x5A5A5A5A becomes ~0x5A5A5A5A); ``_FAILED`` if it cannot run so."""
    import torch

    table = {}
    with torch.no_grad():
        for key, (t, mk, _) in marked.items():
            m = torch.from_numpy(mk).reshape(t.shape)
            v = t.detach()
            table[key] = torch.where(m, ~v, v) if v.dtype == torch.bool else torch.where(m, -v - 1, v)
        try:
            return func(*_swap(args, table), **_swap(kwargs or {}, table))
        except Exception:  # noqa: BLE001 - a call that cannot take them so: nothing said
            return _FAILED


def _swap(value, table: dict):
    from torch import Tensor

    if isinstance(value, Tensor):
        return table.get(id(value), value)
    if type(value) in (list, tuple):
        return type(value)(_swap(v, table) for v in value)
    if isinstance(value, dict):
        return {k: _swap(v, table) for k, v in value.items()}
    return value


def _ne(a, b):
    """Where two results differ (NaN equal to NaN)."""
    import torch

    a, b = a.detach(), b.detach()
    if a.is_floating_point() or a.is_complex():
        return (a != b) & ~(torch.isnan(a) & torch.isnan(b))
    return a != b


def _differs(a, b) -> bool:
    from torch import Tensor

    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return not (isinstance(a, Tensor) and isinstance(b, Tensor) and a.shape == b.shape and
                    not bool(_ne(a, b).any()))
    try:
        return bool(a != b) and not (a != a and b != b)  # (NaN in both: no difference)
    except Exception:  # noqa: BLE001
        return False


def _spread(marked, shape, default):
    """The lanes of a result of ``shape`` that the marked lanes of its (broadcast) operands reach."""
    import torch

    out = None
    for t, mk, _ in marked:
        try:
            m = torch.broadcast_to(torch.from_numpy(mk).reshape(t.shape), shape)
        except RuntimeError:
            return default
        out = m if out is None else out | m
    return default if out is None else out


def _follow_reduced(func, args, kwargs, results: list, hits: list) -> None:
    """A reduction's non-floating-point results (``argmax(1)``, ``isnan(out).any(1)``): watched at the elements that
    change when the holes are +inf and when they are -inf (the call run twice so)."""
    import torch

    rest = [i for i, r in enumerate(results) if not r.is_floating_point() and _watched(r) is None]
    if not rest:
        return
    marked = _marked_hits(hits)
    if not marked:
        return
    entry = next(iter(marked.values()))[2]
    runs = []
    for fill in (float("inf"), float("-inf")):
        table = {key: torch.where(torch.from_numpy(mk).reshape(t.shape), fill, t.detach())
                 for key, (t, mk, _) in marked.items() if t.is_floating_point()}
        try:
            with torch.no_grad():
                runs.append(_tensors(func(*_swap(args, table), **_swap(kwargs or {}, table))))
        except Exception:  # noqa: BLE001
            return
    for i in rest:
        a, b = runs[0][i], runs[1][i]
        if a.shape == results[i].shape and b.shape == a.shape:
            lanes = _ne(a, b)
            if bool(lanes.any()):
                _watch_lanes(results[i], lanes, entry)


def _follow_lanes(name: str, results: list, hits: list, floats: bool = False) -> None:
    """An elementwise op's non-floating-point results computed from NaN-watched values (``out == ref``,
    ``isnan(out)``, ``out.long()``; ``floats``: its floating-point ones too, ``nan_to_num(out)``): their lanes
    reached by the holes, watched by value."""
    rest = [r for r in results if (floats or not r.is_floating_point()) and r.dim() and _watched(r) is None]
    if not rest:
        return
    marked = _marked_hits(hits)
    if not marked:
        return
    entry = next(iter(marked.values()))[2]
    for r in rest:
        m = _spread(marked.values(), r.shape, None)
        if m is not None and bool(m.any()):
            _watch_lanes(r, m, entry)


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


def read_by_launch(t, reader: str, arg: str):
    """(entry, finding) when ``t``, handed to a launch of ``reader`` that read the mark in it (the sanitizer's
    carried uninit finding), is watched: the launch that left the holes is told there (values torch computed from
    them, then a kernel: helper-73's compute-then-kernel chain blamed the reader alone), else None."""
    entry = _watched(t)
    if entry is None or not _live(entry, t):
        return None
    marked = _marked(t, entry)
    if marked is None or not marked.any():
        return None
    _drop(entry)
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
               f"mark ({entry.get('mark', 'NaN')}) where a GPU gives whatever the memory held; {why}")
    f = {"kind": "uninit", "severity": "error", "tensor": entry["name"], "message": message, "file": None,
         "line": None, "pid": None, "read_by": call, **({"read_at": list(site[:2])} if site else {})}
    if not entry["stores"] and entry.get("elsewhere"):
        f["file"], f["line"] = entry["elsewhere"][0][0]
    return initcheck.at_stores(f, entry["name"], entry["stores"])
