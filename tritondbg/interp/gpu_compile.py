"""Does Triton's GPU compiler take the kernel the interpreter runs? (``check`` before a launch, ``entries`` after.)

The interpreter runs a kernel as Python, so code the compiler refuses runs there: a loop-carried variable whose
type changes (``acc = 0``, then ``acc += tl.sum(x)`` in the loop), a Python construct the code generator does not
take. Such a kernel passes ``interpret`` and fails its first launch on a GPU. Before each interpreted launch the
kernel's front end runs for the stand-in's target: Triton's code generator, Python source to TTIR, with its checks
(no LLVM, no ptxas: tens of milliseconds), bound and specialised from the launch's own arguments by Triton itself
(``JITFunction.run(warmup=True)`` under a compile-only driver; the compile step is swapped for the front end).
One verdict per kernel and specialisation (dtypes, constexpr values, which integers are 1 or multiples of 16).

Under ``TRITON_INTERPRET=1`` every ``@triton.jit`` function is an InterpretedFunction, Triton's own ``tl.sum`` /
``tl.max`` / ``tl.cdiv`` (and the tensor methods ``x.sum()``) included, which the compiler cannot call; and the
interpreter leaves Triton's language patched after a device function's call. For the compile the language is put
back as it was before the first launch and each InterpretedFunction the compiler looks up is seen as a JITFunction
of the same Python function (``_swapped``); everything is put back after. An InterpretedFunction met on a path not
covered makes the check give no verdict, never a finding: the interpreter's own ``__call__`` is refused during the
compile, so it patches nothing.

A refusal is a ``compile`` error finding at the line the compiler names (``entries``), told after a launch that
itself ran without error (a kernel error under the interpreter says the same problem at its own line: a module
global the compiler refuses is raised there by globals_check.py, so it is not told twice).
``TRITONDBG_COMPILE_CHECK=0`` turns the check off.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import types

_MAX_PER_KERNEL = 64         # specialisations checked per kernel (later ones: no verdict, said under TRITONDBG_DEBUG;
                             # helper-116: Liger's cross entropy met 37, a bug behind the 9th constexpr was missed at 8)
_verdicts: dict = {}         # (id of the InterpretedFunction, specialisation) -> finding dict or None
_counts: dict = {}           # id of the InterpretedFunction -> how many specialisations were checked
_keep: dict = {}             # id -> the InterpretedFunction (keeps the ids above from being reused)
_jits: dict = {}             # id of an InterpretedFunction -> (it, its JITFunction), for the swap
_pending: dict = {"verdict": None}
# held while a check has the language swapped, and by every interpreted launch (standin.py): another thread's launch
# met the compile's world (helper-118: "_Unreachable: max" raised into a program's second thread)
lock = threading.RLock()
tally: dict = {"accepted": 0, "refused": 0, "no verdict": 0}   # per process, per specialisation checked
unchecked: dict = {}         # kernel name -> specialisations the check could not judge (no verdict, past the cap)
reasons: dict = {}           # kernel name -> why the first of them got no verdict (helper-138: the note said nothing)


class _Accepted(Exception):
    """The front end built the kernel's TTIR."""


class _Unreachable(Exception):
    """The code generator called an InterpretedFunction the swap did not reach: no verdict."""


def enabled() -> bool:
    return os.environ.get("TRITONDBG_COMPILE_CHECK", "1").strip().lower() not in ("0", "false", "no", "off")


def check(fn, args: tuple, kwargs: dict, arch) -> None:
    """Before an interpreted launch of ``fn`` (an InterpretedFunction) with these arguments: the front end's verdict
    for ``arch``'s target, kept for ``entries``. Never raises."""
    _pending["verdict"] = None
    if not enabled() or arch is None:
        return
    try:
        _snapshot()
        key = (id(fn), _specialisation(fn, args, kwargs), _context(arch))
        if key not in _verdicts:
            if _counts.get(id(fn), 0) >= _MAX_PER_KERNEL:
                if _counts[id(fn)] == _MAX_PER_KERNEL and os.environ.get("TRITONDBG_DEBUG"):
                    print(f"tritondbg: the compile check of {getattr(fn, '__name__', '?')} stops after "
                          f"{_MAX_PER_KERNEL} specialisations", file=sys.stderr)
                    _counts[id(fn)] += 1
                _not_judged(fn, key, f"past the check's {_MAX_PER_KERNEL} specialisations a kernel")
                return
            _counts[id(fn)] = _counts.get(id(fn), 0) + 1
            _keep[id(fn)] = fn
            with lock:
                before = tally["no verdict"]
                _verdicts[key] = _verdict(fn, args, kwargs, arch)
            if tally["no verdict"] != before:
                _not_judged(fn, key, _pending.pop("why", None))
        _pending["verdict"] = _verdicts[key]
    except Exception as exc:  # noqa: BLE001 - a check that cannot run is no finding, and never stops the program
        _not_judged(fn, None, f"the check did not run: {_last_line(exc, fn)}")
        if os.environ.get("TRITONDBG_DEBUG"):
            print(f"tritondbg: the compile check of {getattr(fn, '__name__', '?')} did not run: "
                  f"{type(exc).__name__}: {exc}", file=sys.stderr)


def _not_judged(fn, key, why: str | None) -> None:
    """A launch whose compile the check did not judge: for ``note`` (a check that did not run is never a pass)."""
    if why:
        reasons.setdefault(getattr(fn, "__name__", "?"), why)
    seen = unchecked.setdefault(getattr(fn, "__name__", "?"), set())
    if len(seen) < 4096:
        seen.add(key if key is not None else "the check did not run")  # (once: no specialisation to count by)


def counts() -> dict:
    """Kernel name -> specialisations of it the check did not judge, in this process."""
    return {name: len(keys) for name, keys in unchecked.items()}


def note(counted: dict | None = None, why: dict | None = None) -> str | None:
    """The run's line on the kernels whose compile the check did not judge (``counted``: ``counts()`` over a
    program's processes, else this process's; ``why``: their first reasons, else this process's), or None."""
    counted = counts() if counted is None else counted
    why = reasons if why is None else why
    if not counted:
        return None
    names = sorted(counted)
    n = sum(counted.values())
    shown = kernels_named(names)
    first = next((f"{name}'s first: {why[name]}" for name in names if why.get(name)), None)
    return (f"the GPU compile check gave no verdict on {n} specialisation(s) of {shown}: whether the compiler takes "
            f"them was not checked ({first + '; ' if first else ''}TRITONDBG_DEBUG=1 says why for each; "
            "`tritondbg ir` compiles a kernel)")


def kernels_named(names: list) -> str:
    """"a, b, c, d and 2 more": the kernels a run's note names (this one's, race_reads.note's)."""
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _last_line(exc: BaseException, fn=None) -> str:
    """The error's type and last line, Triton's binder (``dynamic_func()``) named as the kernel."""
    text = str(exc).strip().splitlines()
    line = (text[-1][:200] if text else "").replace("dynamic_func(", f"{getattr(fn, '__name__', 'the kernel')}(")
    return f"{type(exc).__name__}: {line}".rstrip(": ")


def entries(san, launch, error) -> None:
    """After the launch: the front end's refusal (``check``'s) as an error entry of ``san``, where the launch
    itself ran without error."""
    verdict, _pending["verdict"] = _pending["verdict"], None
    if verdict is None or error is not None:
        return
    e = san._entry("compile", (verdict["file"], verdict["line"], launch.kernel), None, "compile",
                   text=verdict["text"], target=verdict["target"])
    e["pid"], e["programs"] = [], set()
    e["seq"] = 0  # told first: the run's other findings of this kernel may follow from what the compiler refuses


def _context(arch) -> tuple:
    """What else decides a verdict: the target, and the compiler's own switch for non-constexpr globals."""
    from triton import knobs

    target = arch.gpu_target()
    return (target.backend, str(target.arch), bool(getattr(knobs.compilation, "allow_non_constexpr_globals", False)))


def _specialisation(fn, args: tuple, kwargs: dict) -> tuple:
    """What Triton keys a compile on, roughly: a tensor's dtype and 16-byte alignment, an integer's size class and
    whether it is 1 or a multiple of 16, a constexpr's value."""
    constexprs = _constexpr_names(fn)
    names = list(getattr(fn, "arg_names", ()))
    out = []
    for i, a in enumerate(args):
        out.append(_spec(a, i < len(names) and names[i] in constexprs))
    for k in sorted(kwargs):
        out.append((k, _spec(kwargs[k], k in constexprs or k not in names)))
    return tuple(out)


def _constexpr_names(fn) -> set:
    ann = getattr(getattr(fn, "fn", None), "__annotations__", {}) or {}
    return {n for n, t in ann.items() if "constexpr" in str(t)}


def _spec(a, constexpr: bool):
    if hasattr(a, "data_ptr") and hasattr(a, "dtype"):
        try:
            return ("t", str(a.dtype), a.data_ptr() % 16 == 0)
        except Exception:  # noqa: BLE001
            return ("t", str(a.dtype))
    if constexpr or a is None or isinstance(a, (str, types.FunctionType)):
        try:
            hash(a)
            return ("c", a)
        except TypeError:
            return ("c", repr(a))
    if isinstance(a, bool):
        return ("b",)
    if isinstance(a, int):
        return ("i", a == 1, a % 16 == 0, -2 ** 31 <= a < 2 ** 31, a >= 2 ** 63)
    if isinstance(a, float):
        return ("f",)
    if isinstance(a, (tuple, list)):
        return ("T", tuple(_spec(x, constexpr) for x in a))
    if hasattr(a, "base") and hasattr(a, "block_shape"):  # a host TensorDescriptor: its dtype and block, not its
        return ("d", _spec(a.base, False), tuple(a.block_shape), str(getattr(a, "padding", "")))  # data (helper-118)
    return ("o", type(a).__name__)


def _jit_of(f):
    from triton.runtime.jit import JITFunction

    hit = _jits.get(id(f))
    if hit is None or hit[0] is not f:
        hit = _jits[id(f)] = (f, JITFunction(f.fn, **getattr(f, "kwargs", {})))
    return hit[1]


def _front_end(src, target=None, options=None, _env_vars=None):
    """In place of ``triton.compile``: the code generator only (``ASTSource.make_ir``, 3.6 and 3.9 alike)."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    backend = make_backend(target)
    options = backend.parse_options(dict(options or {}, **src.parse_options()))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), context)
    raise _Accepted


def _kernel_jit(fn):
    """A JITFunction of ``fn``'s Python function whose compile step is the front end only (its binder, made at its
    first run, would put ``triton.compile`` back)."""
    from triton.runtime.jit import JITFunction

    class FrontEnd(JITFunction):
        def create_binder(self):
            made = super().create_binder()
            self.compile = _front_end
            return made

    return FrontEnd(fn.fn, **getattr(fn, "kwargs", {}))


_MISSING = object()
_pristine: dict = {}   # "taken": True; (id of an owner, name) -> the value before any interpreted launch


def _owners() -> list:
    """What the interpreter patches during a launch and, in a device function's call (``tl.sum(x)`` is one),
    never puts back (3.6 and 3.9 alike): Triton's language modules and its tensor classes."""
    import triton.language as tl

    mods = [m for n, m in list(sys.modules.items())
            if m is not None and (n == "triton.language" or n.startswith("triton.language."))]
    classes = [c for c in (tl.core.tensor, getattr(tl.core, "tensor_descriptor_base", None)) if c is not None]
    return mods + classes


def _snapshot() -> None:
    """The language's values before the program's first interpreted launch (``check`` runs before it), taken
    once. A value the interpreter had patched already is mapped back at the compile (``_original``)."""
    if not _pristine:
        _pristine["taken"] = True
        for owner in _owners():
            for name, value in list(vars(owner).items()):
                _pristine[(id(owner), name)] = value


def _interpreters(value) -> bool:
    """A function the interpreter or tritondbg's shims made (a patch of the language, a libdevice stand-in). Plain
    functions only: a Triton value's attribute lookup may raise ValueError for a name it lacks (3.6's tuple)."""
    if not isinstance(value, types.FunctionType):
        return False
    file = value.__code__.co_filename.replace(os.sep, "/")
    return file.endswith("runtime/interpreter.py") or "/tritondbg/interp/" in file


def _original(value):
    """What such a patch stands for, or None: the interpreter's ``_patch_attr`` keeps it as the lambda's
    ``member=``; a libdevice stand-in knows its name (``libdevice.implementation``)."""
    member = (getattr(value, "__kwdefaults__", None) or {}).get("member")
    if member is not None and not _interpreters(member):
        return member
    name = getattr(value, "_tdbg_libdevice", None)
    if name:
        for mod in ("triton.language.extra.cuda.libdevice", "triton.language.extra.libdevice"):
            found = getattr(sys.modules.get(mod), name, None)
            if found is not None and not _interpreters(found):
                return found
        from tritondbg.interp.libdevice import _ORIGINALS

        return _ORIGINALS.get(name)
    return None


@contextlib.contextmanager
def _swapped(fn, args: tuple, kwargs: dict):
    """For the block, the world the compiler expects: Triton's language as it was before the interpreter patched
    it (``_snapshot``), and every InterpretedFunction the compile meets seen as a JITFunction: in the arguments (a
    jit function passed as a constexpr), wherever the cache key's dependency walk and the code generator look a
    name or an attribute up (the kernel's module, its helpers', a class's static method, ``language.math.GELU``:
    trident), and ``tl.tensor``'s methods (``x.sum()``). The user's modules are not touched. Yields the arguments."""
    import triton.language as tl
    from triton import knobs
    from triton.compiler.code_generator import CodeGenerator
    from triton.runtime import _async_compile
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import DependenciesFinder

    from tritondbg.interp.globals_check import closure_values

    def conv(v):
        if isinstance(v, InterpretedFunction):
            return _jit_of(v)
        original = _original(v) if _interpreters(v) else None  # a name the interpreter (or tritondbg's shims)
        return v if original is None else original  # rebound in a helper's module (libdevice's exp: helper-118)

    changes: list = []

    def put(owner, name, value):
        changes.append((owner, name, vars(owner).get(name, _MISSING)))
        if value is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, value)

    orig_record, orig_init, orig_get = (DependenciesFinder.record_reference, CodeGenerator.__init__,
                                        CodeGenerator.get_Attribute)

    def record_reference(self, val, *a, **k):
        return orig_record(self, conv(val), *a, **k)

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        for name, v in list(self.gscope.items()):  # (a copy the generator made: the module keeps its own)
            if isinstance(v, InterpretedFunction) or _interpreters(v):
                self.gscope[name] = conv(v)

    def get_attribute(self, lhs, attr):
        return conv(orig_get(self, lhs, attr))

    def refused(self, *a, **k):
        raise _Unreachable(getattr(getattr(self, "fn", None), "__qualname__", "?"))
    saved_interpret = knobs.runtime.interpret
    mode = getattr(_async_compile, "active_mode", None)
    token = mode.set(None) if mode is not None else None  # (a program's AsyncCompileMode: the front end runs here)
    try:
        knobs.runtime.interpret = False  # (a constexpr_function, triton.cdiv, returns a constexpr then: helper-118)
        for owner in _owners():  # the interpreter's patches off; a module imported since the snapshot is left be
            space = vars(owner)
            for name in list(space):
                value, before = space[name], _pristine.get((id(owner), name), _MISSING)
                if value is before or not _interpreters(value):
                    continue
                if before is not _MISSING and not _interpreters(before):
                    put(owner, name, before)
                elif _original(value) is not None:
                    put(owner, name, _original(value))
        for name, v in list(vars(tl.core.tensor).items()):
            # x.sum(): under the interpreter a wrapper around the InterpretedFunction; compiled, the JITFunction
            inner = next((c for c in closure_values(v).values() if isinstance(c, InterpretedFunction)), None)
            if isinstance(v, InterpretedFunction) or inner is not None:
                put(tl.core.tensor, name, _jit_of(inner if inner is not None else v))
        put(DependenciesFinder, "record_reference", record_reference)
        put(CodeGenerator, "__init__", init)
        put(CodeGenerator, "get_Attribute", get_attribute)
        put(InterpretedFunction, "__call__", refused)
        yield tuple(conv(a) for a in args), {k: conv(v) for k, v in kwargs.items()}
    finally:
        knobs.runtime.interpret = saved_interpret
        if token is not None:
            mode.reset(token)
        for owner, name, old in reversed(changes):
            if old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)


def _verdict(fn, args: tuple, kwargs: dict, arch) -> dict | None:
    """The front end's refusal as {file, line, text, target}, or None (accepted, or no verdict)."""
    import io

    from triton.compiler.errors import CompilationError

    from tritondbg.ir.capture import _fd2_captured
    from tritondbg.standin import TargetDriver, driver_swapped

    target = arch.gpu_target()
    jit = _kernel_jit(fn)
    outcome, verdict = "no verdict", None
    try:  # (what the compiler prints, on stdout or fd 2, is kept out of the program's output)
        with _swapped(fn, args, kwargs) as (a, k), driver_swapped(TargetDriver(target)), \
                contextlib.redirect_stdout(io.StringIO()), _fd2_captured([]):
            jit.run(*a, grid=(1, 1, 1), warmup=True, **k)
    except _Accepted:
        outcome = "accepted"
    except CompilationError as exc:
        verdict = _refusal(fn, jit, exc, target)
        outcome = "refused" if verdict is not None else outcome
        _debug(fn, outcome, exc)
        if verdict is None:
            _pending["why"] = _last_line(exc, fn)
    except _Unreachable as exc:
        _debug(fn, outcome, exc)
        _pending["why"] = f"it calls {exc}, which the check's compile could not reach"
    except Exception as exc:  # noqa: BLE001 - the binder or the backend: the interpreter's run says what goes wrong
        _debug(fn, outcome, exc)
        _pending["why"] = _last_line(exc, fn)
    tally[outcome] += 1
    return verdict


def _debug(fn, outcome: str, exc: BaseException) -> None:
    if os.environ.get("TRITONDBG_DEBUG") and outcome != "refused":
        print(f"tritondbg: the compile check of {getattr(fn, '__name__', '?')} gave no verdict: {_last_line(exc, fn)}",
              file=sys.stderr)


def _assigns(py, name: str) -> bool:
    """Whether the jit function's own source assigns ``name``."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(py)))
    except (OSError, TypeError, SyntaxError):
        return False
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(tree))


def _refusal(fn, jit, exc, target) -> dict | None:
    from tritondbg.ir.capture import first_meaningful_line, helper_site
    from tritondbg.missing_return import _chain, kernel_line

    chain = list(_chain(exc))
    if any(isinstance(e, (_Unreachable, _Accepted)) for e in chain):
        return None
    text = first_meaningful_line(jit, exc, "")
    # ("Cannot access global variable X": where the kernel reads a module global, globals_check.py raises it in the
    # launch, and a launch that raised is not told here; where X is the kernel's own variable, assigned only inside
    # a loop or a branch, the interpreter reads that local and the compiler the global: told, helper-116)
    m = re.search(r"Cannot access global variable (\w+)", text)
    if m and _assigns(fn.fn, m.group(1)):
        text = text[:m.end()] + " from within @jit'ed function"  # (Triton's advice on constexpr globals does not fit)
        text += (f" ({m.group(1)} is assigned in the kernel only inside a loop or a branch, so after it the compiler "
                 "looks for a global of that name: assign it before the loop or branch)")
    node = getattr(exc, "node", None)
    where = helper_site(jit, exc) or (kernel_line(fn.fn, node.lineno) if hasattr(node, "lineno") else None)
    file, line = where if where else (getattr(fn.fn, "__code__", None) and fn.fn.__code__.co_filename or "?", 0)
    prefix = f"{file}:{line}: "
    if text.startswith(prefix):
        text = text[len(prefix):]
    from tritondbg.errors import version_hint

    hint = version_hint(text)  # (helper-117: the kernel_error of the same line said it, this finding did not)
    from tritondbg.interp import frames

    if not hint and re.search(r" is not string$", text) and "print(" in (frames.source_line(file, line) or ""):
        # helper-148: Triton-Puzzles' `print(range)`, which the interpreter prints as Python does
        hint = ("a print in a kernel compiles to tl.device_print, whose first argument is a string: "
                "print(\"range\", range)")
    text = f"{text}; {hint}" if hint else text
    name = f"sm_{target.arch}" if target.backend == "cuda" else str(target.arch)
    return dict(file=file, line=line, target=name,
                text=f"Triton's compiler refuses this kernel for {name}, so its first GPU launch fails (the "
                     f"interpreter runs it): {text}")
