"""Outputs of a scenario's case that no launch wrote (``output_checks.check``): elements still holding initcheck's
mark (``unwritten_entry``: a grid or a store mask that misses them, "never written"), and an output a launch was
handed that no store or atomic wrote into while its stores went into other tensors (``not_stored_entry``: a store
through the wrong pointer); and a tensor argument the kernel's code never names (``unnamed_entries``: a warning
at the launch, in program mode and in a reproducer's replay too)."""
from __future__ import annotations

import numpy as np

from tritondbg.interp import initcheck
from tritondbg.interp.values import element_width
from tritondbg.missing_return import kernel_line


def not_stored_entry(san, name: str, o, r) -> None:
    """An output a launch was handed that no store or atomic of the case wrote into, and that differs from the
    reference, while the launch's stores went into other tensors: a store through the wrong pointer (helper-75:
    megablocks' gather storing into its input, the output from torch.zeros: a mismatch and a race warning
    only; a torch.empty output is told as never written)."""
    import torch

    lo, hi = o.data_ptr(), o.data_ptr() + o.numel() * o.element_size()
    handed = [(site, launch, arg, bufs) for site, launch, bufs in san.handed
              for b_lo, b_hi, arg in bufs if b_lo < hi and b_hi > lo and site is not None]
    spans = list(san.store_spans.items())
    if not handed or not spans or any(a < hi and b >= lo for _, (a, b) in spans) or \
            (san.atomic_span is not None and san.atomic_span[0] < hi and san.atomic_span[1] >= lo):
        return
    try:
        if torch.equal(o.detach().cpu(), r.detach().cpu().to(o.dtype)):
            return
    except (RuntimeError, TypeError):
        return
    site, launch, arg, bufs = _last_launch_first(handed, 1)
    into = _into(spans, bufs)
    if not into:
        return
    store = min(s for s, _ in spans if any(s[1] == ln for ln, _ in into))
    forgotten = _forgotten(launch, arg, into)
    # a kernel with no store through the argument: at its def line, not the other store's (helper-84)
    at = (launch.file, (kernel_line(launch.fn, 1) or (None, store[1]))[1], "") if forgotten else \
        (store[0], store[1], "")
    e = san._entry("uninit", at, name, "not_stored", element=name, handed=arg,
                    kernel_name=launch.kernel, into=into, forgotten=forgotten)
    e["severity"] = "warning"
    e["lanes"] = int(o.numel())
    e["pid"], e["programs"] = [], set()  # no program wrote into it


def _into(spans: list, bufs: list) -> list:
    """[(line, argument)] of the stores (``spans``: the sanitizer's store_spans items) into the launch's arguments."""
    into = []
    for store, (a, b) in sorted(spans):
        for b_lo, b_hi, other in bufs:
            if a < b_hi and b >= b_lo and (store[1], other) not in into:
                into.append((store[1], other))
    return into


def _forgotten(launch, arg: str, into: list) -> bool:
    from tritondbg.interp.kernel_stores import forgotten

    return launch.fn is not None and bool(into) and forgotten(launch.fn, arg, [other for _, other in into])


def unwritten_entry(san, name: str, o, unwritten) -> None:
    """Output elements no launch wrote (still initcheck's mark): reported at the launch that was handed them
    (else the line that allocated them). Not where a store went out of bounds: that finding says why."""
    if any(e["kind"] == "out_of_bounds" and e["op"] == "store" for e in san.agg.values()):
        return
    lo, hi = o.data_ptr(), o.data_ptr() + o.numel() * o.element_size()
    if any(e["kind"] == "uninit" and "span" in e and e["span"][0] < hi and e["span"][1] >= lo
           for e in san.agg.values()):  # an atomic added into them: that finding says why they hold the mark
        return
    first = tuple(int(i) for i in np.argwhere(unwritten)[0])
    addr = o.data_ptr() + int(np.ravel_multi_index(first, unwritten.shape) if unwritten.ndim else 0) * o.element_size()
    handed = [(site, launch.kernel, tuple(launch.grid), arg, launch, bufs) for site, launch, bufs in san.handed
              for lo, hi, arg in bufs if lo <= addr < hi and site is not None]
    handed = [_last_launch_first(handed, 4)] if handed else []
    site = handed[-1][0] if handed else (initcheck.allocation_site(o.data_ptr()) or san.launch_site)
    e = san._entry("uninit", site, name, "unwritten", element=f"{name}[{', '.join(str(i) for i in first)}]",
                    alloc=initcheck.allocated_at(o.data_ptr()), numel=int(o.numel()),
                    handed=handed[-1][1:4] if handed else None)
    if handed and unwritten.all():  # none of it written: a forgotten store, or one through the wrong pointer?
        e["forgotten"] = _forgotten(handed[-1][4], handed[-1][3], _into(list(san.store_spans.items()), handed[-1][5]))
    e["lanes"] += int(unwritten.sum())
    e["kernel"] = san.last_kernel
    e["pid"], e["programs"] = [], set()  # no program wrote them
    e["offsets"] = [int(np.ravel_multi_index(first, unwritten.shape))] if unwritten.ndim else [0]


def unnamed_entries(san, launch) -> None:
    """Program mode and a reproducer's replay (no reference of the user's): a warning for each non-empty tensor
    argument the kernel's code never names (kernel_stores.unused): an output
    whose ``tl.store`` is missing, or an argument left over. helper-97: FlashInfer's positions, store deleted, a
    torch.zeros output; helper-101: applied-ai's fp8 quant without its scale store, a torch.empty output the
    program returned unread; a note in program mode only, exit 0, and the reproducer's replay passed (it compares
    the outputs the capture saw written)."""
    import torch

    from tritondbg.interp import kernel_stores

    if not san.program_mode and not getattr(san.scenario, "reference_is_capture", False):
        return  # a scenario of the user's: its outputs are compared (never written, not stored: not_stored_entry)
    if san.program_mode and kernel_stores.writes(launch.fn) is False:
        return  # a kernel with no write at all: program mode's not_stored warning says so (checker.stores_nothing)
    for name, value in launch.args.items():
        if not isinstance(value, torch.Tensor) or not value.numel() or not kernel_stores.unused(launch.fn, name):
            continue
        if _aliases_a_named(launch, name):
            continue  # the same memory handed again as an argument the kernel uses (helper-107: TE's JAX slot)
        if not _one_value(value):
            continue  # it holds data: an input left over, not an output waiting for a store (helper-109: mlstm's
            # backward kernels take matQ, matK, vecA they no longer read); zeros, a fill or the mark: told
        line = (kernel_line(launch.fn, 1) or (None, 0))[1]
        e = san._entry("uninit", (launch.file, line, launch.kernel), name, "unnamed", kernel_name=launch.kernel,
                       shape=list(value.shape), dtype=str(value.dtype).replace("torch.", ""))
        e["severity"], e["pid"], e["programs"] = "warning", [], set()


def _last_launch_first(handed: list, at: int) -> tuple:
    """Of the (site, ..., launch, ...) entries of the arguments that held an address, the last launch's first
    argument (hooks._named_first orders a kernel's named arguments before an alias it never names, helper-110)."""
    last = handed[-1][at]
    return next(h for h in handed if h[at] is last)


def _one_value(t, limit: int = 1 << 20) -> bool:
    """Whether every element of ``t`` (its first ``limit`` ones) holds the same bits: a buffer as a factory made it
    (torch.zeros, torch.full, torch.empty's mark), which an output the kernel forgot to store into still is."""
    import torch

    from tritondbg.interp import initcheck

    x = t.detach()
    if x.dim() > 1 and not x.is_contiguous():  # the first rows only: a transposed view is not copied whole
        x = x[:max(1, limit // max(1, x[0].numel()))]
    flat = x.reshape(-1)[:limit]
    if flat.dtype.is_floating_point or flat.dtype.is_complex:  # by bits: NaN marks compare equal so
        flat = flat.contiguous().view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64,
                                       16: torch.int64}[flat.element_size()])
    if flat.numel() <= 8:  # a scalar input (a scale, an eps) is one value too: zeros or the mark only (helper-110);
        # a few integers all 0 are as likely an index (helper-115: stk's row_indices [0, 0], of a one-block row): the
        # mark only
        marked = initcheck._holding_mark(t.detach().contiguous())
        if marked is not None and bool(marked.all()):
            return True
        return (t.dtype.is_floating_point or t.dtype.is_complex) and bool((flat == 0).all())
    return bool((flat == flat[0]).all())


def _aliases_a_named(launch, name: str) -> bool:
    """Whether argument ``name``'s bytes overlap a tensor argument the kernel's code names."""
    from tritondbg.interp import kernel_stores
    from tritondbg.interp.memory import overlapping

    return any(not kernel_stores.unused(launch.fn, other) for other in overlapping(launch.args, name))


def message(e: dict) -> str:
    """The text of an ``unwritten``, ``not_stored`` or ``unnamed`` entry (findings.py)."""
    handed = e.get("handed")
    if e["op"] == "unnamed":
        return (f"{e['tensor']} ({e['dtype']}{e['shape']}) is a tensor argument {e['kernel_name']}'s code never "
                "names, not even in a branch a constexpr turns off: the launch neither reads nor writes it. An output "
                "whose tl.store is missing (the program then gets what the memory held before), or an argument left "
                "over?")
    if e["op"] == "unwritten":
        if e.get("forgotten"):  # none of it written, and no store through it in the kernel's code (helper-84)
            return (f"{e['lanes']} of {e['numel']} element(s) of output {e['tensor']} were never written (first "
                    f"{e['element']}): this launch of {handed[0]} (grid {handed[1]}) was handed it as {handed[2]}, and "
                    f"{handed[0]} has no store (nor atomic) through {handed[2]} in its code: a forgotten tl.store? "
                    f"The memory is from {e.get('alloc') or 'torch.empty'}")
        launch = (f"this launch of {handed[0]} (grid {handed[1]}) was handed it as {handed[2]} and no launch stored "
                  "to them" if handed else "no launch stored to them")
        return (f"{e['lanes']} of {e['numel']} element(s) of output {e['tensor']} were never written (first "
                f"{e['element']}): {launch}; the memory is from {e.get('alloc') or 'torch.empty'}. On the GPU they "
                "hold whatever the allocator last put there: check that the grid covers every element and that the "
                "stores' masks are not too strict")
    stores = "; ".join(f"line {ln} into {t}" for ln, t in e["into"])
    head = (f"output {e['tensor']} was handed to {e['kernel_name']} as {handed} and no store or atomic of the case "
            f"wrote into it (it holds what it held before the launch)")
    if e.get("forgotten"):  # no store through it in the kernel's code (helper-84: a layer norm's Y)
        return (f"{head}: {e['kernel_name']} has no store (nor atomic) through {handed} in its code, only into other "
                f"arguments ({stores}): a forgotten tl.store?")
    return f"{head}; the launch's stores went elsewhere ({stores}): a store through the wrong pointer?"


def masked_off(san, ptrs) -> None:
    """A store of the launch that ran with every lane masked off: once per line, the arguments its pointers (all
    of them, as computed) point into, so a launch that left an output untouched names the store whose mask kept
    it out (helper-119: gemlite's tail rows never stored at M = 5 < BLOCK_M, "a store through the wrong pointer?"
    at the decorator line)."""
    from tritondbg.interp import frames

    if san.launch is None:
        return
    site = frames.site()[:2]
    addrs = np.asarray(ptrs.data).reshape(-1).astype(np.uint64, copy=False)
    argmap, width = san.launch.argmap(), element_width(ptrs.get_element_ty())
    known = san.masked_off.get(site, frozenset())
    first = argmap.owner(addrs[:1], width)  # (a line run again into an argument it was seen with: nothing new)
    if addrs.size and first[0] >= 0 and argmap.buffers[first[0]].name in known:
        return
    own = argmap.owner(addrs, width)  # (a helper's store line serves several arguments: each is kept)
    san.masked_off[site] = known | frozenset(argmap.buffers[i].name for i in np.unique(own) if i >= 0)
