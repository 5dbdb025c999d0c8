"""Did the case launch a Triton kernel at all? (the correctness and sanitize gates)

A launch function that takes a torch fallback (a library's ``if not triton_available: return x * s``, a wrapper
that returns early on an empty input, a scenario that calls the reference by mistake) compares torch with torch:
the gates said "1 case x dtype runs match" / "no finding", exit 0, and nothing of the kernel was checked. Counted
here from Triton's own launch events: the interpreter's launches (interp/hooks.py) and, compiled, the launch hook
every CompiledKernel launch calls (the bundled wrappers' cached launchers too: they take Triton's path while a hook
is installed). A case that launched nothing gets an error finding, so the gate fails and says why.
"""
from __future__ import annotations

import contextlib

from tritondbg.runner import Instrument, current_mode


class LaunchCounter(Instrument):
    name = "launches"

    def __init__(self):
        self.count = 0

    @contextlib.contextmanager
    def active(self, scenario, case, inputs):
        self.count = 0
        code = getattr(scenario.launch_for(case), "__code__", None)
        self.site = (code.co_filename, code.co_firstlineno) if code is not None else ("", 0)
        if current_mode() == "interpret":
            from tritondbg.interp import hooks

            counter = self

            class _Count(hooks.Listener):
                def launch_begin(self, launch) -> None:
                    counter.count += 1

            with hooks.listening(_Count()):
                yield self
            return
        import triton

        from tritondbg.program.attach import chain_hook

        def count(*_args, **_kwargs):
            self.count += 1

        undo = chain_hook(triton.knobs.runtime, "launch_enter_hook", count)
        try:
            yield self
        finally:
            undo()

    def finish(self, result, out, expected) -> None:
        if self.count or out is None or result.status == "error":  # a launch that raised says so itself
            return
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
