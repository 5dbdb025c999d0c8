"""What a gate says about one kernel: status, a one-line reason, details, and the runs it made."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PASS, FAIL, SKIP = "pass", "FAIL", "skipped"


@dataclass
class GateOutcome:
    kernel: str
    gate: str
    status: str                  # PASS | FAIL | SKIP
    reason: str = ""             # one line: why it failed or was skipped (or a short summary when passed)
    details: dict[str, Any] = field(default_factory=dict)
    results: list = field(default_factory=list)  # CaseResult of the runs the gate made

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["results"] = [r.to_dict() for r in self.results]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "GateOutcome":
        from tritondbg.record import CaseResult

        d = dict(d)
        d["results"] = [CaseResult.from_dict(r) for r in d.get("results", [])]
        return cls(**d)
