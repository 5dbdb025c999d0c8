"""Whether a kernel's own source has a store through one of its arguments (``forgotten``): an output the launch
left untouched while its other stores went elsewhere is a forgotten ``tl.store`` where the source has no store,
atomic or descriptor store whose pointer comes from that argument and the argument is prepared (``Y += row *
stride``) or unused while the stores went only into other outputs (helper-84: a layer norm storing Mean and Rstd
but not Y was "through the wrong pointer?" at the Mean store); the wrong pointer where the output is unused and a
store went into an argument the kernel reads (``tl.store(x_ptr + offs, ...)`` for ``out_ptr``).

The check is by name, over the kernel's AST: the argument, and every name assigned from an expression that uses
one already followed (``Y += row * stride``, ``y_ptrs = Y + cols``, ``desc = tl.make_tensor_descriptor(Y, ...)``,
``p = tl.make_block_ptr(Y, ...)``). A store-like call (``tl.store``, ``tl.atomic_*``, ``desc.store``, a scatter) that
takes one of those names stores through the argument; so may a call of any function that is not Triton's own (a
``@triton.jit`` helper) handed one. Anything not followed makes the answer "it may": never a false "forgotten".

Whether the source writes memory at all (``writes``: program mode's "writes no memory" warning) uses the same
store predicate (``_stores``). A kernel's source is read once per code object and parsed once per text
(``_source``, ``_tree``): both questions are asked per launch."""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap

_LANGUAGE_ROOTS = frozenset({"tl", "triton", "libdevice", "tdl", "math", "gl", "ttgl"})


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _targets(node) -> set[str]:
    out: set[str] = set()
    for t in node if isinstance(node, list) else [node]:
        out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


def _call_name(call: ast.Call) -> tuple[str, str | None]:
    """(the called name, the root module name of an attribute call: ``tl`` of ``tl.store``) of ``call``."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id, None
    if isinstance(f, ast.Attribute):
        root = f.value
        while isinstance(root, ast.Attribute):
            root = root.value
        return f.attr, root.id if isinstance(root, ast.Name) else None
    return "", None


def _stores(name: str) -> bool:
    return "store" in name or "atomic" in name or name in ("scatter", "async_copy_shared_to_global")


def _loads(name: str) -> bool:
    return name in ("load", "gather", "async_copy_global_to_shared") or "atomic" in name


@functools.lru_cache(maxsize=256)
def _tree(source: str) -> ast.Module | None:
    """``source`` parsed (once per text: a kernel launched 1000 times parses once), None where it does not parse."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


@functools.lru_cache(maxsize=256)
def _usage(source: str, arg: str) -> tuple[bool, bool, bool] | None:
    """(used: the body names it, stores: a store may go through it, loads: a load reads through it), or None."""
    tree = _tree(source)
    if tree is None:
        return None
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None or arg not in {a.arg for a in fn.args.args + fn.args.kwonlyargs}:
        return None
    used = any(isinstance(n, ast.Name) and n.id == arg for stmt in fn.body for n in ast.walk(stmt))
    followed = {arg}
    assigns = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr,
                                                         ast.For, ast.With))]
    while True:  # every name assigned from one followed, until none is added
        before = len(followed)
        for n in assigns:
            if isinstance(n, ast.For):
                value, targets = n.iter, _targets(n.target)
            elif isinstance(n, ast.With):
                value = ast.Tuple(elts=[i.context_expr for i in n.items], ctx=ast.Load())
                targets = _targets([i.optional_vars for i in n.items if i.optional_vars is not None])
            elif isinstance(n, ast.Assign):
                value, targets = n.value, _targets(n.targets)
            else:
                value, targets = n.value, _targets(n.target) if n.value is not None else set()
            if value is not None and _names(value) & followed:
                followed |= targets
        if len(followed) == before:
            break
    stores = loads = False
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        called, root = _call_name(call)
        args = [*call.args, *(k.value for k in call.keywords)]
        used_here = set().union(*(_names(a) for a in args)) if args else set()
        if isinstance(call.func, ast.Attribute):
            used_here |= _names(call.func.value) - _LANGUAGE_ROOTS  # the receiver: ``desc.store(...)``
        if not used_here & followed:
            continue
        if _loads(called) and (not call.args or _names(call.args[0]) & followed or
                               isinstance(call.func, ast.Attribute) and root in followed):
            loads = True  # (its pointer, or the descriptor it is called on)
        if _stores(called):
            stores = True
        elif root is None or root not in _LANGUAGE_ROOTS:
            if isinstance(call.func, ast.Attribute) and root is not None and root in followed:
                continue  # a method of a followed value other than a store (``desc.load``): reads only
            stores = loads = True  # a helper of the program's handed the pointer: it may do either
    return used, stores, loads


_sources: dict[int, tuple] = {}  # id(code object) -> (the code object, its function's dedented source)


def function(fn):
    """The Python function under a kernel object (InterpretedFunction -> JITFunction -> the function)."""
    f = fn
    for _ in range(3):
        f = getattr(f, "fn", f)
    return f


def _source(fn) -> str | None:
    """The dedented source of kernel ``fn``'s function (read once per code object), or None."""
    f = function(fn)
    code = getattr(f, "__code__", None)
    kept = _sources.get(id(code)) if code is not None else None
    if kept is not None and kept[0] is code:
        return kept[1]
    try:
        text = textwrap.dedent(inspect.getsource(f))
    except (OSError, TypeError):
        return None
    if code is not None:
        if len(_sources) >= 1024:  # (Inductor generates kernels by the thousand: keep the last ones only)
            _sources.pop(next(iter(_sources)))
        _sources[id(code)] = (code, text)
    return text


# calls with an effect other than a store: a kernel that only checks or prints has one
_EFFECTS = frozenset({"device_assert", "device_print", "print", "inline_asm_elementwise"})


@functools.lru_cache(maxsize=256)
def _writes(source: str) -> tuple[bool, frozenset] | None:
    """(whether ``source`` has a store-like call, another effect or an ``assert``, the names it calls bare: a jit
    helper among them may store), or None where it does not parse."""
    tree = _tree(source)
    if tree is None:
        return None
    called = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):  # a kernel that only checks (device-side asserts) has an effect
            return True, frozenset()
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if _stores(name) or name in _EFFECTS:
            return True, frozenset()
        if isinstance(f, ast.Name):
            called.add(f.id)
    return False, frozenset(called)


def writes(fn) -> bool | None:
    """Whether a kernel's own source has a call that writes memory (``tl.store``, an atomic, a descriptor's or
    block pointer's store, a call of another jit function, which may store) or has another effect (a device-side
    assert or print, inline assembly); None where it cannot be read."""
    source = _source(fn)
    found = None if source is None else _writes(source)
    if found is None:
        return None
    effect, called = found
    if effect:
        return True
    glob = getattr(function(fn), "__globals__", {})
    return any(hasattr(glob.get(name), "fn") for name in called)  # a jit helper: may store


def forgotten(fn, arg: str, into: list) -> bool:
    """Whether an output argument ``arg`` nothing was stored into, while the launch's stores went into the
    arguments ``into``, is a forgotten store rather than a store through the wrong pointer: the kernel's code has no
    store through it and either prepares it (``Y += row * stride``: used, never stored through), or does not use it
    at all while its stores went only into arguments it never loads from (other outputs: a layer norm's Mean and
    Rstd). A store into an argument the kernel also reads (its input) with the output unused is the wrong pointer."""
    source = _source(fn)
    u = None if source is None else _usage(source, arg)
    if u is None or u[1]:
        return False
    if u[0]:
        return True
    for other in into:
        v = _usage(source, other)
        if v is None or v[2]:
            return False
    return True


def unused(fn, arg: str) -> bool:
    """Whether the kernel's code never names argument ``arg`` (not even in a branch a constexpr turns off): a tensor
    handed to it then is an output whose ``tl.store`` is missing, or an argument left over (helper-97: FlashInfer's
    positions, its store deleted, a torch.zeros output: program mode said nothing)."""
    source = _source(fn)
    u = None if source is None else _usage(source, arg)
    return u is not None and not u[0]
