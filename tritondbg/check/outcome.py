"""What a gate says about one kernel: status, a one-line reason, details, and the runs it made."""
from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any

PASS, FAIL, SKIP = "pass", "FAIL", "skipped"
# the gate did not finish: it crashed (a signal, an exception outside the gate), timed out, or did not run
ERROR = "error"
INTERRUPTED = "interrupted"  # SIGINT (Ctrl-C, a CI cancel) before the item finished
STATUSES = (PASS, FAIL, SKIP, ERROR, INTERRUPTED)
COMPILE_ONLY = ("resources",)  # gates that compile the kernel and never run it
GPU_ONLY = ("perf", "agreement")  # gates that skip on a CPU (--device cpu), with this reason
NEEDS_GPU = "needs a GPU (--device cuda)"


def skipped_here(gate: str, device: str | None) -> str:
    """Why ``gate`` skips on ``device`` whatever the scenario ("" when it may run): a GPU-only gate on the CPU. An
    item of it that a Ctrl-C left unfinished is that skip, as in a run that ends (it was "interrupted")."""
    return NEEDS_GPU if gate in GPU_ONLY and device == "cpu" else ""


def nothing_ran(gates: list[dict]) -> bool:
    """No gate that runs the kernel ran on any item: every one was skipped (GPU-only cases on a CPU runner),
    whatever a compile-only gate (resources) said. Only compile-only gates asked: nothing ran when all skipped."""
    runs = [g for g in gates if g.get("gate") not in COMPILE_ONLY] or gates
    return all(g.get("status") == SKIP for g in runs)


# `check --timeout` default: seconds per case a gate item runs (so it scales with the scenario). The slowest
# bundled item, attention's resources gate with a cold compile cache (9 cases compiled), took 813 s on two cores
# shared with other jobs at load 6.5 and 1389 s at load 13 (tests/bench/check.md).
TIMEOUT_PER_CASE = 600.0


def default_timeout(scenario, device: str) -> float:
    """An item's deadline when --timeout is not given: TIMEOUT_PER_CASE for each case that runs on ``device``."""
    n = sum(1 for c in scenario.cases if c.interpret or device != "cpu")
    return TIMEOUT_PER_CASE * max(1, n)


@dataclass
class GateOutcome:
    kernel: str
    gate: str
    status: str                  # one of STATUSES
    reason: str = ""             # one line: why it failed or was skipped (or a short summary when passed)
    details: dict[str, Any] = field(default_factory=dict)
    results: list = field(default_factory=list)  # CaseResult of the runs the gate made
    target: str = ""             # how the item was named to the workers (bundled name or /abs/file.py::name)
    seconds: float = 0.0         # wall time of the item
    command: str = ""            # the command that reruns this item alone

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["results"] = [r.to_dict() for r in self.results]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "GateOutcome":
        from tritondbg.record import CaseResult

        d = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        d["results"] = [CaseResult.from_dict(r) for r in d.get("results", [])]
        return cls(**d)


def repro_command(target: str, gate: str, *, device: str, case: str | None = None, arch: str | None = None,
                  timeout: float | None = None) -> str:
    """`tritondbg check` of this one item, as a shell line."""
    args = ["tritondbg", "check", target, "--gates", gate, "--device", device, "-n", "1"]
    if case:
        args += ["--case", case]
    if arch:
        args += ["--arch", arch]
    if timeout:
        args += ["--timeout", f"{timeout:g}"]
    return " ".join(shlex.quote(a) for a in args)


def more_findings(rest) -> str:
    """The findings after the first, counted by kind and line (the reason showed the first alone: 6 out-of-bounds
    findings of another case were only in --json)."""
    from tritondbg.interp.frames import site_name

    if not rest:
        return ""
    groups: dict[tuple, set] = {}
    for r, f in rest:
        groups.setdefault((f.get("kind"), site_name(str(f.get("file", "?"))), f.get("line", "?")), set()).add(
            r.case)
    parts = [f"{kind} at {file}:{line} ({', '.join(sorted(cases))})" for (kind, file, line), cases in groups.items()]
    shown = "; ".join(parts[:4]) + (f"; ... {len(parts) - 4} more place(s)" if len(parts) > 4 else "")
    return f" [+{len(rest)} more: {shown}]"


def json_record(text: str):
    """The JSON object a gate's subprocess printed last. What the scenario's import or its kernels printed before
    it (DeepSpeed's logger writes to stdout: helper-64's resources gate failed 2 runs of 3) is skipped: the object
    is the last one that starts a line at column 0 and runs to the end."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        pass
    lines = text.splitlines()
    for i in [i for i, ln in enumerate(lines) if ln.startswith("{")][::-1][:20]:
        try:
            return json.loads("\n".join(lines[i:]))
        except (json.JSONDecodeError, ValueError):
            continue
    return None


def module_argv(module: str, *args: str) -> list[str]:
    """``python -m MODULE ARGS`` for a gate's subprocess, without the working directory first on ``sys.path``: a
    folder named ``tritondbg`` there (a clone's root, run from its parent) was imported instead of the installed
    package, and the resources gate failed with "cannot import name '__version__' from 'tritondbg' (unknown
    location)" (helpers 68-70). The scenario's own folder is put on the path by the loader, as in this process."""
    import sys

    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", module, *args]
    code = f"import runpy, sys; sys.argv[1:] = {list(args)!r}; del sys.path[0]; runpy.run_module({module!r}, " \
           "run_name='__main__', alter_sys=True)"
    return [sys.executable, "-c", code]
