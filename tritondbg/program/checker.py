"""`tritondbg interpret -- CMD`: tritondbg's interpreter instruments on every launch of a program.

Each launch runs inside the same instruments ``tritondbg interpret KERNEL`` uses for one case
(``interp.attribution.KernelReport``: kernel errors and device asserts at the kernel line and pid;
``interp.sanitize.Sanitizer``: out of bounds, races, masked-lane poison, padded reductions), entered
around the launch with the launch's arguments. There is no reference to compare with, so the checks that
need one (an output NaN where the reference is finite) do not apply. Each finding gets the kernel, the
launch's index and the call site in the program, goes to ``findings.jsonl`` at once and is printed to
stderr as one line. An out-of-bounds lane is masked off: the program goes on.
"""
from __future__ import annotations

import contextlib
import os
import sys

from tritondbg.program import attach, capture, child


class _Result:
    """What the instruments' ``finish`` writes into (the runner's CaseResult, reduced)."""

    def __init__(self):
        self.status, self.message, self.findings, self.extra = "pass", "", [], {}


def instruments(sanitize: bool = True) -> list:
    """The instruments for one launch (new ones each time: they keep per-launch state)."""
    from tritondbg.interp.attribution import KernelReport

    out = [KernelReport()]
    if sanitize:
        from tritondbg.interp.sanitize import Sanitizer

        out.append(Sanitizer())
    return out


def instrument_launch(proceed, args: dict, *, sanitize: bool = True):
    """Run ``proceed()`` (one interpreted launch) under the instruments; returns (value, findings, error)."""
    insts = instruments(sanitize)
    result = _Result()
    value, error = None, None
    try:
        with contextlib.ExitStack() as stack:
            for inst in insts:
                stack.enter_context(inst.active(None, None, args))
            value = proceed()
    except Exception as exc:  # noqa: BLE001 - re-raised by the caller: the program sees its own error
        error = exc
        result.status = "error"
        result.message = f"{type(exc).__name__}: {exc}"
    for inst in insts:
        inst.finish(result, None, None)
    return value, result.findings, error


class Checker(attach.Observer):
    def __init__(self, cfg: dict):
        self.patterns = list(cfg.get("kernels") or ())
        self.sanitize = bool(cfg.get("sanitize", True))
        self.capture_on_finding = bool(cfg.get("capture_on_finding"))
        self.out_dir = cfg["run_dir"]
        self.command = cfg.get("command", "")
        self.skip: set[int] = set()
        self.launches: dict[str, int] = {}
        self.findings: dict[str, int] = {}
        self.captured: dict[str, int] = {}

    def wants(self, fn) -> bool:
        if id(fn) in self.skip:
            return False
        if not attach.matches(fn, self.patterns):
            self.skip.add(id(fn))
            return False
        return True

    def around(self, launch, proceed):
        index = self.launches.get(launch.name, 0)
        self.launches[launch.name] = index + 1
        snap = None
        if self.capture_on_finding:
            snap = capture.snapshot(launch)
            capture.copy_before(snap)
        value, findings, error = instrument_launch(proceed, launch.args, sanitize=self.sanitize)
        site = launch.call_site
        for f in findings:
            f.update(kernel=launch.name, qualname=launch.qualname, launch=index,
                     call_site=list(site) if site else None, stack=[list(s) for s in launch.stack[:6]],
                     pid_process=os.getpid())
            child.append("findings.jsonl", f)
            print(f"tritondbg: {f['kind']} in {launch.name} at {os.path.basename(str(f.get('file')))}:{f.get('line')} "
                  f"pid {tuple(f['pid']) if f.get('pid') else '?'}: {f.get('message', '')} "
                  f"[launched from {attach.describe_site(launch.stack)}]", file=sys.stderr, flush=True)
        if findings:
            self.findings[launch.name] = self.findings.get(launch.name, 0) + len(findings)
            if snap is not None:
                self._capture(launch, snap, error)
        if error is not None:
            raise error
        return value

    def _capture(self, launch, snap, error) -> None:
        n = self.captured.get(launch.name, 0)
        self.captured[launch.name] = n + 1
        name = capture.capture_name(launch.name, n, self.out_dir)
        after = capture.copy_after(snap) if error is None else None
        entry = capture.save(self.out_dir, name, launch, snap, after, command=self.command,
                             error=f"{type(error).__name__}: {error}" if error else None)
        child.append("captures.jsonl", entry)

    def summary(self) -> dict:
        return {"checked": dict(self.launches), "findings_per_kernel": dict(self.findings),
                "captured": dict(self.captured)}
