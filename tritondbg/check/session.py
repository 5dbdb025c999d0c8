"""`tritondbg check`: run the gates through pytest (pytest-xdist spreads them over worker processes) and
gather every gate's outcome into one RunRecord; JUnit XML comes from pytest's own junitxml writer."""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from tritondbg.check.outcome import FAIL, GateOutcome
from tritondbg.errors import UsageError
from tritondbg.record import RunRecord, environment


def resolve_targets(targets: tuple[str, ...], all_: bool) -> list[str]:
    from tritondbg import loader

    names = loader.bundled_names()
    if all_:
        return names + [t for t in targets if t not in names]
    if not targets:
        raise UsageError(f"name kernels, a scenario file, or --all; kernels: {', '.join(names)}")
    for t in targets:
        if loader.is_path_target(t):
            if not Path(t.split("::")[0]).expanduser().is_file():
                raise UsageError(f"no such scenario file: {t.split('::')[0]}")
        elif t not in names:
            raise UsageError(f"unknown kernel {t!r}; choose from: {', '.join(names)} (or path/to/cases.py)")
    return list(targets)


def resolve_gates(text: str | None) -> list[str]:
    from tritondbg.check.gates import DEFAULT_GATES, GATES

    gates = [g.strip() for g in text.split(",") if g.strip()] if text else list(DEFAULT_GATES)
    unknown = [g for g in gates if g not in GATES]
    if unknown:
        raise UsageError(f"unknown gate(s) {', '.join(unknown)}; choose from: {', '.join(GATES)}")
    return gates


class _Progress:
    """pytest plugin living in the controller: a progress bar fed by each gate item's report; without a
    terminal (CI logs, a job killed by its time limit) one line per finished item on stderr instead, so a
    run cut short still shows what it got through."""

    def __init__(self, total: int, show: bool, lines: bool = False):
        self.total, self.show, self.bar, self.task = total, show, None, None
        self.lines, self.done = lines and not show, 0

    def pytest_sessionstart(self, session):
        if self.show:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                TextColumn("{task.description}"), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("", total=self.total)

    def pytest_runtest_logreport(self, report):
        if not (report.when == "call" or (report.when == "setup" and report.outcome != "passed")):
            return
        self.done += 1
        item = report.nodeid.split("::", 1)[-1]
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=item)
        elif self.lines:
            outcome = "FAIL" if report.outcome == "failed" else report.outcome
            print(f"[{self.done}/{self.total}] {item}: {outcome} ({report.duration:.1f} s)", file=sys.stderr,
                  flush=True)

    def pytest_sessionfinish(self, session):
        if self.bar is not None:
            self.bar.stop()


def default_workers(device: str) -> int:
    if device == "cuda":
        import torch

        return max(1, torch.cuda.device_count())  # one process per GPU
    return min(2, os.cpu_count() or 1)


def check(targets: list[str], gates: list[str], *, device: str, workers: int | None = None,
          junit: str | None = None, arch: str | None = None, baseline: str = "tritondbg-baseline.json",
          update_baseline: bool = False, progress: bool = True) -> RunRecord:
    """Run gates x targets and return the record (results: every CaseResult; extra.gates: the outcomes)."""
    import pytest

    workers = default_workers(device) if workers is None else workers
    tmp = Path(tempfile.mkdtemp(prefix="tritondbg-check-"))
    try:
        (tmp / "pytest.ini").write_text("[pytest]\n")
        (tmp / "empty").mkdir()
        outdir = tmp / "outcomes"
        outdir.mkdir()
        args = ["-c", str(tmp / "pytest.ini"), "--rootdir", str(tmp), "-p", "no:terminal", "-p", "no:cacheprovider",
                "--tritondbg-device", device, "--tritondbg-gates", ",".join(gates),
                "--tritondbg-outdir", str(outdir), "--tritondbg-baseline", str(Path(baseline).resolve())]
        for t in targets:
            args += ["--tritondbg", str(Path(t.split("::")[0]).resolve()) + (f"::{t.split('::')[1]}" if "::" in t else "")
                     if os.sep in t or t.endswith(".py") or "::" in t else t]
        if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):  # else the pytest11 entry point loads it
            args += ["-p", "tritondbg.pytest_plugin", "-p", "xdist.plugin"]
        if arch:
            args += ["--tritondbg-arch", arch]
        if update_baseline:
            args.append("--tritondbg-update-baseline")
        if workers > 1:
            args += ["-n", str(workers)]
        if junit:
            args += ["--junitxml", str(Path(junit).resolve()), "-o", "junit_suite_name=tritondbg"]
        args.append(str(tmp / "empty"))
        bar = _Progress(len(targets) * len(gates), progress and sys.stderr.isatty(), lines=progress)
        rc = pytest.main(args, plugins=[bar])
        outcomes = [GateOutcome.from_dict(json.loads(p.read_text())) for p in sorted(outdir.glob("*.json"))]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if rc not in (0, 1) and not outcomes:
        raise RuntimeError(f"the gate session did not run (pytest exit {rc})")
    record = RunRecord(command="check " + " ".join(targets))
    for o in outcomes:
        record.results.extend(o.results)
    record.extra["gates"] = [{k: v for k, v in o.to_dict().items() if k != "results"} for o in outcomes]
    record.extra["device"] = device
    record.extra["workers"] = workers
    record.environment = environment()
    return record


def failed(record: RunRecord) -> bool:
    return any(g["status"] == FAIL for g in record.extra.get("gates", []))
