"""`tritondbg profile -- CMD`, the program's side: an observer on every Triton launch of the program
(tritondbg.program.attach), started by tritondbg.program.child with the feature ``profile``.

Per launch: an NVTX push/pop range (domain ``tritondbg``, message ``kernel | config | shapes``) and, while a
torch.profiler session records (ours, or the program's own), a ``record_function(kernel name)``; the launch's
tensor bytes are counted.
Per autotuned kernel and tuning key, the decision is read from the Autotuner right at its launch (the
benchmark of a new key has just run inside the same ``Autotuner.run``): every config with p50/p20/p80, the
winner, the pruned; a key tuned before (Triton's disk cache, or before attach) is a cache hit with no timings.
Later launches with the same key count as cache hits.

The session covers the whole program, or a window: ``skip`` launches first, then ``active`` launches
(``--skip N --active M``). At the end (window closed or program exit) the trace is written into the run folder
(``program-<pid>.<ns>.pt.trace.json.partial``) and what the parent needs into ``tritondbg/program-<pid>.json``;
the parent (program_run.py) adds the autotune track and a rank to the traces and builds the run record.

The program's own torch.profiler session (one Kineto session at a time): without ``--skip/--active``,
tritondbg follows it. Ours ends unsaved when the program's starts, and none starts again; every trace the
program's session produces (each ``on_trace_ready`` cycle of a ``schedule``, or its ``stop()`` without one) is
also put into the run folder, while the program's own handler runs as it would without tritondbg: Kineto saves
a session's results once, so a trace the program exports (``tensorboard_trace_handler``, its own
``export_chrome_trace``) is copied, and one it does not export is exported by tritondbg when the program can no
longer (its next cycle ended, or at exit). The launches inside its recorded steps are the traced ones. With ``--skip/--active`` given, tritondbg's window
wins: the program's session is not followed (if it starts while ours records, ours ends there, saved; ours
never starts while the program's records).

Phases are stamped with ``time.monotonic`` (one clock for the parent and the child) for the breakdown of
tritondbg's own cost: ``phases`` in program-<pid>.json, plus the observer's own time over all launches.
"""
from __future__ import annotations

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
        self.running = None  # (launch, its kernel's entry, traced, bytes) while a launch runs: what a SIGTERM (--timeout) stopped
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
        self.phases: dict[str, float] = dict(cfg.get("_phases") or {})
        self.phases.setdefault("attach_start", time.monotonic())
        # the window: tritondbg's own (--skip/--active given, or no profiler in the program) or the program's
        self.explicit = self.skip > 0 or self.active is not None
        self.source = f"launches {self.skip}.." + (f"{self.skip + int(self.active) - 1}" if self.active else "end")
        self.traces: list[str] = []                 # written into the run folder, in order
        self.cycles: list[dict[str, Any]] = []      # the program's session: one entry per trace it produced
        self.following = None                       # the program's torch.profiler.profile being followed
        self._cycle: dict[str, Any] = {"launches": 0, "steps": set()}
        self._pending = None                        # (cycle entry, profile, its results) not exported yet
        self._export_program = None
        self._own_ns = 0                            # the observer's own time, proceed() excluded
        self._first_ns = 0                          # of which the first launch's
        try:
            import nvtx

            from tritondbg.profile.nvtx_ranges import DOMAIN

            # without an NVTX tool (nsys, ncu) attached, nvtx hands back a DummyDomain: the ranges are no-ops, so
            # their work is skipped (the message built per launch cost ~15 us: a dummy has no attributes to cache)
            domain = nvtx.get_domain(DOMAIN)
            if type(domain).__name__ != "DummyDomain":
                self._domain = domain
        except ImportError:
            pass
        import torch

        self._rf = torch.autograd.profiler.record_function
        # the program's own profiler session (ours yielded to it) also gets the launch ranges
        self._profiling = getattr(torch.autograd, "_profiler_enabled", lambda: False)
        self._watch_program_sessions(torch.profiler.profile)
        starting = _profiler_starting()
        if starting is not None:
            # the program's profiler is starting and its start imported triton (torch.profiler imports inductor,
            # inductor imports triton): as if its start had come after the attach
            self._program_session(starting)
        elif self._profiling():
            self.notes.append("a torch.profiler session was already recording when the program imported triton "
                              "(started before tritondbg attached): not followed, no trace of tritondbg's until "
                              "it ends")
        elif self.skip == 0:
            self._start()
        from tritondbg.program import exits

        exits.on_exit(self.finish, in_forks=False)  # also at os._exit / SIGTERM; a fork's session is the parent's
        exits.on_term(self.on_term)
        self.phases["attach_ready"] = time.monotonic()

    # -------------------------------------------------------------------------------------------- session
    def _start(self, at: int = 0) -> None:
        self.phases.setdefault("session_begin", time.monotonic())
        import torch

        from tritondbg.profile.session import activities, no_lazy_inductor, quiet_kineto, signals_deferred

        quiet_kineto()
        cuda = torch.cuda.is_available() and not _interpreted()
        with signals_deferred(), _profiler_warnings(self.warnings), no_lazy_inductor(torch):
            self.prof = torch.profiler.profile(activities=activities(cuda), record_shapes=_record_shapes())
            self.prof.start()
        self.started_at_launch = at  # the index of the first launch inside the session
        self.phases.setdefault("session_started", time.monotonic())

    def _watch_program_sessions(self, cls) -> None:
        """One profiler session at a time (Kineto, CUPTI): see the module's docstring."""
        if getattr(cls.start, "_tritondbg", False):
            return
        orig, observer = cls.start, self

        def start(prof_self, *args, **kwargs):
            if prof_self is not observer.prof:
                observer._program_session(prof_self)
            return orig(prof_self, *args, **kwargs)

        start._tritondbg = True
        cls.start = start

    def _program_session(self, prof) -> None:
        at = self.seen
        if self.explicit:
            if self.prof is not None:
                self.notes.append(f"the program started its own torch.profiler session at Triton launch {at}: "
                                  f"tritondbg's window ({self.source}) ends there (one session at a time)")
                self._save(self._stop())
            elif not any("not followed" in n for n in self.notes):
                self.notes.append(f"the program started its own torch.profiler session at Triton launch {at}: "
                                  f"not followed (--skip/--active given: tritondbg's window wins)")
            return
        self._flush()
        if self.prof is not None:  # ours ends unsaved: the program's recorded steps are the window now
            ours, self.prof = self.prof, None
            with _profiler_warnings(self.warnings):
                ours.stop()
            for k in self.kernels.values():
                k["traced"], k["bytes"] = 0, 0
        self.done = True
        self.source = "program schedule" if getattr(prof, "record_steps", False) else "program profiler"
        if self.following is None:
            self.notes.append(f"the program started its own torch.profiler session at Triton launch {at}: "
                              f"tritondbg follows it ({self.source}: one trace per cycle it records; launches "
                              f"outside its recorded steps are counted, not traced; --skip/--active traces a "
                              f"window of tritondbg's own instead)")
        self.following = prof
        if getattr(prof.on_trace_ready, "_tritondbg", False):
            return
        handler, observer = prof.on_trace_ready, self
        export = type(prof).export_chrome_trace

        def on_trace_ready(p, *args, **kwargs):
            observer._end_cycle(p)
            if handler is not None:
                return handler(p, *args, **kwargs)

        def export_chrome_trace(path, *args, **kwargs):
            out = export(prof, path, *args, **kwargs)
            observer._copy(prof, str(path))
            return out

        on_trace_ready._tritondbg = True
        prof.on_trace_ready = on_trace_ready
        prof.export_chrome_trace = export_chrome_trace
        self._export_program = export

    # Kineto saves a session's results once ("Trace is already saved"): the program's own export of a cycle is
    # copied into the run folder; a cycle the program does not export is exported by tritondbg later, when the
    # program can no longer export it (its next cycle ended, or at exit).
    def _end_cycle(self, prof) -> None:
        self._flush()
        cycle, self._cycle = self._cycle, {"launches": 0, "steps": set()}
        entry = {"trace": None, "step_num": getattr(prof, "step_num", None), "launches": cycle["launches"],
                 "steps": sorted(s for s in cycle["steps"] if s is not None), "exported_by": None}
        self.cycles.append(entry)
        self._pending = (entry, prof, getattr(prof, "profiler", None))

    def _copy(self, prof, path: str) -> None:
        import shutil

        from tritondbg.profile.session import PARTIAL

        pending = self._pending
        if pending is None or pending[1] is not prof or pending[2] is not getattr(prof, "profiler", None):
            return
        self._pending = None
        name = f"program-{os.getpid()}.{time.time_ns()}.pt.trace.json" + (".gz" if path.endswith(".gz") else "")
        try:
            shutil.copyfile(path, os.path.join(self.cfg["trace_dir"], name + PARTIAL))
        except OSError as exc:
            self.notes.append(f"could not copy the program's trace {path}: {exc}")
            return
        pending[0].update(trace=name, exported_by="the program", program_file=path)
        self._save(name)

    def _flush(self) -> None:
        """Export the pending cycle the program did not export itself."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        entry, prof, results = pending
        current = getattr(prof, "profiler", None)
        try:
            prof.profiler = results  # that cycle's results (a later cycle replaced them on the profiler)
            name = self._export(prof, self._export_program)
        finally:
            prof.profiler = current
        entry.update(trace=name, exported_by="tritondbg")
        self._save(name)

    def _export(self, prof, export=None) -> str | None:
        from tritondbg.profile.session import PARTIAL

        name = f"program-{os.getpid()}.{time.time_ns()}.pt.trace.json"
        try:
            (export or type(prof).export_chrome_trace)(prof, os.path.join(self.cfg["trace_dir"], name + PARTIAL))
        except Exception as exc:  # noqa: BLE001 - never stop the program
            self.notes.append(f"could not export a trace: {type(exc).__name__}: {exc}")
            return None
        return name

    def _save(self, name: str | None) -> None:
        if name and name not in self.traces:
            self.traces.append(name)

    def _stop(self) -> str | None:
        """End tritondbg's session and export its trace (the parent adds the autotune track and the rank)."""
        if self.prof is None:
            return None
        import torch

        if torch.cuda.is_available() and not _interpreted():
            torch.cuda.synchronize()
        from tritondbg.profile.session import signals_deferred

        prof, self.prof, self.done = self.prof, None, True
        with signals_deferred():  # the program's Ctrl-C acts once the profiler is stopped and its trace out
            self.phases["profiler_stopping"] = time.monotonic()  # at exit, or at the end of the --active window
            with _profiler_warnings(self.warnings):
                prof.stop()
            self.phases["profiler_stopped"] = time.monotonic()
            name = self._export(prof)
        self.phases["trace_exported"] = time.monotonic()
        return name

    def finish(self) -> None:
        """Close the session (if still open) and write what the parent reads; at exit or window end."""
        if getattr(self, "_finished", False):
            return
        self._finished = True
        self.phases["exit"] = time.monotonic()
        self._save(self._stop())
        self._flush()
        if self.following is not None and self._profiling():
            self.notes.append("the program's torch.profiler session still recorded at exit: that part is not "
                              "exported (the program never stopped it)")
        rank = None
        if os.environ.get("RANK"):
            rank = [int(os.environ.get("RANK", 0) or 0), int(os.environ.get("WORLD_SIZE", 1) or 1)]
        data = {"pid": os.getpid(), "trace": self.traces[0] if self.traces else None, "traces": self.traces,
                "rank": rank, "interpreted": _interpreted(), "launches_seen": self.seen,
                "window": {"skip": self.skip, "active": self.active, "started_at_launch": self.started_at_launch,
                           "source": self.source, "cycles": self.cycles},
                "kernels": self.kernels, "decisions": list(self.decisions.values()), "warnings": self.warnings,
                "notes": self.notes, "phases": self.phases, "own_ns": self._own_ns,
                "first_launch_ns": self._first_ns}
        try:
            os.makedirs(self.cfg["run_dir"], exist_ok=True)
            with open(os.path.join(self.cfg["run_dir"], f"program-{os.getpid()}.json"), "w") as f:
                self.phases["json_written"] = time.monotonic()  # the dump itself is small (no trace in it)
                json.dump(data, f, default=str)
        except OSError:
            pass

    def on_term(self, frame) -> None:
        """SIGTERM (a --timeout, a CI cancel) during a launch: the launch is counted, marked unfinished (its time is
        in the trace up to the signal), and, under the interpreter, where it was is said, as interpret -- CMD does."""
        if self.running is None:
            return
        launch, k, traced, nbytes = self.running
        if traced:
            k["traced"] += 1
            k["bytes"] += nbytes
        k["errors"] = k.get("errors", 0) + 1
        k["interrupted"] = True
        k.setdefault("error", "SIGTERM: the program was terminated during this launch")
        k["launches"] += 1
        if launch.interpreted:
            attach.say_interrupted(launch, k["launches"] - 1, frame=frame, how="terminated (SIGTERM)")

    # -------------------------------------------------------------------------------------------- launches
    def around(self, launch: "attach.Launch", proceed):
        t0 = time.perf_counter_ns()
        i = self.seen
        self.seen += 1
        if i == 0:
            self.phases["first_launch"] = time.monotonic()
        if self.prof is None and not self.done and i >= self.skip and not self._profiling():
            self._start(at=i)
        tracing = self.prof is not None
        in_program = not tracing and self.following is not None and self._profiling()
        self._decision(launch)
        k = self.kernels.get(launch.name)
        if k is None:
            k = self.kernels[launch.name] = {"launches": 0, "traced": 0, "bytes": 0, "dtype": None, "shapes": [],
                                             "file": launch.file, "line": launch.line}
        nbytes = 0
        if tracing or in_program or k["dtype"] is None:
            nbytes, dtype, shapes = tensor_bytes(launch.args, shapes_too=k["dtype"] is None)
            if k["dtype"] is None:
                k["dtype"], k["shapes"] = dtype, shapes
            if dtype is not None and dtype not in k.setdefault("dtypes", []):
                k["dtypes"].append(dtype)  # every dtype it ran with (the label was the first launch's)
        attrs = self._range(launch) if self._domain is not None else None
        if attrs is not None:
            self._domain.push_range(attrs)
        t1 = t2 = 0
        proceed = _noting_errors(proceed, k)
        self.running = (launch, k, tracing or in_program, nbytes)
        try:
            if tracing or in_program or self._profiling():
                with self._rf(launch.name):
                    t1 = time.perf_counter_ns()
                    try:
                        return proceed()
                    finally:
                        t2 = time.perf_counter_ns()
            t1 = time.perf_counter_ns()
            try:
                return proceed()
            finally:
                t2 = time.perf_counter_ns()
        finally:
            self.running = None
            if attrs is not None:
                self._domain.pop_range()
            k["launches"] += 1
            if tracing or in_program:
                k["traced"] += 1
                k["bytes"] += nbytes
            if in_program:
                self._cycle["launches"] += 1
                self._cycle["steps"].add(getattr(self.following, "step_num", None))
            if tracing and self.active is not None and i + 1 >= self.started_at_launch + int(self.active):
                self._save(self._stop())
            own = time.perf_counter_ns() - t0 - (t2 - t1)
            self._own_ns += own
            if i == 0:
                self._first_ns = own  # one-time work (imports, a session started at this launch)

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
                         "the interpreter cannot benchmark configs: ran the first one its autotuner would try "
                         "after its pruning, as tritondbg pins it")  # (helper-108: "the one the autotuner picked")
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


def _noting_errors(proceed, k: dict):
    """``proceed`` that notes in the kernel's entry ``k`` a launch that raised or was interrupted: its time is not
    a finished launch's, and the record says so (``program_run.build_record``)."""
    def run():
        try:
            return proceed()
        except BaseException as exc:
            k["errors"] = k.get("errors", 0) + 1
            k["interrupted"] = k.get("interrupted") or isinstance(exc, KeyboardInterrupt)
            text = str(exc).strip().splitlines()
            k.setdefault("error", f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": "))
            raise
    return run


def _profiler_warnings(kept: list[str]):
    """Warnings the torch profiler raises when a session starts or stops go to ``kept``; others are shown."""
    from tritondbg.profile.session import keeping_profiler_warnings

    return keeping_profiler_warnings(kept)


def _profiler_starting():
    """The torch.profiler.profile whose ``start()`` is running further up this thread's stack, if any."""
    import sys

    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if code.co_name in ("start", "prepare_trace", "__enter__") and \
                code.co_filename.replace("\\", "/").endswith("torch/profiler/profiler.py"):
            obj = f.f_locals.get("self")
            if obj is not None and hasattr(obj, "on_trace_ready"):
                return obj
        f = f.f_back
    return None


def _record_shapes() -> bool:
    """Input shapes in tritondbg's trace: off by default (they cost every torch op of the program time; the
    record takes the Triton launches' shapes from their arguments); TRITONDBG_RECORD_SHAPES=1 turns them on."""
    return os.environ.get("TRITONDBG_RECORD_SHAPES", "0") not in ("", "0")


def _interpreted() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
