"""One-line words for what a scenario's callables did wrong (``make_inputs`` / ``launch`` / ``reference`` raised,
called ``sys.exit``): which callable, in which file, the innermost line of the user's code, and a library's line
deeper down."""
from __future__ import annotations

import os
import traceback

_TOOL_DIRS = tuple(f"{os.sep}{name}{os.sep}" for name in ("triton", "torch", "numpy", "tritondbg", "click"))
_STDLIB = os.path.dirname(os.__file__)


def library_frame(tb, shown) -> str:
    """`` (raised at FILE:LINE)`` for the innermost frame of a library the scenario calls (Liger's host code under
    site-packages: ``liger_kernel/ops/dyt.py:139``) when it lies deeper than the ``shown`` frame; else ''."""
    for frame in reversed(traceback.extract_tb(tb)):
        fname = os.path.realpath(frame.filename)
        if (frame.filename, frame.lineno, frame.name) == (shown.filename, shown.lineno, shown.name):
            return ""  # the shown frame is the innermost one worth naming
        if any(d in fname for d in _TOOL_DIRS) or (fname.startswith(_STDLIB) and "-packages" not in fname):
            continue
        if frame.filename.startswith("<"):
            continue
        return f" (raised at {frame.filename}:{frame.lineno})"
    return ""


def exit_error(exc: BaseException) -> BaseException:
    """A scenario's ``sys.exit()`` as an error saying so (it would have ended the run with no word, exit 0)."""
    if isinstance(exc, SystemExit):
        err = RuntimeError(f"sys.exit({exc.code!r}) called: scenario code must return (or raise), not end the "
                           "process")
        return err.with_traceback(exc.__traceback__)
    return exc


def describe_callable(fn) -> str:
    """`name` (file:line) of a scenario's callable, for one-line errors."""
    import functools

    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__call__", None), "__code__", None)
    return f"`{name}` ({code.co_filename}:{code.co_firstlineno})" if code is not None else f"`{name}`"


def _without_comment(line: str) -> str:
    """A source line without its trailing comment (when what is before the ``#`` still parses)."""
    import ast

    code = line.split("#", 1)[0].rstrip() if "#" in line else line
    try:
        ast.parse(code)
    except SyntaxError:
        return line
    return code


def statement(exc: BaseException) -> str:
    """For an exception with no text (a bare ``assert x.shape[1] % 64 == 0``): the statement that raised it, in
    backquotes, the library's own where it raised there (helper-62: triton_kernels' ``specialize`` asserts a
    JITFunction, which the interpreter's @triton.jit is not: said so); '' without a source line."""
    frames = traceback.extract_tb(exc.__traceback__)
    line = frames[-1].line if frames else None
    if not line:
        return ""
    text = f"`{_without_comment(line.strip())}`"
    if "JITFunction" in line and isinstance(exc, AssertionError):
        text += (" (under the interpreter @triton.jit gives an InterpretedFunction, not a JITFunction: code that "
                 "requires one cannot run there; `tritondbg ir` compiles it)")
    return text


def raised_message(role: str, fn, exc: BaseException) -> str:
    """One line for a scenario callable that raised: which one, in which file, and the innermost user line."""
    exc = exit_error(exc)
    where, shown = "", None
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if "site-packages" not in frame.filename and os.path.basename(os.path.dirname(frame.filename)) != "tritondbg":
            where, shown = f" at {frame.filename}:{frame.lineno}", frame
            break
    text = str(exc).strip().splitlines() or [statement(exc)]
    deeper = library_frame(exc.__traceback__, shown) if shown is not None else ""
    return (f"{role} {describe_callable(fn)} raised {type(exc).__name__}: {text[0] if text else ''}{where}"
            f"{deeper}").strip()
