"""`tritondbg check`: run the gates through pytest (pytest-xdist spreads them over worker processes) and
gather every gate's outcome into one RunRecord.

The result of a gate is only what ran: the run is planned first (every kernel x gate), and each planned item
ends as pass / FAIL / skipped (a gate's verdict, written by the worker that ran it) or error (a worker that
died, with its signal; a timeout; an item that never ran) or interrupted (SIGINT, SIGTERM), each error with the
command that reruns that item alone. The table, the JUnit XML and the JSON are all made from that one list.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tritondbg import stops
from tritondbg.check.outcome import (COMPILE_ONLY, ERROR, FAIL, INTERRUPTED, PASS, SKIP, GateOutcome, nothing_ran,
                                     repro_command, skipped_here)
from tritondbg.errors import UsageError
from tritondbg.record import RunRecord, environment


@dataclass(frozen=True)
class Item:
    target: str   # what the workers load: bundled name or /abs/path.py::name
    label: str    # how tables name it: bundled name or stem::name
    gate: str


def resolve_targets(targets: tuple[str, ...], all_: bool) -> list[str]:
    from tritondbg import loader

    names = loader.bundled_names()
    if all_:
        if not targets and Path("captures.json").is_file():  # (helper-97 ran it in a capture folder: 2 minutes)
            print("note: --all checks the bundled kernels; this folder's reproducers: tritondbg check .",
                  file=sys.stderr)
    elif not targets:
        raise UsageError(f"name kernels, a scenario file, or --all; kernels: {', '.join(names)}")
    out = list(names) if all_ else []  # --all and more: each more target checked as alone (a folder expanded)
    for t in targets:
        if "::" not in t and Path(t).expanduser().is_dir():  # a folder (capture's): every scenario file in it
            files = folder_files(Path(t).expanduser())
            if not files:
                raise UsageError(f"{t} is a folder with no scenario file (*.py) in it; name a scenario file")
            out += files
            continue
        if loader.is_path_target(t):
            path = Path(t.split("::")[0]).expanduser()
            if not path.is_file():
                raise UsageError(f"no such scenario file: {t.split('::')[0]}")
        elif t not in names:
            raise UsageError(loader.unknown_kernel(t, names))
        out.append(t)
    return list(dict.fromkeys(out))


def folder_files(folder: Path) -> list[str]:
    """The scenario files of a folder: a capture's (``captures.json``) every reproducer it saved, named after
    their kernels (Liger's ``_rms_norm_forward_kernel_0.py`` too); another folder's ``*.py`` but ``_`` modules
    (a scenario folder's helpers) unless a reproducer's data names it."""
    import json

    listed = folder / "captures.json"
    if listed.is_file():
        try:
            entries = json.loads(listed.read_text()).get("captures") or []
            names = [e["reproducer"].split("::")[0] for e in entries if e.get("reproducer")]
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            names = []
        files = sorted({str(folder / n) for n in names if (folder / n).is_file()})
        if files:
            return files
    return sorted(str(f) for f in folder.glob("*.py")
                  if not f.name.startswith("_") or (folder / "data" / f"{f.stem}.json").is_file())


def resolve_gates(text: str | None) -> list[str]:
    from tritondbg.check.gates import DEFAULT_GATES, GATES

    if text is None:
        gates = list(DEFAULT_GATES)
    else:  # given: an empty list ("--gates ''" from an unset CI variable) is a mistake, not "every gate"
        gates = [g.strip() for g in text.split(",") if g.strip()]
        if not gates:
            raise UsageError(f"--gates names no gate ({text!r}); choose from: {', '.join(GATES)}")
    unknown = [g for g in gates if g not in GATES]
    if unknown:
        raise UsageError(f"unknown gate(s) {', '.join(unknown)}; choose from: {', '.join(GATES)}")
    return list(dict.fromkeys(gates))


def rough_plan(targets: list[str], gates: list[str]) -> list[Item]:
    """The items as named on the command line, before any scenario file is read (what an interrupt during
    start-up reports)."""
    from tritondbg import loader

    items = []
    for t in targets:
        stem, _, name = t.partition("::")
        stem = Path(stem).stem
        label = (stem if name in ("", stem) else f"{stem}::{name}") if loader.is_path_target(t) else t
        items += [Item(t, label, g) for g in gates]
    return items


def import_timeout(timeout: float | None) -> float | None:
    """How long loading one target's scenario file may take: --timeout when given (0: no limit), else
    TIMEOUT_PER_CASE. A file whose import hangs (a lock, a server it waits for) is an error, not a hung CI job."""
    from tritondbg.check.outcome import TIMEOUT_PER_CASE

    return TIMEOUT_PER_CASE if timeout is None else (timeout or None)


def load_target(target: str, timeout: float | None, on_stuck=None) -> list[tuple[str, object]]:
    """(target, Scenario) for each scenario ``target`` names: a bundled kernel, ``file.py::name`` or every
    Scenario of ``file.py``. Past ``timeout`` seconds (``import_timeout``) the import is stopped: UsageError
    naming the file and the line it was stuck at."""
    from tritondbg import loader, watchdog

    try:
        with watchdog.deadline(timeout, on_stuck=on_stuck):
            return loader.load_each(target)
    except watchdog.Timeout as exc:
        where = str(exc).split(":", 1)[-1].replace(" (no kernel running),", "").strip()
        raise UsageError(f"loading {target.split('::')[0]} did not finish in {timeout:g} s: {where}") from None


def plan(targets: list[str], gates: list[str], *, device: str, case: str | None = None,
         timeout: float | None = None) -> list[Item]:
    """Every kernel x gate to run. A scenario file is read here: each Scenario it defines is checked (as
    `interpret FILE` lists them), and a file that does not import (or not within ``import_timeout(timeout)``)
    is bad usage before any work."""
    from tritondbg import loader, runner, selection
    from tritondbg.pytest_plugin import label as label_of

    if runner.current_mode() is None:
        runner.set_mode("interpret" if device == "cpu" else "compiled")
    items: list[Item] = []
    for t in targets:
        if loader.is_path_target(t):
            file, _, wanted = t.partition("::")
            scenarios = [s for _, s in load_target(file, import_timeout(timeout))]
            if wanted:
                chosen = [s for s in scenarios if s.name == wanted]
                if not chosen:
                    raise UsageError(f"no scenario {wanted!r} in {file}; choose from: "
                                     f"{', '.join(s.name for s in scenarios)}")
                scenarios = chosen
            if case and not wanted and len(scenarios) > 1:  # --case: the scenarios that have it
                having = [s for s in scenarios if any(selection.case_wanted(case, c.name) for c in s.cases)]
                if not having:
                    cases = sorted({c.name for s in scenarios for c in s.cases})
                    raise UsageError(f"no scenario in {file} has a case {case!r}; its cases: {', '.join(cases)}")
                scenarios = having
            path = str(Path(file).expanduser().resolve())
            pairs = [(f"{path}::{s.name}", label_of(f"{path}::{s.name}", s), s) for s in scenarios]
        else:
            pairs = [(t, t, loader.load(t) if case else None)]
        for target, label, scenario in pairs:
            if case and scenario is not None:  # an unknown case: exit 2 (a GPU-size one only where a gate runs it:
                # the resources gate compiles any case, helper-69's `--gates resources --case big`)
                selection.select_cases(scenario, case, interpret=device == "cpu" and not all(
                    g in COMPILE_ONLY for g in gates))
            items += [Item(target, label, g) for g in gates]
    return _distinct_labels(list(dict.fromkeys(items)))


def _distinct_labels(items: list[Item]) -> list[Item]:
    """Scenarios of two files with one stem (two capture folders' ``scale_kernel_0.py``) named alike in the table,
    JSON and JUnit (helper-88: two rows of ``scale_kernel_0::scale_kernel_0``): their folder goes before them."""
    files: dict[str, set] = {}
    for it in items:
        files.setdefault(it.label, set()).add(it.target.partition("::")[0])
    clash = {label for label, where in files.items() if len(where) > 1}
    return [Item(it.target, f"{Path(it.target.partition('::')[0]).parent.name}/{it.label}", it.gate)
            if it.label in clash else it for it in items]


class _Watch:
    """pytest plugin in the controller: progress (a bar on a terminal, else one line per finished item on
    stderr, so a run cut short still shows what it got through, and each minute one line naming the
    items still running past it: helper-139 waited 327 s on one all-configs gate with no line) and what went
    wrong outside the gates (a worker that died and its exit status, an internal error)."""

    def __init__(self, total: int, show: bool, lines: bool = False, items: list[Item] = ()):
        from tritondbg.pytest_plugin import item_key

        self.total, self.show, self.bar, self.task = total, show, None, None
        # a node id's item as the table names it (``missing_mask::buggy::sanitize``: its node id has the file's path)
        self.names = {item_key(i.target, i.gate): f"{i.label}::{i.gate}" for i in items}
        self.lines, self.done = lines and not show, 0
        self.crashed: dict[str, str] = {}        # nodeid -> the worker that ran it when it died
        self.worker_exit: dict[str, int | None] = {}
        self.internal: str = ""
        self.collect_error: str = ""             # a worker could not import a scenario file: why
        self.interrupted = False                 # SIGINT / SIGTERM seen: later worker deaths are the shutdown
        self.started: dict[str, float] = {}      # nodeid -> when a worker began it (a crashed item's time)
        self.running: dict[str, float] = {}      # the same, for the items not reported yet (the heartbeat's)
        self.stopped = threading.Event()
        self.beat = float(os.environ.get("TRITONDBG_CHECK_BEAT") or 60)  # (seconds: 60, or as the tests ask)
        self.crash_seconds: dict[str, float] = {}

    def pytest_runtest_logstart(self, nodeid, location):
        self.started[nodeid] = time.monotonic()
        self.running[nodeid] = self.started[nodeid]

    def _item(self, nodeid: str) -> str:
        from tritondbg.pytest_plugin import node_keys

        return next((self.names[k] for k in node_keys(nodeid) if k in self.names), nodeid)

    def _beat(self) -> None:
        """Every ``beat`` seconds while the session runs: the items running longer than that, with their times."""
        while not self.stopped.wait(self.beat):
            now = time.monotonic()
            long = [(now - t, n) for n, t in list(self.running.items()) if now - t >= self.beat]
            if long:
                said = ", ".join(f"{self._item(n)} ({took:.0f} s)" for took, n in sorted(long, reverse=True)[:4])
                print(f"  still running: {said}{f' and {len(long) - 4} more' if len(long) > 4 else ''}",
                      file=sys.stderr, flush=True)

    def pytest_sessionstart(self, session):
        if self.show:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                TextColumn("{task.description}"), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("", total=self.total)
        elif self.lines:
            threading.Thread(target=self._beat, name="tritondbg-check-beat", daemon=True).start()

    def pytest_testnodedown(self, node, error):
        popen = getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None)
        code = None
        if popen is not None and error:
            try:
                code = popen.wait(timeout=10)
            except Exception:  # noqa: BLE001 - only a better message is lost
                code = None
        self.worker_exit[getattr(getattr(node, "gateway", None), "id", "?")] = code

    def pytest_internalerror(self, excrepr, excinfo):
        self.internal = self.internal or str(excrepr).strip().splitlines()[-1]
        return True  # recorded: no INTERNALERROR wall on stderr

    def pytest_runtest_logreport(self, report):
        crashed = report.when == "???"  # xdist's report for the item a dying worker was running
        if crashed and not self.interrupted:
            self.crashed[report.nodeid] = getattr(getattr(report, "node", None), "gateway", None).id \
                if getattr(report, "node", None) is not None else "?"
            if report.nodeid in self.started:  # (helper-85: a SIGKILLed item showed 0.0 s everywhere)
                self.crash_seconds[report.nodeid] = time.monotonic() - self.started[report.nodeid]
        elif not (report.when == "call" or (report.when == "setup" and report.outcome != "passed")):
            return
        self.done += 1
        self.running.pop(report.nodeid, None)
        item = self._item(report.nodeid)
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=item)
        elif self.lines:
            status = dict(report.user_properties).get("tritondbg_status")
            outcome = "error" if crashed else status or ("FAIL" if report.outcome == "failed" else report.outcome)
            outcome = "passed" if outcome == PASS else outcome
            print(f"[{self.done}/{self.total}] {item}: {outcome} ({report.duration:.1f} s)", file=sys.stderr,
                  flush=True)

    def pytest_sessionfinish(self, session):
        self.stopped.set()
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def default_workers(device: str) -> int:
    if device == "cuda":
        import torch

        return max(1, torch.cuda.device_count())  # one process per GPU
    return min(2, os.cpu_count() or 1)


def _signal_text(code: int | None) -> str:
    if code is None:
        return "the worker process died"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        why = {"SIGKILL": " (as the OOM killer sends: see `dmesg`)", "SIGSEGV": " (segmentation fault)",
               "SIGBUS": " (bus error)", "SIGABRT": " (abort)"}.get(name, "")
        return f"the worker process was killed by {name}{why}"
    return f"the worker process exited with status {code}"


def _fault_line(path: Path) -> str:
    """From faulthandler's log: the fatal error and the innermost frame outside installed packages."""
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    from tritondbg import watchdog
    from tritondbg.errors import not_users_file

    head = next((i for i, ln in enumerate(text) if ln.startswith("Fatal Python error")), None)
    if head is None:
        return ""
    # the case the worker had started last (watchdog.trail), and the innermost frame of the user's code (not
    # Python's own library: it named ctypes' string_at for a wrapper's segfault)
    case = next((ln[len(watchdog.TRAIL_PREFIX):].strip() for ln in reversed(text[:head])
                 if ln.startswith(watchdog.TRAIL_PREFIX)), "")
    frames = [ln.strip() for ln in text[head:] if ln.strip().startswith('File "')]
    frame = next((f for f in frames if not not_users_file(f.split('"')[1])), frames[0] if frames else "")
    return "; ".join(p for p in (text[head].strip(), case and f"in {case}", frame) if p)


def plugin_args() -> list[str]:
    """``-p`` options for the plugins pytest would not load itself: tritondbg's where its pytest11 entry point is
    not registered (tritondbg run from a source checkout that was never installed: every gate "did not run:
    pytest exit status 4" before, pytest refusing the --tritondbg-* options) or plugin autoload is off; xdist's
    where autoload is off. Never both ways: a plugin loaded by its entry point and by ``-p`` is an error."""
    from importlib.metadata import entry_points

    autoload = not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    registered = any(ep.value.split(":")[0] == "tritondbg.pytest_plugin" for ep in entry_points(group="pytest11"))
    args = [] if autoload and registered else ["-p", "tritondbg.pytest_plugin"]
    return args + ([] if autoload else ["-p", "xdist.plugin"])


def check(items: list[Item], *, device: str, workers: int | None = None, arch: str | None = None,
          baseline: str = "tritondbg-baseline.json", update_baseline: bool = False, case: str | None = None,
          timeout: float | None = None, progress: bool = True, strict: bool = False,
          out_dir: str | None = None) -> RunRecord:
    """Run the planned items and return the record: extra["gates"] has one entry per item, in plan order;
    extra["interrupted"] says whether SIGINT or SIGTERM cut the run short (``interrupted_by``: which)."""
    from tritondbg import deps
    deps.require(["pytest", "xdist"], "`tritondbg check`")
    import pytest

    from tritondbg.pytest_plugin import COLLECT_ERROR, COLLECT_FAULT, item_file

    workers = default_workers(device) if workers is None else workers
    stops.clear()  # "SIGINT" until a SIGTERM says otherwise (``stop_signals``, ``_prompt_shutdown``)
    tmp = Path(tempfile.mkdtemp(prefix="tritondbg-check-"))
    outdir = tmp / "outcomes"
    watch = _Watch(len(items), progress and sys.stderr.isatty(), lines=progress, items=items)
    interrupted, rc = False, None
    try:
        (tmp / "pytest.ini").write_text("[pytest]\n")
        (tmp / "empty").mkdir()
        outdir.mkdir()
        args = ["-c", str(tmp / "pytest.ini"), "--rootdir", str(tmp), "-p", "no:terminal", "-p", "no:cacheprovider",
                "-p", "no:faulthandler", "--tritondbg-device", device,
                "--tritondbg-gates", ",".join(dict.fromkeys(i.gate for i in items)),
                "--tritondbg-outdir", str(outdir), "--tritondbg-baseline", str(Path(baseline).resolve()),
                "-n", str(max(1, workers)),
                "--max-worker-restart", str(max(4, len(items)))]
        for t in dict.fromkeys(i.target for i in items):
            args += ["--tritondbg", t]
        args += plugin_args()
        if arch:
            args += ["--tritondbg-arch", arch]
        if case:
            args += ["--tritondbg-case", case]
        if timeout is not None:
            args += ["--tritondbg-timeout", str(timeout)]
        if update_baseline:
            args.append("--tritondbg-update-baseline")
        if strict:
            args.append("--tritondbg-strict")
        if out_dir:
            args += ["--tritondbg-out", os.path.abspath(os.path.expanduser(out_dir))]
        args.append(str(tmp / "empty"))
        try:
            with _prompt_shutdown(watch):
                rc = pytest.main(args, plugins=[watch])
        except KeyboardInterrupt:
            interrupted = True
        collect_error = outdir / COLLECT_ERROR
        if collect_error.exists():  # the scenario imported here but not in a worker: the worker's reason
            watch.collect_error = "a worker could not load the scenario: " + collect_error.read_text().strip()
        else:  # a worker that died while importing a file left its fault log (a signal's Python stack)
            for t in dict.fromkeys(i.target for i in items):  # one log per worker: <key>.<worker>.fault
                fault = next(iter(sorted(outdir.glob(item_file(str(outdir), t, COLLECT_FAULT, ".*.fault").name))),
                             None)
                if fault is not None:
                    code = next((c for c in watch.worker_exit.values() if c), None)
                    where = _fault_line(fault)
                    watch.collect_error = f"{_signal_text(code)} while loading {t.split('::')[0]}" + \
                        (f"; {where}" if where else "")
                    break
        interrupted = interrupted or rc == pytest.ExitCode.INTERRUPTED
        outcomes = []
        for it in items:
            f = item_file(str(outdir), it.target, it.gate)
            done = None
            if f.exists():
                try:
                    done = GateOutcome.from_dict(json.loads(f.read_text()))
                    done.kernel = it.label  # the table's name (``_distinct_labels``), not the worker's
                except (OSError, ValueError, TypeError):
                    done = None
            outcomes.append(done or _unfinished(it, watch, rc, interrupted, item_file(str(outdir), it.target,
                                                                                      it.gate, ".fault"),
                                                device=device, case=case, arch=arch))
    except KeyboardInterrupt:  # while reading back: what is not read is interrupted
        interrupted = True
        outcomes = [_unfinished(it, watch, rc, True, None, device=device, case=case, arch=arch) for it in items]
    finally:
        watch.pytest_sessionfinish(None)
        shutil.rmtree(tmp, ignore_errors=True)
    return make_record(items, outcomes, device=device, workers=workers, interrupted=interrupted)


def stopped_by() -> str:
    """"SIGINT" or "SIGTERM": what raised the last KeyboardInterrupt under ``stop_signals``."""
    return stops.noted() or "SIGINT"


_STOPS = (signal.SIGINT, signal.SIGTERM)


def _stopped(signum) -> None:
    stops.handler(signum, None)


def stop_signals():
    """SIGTERM (how CI runners and Kubernetes cancel a job) winds a check down as SIGINT does: KeyboardInterrupt,
    the items that did not finish reported as interrupted, --json / --junit written, exit 128 + the signal. Its
    default action ended the process at once: no table, no file, the workers left running. Both are noted
    (``tritondbg.stops``): one a C extension turns into another error is raised again."""
    return stops.noting()


class _prompt_shutdown:
    """On SIGINT or SIGTERM: raise KeyboardInterrupt as usual (pytest and xdist wind down), and make sure the
    workers end: SIGTERM to the ones still there after 5 s, SIGKILL after 15 s (a worker stuck in a kernel would
    otherwise hold the shutdown)."""

    def __init__(self, watch: _Watch):
        self.watch = watch
        self.done = None
        self.old = {}

    def __enter__(self):
        import threading

        self.done = threading.Event()
        if threading.current_thread() is not threading.main_thread():
            return self
        for sig in _STOPS:
            old = signal.getsignal(sig)
            if old is not signal.SIG_IGN:
                self.old[sig] = old
                signal.signal(sig, self._on_signal)
        return self

    def _on_signal(self, signum, frame):
        import threading

        if not self.watch.interrupted:
            self.watch.interrupted = True
            threading.Thread(target=self._reap, daemon=True).start()
        _stopped(signum)

    def _reap(self):
        for wait, sig in ((5, signal.SIGTERM), (10, signal.SIGKILL)):
            if self.done.wait(wait):
                return
            for pid in stops.children():
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass

    def __exit__(self, *exc):
        self.done.set()
        for sig, old in self.old.items():
            default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
            signal.signal(sig, old if old is not None else default)
        return False


_PYTEST_EXIT = {3: " (pytest internal error)", 4: " (pytest usage error: an option or plugin it did not take)",
                5: " (pytest collected nothing)"}


def _unfinished(it: Item, watch: _Watch, rc, interrupted: bool, fault: Path | None, **repro) -> GateOutcome:
    """The outcome of an item that wrote none: crashed (with its signal), interrupted, or never run."""
    from tritondbg.pytest_plugin import item_key, node_keys

    command = repro_command(it.target, it.gate, **repro)
    node = next((n for n in watch.crashed if item_key(it.target, it.gate) in node_keys(n)), None)
    if node is not None:
        why = _signal_text(watch.worker_exit.get(watch.crashed[node]))
        where = _fault_line(fault) if fault is not None else ""
        return GateOutcome(it.label, it.gate, ERROR, f"crashed: {why}" + (f"; {where}" if where else ""),
                           target=it.target, command=command, seconds=round(watch.crash_seconds.get(node, 0.0), 3))
    if interrupted:
        why = skipped_here(it.gate, repro.get("device"))  # a GPU-only gate on the CPU was never cut short
        if why:
            return GateOutcome(it.label, it.gate, SKIP, why, target=it.target)
        return GateOutcome(it.label, it.gate, INTERRUPTED, f"interrupted ({stopped_by()}) before it finished",
                           target=it.target, command=command)
    why = watch.collect_error or watch.internal or (
        f"pytest exit status {int(rc)}{_PYTEST_EXIT.get(int(rc), '')}" if rc is not None
        else "the gate session did not start")
    return GateOutcome(it.label, it.gate, ERROR, f"did not run: {why}", target=it.target, command=command)


def make_record(items: list[Item], outcomes: list[GateOutcome], *, device: str, workers: int,
                interrupted: bool = False) -> RunRecord:
    record = RunRecord(command="check " + " ".join(dict.fromkeys(i.target for i in items)))
    for o in outcomes:  # each run names its item: extra.gate (gates.run_gate's) and extra.gate_kernel, the keys
        for r in o.results:  # of an extra.gates row
            r.extra["gate_kernel"] = o.kernel
        record.results.extend(o.results)
    record.extra["gates"] = [{k: v for k, v in o.to_dict().items() if k != "results"} for o in outcomes]
    record.extra["device"] = device
    record.extra["workers"] = workers
    record.extra["interrupted"] = interrupted
    if interrupted:
        record.extra["interrupted_by"] = stopped_by()
    try:
        record.environment = environment()
    except KeyboardInterrupt:
        pass
    return record


def interrupted_record(items: list[Item], *, device: str, workers: int | None) -> RunRecord:
    """SIGINT / SIGTERM before the gate session started: every item interrupted, but a GPU-only gate on the CPU
    (skipped, as in a run that ends)."""
    outcomes = [GateOutcome(i.label, i.gate, SKIP, skipped_here(i.gate, device), target=i.target)
                if skipped_here(i.gate, device) else
                GateOutcome(i.label, i.gate, INTERRUPTED, f"interrupted ({stopped_by()}) before it started",
                            target=i.target) for i in items]
    return make_record(items, outcomes, device=device, workers=workers or 0, interrupted=True)


def outcomes_of(record: RunRecord) -> list[GateOutcome]:
    return [GateOutcome.from_dict(g) for g in record.extra.get("gates", [])]


def exit_status(record: RunRecord) -> int:
    """0: every item passed or was skipped with a reason, and one passed; 1: a FAIL or an error, or nothing ran
    (every item skipped, or every gate that runs the kernel: a GPU-only scenario on a CPU runner is no green,
    though resources compiled it); 130: interrupted (SIGINT), 143:
    terminated (SIGTERM)."""
    statuses = {g["status"] for g in record.extra.get("gates", [])}
    if record.extra.get("interrupted") or INTERRUPTED in statuses:
        return 143 if record.extra.get("interrupted_by") == "SIGTERM" else 130
    if not statuses or statuses - {PASS, SKIP} or nothing_ran(record.extra.get("gates", [])):
        return 1
    return 0


def failed(record: RunRecord) -> bool:
    return any(g["status"] in (FAIL, ERROR, INTERRUPTED) for g in record.extra.get("gates", []))
