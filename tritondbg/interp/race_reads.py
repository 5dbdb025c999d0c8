"""The read/write race: a program's plain load of an element another program's plain store writes in the same
launch (``record_read`` per load, from memops; ``read_conflict`` at the launch's end, called by ``races.report``)."""
from __future__ import annotations

import numpy as np

from tritondbg.interp.race_bits import stored_bits

_MAX_READ_ELEMENTS = 1 << 22  # loaded elements kept per launch for read_conflict (memory); later loads are not
capped: dict = {}  # kernel name -> its launches whose loads passed the bound: told (``note``), never a silent pass


def record_read(san, ptrs, value, live, site) -> None:
    """A plain load of the running program (``live``: its lanes read, None for all): kept for ``read_conflict``,
    unless made holding a lock (ordered) or past the record's bound."""
    if san.locks or san.launch is None:
        return
    count = getattr(san, "read_count", 0)  # (both reset at each launch's end: Sanitizer.launch_end)
    if count >= _MAX_READ_ELEMENTS:
        if not getattr(san, "read_capped", False):  # (reset at the launch's end: Sanitizer.launch_end)
            san.read_capped = True
            capped[san.launch.kernel] = capped.get(san.launch.kernel, 0) + 1
        return
    p = np.asarray(ptrs.data)
    on = None if live is None else np.broadcast_to(np.asarray(live, dtype=bool), p.shape)
    addrs = (p.reshape(-1) if on is None else p[on]).astype(np.uint64, copy=True)
    if not addrs.size:
        return
    san.mem_seq += 1
    if not hasattr(san, "reads"):
        san.reads = []
    san.reads.append((addrs, len(san.pids) - 1, san._site_id(site), stored_bits(value, on, p.shape), san.mem_seq))
    san.read_count = count + int(addrs.size)


def read_conflict(reads: list, writes: list) -> dict | None:
    """The first plain load (in program order) of an element that another program's plain store writes in the same
    launch, from ``reads`` [(addresses, program index, site id, bits read or None, seq)] and ``writes`` (as
    ``race_conflict`` takes them), or None. helper-144: applied-ai's paged attention v2 has every partition read
    scratch rows partition 0 writes, "synchronised" by tl.debug_barrier (one program's threads only); 0 findings.
    ``same_value``: every store there wrote the bits each load read, and the load read them before any of those
    stores or after its own program's (every program writes the same scratch rows, then reads them: paged attention
    v2 on one input), so no order of the programs gives it another value on this input."""
    if not reads or not writes:
        return None
    WA = np.concatenate([w[0] for w in writes])
    RA = np.concatenate([r[0] for r in reads])
    inside = (RA >= WA.min()) & (RA <= WA.max())
    if not inside.any():
        return None
    WP = np.concatenate([np.full(w[0].size, w[1], dtype=np.int64) for w in writes])
    WS = np.concatenate([np.full(w[0].size, w[2], dtype=np.int64) for w in writes])
    WV = np.concatenate([np.zeros(w[0].size, np.uint64) if w[3] is None else w[3].astype(np.uint64) for w in writes])
    WU = np.concatenate([np.full(w[0].size, w[3] is None) for w in writes])
    WQ = np.concatenate([np.full(w[0].size, w[4], dtype=np.int64) for w in writes])
    order = np.lexsort((WP, WA))
    WA, WP, WS, WV, WU, WQ = WA[order], WP[order], WS[order], WV[order], WU[order], WQ[order]
    starts = np.flatnonzero(np.r_[True, WA[1:] != WA[:-1]])
    ua = WA[starts]
    lo_p, hi_p = np.minimum.reduceat(WP, starts), np.maximum.reduceat(WP, starts)
    RP = np.concatenate([np.full(r[0].size, r[1], dtype=np.int64) for r in reads])
    idx = np.minimum(np.searchsorted(ua, RA), ua.size - 1)
    bad = inside & (ua[idx] == RA) & ((lo_p[idx] != RP) | (hi_p[idx] != RP))
    if not bad.any():
        return None
    k = np.flatnonzero(bad)
    RQ = np.concatenate([np.full(r[0].size, r[4], dtype=np.int64) for r in reads])
    RS = np.concatenate([np.full(r[0].size, r[2], dtype=np.int64) for r in reads])
    RV = np.concatenate([np.zeros(r[0].size, np.uint64) if r[3] is None else np.asarray(r[3]).astype(np.uint64)
                         for r in reads])
    RU = np.concatenate([np.full(r[0].size, r[3] is None) for r in reads])
    lo_v, hi_v = np.minimum.reduceat(WV, starts), np.maximum.reduceat(WV, starts)
    unknown = np.logical_or.reduceat(WU, starts)
    g = idx[k]
    # the stores wrote what was there already: known only where the load ran before them and read the old value
    # (a load after the store reads what it wrote, whatever was there before: helper-146, a chained scan's hand-over
    # from the program before was "the same value on this input", a warning, exit 0)
    before = (RQ[k] < np.minimum.reduceat(WQ, starts)[g]) | _own_store_first(WA, WP, WQ, RA[k], RP[k], RQ[k])
    same = bool((before & ~unknown[g] & ~RU[k] & (lo_v[g] == hi_v[g]) & (lo_v[g] == RV[k])).all())
    first = int(k[np.argmin(RQ[k])])  # (the earliest load; its first such lane)
    lo = int(starts[idx[first]])
    hi = int(starts[idx[first] + 1]) if idx[first] + 1 < starts.size else WA.size
    j = lo + int(np.flatnonzero(WP[lo:hi] != RP[first])[0])
    return dict(addr=int(RA[first]), pid_a=int(RP[first]), pid_b=int(WP[j]), site_a=int(RS[first]),
                site_b=int(WS[j]), elements=int(np.unique(RA[k]).size), same_value=same)


def _own_store_first(WA, WP, WQ, ra, rp, rq) -> np.ndarray:
    """Per load lane (address ``ra``, program ``rp``, seq ``rq``): its program stored to that address before it
    (``WA``/``WP``/``WQ``: the launch's stores, sorted by address then program)."""
    base, span = int(WA.min()), int(max(WP.max(), rp.max())) + 1
    if (int(WA.max()) - base + 1) * span >= 1 << 62:
        return np.zeros(ra.shape, dtype=bool)
    key = (WA - np.uint64(base)).astype(np.int64) * span + WP
    pair = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    first_seq = np.minimum.reduceat(WQ, pair)
    want = (ra - np.uint64(base)).astype(np.int64) * span + rp
    at = np.minimum(np.searchsorted(key[pair], want), pair.size - 1)
    return (key[pair][at] == want) & (first_seq[at] < rq)


def note(counted: dict | None = None) -> str | None:
    """The run's line on the launches whose loads passed the bound (``counted``: kernel -> launches, merged over a
    program's processes; else this process's), or None: a load after the bound is not compared with the other
    programs' stores, so the read race check ran on part of those launches only."""
    counted = capped if counted is None else counted
    if not counted:
        return None
    from tritondbg.interp.gpu_compile import kernels_named

    return (f"{sum(counted.values())} launch(es) of {kernels_named(sorted(counted))} loaded more than "
            f"{_MAX_READ_ELEMENTS:,} elements: the read race check (a load that sees another program's store) "
            f"covered their first {_MAX_READ_ELEMENTS:,} only (a smaller shape checks them all)")
