"""``a and b`` / ``a or b`` in a kernel, as compiled Triton computes them.

The compiler's ``visit_BoolOp`` combines tensor operands element-wise (``logical_and`` / ``logical_or``, with a
deprecation warning for blocks) and short-circuits only on compile-time values. The interpreter runs the kernel as
Python, whose ``and`` asks a block for its truth, and the interpreter calls every block true: ``lo < x and x <= hi``
was ``x <= hi`` there, silently (helper-63: xformers' rope_padded with dynamic scaling, 7.69 off). The kernel's AST
is rewritten (``visit_BoolOp``, added to the interpreter's transformer by shims.py) into ``_tdbg_boolop(op, lambda:
a, lambda: b, ...)``, which evaluates the operands in order and combines them as the compiler does."""
from __future__ import annotations

import ast

NAME = "_tdbg_boolop"


def visit_BoolOp(self, node):  # noqa: N802 - ast.NodeTransformer's name
    node = self.generic_visit(node)
    op = "and" if isinstance(node.op, ast.And) else "or"
    thunks = [ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                         body=value) for value in node.values]
    call = ast.Call(func=ast.Name(id=NAME, ctx=ast.Load()), args=[ast.Constant(value=op), *thunks], keywords=[])
    return ast.copy_location(call, node)


def boolop(op: str, *thunks):
    """The compiler's rule: a compile-time operand (not a tensor) that decides the result returns it; the tensor
    operands are all evaluated and combined element-wise; with none, the last value."""
    import triton.language as tl

    tensors, value = [], None
    for thunk in thunks:
        value = thunk()
        if isinstance(value, tl.tensor):
            tensors.append(value)
            continue
        truth = bool(value.value if isinstance(value, tl.constexpr) else value)
        if (op == "and" and not truth) or (op == "or" and truth):
            return value
    if not tensors:
        return value
    result = tensors[-1]
    for t in reversed(tensors[:-1]):
        result = t.logical_and(result) if op == "and" else t.logical_or(result)
    return result


def install() -> callable:
    """Make ``_tdbg_boolop`` visible to rewritten kernels (the rewriter copies the interpreter module's globals
    into each kernel's); returns the undo."""
    from triton.runtime import interpreter as I

    had = NAME in vars(I)
    setattr(I, NAME, boolop)
    return (lambda: None) if had else (lambda: delattr(I, NAME) if hasattr(I, NAME) else None)
