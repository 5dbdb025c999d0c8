"""pytest plugin: the `tritondbg check` gates as pytest items and a fixture, for users' own test suites.

    pytest --tritondbg path/to/my_cases.py --tritondbg-gates correctness,sanitize
    def test_my_kernel(tritondbg_check):
        tritondbg_check("path/to/my_cases.py::axpy", gates=["correctness", "determinism"])

Registered through the ``pytest11`` entry point; it stays inert (no torch/triton import) unless used.
`tritondbg check` itself runs these items through pytest (and pytest-xdist for workers).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from tritondbg.check.outcome import TIMEOUT_PER_CASE


def pytest_addoption(parser):
    group = parser.getgroup("tritondbg", "tritondbg quality gates")
    group.addoption("--tritondbg", action="append", default=[], metavar="TARGET",
                    help="bundled kernel or scenario file[::name] to check (repeatable)")
    group.addoption("--tritondbg-gates", default=None, metavar="LIST", help="comma-separated gates (default: all)")
    group.addoption("--tritondbg-device", default=None, choices=("cpu", "cuda"),
                    help="cpu: interpreter; cuda: compiled (default: cuda when available)")
    group.addoption("--tritondbg-arch", default=None, help="GPU of the resources gate and of the interpreter's "
                    "stand-in (default: local GPU, a reproducer's captured GPU, else sm_90)")
    group.addoption("--tritondbg-baseline", default="tritondbg-baseline.json", help="perf gate baseline file")
    group.addoption("--tritondbg-update-baseline", action="store_true", help="perf gate: rewrite the baseline")
    group.addoption("--tritondbg-strict", action="store_true", help="the sanitize gate fails on a warning too")
    group.addoption("--tritondbg-outdir", default=None, help="write one JSON outcome per gate item here")
    group.addoption("--tritondbg-out", default=None, metavar="DIR",
                    help="a failed compile's log goes here (default: the temporary folder)")
    group.addoption("--tritondbg-case", default=None, metavar="NAME",
                    help="run only these cases of each scenario (a name, a comma-separated list or a glob)")
    group.addoption("--tritondbg-timeout", type=float, default=None, metavar="SECONDS",
                    help=f"per gate item; an item past it is an error naming where it was stuck "
                         f"(default {TIMEOUT_PER_CASE:g} s per case the scenario runs; 0: none)")


def _device(value: str | None) -> str:
    if value:
        return value
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Choose interpreted or compiled mode before any conftest can import a kernel (@triton.jit reads it)."""
    known = parser.parse_known_args(args)
    # --tritondbg-device alone too: the fixture's tests import their kernels at collection (it was compiled mode,
    # and the CPU stand-in said the driver "needs a real GPU")
    if getattr(known, "tritondbg", None) or getattr(known, "tritondbg_device", None):
        from tritondbg import runner

        device = _device(known.tritondbg_device)
        if runner.current_mode() is None:
            runner.set_mode("interpret" if device == "cpu" else "compiled")
    # pytest --tritondbg TARGET without -n: one pytest-xdist worker, so a kernel that segfaults or hangs ends its
    # item (an error naming it), not the session and its report, as under `tritondbg check`. -n 0, --pdb or
    # -p no:xdist keep everything in this process. (Set here, as arguments: xdist reads -n before any hook of ours.)
    if (getattr(known, "tritondbg", None) and early_config.pluginmanager.hasplugin("xdist")
            and getattr(known, "numprocesses", 0) is None and not getattr(known, "usepdb", False)
            and not os.environ.get("PYTEST_XDIST_WORKER")):
        args[:] = ["-n", "1", *args]


def pytest_configure(config):
    """Bad targets are one usage line before anything runs (in pytest's own process: with the worker that
    `--tritondbg` starts, an error while a worker collects said only "no tests ran")."""
    targets = config.getoption("tritondbg", None)
    if targets and getattr(config, "args_source", None) is not None and config.args_source != config.ArgsSource.ARGS:
        # no test path named: pytest would collect the current folder (or testpaths) beside the scenario files, and
        # a tests folder that does not import here failed the run (helper-90); name paths to run tests as well.
        # (In the workers too: they collect what the controller does.)
        config.args[:] = []
    # an xdist worker has ``workerinput`` (PYTEST_XDIST_WORKER is also set in a pytest a worker's test started)
    if not targets or hasattr(config, "workerinput"):
        return
    from tritondbg.check.session import resolve_targets
    from tritondbg.errors import UsageError

    try:
        resolve_targets(tuple(targets), False)
        _gates(config)
    except UsageError as e:
        raise pytest.UsageError(str(e)) from None
    stray = [a for a in config.args if _scenario_file(a) and a not in targets]
    if stray:  # helper-85: `--tritondbg A.py B.py` checked A.py alone (B.py went to pytest, "1 passed")
        raise pytest.UsageError(f"{', '.join(stray)}: a scenario file given as a pytest path, so no gate checks it "
                                f"(--tritondbg takes one file each time: "
                                f"{' '.join('--tritondbg ' + t for t in [*targets, *stray])})")
    config.pluginmanager.register(_SkippedAll(), "tritondbg-skipped-all")


def _scenario_file(arg: str) -> bool:
    """A .py path (not a test module) that builds tritondbg Scenarios."""
    path = Path(str(arg).split("::")[0])
    if path.suffix != ".py" or path.name.startswith("test_") or path.name.endswith("_test.py") or not path.is_file():
        return False
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return False
    return "tritondbg" in text and "Scenario(" in text


class _SkippedAll:
    """``tritondbg check`` exits 1 when no gate that runs the kernel ran ("nothing ran, so nothing passed",
    ``outcome.nothing_ran``); the plugin's session said "2 skipped", exit 0 (helper-85: `--tritondbg-gates
    perf,agreement` on a CPU), and "1 passed, 2 skipped" when the compile-only resources gate passed beside them."""

    def __init__(self):
        from tritondbg.check.gates import GATES

        self.gates: list[dict] = []
        self.items = tuple(f"::{g}" for g in GATES)  # a gate item's node id ends with its gate

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.skipped):
            if report.nodeid.endswith(self.items):
                from tritondbg.check.outcome import SKIP

                self.gates.append(dict(gate=report.nodeid.rsplit("::", 1)[1],
                                       status=SKIP if report.skipped else report.outcome))

    def pytest_sessionfinish(self, session, exitstatus):
        from tritondbg.check.outcome import COMPILE_ONLY, nothing_ran

        if self.gates and nothing_ran(self.gates) and exitstatus == 0:
            runs = sum(g["gate"] not in COMPILE_ONLY for g in self.gates)
            session.exitstatus = 1
            what = (f"all {runs} gate item(s) that run the kernel were skipped" if runs else
                    f"all {len(self.gates)} gate item(s) were skipped")
            text = (f"tritondbg: {what}: nothing was checked, so nothing passed (exit status 1, as `tritondbg "
                    "check`)")
            tr = session.config.pluginmanager.get_plugin("terminalreporter")
            if tr is not None:
                tr.write_line(text, red=True)
            elif not session.config.getoption("tritondbg_outdir"):  # (`tritondbg check` says it itself)
                print(text, file=sys.stderr)


def _gates(config) -> list[str]:
    from tritondbg.check.gates import DEFAULT_GATES, GATES

    raw = config.getoption("tritondbg_gates")
    gates = [g.strip() for g in raw.split(",") if g.strip()] if raw else list(DEFAULT_GATES)
    unknown = [g for g in gates if g not in GATES]
    if unknown:
        raise pytest.UsageError(f"unknown gate(s) {', '.join(unknown)}; choose from: {', '.join(GATES)}")
    return gates


def label(target: str, scenario) -> str:
    """How a checked scenario is named in tables and records: the bundled name, or file stem::name (two
    files may both define a scenario called `buggy`), the stem alone where the name is the stem (a reproducer's:
    helper-149's table said `silu_kernel_0::silu_kernel_0`)."""
    from tritondbg import loader

    if not loader.is_path_target(target):
        return scenario.name
    stem = Path(target.split('::')[0]).stem
    return stem if scenario.name == stem else f"{stem}::{scenario.name}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The gate items are collected as pytest collects a file's tests: one ``ScenarioFile`` node per scenario file,
    added to what the session collects, so `pytest --co` counts them ("collected 0 items" before: they were added
    after collection) and each has a node id with its file (``path/cases.py::axpy::sanitize``; it was
    ``::cases::axpy::sanitize``)."""
    outcome = yield
    if not isinstance(collector, pytest.Session) or not collector.config.getoption("tritondbg", None):
        return
    report = outcome.get_result()
    if report.passed:
        report.result.extend(_scenario_files(collector))


def _scenario_files(session) -> list:
    from tritondbg import loader
    from tritondbg.check.session import import_timeout, load_target, resolve_targets
    from tritondbg.errors import UsageError

    config = session.config
    gates = _gates(config)
    outdir = config.getoption("tritondbg_outdir", None)
    try:  # as `check` takes them: a missing file is one line (it was loader.py's FileNotFoundError), a folder its files
        targets = resolve_targets(tuple(config.getoption("tritondbg")), False)
    except UsageError as e:
        _collect_error(outdir, str(e))
        raise pytest.UsageError(str(e)) from None
    files: dict[Path, list] = {}
    for target in targets:
        # `check`'s worker: a fatal signal while importing goes to a fault log the controller reads
        fault = _faults_to_file(outdir, target, COLLECT_FAULT, f".{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.fault")
        try:
            pairs = load_target(target, import_timeout(config.getoption("tritondbg_timeout")),
                                on_stuck=lambda msg: _collect_error(outdir, f"loading {target}: {msg}"))
        except UsageError as e:
            _collect_error(outdir, str(e))
            raise pytest.UsageError(str(e)) from None
        finally:
            if fault is not None:
                _faults_off(fault)
        for one, scenario in pairs:
            file = target.partition("::")[0] if loader.is_path_target(target) else (scenario.source or target)
            listed = files.setdefault(Path(file).expanduser().resolve(), [])
            if all(one != t for t, _ in listed):
                listed.append((one, scenario))
    return [ScenarioFile.from_parent(session, path=path, nodeid=_file_nodeid(session, path), pairs=pairs, gates=gates)
            for path, pairs in files.items()]


def _file_nodeid(session, path: Path) -> str:
    """A scenario file's node id: its path from the rootdir when it is inside, else its absolute path."""
    try:
        return path.relative_to(session.config.rootpath).as_posix()
    except ValueError:
        return path.as_posix()


def node_key(nodeid: str) -> tuple[str, str, str]:
    """(file stem, scenario, gate) of a gate item's node id ``FILE::SCENARIO::GATE``: what `check`'s controller
    matches its planned items with (``item_key``)."""
    parts = nodeid.split("::")
    if len(parts) < 3:
        return ("", "", parts[-1])
    return (_file_key(parts[0]), parts[-2], parts[-1])


def node_keys(nodeid: str) -> tuple:
    """``node_key`` and its stem form (a bundled kernel's item is keyed by its name, its file's stem)."""
    key = node_key(nodeid)
    return (key, (Path(key[0]).stem, key[1], key[2]))


def _file_key(file: str) -> str:
    """A scenario file as both keys name it: its absolute path where the node id has one (`check`'s rootdir is a
    temporary folder, so its files' ids are absolute: two capture folders' ``scale_kernel_0.py`` are two files),
    else its stem."""
    path = Path(file)
    return path.as_posix() if path.is_absolute() else path.stem


def item_key(target: str, gate: str) -> tuple[str, str, str]:
    """``node_key`` of the gate item of ``target`` (a bundled name, or ``file.py::scenario``) and ``gate``."""
    from tritondbg import loader

    if loader.is_path_target(target):
        file, _, name = target.partition("::")
        return (_file_key(Path(file).expanduser().resolve().as_posix()), name, gate)
    return (target, target, gate)


class ScenarioFile(pytest.File):
    """A scenario file (a bundled kernel's, or one given to --tritondbg): one gate item per scenario x gate."""

    def __init__(self, *, pairs=(), gates=(), **kwargs):
        super().__init__(**kwargs)
        self.pairs, self.gates = list(pairs), list(gates)

    def collect(self):
        for one, scenario in self.pairs:
            for gate in self.gates:
                yield GateItem.from_parent(self, name=f"{scenario.name}::{gate}", target=one, gate=gate,
                                           label=label(one, scenario))


def _collect_error(outdir: str | None, text: str) -> None:
    """`check`'s worker: its usage error would reach the controller only as "collected nothing"; the first
    worker's reason is kept in the outdir."""
    if outdir:
        try:
            with open(Path(outdir) / COLLECT_ERROR, "x") as f:
                f.write(text)
        except OSError:
            pass


COLLECT_ERROR = "collect-error.txt"  # in --tritondbg-outdir: why a worker could not collect (check/session.py)
COLLECT_FAULT = "(collect)"  # the gate name of a target's import fault log (``item_file(outdir, target, ...)``)


class GateFailed(Exception):
    pass


def item_file(outdir: str, target: str, gate: str, suffix: str = ".json") -> Path:
    """Where a gate item's outcome (and its fault log) goes: one file per target x gate."""
    return Path(outdir) / (hashlib.sha1(f"{target}\0{gate}".encode()).hexdigest()[:16] + suffix)


class GateItem(pytest.Item):
    """One gate on one scenario."""

    def __init__(self, *, target: str, gate: str, label: str = "", **kwargs):
        super().__init__(**kwargs)
        self.target, self.gate, self.label = target, gate, label or target

    def runtest(self):
        import time

        from tritondbg import loader, watchdog
        from tritondbg.check.gates import GateContext, run_gate
        from tritondbg.check.outcome import ERROR, FAIL, SKIP, GateOutcome, default_timeout, repro_command

        config = self.config
        device = _device(config.getoption("tritondbg_device"))
        _pick_gpu(device)
        case, arch = config.getoption("tritondbg_case"), config.getoption("tritondbg_arch")
        given = config.getoption("tritondbg_timeout")
        command = repro_command(self.target, self.gate, device=device, case=case, arch=arch, timeout=given)
        outdir = config.getoption("tritondbg_outdir")
        fault = _faults_to_file(outdir, self.target, self.gate)
        t0 = time.monotonic()
        seen: list = []  # SIGINT / SIGTERM that arrived while the gate ran (``_signals_seen``)

        def write(outcome: GateOutcome) -> None:
            outcome.kernel, outcome.target, outcome.seconds = self.label, self.target, time.monotonic() - t0
            if outcome.status == ERROR and not outcome.command:
                outcome.command = command
            if outdir:
                item_file(outdir, self.target, self.gate).write_text(json.dumps(outcome.to_dict(), default=str))

        def on_stuck(message: str) -> None:  # the watchdog is about to end this process: keep the verdict
            write(GateOutcome(self.label, self.gate, ERROR, message))

        ctx = GateContext(device=device, arch=arch, target=self.target, case=case,
                          baseline_file=config.getoption("tritondbg_baseline"),
                          update_baseline=config.getoption("tritondbg_update_baseline"),
                          strict=config.getoption("tritondbg_strict"), out_dir=config.getoption("tritondbg_out"))
        try:
            _stand_in_for(self.target, arch)
            scenario = loader.load(self.target)  # imported at collection: no time of the item's
            timeout = given if given is not None else default_timeout(scenario, device)
            with watchdog.deadline(timeout, on_stuck=on_stuck), _signals_seen() as seen:
                outcome = run_gate(self.gate, scenario, ctx)
        except KeyboardInterrupt as exc:
            if seen:  # Ctrl-C or a CI cancel: the run winds down (check reports the item interrupted)
                raise
            import traceback

            from tritondbg.errors import not_users_file

            frame = next((f for f in reversed(traceback.extract_tb(exc.__traceback__))
                          if not not_users_file(f.filename)), None)
            at = f" at {frame.filename}:{frame.lineno}" if frame is not None else ""
            outcome = GateOutcome(self.label, self.gate, ERROR, f"the scenario's code raised KeyboardInterrupt{at}, "
                                  "with no Ctrl-C or SIGTERM sent: an error of its code, not a stop")
        except watchdog.Timeout as exc:
            outcome = GateOutcome(self.label, self.gate, ERROR, str(exc))
        except Exception as exc:  # noqa: BLE001 - e.g. the scenario no longer loads in this worker
            outcome = GateOutcome(self.label, self.gate, ERROR, f"could not run: {type(exc).__name__}: {exc}")
        finally:
            if fault is not None:
                _faults_off(fault)
        write(outcome)
        self.user_properties.append(("tritondbg_status", outcome.status))
        self.user_properties.append(("tritondbg_reason", outcome.reason))
        if outcome.status == SKIP:
            pytest.skip(outcome.reason)
        if outcome.status in (FAIL, ERROR):
            raise GateFailed(outcome.reason)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, GateFailed):
            return f"{self.label}::{self.gate}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"tritondbg {self.label}::{self.gate}"


def _stand_in_for(target: str, arch: str | None) -> None:
    """Interpreted items: the CPU stand-in's GPU for this one, --tritondbg-arch, else the GPU a reproducer was
    captured for, else the default (helper-157: aiter's fp8 e4m3fnuz reproducer captured for gfx942 failed the
    correctness and sanitize gates as sm_90, with or without `check --arch gfx942`, which reached the compile gate
    only)."""
    from tritondbg import runner

    if runner.current_mode() != "interpret":
        return
    from tritondbg import standin
    from tritondbg.ir.targets import DEFAULT_ARCH, parse_arch
    from tritondbg.program.replay import recorded_arch

    want = parse_arch(arch or recorded_arch(target) or DEFAULT_ARCH)
    now = standin.current()
    if now is None or now.name != want.name:
        standin.install(want)


class _signals_seen(list):
    """While a gate runs: records SIGINT / SIGTERM arriving (the list is non-empty then), so that a
    KeyboardInterrupt the user's code raised itself is told from a Ctrl-C (both ended the run as interrupted)."""

    def __enter__(self):
        import signal
        import threading

        self.old = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                old = signal.getsignal(sig)
                if callable(old):  # a handler that raises (the default SIGINT one, check's SIGTERM one): keep it
                    self.old[sig] = old
                    signal.signal(sig, self._seen)
        return self

    def _seen(self, signum, frame):
        self.append(signum)
        return self.old[signum](signum, frame)

    def __exit__(self, *exc):
        import signal

        for sig, old in self.old.items():
            signal.signal(sig, old)
        return False


def _faults_to_file(outdir: str | None, target: str, gate: str, suffix: str = ".fault"):
    """While an item runs, a fatal signal (SIGSEGV, SIGBUS, SIGABRT...) writes its Python stack to a file beside
    the item's outcome, for `check` to name the signal and the line (only under `tritondbg check`)."""
    if not outdir:
        return None
    import faulthandler

    from tritondbg import watchdog

    f = open(item_file(outdir, target, gate, suffix), "w")  # noqa: SIM115 - kept open while the item runs
    faulthandler.enable(file=f, all_threads=False)
    watchdog.trail[0] = f  # each case as it starts: the crash's case
    return f


def _faults_off(f) -> None:
    import faulthandler

    from tritondbg import watchdog

    faulthandler.disable()
    watchdog.trail[0] = None
    f.close()
    try:
        with open(f.name, errors="replace") as log:  # the cases' trail alone: the item lived
            if "Fatal Python error" not in log.read():
                os.remove(f.name)
    except OSError:
        pass


def _pick_gpu(device: str) -> None:
    """One worker process per GPU: xdist worker gwN uses GPU N mod count."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if device != "cuda" or not worker.startswith("gw"):
        return
    import torch

    torch.cuda.set_device(int(worker[2:]) % max(1, torch.cuda.device_count()))


@pytest.fixture
def tritondbg_check(request):
    """Run gates on a scenario in this test; fails the test with each failing gate's reason."""
    def check(target: str, gates=("correctness", "sanitize", "determinism"), device: str | None = None, **ctx_args):
        from tritondbg import runner
        from tritondbg.check.gates import GATES, GateContext, run_gate
        from tritondbg.check.outcome import ERROR, FAIL, SKIP

        # "correctness,sanitize", as --gates takes them on the command line
        gates = [g.strip() for g in gates.split(",") if g.strip()] if isinstance(gates, str) else list(gates)
        unknown = [g for g in gates if g not in GATES]
        if unknown or not gates:  # a typo crashed the gate ("gate crashed: KeyError")
            pytest.fail(f"tritondbg_check: unknown gate(s) {unknown or '(none given)'}; valid: {', '.join(GATES)}",
                        pytrace=False)
        dev = device or ("cpu" if runner.current_mode() in (None, "interpret") else "cuda")
        if dev == "cuda":
            import torch

            if not torch.cuda.is_available():  # it failed in the user's make_inputs ("Torch not compiled with CUDA")
                pytest.fail("tritondbg_check: device='cuda' needs a CUDA GPU and none is visible; device='cpu' runs "
                            "the interpreter", pytrace=False)
        if runner.current_mode() is None:
            runner.set_mode("interpret" if dev == "cpu" else "compiled")
        from tritondbg.check.session import load_target
        from tritondbg.errors import UsageError

        try:  # a file's every scenario, as `check FILE` takes them
            pairs = load_target(target, None)
        except UsageError as e:  # a typo in the target: one line, as for a gate name (it was a traceback)
            pytest.fail(f"tritondbg_check: {e}", pytrace=False)
        outcomes = [run_gate(g, scenario, GateContext(device=dev, target=one, **ctx_args))
                    for one, scenario in pairs for g in gates]
        failed = [o for o in outcomes if o.status in (FAIL, ERROR)]  # a gate that crashed did not pass either
        if failed:
            pytest.fail("\n".join(f"{o.kernel} {o.gate}: {o.status}: {o.reason}" for o in failed), pytrace=False)
        if all(o.status == SKIP for o in outcomes):  # nothing ran here: no pass
            pytest.skip("; ".join(f"{o.gate}: {o.reason}" for o in outcomes))
        return outcomes
    return check
