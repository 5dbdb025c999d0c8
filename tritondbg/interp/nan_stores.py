"""Program mode (``tritondbg interpret -- CMD``): a NaN an op of the kernel made from finite inputs and a store wrote.

A program has no reference, so the ``nan_inf`` error of a scenario (an output NaN where the reference is finite)
does not apply. An op that makes NaN from finite inputs needs none, though: the softmax without its max
subtraction (``exp`` overflows to Inf, then ``inf / inf``) wrote NaN into its output and the run said
"0 finding(s)". Each NaN lane carries the event of the op that made it (nan_origin.py: a NaN made from an
earlier op's Inf keeps that op, the overflow); a store of NaN lanes whose event made its NaN/Inf from finite inputs
is recorded here (``record``), and the launch's finish turns each such event into a ``nan_inf`` warning at the
op's line and pid (``entries``): a warning, since a program may mean it (torch's own ``log(-1)`` is NaN).

Also told: a NaN an op made of infinities in real lanes (``-inf - -inf`` where a ``tl.where`` set -inf: an online
softmax whose first block was all masked), with its own sentence. Not told: a NaN the inputs already held (loaded
from memory: no event), one made in padding lanes (``-inf - -inf`` of a row a load filled with ``other=-inf``:
padding makes no event), an Inf stored as an Inf
(a ``-inf`` may be meant), NaN lanes a ``tl.where`` dropped or a store's mask kept out. The cost is that of a
store whose value holds NaN/Inf lanes with an origin: the origins are tracked in program mode anyway.
"""
from __future__ import annotations

import numpy as np

from tritondbg.interp import nan_origin


def record(san, ptrs, value, live, site) -> None:
    """A store of ``value`` (its lanes ``live``, None for all) at ``site``: the NaN lanes whose event made its
    NaN/Inf from finite inputs, counted per event, with the first store's line, tensor and element."""
    from tritondbg.interp import shadow, shadow_values

    shape = ptrs.data.shape
    nf = shadow_values._nonfinite(value)
    if nf is None:
        return
    ids = nan_origin._bcast(nan_origin.origin_of(value), shape)
    nan = nan_origin._bcast(nf[0], shape)
    if ids is None or nan is None:
        return
    sel = nan & (ids > 0)
    if live is not None:
        sel = sel & np.broadcast_to(np.asarray(live, dtype=bool), shape)
    if not sel.any():
        return
    told = {d["seq"] for d in san.nonfinite if d.get("finite") or _from_infinities(d)}
    found, counts = np.unique(ids[sel], return_counts=True)
    for ev, n in zip(found.tolist(), counts.tolist()):
        if ev not in told:
            continue
        got = san.nan_stored.get(ev)
        if got is None:
            got = san.nan_stored[ev] = dict(lanes=0, line=site[1], tensor=None, element=None)
            first = int(np.asarray(ptrs.data)[sel & (ids == ev)].reshape(-1)[0])
            base = shadow.base_of(ptrs)
            bufs = san.launch.argmap().by_base(base) if base is not None and san.launch is not None else []
            if bufs:
                got["tensor"] = bufs[0].name
                got["element"] = bufs[0].where(first)
        got["lanes"] += n


def _from_infinities(ev: dict) -> bool:
    """An op that made NaN of infinities in real lanes (``-inf - -inf``, ``0 * inf``, ``inf / inf``): padding lanes
    make no event (shadow_values), so these are lanes a ``tl.where`` or the data set to -inf. helper-143: an online
    softmax whose first key block was all masked to -inf (m_i = -inf, exp(m_i - m_ij)) wrote NaN into rows that had
    valid keys later, and the run said 0 finding(s)."""
    return ev["value"] != ev["value"] and bool(ev["inputs"]) and \
        any(v in (float("inf"), float("-inf")) for v in ev["inputs"])


def entries(san) -> None:
    """The launch's ``nan_inf`` warnings (program mode): one per op (line, tensor stored into) whose NaN a store
    wrote, with the first program's event and the lanes of them all."""
    # a masked_reduction that names the op which made its padding's NaN (an online softmax's m - m_new over -inf
    # padding: helper-117) tells that NaN already
    made = {e["made"][0] for e in san.agg.values() if e.get("made")}
    for d in san.nonfinite:
        stored = san.nan_stored.get(d["seq"])
        if stored is None or (not d.get("finite") and d["line"] in made):
            continue
        e = san._event_entry(d, stored["tensor"], output=None, output_count=0, stored=None, severity="warning")
        if e["stored"] is None:
            e["stored"] = dict(stored)
        else:
            e["stored"]["lanes"] += stored["lanes"]
        e["capped"] = len(san.nonfinite) >= san.max_nonfinite_events  # later ops' NaN carry no event: not counted


def swallowed(out, ins, op) -> None:
    """``tl.maximum`` / ``tl.minimum`` (and ``tl.clamp``, the interpreter's pair of them) returning the other
    operand where one lane held a NaN an op of the kernel made (propagate_nan's default, as on the GPU): with no
    reference to compare (program mode, a reproducer) nothing showed it (helper-119: torchao's act quant without
    its EPS clamp divides 448 by a zero amax, 0 * inf is NaN, and tl.clamp stores the bound). Real lanes only (a
    padding lane's NaN is no data); counted per event and line, for ``swallowed_entries``."""
    from tritondbg.interp import frames, shadow_values

    san = shadow_values._sink["san"]
    if san is None or san.launch is None or not (san.program_mode or
                                                 getattr(san.scenario, "reference_is_capture", False)):
        return
    res = shadow_values.as_float(out)
    if res is None:
        return
    shape, kept = res.shape, ~np.isnan(res)
    for h in (out, *ins):  # (the result's pad is not set yet where the max / min runs: its operands' is)
        pad = shadow_values.pad_of(h)
        if pad is not None:
            kept &= nan_origin._bcast(pad, shape) == 0
    for h in ins:
        o, f = nan_origin.origin_of(h), shadow_values.as_float(h)
        ids = nan_origin._bcast(o, shape) if o is not None else None
        if ids is None or f is None:
            continue
        sel = kept & (ids > 0) & nan_origin._bcast(np.isnan(f), shape)
        if not sel.any():
            continue
        site = frames.site()
        for ev in np.unique(ids[sel]).tolist():
            got = san.nan_swallowed.get((ev, site[:2]))
            if got is None:
                first = tuple(np.argwhere(sel & (ids == ev))[0])
                clamp = "clamp(" in (frames.source_line(site[0], site[1]) or "")  # (its fmax, then its fmin)
                got = san.nan_swallowed[(ev, site[:2])] = dict(
                    lanes=0, line=site[1], op="tl.clamp" if clamp else "tl.maximum" if op is np.fmax else "tl.minimum",
                    value=float(res[first]))
            got["lanes"] += int((sel & (ids == ev)).sum())


def swallowed_entries(san) -> None:
    """A ``nan_inf`` warning at the op whose NaN a max / min / clamp turned into a number (``swallowed``), for an
    event that made its NaN/Inf from finite inputs and whose NaN no store wrote (that one is told as stored)."""
    events = {d["seq"]: d for d in san.nonfinite}
    for (ev, _), got in san.nan_swallowed.items():
        d = events.get(ev)
        if d is None or not d.get("finite") or ev in san.nan_stored:
            continue
        e = san._event_entry(d, None, output=None, output_count=0, swallowed=None, severity="warning")
        if e["swallowed"] is None:
            e["swallowed"] = dict(got)
        else:
            e["swallowed"]["lanes"] += got["lanes"]


def swallowed_message(e: dict) -> str:
    """findings.py's message of a ``swallowed_entries`` entry."""
    ev, sw = e["event"], e["swallowed"]
    label = "NaN" if ev["value"] != ev["value"] else "Inf"
    args = ", ".join(f"{v:.6g}" for v in ev["inputs"]) or "..."
    n = len(e["programs"])
    return (f"{ev['op']}({args}) = {ev['value']:.6g} from finite inputs, in {e['lanes']} lane(s) of {n} "
            f"program{'s' if n != 1 else ''}; a NaN made of it reached {sw['op']} at line {sw['line']} "
            f"({sw['lanes']} lane(s)), which returned {'a bound' if sw['op'] == 'tl.clamp' else 'its other operand'} "
            f"there ({sw['value']:.6g}): the values computed from it hold a number, not the NaN that says this {label} "
            "broke the computation (a divide by a zero scale or amax?). Guard the op (tl.maximum(amax, EPS) before "
            "dividing), or give the max / min propagate_nan=tl.PropagateNan.ALL to keep the NaN")


_ACCUMULATIONS = {"tl.sum": "sum", "tl.reduce": "reduction", "dot": "dot", "multiply": "product", "add": "sum",
                  "subtract": "difference"}  # (no exp, no divide: 1 / (1 + exp(-x)) and 1 / 0 are meant)


def overflows(san) -> None:
    """Warnings for an Inf a sum, a dot or a product made from finite lanes (past its type's largest value: a
    float16 sum of squares, or ``x * x`` of a float16 341) that no told NaN came from: with no reference (program
    mode), or the captured output as one (a reproducer), nothing else says so, and later ops may have made finite
    values of it (``rsqrt(inf) = 0``: an RMS norm's whole output 0, exit 0; helpers 100, 101). An exp's or a
    divide's Inf is left out: ``1 / (1 + exp(-x))`` overflows on purpose."""
    told = {(e["file"], e["line"]) for e in san.agg.values() if e.get("kind") == "nan_inf"}
    for d in san.nonfinite:
        if not d.get("finite") or d["op"] not in _ACCUMULATIONS or not np.isinf(d["value"]) or \
                d["seq"] in san.nan_stored or (d["file"], d["line"]) in told:
            continue
        san._event_entry(d, None, output=None, output_count=0, overflow=True, severity="warning")


def overflow_message(e: dict) -> str:
    """findings.py's message of an ``overflows`` entry."""
    from tritondbg.interp.findings import _FINITE_MAX, dot_lane

    ev = e["event"]
    n = len(e["programs"])
    dtype = ev.get("out_dtype") or "?"
    top = _FINITE_MAX.get(dtype)
    past = f" past {dtype}'s largest value {top:.6g}" if top else ""
    what = _ACCUMULATIONS.get(ev["op"], "result")
    args = ", ".join(f"{v:.6g}" for v in ev["inputs"])
    call = f"{ev['op']}({args})" if args else ev["op"]
    made = (f"tl.dot = {ev['value']:.6g} ({dot_lane(ev)})" if "abs_sum" in ev else
            f"{call} = {ev['value']:.6g}: a {dtype} {what} of finite values went{past}")
    return (f"{made}, in {e['lanes']} lane(s) of {n} program{'s' if n != 1 else ''}. No NaN made of it was "
            "stored: the outputs hold that Inf, or finite values later ops made of it (rsqrt(inf) = 0, 1 / inf = 0: "
            "an RMS norm's whole row 0), and no reference here tells them wrong. Accumulate in float32 "
            "(x.to(tl.float32) before the arithmetic, or tl.sum(x, dtype=tl.float32)), or scale the values down first")


def message(e: dict) -> str:
    """findings.py's message of a program-mode entry."""
    ev, st = e["event"], e["stored"]
    label = "NaN" if ev["value"] != ev["value"] else "Inf"
    args = ", ".join(f"{v:.6g}" for v in ev["inputs"]) or "..."
    n = len(e["programs"])
    into = f", into {st['tensor']}" + (f", first {st['element']}" if st["element"] else "") if st["tensor"] else ""
    made = "made from it" if label == "Inf" else "of it"
    article = "an" if label == "Inf" else "a"
    capped = " (counted in the first ops that made NaN/Inf, in any program)" if e.get("capped") else ""
    if "abs_sum" in ev:  # a dot: its lane is a row times a column
        from tritondbg.interp.findings import dot_lane

        call = f"tl.dot = {ev['value']:.6g} ({dot_lane(ev)})"
    else:
        call = f"{ev['op']}({args}) = {ev['value']:.6g}"
    if not ev.get("finite"):  # made of infinities (_from_infinities)
        both = [v for v in ev["inputs"] if v == float("-inf")]
        why = (" -inf - -inf is the mark of a running max still at its -inf start while every value so far was "
               "masked to -inf. Either the row has keys in later blocks (an online softmax's first block all masked): "
               "start the max at a large finite negative, or subtract tl.where(m == float('-inf'), 0.0, m); or the "
               "row has no key at all: if it should have one (causal attention: each query sees its own key), the "
               "mask that set them all to -inf is wrong (`>` where `>=` was meant, an offset off by one).") \
            if len(both) == 2 and ev["op"] in ("subtract", "sub") else ""
        lane = f" (the first: lane {list(ev['index'])} of pid {tuple(ev['pid'])}'s block)" if ev.get("index") else ""
        return (f"{call}: a NaN made of infinities (not read from memory), in {e['lanes']} lane(s) of {n} "
                f"program{'s' if n != 1 else ''}{lane}; {st['lanes']} NaN lane(s) {made} were stored (line {st['line']}"
                f"{into}){capped}.{why} A warning: program mode has no reference to tell whether the program expects "
                "NaN there (a row with nothing to attend to may be meant to be NaN)")
    return (f"{call}: {article} {label} from finite inputs, in {e['lanes']} "
            f"lane(s) of {n} program{'s' if n != 1 else ''}; {st['lanes']} NaN lane(s) {made} were stored "
            f"(line {st['line']}{into}){capped}. Program mode has no reference to tell whether the program expects "
            "NaN there, hence a warning: an overflow (exp of a large value: subtract the row's max first), 0/0, the "
            "sqrt or log of a negative? Capture the launch (tritondbg capture --kernel NAME -- CMD) and replay its "
            "reproducer to compare")
