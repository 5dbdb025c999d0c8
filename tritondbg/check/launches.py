"""Did the case launch a Triton kernel at all? (the correctness and sanitize gates)

A launch function that takes a torch fallback (a library's ``if not triton_available: return x * s``, a wrapper
that returns early on an empty input, a scenario that calls the reference by mistake) compares torch with torch:
the gates said "1 case x dtype runs match" / "no finding", exit 0, and nothing of the kernel was checked. Counted
here from the interpreter's launch events (interp/hooks.py): the CPU gates, which CI runs. Compiled runs are not
counted: a launch hook would take the bundled wrappers off their cached launchers and skip the check launch that
verifies those (kernels/_launch.py). A case that launched nothing gets an error finding: the gate fails, saying why.
"""
from __future__ import annotations

import contextlib

from tritondbg.interp import hooks
from tritondbg.runner import Instrument, current_mode


class LaunchCounter(Instrument, hooks.Listener):
    name = "launches"

    def __init__(self):
        self.count = 0

    @contextlib.contextmanager
    def active(self, scenario, case, inputs):
        self.count = 0
        self.counting = current_mode() == "interpret"
        code = getattr(scenario.launch_for(case), "__code__", None)
        self.site = (code.co_filename, code.co_firstlineno) if code is not None else ("", 0)
        if not self.counting:
            yield self
            return
        with hooks.listening(self):
            yield self

    def launch_begin(self, launch) -> None:
        self.count += 1

    def finish(self, result, out, expected) -> None:
        if not self.counting or self.count or out is None or result.status == "error":
            return  # compiled, launched, or the launch raised (which says so itself)
        if _empty(out):  # an early return on an empty input (the bundled wrappers do so): nothing to launch for
            return
        result.findings.append(dict(
            kind="no_launch", severity="error", file=self.site[0], line=self.site[1],
            message="the launch ran no Triton kernel (a torch fallback, an early return?): its outputs came from "
                    "torch, so nothing of the kernel was checked"))


def _empty(out) -> bool:
    """Every tensor the launch returned has no element (and it returned at least one)."""
    import torch

    items = list(out.values()) if isinstance(out, dict) else list(out) if isinstance(out, (tuple, list)) else [out]
    tensors = [t for t in items if isinstance(t, torch.Tensor)]
    return bool(tensors) and all(t.numel() == 0 for t in tensors)
