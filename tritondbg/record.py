"""The record of a run: one object from capture to every exporter (console, JSON, and later traces, JUnit).

Saved as JSON and loaded back, so an old run can be rendered again without re-running it.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tritondbg.compare import ErrorStats

SCHEMA = 1

# A run folder keeps tritondbg's own JSON (the run record) in this subfolder: the top of a profile run folder
# holds only trace files, since Holistic Trace Analysis reads every ``*.json`` there as a trace of one rank.
RECORD_DIR = "tritondbg"
RECORD_NAME = "record.json"


def record_path(run_dir: str | os.PathLike) -> Path:
    """Where a run folder keeps its run record: ``<run_dir>/tritondbg/record.json``."""
    return Path(run_dir) / RECORD_DIR / RECORD_NAME


# the status of a launch that ran and was compared with nothing (`profile -- CMD`: a program's launches have no
# reference): never a pass
UNCHECKED = "not checked"


@dataclass
class CaseResult:
    """One kernel launch (scenario x case x dtype) in one mode, against its reference."""

    kernel: str
    case: str
    dtype: str
    mode: str                      # "interpret" (CPU interpreter) or "compiled" (GPU)
    device: str
    seed: int
    params: dict[str, Any]
    config: dict[str, dict[str, Any]] = field(default_factory=dict)  # autotuned kernel -> config used
    config_source: dict[str, str] = field(default_factory=dict)      # kernel -> "--config", "case", "default", "autotuned"
    status: str = "pass"           # "pass" | "fail" (mismatch) | "error" (exception) | UNCHECKED
    message: str = ""
    errors: list[ErrorStats] = field(default_factory=list)
    wall_s: float = 0.0            # launch wall time (interpreter: the whole run of all programs)
    reference_s: float = 0.0
    flops: float | None = None
    bytes: float | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)     # sanitizers, stepper (later issues)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["errors"] = [e.to_dict() for e in self.errors]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CaseResult":
        d = dict(d)
        d["errors"] = [ErrorStats.from_dict(e) for e in d.get("errors", [])]
        return cls(**d)


def environment() -> dict[str, Any]:
    """Versions and machine facts, read without initialising CUDA when it is absent."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "host": socket.gethostname(),
        "TRITON_INTERPRET": os.environ.get("TRITON_INTERPRET", ""),
    }
    for mod in ("torch", "triton"):
        m = sys.modules.get(mod)
        env[mod] = getattr(m, "__version__", None) if m else None
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda
    else:
        env["gpu"] = None
    return env


@dataclass
class RunRecord:
    """A command's run: what was asked, where, and one CaseResult per launch."""

    command: str
    started: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    environment: dict[str, Any] = field(default_factory=dict)
    results: list[CaseResult] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    schema: int = SCHEMA
    tool_version: str = ""

    @property
    def passed(self) -> bool:
        """Every case passed; for ``tritondbg check`` (``extra["gates"]``), every gate item passed or was skipped
        with a reason: an item that failed, crashed, timed out or was interrupted is no pass, even when the
        cases that did run passed (a crashed worker leaves no case result)."""
        if self.extra.get("interrupted") or self.extra.get("incomplete"):  # incomplete: saved mid-run (a crash)
            return False
        gates = self.extra.get("gates")
        if gates is not None:  # check/outcome.py's statuses; only skips: nothing was checked, no pass
            from tritondbg.check.outcome import nothing_ran

            return (bool(gates) and all(g.get("status") in ("pass", "skipped") for g in gates)
                    and not nothing_ran(gates))
        return bool(self.results) and all(r.passed for r in self.results) and not self.compared_nothing

    @property
    def compared_nothing(self) -> bool:
        """Every case's outputs were empty (a case of n = 0 alone): it passed every gate and checked nothing. An
        empty case beside others (a wrapper's early return on an empty input) is fine."""
        return compared_nothing(self.results)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["results"] = [r.to_dict() for r in self.results]
        d["passed"] = self.passed
        return d

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "RunRecord":
        d = {k: v for k, v in d.items() if k != "passed"}
        if d.get("schema") != SCHEMA:
            raise ValueError(f"run record schema {d.get('schema')!r}, this tritondbg reads {SCHEMA}")
        d["results"] = [CaseResult.from_dict(r) for r in d.get("results", [])]
        return cls(**d)

    def save(self, path: str | os.PathLike) -> Path:
        """Write atomically (temp file + rename), so an interrupted run never leaves half a record."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part")
        tmp.write_text(self.to_json())
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "RunRecord":
        """Load a record file, or the record of a run folder (``tritondbg/record.json``, or ``record.json``
        at its top as written before that subfolder existed)."""
        path = Path(path)
        if path.is_dir():
            legacy = path / RECORD_NAME
            path = legacy if legacy.is_file() and not record_path(path).is_file() else record_path(path)
        return cls.from_dict(json.loads(path.read_text()))


def compared_nothing(results) -> bool:
    """Results that each compared outputs, every one of them with no element (see ``RunRecord.compared_nothing``), or
    whose launch returned only empty tensors (``check.launches.LaunchCounter`` marks it: a run with no reference)."""
    return bool(results) and all((r.errors and all(e.numel == 0 for e in r.errors)) or r.extra.get("outputs_empty")
                                 for r in results)
