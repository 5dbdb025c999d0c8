"""The autotuner's decisions during a launch: every config with its timings, the winner, the pruned
configs, and whether the answer came from a cache.

Triton prints only the winner (TRITON_PRINT_AUTOTUNING). Two sources, both chained, never overwritten:
- every version (3.6 included): the Autotuner's own attributes around each ``run`` call. A per-instance
  wrapper around ``tuner.run`` (calling whatever ``run`` was there: Pinning's patch, another tool's)
  computes the tuning key as ``Autotuner.run`` does and reads ``cache``, ``configs_timings`` (Config ->
  [p50, p20, p80] ms, inf for a config that failed), ``bench_time`` and ``best_config`` before and after.
- Triton >= 3.8: ``knobs.autotuning.listener`` (called on a tuning-cache miss, with ``cache_hit`` meaning
  the on-disk cache of ``cache_results=True``); the previous listener is called after ours and restored.

Decisions of one process are remembered by (autotuner, key) so a later in-memory cache hit (a second case
with the same key) still shows the timings it was decided on.
"""
from __future__ import annotations

import contextlib
import math
import sys
from typing import Any, Iterator

from tritondbg.configs import autotune_key as tuning_key  # noqa: F401 (the key Autotuner.run caches on)
from tritondbg.configs import autotuners, config_dict

# (id(autotuner), key) -> the decision made when that key was tuned in this process
_MEMO: dict[tuple[int, tuple], dict[str, Any]] = {}

PINNED_SOURCES = ("case", "default", "--config", "sweep")


def _ms(value) -> float | None:
    return float(value) if value is not None and math.isfinite(float(value)) else None


def timing_entry(config, timing, winner) -> dict[str, Any]:
    """One benchmarked config: p50/p20/p80 in ms (None and status "failed" when it could not run)."""
    values = list(timing) if isinstance(timing, (list, tuple)) else [timing]
    p50, p20, p80 = (values + [None, None])[:3] if len(values) >= 3 else (values[0], None, None)
    failed = p50 is None or not math.isfinite(float(p50))
    return {"config": config_dict(config), "p50_ms": _ms(p50), "p20_ms": _ms(p20), "p80_ms": _ms(p80),
            "status": "failed" if failed else "timed", "winner": bool(config == winner)}


def _snapshot(tuner) -> dict[str, Any]:
    return {"keys": set(getattr(tuner, "cache", {}) or {}), "timings": getattr(tuner, "configs_timings", None),
            "bench_time": getattr(tuner, "bench_time", None)}


class AutotuneWatch:
    """Watches the autotuned kernels of a scenario during one launch; ``decisions()`` reports them."""

    def __init__(self, kernels):
        self.tuners = autotuners(kernels)
        self.calls: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []

    @contextlib.contextmanager
    def watching(self, *, listen: bool = True) -> Iterator["AutotuneWatch"]:
        """``listen=False`` under the interpreter: Triton 3.9's listener call walks ``fn.fn`` until a
        JITFunction and crashes on an InterpretedFunction (only reachable with a custom ``do_bench``)."""
        self.races_before = race_keys()
        with contextlib.ExitStack() as stack:
            if listen:
                stack.enter_context(_listening(self.events))
            for name, tuner in self.tuners.items():
                stack.enter_context(_wrapped_run(name, tuner, self.calls))
            yield self

    def decisions(self, used: dict[str, dict], sources: dict[str, str], *, interpret: bool) -> list[dict]:
        """One decision per autotuned kernel that ran: pinned (untimed) or tuned (timed or from a cache), one
        per key, ``calls`` counting the calls answered with it (the attention race called its tl kernel 19
        times in one case: the trace drew 19 copies of the same benchmark)."""
        out = []
        for name, tuner in self.tuners.items():
            calls = [c for c in self.calls if c["tuner"] == name]
            source = sources.get(name, "")
            if name not in used and not calls:
                continue  # this kernel did not run in this case (e.g. the other path of a two-kernel scenario)
            if source.split(";")[0] in PINNED_SOURCES:  # ("--config; its prune_configs_by removes it ...")
                out.append(_pinned(name, tuner, used.get(name, {}), source, interpret))
                continue
            seen: dict[tuple, dict[str, Any]] = {}
            for call in calls or [None]:
                d = self._tuned(name, tuner, call, used.get(name, {}))
                same = tuple(d["key"]) if d.get("key") else None  # a repeat's source is "in-memory cache"
                if same in seen:  # the same key answered again in this launch (a loop, a race's timed calls)
                    seen[same]["calls"] += 1
                    continue
                out.append(dict(d, calls=1))
                seen[same] = out[-1]
        return out + race_decisions(getattr(self, "races_before", set()))

    def _tuned(self, name: str, tuner, call: dict | None, used: dict) -> dict[str, Any]:
        if call is None or len(tuner.configs) <= 1:
            return _untimed(name, tuner, used, "single config", "only one config: nothing to tune")
        key = call["key"]
        new = call["new_keys"]
        if key is None or (key not in new and key not in call["keys_before"]):
            key = next(iter(new)) if len(new) == 1 else key
        memo_key = (id(tuner), key)
        if key in call["keys_before"]:
            remembered = _MEMO.get(memo_key)
            if remembered is None:
                d = _untimed(name, tuner, config_dict(call["best"]), "in-memory cache",
                             "tuned before tritondbg watched it: timings unknown")
            else:
                d = dict(remembered, source="in-memory cache", note="tuned earlier in this process; timings "
                         "are from that benchmark")
            d.update(cache_hit=True, key=_key_list(key))
            return d
        event = next((e for e in reversed(self.events) if e["fn"] == name and e["key"] == key), None)
        if not call["fresh"]:
            d = _untimed(name, tuner, config_dict(call["best"]), "pruned to one",
                         "early pruning left one config: not benchmarked")
            d["pruned"] = [config_dict(c) for c in tuner.configs if c != call["best"]]
        else:
            winner = call["best"]
            timings = call["timings"]
            entries = [timing_entry(c, timings[c], winner) if c in timings else
                       {"config": config_dict(c), "p50_ms": None, "p20_ms": None, "p80_ms": None,
                        "status": "pruned", "winner": False} for c in tuner.configs]
            entries += [timing_entry(c, t, winner) for c, t in timings.items() if c not in tuner.configs]
            cache_hit = bool(event["cache_hit"]) if event else not call["benched"]
            d = {"kernel": name, "key_names": list(getattr(tuner, "keys", [])), "timed": True,
                 "source": "disk cache" if cache_hit else "benchmark", "cache_hit": cache_hit,
                 "winner": config_dict(winner), "configs": entries,
                 "pruned": [e["config"] for e in entries if e["status"] == "pruned"],
                 "bench_s": event["duration"] if event else (call["bench_time"] if call["benched"] else None),
                 "listener": event is not None, "note": ""}
            if not cache_hit and unsynced_graph_bench(tuner):
                d["note"] = GRAPH_BENCH_NOTE
        d["key"] = _key_list(key)
        _MEMO[memo_key] = d
        return d


GRAPH_BENCH_NOTE = ("benchmarked with triton.testing.do_bench_cudagraph, which runs the calls on a new stream "
                    "that does not wait for the program's: its first call may read inputs still being written, "
                    "and write memory queued work still uses (wrong or NaN results, seen on an H100); call "
                    "torch.cuda.synchronize() in your do_bench before it")


def unsynced_graph_bench(tuner) -> bool:
    """Whether the autotuner times its configs with ``do_bench_cudagraph`` without synchronising first: Triton's
    ``use_cuda_graph=True``, ``do_bench=do_bench_cudagraph`` (or a partial of it), or a function that calls it
    and never ``synchronize`` (kernels/_autotune.py's ``gpu_time_bench`` synchronises: not flagged)."""
    fn = getattr(tuner, "_do_bench", None)  # (not .do_bench: a cached property that asks the driver)
    if getattr(tuner, "use_cuda_graph", False):
        return True
    for _ in range(4):  # partials and wrappers
        if fn is None:
            return False
        if getattr(fn, "__name__", "") == "do_bench_cudagraph":
            return True
        if hasattr(fn, "func"):  # functools.partial
            fn = fn.func
            continue
        code = getattr(fn, "__code__", None)
        names = set(code.co_names) if code is not None else set()
        return "do_bench_cudagraph" in names and "synchronize" not in names
    return False


def _key_list(key) -> list[str] | None:
    return None if key is None else [str(k) for k in key]


def _untimed(name: str, tuner, used: dict, source: str, note: str) -> dict[str, Any]:
    entries = [{"config": config_dict(c), "p50_ms": None, "p20_ms": None, "p80_ms": None,
                "status": "ran" if config_dict(c) == used else "not run", "winner": config_dict(c) == used}
               for c in tuner.configs]
    return {"kernel": name, "key_names": list(getattr(tuner, "keys", [])), "key": None, "timed": False,
            "source": source, "cache_hit": False, "winner": dict(used), "configs": entries, "pruned": [],
            "bench_s": None, "listener": False, "note": note}


def _pinned(name: str, tuner, used: dict, source: str, interpret: bool) -> dict[str, Any]:
    why = ("interpreter: the autotuner cannot benchmark without a GPU; ran the config chosen by "
           f"{'the case' if source == 'case' else source}") if interpret else f"pinned by {source}: not benchmarked"
    return _untimed(name, tuner, used, f"pinned ({source})", why)


@contextlib.contextmanager
def _wrapped_run(name: str, tuner, calls: list) -> Iterator[None]:
    """Wrap this autotuner's ``run`` (instance attribute, so whatever class-level patch is active still runs)."""
    had_own = "run" in vars(tuner)
    previous = vars(tuner).get("run")
    inner = tuner.run  # bound now: Pinning's class-level patch or another tool's wrapper, if any

    def run(*args, **kwargs):
        key = tuning_key(tuner, args, kwargs)
        before = _snapshot(tuner)
        try:
            return inner(*args, **kwargs)
        finally:
            after = _snapshot(tuner)
            fresh = after["timings"] is not None and after["timings"] is not before["timings"]
            calls.append({"tuner": name, "key": key, "keys_before": before["keys"],
                          "new_keys": after["keys"] - before["keys"], "fresh": fresh,
                          "timings": dict(after["timings"]) if fresh else None,
                          "benched": after["bench_time"] is not None and after["bench_time"] != before["bench_time"],
                          "bench_time": after["bench_time"], "best": getattr(tuner, "best_config", None)})

    tuner.run = run
    try:
        yield
    finally:
        if vars(tuner).get("run") is run:
            if had_own:
                tuner.run = previous
            else:
                del tuner.run


@contextlib.contextmanager
def _listening(events: list) -> Iterator[None]:
    """Triton >= 3.8: add our autotuning listener in front of whatever listener is installed."""
    try:
        from triton import knobs

        group = knobs.autotuning
    except (ImportError, AttributeError):
        yield
        return
    if not hasattr(group, "listener"):  # Triton < 3.8: the attributes are all there is
        yield
        return
    previous = group.listener

    def listener(*args, **kwargs):
        try:
            from tritondbg.configs import kernel_name

            events.append({"fn": kernel_name(kwargs.get("fn")), "key": kwargs.get("key"),
                           "cache_hit": kwargs.get("cache_hit"), "duration": kwargs.get("duration")})
        finally:
            if previous is not None:
                previous(*args, **kwargs)

    group.listener = listener
    try:
        yield
    finally:
        if group.listener is listener:
            group.listener = previous


# ------------------------------------- the bundled kernels' races (kernels/_race.py: gemm, fp8_gemm, attention)
_RACE_MODULE = "tritondbg.kernels._race"


def race_keys() -> set:
    """The call signatures the bundled kernels' race has decided so far (none if never imported: watching must
    not import Gluon)."""
    mod = sys.modules.get(_RACE_MODULE)
    return set(getattr(mod, "DECISIONS", {})) if mod is not None else set()


def _warm_note(rec: dict) -> str:
    """The near-tie's second timing (kernels/_race.py step 4: the L2 warm), where the race took one."""
    warm = rec.get("warm") or {}
    best = next((k for k in warm if k != "tl"), None)
    if best is None or "tl" not in warm:
        return ""
    return (f"; a near-tie, timed again with the L2 warm: {best} {warm[best]:.1f} us, tl {warm['tl']:.1f} us, "
            + ("the candidate wins" if rec.get("tie_break") else "the tl kernel stays"))


def race_decisions(before: set) -> list[dict[str, Any]]:
    """The races decided since ``before`` (``race_keys()``), as timed decisions: on Hopper, ``gemm``, large-M
    ``fp8_gemm`` and prefill ``attention`` time their tl path against warp-specialised Gluon kernels on a
    signature's first call and keep the winner. Each contender's median (ms) over the race's rounds; a tile that failed or disagreed with the tl
    output is "failed", with the reason in the entry's ``reason``."""
    mod = sys.modules.get(_RACE_MODULE)
    if mod is None:
        return []
    out = []
    for sig, rec in list(getattr(mod, "DECISIONS", {}).items()):
        if sig in before:
            continue
        key = rec.get("key", {})
        tiles = rec.get("tiles", {})
        tl = {"path": "tl kernels"}
        entries = [{"config": tl, "p50_ms": _ms(rec["tl"] / 1e3) if rec.get("tl") is not None else None, "p20_ms": None,
                    "p80_ms": None, "status": "timed" if rec.get("tl") is not None else "not run",
                    "winner": rec.get("pick") is None}]
        for name, v in rec.get("ws", {}).items():
            cfg = {"path": rec.get("kernel", "gluon_gemm_kernel"), **tiles.get(name, {"tile": name})}
            timed = isinstance(v, (int, float))
            entries.append({"config": cfg, "p50_ms": v / 1e3 if timed else None, "p20_ms": None, "p80_ms": None,
                            "status": "timed" if timed else "failed", "winner": name == rec.get("pick"),
                            **({} if timed else {"reason": str(v)})})
        winner = next((e["config"] for e in entries if e["winner"]), tl)
        out.append({"kernel": f"{key.get('op', 'gemm')} race", "key_names": [k for k in key if k != "op"],
                    "key": [str(v) for k, v in key.items() if k != "op"], "timed": True, "source": "race",
                    "cache_hit": False, "winner": winner, "configs": entries, "pruned": [], "bench_s": None,
                    "listener": False,
                    "note": "the tl path against the Gluon candidates, medians of rotated rounds; the winner needs a "
                            f"{100 * rec.get('margin', getattr(mod, 'MARGIN', 0.03)):g}% lead (kernels/_race.py)"
                            + _warm_note(rec)})
    return out
