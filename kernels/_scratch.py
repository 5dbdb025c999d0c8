"""Scratch buffers of the bundled kernels' one-launch merges, one set per (device, stream).

Four launch paths keep device memory between launches: the split-K decode kernel (kernels/_splitk.py: fp32
partials and per-tile arrival counters), gemm_tma_kernel's split tail (kernels/_gemm_tma.py), the Gluon gemm's
split-K tiles (kernels/_gemm_gluon.py) and decode attention's split merge (kernels/_attention_decode.py); the
persistent Gluon prefill keeps a pair of tile counters (kernels/_attention_gluon.py). Each launch expects the
counters at zero and leaves them so; the partials are written before they are read. Kernel boundaries on one
stream order one launch's last store before the next launch's first atomic, so launches in one stream's order
can share a set. Two launches running at once on two streams cannot: the second would count the first one's
arrivals and sum its partials. So every set belongs to one (device, stream) pair: ``buffer`` hands out
zero-initialised tensors per (kind, device, stream, power-of-two size), and a ``Scratch`` is the set one
launch path needs, looked up for the launching stream on every launch (kernels/_launch.py ``Launcher``:
~0.2 us of host time).

Buffers are never freed or replaced: a CUDA graph that captured a launch keeps valid pointers (the graph's
replays then use the capturing stream's set, in the replay stream's order; a replay running while launches on
the capturing stream itself run would share that set with them, which torch's own capture stream never sees).
A set first asked for during a capture is made there (from the graph's memory pool; tests/gpu/test_streams_gpu.py
replays such graphs). torch hands out streams from a
fixed pool per device (plus the default stream), so the sets stay few; each is zeroed on the stream that
first asks for it, before any launch on that stream can use it.
"""
from __future__ import annotations

import torch

_BUFFERS: dict[tuple, torch.Tensor] = {}  # (kind, device, stream, size class) -> tensor; kept for the process's life
_HAS_STREAMS = hasattr(torch._C, "_cuda_getCurrentRawStream")


def _pow2(n: int) -> int:
    n = max(int(n), 1)
    return 1 << (n - 1).bit_length()


def device_of(device) -> torch.device:
    """``device`` with its index filled in (``cuda`` -> ``cuda:<current>``): one key per physical device."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


def buffer(kind: str, device, numel: int, dtype: torch.dtype, stream: int) -> torch.Tensor:
    """A zero-initialised buffer of at least ``numel`` elements for ``stream`` (a raw stream handle of
    ``device``; 0 on the CPU), shared by every launch path that asks for ``kind`` on that (device, stream)."""
    device = device_of(device)
    key = (kind, device, stream, _pow2(numel))
    buf = _BUFFERS.get(key)
    if buf is None:
        buf = _BUFFERS[key] = torch.zeros(key[3], device=device, dtype=dtype)
    return buf


def buffers(kind: str) -> list:
    """Every buffer of ``kind`` handed out so far, on any device and stream (tests: counters left at zero)."""
    return [t for k, t in _BUFFERS.items() if k[0] == kind]


class Scratch:
    """The buffers one launch path needs: ``specs`` = ((kind, numel, dtype), ...). ``scratch()`` returns them for
    the current stream of ``device`` (a tuple of tensors, in ``specs`` order); ``scratch.ptrs(stream)`` their data
    pointers for the raw stream handle a launcher already has (kernels/_launch.py: one dict lookup a launch)."""

    __slots__ = ("device", "idx", "specs", "sets", "ptr_sets")

    def __init__(self, device, *specs):
        self.device = device_of(device)
        self.idx = self.device.index if self.device.type == "cuda" and _HAS_STREAMS else None
        self.specs = tuple(specs)
        self.sets: dict = {}      # stream -> tuple of tensors
        self.ptr_sets: dict = {}  # stream -> tuple of data pointers

    def _fetch(self, stream: int) -> tuple:
        got = tuple(buffer(kind, self.device, numel, dtype, stream) for kind, numel, dtype in self.specs)
        self.ptr_sets[stream] = tuple(t.data_ptr() for t in got)
        self.sets[stream] = got
        return got

    def stream(self) -> int:
        """The raw handle of the device's current stream (0 on the CPU)."""
        return 0 if self.idx is None else torch._C._cuda_getCurrentRawStream(self.idx)

    def __call__(self) -> tuple:
        stream = self.stream()
        got = self.sets.get(stream)
        return got if got is not None else self._fetch(stream)

    def ptrs(self, stream: int) -> tuple:
        got = self.ptr_sets.get(stream)
        if got is None:
            self._fetch(stream)
            got = self.ptr_sets[stream]
        return got
