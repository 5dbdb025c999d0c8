"""Did the case launch a Triton kernel at all, on anything? (the correctness, sanitize and determinism gates)

A launch function that takes a torch fallback (a library's ``if not triton_available: return x * s``, a wrapper
that returns early on an empty input, a scenario that calls the reference by mistake) compares torch with torch:
the gates said "1 case x dtype runs match" / "no finding", exit 0, and nothing of the kernel was checked. Counted
here from the interpreter's launch events (interp/hooks.py): the CPU gates, which CI runs. Compiled runs are not
counted: a launch hook would take the bundled wrappers off their cached launchers and skip the check launch that
verifies those (kernels/_launch.py). A case that launched nothing gets an error finding: the gate fails, saying why.
A launch whose every output is empty is marked (``extra["outputs_empty"]``, in every mode): where every run of a
gate was so (a scenario of n = 0 cases only, a grid of 0 programs), ``nothing_checked`` says the gate checked nothing.
"""
from __future__ import annotations

import contextlib

from tritondbg.interp import hooks
from tritondbg.record import compared_nothing
from tritondbg.runner import Instrument, current_mode

NO_LAUNCH = "no_launch"  # the finding's kind


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
        empty = out is not None and result.status != "error" and _empty(out)
        if empty:  # (compared_nothing reads it where no reference was compared: the determinism gate)
            result.extra["outputs_empty"] = True
        if not self.counting or self.count or out is None or result.status == "error":
            return  # compiled, launched, or the launch raised (which says so itself)
        if empty:  # an early return on an empty input (the bundled wrappers do so): nothing to launch for
            return
        result.findings.append(dict(
            kind=NO_LAUNCH, severity="error", file=self.site[0], line=self.site[1],
            message="the launch ran no Triton kernel (a torch fallback, an early return?): its outputs came from "
                    "torch, so nothing of the kernel was checked"))


def _empty(out) -> bool:
    """Every tensor the launch returned has no element (and it returned at least one)."""
    import torch

    items = list(out.values()) if isinstance(out, dict) else list(out) if isinstance(out, (tuple, list)) else [out]
    tensors = [t for t in items if isinstance(t, torch.Tensor)]
    return bool(tensors) and all(t.numel() == 0 for t in tensors)


def ran_no_kernel(result) -> bool:
    """The run took no Triton kernel (``LaunchCounter``'s finding)."""
    return any(f.get("kind") == NO_LAUNCH for f in result.findings)


def nothing_checked(results, what: str = "checked") -> str:
    """Why a gate's runs checked nothing ("" when they did): every output of every run was empty (a scenario of
    n = 0 cases only; an empty case beside others is fine). The correctness, sanitize and determinism gates fail so."""
    if not compared_nothing(results):
        return ""
    n = len({(r.case, r.dtype) for r in results})
    return (f"every output of the {n} case x dtype run(s) was empty: nothing was {what}; give a case at least "
            "one element")
