"""Races, from what a launch's programs stored and changed by atomics (``Sanitizer.record_store`` /
``record_atomic``), checked when the launch ends (``report``) and at each store (``check_lanes``):

- two programs' plain stores to one element (different bits: an error; the same bits: a warning);
- lanes of one store to one element (``lane_collisions``);
- one program's plain store and another's atomic on one element (``store_atomic_conflict``);
- a ``scope="cta"`` atomic and another program's atomic on one element (``cta_conflict``);
- a program's plain load of an element another program's plain store writes, in a launch with no atomics
  (``race_reads.read_conflict``: the read sees the old value or the new one, as the programs happen to run).

Each is reported once per launch, at the first such element in program order, as a ``race`` entry of the
sanitizer (its message: findings.py)."""
from __future__ import annotations

import numpy as np

from tritondbg.interp import race_reads

_MAX_SAMPLE = 8


def report(san, launch) -> None:
    """The launch's races, into ``san``'s entries (the store-store race notes when its record was cut short)."""
    race = cta_conflict(san.atomics)
    if race is not None:
        _entry(san, launch, race, "cta_atomic", same_value=False, atomic=race["atomic"])
    race = store_atomic_conflict(san.writes, san.atomics)
    if race is not None:
        _entry(san, launch, race, "store_vs_atomic", same_value=False, atomic=race["atomic"])
    race = program_overlap(san.writes)  # one program's two stores, from other places in their blocks
    if race is not None:
        e = _entry(san, launch, race, "store_overlap", same_value=False, values=race["values"])
        e["severity"] = "warning"
    race = locked_conflict(san.locked)  # stores to one element under locks no one word of which they all held
    if race is not None:
        words = [launch.argmap().describe(a)[1] for a in race["locks"]]
        _entry(san, launch, race, "locked_store", same_value=False, locks=words)
    reads = getattr(san, "reads", None) or []
    race = race_reads.read_conflict(reads, san.writes) if not san.atomics and not san.locked else None
    if race is not None:
        _entry(san, launch, race, "read_write", same_value=race["same_value"])
    for writes in _per_tensor(san.writes, launch):  # one race per tensor (helper-145: a second tensor's race was
        race = race_conflict(writes)                   # only counted in the first's elements)
        if race is None:  # same_value: every racing program wrote the same bits
            continue
        rounding = race.get("rounding")  # apart by rounding only: the same quantity, summed in another order
        e = _entry(san, launch, race, "store", same_value=race["same_value"] or rounding is not None)
        if race.get("values") is not None and "values" not in e:
            e["values"] = race["values"]
        shift = block_shift(writes, race) if not rounding else None
        if not rounding and shift is None and "row_wrap" not in e and "shift" not in e:  # (the first launch's)
            wrap = row_wrap(writes, race, launch)
            if wrap is not None:
                e["row_wrap"] = wrap
        if shift is not None and "shift" not in e:
            buf, _ = launch.argmap().describe(race["addr"])
            size = buf.itemsize if buf is not None else 1
            e["shift"] = dict(step=shift["step"] // size, width=shift["width"], shared=shift["shared"],
                              first=launch.argmap().describe(shift["lo"])[1],
                              last=launch.argmap().describe(shift["hi"])[1])
        if rounding is not None:
            old = e.get("rounding") or (0.0, 0.0)
            e["rounding"] = (max(old[0], rounding[0]), max(old[1], rounding[1]))
        if san.write_count >= san.max_race_elements and not any("were checked" in n for n in e["notes"]):
            e["notes"].append(f"only the first {san.max_race_elements} stored elements of the launch were checked")


def _per_tensor(writes: list, launch):
    """``writes`` split by the memory they hit: each tensor argument's (views of one storage together), then the
    rest (a pointer table's tensors); the whole list where there is one part."""
    spans: list = []
    for lo, hi in sorted((b.lo, b.hi) for b in launch.argmap().buffers):
        if spans and lo < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    if len(spans) < 2 or len(writes) < 2:
        yield writes
        return
    rest = [np.ones(w[0].shape, dtype=bool) for w in writes]
    for span in [*spans, None]:
        part = []
        for i, w in enumerate(writes):
            m = rest[i] if span is None else (w[0] >= np.uint64(span[0])) & (w[0] < np.uint64(span[1]))
            if span is not None:
                rest[i] &= ~m
            if m.all():
                part.append(w)
            elif m.any():
                part.append((w[0][m], w[1], w[2], None if w[3] is None else w[3][m], *w[4:]))
        if len(part) > 1:
            yield part


def _entry(san, launch, race: dict, op: str, same_value: bool, **extra) -> dict:
    """The race entry of the running launch: pid_a's store (or cta atomic) at site_a against pid_b at site_b."""
    buf, desc = launch.argmap().describe(race["addr"])
    pid_a, pid_b = san.pids[race["pid_a"]], san.pids[race["pid_b"]]
    saved = san.pid
    san.pid = pid_a
    e = san._entry("race", san.sites[race["site_a"]], buf.name if buf else None, op, other_pid=list(pid_b),
                   other_line=san.sites[race["site_b"]][1], element=desc, elements=0, same_value=same_value, **extra)
    san.pid = saved
    e["same_value"] = e["same_value"] and same_value  # one launch with different values: an error
    e["elements"] += race["elements"]
    e["lanes"] += race["elements"]
    e["programs"].add(pid_b)
    if buf is not None and len(e["offsets"]) < _MAX_SAMPLE:
        e["offsets"].append(int((race["addr"] - buf.data_ptr) // buf.itemsize))
    return e


def check_lanes(san, addrs, bits, site, live=None, shape=(), code: int = 0) -> None:
    """Lanes of the running program's store that write one element (``lane_collisions``): a race entry at once,
    naming two such lanes by their place in the block (``live``: the store's mask over ``shape``, or None;
    ``code``: the stored floats' kind, ``float_code``)."""
    hit = lane_collisions(addrs, bits, code)
    if hit is None:
        return
    idx = len(san.pids) - 1
    where = lane_places(hit.pop("lane_pair"), live, shape)
    e = _entry(san, san.launch, dict(hit, pid_a=idx, pid_b=idx, site_a=san._site_id(site),
                                     site_b=san._site_id(site)), "store_lanes", same_value=hit["same_value"])
    if hit.get("rounding"):
        e["rounding"] = True
    if where and "lane_places" not in e:
        e["lane_places"] = where
        e["wraps"] = (not hit["one_address"] and len(shape) >= 2
                      and sum(a != b for a, b in zip(*where)) >= 2)


def lane_places(pair, live, shape) -> list | None:
    """The block coordinates of two live lanes (indices into the live lanes, in order) of a store over ``shape``."""
    if not shape:
        return None
    flat = np.flatnonzero(np.asarray(live).reshape(-1)) if live is not None else None
    places = []
    for k in pair:
        at = int(flat[k]) if flat is not None else k
        places.append(tuple(int(i) for i in np.unravel_index(at, shape)))
    return places


# two programs' floats at most this many epsilons of the largest value written there apart: modded-nanogpt's XXT /
# XTX (fp32, K 64-768) measured 1.6-2.9; more lets a real race of small values beside large ones pass (helper-113)
ROUNDING_EPS = 4
# lanes of one store (the same quantity from the same loads, rounded apart by the interpreter's tl.dot): wider
LANE_ROUNDING_EPS = 16


def block_places(live, shape) -> tuple:
    """Where in its block each live lane of a store sits, for ``program_overlap`` (lanes at the same place of blocks
    of one shape are taken to be one thread's): (the block's shape, the live lanes' flat indices as int32, or None
    for every lane: memory the record keeps per stored element)."""
    flat = None if live is None else np.flatnonzero(np.asarray(live).reshape(-1)).astype(np.int32)
    return tuple(shape), flat


def _places(entry) -> np.ndarray:
    """A write's ``block_places`` as one int64 per lane: (a tag of the shape) << 40 | flat index."""
    shape, flat = entry[6]
    if flat is None:
        flat = np.arange(entry[0].size, dtype=np.int64)
    flat = flat.astype(np.int64)
    # a block's first element is thread 0's in any blocked layout, as a scalar store is (helper-118: a block store
    # then ``tl.store(o_ptr, tl.sum(x))``, both tid 0 in the PTX): the same place, whatever the shape
    return np.where(flat == 0, 0, flat | ((hash(shape) & 0xFFFF) << 40))


def program_overlap(writes: list) -> dict | None:
    """The first element (in the stores' order) that plain stores of one program write twice with different bits,
    from other places of their blocks (another lane, or a block of another shape): on a GPU other threads make the
    two stores, and nothing orders them (modded-nanogpt's ``ba_plus_cAA`` stores a tile and its mirror; on a
    diagonal tile of a non-symmetric input the mirror's value meets the tile's; no finding, helper-112). The same
    place of a block of the same shape is one thread's, in program order (an output stored once per loop
    iteration, a zero fill then the result): not told, nor two stores with a ``tl.debug_barrier`` between them
    (a CTA-wide barrier orders its threads' global stores: Liger's cross entropy stores a row's gradient, then the
    target's element after one; helper-124). Returns the element's address, the program, both sites,
    ``elements`` and ``values``; bits unknown are left out."""
    ws = [w for w in writes if len(w) > 6 and w[3] is not None]
    if len(ws) < 2:
        return None
    A = np.concatenate([w[0] for w in ws])
    sorted_a = np.sort(A)
    if not bool((sorted_a[1:] == sorted_a[:-1]).any()):  # every element written once: the common launch, fast
        return None
    P = np.concatenate([np.full(w[0].size, w[1], dtype=np.int64) for w in ws])
    S = np.concatenate([np.full(w[0].size, w[2], dtype=np.int64) for w in ws])
    V = np.concatenate([w[3].astype(np.uint64) for w in ws])
    L = np.concatenate([_places(w) for w in ws])
    Q = np.concatenate([np.full(w[0].size, w[4], dtype=np.int64) for w in ws])
    F = np.concatenate([np.full(w[0].size, w[5], dtype=np.int64) for w in ws])
    E = np.concatenate([np.full(w[0].size, w[7] if len(w) > 7 else 0, dtype=np.int64) for w in ws])
    order = np.lexsort((Q, A, E, P))  # a program's stores between the same two barriers, element by element
    A, P, S, V, L, Q, F, E = A[order], P[order], S[order], V[order], L[order], Q[order], F[order], E[order]
    new = np.r_[True, (A[1:] != A[:-1]) | (P[1:] != P[:-1]) | (E[1:] != E[:-1])]
    starts = np.flatnonzero(new)
    differ = (np.maximum.reduceat(V, starts) != np.minimum.reduceat(V, starts)) & \
        (np.maximum.reduceat(L, starts) != np.minimum.reduceat(L, starts))
    bad = np.flatnonzero(differ)
    if bad.size == 0:
        return None
    # the pair: each element's first store, and the first later store from elsewhere with other bits
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, A.size]))
    # another store's (lanes of one store writing one element are check_lanes' to tell: helper-135 got both)
    other = (V != V[starts][group]) & (L != L[starts][group]) & (Q != Q[starts][group])
    q = np.where(other, Q, np.iinfo(np.int64).max)
    first = np.minimum.reduceat(q, starts)
    told = bad[first[bad] < np.iinfo(np.int64).max]
    if told.size == 0:
        return None
    g = int(told[np.argmin(first[told])])
    i = int(starts[g])
    j = i + int(np.argmin(q[i:int(starts[g + 1]) if g + 1 < starts.size else A.size]))
    return dict(addr=int(A[i]), pid_a=int(P[i]), pid_b=int(P[j]), site_a=int(S[i]), site_b=int(S[j]),
                elements=int(told.size), values=(_value(V[i], F[i]), _value(V[j], F[j])))


def record_locked(san, addrs, site) -> None:
    """A store the running program makes holding locks: for ``locked_conflict`` (counted against the record's bound
    as the plain stores are)."""
    san.locked.append((np.array(addrs, copy=True), len(san.pids) - 1, san._site_id(site), set(san.locks.held)))
    san.write_count += int(addrs.size)


def locked_conflict(locked: list) -> dict | None:
    """The first element that stores of more than one program wrote holding locks, where no lock word was held by
    every one of those stores (Eraser's lockset rule), from ``locked`` [(addresses, program index, site id, lock
    words held)], or None. helper-140: Cut Cross-Entropy's LSE update with the lock index planted wrong
    (``Locks + pid_v % num_locks``: programs of one row took different words) had no finding, as every store under
    any lock was taken for ordered."""
    if len(locked) < 2:
        return None
    sets = list(dict.fromkeys(frozenset(w[3]) for w in locked))
    ids = {ls: i for i, ls in enumerate(sets)}
    A = np.concatenate([w[0] for w in locked])
    P = np.concatenate([np.full(w[0].size, w[1], dtype=np.int64) for w in locked])
    S = np.concatenate([np.full(w[0].size, w[2], dtype=np.int64) for w in locked])
    L = np.concatenate([np.full(w[0].size, ids[frozenset(w[3])], dtype=np.int64) for w in locked])
    order = np.lexsort((P, A))
    A, P, S, L = A[order], P[order], S[order], L[order]
    starts = np.flatnonzero(np.r_[True, A[1:] != A[:-1]])
    several = np.maximum.reduceat(P, starts) != np.minimum.reduceat(P, starts)
    mixed = np.maximum.reduceat(L, starts) != np.minimum.reduceat(L, starts)  # one lockset throughout: ordered
    for g in np.flatnonzero(several & mixed).tolist():
        lo = int(starts[g])
        hi = int(starts[g + 1]) if g + 1 < starts.size else A.size
        if frozenset.intersection(*(sets[i] for i in set(L[lo:hi].tolist()))):
            continue
        j = lo + int(np.flatnonzero((P[lo:hi] != P[lo]) & (L[lo:hi] != L[lo]))[0])
        mine, theirs = sorted(sets[L[lo]] - sets[L[j]]), sorted(sets[L[j]] - sets[L[lo]])
        return dict(addr=int(A[lo]), pid_a=int(P[lo]), pid_b=int(P[j]), site_a=int(S[lo]), site_b=int(S[j]),
                    elements=1, locks=[mine[0] if mine else min(sets[L[lo]]), theirs[0] if theirs else min(sets[L[j]])])
    return None


def race_conflict(writes: list) -> dict | None:
    """The first element that plain stores of more than one program write with different bits (the one raced
    first, in the order the stores ran: addresses change from run to run, so the lowest would name another pair of
    lines in another run), from a launch's ``writes`` [(addresses, program index, site id, stored bits or None,
    seq, ``float_code``)], or None when no element
    is written by several programs. Where every such element got the same bits from each program (every program
    sets a done flag to 1: harmless; or each program's sum of a torch.ones input: a race the input hides),
    ``same_value`` is True: a warning, not an error. Where every such element got floats apart by no more than
    rounding (``rounding_gap``), ``rounding`` is (the largest gap, the largest value written there): also a
    warning. Two programs computed the same quantity, summed in another order (modded-nanogpt's XXT stores its tile
    and the tile's mirror, and overlapping tiles meet; the interpreter's tl.dot sums with numpy, in an order that
    depends on the element's place in the tile: 6e-8 apart in fp32, 1 ulp in bf16). Returns the element's address,
    both program indices and store sites, ``elements`` (how many elements), ``same_value`` and ``rounding``."""
    if len(writes) < 2:
        return None
    A = np.concatenate([w[0] for w in writes])
    P = np.concatenate([np.full(w[0].size, w[1], dtype=np.int64) for w in writes])
    S = np.concatenate([np.full(w[0].size, w[2], dtype=np.int64) for w in writes])
    V = np.concatenate([np.zeros(w[0].size, np.uint64) if w[3] is None else w[3].astype(np.uint64) for w in writes])
    U = np.concatenate([np.full(w[0].size, w[3] is None) for w in writes])  # bits unknown: assume they differ
    F = np.concatenate([np.full(w[0].size, w[5] if len(w) > 5 else 0, dtype=np.int64) for w in writes])  # float_code
    Q = np.concatenate([np.full(w[0].size, w[4] if len(w) > 4 else 0, dtype=np.int64) for w in writes])
    order = np.lexsort((P, A))  # stable: one program's stores to an element stay in program order
    A, P, S, V, U, Q, F = A[order], P[order], S[order], V[order], U[order], Q[order], F[order]
    starts = np.flatnonzero(np.r_[True, A[1:] != A[:-1]])
    several = np.maximum.reduceat(P, starts) != np.minimum.reduceat(P, starts)
    differ = (np.maximum.reduceat(V, starts) != np.minimum.reduceat(V, starts)) | np.logical_or.reduceat(U, starts)
    bad = np.flatnonzero(several & differ)
    same = bad.size == 0
    rounding = rounding_gap(V, U, F, starts, several, bad)
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
                elements=int(bad.size), same_value=bool(same), rounding=rounding,
                values=None if same or U[lo] or U[j] else (_value(V[lo], F[lo]), _value(V[j], F[j])))


def block_shift(writes: list, race: dict) -> dict | None:
    """Where the two programs of a store race wrote, at one line, the same block moved by ``step`` bytes (each's
    elements are the other's shifted: same count, same pattern) and the blocks overlap: a block wider than the step
    between programs, as a store missing its mask on a row's end writes the next row's first elements, which that
    row's program writes too (session 63: such a race advised tl.atomic_*, which would not fix it); step 0: the very
    same block, offsets that do not depend on the axis the programs differ in (helper-148: a pid read from the wrong
    axis was a "done flag" warning; split-K's partial tiles stored plainly are this too). Returns step,
    width (elements of a block), shared (elements both write) and lo / hi (pid_a's block's first and last address),
    or None."""
    if race["site_a"] != race["site_b"] or race["pid_a"] == race["pid_b"]:
        return None
    blocks = []
    for pid in (race["pid_a"], race["pid_b"]):
        mine = [w[0] for w in writes if w[1] == pid and w[2] == race["site_a"]]
        blocks.append(np.unique(np.concatenate(mine)) if mine else np.zeros(0, np.uint64))
    a, b = blocks
    if a.size < 2 or a.size != b.size:
        return None
    step = int(b[0]) - int(a[0])
    if not np.array_equal(a.astype(np.int64) + step, b.astype(np.int64)):
        return None
    shared = int(np.intersect1d(a, b, assume_unique=True).size)
    if not shared:
        return None
    return dict(step=abs(step), width=int(a.size), shared=shared, lo=int(a[0]), hi=int(a[-1]))


def row_wrap(writes: list, race: dict, launch) -> dict | None:
    """Where one of the two programs of a store race wrote, at the race's line, both the element raced on (the
    first of a row of a 2-D or wider tensor whose rows are contiguous) and the last element of the row before: its
    block runs past a row's end into the next row, which that row's program writes too (helper-154: DeepSeek-V3's
    fp8_gemm with its column mask `<= N`; tiles narrower than the last one, so no ``block_shift``; the race said to
    use atomics). Returns which of the two wraps (``a``: race's pid_a) and both elements' names, or None."""
    if race["site_a"] != race["site_b"]:
        return None
    buf, _ = launch.argmap().describe(race["addr"])
    if buf is None or len(buf.shape) < 2 or buf.shape[-1] < 2 or buf.strides[-1] < 1 or \
            buf.strides[-2] != buf.shape[-1] * buf.strides[-1]:
        return None
    idx = buf.index((race["addr"] - buf.data_ptr) // buf.itemsize)
    if idx is None or idx[-1] != 0 or idx[-2] == 0:
        return None
    prev = race["addr"] - buf.strides[-1] * buf.itemsize  # (rows contiguous: the row before ends one element back)

    def wrote(pid, addr):
        return any(w[1] == pid and w[2] == race["site_a"] and bool((w[0] == np.uint64(addr)).any()) for w in writes)

    row_start = prev - (buf.shape[-1] - 1) * buf.strides[-1] * buf.itemsize  # (the row before's first element)
    for wrapper, owner, a in ((race["pid_b"], race["pid_a"], False), (race["pid_a"], race["pid_b"], True)):
        # (a: the wrapping program is the entry's first pid; one that wrote the row before from its start holds
        # whole rows, a flattened block's, not a column tile's)
        if wrote(wrapper, prev) and not wrote(owner, prev) and not wrote(wrapper, row_start):
            return dict(a=a, last=buf.where(prev), first=buf.where(race["addr"]))
    return None


def _value(bits, code: int):
    """One stored element's value from its bits, for the message (helper-112: "1 ulp" would have settled it): a
    float where ``code`` says which (``float_code``), a signed integer of its width, else the bits as an integer."""
    if code > 0:
        return float(_floats(np.array([bits], dtype=np.uint64), int(code))[0])
    if code < 0:
        return int(np.array([bits], dtype=np.uint64).astype(f"u{-code}").view(f"i{-code}")[0])
    return int(bits) if int(bits) < 1 << 31 else hex(int(bits))  # (its width and sign are not kept: bits)


def _floats(bits, code: int):
    if code == 3:
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return bits.astype(f"u{code}").view(f"f{code}").astype(np.float64)


def rounding_gap(V, U, F, starts, several, bad, epsilons: int = ROUNDING_EPS) -> tuple | None:
    """(the largest gap, the largest magnitude written) when the differing elements (``bad``, groups of ``starts``
    of the stored bits ``V``) all got known floats of one kind (``F``: ``float_code``), none of them 0 against a
    value that is not, no further apart than ROUNDING_EPS epsilons of the largest magnitude any element written by
    several programs got (a summation's rounding is relative to its terms, not its result: a sum that cancels to
    near 0 differs by many units in its own last place); else None. (helper-113: with 8 epsilons, 1e5 written
    elsewhere let 0.0 against 0.05 pass as rounding)"""
    if bad.size == 0:
        return None
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, V.size]))
    rows, shared = np.isin(group, bad), np.isin(group, np.flatnonzero(several))
    codes = np.unique(F[shared])
    if bool(U[rows].any()) or codes.size != 1 or int(codes[0]) <= 0:
        return None
    code = int(codes[0])
    vals = _floats(V, code)
    if not bool(np.isfinite(vals[shared]).all()):
        return None
    scale = float(np.abs(vals[shared]).max())
    grp = group[rows]
    gstarts = np.flatnonzero(np.r_[True, grp[1:] != grp[:-1]])
    hi, lo = np.maximum.reduceat(vals[rows], gstarts), np.minimum.reduceat(vals[rows], gstarts)
    zero = np.maximum.reduceat((vals[rows] == 0).astype(np.int8), gstarts) > 0
    if bool((zero & ((hi != 0) | (lo != 0))).any()):  # 0 against a value: no rounding of a sum makes that
        return None
    gap = float((hi - lo).max())
    eps = {2: 2.0 ** -10, 3: 2.0 ** -7, 4: 2.0 ** -23, 8: 2.0 ** -52}[code]
    return (gap, scale) if gap <= epsilons * eps * scale else None


def _rounding_only(B, starts, several, bad, code: int) -> bool:
    """Whether the colliding lanes' floats (``B``: bits, sorted by address) differ by rounding only in every group
    ``bad``, as ``rounding_gap`` judges programs: the same quantity summed in another order (the interpreter's
    tl.dot rounds a tile's duplicated columns apart: vLLM's fused_moe wraps ``offs_bn % N``; helper-135)."""
    if code <= 0:
        return False
    known = np.zeros(B.size, dtype=bool)  # (no lane's bits are unknown here: stored_bits gave them all)
    # lanes of one store compute one quantity from the same loads (a wrapped ``offs % N``): only the interpreter's
    # tl.dot rounds them apart, and an activation after it keeps the gap while its result shrinks (kernl's fp32
    # tanh: 5 epsilons of 1.0, helper-139), so their bound is wider than programs' (still told: a warning)
    return rounding_gap(B, known, np.full(B.size, code, dtype=np.int64), starts, several, bad,
                        LANE_ROUNDING_EPS) is not None


def lane_collisions(addrs, bits, code: int = 0) -> dict | None:
    """Lanes of one store that write the same element (``addrs``: the live lanes' addresses, ``bits``: what each
    writes, or None): the GPU keeps one lane's value, which one unspecified. With different values (a block stored
    through a scalar pointer) an error; with the same value, a warning where only some lanes collide (a histogram
    updated by load + 1 and store loses the repeats; each lane wrote the same count), nothing where every lane
    writes one element (a scalar stored through a block). Returns the first such element's address, ``elements``
    and ``same_value``."""
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
    rounding = not same and bits is not None and _rounding_only(B, starts, several, bad, code)
    if same or rounding:
        if starts.size == 1:
            return None
        bad = np.flatnonzero(several)
        same = True
    lo = int(starts[bad[0]])
    hi = int(starts[bad[0] + 1]) if bad[0] + 1 < starts.size else A.size
    other = lo + 1
    if bits is not None and not same:  # a lane that writes other bits than the first
        other = lo + int(np.flatnonzero(B[lo:hi] != B[lo])[0])
    return dict(addr=int(A[lo]), elements=int(bad.size), same_value=bool(same), rounding=bool(rounding),
                lane_pair=(int(order[lo]), int(order[other])), one_address=starts.size == 1)


def cta_conflict(atomics: list) -> dict | None:
    """The first element (by the atomics' order) that a ``scope="cta"`` atomic of one program and an atomic of
    another program both change, from a launch's ``atomics`` [(addresses, program index, site id, seq, op, cta)]: a
    cta-scope atomic is atomic among one program's threads only, so on a GPU another program's update of the element
    can be lost (the interpreter, one program at a time, adds them all). Returns the element's address, the cta
    atomic's and the other program's indices and sites, the atomic's name and ``elements``."""
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
