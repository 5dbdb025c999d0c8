"""A kernel value that is a tuple by a stray trailing comma: ``x = tl.load(X + offs, mask=m),``.

The comma makes ``x`` a 1-tuple, and the kernel fails further on, where ``x`` is used: ``x * 2`` is the tuple
repeated (no error yet), and ``tl.store(Y, x * 2)`` says "cannot convert (array([...]), array([...])) of type
<class 'tuple'> to tensor" with two whole blocks printed, naming neither the comma nor its line. When a kernel
error mentions a tuple, ``hint_and_line`` reads the failing function's source for assignments of a one-element
tuple written without parentheses (``name = value,``: in a kernel nearly always a slip) and names them; the
finding is headed at the assignment where the failing line reads its name (as missing_return.py heads a helper
that returned None at its call)."""
from __future__ import annotations

import ast
import linecache

from tritondbg.missing_return import _function_at, _reads, _statement_at, compile_error_site


def mentions_tuple(text: str) -> bool:
    """An error text a tuple in place of a tensor may have caused."""
    return "tuple" in text


def stray_assigns(file: str, line: int, name: str) -> list[tuple[int, str, str]]:
    """(line, target name, source) of each ``target = value,`` in function ``name`` of ``file`` (the def holding
    ``line``): a one-element tuple without parentheses assigned to one name."""
    fdef = _function_at(file, name, line)
    if fdef is None:
        return []
    source = "".join(linecache.getlines(file))
    found = []
    for node in ast.walk(fdef):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 1):
            continue
        text = ast.get_source_segment(source, node.value) or ""
        if text.startswith("("):  # ``x = (v,)``: written on purpose
            continue
        stmt = " ".join((ast.get_source_segment(source, node) or "").split())
        found.append((node.lineno, node.targets[0].id, stmt if len(stmt) <= 70 else stmt[:67] + "..."))
    return sorted(found)


def hint_and_line(detail: str, site: tuple[str, int, str]) -> tuple[str, int]:
    """(the hint, the line to head the finding with) for a kernel error ``detail`` raised at ``site`` (file, line,
    function): the stray comma whose name the failing line reads (else the first one in the function), or
    ("", the site's line) where the text names no tuple or the function has no such assignment."""
    file, line, func = site
    if not mentions_tuple(detail):
        return "", line
    try:
        found = stray_assigns(file, line, func)
        fdef = _function_at(file, func, line) if found else None
        failing = _statement_at(fdef, line) if fdef is not None else None
        reads = _reads(failing) if failing is not None else set()
    except Exception:  # noqa: BLE001 - a hint is a courtesy: never replace the kernel's own error
        return "", line
    if not found:
        return "", line
    before = [f for f in found if f[0] <= line]
    hit = next((f for f in reversed(before) if f[1] in reads), None)
    at, var, stmt = hit or found[0]
    text = (f"line {at} (`{stmt}`) ends with a comma, which makes {var} a 1-element tuple, not a tensor: a stray "
            f"trailing comma?")
    if hit is not None and at != line:
        return f"{text} (the tuple fails at line {line})", at
    return text, line


def compile_hint(exc: BaseException, fn=None) -> str:
    """``hint_and_line``'s hint for a failed compile of a kernel for a GPU target (``tritondbg ir``, ``run``)."""
    site = compile_error_site(exc, fn)
    if site is None:
        return ""
    text, file, line, py = site
    return hint_and_line(text, (file, line, py.__name__))[0]
