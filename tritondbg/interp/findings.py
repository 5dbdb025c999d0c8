"""The sanitizers' aggregated entries as findings: the record's fields and the one-line message a user reads.

Split from sanitize.py (which collects the entries). An entry is a dict with ``kind, file, line, function,
kernel, pid, programs, lanes, tensor, op, offsets`` plus kind-specific fields (see ``Sanitizer``). Which stores
and atomics make a race is races.py's."""
from __future__ import annotations

from tritondbg.interp import frames, oob


def _fmt_pid(pid) -> str:
    return "(" + ", ".join(str(i) for i in pid) + ")"


def _pair(e: dict, first: str, second: str) -> str:
    """'FIRST from pid (a) (line L) and SECOND from pid (b) (line M)': the two sides of a race entry."""
    return (f"{first} from pid {_fmt_pid(e['pid'])} (line {e['line']}) and {second + ' from ' if second else ''}pid "
            f"{_fmt_pid(e['other_pid'])} (line {e['other_line']})")


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
    if e.get("descriptor"):  # TMA bounds-checks against the descriptor's shape, which runs past the tensor
        how, fill = (f"The tensor descriptor ({e['descriptor']}) lets them through: its shape, not the tensor's, "
                     "bounds the block (give the descriptor the tensor's shape)"), "zeros"
    elif e.get("block_ptr"):  # tl.load / tl.store of a tl.make_block_ptr (Triton <= 3.8)
        how, fill = ("The block pointer's boundary_check= does not cover the dimension these lanes leave (add it"
                     + (', with padding_option="zero"' if op == "load" else "") + ")"), \
            f"padding_option's value, else {poison}"
    elif e.get("unmasked") and not e.get("masked"):
        how, fill = f"The {noun} has no mask", poison
    elif e.get("unmasked"):
        how, fill = "The mask, where there is one, lets them through", f"the load's other= value if it has one, else {poison}"
    else:
        how, fill = "Its mask lets them through", f"the load's other= value if it has one, else {poison}"
    if op == "load" and e.get("program_fill") is not None:  # program mode kept a run without the poison
        held = fill.replace(poison, e["program_fill"])
        inside = min(e.get("in_other", 0), e["lanes"])  # the plain run reads another argument's memory there
        got = f"got {held} there"
        if inside == e["lanes"]:
            got = "read the other argument's values there"
        elif inside:
            got = (f"got {held} in the {e['lanes'] - inside} lane(s) outside every argument and the other "
                   f"argument's values in the {inside} that land in one")
        return (f"{how}: tritondbg did not read these lanes; your program {got} (its launch was run "
                "again without the checks' poison, as plain TRITON_INTERPRET=1 runs it); on the GPU: garbage values "
                "or an illegal-address fault")
    if op == "load":
        return (f"{how}: tritondbg did not read these lanes (here they hold {fill}); "
                "on the GPU: garbage values or an illegal-address fault")
    if e.get("skip_incomplete"):  # (oob.skip_writes: too many to keep for program mode's run without the poison)
        return (f"{how}: tritondbg skipped these lanes, but past the first 16M of them your program's run without the "
                "checks' poison wrote the rest into the other argument; on the GPU: corrupted memory or an "
                "illegal-address fault")
    return f"{how}: tritondbg skipped these lanes; on the GPU: corrupted memory or an illegal-address fault"


def _values(e: dict) -> str:
    """" (a and b)": the two values a race entry's stores wrote, or "" when they are not known."""
    vals = e.get("values")
    return (" (" + " and ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in vals) + ")") if vals else ""


def _message(e: dict) -> str:
    kind, n_prog = e["kind"], len(e["programs"])
    if kind in ("compile", "no_return"):  # gpu_compile.py: the GPU compiler's refusal; missing_return.py
        return e["text"]
    progs = f"{n_prog} program{'s' if n_prog != 1 else ''}"
    if kind == "outside_view":
        view = f"{e['buffer']}, a slice of a larger tensor," if e.get("slice") else e["buffer"]
        head = (f"{e['op']} through {e['tensor']}: {e['lanes']} lane(s) in {progs} outside the view {view} but "
                f"inside its storage ({e['storage']} elements): {_range(e)}. ")
        if e.get("padded"):
            return (head + "The storage is the view's rows rounded up to a whole block, as a library pads a buffer "
                    "so its kernels address whole blocks: right if the padding is the kernel's to use (nothing "
                    "else lives there); a mask missing if the kernel meant to stay inside the view")
        if e.get("slice") and e.get("step"):
            name, n = e["step"]
            return (head + f"The storage is whole slices of the view's size ({n} elements), and the launch was "
                    f"handed {n} as {name}: a kernel that reaches the other slices by that stride on purpose "
                    "(vLLM's LoRA kernels, handed w[0] and w.stride(0)) is right, as on the GPU; a mask missing if "
                    "it meant to stay in the view (handing it the whole tensor says which)")
        if e.get("slice") and e.get("strides"):
            return (head + f"A stride the kernel does not apply (the view's strides are {e['strides']}, with "
                    f"elements of the storage between its own: a pointer built as base + offs reads those), or a "
                    f"mask missing or off by one: they {'read' if e['op'] == 'load' else 'write'} elements that are "
                    "not the view's, as on the GPU (no fault there: only wrong values)")
        fs = e.get("foreign_stride")
        if e.get("slice") and fs:
            handed = f" (it was handed {'; '.join(fs['handed'])})" if fs["handed"] else ""
            return (head + f"A stride, maybe: {e['tensor']}'s dim {fs['dim']} steps {fs['stride']} elements, with "
                    f"storage between its rows, and no integer the launch was handed is {fs['stride']}{handed}: a "
                    f"row offset built from another tensor's stride {'reads' if e['op'] == 'load' else 'writes'} "
                    "between the view's rows. Or a mask missing or off by one: either way elements that are not the "
                    "view's, as on the GPU (no fault there: only wrong values)")
        if e.get("slice"):
            return (head + f"A mask missing or off by one: they {'read' if e['op'] == 'load' else 'write'} the "
                    "elements next to the slice, as on the GPU (not out of memory, so no fault there: only wrong "
                    "values); a kernel that addresses the whole storage on purpose is better handed the base tensor")
        return (head + "Left to read and "
                "write the storage, as the GPU does: right when the kernel addresses the storage with strides of its "
                "own (an as_strided or stride-0 view, e.g. FlagGems' restride_dim); a missing mask when the view is a "
                "slice of a larger tensor")
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
                    f"{_range(e)}{oob.index_clause(e)}, {'; '.join(how)}")
            if e.get("lands"):
                n = e.get("in_other")
                text += f"; {n} of them land in another argument, e.g. {e['lands']}" if n else f"; lands in {e['lands']}"
            lo, hi = e.get("off_min"), e.get("off_max")
            if e.get("from_undefined") == "uninit":
                text += ("; these addresses were computed from values read from memory nothing wrote (the uninit "
                         "finding names the read): write that memory first, or keep those lanes out")
            elif str(e.get("from_undefined")).startswith("oob:"):
                text += (f"; these addresses were computed from values an out-of-bounds load read (line "
                         f"{e['from_undefined'][4:]}, its out_of_bounds finding): keep that load in bounds first")
            elif e.get("from_undefined"):
                text += ("; these addresses were computed from lanes a masked load left undefined (the poison "
                         "finding names it): give that load other=, or mask this access with the same mask")
            elif (lo is not None and lo <= -(1 << 30)) or (hi is not None and hi >= 1 << 31):
                text += ("; offsets this far (around 2**31) are the mark of an int32 index that overflowed: compute "
                         "it in int64 (e.g. row.to(tl.int64) * stride)")
            elif e["before"] and (cast := oob.narrow_cast(e)) is not None:
                line, stmt, ty, top = cast
                text += (f"; line {line} casts to {ty} (`{stmt}`): an index past {top} wraps there, to negative "
                         f"offsets: keep indices in int32 (or int64)")
        return f"{text}. {_consequence(e)}"
    if kind == "race" and e["op"] == "read_write":  # (races.read_conflict)
        agree = (" (the same value on this input: a race still, unless every input makes the two agree)"
                 if e.get("same_value") else "")
        return (f"pid {_fmt_pid(e['pid'])} loads element {e['element']} at line {e['line']}, which pid "
                f"{_fmt_pid(e['other_pid'])} writes at line {e['other_line']} in the same launch{agree}; "
                f"{e['elements']} such element(s): nothing orders one program's plain store before another's load "
                "(tl.debug_barrier orders one program's threads only), so on a GPU the load sees the old value or "
                "the new one as the programs happen to run (the interpreter runs them in grid order). Split the "
                "launch where the values are handed over, or order them with atomics (a flag set with "
                "tl.atomic_xchg after the store, read with an atomic before the load)")
    if kind == "race" and e["op"] == "store_lanes":
        what = ("with the same value" + (" but for rounding (the same quantity summed in another order: the "
                                          "interpreter's tl.dot rounds a tile's repeated columns apart)"
                                          if e.get("rounding") else "") +
                ": either offsets wrapped with % (offs_m % M: the lanes past the end recompute the "
                "first rows and store them again, harmless while the values agree; mask the store with the unwrapped "
                "offsets) or a histogram bumped by a load, + 1 and a store, which counts each element once however "
                "many lanes hit it (use tl.atomic_add)" if e.get("same_value") else
                "with different values; the GPU keeps one of them, which one unspecified (a block stored through a "
                "scalar pointer: reduce it first; a scatter with repeated indices: tl.atomic_*)")
        places = e.get("lane_places")
        lanes = "lanes" if not places else "lanes " + " and ".join(
            "[" + ", ".join(map(str, p)) + "]" for p in places)
        if places and e.get("wraps") and not e.get("same_value"):
            what = ("with different values: an index past the end of a row reaches the next row's elements, "
                    "so two lanes of the block meet there; the GPU keeps one of them, which one unspecified (mask that "
                    "axis, e.g. offs_n < N, or fix the stride)")
        return (f"{lanes} of one tl.store in pid {_fmt_pid(e['pid'])} write the same element {e['element']} {what}; "
                f"{e['elements']} such element(s)")
    if kind == "race" and e.get("shift") and not e.get("rounding"):
        return _shift_message(e)
    if kind == "race" and e.get("row_wrap") and not e.get("rounding"):
        return _wrap_message(e)
    if kind == "race" and e.get("rounding") and e.get("same_value"):
        gap, scale = e["rounding"]
        return (f"{_pair(e, 'plain stores', '')} write the same element {e['element']} with values apart by rounding "
                f"only (at most {gap:.3g}, where the values written reach {scale:.3g}); {e['elements']} element(s) "
                f"of {_of(e)} are written so by more than one program: the same quantity computed twice in "
                f"another summation order (a tile and its mirror, overlapping tiles; the interpreter's tl.dot sums "
                f"in an order that depends on the element's place in the tile, and a GPU's may too). Harmless if "
                f"both programs compute the same quantity; which one lands is unspecified, so the output's last bits "
                f"can change from run to run (give each program its own elements to make it deterministic)")
    if kind == "race" and e.get("same_value"):
        return (f"{_pair(e, 'plain stores', '')} write the same element {e['element']}; "
                f"{e['elements']} element(s) of {_of(e)} are written by more than one program, each with the "
                f"same value on this input: harmless if that holds for every input (a done flag set to 1), a race "
                f"if the values can differ (per-program results that agree only on this data), or if each program "
                f"loads the element and stores it back changed (an accumulation: programs running at once on a GPU "
                f"read the same old value and one update is lost; the interpreter runs them one at a time, so it "
                f"added up here: use tl.atomic_add)")
    if kind == "race" and e["op"] == "store_overlap":
        vals = _values(e)
        lines = (f"lines {e['line']} and {e['other_line']}" if e["line"] != e["other_line"] else
                 f"both at line {e['line']}, in two iterations")
        return (f"two plain stores of pid {_fmt_pid(e['pid'])} ({lines}) write "
                f"different values{vals} to the same element {e['element']} from other places of their blocks; "
                f"{e['elements']} such element(s): on a GPU other threads make the two stores and nothing orders "
                f"them (no barrier between global stores), so either value may land. Write each element once, or "
                f"from the same place of blocks of one shape (a tile and its mirror meet on the diagonal)")
    if kind == "race" and e["op"] == "locked_store":
        a, b = e["locks"]
        return (f"{_pair(e, 'a store', 'a store')} both write element {e['element']}, under different locks ({a} "
                f"and {b}): a lock orders only the programs that take the same word, so on a GPU these two "
                f"read-modify-writes can interleave and one update is lost (the interpreter runs programs one at a "
                f"time and hides it); take the lock that belongs to the element (one per row or tile), or use "
                f"tl.atomic_*")
    if kind == "race" and e["op"] == "cta_atomic":
        return (f"{_pair(e, e['atomic'] + '(scope=' + repr('cta') + ')', 'an atomic')} change element {e['element']} "
                f"({e['elements']} such element(s)): a cta-scope atomic is atomic among one program's threads only, "
                f"so on a GPU another program's update there can be lost (the interpreter runs programs one at a "
                f"time and hides it); use the default scope (gpu)")
    if kind == "race" and e.get("atomic"):
        return (f"{_pair(e, 'a plain store', e['atomic'])} both change element {e['element']} with nothing "
                f"ordering them ({e['elements']} such element(s) in this launch): on a GPU the atomic can land before "
                f"the store, which then overwrites it, or after (the interpreter runs programs in order, which hides "
                f"it). Initialize before the launch (torch.zeros) or write the element only through atomics")
    if kind == "race":
        vals = _values(e)
        return (f"{_pair(e, 'plain stores', '')} write different values{vals} to the same element "
                f"{e['element']}; {e['elements']} element(s) of {_of(e)} are written by more than one program "
                f"with different values (the result depends on program order: use tl.atomic_* or give each "
                f"program its own elements)")
    if kind == "poison":
        text = ("lanes past the tensor's bounds that this block-pointer load's boundary_check leaves undefined (no "
                "padding_option=) are read" if e.get("block_ptr") else
                "lanes this masked load leaves undefined (mask without other=) are read")
        tz = e.get("times_zero")
        if tz:
            reach = f" and the products enter {', '.join(e['reaches'])}" if e.get("reaches") else ""
            prods = sorted(e.get("products") or [tz], key=lambda t: t["line"])
            at = "; ".join(f"line {t['line']}: {t['source'].strip()}" for t in prods)
            return (f"lanes this masked load leaves undefined (mask without other=) are multiplied by exact zeros "
                    f"({at}){reach}: 0 for any finite value, and today's Triton "
                    "reads 0 there, so these products are right unless a compiler leaves Inf or NaN in those "
                    "undefined lanes; give the load other=0.0 to make sure")
        parts = []
        if e.get("output"):
            parts.append(f"{e['output_count']} element(s) of output {e['tensor']} hold them, first {e['output']}"
                         + (f" (stored at line {e['stored_at']} by pid {_fmt_pid(e['pid'])})" if e.get("stored_at") else ""))
        if e.get("reaches"):
            parts.append("they enter " + ", ".join(e["reaches"]))
        extreme = [r for r in e.get("reaches") or () if r.startswith(("tl.max", "tl.min", "tl.argmax", "tl.argmin"))]
        if extreme and e.get("zero_ok"):  # every real lane of the max was >= 0 (|x|, x * x, exp): 0 never wins
            advice = ("other=0.0 keeps today's result: the real lanes the max reduces are all >= 0 here (after an abs, "
                      "a square or an exp), so the 0 never wins it, where other=float('-inf') would become +inf "
                      "through an abs or a square" if any(r.startswith(("tl.max", "tl.argmax")) for r in extreme) else
                      "other=0.0 keeps today's result: the real lanes the min reduces are all <= 0 here, so the 0 "
                      "never wins it")
        elif extreme and "zero_ok" not in e and any(r.startswith("tl.sum") for r in e.get("reaches") or ()):
            # (helper-106: lmdeploy's rms_norm_quant, a sum of squares, then tl.max(tl.abs(out)): -inf was advised,
            # which the sum makes inf; the max's real lanes could not be read, the sum's NaN was in all of them)
            advice = ("other=0.0 keeps today's result and suits the sum it enters; the max (min) after it then sees "
                      "0 in those lanes too: right where its real lanes are >= 0 (after an abs or a square), else mask "
                      "them for it alone, tl.where(mask, x, float('-inf'))")
        elif e.get("integer") == "bool":  # a tl.int1 load (helper-143: a bool mask got the expert-id sentinel advice)
            advice = "other=False keeps today's result (compiled code reads 0 there)"
        elif extreme and e.get("integer"):  # (helper-111: ScatterMoE's expert ids, whose sentinel is other=E)
            advice = ("an integer no real lane reaches, for the max / min it enters: the type's smallest for a max, "
                      "its largest (or a sentinel such as the number of experts) for a min, then keep those lanes out "
                      "of any sum: the 0 today's code reads there can be the max or min itself, so the result may be "
                      "wrong on today's GPUs too")
        elif extreme:
            advice = ("other=float('-inf') for the max it enters (other=float('inf') for a min), then keep those lanes "
                      "out of any sum: the 0 today's code reads there can be the max itself, so the result may be "
                      "wrong on today's GPUs too")
        else:  # (helper-145: an int32 load was advised other=0.0)
            advice = f"other={'0' if e.get('integer') else '0.0'} keeps today's result"
        give = ("give the load padding_option=\"zero\" (today's result; a block-pointer load takes no other=)"
                if e.get("block_ptr") else f"give the load other= ({advice})")
        if e.get("inert"):  # (program/filler_rerun.py)
            parts[-1] += ("; run again with other values in those lanes (" + ("random bits of the whole word, "
                          "positive then negative" if e.get("integer") else "1 to 8, then -1 to -8") + ", drawn per "
                          "lane), "
                          "the launch wrote the same bytes, so "
                          "nothing it wrote depends on them here (a reduction's result left unused, as a running sum "
                          "after a loop's last block): a warning")
        return (text + ": " + "; ".join(parts) + ". tl.load calls them undefined; today's compiled code reads 0 "
                f"there, but no compiler promises it (the sanitizers put a NaN there, an integer's smallest value for an "
                f"integer load): {give} "
                "or keep those lanes out of the result")
    if kind == "uninit" and e["op"] in ("unwritten", "not_stored", "unnamed"):
        from tritondbg.interp.unstored import message

        return message(e)
    if kind == "uninit":
        from tritondbg.interp.uninit_reads import message

        return message(e, progs)
    if kind == "assume":
        from tritondbg.interp.assume import message

        return message(e)
    if kind == "accumulator":
        from tritondbg.interp.lowp_accum import message

        return message(e)
    if kind == "shift":
        from tritondbg.interp.shifts import message

        return message(e)
    if kind == "cast":
        from tritondbg.interp.casts import message

        return message(e)
    if kind == "layout":
        from tritondbg.interp.layouts import message

        return message(e)
    if kind == "masked_reduction" and e["op"] == "dot":
        return _dot_message(e)
    if kind == "masked_reduction":
        ex = e.get("example")
        example = f"; e.g. lane {tuple(ex[0])} holds {ex[1]:.6g}" if ex else ""
        neutral = {"max": "float('-inf')", "argmax": "float('-inf')", "min": "float('inf')",
                   "argmin": "float('inf')"}.get(e["op"], "0")  # what leaves the reduction unchanged
        if e.get("sentinel") and not e.get("pad_dots"):  # an integer max / min: a warning
            # (sanitize.reduction_event); not a dot's columns of undefined lanes (no sentinel there)
            return (f"tl.{e['op']} here takes {e['lanes']} padding lane(s) (filled by a masked load's other=){example}:"
                    f" over integers, the padding's value wins whenever a block has padding. A sentinel that the code "
                    f"clamps or masks afterwards (other=E, then tl.minimum(..., E - 1)) is harmless; any other value "
                    f"is a wrong {e['op']} (other={'the dtype minimum' if e['op'] == 'max' else 'the dtype maximum'}"
                    f" leaves it unchanged)")
        share = e.get("share")
        if share:  # how much they move the result, so that a reader can weigh it (helper-84: ~1e-17 against 1)
            part, base = share[1], share[2]
            size = (f"the padding moves a result by {part:+.3g} against {base:.6g} without it, "
                    f"{_ratio(share[0])} of it (the most over this launch)")
            small = share[0] < share[4]
            verb = "enter the result" if small else "change the result"
            size = f": {size}" + (f"; below {share[3]} rounding, so these results did not change, but they would where "
                                  "the data come near what the padding holds" if small else "")
        else:
            verb, size = "change the result", ""
        if e.get("made"):  # (helper-117: an online softmax's m - m_new over -inf padding; other=0 would break its max)
            line, op = e["made"]
            return (f"tl.{e['op']} here takes {e['lanes']} padding lane(s) whose values {verb}{example}{size}: the NaN "
                    f"was made in those lanes by {op} at line {line} (from what the padding held there, e.g. "
                    f"-inf - -inf): keep the padding out of that op (tl.where(mask, ..., ...) before it), or mask the "
                    f"lanes out here (tl.where(mask, x, {neutral}))")
        return (f"tl.{e['op']} here takes {e['lanes']} padding lane(s) ({_padded_by(e.get('pad_loads'), e)}) whose "
                f"values {verb}{example}{size}: {_pad_advice(e, neutral)}")
    if kind == "nan_inf" and e["op"] == "hidden":  # (sanitize._hidden_nan_entry)
        return (f"{e['output_count']} element(s) of the outputs are NaN in the captured output too, first "
                f"{e['output']}: the program got NaN there while it read 0 in the undefined lanes, so they come from "
                f"the kernel's other lanes (an op such as 0/0 or the sqrt of a negative, or a NaN its inputs held); "
                f"in this run the poison of the load at line {e.get('load_line')} came through those lanes first and "
                "hides which. Give that load other= and run this again to name the op")
    if kind == "nan_inf" and e.get("overflow"):  # an accumulation's Inf, no reference to tell (nan_stores.py)
        from tritondbg.interp.nan_stores import overflow_message

        return overflow_message(e)
    if kind == "nan_inf" and e.get("swallowed"):  # a max / min / clamp turned its NaN into a number (nan_stores.py)
        from tritondbg.interp.nan_stores import swallowed_message

        return swallowed_message(e)
    if kind == "nan_inf" and e.get("stored"):  # program mode: no reference (nan_stores.py)
        from tritondbg.interp.nan_stores import message

        return message(e)
    if kind == "nan_inf":
        ev = e["event"]
        label = "NaN" if ev["value"] != ev["value"] else ("Inf" if ev["value"] in (float("inf"), float("-inf")) else "NaN/Inf")
        args = ", ".join(f"{v:.6g}" for v in ev["inputs"]) or "..."
        text = (f"first {label} that its inputs did not hold: {ev['op']}({args}) = {ev['value']:.6g} in "
                f"{ev['lanes']} lane(s)")
        if "abs_sum" in ev:  # a dot: its lane's row times column (nan_origin.dot_products)
            text = (f"first {label} that its inputs did not hold: tl.dot = {ev['value']:.6g} in {ev['lanes']} lane(s), "
                    f"{dot_lane(ev)}")
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


_FINITE_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}


def dot_lane(ev: dict) -> str:
    """How a tl.dot made NaN/Inf from finite operands (``ev`` from ``Sanitizer.nonfinite_event``): the products of
    the first such lane's row and column, and whether their magnitudes overflow the accumulator's type (helper-94:
    `dot(2.05469, 0) = nan` named two unrelated elements)."""
    top = _FINITE_MAX.get(ev.get("out_dtype"))
    over = (f", past {ev['out_dtype']}'s largest value {top:.6g}: a {ev['out_dtype']} accumulation can overflow to "
            "Inf on the way, and Inf - Inf is NaN (accumulate in float32, or scale the operands down)"
            if top and ev["abs_sum"] > top else "")
    return (f"from finite operands: the products of its first such lane reach {ev['max_product']:.4g} and their "
            f"magnitudes sum to {ev['abs_sum']:.4g}{over}")


def _ratio(share: float) -> str:
    return "all" if share == float("inf") else f"{share * 100:.3g}%" if share >= 1e-4 else f"{share:.2g}"


def _padded_by(loads, e: dict | None = None) -> str:
    """Which masked loads' other= filled the padding (sanitize.pad_loads: those of the launch so far); with none, a
    tl.dot's rows / columns made of lanes a masked load left undefined (sanitize.dot_pads), whose values are
    tritondbg's fill of those lanes."""
    dots = (e or {}).get("pad_dots")  # (set only where no load's other= padded: Sanitizer._pad_dots)
    if dots:
        (_, dot), lines = dots[0]
        which = (f"the masked load at line {lines[0]} leaves" if len(lines) == 1 else
                 f"the masked loads at lines {', '.join(map(str, lines))} leave")
        return (f"the rows / columns of the tl.dot at line {dot} made of the lanes {which} undefined, with no "
                "other=: the values below come from tritondbg's fill of those lanes")
    if not loads:
        return "filled by a masked load's other="
    if len(loads) == 1:
        (_, line), value = loads[0]
        return f"filled by the other={value} of the masked load at line {line}"
    return f"filled by the other= of the masked loads at lines {', '.join(str(ln) for (_, ln), _ in loads)}"


def _pad_advice(e: dict, neutral: str) -> str:
    """Mask at the reduction, or pad the load with the reduction's neutral value; where the ops between changed
    the padding (a softmax's other=0.0 through exp(x - max)), a value those ops turn into it (helper-132)."""
    loads, ex = e.get("pad_loads") or [], e.get("example")
    here = f"mask them out first (tl.where(mask, x, {neutral}))"
    values = {value for _, value in loads}
    if e.get("pad_dots"):  # a tl.dot's columns of undefined lanes: no other= of that load fixes them
        return here
    if not loads or not ex or len(values) != 1:
        return f"{here}, or other={neutral} when the loaded value is reduced as it is"
    value = values.pop()
    which = (f"the load at line {loads[0][0][1]}" if len(loads) == 1 else
             f"the loads at lines {', '.join(str(ln) for (_, ln), _ in loads)}")
    try:
        moved = float(value) != ex[1]
    except ValueError:  # "varies"
        moved = False
    if not moved:
        return f"{here}, or other={neutral} at {which.replace('the load at ', '').replace('the loads at ', '')}"
    after = " (x = tl.where(mask, x, float('-inf')) before an exp)" if e["op"] == "sum" else ""
    return (f"{here}; {which} pad{'s' if len(loads) == 1 else ''} with other={value}, which the ops between turn "
            f"into {ex[1]:.6g} here: pad with a value they turn into "
            f"{neutral.replace('float(', '').rstrip(')').strip(chr(39))}, or set the lanes after those ops{after}")


def _dot_message(e: dict) -> str:
    """A dot's padding: which operand holds it and an example lane. The lanes hold a value that is not 0 where they
    meet real lanes of the other operand, whatever the load's other= was: an op since the load (exp(0 - m) = 1, a
    bias added) made it so, or other= was not 0; which load filled them is not tracked (a pad lane has no origin)."""
    ops = e.get("operands") or []
    whose = f" of its {' and '.join(ops)} operand{'s' if len(ops) > 1 else ''}" if ops else ""
    ex = e.get("example")
    example = f"; e.g. lane {tuple(ex[0])} of the {ex[2]} operand holds {ex[1]:.6g}" if ex else ""
    fill = _padded_by(None, e) if e.get("pad_dots") else "filled by a masked load's other="
    return (f"tl.dot here takes {e['lanes']} padding lane(s){whose} ({fill}) that are not 0 "
            f"where they meet real lanes of the other operand, so they change the result{example}: set them to 0 "
            "just before the dot (tl.where(mask, x, 0.0) on that operand); the load's other=0.0 is not enough when "
            "an op after the load (exp(x - m), x + bias) makes its padding nonzero")


def nth(n: int) -> str:
    """``n`` as an ordinal (1st, 2nd, 3rd, 11th, 21st): launches are told counted from 1 (helper-83: "launch 0 of
    it" read as no launch at all)."""
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{tail}"


def _race_head(e: dict) -> str:
    """"plain stores from pid A (line) and pid B (line) write different values (x and y) to the same element E"."""
    what = "the same value" if e.get("same_value") else f"different values{_values(e)}"
    return f"{_pair(e, 'plain stores', '')} write {what} to the same element {e['element']}"


def _shift_message(e: dict) -> str:
    """A store race of two programs that wrote one block at one line, moved by a step (races.block_shift)."""
    sh, axes = e["shift"], [i for i, (p, q) in enumerate(zip(e["pid"], e["other_pid"])) if p != q]
    head = _race_head(e)
    count = f"{e['elements']} element(s) of {_of(e)} are written by more than one program"
    block = f"{sh['width']} elements (pid {_fmt_pid(e['pid'])}: {sh['first']}..{sh['last']})"
    if sh["step"] == 0:
        axis = ", ".join(f"program_id({a})" for a in axes)
        text = (f"{head}: at this line both write the very same block of {block}, so its offsets do not depend on "
                f"{axis}, along which these programs differ ({count})")
        cast = oob.narrow_cast(e)  # (helper-151: GPTQ's int16 index wrapped pid 64's block onto pid 0's)
        if cast is not None:
            top = cast[3]
            return (f"{head}: at this line both write the very same block of {block} ({count}): line {cast[0]} casts "
                    f"to {cast[2]} (`{cast[1]}`), so an index past {top} wraps there and another program's block "
                    f"lands on this one: keep indices in int32 (or int64)")
        if e.get("same_value"):
            return (f"{text}, each with the same values on this input: redundant programs (harmless, wasted work), "
                    f"or a program id read from the wrong axis, a stride of 0, and then a part of the output no "
                    f"program writes")
        return (f"{text}. If each program computes a part of one result (split-K), add the parts with "
                f"tl.atomic_add or a second pass; if each should write a block of its own, index the block by "
                f"{axis} too (a program id read from the wrong axis? a stride of 0?)")
    text = (f"{head}: at this line each program writes a block of {block} and pid {_fmt_pid(e['other_pid'])}'s is "
            f"the same block moved by {sh['step']} elements: the two share {sh['shared']} element(s) ({count}). A "
            f"block wider than the step between programs: a mask missing the end of a row (offs < N) lets a row's "
            f"last block write the next row's first elements, a stride smaller than the block's rows (two strides "
            f"swapped?), or a grid that steps by less than the block")
    if e.get("same_value"):
        return f"{text}; the values agree on this input, so the output is right today. Mask the store or step by the block"
    return (f"{text}. Mask the store to the program's own elements or step by the block; atomics would not fix it "
            f"(each element is still written twice)")


def _wrap_message(e: dict) -> str:
    """A store race where one program's block ran past a row's end into the next row (races.row_wrap)."""
    w = e["row_wrap"]
    wrapper, owner = (e["pid"], e["other_pid"]) if w["a"] else (e["other_pid"], e["pid"])
    head = _race_head(e)
    text = (f"{head}: pid {_fmt_pid(wrapper)} wrote {w['last']}, a row's last element, and then {w['first']}, the "
            f"next row's first, which pid {_fmt_pid(owner)} writes too: its block runs past the row's end "
            f"({e['elements']} element(s) of {_of(e)} are written by more than one program). A column mask off by "
            f"one (`<= N`) or missing on the store; mask it (cols < N), not atomics (each element would still be "
            f"written twice)")
    return text + ("; the values agree on this input, so the output is right today" if e.get("same_value") else "")


def _of(e: dict) -> str:
    """What a store race's element count is of: its tensor (one race per tensor: races._per_tensor)."""
    return e["tensor"] if e.get("tensor") else "this launch"


def finding(e: dict) -> dict:
    """The record's form of an aggregated entry: kind, file, line, pid, tensor, offsets, message, severity."""
    severity = e.get("severity") or ("warning" if e.get("same_value") else "error")
    f = dict(kind=e["kind"], severity=severity, file=e["file"],
             line=e["line"], function=e["function"], kernel=e["kernel"], pid=list(e["pid"]), tensor=e["tensor"],
             offsets=list(e["offsets"]), op=e["op"], programs=len(e["programs"]), lanes=e["lanes"], message=_message(e),
             source=frames.source_statement(e["file"], e["line"]))
    if e.get("off_min") is not None:
        f["offset_range"] = [e["off_min"], e["off_max"]]  # every lane; ``offsets`` is a sample of at most 8
    if e["kind"] == "race":
        f["other_pid"] = e["other_pid"]
        f["other_line"] = e["other_line"]
    if e.get("notes"):
        f["notes"] = e["notes"]
    if e["kind"] == "nan_inf":  # the first NaN/Inf element of an output, or stored (program mode), as the message
        # names it: an op's lanes have no memory offsets (helper-141: "offsets": [] beside O[0, 0, 0])
        stored = e.get("stored") or {}
        if e.get("output") or stored.get("element"):
            f["output"] = e.get("output") or stored["element"]
        if e.get("output_count") or stored.get("lanes"):
            f["output_count"] = e.get("output_count") or stored["lanes"]
    if e.get("carried"):  # the mark computed into memory something wrote: the cause is an earlier launch
        f["carried"] = True
    if e["kind"] == "out_of_bounds" and e.get("landed"):  # lanes past the tensor in other arguments' memory
        f["lands_in"] = sorted(e["landed"])
    share = e.get("share") if e["kind"] == "masked_reduction" else None
    if share and share[0] != float("inf"):  # |padding's part| / |result| where it is largest (shadow_pads)
        f["padding_share"] = share[0]
    return f


STOPS = ("kernel_error", "device_assert")  # where a launch stopped: after everything its sanitizers saw before


def stop_last(found: list) -> None:
    """Order a launch's findings as they happened: its kernel_error / device_assert (the launch stopped there)
    after the sanitizers' findings, which the instruments append in their own order (helper-115: a loop bound
    read out of bounds was told before the out_of_bounds finding that made it). In place, stable."""
    found.sort(key=lambda f: f.get("kind") in STOPS)
