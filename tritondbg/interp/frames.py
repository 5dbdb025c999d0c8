"""Which kernel line is running: the innermost frame of a user's ``@triton.jit`` function.

The interpreter rewrites each jit function's AST and compiles it with the kernel's own file name and line
numbers (``FunctionRewriter``), so a frame of that rewritten code *is* the kernel line. Jit functions of
Triton's own library (``tl.sum``, ``tl.cdiv``...) are skipped: a finding points at the user's line.
"""
from __future__ import annotations

import os
import sys

_state = {"n": -1, "codes": frozenset()}
_TRITON_DIR: list[str] = []


def _triton_dir() -> str:
    if not _TRITON_DIR:
        import triton

        _TRITON_DIR.append(os.path.dirname(os.path.abspath(triton.__file__)) + os.sep)
    return _TRITON_DIR[0]


def kernel_codes() -> frozenset:
    """Code objects of every rewritten user jit function (refreshed when the interpreter rewrites more).
    Called for every Python call while the stepper traces a program: the fast path is one dict length."""
    fns = _state.get("fns")
    if fns is None:
        from triton.runtime.interpreter import InterpretedFunction

        fns = _state["fns"] = InterpretedFunction.rewritten_fn
    if len(fns) != _state["n"]:
        tdir = _triton_dir()
        codes = set()
        for fn in list(fns.values()):
            code = getattr(fn, "__code__", None)
            if code is not None and not os.path.abspath(code.co_filename).startswith(tdir):
                codes.add(code)
        _state["codes"], _state["n"] = frozenset(codes), len(fns)
    return _state["codes"]


def is_kernel_code(code) -> bool:
    return code in kernel_codes()


def kernel_frame(frame=None):
    """The innermost frame running user kernel code, or None (outside a launch)."""
    codes = kernel_codes()
    f = frame if frame is not None else sys._getframe(1)
    while f is not None:
        if f.f_code in codes:
            return f
        f = f.f_back
    return None


def site(frame=None) -> tuple[str, int, str]:
    """(file, line, function) of the running kernel line; ("?", 0, "?") outside kernel code."""
    f = kernel_frame(frame if frame is not None else sys._getframe(1))
    if f is None:
        return ("?", 0, "?")
    return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


def traceback_site(exc: BaseException) -> tuple[str, int, str] | None:
    """The innermost user kernel frame in an exception's traceback chain (``__cause__``/``__context__``)."""
    codes = kernel_codes()
    found = None
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code in codes:
                found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno, tb.tb_frame.f_code.co_name)
            tb = tb.tb_next
        exc = exc.__cause__ or exc.__context__
    return found


def frame_site(frame) -> tuple[str, int, str] | None:
    """The innermost user kernel frame on a running stack (a signal handler's ``frame`` and its callers)."""
    codes = kernel_codes()
    while frame is not None:
        if frame.f_code in codes:
            return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return None


_STATEMENTS: dict[str, dict[int, int]] = {}


def statement_lines(file: str) -> dict[int, int]:
    """line -> first line of the statement it belongs to (for a compound statement, of its header), so a
    call spread over several lines is one step, not one per line Python reports while evaluating it."""
    if file not in _STATEMENTS:
        import ast
        import linecache

        mapping: dict[int, int] = {}
        try:
            tree = ast.parse("".join(linecache.getlines(file)))
        except (SyntaxError, ValueError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, ast.stmt):
                continue
            body = getattr(node, "body", None)
            end = (body[0].lineno - 1) if isinstance(body, list) and body and isinstance(body[0], ast.stmt) \
                else (node.end_lineno or node.lineno)
            for ln in range(node.lineno, max(end, node.lineno) + 1):
                # ast.walk visits outer statements first: inner ones overwrite their own lines
                mapping[ln] = node.lineno
        _STATEMENTS[file] = mapping
    return _STATEMENTS[file]


def source_line(file: str, line: int) -> str:
    import linecache

    return linecache.getline(file, line).strip()


STATEMENT_LINES = 8  # the most lines of a statement a finding shows


def source_statement(file: str, line: int) -> str:
    """The statement that starts at ``line``, all of it when it runs over several lines (a ``tl.load(`` whose
    ``mask=`` is two lines down: helper-51 saw only "a = tl.load(" for a missing token mask in vLLM's fused_moe),
    dedented, at most ``STATEMENT_LINES`` lines; the line alone when it does not parse from there."""
    import linecache
    import textwrap
    import tokenize

    lines = linecache.getlines(file)
    first = source_line(file, line)
    if not first or line < 1 or line > len(lines):
        return first
    chunk = iter(lines[line - 1:line - 1 + 4 * STATEMENT_LINES])
    end = None
    try:
        for tok in tokenize.generate_tokens(lambda: next(chunk, "")):
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                end = line + tok.start[0] - 1
                break
    except (tokenize.TokenError, SyntaxError):
        return first
    if end is None or end <= line:
        return first
    text = textwrap.dedent("".join(lines[line - 1:end])).rstrip().splitlines()
    if len(text) > STATEMENT_LINES:
        text = text[:STATEMENT_LINES] + ["..."]
    return "\n".join(t.rstrip() for t in text)


def site_name(file: str, beside: str | None = None) -> str:
    """How a message names a kernel's file: the file name, or for an installed package the path inside it
    (``fla/ops/gla/chunk.py``: flash-linear-attention has dozens of files called chunk.py). ``beside``: a file the
    same message names in full (the launch's); another file of the same name gets its folder too
    (``kernels/norm.py``: FlashInfer's triton/norm.py launches triton/kernels/norm.py; helper-97 read the kernel's
    line number as the wrapper's). A file under the working directory: its path from there (``ops/b/chunk.py``;
    helper-132: two kernels in pkg/a/chunk.py and pkg/b/chunk.py were both "chunk.py")."""
    from tritondbg.errors import installed_path

    name = installed_path(file)
    if not name:
        rel = short_path(str(file)) if os.path.isabs(str(file)) else str(file)
        name = rel if not os.path.isabs(rel) else package_path(rel)
    if beside and name == os.path.basename(str(beside)) and os.path.abspath(str(beside)) != os.path.abspath(str(file)):
        name = os.path.join(os.path.basename(os.path.dirname(os.path.abspath(str(file)))), name)
    return name


def package_path(file: str) -> str:
    """A file outside the working directory, not installed: its path from the top of the package it sits in
    (``mlstm_kernels/triton/chunkwise/xl_chunk/fw_kernel_recurrent.py``, a source tree on PYTHONPATH: helper-136
    read three different kernels as "fw_kernel_recurrent.py"), else its file name."""
    folder, name = os.path.split(os.path.abspath(file))
    parts = [name]
    while folder and os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, part = os.path.split(folder)
        parts.append(part)
        if not part:
            break
    return "/".join(reversed(parts))


def short_path(file: str) -> str:
    """A path relative to the working directory when it is under it (shorter messages), else absolute."""
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel


def in_grid_loop(exc, frame) -> bool:
    """Whether the interrupt landed in the interpreter's loop over a launch's grid (its ``for`` lines, the program
    id set, the call of the next program: helper-74 pressed Ctrl-C in a 2049-program grid and read "outside its
    kernel code (its arguments being copied ...)")."""
    import linecache

    frames_ = []
    if exc is not None:
        tb = exc.__traceback__
        while tb is not None:
            frames_.append((tb.tb_frame.f_code, tb.tb_lineno))
            tb = tb.tb_next
    f = frame
    while f is not None:
        frames_.append((f.f_code, f.f_lineno))
        f = f.f_back
    for code, line in frames_:
        if code.co_name == "__call__" and \
                code.co_filename.replace(os.sep, "/").endswith("triton/runtime/interpreter.py"):
            text = linecache.getline(code.co_filename, line).strip()
            if text.startswith(("for ", "interpreter_builder.set_grid_idx", "self.fn(")):
                return True
    return False


def interrupted_at(exc=None, frame=None) -> tuple[tuple[str, int, str] | None, tuple | None, bool]:
    """Where a run under the interpreter was when it was stopped, from ``exc``'s traceback (Ctrl-C's
    KeyboardInterrupt), else from the stack at ``frame`` (where a signal landed, the main thread's stack a watchdog
    reads): (the kernel line running as (file, line, function), None outside kernel code; the program id the
    interpreter's builder holds, None where it holds none; outside kernel code, whether it was in the interpreter's
    loop over a launch's grid, between two programs). The one answer program mode's interrupt line
    (attach.say_interrupted) and a timeout's or heartbeat's place (watchdog.where) put in words. Never raises: what
    cannot be read is None (False); no interpreter loaded, no kernel code runs as Python."""
    site = pid = None
    interpreter = sys.modules.get("triton.runtime.interpreter")
    if interpreter is not None:
        try:
            site = traceback_site(exc) if exc is not None else frame_site(frame)
        except Exception:  # noqa: BLE001 - the rest still helps
            site = None
        try:
            idx = getattr(getattr(interpreter, "interpreter_builder", None), "grid_idx", None)
            pid = tuple(int(i) for i in idx) if idx is not None else None
        except Exception:  # noqa: BLE001 - the line alone still helps
            pid = None
    between = False
    if site is None:
        try:
            between = in_grid_loop(exc, frame)
        except Exception:  # noqa: BLE001
            between = False
    return site, pid, between
