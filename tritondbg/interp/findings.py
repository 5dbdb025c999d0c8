"""The sanitizers' aggregated entries as findings: the record's fields and the one-line message a user reads.

Split from sanitize.py (which collects the entries). An entry is a dict with ``kind, file, line, function,
kernel, pid, programs, lanes, tensor, op, offsets`` plus kind-specific fields (see ``Sanitizer``). Also which of
a launch's cross-program stores make a race (``stored_bits``, ``race_conflict``, ``store_atomic_conflict``)."""
from __future__ import annotations

from tritondbg.interp import frames


def stored_bits(value, live, shape):
    """The raw bits a plain store writes, one per live lane (as ``record_store`` takes the addresses), or None
    when they cannot be read (then any cross-program write of that store counts as a race)."""
    import numpy as np

    try:
        data = np.broadcast_to(np.asarray(value.data), shape)
        data = np.ascontiguousarray(data.reshape(-1) if live is None else data[live])
        if data.dtype.itemsize not in (1, 2, 4, 8):
            return None
        return np.array(data.view(f"u{data.dtype.itemsize}"), copy=True)
    except (AttributeError, TypeError, ValueError):
        return None


def race_conflict(writes: list) -> dict | None:
    """The first element that plain stores of more than one program write with different bits (the one raced
    first, in the order the stores ran: addresses change from run to run, so the lowest would name another pair of
    lines in another run), from a launch's ``writes`` [(addresses, program index, site id, stored bits or None,
    seq)], or None when no element
    is written by several programs. Where every such element got the same bits from each program (every program
    sets a done flag to 1: harmless; or each program's sum of a torch.ones input: a race the input hides),
    ``same_value`` is True: a warning, not an error. Returns the element's address, both program indices and
    store sites, ``elements`` (how many elements) and ``same_value``."""
    import numpy as np

    if len(writes) < 2:
        return None
    A = np.concatenate([w[0] for w in writes])
    P = np.concatenate([np.full(w[0].size, w[1], dtype=np.int64) for w in writes])
    S = np.concatenate([np.full(w[0].size, w[2], dtype=np.int64) for w in writes])
    V = np.concatenate([np.zeros(w[0].size, np.uint64) if w[3] is None else w[3].astype(np.uint64) for w in writes])
    U = np.concatenate([np.full(w[0].size, w[3] is None) for w in writes])  # bits unknown: assume they differ
    Q = np.concatenate([np.full(w[0].size, w[4] if len(w) > 4 else 0, dtype=np.int64) for w in writes])
    order = np.lexsort((P, A))  # stable: one program's stores to an element stay in program order
    A, P, S, V, U, Q = A[order], P[order], S[order], V[order], U[order], Q[order]
    starts = np.flatnonzero(np.r_[True, A[1:] != A[:-1]])
    several = np.maximum.reduceat(P, starts) != np.minimum.reduceat(P, starts)
    differ = (np.maximum.reduceat(V, starts) != np.minimum.reduceat(V, starts)) | np.logical_or.reduceat(U, starts)
    bad = np.flatnonzero(several & differ)
    same = bad.size == 0
    if same:  # every program wrote the same bits: harmless if that holds for every input (a flag), not if the
        bad = np.flatnonzero(several)  # values only agreed on this input (a sum of torch.ones): a warning
        if bad.size == 0:
            return None
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, A.size]))
    raced_at = np.where(P != P[starts][group], Q, np.iinfo(np.int64).max)  # another program's store to it
    first = bad[int(np.argmin(np.minimum.reduceat(raced_at, starts)[bad]))]
    lo = int(starts[first])
    hi = int(starts[first + 1]) if first + 1 < starts.size else A.size
    other = lo + np.flatnonzero(P[lo:hi] != P[lo])  # stores of the other programs to the element
    wrote_other = other[U[other] | U[lo] | (V[other] != V[lo])]   # ... that wrote other bits than the first
    j = int(wrote_other[0] if wrote_other.size else other[0])
    return dict(addr=int(A[lo]), pid_a=int(P[lo]), pid_b=int(P[j]), site_a=int(S[lo]), site_b=int(S[j]),
                elements=int(bad.size), same_value=bool(same))


def lane_collisions(addrs, bits) -> dict | None:
    """Lanes of one store that write the same element (``addrs``: the live lanes' addresses, ``bits``: what each
    writes, or None): the GPU keeps one lane's value, which one unspecified. With different values (a block stored
    through a scalar pointer) an error; with the same value, a warning where only some lanes collide (a histogram
    updated by load + 1 and store loses the repeats; each lane wrote the same count), nothing where every lane
    writes one element (a scalar stored through a block). Returns the first such element's address, ``elements``
    and ``same_value``."""
    import numpy as np

    if addrs.size < 2 or bool((addrs[1:] > addrs[:-1]).all()):
        return None
    order = np.argsort(addrs, kind="stable")
    A = addrs[order]
    starts = np.flatnonzero(np.r_[True, A[1:] != A[:-1]])
    if starts.size == A.size:
        return None
    several = np.diff(np.r_[starts, A.size]) > 1
    if bits is None:
        differ = several
    else:
        B = bits[order]
        differ = several & (np.maximum.reduceat(B, starts) != np.minimum.reduceat(B, starts))
    bad = np.flatnonzero(differ)
    same = bad.size == 0
    if same:
        if starts.size == 1:
            return None
        bad = np.flatnonzero(several)
    return dict(addr=int(A[starts[bad[0]]]), elements=int(bad.size), same_value=bool(same))


def cta_conflict(atomics: list) -> dict | None:
    """The first element (by the atomics' order) that a ``scope="cta"`` atomic of one program and an atomic of
    another program both change, from a launch's ``atomics`` [(addresses, program index, site id, seq, op, cta)]: a
    cta-scope atomic is atomic among one program's threads only, so on a GPU another program's update of the element
    can be lost (the interpreter, one program at a time, adds them all). Returns the element's address, the cta
    atomic's and the other program's indices and sites, the atomic's name and ``elements``."""
    import numpy as np

    if not any(len(a) > 5 and a[5] for a in atomics):
        return None
    A = np.concatenate([a[0] for a in atomics])
    I = np.concatenate([np.full(a[0].size, i, dtype=np.int64) for i, a in enumerate(atomics)])
    P = np.array([a[1] for a in atomics], dtype=np.int64)[I]
    C = np.array([len(a) > 5 and bool(a[5]) for a in atomics])[I]
    order = np.lexsort((I, A))
    A, I, P, C = A[order], I[order], P[order], C[order]
    starts = np.flatnonzero(np.r_[True, A[1:] != A[:-1]])
    several = np.maximum.reduceat(P, starts) != np.minimum.reduceat(P, starts)
    bad = np.flatnonzero(several & np.logical_or.reduceat(C, starts))
    if bad.size == 0:
        return None
    best = None
    for g in bad.tolist():
        lo, hi = int(starts[g]), int(starts[g + 1]) if g + 1 < starts.size else A.size
        cta = next(j for j in range(lo, hi) if C[j])
        other = next(j for j in range(lo, hi) if P[j] != P[cta])
        key = max(atomics[I[cta]][3], atomics[I[other]][3])  # when the second of the pair ran
        if best is None or key < best[0]:
            best = (key, int(A[lo]), int(I[cta]), int(I[other]))
    _, addr, i, j = best
    return dict(addr=addr, pid_a=atomics[i][1], site_a=atomics[i][2], pid_b=atomics[j][1], site_b=atomics[j][2],
                atomic=atomics[i][4], elements=int(bad.size))


def store_atomic_conflict(writes: list, atomics: list) -> dict | None:
    """The first element (by the store's order) that a plain store of one program and an atomic of another both change,
    from a launch's ``writes`` [(addresses, program index, site id, bits, seq)] and ``atomics`` [(addresses that the
    atomic changed, program index, site id, seq, op name)], or None. Nothing orders a plain store against another
    program's atomic: on a GPU the atomic lands before or after it (program 0 zeroing a total that every program
    tl.atomic_adds into loses the adds that came first), while the interpreter runs programs in order and hides
    it. A store that follows its own program's atomic on the element is left out: the last program of a ticket
    counter (``tl.atomic_add(count, 1) == n - 1``) resetting it with ``tl.store(count, 0)``. Atomics that changed
    nothing (a poll: ``tl.atomic_add(flag, 0)``) are not recorded. Returns the element's address, the storing and
    the atomic program's indices and sites, the atomic's name and ``elements`` (how many elements)."""
    import numpy as np

    if not writes or not atomics:
        return None
    TA = np.concatenate([a[0] for a in atomics])
    SA = np.concatenate([w[0] for w in writes])
    hit = np.flatnonzero(np.isin(SA, TA))
    if hit.size == 0:
        return None
    SP = np.concatenate([np.full(w[0].size, w[1], dtype=np.int64) for w in writes])[hit]
    SS = np.concatenate([np.full(w[0].size, w[4], dtype=np.int64) for w in writes])[hit]
    SI = np.concatenate([np.full(w[0].size, w[2], dtype=np.int64) for w in writes])[hit]
    SA = SA[hit]
    keep = np.isin(TA, SA)
    TP = np.concatenate([np.full(a[0].size, a[1], dtype=np.int64) for a in atomics])[keep]
    TS = np.concatenate([np.full(a[0].size, a[3], dtype=np.int64) for a in atomics])[keep]
    TI = np.concatenate([np.full(a[0].size, i, dtype=np.int64) for i, a in enumerate(atomics)])[keep]
    TA = TA[keep]
    by_addr: dict[int, list] = {}
    for addr, prog, seq, i in zip(TA.tolist(), TP.tolist(), TS.tolist(), TI.tolist()):
        by_addr.setdefault(addr, []).append((prog, seq, i))
    racing: dict[int, tuple] = {}
    for addr, prog, seq, site in zip(SA.tolist(), SP.tolist(), SS.tolist(), SI.tolist()):
        ops = by_addr[addr]
        if any(p == prog and s < seq for p, s, _ in ops):
            continue  # this program's own atomic came first: a reset by the program the counter picked
        other = next((o for o in ops if o[0] != prog), None)
        if other is not None and addr not in racing:
            racing[addr] = (seq, prog, site, other)
    if not racing:
        return None
    addr = min(racing, key=lambda a: (racing[a][0], a))
    _, prog, site, (o_prog, _, i) = racing[addr]
    return dict(addr=addr, pid_a=prog, site_a=site, pid_b=o_prog, site_b=atomics[i][2], atomic=atomics[i][4],
                elements=len(racing))


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
    # poison.py's fill of an undefined lane
    poison = "poison: NaN for floats, the type's minimum for signed integers, its maximum for unsigned ones"
    if e.get("unmasked") and not e.get("masked"):
        how, fill = f"The {noun} has no mask", poison
    elif e.get("unmasked"):
        how, fill = "The mask, where there is one, lets them through", f"other=, else {poison}"
    else:
        how, fill = "Its mask lets them through", f"other=, else {poison}"
    if op == "load" and e.get("program_fill") is not None:  # program mode kept a run without the poison
        held = fill.replace(poison, e["program_fill"])
        return (f"{how}: tritondbg did not read these lanes; your program got {held} there (its launch was run "
                "again without the checks' poison, as plain TRITON_INTERPRET=1 runs it); on the GPU: garbage values "
                "or an illegal-address fault")
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
            lo, hi = e.get("off_min"), e.get("off_max")
            if e.get("from_undefined"):
                text += ("; these addresses were computed from lanes a masked load left undefined (the poison "
                         "finding names it): give that load other=, or mask this access with the same mask")
            elif (lo is not None and lo <= -(1 << 30)) or (hi is not None and hi >= 1 << 31):
                text += ("; offsets this far (around 2**31) are the mark of an int32 index that overflowed: compute "
                         "it in int64 (e.g. row.to(tl.int64) * stride)")
        return f"{text}. {_consequence(e)}"
    if kind == "race" and e["op"] == "store_lanes":
        what = ("with the same value (a histogram bumped by a load, + 1 and a store counts each element once however "
                "many lanes hit it: use tl.atomic_add)" if e.get("same_value") else
                "with different values; the GPU keeps one of them, which one unspecified (a block stored through a "
                "scalar pointer: reduce it first; a scatter with repeated indices: tl.atomic_*)")
        return (f"lanes of one tl.store in pid {_fmt_pid(e['pid'])} write the same element {e['element']} {what}; "
                f"{e['elements']} such element(s)")
    if kind == "race" and e.get("same_value"):
        return (f"plain stores from pid {_fmt_pid(e['pid'])} (line {e['line']}) and pid "
                f"{_fmt_pid(e['other_pid'])} (line {e['other_line']}) write the same element {e['element']}; "
                f"{e['elements']} element(s) of this launch are written by more than one program, each with the "
                f"same value on this input: harmless if that holds for every input (a done flag set to 1), a race "
                f"if the values can differ (per-program results that agree only on this data)")
    if kind == "race" and e["op"] == "cta_atomic":
        return (f"{e['atomic']}(scope='cta') from pid {_fmt_pid(e['pid'])} (line {e['line']}) and an atomic from pid "
                f"{_fmt_pid(e['other_pid'])} (line {e['other_line']}) change element {e['element']} "
                f"({e['elements']} such element(s)): a cta-scope atomic is atomic among one program's threads only, "
                f"so on a GPU another program's update there can be lost (the interpreter runs programs one at a "
                f"time and hides it); use the default scope (gpu)")
    if kind == "race" and e.get("atomic"):
        return (f"a plain store from pid {_fmt_pid(e['pid'])} (line {e['line']}) and {e['atomic']} from pid "
                f"{_fmt_pid(e['other_pid'])} (line {e['other_line']}) both change element {e['element']} with nothing "
                f"ordering them ({e['elements']} such element(s) in this launch): on a GPU the atomic can land before "
                f"the store, which then overwrites it, or after (the interpreter runs programs in order, which hides "
                f"it). Initialize before the launch (torch.zeros) or write the element only through atomics")
    if kind == "race":
        return (f"plain stores from pid {_fmt_pid(e['pid'])} (line {e['line']}) and pid "
                f"{_fmt_pid(e['other_pid'])} (line {e['other_line']}) write different values to the same element "
                f"{e['element']}; {e['elements']} element(s) of this launch are written by more than one program "
                f"with different values (the result depends on program order: use tl.atomic_* or give each "
                f"program its own elements)")
    if kind == "poison":
        text = "lanes this masked load leaves undefined (mask without other=) are read"
        tz = e.get("times_zero")
        if tz:
            reach = f" and the products enter {', '.join(e['reaches'])}" if e.get("reaches") else ""
            return (f"lanes this masked load leaves undefined (mask without other=) are multiplied by exact zeros "
                    f"(line {tz['line']}: {tz['source'].strip()}){reach}: 0 for any finite leftover value, so the "
                    "results are right unless the GPU's leftover there is Inf or NaN; give the load other=0.0 to "
                    "make sure")
        parts = []
        if e.get("output"):
            parts.append(f"{e['output_count']} element(s) of output {e['tensor']} hold them, first {e['output']}"
                         + (f" (stored at line {e['stored_at']} by pid {_fmt_pid(e['pid'])})" if e.get("stored_at") else ""))
        if e.get("reaches"):
            parts.append("they enter " + ", ".join(e["reaches"]))
        return (text + ": " + "; ".join(parts) + ". On the GPU those lanes hold garbage (a bare "
                "TRITON_INTERPRET=1 gives 0, the sanitizers NaN): give the load other= or keep those lanes out of "
                "the result")
    if kind == "uninit":
        from tritondbg.interp.initcheck import message

        return message(e, progs)
    if kind == "masked_reduction":
        ex = e.get("example")
        example = f"; e.g. lane {tuple(ex[0])} holds {ex[1]:.6g}" if ex else ""
        neutral = {"max": "float('-inf')", "argmax": "float('-inf')", "min": "float('inf')",
                   "argmin": "float('inf')"}.get(e["op"], "0")  # what leaves the reduction unchanged
        return (f"tl.{e['op']} here takes {e['lanes']} padding lane(s) (filled by a masked load's other=) whose "
                f"values change the result{example}: mask them out first (tl.where(mask, x, {neutral}), or "
                f"other={neutral} when the loaded value is reduced as it is)")
    if kind == "nan_inf":
        ev = e["event"]
        label = "NaN" if ev["value"] != ev["value"] else ("Inf" if ev["value"] in (float("inf"), float("-inf")) else "NaN/Inf")
        args = ", ".join(f"{v:.6g}" for v in ev["inputs"]) or "..."
        text = (f"first {label} that its inputs did not hold: {ev['op']}({args}) = {ev['value']:.6g} in "
                f"{ev['lanes']} lane(s)")
        if not e.get("output"):  # e.g. an fp16 sum of squares overflows, rsqrt(inf) = 0: finite, wrong outputs
            return (text + "; no output is NaN/Inf, but the outputs do not match the reference: later ops may have "
                    "turned it into finite wrong values (rsqrt(inf) = 0, exp(-inf) = 0)")
        if e.get("captured_count") is not None:  # a reproducer: its reference is the captured output
            held = (f"; the captured output held {e['captured_count']} of them too: the program got them"
                    if e["captured_count"] else "")
            return text + f"; {e['output_count']} element(s) of the outputs are NaN/Inf, first {e['output']}{held}"
        return (text + f"; {e['output_count']} element(s) of the outputs are NaN/Inf where the reference is finite, "
                f"first {e['output']}")
    return kind


def finding(e: dict) -> dict:
    """The record's form of an aggregated entry: kind, file, line, pid, tensor, offsets, message, severity."""
    severity = e.get("severity") or ("warning" if e.get("same_value") else "error")
    f = dict(kind=e["kind"], severity=severity, file=e["file"],
             line=e["line"], function=e["function"], kernel=e["kernel"], pid=list(e["pid"]), tensor=e["tensor"],
             offsets=list(e["offsets"]), op=e["op"], programs=len(e["programs"]), lanes=e["lanes"], message=_message(e),
             source=frames.source_line(e["file"], e["line"]))
    if e.get("off_min") is not None:
        f["offset_range"] = [e["off_min"], e["off_max"]]  # every lane; ``offsets`` is a sample of at most 8
    if e["kind"] == "race":
        f["other_pid"] = e["other_pid"]
        f["other_line"] = e["other_line"]
    if e.get("notes"):
        f["notes"] = e["notes"]
    return f
