"""Kernels defined inside a function (``def build(): @triton.jit def kernel(...)``: torchao builds its blockwise
quantization kernels so): a reproducer cannot import them by name. A capture saves such a kernel as a module of its
own instead (``standalone_source``): the defining file's imports, its module-level ``@triton.jit`` helpers and
simple constants, the enclosing function's ``@triton.jit`` functions lifted to module level, and the kernel's
closure values that are plain numbers, strings or booleans (what a jit function can read of its closure).
The reproducer loads it by the kernel's name (``kernel_module.load_kernel``).
"""
from __future__ import annotations

import ast
import textwrap


def _jit_decorated(node) -> bool:
    return isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list)


def _lifted(node: ast.FunctionDef) -> ast.FunctionDef:
    """The function with only its jit decorator (autotune / heuristics dropped: the reproducer pins the config)."""
    node.decorator_list = [d for d in node.decorator_list if "jit" in ast.unparse(d)]
    return node


def _constant(node) -> bool:
    """A module-level NAME = literal (or tl.constexpr(literal)) assignment."""
    if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
        return False
    value = node.value
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("constexpr") and len(value.args) == 1:
        value = value.args[0]
    return isinstance(value, ast.Constant) or (isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant))


def standalone_source(path: str, qualname: str, fn=None) -> str | None:
    """A module that defines the nested kernel ``qualname`` (``build.<locals>.kernel``) at top level, or None when
    its source cannot be found. ``fn``: the live jit function (its closure values)."""
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    try:
        with open(path) as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None
    body, scope = [], tree.body
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            body.append(node)
        elif _constant(node):  # an annotation may name what the module defines later: dropped
            body.append(ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno)
                        if isinstance(node, ast.AnnAssign) else node)
        elif _jit_decorated(node) and node.name != parts[-1]:
            body.append(_lifted(node))
    for name in parts[:-1]:  # down to the function that defines the kernel
        outer = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name), None)
        if outer is None:
            return None
        scope = outer.body
    lifted = [n for n in scope if isinstance(n, (ast.Import, ast.ImportFrom))]
    lifted += [_lifted(n) for n in scope if _jit_decorated(n)]
    if not any(isinstance(n, ast.FunctionDef) and n.name == parts[-1] for n in lifted):
        return None
    closure = _closure_constants(fn)
    tree.body = body + closure + lifted
    return (f"# {qualname} from {path}: defined inside a function, so tritondbg saved it as a module of its own\n"
            + ast.unparse(ast.fix_missing_locations(tree)) + "\n")


def _closure_constants(fn) -> list:
    """``NAME = value`` for each plain value (int, float, bool, str) the kernel's Python function closes over."""
    from tritondbg.configs import jit_function

    # autotuner / heuristics / jit wrappers down to the Python function
    inner = fn if hasattr(fn, "__code__") else getattr(jit_function(fn), "fn", None)
    if inner is None or not getattr(inner, "__closure__", None):
        return []
    out = []
    for name, cell in zip(inner.__code__.co_freevars, inner.__closure__):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if isinstance(value, (bool, int, float, str)):
            out.extend(ast.parse(textwrap.dedent(f"{name} = {value!r}")).body)
    return out
