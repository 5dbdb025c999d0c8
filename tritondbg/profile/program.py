"""`tritondbg profile -- CMD`, the program's side: an observer on every Triton launch of the program
(tritondbg.program.attach), started by tritondbg.program.child with the feature ``profile``.

Per launch: an NVTX push/pop range (domain ``tritondbg``, message ``kernel | config | shapes``) and, while a
torch.profiler session records (ours, or the program's own), a ``record_function(kernel name)``; the launch's
tensor bytes are counted. When the program starts its own session, ours ends there (one at a time).
Per autotuned kernel and tuning key, the decision is read from the Autotuner right at its launch (the
benchmark of a new key has just run inside the same ``Autotuner.run``): every config with p50/p20/p80, the
winner, the pruned; a key tuned before (Triton's disk cache, or before attach) is a cache hit with no timings.
Later launches with the same key count as cache hits.

The session covers the whole program, or a window: ``skip`` launches first, then ``active`` launches
(``--skip N --active M``). At the end (window closed or program exit) the trace is written into the run folder
(``program-<pid>.<ns>.pt.trace.json.partial``, with the autotune track and a rank) and what the parent needs into
``tritondbg/program-<pid>.json``; the parent (program_run.py) builds the run record from them.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import time
from typing import Any

from tritondbg.program import attach


def tensor_bytes(args: dict[str, Any], shapes_too: bool = True) -> tuple[int, str | None, list[str]]:
    """Bytes of every tensor argument (numel x itemsize; an upper bound of the DRAM traffic), the first
    tensor's dtype, and a few shapes (``shapes_too``: only the first launch of a kernel needs them)."""
    total, dtype, shapes = 0, None, []
    for name, v in args.items():
        if hasattr(v, "data_ptr") and hasattr(v, "element_size"):
            total += v.numel() * v.element_size()
            dtype = dtype or str(v.dtype).replace("torch.", "")
            if shapes_too and len(shapes) < 6:
                shapes.append(f"{name}={'x'.join(str(d) for d in v.shape)}")
    return total, dtype, shapes


class ProgramProfiler(attach.Observer):
    """Ranges, autotune decisions, bytes per kernel, and the torch.profiler session over the program."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.skip = int(cfg.get("skip") or 0)
        self.active = cfg.get("active")
        self.seen = 0
        self.prof = None
        self.done = False
        self.started_at_launch: int | None = None
        self.kernels: dict[str, dict[str, Any]] = {}
        self.decisions: dict[tuple, dict[str, Any]] = {}
        self._consumed: dict[int, int] = {}        # id(tuner) -> id(configs_timings) already reported
        self._attrs: dict[tuple, Any] = {}          # (fn, config, shapes) -> NVTX event attributes
        self._domain = None
        self._rf = None
        self.warnings: list[str] = []  # the torch profiler's own, kept out of the program's stderr
        self.notes: list[str] = []
        try:
            import nvtx

            from tritondbg.profile.nvtx_ranges import DOMAIN

            self._domain = nvtx.get_domain(DOMAIN)
        except ImportError:
            pass
        import torch

        self._rf = torch.autograd.profiler.record_function
        # the program's own profiler session (ours yielded to it) also gets the launch ranges
        self._profiling = getattr(torch.autograd, "_profiler_enabled", lambda: False)
        if self.skip == 0:
            self._start()
        atexit.register(self.finish)

    # -------------------------------------------------------------------------------------------- session
    def _start(self, at: int = 0) -> None:
        import torch

        from tritondbg.profile.session import activities, quiet_kineto

        quiet_kineto()
        cuda = torch.cuda.is_available() and not _interpreted()
        self._yield_to_program(torch.profiler.profile)
        with _profiler_warnings(self.warnings):
            self.prof = torch.profiler.profile(activities=activities(cuda), record_shapes=True)
            self.prof.start()
        self.started_at_launch = at  # the index of the first launch inside the session

    def _yield_to_program(self, cls) -> None:
        """One profiler session at a time (Kineto, CUPTI): when the program starts its own torch.profiler
        session, ours ends there (its trace is written) and the program's runs as it would without tritondbg."""
        if getattr(cls.start, "_tritondbg", False):
            return
        orig, observer = cls.start, self

        def start(prof_self, *args, **kwargs):
            if observer.prof is not None and prof_self is not observer.prof:
                observer.notes.append(f"the program started its own torch.profiler session at Triton launch "
                                      f"{observer.seen}: tritondbg's trace ends there")
                observer.cfg["_trace"] = observer._stop()
            return orig(prof_self, *args, **kwargs)

        start._tritondbg = True
        cls.start = start

    def _stop(self) -> str | None:
        if self.prof is None:
            return None
        import torch

        from tritondbg.profile import trace_events
        from tritondbg.profile.session import PARTIAL

        if torch.cuda.is_available() and not _interpreted():
            torch.cuda.synchronize()
        prof, self.prof, self.done = self.prof, None, True
        with _profiler_warnings(self.warnings):
            prof.stop()
        name = f"program-{os.getpid()}.{time.time_ns()}.pt.trace.json"
        path = os.path.join(self.cfg["trace_dir"], name + PARTIAL)
        prof.export_chrome_trace(path)
        rank = (int(os.environ.get("RANK", 0) or 0), int(os.environ.get("WORLD_SIZE", 1) or 1))
        trace_events.add_to_trace(path, [d for d in self.decisions.values()], label="program", rank=rank)
        return name

    def finish(self) -> None:
        """Close the session (if still open) and write what the parent reads; at exit or window end."""
        if getattr(self, "_finished", False):
            return
        self._finished = True
        trace = self._stop() if self.prof is not None else self.cfg.get("_trace")
        data = {"pid": os.getpid(), "trace": trace, "interpreted": _interpreted(), "launches_seen": self.seen,
                "window": {"skip": self.skip, "active": self.active, "started_at_launch": self.started_at_launch},
                "kernels": self.kernels, "decisions": list(self.decisions.values()), "warnings": self.warnings,
                "notes": self.notes}
        try:
            os.makedirs(self.cfg["run_dir"], exist_ok=True)
            with open(os.path.join(self.cfg["run_dir"], f"program-{os.getpid()}.json"), "w") as f:
                json.dump(data, f, default=str)
        except OSError:
            pass

    # -------------------------------------------------------------------------------------------- launches
    def around(self, launch: "attach.Launch", proceed):
        i = self.seen
        self.seen += 1
        if self.prof is None and not self.done and i >= self.skip:
            self._start(at=i)
        tracing = self.prof is not None
        self._decision(launch)
        k = self.kernels.get(launch.name)
        if k is None:
            k = self.kernels[launch.name] = {"launches": 0, "traced": 0, "bytes": 0, "dtype": None, "shapes": [],
                                             "file": launch.file, "line": launch.line}
        nbytes = 0
        if tracing or k["dtype"] is None:
            nbytes, dtype, shapes = tensor_bytes(launch.args, shapes_too=k["dtype"] is None)
            if k["dtype"] is None:
                k["dtype"], k["shapes"] = dtype, shapes
        attrs = self._range(launch) if self._domain is not None else None
        if attrs is not None:
            self._domain.push_range(attrs)
        try:
            if tracing or self._profiling():
                with self._rf(launch.name):
                    return proceed()
            return proceed()
        finally:
            if attrs is not None:
                self._domain.pop_range()
            k["launches"] += 1
            if tracing:
                k["traced"] += 1
                k["bytes"] += nbytes
                if self.active is not None and i + 1 >= self.started_at_launch + int(self.active):
                    self.cfg["_trace"] = self._stop()

    def _range(self, launch):
        cfg = launch.config
        key = (id(launch.fn), id(cfg), tuple((n, tuple(getattr(v, "shape", ())), str(getattr(v, "dtype", "")))
                                             for n, v in launch.args.items() if hasattr(v, "shape")))
        attrs = self._attrs.get(key)
        if attrs is None:
            from tritondbg.configs import config_dict
            from tritondbg.profile.nvtx_ranges import _clean, config_text, shapes_text

            parts = [launch.name]
            if cfg is not None:
                parts.append(config_text({launch.name: config_dict(cfg)}).split(" ", 1)[-1])
            shapes = shapes_text(launch.args)
            if shapes:
                parts.append(shapes)
            attrs = self._attrs[key] = self._domain.get_event_attributes(message=_clean(" | ".join(parts)))
        return attrs

    def _decision(self, launch) -> None:
        """The autotuner's decision for this launch's key, read once per (autotuner, key)."""
        tuners = getattr(attach._local, "tuners", None)
        if not tuners or launch.config is None:
            return
        from tritondbg.configs import config_dict
        from tritondbg.profile.autotune import _untimed, timing_entry, tuning_key

        tuner = tuners[-1]
        key = tuning_key(tuner, (), dict(launch.args))
        dkey = (id(tuner), key)
        d = self.decisions.get(dkey)
        if d is not None:
            d["launches"] += 1
            d["cache_hits"] += 1
            return
        winner = launch.config
        timings = getattr(tuner, "configs_timings", None)
        fresh = timings is not None and self._consumed.get(id(tuner)) != id(timings)
        if _interpreted():
            d = _untimed(launch.name, tuner, config_dict(winner), "interpreter",
                         "the interpreter cannot benchmark configs: ran the one the autotuner picked")
        elif len(tuner.configs) <= 1:
            d = _untimed(launch.name, tuner, config_dict(winner), "single config", "only one config: nothing to tune")
        elif fresh:
            self._consumed[id(tuner)] = id(timings)
            entries = [timing_entry(c, timings[c], winner) if c in timings else
                       {"config": config_dict(c), "p50_ms": None, "p20_ms": None, "p80_ms": None,
                        "status": "pruned", "winner": False} for c in tuner.configs]
            entries += [timing_entry(c, t, winner) for c, t in timings.items() if c not in tuner.configs]
            d = {"kernel": launch.name, "key_names": list(getattr(tuner, "keys", [])), "timed": True,
                 "source": "benchmark", "cache_hit": False, "winner": config_dict(winner), "configs": entries,
                 "pruned": [e["config"] for e in entries if e["status"] == "pruned"],
                 "bench_s": getattr(tuner, "bench_time", None), "listener": False, "note": ""}
        else:
            d = _untimed(launch.name, tuner, config_dict(winner), "cache",
                         "tuned before tritondbg saw it (Triton's disk cache or earlier): timings unknown")
            d["cache_hit"] = True
        d["key"] = [str(k) for k in key] if key is not None else None
        d["launches"], d["cache_hits"] = 1, 0
        self.decisions[dkey] = d


def _profiler_warnings(kept: list[str]):
    """Warnings the torch profiler raises when a session starts or stops go to ``kept``; others are shown."""
    from tritondbg.profile.session import keeping_profiler_warnings

    return keeping_profiler_warnings(kept)


def _interpreted() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
