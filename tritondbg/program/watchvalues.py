"""readwatch.py's integers and bools: what a launch left unwritten in an int32 / int64 output holds the mark as a
value (0x5A5A5A5A...) and a comparison of holes (``out == ref``) holds no NaN, so neither shows where it went. A
call taking them is run again with their marked lanes flipped (``_flipped_call``): a value in Python or a
reduction to one value that changes is a use, an elementwise result, a copy or a reduction along a dimension is
watched at the lanes that changed, and a call that raises on them is told (``_raised``)."""
from __future__ import annotations

from tritondbg.program.watchstate import (_MOVES, _READERS, _by_value, _finding, _hits, _marked_hits, _tell,
                                          _tensors, _watch_lanes, _watched, _WATCH)

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


def _check_values(func, name: str, args, kwargs, result, hits: list) -> bool:
    """A call taking integers that hold the mark, or values computed from holes that hold none (a comparison's
    bools): it is run again with those lanes flipped (``_flipped_call``); a value in Python or a reduction that
    changes with them is a use, an elementwise result or a copy whose lanes change is watched in turn. True where
    the call read values and none of those it took holds the mark (a part of the tensor around its holes)."""
    if _in_place(name):  # written in place: the lanes kept for it no longer say what it holds
        if args and any(e.get("lanes") is not None and t is args[0] for t, _, e in hits):
            _WATCH.pop(_watched(args[0])["storage"], None)
        return
    results = _tensors(result)
    if not results and name not in _READERS:
        return False
    if results and all(_watched(r) is not None for r in results):
        return False  # a view
    if (kwargs and "out" in kwargs) or any(w in name for w in _RANDOM):
        return False  # run again, it would write into the program's tensor / draw from its random stream
    marked = _marked_hits(hits)
    if not marked:
        return True
    t0, mk0, entry0 = next(iter(marked.values()))
    tell = lambda: _tell(entry0, _finding(func, name, t0, mk0, entry0))  # noqa: E731
    if not results:  # a value in Python (item, equal, allclose, bool): it compared or read them (helper-76:
        tell()       # torch.equal(idx, ref) over holes is False with them flipped too)
        return
    flipped = _flipped_call(func, args, kwargs, marked)
    if flipped is _FAILED:
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
    return _rerun(func, args, kwargs, table)


def _rerun(func, args, kwargs, table: dict):
    """``func`` on ``args`` with the tensors of ``table`` ({id: substitute}) swapped in; ``_FAILED`` if it cannot
    run so (nothing is said then)."""
    import torch

    try:
        with torch.no_grad():
            return func(*_swap(args, table), **_swap(kwargs or {}, table))
    except Exception:  # noqa: BLE001
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


def _unwatched_hits(rest: list, hits: list) -> tuple[dict, dict | None]:
    """(``_marked_hits``, the first one's entry) when there are results to watch (``rest``), else ({}, None)."""
    marked = _marked_hits(hits) if rest else {}
    return marked, (next(iter(marked.values()))[2] if marked else None)


def _follow_reduced(func, args, kwargs, results: list, hits: list) -> None:
    """A reduction's non-floating-point results (``argmax(1)``, ``isnan(out).any(1)``): watched at the elements that
    change when the holes are +inf and when they are -inf (the call run twice so)."""
    import torch

    rest = [i for i, r in enumerate(results) if not r.is_floating_point() and _watched(r) is None]
    marked, entry = _unwatched_hits(rest, hits)
    if not marked:
        return
    runs = []
    for fill in (float("inf"), float("-inf")):
        table = {key: torch.where(torch.from_numpy(mk).reshape(t.shape), fill, t.detach())
                 for key, (t, mk, _) in marked.items() if t.is_floating_point()}
        again = _rerun(func, args, kwargs, table)
        if again is _FAILED:
            return
        runs.append(_tensors(again))
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
    marked, entry = _unwatched_hits(rest, hits)
    if not marked:
        return
    for r in rest:
        m = _spread(marked.values(), r.shape, None)
        if m is not None and bool(m.any()):
            _watch_lanes(r, m, entry)
