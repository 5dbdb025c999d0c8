"""Kernel errors and prints attributed to the kernel line and the program instance.

An exception inside a kernel reaches the user as ``InterpreterError(repr(e))`` (nested once more per
device-function call) after the whole grid loop; the line and pid are lost. This instrument records them
as the exception passes (the builder still holds the failing pid) and rewrites the result's message to one
line: ``kernel.py:42: pid (3, 0, 0): IndexError: ...``. Failed ``tl.device_assert``s become findings, and
``tl.device_print``/``tl.static_print`` output (printed live by shims.py) is kept in the record.
"""
from __future__ import annotations

import contextlib

from tritondbg import errors, missing_return, stray_comma
from tritondbg.interp import dots, frames, hooks, shims
from tritondbg.runner import Instrument


def innermost(exc: BaseException) -> BaseException:
    """The original exception under the interpreter's InterpreterError wrappers."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        nxt = exc.__cause__ or (exc.__context__ if type(exc).__name__ == "InterpreterError" else None)
        if nxt is None:
            break
        exc = nxt
    return exc


class KernelReport(Instrument):
    name = "kernel_report"

    def __init__(self):
        self.error = None

    @contextlib.contextmanager
    def active(self, scenario, case, inputs):
        self.error = None
        shims.take_prints()
        dots.take_tf32_sites()
        try:
            yield self
        except Exception as exc:
            # the builder still holds the failing program's pid; it is only meaningful with a kernel frame
            self.error = (exc, hooks.current_pid(), frames.traceback_site(exc))
            raise

    def finish(self, result, out, expected) -> None:
        prints = shims.take_prints()
        if prints:
            result.extra["prints"] = prints
        tf32 = dots.take_tf32_sites()
        if tf32:  # a mismatch that fp32 operands truncated to TF32 may explain (the GPU computes the same)
            result.extra["tf32_dots"] = tf32
            if result.status == "fail" and dots.tf32_could_explain(result.errors):
                result.message = f"{result.message}; {dots.tf32_note(tf32)}"
        if self.error is None or result.status != "error":
            return
        exc, pid, site = self.error
        self.error = None
        cause = innermost(exc)
        if isinstance(cause, shims.DeviceAssertError):
            result.findings.append(dict(
                kind="device_assert", severity="error", file=cause.file, line=cause.line, pid=list(cause.pid),
                tensor=None, offsets=[cause.first] if isinstance(cause.first, int) else list(cause.first),
                message=f"tl.device_assert failed: {cause.assert_message} ({cause.lanes} of {cause.total} lanes, "
                        f"first at lane {cause.first})", source=frames.source_line(cause.file, cause.line)))
            result.message = (f"{frames.short_path(cause.file)}:{cause.line}: pid {tuple(cause.pid)}: "
                              f"device_assert failed: {cause.assert_message}")
            return
        text = errors.short_blocks(str(cause)).strip().splitlines()
        detail = f"{type(cause).__name__}: {text[0] if text else ''}".strip()
        if site is None:  # raised outside kernel code (the launch wrapper): the runner's message stands
            return
        file, line, func = site
        if not text:  # a bare ``tl.static_assert(BLOCK_N <= HEAD_DIM)`` said only "AssertionError:" (helper-81)
            source = frames.source_line(file, line)
            detail += f" `{source.strip()}` failed" if source and source.strip() else ""
        hint, line = missing_return.hint_and_line(exc, detail, site)  # (headed at the call of a helper
        if not hint:                                                     # that returned None, when known)
            hint, line = stray_comma.hint_and_line(detail, site)  # (or at a ``x = value,`` the line reads)
        hint = hint or errors.version_hint(detail)
        if hint:
            detail = f"{detail}; {hint}"
        where = f"{frames.short_path(file)}:{line}"
        result.message = f"{where}: pid {pid}: {detail}" if pid is not None else f"{where}: {detail}"
        result.findings.append(dict(kind="kernel_error", severity="error", file=file, line=line,
                                    pid=list(pid) if pid else None, tensor=None, offsets=[], function=func,
                                    message=detail, source=frames.source_line(file, line)))
