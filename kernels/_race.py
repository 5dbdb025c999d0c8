"""The race that decides, per call signature, whether a Hopper call runs the tl kernels or a hand-written Gluon
kernel (gemm and fp8_gemm: kernels/_gemm_ws.py; attention prefill: kernels/_attention_race.py).

``run`` takes the tl path's first output (``ref``), its steady-state call and the candidates' builders:
1. each candidate is built (compiled, launched once into a NaN-filled output) and checked against ``ref``; one
   that fails to build or disagrees drops out (a ``ref`` that is not all finite races nothing: the next call of
   the signature does);
2. the tl call and each remaining candidate are timed on the GPU (``_time``: median, L2 flushed before each call,
   host time excluded) in ROUNDS rounds of rotated order (the GPU's clock drifts under load: timed one after the
   other, whoever runs last runs on a hotter GPU), each contender's median round counting;
3. the fastest candidate wins if at least MARGIN faster (a tie keeps the tl kernel, which the interpreter checks);
   its plan goes into ``plans[sig]`` and recomputes ``ref`` (every call of a signature returns the same bits);
4. a near-tie (the best candidate no slower than the tl path, but less than MARGIN ahead) is broken with the L2
   warm (``_time(warm=True)``: no flush, the operands left in the L2 by the call before, as a CUDA graph's replay
   or a repeated call has them): the candidate wins if MARGIN faster there. It then costs nothing where the
   operands come from HBM and gains where they do not. Why: the fp8 decode race at 1x4096x4096 (session 47-48,
   H100) led by 0.7-6.9% with the L2 flushed, against a 1.5% margin, so a process kept the tl kernel or not by
   chance, while under graph replay the Gluon kernel was 19-23% faster; the perf gate's row flipped with it.
Why GPU time: under tritondbg run / check / profile, tools patch the tl autotuners' launch path, so the tl contender
has no cached launcher and its steady call carries the autotuner's and binder's Python (and a profiler's). Timed
with do_bench, that host time showed wherever it outlasted the L2 flush: under ``tritondbg profile`` the tl gemm
measured 154.3 us against ~40 in a plain process (H200, 127x4096x11008), and the Gluon kernel won races there that
it loses in production.
``DECISIONS`` keeps each signature's record (``tritondbg profile`` reports new ones as decisions; tests/bench
scripts print them): {"tl": us, "ws": {candidate: us or why it dropped}, "pick": candidate or None, "tiles":
{candidate: its parameters}, "key": {"op": ..., the signature's fields}, "kernel": the Gluon kernel's name}.
"""
from __future__ import annotations

import os

import torch

from . import _launch

MARGIN = 0.03  # a candidate must be this much faster than the tl path
REP_MS = 24  # timing budget per contender, over ROUNDS rounds
ROUNDS = 3
DECISIONS: dict = {}
_RACING: set = set()


def _failure(e: Exception) -> str:
    """A candidate's exception as its race record: type and last line."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[-1] if lines else ''}"[:200]


def agrees(out, ref) -> bool:
    """``out`` matches the tl kernel's ``ref`` up to the output dtype's rounding (twice, 2^-7 of the largest
    output, with room): a missing tile, garbage or a NaN fails."""
    ref = ref.float()
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    return bool(((out.float() - ref).abs() <= 2.0 ** -6 * scale + 1e-6).all())


def _margin(margin: float) -> float:
    """``TRITONDBG_RACE_MARGIN`` (a fraction, e.g. 0.01) replaces every race's margin: what the benchmarks measure
    the margin with; unset or not a number in [0, 1): the race's own."""
    try:
        value = float(os.environ.get("TRITONDBG_RACE_MARGIN", ""))
    except ValueError:
        return margin
    return value if 0.0 <= value < 1.0 else margin


def pick(tl_us: float, ws_us: dict, margin: float = MARGIN) -> str | None:
    """The winning candidate's name, or None: the tl path stays unless a candidate is ``margin`` faster."""
    timed = {k: v for k, v in ws_us.items() if isinstance(v, float)}
    if not timed or tl_us is None:
        return None
    best = min(timed, key=timed.get)
    return best if timed[best] < tl_us * (1.0 - margin) else None


SLEEP_CYCLES_PER_US = 2000  # torch.cuda._sleep spins this many cycles a microsecond at 2 GHz (slower clock: longer)
CUSHION_US = 30  # GPU sleep beyond twice the call's measured host time


def _time(fn, clean: bool = False, warm: bool = False) -> float:
    """``fn``'s GPU time in us: the median over repeated calls, L2 flushed before each (as do_bench does), the host
    part excluded. ``clean``: the flush reads a buffer larger than the L2 instead of writing one, so the call starts
    with an L2 of clean lines (do_bench's flush leaves ~50 MB of dirty lines, whose write-back a short call pays).
    ``warm``: no flush (the L2 holds what the call before left: the near-tie's second timing).
    Before each timed call the stream sleeps for longer than the call's host part takes (measured
    once: twice it, plus CUSHION_US), so the call is queued by the time the GPU reaches the start event; do_bench
    counts whatever host time outlasts its L2 flush. About REP_MS / ROUNDS of wall time, 3 to 100 calls."""
    import time

    from triton import runtime

    driver = runtime.driver.active
    cache = driver.get_empty_cache_for_benchmark()
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    host_us = (time.perf_counter() - t0) * 1e6
    cycles = int((2 * host_us + CUSHION_US) * SLEEP_CYCLES_PER_US)

    def timed(n: int) -> list:
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        for start, end in events:
            if clean:
                cache.sum(dtype=torch.int32)
            elif not warm:
                driver.clear_cache(cache)
            torch.cuda._sleep(cycles)
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return sorted(start.elapsed_time(end) * 1e3 for start, end in events)

    estimate = timed(1)[0]
    per_call_us = max(estimate, host_us) + 2 * host_us + CUSHION_US + 20  # + the flush, roughly
    ts = timed(max(3, min(100, int(REP_MS * 1e3 / ROUNDS / per_call_us))))
    return ts[len(ts) // 2]


def _rounds(fns: dict, timer, record: dict, winners: dict) -> dict:
    """Each of ``fns`` (name -> call; "tl" the tl path) timed with ``timer`` in ROUNDS rounds of rotated order:
    name -> its median round. A candidate that raises drops out (its record says why); the tl path's errors
    propagate."""
    times = {name: [] for name in fns}
    order, live = list(fns), dict(fns)
    for r in range(ROUNDS):
        for name in order[r % len(order):] + order[:r % len(order)]:
            if name not in live:
                continue
            try:
                times[name].append(timer(live[name]))
            except Exception as e:  # noqa: BLE001 - out of resources at launch: this candidate drops out
                if name == "tl":
                    raise
                record["ws"][name] = _failure(e)
                del live[name]
                winners.pop(name, None)
    return {name: sorted(ts)[len(ts) // 2] for name, ts in times.items() if name in live}


def _near_tie(record: dict, margin: float) -> str | None:
    """The best timed candidate where no candidate won but it was no slower than the tl path, else None."""
    timed = {k: v for k, v in record["ws"].items() if isinstance(v, float)}
    if record["pick"] is not None or not timed or record["tl"] is None or margin <= 0:
        return None
    best = min(timed, key=timed.get)
    return best if timed[best] <= record["tl"] else None


def run(sig, key: dict, ref, steady, builds: dict, call, plans: dict, *, kernel: str, tiles: dict | None = None,
        timer=None, agree=None, margin: float = MARGIN, warm_timer=None):
    """Race ``builds`` (name -> build(out) -> plan: compile, launch once into ``out``) against ``steady`` (the
    tl path's steady-state call) for signature ``sig``, whose tl output is ``ref``; ``call(plan, out)`` launches a
    built plan; ``kernel``: the Gluon kernel's name, or a tuple of the names the candidates report as (for reports;
    the first is the record's). A winner goes into ``plans[sig]`` and recomputes ``ref``; returns it, or None (the tl path stays).
    Never fails the call: a candidate that raises drops out. ``agree(out, ref)``: default ``agrees``; ``margin``: the
    lead a candidate needs (``pick``); ``warm_timer``: the near-tie's timer (step 4; with the default ``timer``,
    ``_time(warm=True)``; none with a ``timer`` of the caller's unless given)."""
    if timer is None:
        timer = _time
        warm_timer = warm_timer or (lambda fn: _time(fn, warm=True))
    agree = agree or agrees
    if sig is None or sig in _RACING or sig in DECISIONS:
        return None
    if not bool(torch.isfinite(ref).all()):  # nothing to check a candidate against: race on a later call
        return None
    _RACING.add(sig)
    # a candidate's launch reports itself as what ran (``_launch.SERVED[kernel]``, read by tritondbg run / check /
    # the perf gate)
    kernels = (kernel,) if isinstance(kernel, str) else tuple(kernel)
    served = {k: _launch.SERVED.get(k) for k in kernels}
    record = {"tl": None, "ws": {}, "pick": None, "tiles": tiles or {}, "key": key, "kernel": kernels[0]}
    winners = {}
    try:
        for name, build in builds.items():
            out = torch.full_like(ref, float("nan"))
            try:
                plan = build(out)
            except Exception as e:  # noqa: BLE001 - out of resources, a compiler error: this candidate drops out
                record["ws"][name] = _failure(e)
                continue
            if not agree(out, ref):
                record["ws"][name] = "wrong result"
                continue
            winners[name] = plan
        fns = {name: (lambda plan=plan: call(plan, torch.empty_like(ref))) for name, plan in winners.items()}
        if winners:
            med = _rounds({**fns, "tl": steady}, timer, record, winners)
            record["tl"] = med.pop("tl")
            record["ws"].update(med)
        margin = _margin(margin)
        record["pick"] = pick(record["tl"], record["ws"], margin)
        record["margin"] = margin
        best = _near_tie(record, margin)
        if best is not None and warm_timer is not None:
            warm = _rounds({best: fns[best], "tl": steady}, warm_timer, record, winners)
            record["warm"] = warm
            if best in warm and "tl" in warm and warm[best] < warm["tl"] * (1.0 - margin):
                record["pick"], record["tie_break"] = best, "warm L2"
    finally:
        _RACING.discard(sig)
        if len(DECISIONS) >= _launch.MAX_PLANS:
            DECISIONS.clear()
        DECISIONS[sig] = record
        # what ran is what ran before the race (the candidates' timing launches reported themselves); a winner
        # reports itself again below, when it recomputes ``ref``
        for k, before in served.items():
            if before is None:
                _launch.SERVED.pop(k, None)
            else:
                _launch.SERVED[k] = before
    if record["pick"] is None:
        return None
    plan = winners[record["pick"]]
    if len(plans) >= _launch.MAX_PLANS:
        plans.clear()
    plans[sig] = plan
    ref.fill_(float("nan"))  # a plan that wrote nothing must not return the tl kernel's numbers as its own
    call(plan, ref)
    return plan
