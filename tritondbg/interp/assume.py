"""``tl.assume(cond)`` that is false: a warning at its line, and the run goes on.

Triton's interpreter asserts an assume ("AssertionError: Assume failed") and the launch stops. On a GPU the
compiler takes the condition as given and optimises with it: no check, no stop, code that may be wrong for the
values that break it (undefined behaviour). aiter's GEMMs ``tl.assume(stride_ck > 0)`` and pass 0 when the K split
is 1 (helper-157): every launch stopped there, and nothing after it was checked. Now a false assume is a warning
naming the condition, its names' values and the first program; the run goes on. Without the sanitizers (no finding
to file it in) it is one stderr line per line of the kernel.
"""
from __future__ import annotations

import ast
import linecache
import sys

import numpy as np

_told: set = set()  # (file, line) told: as a finding, or on stderr (no sanitizer; not again in a plain rerun)


def install():
    from triton.runtime import interpreter as I

    B = I.InterpreterBuilder
    original = getattr(B, "create_assume")  # (AttributeError: a Triton without tl.assume, the shim is skipped)

    def create_assume(self, condition, *args, **kwargs):
        ok = np.asarray(condition.data if hasattr(condition, "data") else condition).astype(bool)
        if not ok.all():
            _false(self, sys._getframe(1), int((~ok).sum()), int(ok.size))

    B.create_assume = create_assume
    return lambda: setattr(B, "create_assume", original)


def _false(builder, caller, lanes: int, total: int) -> None:
    from tritondbg.interp import frames
    from tritondbg.interp.shadow_values import _sink

    frame = frames.kernel_frame(caller)
    file, line, function = frames.site(frame) if frame is not None else ("?", 0, "?")
    text, values = _condition(file, line, frame)
    pid = tuple(int(i) for i in builder.grid_idx)
    san = _sink.get("san")
    if san is not None and getattr(san, "launch", None) is not None:
        e = san._entry("assume", (file, line, function), None, "assume", condition=text, values=values,
                       lanes_false=f"{lanes} of {total}" if total > 1 else "")
        e["severity"] = "warning"
        _told.add((file, line))
        return
    if (file, line) not in _told:
        _told.add((file, line))
        print(f"tritondbg: warning: {frames.short_path(file)}:{line} pid {pid}: "
              + _sentence(text, values, ""), file=sys.stderr)


def _condition(file: str, line: int, frame) -> tuple[str, str]:
    """The source of the assume's condition, and its names' scalar values in the kernel's frame ("stride_ck = 0")."""
    src = linecache.getline(file, line).strip()
    start = src.find("assume(")
    text = src[start + len("assume("):] if start >= 0 else ""
    depth, end = 1, len(text)
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            end = i
            break
    text = text[:end].split(",")[0].strip()
    try:
        names = [n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)]
    except SyntaxError:
        names = []
    shown = []
    for name in dict.fromkeys(names):
        value = _scalar((frame.f_locals if frame is not None else {}).get(name))
        if value is not None:
            shown.append(f"{name} = {value}")
    return text, ", ".join(shown)


def _scalar(v):
    if isinstance(v, (bool, int, float)):
        return v
    for inner in (getattr(getattr(v, "handle", None), "data", None), getattr(v, "value", None)):
        if isinstance(inner, (bool, int, float)):
            return inner
        if inner is not None and np.size(inner) == 1:
            return np.asarray(inner).reshape(-1)[0].item()
    return None


def _sentence(text: str, values: str, lanes: str) -> str:
    cond = f"tl.assume({text})" if text else "tl.assume"
    where = f" ({values})" if values else ""
    some = f" in {lanes} lanes" if lanes else ""
    return (f"{cond} is false here{where}{some}: the GPU compiler takes it as true and optimises with it, so code that "
            "depends on it may be wrong for these values (undefined behaviour; Triton's interpreter stops at it, "
            "tritondbg goes on); pass values that satisfy it, or drop the assume")


def message(e: dict) -> str:
    """The finding's text (findings._message)."""
    n = len(e["programs"])
    return _sentence(e.get("condition", ""), e.get("values", ""), e.get("lanes_false", "")) + (
        f" ({n} program{'s' if n != 1 else ''})" if n > 1 else "")
