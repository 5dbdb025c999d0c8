"""Out-of-bounds lanes of a load, store or atomic (``Sanitizer.check_access``): the finding's entry, or the
``outside_view`` warning for lanes a view does not hold but its storage does.

The entry of a tensor of two or more dims keeps its shape and strides (``layout``): ``index_clause`` tells its
offset range as indices where that is exact, ``a_ptr[1, 0]..a_ptr[63, 999]: past the end along dim 0, indices
1..63 of a size-1 dim`` (h103: a split-K gemm at M=1 said only "element offsets 1000..63999")."""
from __future__ import annotations

import re

import numpy as np

from tritondbg.interp import frames
from tritondbg.interp.shadow_values import _debug_raise

_MAX_SAMPLE = 8  # element offsets kept per entry (the full range is kept beside them)
_MAX_SKIPPED = 1 << 24  # addresses of store / atomic lanes in another argument kept for a run without the poison


def _widen(e: dict, off: np.ndarray) -> None:
    """The entry's element-offset range, widened to take ``off``."""
    lo, hi = int(off.min()), int(off.max())
    e["off_min"] = lo if e.get("off_min") is None else min(e["off_min"], lo)
    e["off_max"] = hi if e.get("off_max") is None else max(e["off_max"], hi)


def _outer_index(shape, strides, off: int) -> tuple[int, ...] | None:
    """The index of element offset ``off`` in a view with dim 0 (its largest stride) unbounded: the other dims
    must hold it exactly. None where the layout does not decompose so (a broadcast, overlapping or negative
    stride, dim 0 not the outermost, a gap between elements)."""
    if len(shape) < 2 or any(st <= 0 for st in strides) or any(n <= 0 for n in shape):
        return None
    if any(strides[d] >= strides[0] for d in range(1, len(shape)) if shape[d] > 1):
        return None  # (dim 0 must be the outermost: a transposed view's rows are not its dim 0)
    inner = sorted(((strides[d], shape[d], d) for d in range(1, len(shape)) if shape[d] > 1), reverse=True)
    room = strides[0]
    for st, n, _ in inner:  # the inner dims tile below the outer stride without overlapping
        if st * n > room:
            return None
        room = st
    idx = [0] * len(shape)
    idx[0], rest = divmod(off, strides[0])
    for st, n, d in inner:
        idx[d], rest = divmod(rest, st)
        if idx[d] >= n:
            return None
    return tuple(idx) if rest == 0 else None


def index_clause(e: dict) -> str:
    """`` (a_ptr[1, 0]..a_ptr[63, 999]: past the end along dim 0, indices 1..63 of a size-1 dim)`` for an
    out_of_bounds entry of a tensor of 2+ dims whose lanes all lie past its end, along dim 0 only: their lowest
    and highest offsets are elements of rows past the last. "" otherwise (a 1-D tensor's offsets are its indices;
    lanes before the start, between elements or misaligned; a layout that does not decompose)."""
    layout, lo, hi = e.get("layout"), e.get("off_min"), e.get("off_max")
    if not layout or lo is None or hi is None or e.get("before") or e.get("gap") or e.get("misaligned") \
            or not e.get("past"):
        return ""
    shape, strides = layout
    first, last = _outer_index(shape, strides, lo), _outer_index(shape, strides, hi)
    if first is None or last is None or first[0] < shape[0]:
        return ""
    name = e.get("tensor") or "x"

    def at(idx):
        return f"{name}[{', '.join(str(i) for i in idx)}]"

    rows = f"index {first[0]}" if first[0] == last[0] else f"indices {first[0]}..{last[0]}"
    span = at(first) if lo == hi else f"{at(first)}..{at(last)}"
    tail = _inner_tail(shape, strides, first, last, "wrote" if e.get("op") in ("store", "atomic") else "read")
    for arg, stride, owner in e.get("row_strides") or ():  # the last lane is the last row's last element at it
        if len(shape) == 2 and shape[0] >= 2 and hi == (shape[0] - 1) * stride + (shape[1] - 1) * strides[1]:
            tail += (f"; or the wrong row stride: these lanes end where {name}'s last row ends with rows {stride} "
                     f"elements apart ({arg} = {stride}{f', {owner}' if owner else ''}), and its rows are "
                     f"{strides[0]} apart")
            break
    return f" ({span}: past the end along dim 0, {rows} of a size-{shape[0]} dim{tail})"


def _other_row_strides(buf, buffers, launch) -> list:
    """(argument, value, whose stride it is) of the launch's stride-named integers the kernel names that are larger
    than ``buf``'s row stride (helper-129: DeepSpeed's softmax handed its input's row stride, 1024, for an output
    whose rows are 1000 apart: told as rows or columns past the end)."""
    from tritondbg.interp import kernel_stores, layouts

    out = []
    for name, value in (launch.args or {}).items():
        if not layouts.stride_named(name) or launch.fn is None or kernel_stores.unused(launch.fn, name):
            continue
        for arg, v in layouts.ints(name, value):
            if v > buf.strides[0] and len(out) < 8:
                owner = next((f"{b.name}.stride({k})" for b in buffers if b.name != buf.name
                              for k, (n, st) in enumerate(zip(b.shape, b.strides)) if n > 1 and st == v), "")
                out.append((arg, int(v), owner))
    return out


def _inner_tail(shape, strides, first: tuple, last: tuple, verb: str = "read") -> str:
    """The other reading of lanes that are the first elements of the one row past the end, not all of it: the
    last row's column index ran past its size (helper-117: a K tail without a mask read "index 3 of a size-3
    dim"), and then every other row's program read the next row there, inside the tensor: no finding shows it
    (``verb``: "wrote" for a store's or an atomic's lanes, helper-123)."""
    nd = len(shape)
    if nd < 2 or first[0] != shape[0] or tuple(first[1:]) != (0,) * (nd - 1) or tuple(last[:-1]) != \
            (shape[0],) + (0,) * (nd - 2) or last[-1] >= shape[-1] - 1:
        return ""
    for k in range(nd - 1):  # rows packed (padded rows: an index past the end reads the padding first); 3-D and
        if strides[k] != shape[k + 1] * strides[k + 1]:  # more alike (helper-136: mlstm's head dim 24 in a block
            return ""                                    # of 32, said "past the end along dim 0" of its batch)
    n = last[-1] + 1
    return (f"; or a dim-{nd - 1} index ran {n} past its size {shape[-1]} from the last row: the other rows' programs then "
            f"{verb} the next row's first {n} element(s), inside the tensor"
            + (", unseen by any check" if verb == "read" else ", where that row's program writes too"))


def outside_view(san, op, cands, addrs, candidates, width) -> np.ndarray:
    """The lanes of ``candidates`` that lie in a candidate view's storage: a kernel that addresses the
    storage with strides of its own (FlagGems' gather and scatter through restride_dim's stride-0 view) reads
    and writes there on a GPU, legally. They go through as they are, as on the GPU: a warning for such a
    restrided view, an error for a plain slice of a larger tensor (helper-56: SGLang's kv_indices, a slice of a
    pool, read one past its end by an off-by-one passed program mode, where no reference tells), a warning again
    for a view of a storage padded to a whole block (``Buffer.padded``: helper-62, triton_kernels' bitmatrix)."""
    inside = np.zeros(addrs.shape, dtype=bool)
    if candidates.any():
        for b in cands:
            inside |= b.in_storage(addrs, width)
        inside &= candidates
    if inside.any():
        buf = next(b for b in cands if b.in_storage(addrs[inside][:1], width)[0])
        slice_ = not buf.restrided and not buf.padded
        step = _slice_step(buf, san.launch.args) if slice_ else None
        e = san._entry("outside_view", frames.site(), buf.name, op, buffer=buf.label(),
                        severity="error" if slice_ and not step else "warning", slice=slice_, padded=buf.padded,
                        storage=(buf.storage[1] - buf.storage[0]) // buf.itemsize, step=step)
        if slice_ and not step and e.get("foreign_stride") is None:
            fs = _foreign_stride(buf, san.launch.argmap().buffers, san.launch.args)
            # only where this access's block starts in the storage between two rows (a block at a row's start
            # reading past its end is a mask's, helper-125: rows built as row * 3 * D, a mask d <= n), or where the
            # launch was handed a stride named for this tensor that none of its dims has (helper-137: a block of
            # rows of a 4-D view, stride_x_seqlen handed as out.stride(-3), starts at a row's start)
            start = ((int(addrs.min()) - buf.data_ptr) // buf.itemsize) % fs["stride"] if fs is not None else 0
            if fs is not None and (start >= fs["width"] or fs.pop("own")):
                e["foreign_stride"] = fs
        inner = min((abs(st) for n, st in zip(buf.shape, buf.strides) if n > 1), default=1)
        if inner > 1:  # elements between the view's own (x[:, ::2]): a kernel that ignores a stride reads them
            e["strides"] = tuple(buf.strides)
        e["lanes"] += int(inside.sum())
        _widen(e, buf.offsets(addrs[inside]))
    return inside


def _foreign_stride(buf, buffers, args: dict) -> dict | None:
    """For a slice whose rows have storage between them (``qkv[:, 0]``): its first such stride that no integer
    argument of the launch equals, with the stride-named integers it was handed and whose tensor has that stride
    (helper-123: rotary handed ``out.stride(-3)`` for ``x = qkv[:, :, 0]``: a stride, not a mask). None when every
    such stride was handed (the kernel can apply it), or the view has none."""
    ints = {k: v for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool)}
    dims = sorted((st, n, d) for d, (n, st) in enumerate(zip(buf.shape, buf.strides)) if n > 1 and st > 0)
    extent = 1
    for st, n, d in dims:
        if st > extent and st not in ints.values():
            handed = []
            for name, v in ints.items():
                if "stride" not in name.lower() or v in buf.strides:
                    continue
                owner = next((f"{b.name}.stride({k})" for b in buffers if b.name != buf.name
                              for k, (m, bst) in enumerate(zip(b.shape, b.strides)) if m > 1 and bst == v), None)
                handed.append(f"{name} = {v}" + (f", as {owner}" if owner else ""))
            base = buf.name.lower().removesuffix("_ptr").removesuffix("ptr") or buf.name.lower()
            own = [h for h in handed if base in h.split(" = ")[0].lower().split("_")]  # x_ptr's: stride_x
            return {"dim": d, "stride": int(st), "width": extent, "handed": (own or handed)[:3], "own": bool(own)}
        extent = max(extent, st * n)
    return None


def _slice_step(buf, args: dict) -> tuple[str, int] | None:
    """(argument, elements) when ``buf`` is one whole slice of a storage made of such slices (``w[0]`` of a
    contiguous ``w``) and the launch was handed that slice's size as an integer: the stride by which a kernel
    reaches the other slices on purpose (helper-69: vLLM's LoRA kernels get ``lora_b_weight[0]`` and
    ``stride(0)`` of the whole weight). None otherwise."""
    if not buf.dense or buf.storage is None or len([n for n in buf.shape if n > 1]) < 2:
        return None  # (a 1-D slice, pool[a:b] handed its length: the off-by-one past its end stays an error)
    size = buf.numel * buf.itemsize
    total = buf.storage[1] - buf.storage[0]
    if size <= 0 or total % size or total // size < 2 or (buf.lo - buf.storage[0]) % size:
        return None
    return next(((name, buf.numel) for name, v in args.items()
                 if isinstance(v, int) and not isinstance(v, bool) and v == buf.numel), None)


def record(san, op, cands, bad, width, n_live, owner: np.ndarray, unmasked: bool = False,
           from_undefined: bool | str = False, descriptor: str | None = None, block_ptr: bool = False) -> None:
    """The out_of_bounds entry for lanes ``bad`` (``owner``: the index of the argument each lies in, -1 none)."""
    site = frames.site()
    argmap = san.launch.argmap()
    buf = cands[0] if cands else None
    e = san._entry("out_of_bounds", site, buf.name if buf else None, op, buffer=buf.label() if buf else None,
                    past=0, before=0, gap=0, misaligned=0, lands=None, live=n_live)
    e["lanes"] += int(bad.size)
    if buf is not None:
        off = buf.offsets(bad)
        rel = buf.distance(bad)  # signed: an address below a low start wraps past 2**64
        span, size = int(buf.hi - buf.lo), int(buf.itemsize)
        past, before = rel >= span, rel < 0
        if past.any():
            e["past"] = max(e["past"], int(((rel[past] - span) // size).max()) + 1)
            e.setdefault("past_min", int(((rel[past] - span) // size).min()) + 1)
        if before.any():
            e["before"] = max(e["before"], int(((-rel[before] + size - 1) // size).max()))
        inside = ~past & ~before
        if inside.any():
            mis = ((bad[inside].astype(np.int64) - buf.data_ptr) % buf.itemsize) != 0
            e["misaligned"] += int(mis.sum())
            e["gap"] += int((~mis).sum())
        _widen(e, off)
        if len(buf.shape) >= 2:  # (index_clause: the range as indices)
            e.setdefault("layout", (tuple(int(n) for n in buf.shape), tuple(int(st) for st in buf.strides)))
            if "row_strides" not in e:
                try:
                    e["row_strides"] = _other_row_strides(buf, argmap.buffers, san.launch)
                except Exception:  # noqa: BLE001 - a hint's bookkeeping must never stop the user's launch
                    e["row_strides"] = []
                    _debug_raise()
        if len(e["offsets"]) < _MAX_SAMPLE:
            e["offsets"] = sorted(set(e["offsets"]) | set(int(o) for o in off[:_MAX_SAMPLE]))[:_MAX_SAMPLE]
    elif len(e["offsets"]) < _MAX_SAMPLE:
        e["offsets"] = [f"0x{int(a):x}" for a in bad[:_MAX_SAMPLE]]
    if from_undefined:
        e["from_undefined"] = from_undefined
    if descriptor:  # a tensor descriptor's load/store: its bounds are the descriptor's shape
        e["descriptor"] = descriptor
    if block_ptr:  # a block pointer's: boundary_check=, not a mask, says which dimensions are checked
        e["block_ptr"] = True
    if san.unmasked_depth or unmasked:
        e["unmasked"] = True
    else:
        e["masked"] = True
    if buf is None:
        if e["lands"] is None:
            e["lands"] = argmap.describe(int(bad[0]), width)[1]
    else:  # lanes past this tensor that fall in another argument's memory: read (or written) there on a GPU,
        mine = next((i for i, b in enumerate(argmap.buffers) if b is buf), -1)  # and in a plain interpreter run,
        elsewhere = (owner >= 0) & (owner != mine)                               # not zeros
        # or in a tensor the launch reached only through a table of pointers (helper-81: a grouped GEMM's K tail
        # read past group b into group c, whose NaN marks the program got, where the finding said "0")
        from tritondbg.interp import guard

        tabled = (owner < 0) & ~inside & guard.reachable(bad, width)
        if op != "load" and san.program_mode and (elsewhere.any() or tabled.any()):  # (program mode's rerun)
            skip_writes(san, e, site, bad[elsewhere | tabled])
        if elsewhere.any() or tabled.any():
            e["in_other"] = e.get("in_other", 0) + int(elsewhere.sum()) + int(tabled.sum())
            landed = e.setdefault("landed", set())  # every argument they landed in (program mode's follow-ons)
            if len(landed) < 16:
                landed.update(argmap.buffers[int(i)].name for i in np.unique(owner[elsewhere]))
            if e["lands"] is None and elsewhere.any():
                e["lands"] = argmap.describe(int(bad[elsewhere][0]), width)[1]
            elif e["lands"] is None:
                at = int(bad[tabled][0])
                held = guard.table_buffer_at(at, width)
                e["lands"] = (f"{held.name}[{int(held.offsets(np.array([at], np.uint64))[0])}]" if held is not None
                              else f"a tensor the launch reached through a pointer table (0x{at:x})")


def skip_writes(san, e: dict, site: tuple, addrs: np.ndarray) -> None:
    """Store / atomic lanes out of bounds that land in another argument (``addrs``): skipped in this run, and kept
    by site (``san.skipped_writes``) so that the run program mode makes without the poison (checker.py) skips them too
    (``guard.skipping``): the message says tritondbg skipped them, and a run without the bug would not write there
    (h88: a load out of bounds too made the program's launch run again plainly, which wrote them into ``x``). Past
    ``_MAX_SKIPPED`` addresses the rest are written there; the entry says so."""
    held = san.skipped_count
    if held + addrs.size > _MAX_SKIPPED:
        e["skip_incomplete"] = True
        return
    san.skipped_count = held + int(addrs.size)
    san.skipped_writes.setdefault(site[:2], []).append(np.array(addrs, dtype=np.uint64, copy=True))


_NARROW = re.compile(r"\.to\(\s*tl\.(u?int(?:8|16))\b|\bastype\(\s*tl\.(u?int(?:8|16))\b|tl\.cast\([^)]*tl\.(u?int(?:8|16))\b")


_NARROW_TOP = {"int8": 127, "uint8": 255, "int16": 32767, "uint16": 65535}


def narrow_cast(e: dict) -> tuple[int, str, str, int] | None:
    """(line, the statement, the type, its largest value) of the last cast to an 8- or 16-bit integer before an out-of-bounds access
    in its function: an index narrowed there wraps past 127 / 32767 (helper-150: GPTQ's index cast to int16, offsets
    before the start with nothing naming the cast). None where the source has none."""
    from tritondbg.missing_return import _function_at

    try:
        fdef = _function_at(e["file"], e.get("function") or "", e["line"])
    except Exception:  # noqa: BLE001 - a hint only
        return None
    if fdef is None:
        return None
    found = None
    for line in range(fdef.lineno, e["line"]):
        text = frames.source_line(e["file"], line) or ""
        m = _NARROW.search(text.split("#")[0])
        if m:
            ty = next(g for g in m.groups() if g)
            found = (line, text.split("#")[0].strip(), ty, _NARROW_TOP[ty])
    return found
