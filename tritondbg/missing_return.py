"""A ``@triton.jit`` helper whose value a kernel uses but which returns nothing: a forgotten ``return``.

``y = scale(x, 2.0)`` where ``scale`` computes its result and never returns it makes ``y`` None, and the kernel
fails further on, at the line that uses ``y``, with Triton's "cannot convert None of type <class 'NoneType'> to
tensor" (the GPU compiler says the same, at the same line). Neither names the helper. When a kernel error mentions
None, ``hints`` reads the failing function's source and names each jit function it calls for a value that has no
``return <value>`` anywhere in its body, with both places: under the interpreter (interp/attribution.py) and in a
compile for a GPU target (``compile_hint``: ir/capture.py for ``tritondbg ir``, runner.py for ``run``).

The error is raised at the line that uses the None (``tl.store(out, y)``), not at the call that made it
(``y = helper(x)`` a line above): ``call_line`` finds that call where the failing line reads a name the call's
value was assigned to last, and ``hint_and_line`` gives a report the line to head the finding with (h103: a
planted ``tl_logaddexp`` without its ``return`` was headed at the store, line 114, not the call, line 113).

After a launch (``entries``) every use of such a helper's value is an error, and so is a bare call statement of one
that writes no memory and assigns to its own parameters (``_lost_work_calls``): its work never reaches the caller.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap


def mentions_none(text: str) -> bool:
    """An error text that a None value may have caused."""
    return "None" in text or "cannot unpack non-iterable" in text  # (the compiler: a None unpacked)


def _function_at(file: str, name: str, line: int) -> ast.FunctionDef | None:
    """The ``def name`` of ``file`` whose lines hold ``line`` (the innermost such)."""
    try:
        text = "".join(linecache.getlines(file))
        if not text:
            with open(file) as fh:
                text = fh.read()
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return None
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


def _resolve(node: ast.expr, globs: dict):
    """The object a call's function expression names in ``globs`` (``f``, ``mod.f``, ``mod.sub.f``), or None."""
    if isinstance(node, ast.Name):
        return globs.get(node.id, getattr(builtins, node.id, None))
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, globs)
        return getattr(base, node.attr, None) if base is not None else None
    return None


def _python_function(obj):
    """The Python function under a ``@triton.jit`` object, or None for anything else: a JITFunction's ``.fn``, or
    the ``.fn`` of the InterpretedFunction that stands for it in the globals of interpreted kernel code."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    fn = obj.fn if isinstance(obj, (JITFunction, InterpretedFunction)) else None
    return fn if inspect.isfunction(fn) else None


def _definition(fn) -> tuple[ast.FunctionDef, str] | None:
    """(its ``def`` with the file's line numbers, file) of a Python function."""
    try:
        lines, start = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or "?"
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    ast.increment_lineno(tree, start - 1)
    node = tree.body[0] if tree.body else None
    return (node, file) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def returns_value(fdef: ast.FunctionDef) -> bool:
    """Whether any ``return`` of the function (not of a function nested in it) gives a value other than None."""
    todo = list(fdef.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None \
                and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _used_calls(fdef: ast.FunctionDef):
    """Calls whose value the function uses (every call but a bare statement ``f(...)``)."""
    bare = {id(s.value) for s in ast.walk(fdef) if isinstance(s, ast.Expr)}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Call) and id(node) not in bare:
            yield node


def hints(file: str, line: int, name: str, globs: dict) -> list[str]:
    """One sentence per used call, in function ``name`` of ``file`` (the one holding ``line``), to a jit function
    that returns nothing; the call on ``line`` first. With none there, the same in the jit functions it calls (two
    levels down): a None that a helper passes on inside what it returns (helper-62: triton_kernels' topk, whose
    ``key_to_indx`` lost its ``return`` inside ``streaming_topk``'s tuple) fails in the kernel all the same."""
    fdef = _function_at(file, name, line)
    if fdef is None:
        return []
    found = _no_return_calls(fdef, file, globs, line)
    caller = None if found else fdef
    for parent, (cdef, cfile, cglobs) in _callees(fdef, globs):
        if found and parent is not caller:  # (every callee of the function that found one; none deeper)
            break
        caller = parent
        found += _no_return_calls(cdef, cfile, cglobs, None)
    return [h for *_, h in sorted(found)]


def _callees(fdef: ast.FunctionDef, globs: dict, levels: int = 2):
    """(the calling def, (def, file, globals)) of each jit function ``fdef`` calls, then of those they call,
    breadth first, ``levels`` deep, each once."""
    todo, seen = [(fdef, globs, 0)], set()
    while todo:
        node, g, depth = todo.pop(0)
        for call in ast.walk(node):
            callee = _python_function(_resolve(call.func, g)) if isinstance(call, ast.Call) else None
            where = _definition(callee) if callee is not None and id(callee) not in seen else None
            if where is None:
                continue
            seen.add(id(callee))
            yield node, (where[0], where[1], callee.__globals__)
            if depth + 1 < levels:
                todo.append((where[0], callee.__globals__, depth + 1))


def _no_return_calls(fdef: ast.FunctionDef, file: str, globs: dict, line: int | None) -> list[tuple]:
    """(not on ``line``, line, sentence) for each call in ``fdef`` that uses the value of a jit function that
    returns nothing."""
    from tritondbg.interp.frames import site_name

    found = []
    for call in _used_calls(fdef):
        callee = _python_function(_resolve(call.func, globs))
        if callee is None:
            continue
        where = _definition(callee)
        if where is None or returns_value(where[0]):
            continue
        cdef, cfile = where
        text = ast.get_source_segment("".join(linecache.getlines(file)), call) or f"{cdef.name}(...)"
        text = " ".join(text.split())
        if len(text) > 60:
            text = text[:57] + "..."
        at = f"line {call.lineno}" if line is not None else f"{site_name(file)}:{call.lineno}"
        found.append((call.lineno != line, call.lineno,
                      f"the @triton.jit function {cdef.name} ({site_name(cfile, file)}:{cdef.lineno}) returns "
                      f"nothing, yet {at} uses its value (`{text}`): a forgotten `return`?"))
    return found


def _statement_at(fdef: ast.FunctionDef, line: int) -> ast.stmt | None:
    """The innermost statement of ``fdef`` (not of a function nested in it) whose lines hold ``line``."""
    best, todo = None, list(fdef.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
            best = node
            todo = [n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt)]
    return best


def _reads(stmt: ast.stmt) -> set[str]:
    """Names a statement reads: all of a simple statement's; a compound one's header only (an ``if``'s test, a
    ``for``'s iterable, a ``with``'s items), not its body."""
    if isinstance(stmt, (ast.If, ast.While)):
        parts = [stmt.test]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        parts = [stmt.iter]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        parts = list(stmt.items)
    else:
        parts = [stmt]
    return {n.id for p in parts for n in ast.walk(p) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _assigned(stmt: ast.stmt) -> set[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else \
        [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)) else []
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def call_line(file: str, line: int, name: str, globs: dict) -> int | None:
    """The line of the call, in function ``name`` of ``file``, of a jit function that returns nothing whose value
    (``y = helper(x)``) the statement on ``line`` reads (``tl.store(out, y)``): the last statement before ``line``
    that assigns a name that statement reads is that call. ``line`` itself where such a call is on it; None where
    no such call is known (several names, or a None passed on through another helper)."""
    fdef = _function_at(file, name, line)
    if fdef is None:
        return None
    found = _no_return_calls(fdef, file, globs, line)
    if not found:
        return None
    if any(not other for other, *_ in found):
        return line
    bad = {lineno for _, lineno, _ in found}
    failing = _statement_at(fdef, line)
    if failing is None:
        return None
    stmts = [n for n in ast.walk(fdef) if isinstance(n, ast.stmt) and n is not fdef]
    in_if = {id(n) for s in stmts if isinstance(s, ast.If) for n in ast.walk(s) if n is not s}
    blamed = set()
    for var in _reads(failing):
        before = sorted((s for s in stmts if var in _assigned(s) and (s.end_lineno or s.lineno) < failing.lineno),
                        key=lambda s: s.lineno)
        calls = [s for s in before if isinstance(s, (ast.Assign, ast.AnnAssign)) and isinstance(s.value, ast.Call)
                 and s.value.lineno in bad]
        if before and calls and before[-1] is calls[-1]:
            blamed.add(calls[-1].value.lineno)
        elif len(calls) == 1 and all(id(s) in in_if for s in before[before.index(calls[0]) + 1:]):
            # assigned again since only under ifs (kernl's `if ACTIVATION == "relu": acc = relu(acc)` after
            # `if ACTIVATION == "tanh": acc = tanh(acc)`, a constexpr choosing one): helper-139
            blamed.add(calls[0].value.lineno)
    return blamed.pop() if len(blamed) == 1 else None


def hint(detail: str, file: str, line: int, func: str, globs: dict | None) -> str:
    """The first hint for an error ``detail`` raised at ``file:line`` in function ``func`` (whose module's globals
    are ``globs``), or "" (no None in the text, no such call, or the source cannot be read)."""
    if globs is None or not mentions_none(detail):
        return ""
    try:
        found = hints(file, line, func, globs)
    except Exception:  # noqa: BLE001 - a hint is a courtesy: never replace the kernel's own error
        return ""
    return found[0] + (f" ({len(found) - 1} more such call(s))" if len(found) > 1 else "") if found else ""


def hint_for(exc: BaseException, detail: str, site: tuple[str, int, str]) -> str:
    """``hint`` for an interpreted kernel's error ``detail`` raised at ``site`` (file, line, function): the
    function's globals are those of its frame in ``exc``'s traceback."""
    file, _, func = site
    return hint(detail, *site, _frame_globals(exc, file, func)) if mentions_none(detail) else ""


def hint_and_line(exc: BaseException, detail: str, site: tuple[str, int, str]) -> tuple[str, int]:
    """(``hint_for``'s hint, the line to head the finding with) for an interpreted kernel's error raised at
    ``site``: the line of the call whose None the failing line uses (``call_line``), where it is known and
    another line, and then the hint says where the None failed; else the site's own line."""
    file, line, func = site
    text = hint_for(exc, detail, site)
    if not text:
        return "", line
    try:
        call = call_line(file, line, func, _frame_globals(exc, file, func) or {})
    except Exception:  # noqa: BLE001 - as hint(): a courtesy
        call = None
    if call is None or call == line:
        return text, line
    return f"{text} (its None fails at line {line})", call


def compile_hint(exc: BaseException, fn=None) -> str:
    """``hint`` for a failed compile of a kernel for a GPU target (``tritondbg ir``, ``run``): the line from the
    chain's Triton CompilationError (counted from the kernel's ``def`` line), the kernel ``fn`` (a JITFunction)
    given or found in the traceback (``_compiled_fn``), the error text from the error under it."""
    site = compile_error_site(exc, fn)
    if site is None or not mentions_none(site[0]):
        return ""
    text, file, line, py = site
    return hint(text, file, line, py.__name__, py.__globals__)


def compile_error_site(exc: BaseException, fn=None) -> tuple | None:
    """(error text, file, line, the kernel's Python function) of a failed compile for a GPU target: the line from
    the chain's Triton CompilationError, the kernel ``fn`` given or found in the traceback; None where unknown."""
    err = next((e for e in _chain(exc) if hasattr(getattr(e, "node", None), "lineno") and hasattr(e, "src")), None)
    if err is None:
        return None
    fn = fn if fn is not None else _compiled_fn(exc)
    py = getattr(fn, "fn", None)
    if not inspect.isfunction(py):
        return None
    cause = err.__cause__
    text = f"{type(cause).__name__}: {cause}" if cause is not None else str(getattr(err, "error_message", "") or "")
    where = kernel_line(py, err.node.lineno)
    return (text, *where, py) if where else None


def kernel_line(py, lineno: int) -> tuple[str, int] | None:
    """(file, line) of line ``lineno`` of a jit function's source as Triton counts it (1 = the ``def`` line,
    decorators not counted), or None where the source cannot be read."""
    try:
        lines, start = inspect.getsourcelines(py)
        offset = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("def "))
        return inspect.getsourcefile(py) or "", start + offset + lineno - 1
    except (OSError, TypeError, StopIteration):
        return None


def _chain(exc: BaseException):
    """``exc`` and the exceptions under it (``__cause__``, else ``__context__``), each once."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _frames(exc: BaseException):
    """Every traceback frame of the chain, outermost first within each exception."""
    for e in _chain(exc):
        tb = e.__traceback__
        while tb is not None:
            yield tb.tb_frame
            tb = tb.tb_next


def _compiled_fn(exc: BaseException):
    """The JITFunction Triton's front end was compiling when ``exc`` was raised: the ``fn`` of the ASTSource in
    ``compile`` / ``make_ir`` (Triton cuts the traceback below them), or ``ast_to_ttir``'s own ``fn``."""
    from triton.runtime.jit import JITFunction

    found = None
    for frame in _frames(exc):
        local = frame.f_locals
        for obj in (local.get("fn"), getattr(local.get("self"), "fn", None), getattr(local.get("src"), "fn", None)):
            if isinstance(obj, JITFunction):
                found = obj
    return found


def _frame_globals(exc: BaseException, file: str, func: str) -> dict | None:
    """The globals of the innermost traceback frame running ``func`` of ``file`` (the kernel's module)."""
    globs = None
    for frame in _frames(exc):
        if frame.f_code.co_name == func and frame.f_code.co_filename == file:
            globs = frame.f_globals
    return globs


_found: dict = {}  # id(python function) -> its no-return calls [(file, line, sentence)], read once per kernel


def entries(san, launch, error) -> None:
    """After a launch that ran without error: an error entry of ``san`` for each call, in the kernel or the jit
    functions it calls (two levels down), that uses the value of a jit function returning nothing. Where the None
    fails an op the kernel_error says it (``hint``); where it does not (helper-140: Cut Cross-Entropy's
    ``if _block_is_filtered(...): return`` with the helper's ``return`` dropped: None is false, the branch never
    taken, gradient filtering silently off; the GPU compiler takes it too) nothing else would."""
    fn = getattr(launch, "fn", None)
    fn = fn if inspect.isfunction(fn) else getattr(fn, "fn", None)
    if error is not None or not inspect.isfunction(fn):
        return
    if id(fn) not in _found:
        try:
            _found[id(fn)] = _static_calls(fn)
        except Exception:  # noqa: BLE001 - a static check that cannot read the source finds nothing
            _found[id(fn)] = []
    for file, line, sentence in _found[id(fn)]:
        e = san._entry("no_return", (file, line, launch.kernel), None, "call", text=sentence)
        e["pid"], e["programs"] = [], set()
        e["seq"] = 0  # told first, as a compile refusal: the None it makes (a mask) explains what the launch did with
                      # it (helper-148: a store's out_of_bounds and race came before the helper's missing return)


def _static_calls(fn) -> list[tuple]:
    where = _definition(fn)
    if where is None:
        return []
    funcs = [(where[0], where[1], fn.__globals__)] + [f for _, f in _callees(where[0], fn.__globals__)]
    return [(file, line, sentence) for fdef, file, globs in funcs
            for _, line, sentence in _no_return_calls(fdef, file, globs, -1) + _lost_work_calls(fdef, file, globs)]


_EFFECTS = ("store", "device_print", "device_assert", "static_print", "static_assert", "debug_barrier", "print")


def _lost_work_calls(fdef, file: str, globs: dict) -> list[tuple]:
    """(True, line, sentence) for each bare call statement ``helper(m_i, l_i, acc)`` in ``fdef`` to a jit function
    that returns nothing, writes no memory (no store, atomic, print, assert, barrier, no call of another jit
    function) and assigns to its own parameters: the caller's variables never change, the call does nothing
    (helper-153: MInference's online-softmax update with its ``return`` dropped, called as a statement: only a
    NaN warning, whose advice pointed away from the cause)."""
    from tritondbg.interp.frames import site_name

    found = []
    for stmt in ast.walk(fdef):
        call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
        callee = _python_function(_resolve(call.func, globs)) if call is not None else None
        where = _definition(callee) if callee is not None else None
        if where is None or returns_value(where[0]):
            continue
        cdef, cfile = where
        params = {a.arg for a in cdef.args.args}
        changed = sorted({n for node in ast.walk(cdef) for n in _assigned(node) if n in params} if isinstance(
            cdef, ast.FunctionDef) else set())
        if not changed or _has_effects(cdef, callee.__globals__):
            continue
        text = " ".join((ast.get_source_segment("".join(linecache.getlines(file)), call) or f"{cdef.name}(...)").split())
        text = text if len(text) <= 60 else text[:57] + "..."
        names = ", ".join(changed)
        found.append((True, call.lineno,
                      f"the @triton.jit function {cdef.name} ({site_name(cfile, file)}:{cdef.lineno}) returns nothing and "
                      f"writes no memory, yet line {call.lineno} calls it for its effect (`{text}`): its assignments "
                      f"to {names} stay inside it (a jit function gets values, not the caller's variables), so the "
                      f"call does nothing: return them and assign them at the call ({names} = {cdef.name}(...))"))
    return found


def _has_effects(cdef, globs: dict) -> bool:
    """Whether a jit function's body can write memory or say something: a store, an atomic, a print or assert, a
    barrier, or a call of another jit function (not looked into)."""
    for node in ast.walk(cdef):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in _EFFECTS or name.startswith("atomic"):
            return True
        called = _python_function(_resolve(node.func, globs))
        if called is not None and not (called.__module__ or "").startswith("triton."):  # (tl.max, tl.sum: pure)
            return True
    return False
