"""The program's tracebacks without tritondbg's frames.

An error in a kernel under `tritondbg interpret -- CMD` (or any error raised through a launch tritondbg wraps) went
up through ten-odd frames of tritondbg (the stand-in's ``run``, attach's observer chain, the checker, the
interpreter hooks) between the program's line and Triton's: noise in a traceback that is the program's. Here
those frames are left out of the tracebacks a program prints: Python's uncaught-exception printer
(``sys.excepthook``) and pytest's (``__tracebackhide__`` in tritondbg's modules, a callable pytest asks per
exception). An exception raised inside tritondbg itself (its innermost frame is tritondbg's: a bug of ours) keeps
every frame; a KeyboardInterrupt is not one (a Ctrl-C during a launch lands in tritondbg's frames), and its
traceback leaves Triton's frames out too.
"""
from __future__ import annotations

import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # .../tritondbg/


def ours(filename: str) -> bool:
    return filename.startswith(ROOT)


def _raised_by_us(exc: BaseException) -> bool:
    from tritondbg.errors import KernelError

    if isinstance(exc, (KeyboardInterrupt, KernelError)):  # Ctrl-C lands wherever the program was, tritondbg's
        return False  # code included; a kernel's error (a failed device_assert) is raised by our interpreter shims
    tb, last = exc.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    if last is None or not ours(last.tb_frame.f_code.co_filename):
        return False
    return not _forwarded(last)


def _forwarded(tb) -> bool:
    """Whether the innermost frame is one of tritondbg's torch function modes handing the program's op on
    (``result = func(*args, **kwargs)``): the op raised (helper-88: an IndexError of the program's own indexing
    showed the modes' frames as if tritondbg had raised it)."""
    import linecache

    code = tb.tb_frame.f_code
    return code.co_name == "__torch_function__" and "func(*args" in linecache.getline(code.co_filename, tb.tb_lineno)


def _triton_dir() -> str | None:
    triton = sys.modules.get("triton")
    path = getattr(triton, "__file__", None)
    return os.path.dirname(os.path.abspath(path)) + os.sep if path else None


def _without_ours(tb, also: str | None = None):
    """``tb`` less tritondbg's frames (and those under the folder ``also``), and torch's dispatch to a torch
    function mode where the mode is tritondbg's (``overrides.py handle_torch_function``: helper-107 saw it twice in
    a Ctrl-C's traceback, the cpu stand-in's modes)."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    kept = []
    for i, entry in enumerate(entries):
        name = entry.tb_frame.f_code.co_filename
        if ours(name) or (also and name.startswith(also)):
            continue
        if name.endswith(os.path.join("torch", "overrides.py")) and i + 1 < len(entries) and \
                ours(entries[i + 1].tb_frame.f_code.co_filename):
            continue
        kept.append(entry)
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def strip(exc: BaseException | None, seen: set | None = None) -> None:
    """Leave tritondbg's frames out of ``exc``'s traceback and those of the exceptions chained to it."""
    seen = set() if seen is None else seen
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if exc.__traceback__ is not None and not _raised_by_us(exc):
            # a Ctrl-C in an interpreted launch: Triton's interpreter frames too (forty lines of them; the
            # program's and the kernel's own lines stay, and tritondbg said where it stopped)
            also = _triton_dir() if isinstance(exc, KeyboardInterrupt) else None
            exc.__traceback__ = _without_ours(exc.__traceback__, also)
        strip(exc.__cause__, seen)
        exc = exc.__context__


def install() -> None:
    """For the program's life: the uncaught-exception printer leaves our frames out (chained after any hook the
    program or another tool set before)."""
    previous = sys.excepthook
    if getattr(previous, "_tdbg", False):
        return

    def hook(kind, value, tb):
        try:
            strip(value)
            tb = value.__traceback__
        except Exception:  # noqa: BLE001 - print what there is
            pass
        previous(kind, value, tb)

    hook._tdbg = True
    sys.excepthook = hook


def _hide(excinfo) -> bool:
    """pytest's question for a frame of a tritondbg module: hide it unless the error is ours."""
    try:
        return not _raised_by_us(excinfo.value)
    except Exception:  # noqa: BLE001
        return False


def hide_from_pytest() -> None:
    """Mark tritondbg's loaded modules for pytest's traceback printer (``__tracebackhide__``)."""
    for name, module in list(sys.modules.items()):
        if (name == "tritondbg" or name.startswith("tritondbg.")) and module is not None:
            try:
                module.__tracebackhide__ = _hide
            except Exception:  # noqa: BLE001
                continue
