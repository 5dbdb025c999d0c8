"""What a case's outputs hold at its end (the sanitizer's ``finish``; program mode's
``Sanitizer.check_program_outputs``): elements no launch wrote and outputs a launch was handed but never stored into
(unstored.py), lanes of the poison (a masked load's undefined lanes, a read of initcheck's mark) that reached an
output, and NaN/Inf where the reference is finite, told at the first op that made one (``nan_inf``)."""
from __future__ import annotations

import numpy as np

from tritondbg.interp import initcheck, unstored
from tritondbg.interp.poison import hidden_nan, poisoned


def outputs(out, ref):
    """(name, out tensor, reference tensor) for each output, named as compare.py names them."""
    from tritondbg.compare import pairs

    try:
        return pairs(out, ref)
    except ValueError:  # the correctness comparison reports it
        return []


def check_case(san, result, out, expected) -> None:
    """A scenario case's outputs (``check``), and where they are finite but wrong, an Inf an op made on the way."""
    # (an output whose layout follows the config, ``not_compared``: which elements a config writes does too,
    # mamba's per-block partial sums: helper-68 got "never written" for the configs that write fewer)
    check(san, out, expected, apart=set(result.extra.get("not_compared") or ()))
    # an Inf made on the way, finite but wrong outputs (rsqrt(inf) = 0). Only an Inf: a NaN stays NaN through
    # arithmetic, and one that vanished was dropped by a where / max (-inf - -inf in the head lanes vLLM's
    # decode attention masks off is in every run, right or wrong: it was named for any wrong output)
    infs = [d for d in san.nonfinite if np.isinf(d["value"])]
    if result.status == "fail" and infs and not san.outputs_nonfinite and \
            nonfinite_told(san) and all(e["kind"] != "nan_inf" for e in san.agg.values()):
        san._nonfinite_entry(None, 0, among=infs)


def check(san, out, expected, nonfinite: bool = True, apart: set = frozenset()) -> None:
    """The outputs ``out`` against ``expected`` (a reference; program mode: the launch run again with the plain
    interpreter's filler, ``nonfinite`` False): outputs no launch wrote (unstored.py), poison that reached them, and
    NaN/Inf where the reference is finite (the op that made them). ``apart``: outputs not compared."""
    import torch

    bad_nonfinite = captured_nonfinite = 0
    first_bad = hidden = None  # hidden: (output, first element, count, poison id) of poison-hidden NaN
    nan_seen = False
    # a reproducer's reference is the captured output: a NaN/Inf in it is what the program got, so every
    # NaN/Inf an op of the kernel made counts (still only with an op that made one from finite inputs)
    from_capture = bool(getattr(san.scenario, "reference_is_capture", False))
    seen_views: set = set()  # an output that is another output's very view (Liger's dX written into dY)
    for name, o, r in outputs(out, expected):
        if not isinstance(o, torch.Tensor) or not isinstance(r, torch.Tensor) or tuple(r.shape) != tuple(o.shape):
            continue
        view = (o.device, o.data_ptr(), tuple(o.shape), tuple(o.stride()), o.dtype)
        if o.numel() and view in seen_views:  # its elements were counted under the first name
            continue
        seen_views.add(view)
        # (a program's tensors: not outputs)
        unwritten = initcheck.unwritten(o, r, from_capture) if nonfinite and name not in apart else None
        if unwritten is not None:
            unstored.unwritten_entry(san, name, o, unwritten)
        elif nonfinite and name not in apart and o.numel():
            unstored.not_stored_entry(san, name, o, r)
        if not o.dtype.is_floating_point:
            continue
        hits = poisoned(o, r) if san.poison_used else None
        hit = np.zeros(tuple(o.shape), dtype=bool) if hits is None else hits[1]
        if unwritten is not None:
            hit = hit | unwritten
        for sid in np.unique(hits[0][hit]) if hits is not None else ():
            info = san.poison_info.get(int(sid))
            if info is None:
                continue
            e = san._poison_entry(info)
            sel = hit & (hits[0] == sid)
            e["lanes"] += int(sel.sum())
            store = san.poison_stores.get(int(sid))
            if store is not None:
                e["pid"] = store["pid"]
                e["stored_at"] = store["line"]
            if e["output"] is None:
                first = tuple(int(i) for i in np.argwhere(sel)[0])
                e["output"] = f"{name}[{', '.join(str(i) for i in first)}]"
                e["output_count"] = int(sel.sum())
                if e["kind"] == "poison":
                    e["tensor"] = name
                e["offsets"] = [int(np.ravel_multi_index(first, sel.shape))] if sel.ndim else [0]
        if not nonfinite:
            continue
        o32, r32 = o.detach().float().cpu(), r.detach().float().cpu()
        finite_ref = torch.isfinite(r32)
        nf = (~torch.isfinite(o32) & (finite_ref | from_capture)).numpy() & ~hit
        if from_capture and nf.any():  # the mark in elements this launch left unwritten, as the captured one did
            left = initcheck.left_unwritten(o)  # (sglang's decode skips empty kv splits; helper-123): no op made it
            if left is not None:
                nf &= ~left
        if nf.any():
            bad_nonfinite += int(nf.sum())
            captured_nonfinite += int((nf & ~finite_ref.numpy()).sum())
            nan_seen = nan_seen or bool(torch.isnan(o32).numpy()[nf].any())
            if first_bad is None:
                first = tuple(int(i) for i in np.argwhere(nf)[0])
                first_bad = (name, first)
            hid = hidden_nan(o, r, hits, nf) if from_capture else None
            if hid is not None and hidden is None:
                first = tuple(int(i) for i in np.argwhere(hid)[0])
                hidden = (name, first, int(hid.sum()), int(hits[0][first]))
    san.outputs_nonfinite = bad_nonfinite
    if bad_nonfinite and san.nonfinite and nonfinite_told(san):
        e = san._nonfinite_entry(first_bad, bad_nonfinite)
        if from_capture:
            e["captured_count"] = captured_nonfinite
            # an Inf the kernel made and the program got may be meant (a -inf mask, log(0)): a warning;
            # a NaN is not
            e["severity"] = "error" if nan_seen else "warning"
    elif hidden is not None:  # no op's NaN seen to reach memory: the poison's hid it
        _hidden_nan_entry(san, *hidden)


def _hidden_nan_entry(san, name: str, first: tuple, count: int, sid: int) -> None:
    """A nan_inf finding for NaN the program got (a reproducer's captured output) in lanes the poison reached
    here first, told beside the poison finding instead of swallowed by it; at the store that wrote them."""
    info, store = san.poison_info.get(sid) or {}, san.poison_stores.get(sid) or {}
    site = (store.get("file") or info.get("file") or "?", store.get("line") or info.get("line") or 0, "")
    e = san._entry("nan_inf", site, name, "hidden", output=f"{name}[{', '.join(str(i) for i in first)}]",
                   output_count=count, load_line=info.get("line"))
    e["pid"], e["programs"] = [], set()  # (which program stored them is not kept: no pid claimed)
    e["lanes"] += count


def nonfinite_told(san) -> bool:
    """Whether the output's NaN/Inf get a nan_inf finding: no op's NaN/Inf reached memory, and another finding
    explains them (padding a reduction took, undefined lanes, memory nothing wrote): that one is the cause,
    and the op that made a NaN a tl.where then dropped (a guarded divide) is not."""
    if san.nonfinite_reached & {d["seq"] for d in san.nonfinite}:
        return True
    return not any(e["kind"] in ("masked_reduction", "poison", "uninit", "out_of_bounds")
                   and e.get("severity", "error") == "error" for e in san.agg.values())
