"""What tritondbg adds to a torch.profiler trace after it is written (an exporter of the run record):

- the autotune decisions as events on their own "autotune" track: one complete event (``"ph": "X"``) per
  benchmarked config, its duration the config's p50, its config and p20/p50/p80 in ``args``, the winner
  marked (name, ``args.winner``, ``cname``); untimed decisions (pinned, cache hits without timings) as one
  instant event. The track has its own pid/tid with ``process_name``/``thread_name`` metadata, so Perfetto
  and chrome://tracing-style viewers draw it as a separate process "autotune".
- ``distributedInfo`` when the trace has none: Holistic Trace Analysis keys the traces of a folder by rank, and
  traces of one rank replace each other (the last one read wins). A profile run folder holds one trace per
  case, so each case gets its own rank (its index in the run; world size = the number of cases) and HTA
  keeps them all; ``backend: "none"`` says no process group was involved.

And what it reads back from the trace into the record: the launch timeline of a case (each traced launch's
range, the GPU kernels under it, torch's version), which report.html draws.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

# pid/tid of the autotune track: far from real process ids and from Kineto's GPU pids (device indices)
AUTOTUNE_PID = 2_000_000_000
AUTOTUNE_TID = 1
AUTOTUNE_NAME = "autotune"
# Width of events that have no benchmark time (instant markers, failed configs): drawn but not to scale
_MARK_US = 1.0
MAX_LAUNCHES = 200  # launches kept per case in the record's timeline


def _cfg_text(cfg: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in cfg.items())


def _us(ms):
    return None if ms is None or not math.isfinite(ms) else ms * 1e3


def autotune_events(decisions: list[dict[str, Any]], start_us: float, *, label: str = "") -> list[dict]:
    """Chrome-trace events for ``decisions`` (CaseResult.extra["profile"]["autotune"]), laid end to end from
    ``start_us`` on the autotune track; metadata events name the track."""
    pid, tid = AUTOTUNE_PID, AUTOTUNE_TID
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": tid, "args": {"name": AUTOTUNE_NAME}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": -1}},
        {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
         "args": {"name": f"autotune decisions{': ' + label if label else ''}"}},
    ]
    t = float(start_us)
    for d in decisions:
        common = {"kernel": d["kernel"], "source": d.get("source"), "key": d.get("key"),
                  "key_names": d.get("key_names"), "cache_hit": d.get("cache_hit"), "case": label}
        if not d.get("timed"):
            events.append({"ph": "i", "s": "t", "name": f"{d['kernel']}: {_cfg_text(d.get('winner') or {})} "
                           f"({d.get('source')}, untimed)", "cat": AUTOTUNE_NAME, "pid": pid, "tid": tid, "ts": t,
                           "args": {**common, "config": d.get("winner"), "winner": True, "note": d.get("note", "")}})
            t += _MARK_US
            continue
        for e in d["configs"]:
            if e["status"] not in ("timed", "failed"):
                continue  # pruned / not run: never benchmarked, listed in args of the winner instead
            p50 = _us(e["p50_ms"])
            name = f"{d['kernel']}: {_cfg_text(e['config'])}" + (" (winner)" if e["winner"] else "")
            ev = {"ph": "X", "name": name, "cat": AUTOTUNE_NAME, "pid": pid, "tid": tid, "ts": t,
                  "dur": p50 if p50 else _MARK_US,
                  "args": {**common, "config": e["config"], "status": e["status"], "winner": e["winner"],
                           "p50_us": p50, "p20_us": _us(e["p20_ms"]), "p80_us": _us(e["p80_ms"])}}
            if e["winner"]:
                ev["cname"] = "good"
                ev["args"]["pruned"] = d.get("pruned", [])
            elif e["status"] == "failed":
                ev["cname"] = "terrible"
            events.append(ev)
            t += ev["dur"]
    return events


def _first_ts(trace: dict) -> float:
    ts = [e["ts"] for e in trace.get("traceEvents", []) if e.get("ph") in ("X", "i", "B") and
          isinstance(e.get("ts"), (int, float))]
    return float(min(ts)) if ts else 0.0


def add_to_trace(path: Path, decisions: list[dict[str, Any]], *, label: str = "",
                 rank: tuple[int, int] = (0, 1)) -> dict:
    """Rewrite the trace at ``path`` with the autotune track and a ``distributedInfo`` (``rank`` = (rank,
    world size), unless the trace has one); returns the trace."""
    path = Path(path)
    trace = json.loads(path.read_text())
    if decisions:
        trace.setdefault("traceEvents", []).extend(autotune_events(decisions, _first_ts(trace), label=label))
    ensure_rank(trace, *rank)
    path.write_text(json.dumps(trace, allow_nan=False))
    return trace


def ensure_rank(trace: dict, rank: int = 0, world_size: int = 1) -> dict:
    """Give a trace the rank HTA keys it by, unless it has one (a distributed program's trace)."""
    info = trace.get("distributedInfo")
    if not isinstance(info, dict) or "rank" not in info:
        trace["distributedInfo"] = {"backend": "none", "rank": rank, "world_size": world_size}
    return trace


def launch_timeline(trace: dict, range_name: str, torch_range: str | None = None,
                    gpu_name: str | None = None) -> dict[str, Any]:
    """The traced launches of one case, in us from the first one: the CPU range of each launch, the GPU kernels
    (``cat: kernel``; only those named ``gpu_name`` when given) and torch's version. Kept in the record for the
    report's launch timeline."""
    evs = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))]
    ranges = sorted((e["ts"], e.get("dur", 0)) for e in evs if e.get("name") == range_name
                    and e.get("cat") != "gpu_user_annotation")
    torch_ranges = sorted((e["ts"], e.get("dur", 0)) for e in evs
                          if torch_range and e.get("name") == torch_range and e.get("cat") != "gpu_user_annotation")
    gpu = sorted((e["ts"], e.get("dur", 0), e.get("name", "?")) for e in evs if e.get("cat") == "kernel"
                 and (gpu_name is None or e.get("name") == gpu_name))
    t0 = min([r[0] for r in ranges + torch_ranges] + [g[0] for g in gpu], default=0.0)

    def rel(rows):
        return [[round(r[0] - t0, 3), round(r[1], 3), *r[2:]] for r in rows[:MAX_LAUNCHES]]

    return {"unit": "us", "launches": rel(ranges), "gpu_kernels": rel(gpu), "torch": rel(torch_ranges)}


def kernel_totals(trace: dict, triton_names=()) -> tuple[dict[str, dict[str, float]], str]:
    """Per kernel name: launches, total time (us) and each launch's time (``durs_us``) from the trace; returns
    (totals, "gpu" or "cpu").

    GPU kernels (``cat: kernel``) when the trace has any, else the CPU ``record_function`` ranges (under the
    interpreter). A GPU kernel named like a Triton kernel of the program but launched outside its launch range
    (the autotuner benchmarking configs: Kineto records those too) is counted under ``"<name> (autotune
    benchmark)"``: its CPU launch call (``cuda_runtime``/``cuda_driver``, same ``correlation`` id) is not inside
    a ``record_function`` of the program's launches."""
    import bisect

    evs = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and isinstance(e.get("ts"), (int, float))]
    gpu = [e for e in evs if e.get("cat") == "kernel"]
    names = set(triton_names)
    out: dict[str, dict[str, float]] = {}

    def add(name: str, dur) -> None:
        t = out.setdefault(name, {"launches": 0, "total_us": 0.0, "durs_us": []})
        t["launches"] += 1
        t["total_us"] += float(dur or 0)
        t["durs_us"].append(float(dur or 0))

    if not gpu:  # the Triton launches' ranges (not the program's own record_function / ProfilerStep ranges)
        for e in evs:
            if e.get("cat") == "user_annotation" and (not names or e.get("name") in names):
                add(e.get("name", "?"), e.get("dur"))
        return out, "cpu"
    ranges = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in evs
                    if e.get("cat") == "user_annotation" and e.get("name") in names)
    starts = [r[0] for r in ranges]
    outside = set()  # correlation ids of launch calls seen outside every launch range of the program
    for e in evs:
        corr = (e.get("args") or {}).get("correlation")
        if corr is None or e.get("cat") not in ("cuda_runtime", "cuda_driver"):
            continue
        i = bisect.bisect_right(starts, e["ts"]) - 1
        if not (i >= 0 and ranges[i][0] <= e["ts"] <= ranges[i][1]):
            outside.add(corr)
    for e in gpu:  # a kernel whose launch call the trace lacks stays the program's (never a guess the other way)
        name = e.get("name", "?")
        if name in names and ranges and (e.get("args") or {}).get("correlation") in outside:
            name += " (autotune benchmark)"
        add(name, e.get("dur"))
    return out, "gpu"
