"""Globals a ``@triton.jit`` function reads that the GPU compiler refuses, caught under the interpreter.

Triton's code generator lets a kernel read only some module globals: ``tl.constexpr(...)`` values, modules, jit
functions, dtypes, Triton's own builtins, named tuples (``CodeGenerator``'s ``global_lookup``, 3.6 and 3.9 alike).
Anything else (``sqrt2 = math.sqrt(2.0)``) is ``NameError: Cannot access global variable sqrt2 from within
@jit'ed function``, at compile time. The interpreter runs the kernel as Python and reads the value: kernl's
linear layer passed ``interpret`` 3/3 and failed ``ir`` (helper-53).

Each jit function's source is read once for such names. The function the interpreter runs (``rewrite``'s) then
gets a globals mapping that raises the compiler's error when the kernel reads one of them, at that line, and
only then: the compiler skips the branches a constexpr ``if`` does not take, so a read that never happens is no
error here either. ``TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1`` lifts the check, as it lifts the compiler's.

A global annotated ``EPSILON: tl.constexpr = 1e-12`` (applied-ai's quant kernel, h103) is refused as well: the
annotation does not make it a constexpr (Triton's own message says so); the error names the annotation and the
spelling that works, ``EPSILON = tl.constexpr(1e-12)``. The error's ``repr`` (what the interpreter's
``InterpreterError(repr(e))`` shows under the program's traceback) is its first clause only: the full text was
printed twice in a row there.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import textwrap
import types
from typing import Any

from tritondbg.errors import KernelError

_NAMES: dict[int, tuple] = {}          # id(python function) -> (it, the globals it reads that the compiler refuses)
_GUARDED: dict[int, Any] = {}           # id(rewritten function) -> the same function over guarded globals


class RefusedGlobal(KernelError, NameError):
    """The compiler's NameError, raised where the kernel reads the global."""

    def __init__(self, name: str, annotated: tuple | None = None, captured: str | None = None, others=(),
                 value: Any = None):
        """``annotated``: (file, line, value's source) of a ``name: tl.constexpr = value`` in the module, if any;
        ``captured``: the enclosing function's name where ``name`` is a closure value of a kernel made in it;
        ``others``: the other refused globals the function reads (helper-144: named one run at a time)."""
        self.global_name = name
        head = (f"Cannot access global variable {name} from within @jit'ed function: the GPU compiler refuses it "
                f"(the interpreter would read it). ")
        tail = (", or pass it as an argument (TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 lets the compiler and this check "
                "through)" + (f". The function reads {', '.join(others)} too, refused alike" if others else ""))
        if captured:
            super().__init__(f"{head}`{name}` is a value the kernel captures from {captured}(), which made it; the "
                             f"compiler takes a captured value only as a constexpr: pass "
                             f"tl.constexpr({name}) there{tail}")
        elif inspect.isfunction(value) or inspect.isbuiltin(value):
            # helper-148: lecture 14's print_if debug helper was told "print_if = tl.constexpr(...)"
            super().__init__(f"{head}`{name}` is a plain Python function, not a @triton.jit one: the interpreter "
                             f"calls it as Python, a GPU compile cannot. For a kernel of both worlds, make it "
                             f"@triton.jit; to look at values on the CPU, tl.device_print (or tritondbg interpret "
                             f"--trace / --watch) does it without a helper (TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 lets "
                             f"this check through; the GPU compiler then still refuses the call)"
                             + (f". The function reads {', '.join(others)} too, refused alike" if others else ""))
        elif annotated:
            from tritondbg.interp.frames import site_name

            file, line, value = annotated
            super().__init__(f"{head}Its annotation `{name}: tl.constexpr = ...` ({site_name(file)}:{line}) "
                             f"does not make a global a constexpr for Triton (the compiler does not support it): write "
                             f"`{name} = tl.constexpr({value})`{tail}")
        else:
            super().__init__(f"{head}Triton kernels read only globals made with tl.constexpr(...): "
                             f"{name} = tl.constexpr(...){tail}")

    def __repr__(self) -> str:
        # the interpreter wraps it as InterpreterError(repr(e)), printed right under this error's own full text
        return f"{type(self).__name__}({f'Cannot access global variable {self.global_name}'!r})"


class _Guarded(dict):
    """Globals of a kernel as the compiler allows them: ``refused`` names raise, the rest are the kernel's closure
    values (``cells``: a kernel made in a factory reads its ``act`` from there, as the compiler's capture scope
    does) or the module's own, looked up live (LOAD_GLOBAL goes through ``__getitem__`` for a dict subclass)."""

    def __init__(self, module: dict, refused: frozenset, file: str | None = None, cells: dict | None = None,
                 maker: str = "the enclosing function"):
        # its entries are the module's as they are now, less the refused ones: the interpreter's _patch_lang reads
        # them (items()) to find triton.language; a read of a name goes to the module, live
        super().__init__((k, v) for k, v in module.items() if k not in refused)
        self.module, self.refused, self.file, self.annotated = module, refused, file, None
        self.cells, self.maker = cells or {}, maker
        # the closure's values as entries too, for what reads the entries (a --watch expression, pdb's `p`)
        self.update((k, v) for k, v in _filled(self.cells).items() if k not in refused)

    def __getitem__(self, name):
        if name in self.refused:
            others = sorted(self.refused - {name})
            if name in self.cells:
                raise RefusedGlobal(name, captured=self.maker, others=others)
            if self.annotated is None:  # (read once, at the first refused read)
                self.annotated = constexpr_annotations(self.module, self.file)
            raise RefusedGlobal(name, self.annotated.get(name), others=others, value=self.module.get(name))
        cell = self.cells.get(name)
        if cell is not None:
            try:
                return cell.cell_contents
            except ValueError:  # an empty cell: the enclosing function had not bound it yet
                raise NameError(f"cannot access free variable '{name}' where it is not associated with a value "
                                f"in enclosing scope") from None
        return self.module[name]

    def get(self, name, default=None):
        try:
            return self[name] if name in self.cells else self.module.get(name, default)
        except NameError:
            return default

    def __contains__(self, name):
        return name in self.cells or name in self.module


def closure_values(fn) -> dict:
    """A nested function's closure values by name, the cells that hold one only (gpu_compile, configs)."""
    return _filled(_cells(fn))


def _filled(cells: dict) -> dict:
    """The values of the cells that hold one (a cell the enclosing function has not bound yet holds none)."""
    out = {}
    for name, cell in cells.items():
        try:
            out[name] = cell.cell_contents
        except ValueError:
            continue
    return out


def _cells(fn) -> dict:
    """A nested function's closure cells by name (the interpreter runs a kernel's rewritten source at module
    level, where those names are globals: plain TRITON_INTERPRET=1 fails with NameError on them)."""
    code, closure = getattr(fn, "__code__", None), getattr(fn, "__closure__", None)
    return dict(zip(code.co_freevars, closure)) if code is not None and closure else {}


def _allowed(val: Any) -> bool:
    import triton.language as tl
    from triton.runtime import jit

    callables = tuple(k for k in (getattr(jit, "JITCallable", None), jit.JITFunction) if k is not None)
    mod = getattr(val, "__module__", "") or ""
    return (isinstance(val, (types.ModuleType, tl.constexpr, tl.dtype, *callables))  # (constexpr_function's too)
            or hasattr(val, "fn") and hasattr(val, "arg_names")  # a jit function (or a wrapper of one)
            or getattr(val, "__triton_builtin__", False) or getattr(val, "__triton_aggregate__", False)
            # tritondbg's own stand-ins, bound in a kernel's module for the run in place of Triton's functions
            # (``from ...libdevice import tanh`` in FlagGems' helpers, gdc_wait): the compiler sees Triton's
            or mod.startswith(("triton.language", "triton.experimental.gluon.language", "tritondbg.interp"))
            or isinstance(val, tuple) and hasattr(val, "_fields"))


def _body(func) -> list:
    """Every node of the function's body: not its decorators (``@triton.autotune(configs=..., prune_configs_by=...)``)
    nor its parameters' defaults, which the compiler never reads as the kernel's globals."""
    return [node for stmt in func.body for node in ast.walk(stmt)]


def _locals(func: ast.AST) -> set[str]:
    """Names the function binds: its parameters and every name it assigns (Triton looks those up first)."""
    out = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    for node in _body(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
    return out


def refused_names(fn) -> frozenset:
    """The module globals (and closure values) ``fn`` reads that the compiler refuses; empty when its source
    cannot be read."""
    kept = _NAMES.get(id(fn))
    if kept is not None and kept[0] is fn:  # (the function is kept with its names: no reuse of a freed id)
        return kept[1]
    out: set[str] = set()
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        func = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    except (OSError, TypeError, SyntaxError, IndentationError, StopIteration):
        func = None
    if func is not None:
        scope, local, absent = dict(fn.__globals__), _locals(func), object()
        scope.update(closure_values(fn))  # (inspect.getclosurevars raises on an empty cell: helper-121)
        for node in _body(func):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
                val = scope.get(node.id, absent)
                builtin = hasattr(builtins, node.id) and val is getattr(builtins, node.id)
                if val is not absent and not builtin and not _allowed(val):
                    out.add(node.id)
    _NAMES[id(fn)] = (fn, frozenset(out))
    return _NAMES[id(fn)][1]


def _module_scope(tree: ast.AST):
    """The statements of a module outside its functions and classes (an ``if`` / ``try`` block's too)."""
    todo = list(getattr(tree, "body", []))
    while todo:
        node = todo.pop(0)
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))


def _names_constexpr(annotation: ast.expr) -> bool:
    """``tl.constexpr``, ``triton.language.constexpr``, ``constexpr`` (or the same as a string)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.strip()
    else:
        text = ast.unparse(annotation)
    return text == "constexpr" or text.endswith(".constexpr")


def constexpr_annotations(module: dict, file: str | None = None) -> dict[str, tuple[str, int, str]]:
    """name -> (file, line, the value's source) for each module global annotated as a constexpr
    (``EPSILON: tl.constexpr = 1e-12``), which Triton does not take for a constexpr global. Read from the module's
    source; its ``__annotations__`` where the source cannot be read."""
    file = file or module.get("__file__")
    out: dict[str, tuple[str, int, str]] = {}
    src = "".join(linecache.getlines(file)) if file else ""
    try:
        tree = ast.parse(src) if src else None
    except (SyntaxError, ValueError):
        tree = None
    for node in _module_scope(tree) if tree is not None else ():
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None \
                and _names_constexpr(node.annotation):
            value = ast.get_source_segment(src, node.value) or "..."
            value = " ".join(value.split())
            out.setdefault(node.target.id, (file, node.lineno, value if len(value) <= 40 else "..."))
    if tree is None:
        for name, ann in (module.get("__annotations__") or {}).items():
            text = ann if isinstance(ann, str) else getattr(ann, "__name__", "")
            if text.split(".")[-1].strip() == "constexpr" and name in module:
                val = module[name]
                shown = repr(val) if isinstance(val, (int, float, bool, str)) and len(repr(val)) <= 40 else "..."
                out[name] = (file or "<module>", "?", shown)
    return out


def _allowed_by_knob() -> bool:
    try:
        from triton import knobs

        return bool(getattr(knobs.compilation, "allow_non_constexpr_globals", False))
    except Exception:  # noqa: BLE001 - an older Triton: the check stands
        return False


def guarded(original_fn, rewritten):
    """``rewritten`` (what the interpreter runs for ``original_fn``) over globals that refuse what the compiler
    refuses and hold ``original_fn``'s closure values; ``rewritten`` itself when it reads no refused name and has
    no closure (or its globals are not the module's)."""
    try:
        names = refused_names(original_fn)
    except Exception:  # noqa: BLE001 - a check of the source only: never why a launch fails otherwise
        names = frozenset()
    if names and _allowed_by_knob():
        names = frozenset()
    cells = _cells(original_fn)
    if not (names or cells) or rewritten.__globals__ is not original_fn.__globals__:
        return rewritten
    found = _GUARDED.get(id(rewritten))
    if found is None or found[0] is not rewritten:
        try:
            file = inspect.getsourcefile(original_fn)
        except TypeError:
            file = None
        qual = getattr(original_fn, "__qualname__", "").split(".<locals>.")
        scope = _Guarded(rewritten.__globals__, names, file, cells, qual[-2] if len(qual) > 1 else "the enclosing "
                                                                                                   "function")
        fn = types.FunctionType(rewritten.__code__, scope, rewritten.__name__, rewritten.__defaults__,
                                rewritten.__closure__)
        fn.__kwdefaults__ = rewritten.__kwdefaults__
        for attr in ("__annotations__", "__qualname__", "__module__", "__doc__"):  # (annotations: which are constexpr)
            setattr(fn, attr, getattr(rewritten, attr))
        fn.__dict__.update(rewritten.__dict__)
        found = _GUARDED[id(rewritten)] = (rewritten, fn)
    return found[1]


def install():
    """Wrap the interpreter's ``InterpretedFunction.rewrite`` (3.6 and 3.9: what a launch and a device call run);
    returns the undo."""
    from triton.runtime.interpreter import InterpretedFunction

    original = InterpretedFunction.__dict__["rewrite"]

    def rewrite(self):
        return guarded(self.fn, original(self))

    InterpretedFunction.rewrite = rewrite
    return lambda: setattr(InterpretedFunction, "rewrite", original)
