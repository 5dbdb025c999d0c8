"""pytest plugin for time-boxed device calls: each failed or errored test's report is appended to
$OUT/failures.txt as soon as it happens, so a call cut short by its time limit still says why tests failed.
Load with ``-p _failure_log`` and this folder on PYTHONPATH."""
import os


def pytest_runtest_logreport(report):
    if getattr(report, "node", None) is not None:  # xdist's controller: the worker wrote it already
        return
    if report.failed and os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "failures.txt"), "a") as f:
            f.write(f"==== {report.nodeid} ({report.when}, {report.duration:.1f} s)\n{report.longreprtext[-6000:]}\n")
    if report.when == "call" and os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "outcomes.txt"), "a") as f:
            f.write(f"{report.outcome} {report.duration:.1f}s {report.nodeid}\n")
