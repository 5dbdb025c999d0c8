"""The sanitizers' aggregated entries as findings: the record's fields and the one-line message a user reads.

Split from sanitize.py (which collects the entries). An entry is a dict with ``kind, file, line, function,
kernel, pid, programs, lanes, tensor, op, offsets`` plus kind-specific fields (see ``Sanitizer``)."""
from __future__ import annotations

from tritondbg.interp import frames


def _fmt_pid(pid) -> str:
    return "(" + ", ".join(str(i) for i in pid) + ")"


def _range(e: dict) -> str:
    """The element offsets of an out_of_bounds entry: the full range over every lane, or a labelled sample."""
    if e.get("off_min") is not None:
        lo, hi = e["off_min"], e["off_max"]
        return f"element offset {lo}" if lo == hi else f"element offsets {lo}..{hi}"
    offsets = e["offsets"]
    if not offsets:
        return ""
    shown = ", ".join(str(o) for o in offsets[:3])
    return f"addresses {shown}" + (f" (first {min(3, len(offsets))} of {e['lanes']})" if e["lanes"] > 3 else "")


def _consequence(e: dict) -> str:
    """What tritondbg did with the bad lanes, and what the GPU would do, in the op's own terms."""
    op = e["op"]
    noun = {"load": "load", "store": "store"}.get(op, "atomic")
    poison = "poison: NaN for floats, the type's minimum for integers"  # sanitize.py's fill of an undefined lane
    if e.get("unmasked") and not e.get("masked"):
        how, fill = f"The {noun} has no mask", poison
    elif e.get("unmasked"):
        how, fill = "The mask, where there is one, lets them through", f"other=, else {poison}"
    else:
        how, fill = "Its mask lets them through", f"other=, else {poison}"
    if op == "load":
        return (f"{how}: tritondbg did not read these lanes (here they hold {fill}); "
                "on the GPU: garbage values or an illegal-address fault")
    return f"{how}: tritondbg skipped these lanes; on the GPU: corrupted memory or an illegal-address fault"


def _message(e: dict) -> str:
    kind, n_prog = e["kind"], len(e["programs"])
    progs = f"{n_prog} program{'s' if n_prog != 1 else ''}"
    if kind == "out_of_bounds":
        what = {"load": "load", "store": "store", "atomic": "atomic"}.get(e["op"], e["op"])
        if e["tensor"] is None:
            text = (f"{what}: {e['lanes']} lane(s) in {progs} point into no argument tensor "
                    f"({e['lands']})")
        else:
            how = []
            if e["past"]:
                lo = e.get("past_min", 1)
                how.append(f"{lo}..{e['past']} element(s) past the end" if lo != e["past"] else
                           f"{e['past']} element(s) past the end")
            if e["before"]:
                how.append(f"up to {e['before']} element(s) before the start")
            if e["gap"]:
                how.append(f"{e['gap']} between the elements of the view")
            if e["misaligned"]:
                how.append(f"{e['misaligned']} misaligned")
            text = (f"{what} through {e['tensor']}: {e['lanes']} lane(s) in {progs} outside {e['buffer']}: "
                    f"{_range(e)}, {'; '.join(how)}")
            if e.get("lands"):
                text += f"; lands in {e['lands']}"
        return f"{text}. {_consequence(e)}"
    if kind == "race":
        return (f"plain stores from pid {_fmt_pid(e['pid'])} (line {e['line']}) and pid "
                f"{_fmt_pid(e['other_pid'])} (line {e['other_line']}) write the same element {e['element']}; "
                f"{e['elements']} element(s) of this launch are written by more than one program "
                f"(the result depends on program order: use tl.atomic_* or give each program its own elements)")
    if kind == "poison":
        text = "lanes this masked load leaves undefined (mask without other=) are read"
        parts = []
        if e.get("output"):
            parts.append(f"{e['output_count']} element(s) of output {e['tensor']} hold them, first {e['output']}"
                         + (f" (stored at line {e['stored_at']} by pid {_fmt_pid(e['pid'])})" if e.get("stored_at") else ""))
        if e.get("reaches"):
            parts.append("they enter " + ", ".join(e["reaches"]))
        return (text + ": " + "; ".join(parts) + ". On the GPU those lanes hold garbage (a bare "
                "TRITON_INTERPRET=1 gives 0, the sanitizers NaN): give the load other= or keep those lanes out of "
                "the result")
    if kind == "masked_reduction":
        ex = e.get("example")
        example = f"; e.g. lane {tuple(ex[0])} holds {ex[1]:.6g}" if ex else ""
        return (f"tl.{e['op']} here takes {e['lanes']} padding lane(s) (filled by a masked load's other=) whose "
                f"values change the result{example}: mask them out first (tl.where(mask, x, 0))")
    if kind == "nan_inf":
        ev = e["event"]
        label = "NaN" if ev["value"] != ev["value"] else ("Inf" if ev["value"] in (float("inf"), float("-inf")) else "NaN/Inf")
        args = ", ".join(f"{v:.6g}" for v in ev["inputs"])
        return (f"first {label} that its inputs did not hold: {ev['op']}({args}) = {ev['value']:.6g} "
                f"in {ev['lanes']} lane(s); {e['output_count']} element(s) of the outputs are NaN/Inf where the "
                f"reference is finite, first {e['output']}")
    return kind


def finding(e: dict) -> dict:
    """The record's form of an aggregated entry: kind, file, line, pid, tensor, offsets, message, severity."""
    f = dict(kind=e["kind"], severity="error", file=e["file"], line=e["line"], function=e["function"],
             kernel=e["kernel"], pid=list(e["pid"]), tensor=e["tensor"], offsets=list(e["offsets"]),
             op=e["op"], programs=len(e["programs"]), lanes=e["lanes"], message=_message(e),
             source=frames.source_line(e["file"], e["line"]))
    if e.get("off_min") is not None:
        f["offset_range"] = [e["off_min"], e["off_max"]]  # every lane; ``offsets`` is a sample of at most 8
    if e["kind"] == "race":
        f["other_pid"] = e["other_pid"]
        f["other_line"] = e["other_line"]
    if e.get("notes"):
        f["notes"] = e["notes"]
    return f
