"""The module-level values a kernel reads (``SCALE: tl.constexpr = float(os.environ["SCALE"])``), saved with its
reproducer and put back on replay.

A reproducer loads the kernel's module again; a global computed at import from the environment, a config file or
the command line would take today's value, and the replay would compute something else than the program did (a
"mismatch" the kernel is not to blame for). ``collect`` walks the kernel and the ``@triton.jit`` helpers it calls
(their source's names) and keeps the plain values among their globals: ``tl.constexpr`` of an int, float, bool,
str or None, and those types bare. ``restore`` sets them in the loaded modules and says which differed.
"""
from __future__ import annotations

import ast
import textwrap
from typing import Any

from tritondbg.configs import jit_function

_PLAIN = (bool, int, float, str, type(None))
_MAX_FUNCTIONS = 64  # jit helpers followed from one kernel


def _source(fn) -> str | None:
    src = getattr(fn, "src", None)
    if isinstance(src, str):
        return src
    import inspect

    try:
        return inspect.getsource(fn.fn)
    except (OSError, TypeError):
        return None


def _encode(v) -> dict | None:
    import triton.language as tl

    if isinstance(v, tl.constexpr):
        inner = v.value
        return {"constexpr": inner} if isinstance(inner, _PLAIN) else None
    if isinstance(v, _PLAIN):
        return {"v": v}
    return None


def _decode(enc: dict):
    import triton.language as tl

    return tl.constexpr(enc["constexpr"]) if "constexpr" in enc else enc["v"]


def _walk(kernel):
    """(jit function, its globals, the global names its source reads) for the kernel and its jit helpers."""
    seen: set[int] = set()
    todo = [jit_function(kernel)]
    while todo and len(seen) < _MAX_FUNCTIONS:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        g = fn.fn.__globals__
        try:
            tree = ast.parse(textwrap.dedent(_source(fn) or ""))
        except (SyntaxError, TypeError, ValueError):
            continue
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        names = {n for n in names if n in g}
        for n in names:
            helper = jit_function(g[n])
            if helper is not None:
                todo.append(helper)
        yield fn, g, names


def collect(kernel) -> dict[str, dict[str, Any]]:
    """{module name: {global name: encoded value}} of the plain values the kernel and its helpers read."""
    out: dict[str, dict[str, Any]] = {}
    try:
        for _, g, names in _walk(kernel):
            for n in sorted(names):
                enc = _encode(g[n])
                if enc is not None:
                    out.setdefault(g.get("__name__", "?"), {})[n] = enc
    except Exception:  # noqa: BLE001 - a nicety of the reproducer: never fails a capture
        return {}
    return out


def restore(kernel, saved: dict[str, dict[str, Any]], captured_module: str) -> list[str]:
    """Set the saved values in the modules the loaded kernel and its helpers read them from; returns
    ``NAME: X in the program, Y on import here`` for each value this import gave differently.
    ``captured_module``: the kernel's module name in the program (``__main__``, or the package module; the replay
    may load that file under a private name)."""
    if not saved:
        return []
    own = jit_function(kernel)
    own_globals = own.fn.__globals__ if own is not None else None
    changed = []
    for _, g, names in _walk(kernel):
        values = saved.get(captured_module if g is own_globals else g.get("__name__", "?")) or {}
        for n in sorted(names & set(values)):
            have = g.get(n)
            if _encode(have) != values[n]:
                want = _decode(values[n])
                changed.append(f"{n}: {_shown(want)} in the program, {_shown(have)} on import here")
                g[n] = want
    return changed


def _shown(v) -> str:
    import triton.language as tl

    return repr(v.value if isinstance(v, tl.constexpr) else v)
