"""Kernels defined inside a function (``def build(): @triton.autotune(...) @triton.jit def kernel(...)``: torchao
builds its fp8 kernels so): a reproducer cannot import them by name. They are lifted to a module of their own
(``lifted_tree``): the defining file's imports, its module-level ``@triton.jit`` helpers and simple constants, the
enclosing function's imports and ``@triton.jit`` functions lifted to module level, the kernel's closure values
that are plain numbers, strings or booleans (what a jit function can read of its closure), and the kernel's own
decorators (``@triton.autotune`` / ``@triton.heuristics``) with the statements they need (``configs = [...]``
before the kernel, a module-level prune function): a decorator that needs what cannot be lifted (an argument of
the enclosing function) is dropped, and the replay rebuilds the autotuner from the configs the capture recorded.

A capture saves the lifted module in ``src/`` (``standalone_source``); a replay lifts the kernel again from its
file as it is now (``load_current``, line numbers kept: findings point at the file), so an edit made since is what
gets checked (helper-90); the saved copy is replayed only when the file is gone or no longer defines the kernel
(``kernel_module._nested``).
"""
from __future__ import annotations

import ast
import builtins
import importlib.util
import sys
import textwrap


def _jit_decorated(node) -> bool:
    return isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list)


def _lifted(node: ast.FunctionDef) -> ast.FunctionDef:
    """The function with only its jit decorator (a helper's autotune / heuristics are not needed)."""
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


def _free_names(node) -> set:
    """Names ``node`` reads that it does not bind itself (lambda / function arguments, comprehension targets)."""
    loads, bound = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        bound.discard(node.name)
    return loads - bound


def _defines(node) -> set:
    """Names a statement binds (an assignment's plain targets, a def, a class, an import)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
        node, ast.AnnAssign) and node.value is not None else []
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


class _Scope:
    def __init__(self, body: list, params: set):
        self.params, self.defs = params, {}
        for node in body:
            for name in _defines(node):
                self.defs[name] = node  # the last definition before the kernel


def _params(fn) -> set:
    a = fn.args
    return {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [v for v in (a.vararg, a.kwarg) if v]}


def _needs(decorator, scopes: list) -> list | None:
    """The statements (of ``scopes``: the module's, then each enclosing function's before the kernel) that
    ``decorator`` needs, or None when a name it reads cannot be lifted (an argument of an enclosing function)."""
    picked, seen, todo = [], set(), [(name, len(scopes) - 1) for name in _free_names(decorator)]
    while todo:
        name, level = todo.pop()
        if (name, level) in seen:
            continue
        seen.add((name, level))
        for i in range(level, -1, -1):
            scope = scopes[i]
            if name in scope.params:
                return None
            node = scope.defs.get(name)
            if node is not None:
                if all(node is not p for p in picked):
                    picked.append(node)
                    todo += [(n, i) for n in _free_names(node)]
                break
        else:
            if not hasattr(builtins, name):
                return None
    return picked


def lifted_tree(path: str, qualname: str, closure: list | None = None, *, decorated: bool = True):
    """The module defining the nested kernel ``qualname`` (``build.<locals>.kernel``) at top level, line numbers
    kept, or None when the file no longer defines it. Raises OSError / SyntaxError when the file cannot be read /
    parsed. ``closure``: ``NAME = value`` statements of the kernel's closure values; ``decorated``: keep the
    kernel's autotune / heuristics decorators that can be (else its jit decorator only)."""
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    scopes, scope, bodies = [_Scope(tree.body, set())], tree.body, []
    for name in parts[:-1]:  # down to the function that defines the kernel
        outer = next((n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name), None)
        if outer is None:
            return None
        scope = outer.body
        bodies.append(scope)
        kernel_at = next((i for i, n in enumerate(scope) if isinstance(n, ast.FunctionDef) and n.name == parts[-1]),
                         len(scope))
        scopes.append(_Scope(scope[:kernel_at], _params(outer) if isinstance(outer, ast.FunctionDef) else set()))
    kernel = next((n for n in scope if isinstance(n, ast.FunctionDef) and n.name == parts[-1] and _jit_decorated(n)),
                  None)
    if kernel is None:
        return None
    needed, kept = [], []
    for d in kernel.decorator_list:
        need = [] if "jit" in ast.unparse(d) else _needs(d, scopes) if decorated else None
        if need is not None:
            kept.append(d)
            needed += [n for n in need if all(n is not m for m in needed)]
    kernel.decorator_list = kept
    wanted = lambda n: any(n is m for m in needed)  # noqa: E731
    body = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or wanted(node):
            body.append(node)
        elif _constant(node):  # an annotation may name what the module defines later: dropped
            body.append(ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)
                        if isinstance(node, ast.AnnAssign) else node)
        elif _jit_decorated(node) and node.name != parts[-1]:
            body.append(_lifted(node))
    for outer in bodies[:-1]:
        body += [n for n in outer if wanted(n)]
    body += closure or []
    for node in scope:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or wanted(node):
            body.append(node)
        elif node is kernel:
            body.append(node)
        elif _jit_decorated(node) and node.name != parts[-1]:
            body.append(_lifted(node))
    tree.body = body
    return ast.fix_missing_locations(tree)


def standalone_source(path: str, qualname: str, fn=None) -> str | None:
    """The saved copy: the lifted module as text, or None when its source cannot be found. ``fn``: the live jit
    function (its closure values)."""
    try:
        tree = lifted_tree(path, qualname, closure_statements(closure_values(fn)))
    except (OSError, SyntaxError, ValueError):
        return None
    if tree is None:
        return None
    return (f"# {qualname} from {path}: defined inside a function, so tritondbg saved it as a module of its own\n"
            + ast.unparse(tree) + "\n")


def load_current(path: str, qualname: str, closure: dict, mod_name: str):
    """The nested kernel's module lifted from ``path`` as it is now, compiled under its own file name and line
    numbers, or None when the file no longer defines the kernel. SyntaxError when it does not parse; a lifted
    decorator that fails to run (what it needs is not as it was) is dropped, and the kernel loaded without it."""
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    statements = closure_statements(closure)
    for decorated in (True, False):
        tree = lifted_tree(path, qualname, statements, decorated=decorated)
        if tree is None:
            return None
        code = compile(tree, path, "exec")
        mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(mod_name, loader=None, origin=path))
        mod.__file__ = path
        sys.modules[mod_name] = mod
        try:
            exec(code, mod.__dict__)  # noqa: S102 - the user's own kernel file, as importing it would
            return mod
        except BaseException:
            sys.modules.pop(mod_name, None)
            if not decorated:
                raise
    return None


def closure_values(fn) -> dict:
    """The plain values (int, float, bool, str) the kernel's Python function closes over, by name."""
    if fn is None:
        return {}
    from tritondbg.configs import jit_function

    # autotuner / heuristics / jit wrappers down to the Python function
    inner = fn if hasattr(fn, "__code__") else getattr(jit_function(fn), "fn", None)
    if inner is None or not getattr(inner, "__closure__", None):
        return {}
    out = {}
    for name, cell in zip(inner.__code__.co_freevars, inner.__closure__):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if isinstance(value, (bool, int, float, str)):
            out[name] = value
    return out


def closure_statements(values: dict) -> list:
    return [s for name, value in (values or {}).items() for s in ast.parse(textwrap.dedent(f"{name} = {value!r}")).body]


def closure_of_copy(saved: str | None, path: str) -> dict:
    """For a reproducer captured before the closure values were recorded: the constants of the saved copy that
    the kernel's file does not define at module level (the closure values the copy was written with)."""
    try:
        with open(saved, encoding="utf-8") as f:
            copy = ast.parse(f.read())
        with open(path, encoding="utf-8") as f:
            own = {name for n in ast.parse(f.read()).body if _constant(n) for name in _defines(n)}
    except (OSError, SyntaxError, ValueError, TypeError):
        return {}
    out = {}
    for node in copy.body:
        if isinstance(node, ast.Assign) and _constant(node) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name) and node.targets[0].id not in own:
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return out
