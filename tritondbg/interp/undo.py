"""What a launch overwrote, to put it back (program mode runs a launch whose sanitized run made poison again
from the state before it: program/checker.py).

For CPU tensors the interpreter writes the tensors' own memory, so the sanitizer's memory wrappers record here,
before each store, atomic or CAS, the bits of the lanes it is about to write (only those): the cost follows what
the launch writes, where a copy of every tensor before every launch followed their sizes (a kernel that writes one
row of a large cache). ``undo`` writes them back, newest first, so each element ends as it was before the launch.
Past ``max_lanes`` recorded lanes the journal gives up (``complete`` False) and frees what it held.
"""
from __future__ import annotations

import numpy as np

from tritondbg.interp.values import element_width

MAX_LANES = 1 << 26  # 64M lanes: up to ~1 GB of addresses and bits


class Journal:
    def __init__(self, max_lanes: int | None = None):
        self.entries: list[tuple[np.ndarray, np.ndarray]] = []  # (addresses, the bits they held)
        self.spans: list[tuple[int, int]] = []                  # (lowest, highest) address of each entry
        self.lanes = 0
        self.max_lanes = MAX_LANES if max_lanes is None else max_lanes
        self.complete = True

    def record(self, ptrs, mask) -> None:
        """Before ``ptrs`` (a pointer TensorHandle) is written where ``mask`` (None: every lane) is on."""
        if not self.complete:
            return
        from triton.runtime.interpreter import _interpreter

        p = ptrs.data
        if mask is None:  # a copy either way: the lanes' addresses as they are now
            addrs = np.array(p.reshape(-1), dtype=np.uint64)
        else:
            addrs = p[np.broadcast_to(np.asarray(mask, dtype=bool), p.shape)].astype(np.uint64, copy=False)
        if addrs.size == 0:
            return
        self.lanes += int(addrs.size)
        if self.lanes > self.max_lanes:
            self.complete, self.entries, self.spans = False, [], []
            return
        width = element_width(ptrs.get_element_ty())
        bits = np.dtype(f"u{width}")
        on = np.ones(addrs.shape, dtype=bool)
        self.entries.append((addrs, _interpreter.load(addrs, on, np.zeros(addrs.shape, bits), bits)))
        self.spans.append((int(addrs.min()), int(addrs.max())))

    def undo(self) -> None:
        put_back(self.entries)
        self.entries, self.spans = [], []

    def touched(self, lo: int, hi: int) -> bool:
        """Whether a recorded write may land in [lo, hi) (by the span of each entry: a gap may say True)."""
        return any(a < hi and b >= lo for a, b in self.spans)


def put_back(entries) -> None:
    """Write back the bytes ``entries`` (a journal's, oldest first) found before their writes."""
    from triton.runtime.interpreter import _interpreter

    for addrs, old in reversed(entries):
        _interpreter.store(addrs, old, np.ones(addrs.shape, dtype=bool))
