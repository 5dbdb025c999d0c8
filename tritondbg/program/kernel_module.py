"""A reproducer's kernel, found again (``load_kernel``): from its module when that imports (past a package
``__init__`` that needs what this machine lacks: bare parent packages), else from the saved copy in ``src/``; a
kernel of the program's main script from the script's definitions only (``_load_definitions``: a script without a
``__main__`` guard, every Triton tutorial, would otherwise run again, launches and all). Split from replay.py."""
from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import importlib.util
import os
import sys

from tritondbg.configs import find_autotuner, jit_function
from tritondbg.errors import UsageError
from tritondbg.program import kernel_globals


def resolve(obj, qualname: str):
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def unwrap(obj):
    """The jit function under autotuner/heuristics wrappers (``configs.jit_function``), else ``obj``."""
    return jit_function(obj) or obj


def _private_name(path: str, meta: dict, kind: str = "") -> str:
    """The private module name ``path`` loads under (``kind`` keeps a load of its definitions apart from an import),
    once its folder and the original's are on sys.path (siblings it imports)."""
    for d in (os.path.dirname(meta.get("kernel_file") or ""), os.path.dirname(os.path.abspath(path))):
        if d and os.path.isdir(d) and d not in sys.path:
            sys.path.append(d)
    return "tritondbg_capture_" + hashlib.sha1((kind + os.path.abspath(path)).encode()).hexdigest()[:10]


def _load_file(path: str, meta: dict):
    """Import a kernel's module file under a private name."""
    mod_name = _private_name(path, meta)
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(mod_name, None)
        raise
    return mod


# what a script does rather than defines: not run when its definitions are loaded
_ACTIONS = (ast.Expr, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Assert, ast.Delete, ast.Raise)


def _is_main_guard(node) -> bool:
    return isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(node.test))


def _launchers(tree) -> set:
    """Names of the script's top-level functions that launch a kernel (a ``kernel[grid](...)`` call), directly
    or through another such function."""
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: set = set()
    while True:
        more = {name for name, d in defs.items() if name not in found and _launches(d, found)}
        if not more:
            return found
        found |= more


def _launches(node, launchers: set) -> bool:
    """Whether ``node`` calls ``kernel[grid](...)`` or one of ``launchers``."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and (isinstance(n.func, ast.Subscript)
                                        or isinstance(n.func, ast.Name) and n.func.id in launchers):
            return True
    return False


def _definitions(body: list, launchers: set) -> list:
    """``body`` less its actions (calls, loops, with blocks, asserts, the ``__main__`` block, assignments of a
    launch's result: ``out = add(x, y)``), also inside top-level if / try blocks (optional imports, a device
    chosen by an if)."""
    kept = []
    for node in body:
        if isinstance(node, _ACTIONS) or _is_main_guard(node):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and _launches(node, launchers):
            continue
        if isinstance(node, (ast.If, ast.Try)):
            for field in ("body", "orelse", "finalbody"):
                if getattr(node, field, None):
                    setattr(node, field, _definitions(getattr(node, field), launchers)
                            or [ast.Pass(lineno=node.lineno, col_offset=0)])
            for handler in getattr(node, "handlers", ()):
                handler.body = _definitions(handler.body, launchers) or [ast.Pass(lineno=handler.lineno, col_offset=0)]
        kept.append(node)
    return kept


def _load_definitions(path: str, meta: dict, need: str = ""):
    """A program's main script as a module of its definitions: imports, functions, classes and assignments
    (``_definitions``), run one top-level statement at a time (line numbers kept: the kernel's source and findings
    point at the script); a statement that raises (``DEVICE = driver.active.get_active_torch_device()`` without a
    GPU) is skipped and listed in the module's ``__tritondbg_skipped__``. When that leaves ``need`` undefined, the
    definitions inside the script's ``if __name__ == "__main__":`` block run too (a kernel defined there)."""
    mod_name = _private_name(path, meta, "defs:")
    mod = sys.modules.get(mod_name)
    if mod is not None and (not need or need in mod.__dict__ or mod.__tritondbg_guarded__):
        return mod
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    launchers = _launchers(tree)
    if mod is None:
        mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(mod_name, loader=None, origin=path))
        mod.__file__ = path
        mod.__tritondbg_skipped__, mod.__tritondbg_guarded__ = [], False
        sys.modules[mod_name] = mod
        _run_each(_definitions(tree.body, launchers), path, mod.__dict__, mod.__tritondbg_skipped__)
    if need and need not in mod.__dict__:  # the kernel is defined in the script's `if __name__ == "__main__":` block
        mod.__tritondbg_guarded__ = True
        guarded = [m for n in tree.body if _is_main_guard(n) for m in n.body]
        _run_each(_definitions(guarded, launchers), path, mod.__dict__, mod.__tritondbg_skipped__)
    return mod


class _LaunchAtLoad(BaseException):
    """A statement kept as a definition launched a kernel: the script's own run (not an Exception: the script's
    ``except Exception`` does not swallow it)."""


@contextlib.contextmanager
def _no_launches():
    """Triton launches stopped while a script's definitions load (helper-141: TritonBench's stream-K file runs
    ``result_gold = test_matmul()`` at its top level, which reaches its kernel through two wrappers, so the
    statement was kept: every replay ran the whole test first, before the replay's --timeout, and hung there)."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    def refuse(self, *args, **kwargs):
        raise _LaunchAtLoad()

    saved = [(cls, cls.__dict__["run"]) for cls in (JITFunction, InterpretedFunction) if "run" in cls.__dict__]
    for cls, _ in saved:
        cls.run = refuse
    try:
        yield
    finally:
        for cls, run in saved:
            cls.run = run


def _run_each(nodes: list, path: str, namespace: dict, skipped: list) -> None:
    """Run each statement in ``namespace``; one that raises (or exits) is listed in ``skipped``, and one that
    launches a kernel is stopped there and listed too (the script's own run, not a definition)."""
    for node in nodes:
        code = compile(ast.Module(body=[node], type_ignores=[]), path, "exec")
        try:
            with _no_launches():
                exec(code, namespace)  # noqa: S102 - the user's own script, as running it would
        except _LaunchAtLoad:
            skipped.append(f"line {node.lineno}: it launches a kernel (the script's own run)")
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - skip it, as the script's actions are
            skipped.append(f"line {node.lineno}: {type(exc).__name__}: {exc}")


def _import_answers(meta: dict):
    """Without a GPU and outside `interpret` (whose stand-in answers already): the device questions a kernel's
    module asks at import (gemlite: ``torch.cuda.get_device_capability()``) answered as the captured GPU, as
    `tritondbg ir` answers them while it imports a scenario (the reproducer loads its kernel later, lazily)."""
    import torch

    from tritondbg import standin

    if standin.current() is not None or torch.cuda.is_available():
        return contextlib.nullcontext()
    from tritondbg.ir.targets import DEFAULT_ARCH, parse_arch

    try:
        arch = parse_arch(meta.get("arch") or DEFAULT_ARCH)
    except Exception:  # noqa: BLE001 - a target this Triton cannot name: the default's answers
        arch = parse_arch(DEFAULT_ARCH)
    return standin.answering_as(arch)


def load_kernel(folder: str, meta: dict):
    """The jit function: its module when importable, else the saved source (``src/``); for a launch of an
    autotuned kernel whose reproducer can replay any config (``autotuned.launch``), the autotuner around it."""
    from tritondbg.program import cpu_device

    with cpu_device.serving(), _import_answers(meta):  # no GPU: a module's CUDA tensors and questions at import
        kernel = _launched(folder, meta)
    changed = kernel_globals.restore(kernel, meta.get("globals") or {}, meta["module"])
    if changed and once(os.path.join(folder, meta["name"]), "globals"):
        print(f"tritondbg: {meta['name']}: module-level values the kernel reads are set as the program had them "
              f"({'; '.join(changed)})", file=sys.stderr)
    if meta.get("config_grids") is not None and find_autotuner(kernel) is None:
        kernel = _rebuilt_autotuner(kernel, folder, meta)
    if meta.get("config_grids") is not None and find_autotuner(kernel) is not None:
        return kernel
    return unwrap(kernel)


def _rebuilt_autotuner(kernel, folder: str, meta: dict):
    """An autotuned launch whose kernel was loaded without its autotuner (a nested kernel whose @triton.autotune
    reads what cannot be lifted, an argument of the function that defines it): one made of the configs the capture
    recorded, so that all-configs / resources / ir still reach each of them; ``kernel`` when fewer than two."""
    configs = meta.get("configs") or [g["config"] for g in meta.get("config_grids") or ()]
    if len(configs) < 2:
        return kernel
    import triton

    from tritondbg.configs import CONFIG_ATTRS

    made = [triton.Config({k: v for k, v in c.items() if k not in CONFIG_ATTRS},
                          **{k: v for k, v in c.items() if k in CONFIG_ATTRS}) for c in configs]
    if once(os.path.join(folder, meta["name"]), "autotuner"):
        print(f"tritondbg: {meta['name']}: {meta['kernel']} loaded without its autotuner; replaying through one made "
              f"of the {len(made)} configs recorded at capture (its pruning and hooks are not)", file=sys.stderr)
    return triton.autotune(configs=made, key=[])(kernel)


def _launched(folder: str, meta: dict):
    """The kernel object the program launched, by its module and name (decorators included)."""
    qualname, module = meta["qualname"], meta["module"]
    if "<locals>" in qualname:
        return _nested(folder, meta)
    problems = []
    root = meta.get("import_root")
    if root and os.path.isdir(root) and root not in sys.path:
        sys.path.append(root)  # the program put its package's folder on sys.path itself
    for extra in meta.get("program_path") or ():  # and its other folders (PYTHONPATH=src): last, as fallbacks
        if os.path.isdir(extra) and extra not in sys.path:
            sys.path.append(extra)
    if module != "__main__":
        try:
            kernel = resolve(importlib.import_module(module), qualname)
        except Exception as exc:  # noqa: BLE001 - fall back to the saved source
            problems.append(f"import {module}: {type(exc).__name__}: {exc}")
            try:  # a package whose __init__ needs what this machine lacks (AutoGPTQ: accelerate, transformers)
                return resolve(_import_past_parents(module, meta.get("kernel_file")), qualname)
            except _NotTried:
                pass
            except Exception as exc2:  # noqa: BLE001
                problems.append(f"import {module} without its packages' __init__: {type(exc2).__name__}: {exc2}")
        else:
            return _the_captured_file(kernel, folder, meta)
    # the original file when it is still there (its __file__-relative imports work), else the saved copy
    candidates = [meta.get("kernel_file")] + ([os.path.join(folder, "src", meta["source"])] if meta.get("source") else [])
    if meta.get("standalone"):  # a torch.compile kernel: the saved kernel alone (its generated module wants a GPU)
        candidates.reverse()
    for path in candidates:
        if not path or not os.path.isfile(path):
            continue
        mod = None
        try:
            mod = (_load_definitions(path, meta, qualname.split(".")[0]) if module == "__main__"
                   else _load_file(path, meta))
            kernel = resolve(mod, qualname)
            if path != meta.get("kernel_file") and not meta.get("standalone"):
                _say_frozen(folder, meta, problems)  # the code as it was at capture: said
            return kernel
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a module may exit at import
            if isinstance(exc, SyntaxError) and path == meta.get("kernel_file") and not meta.get("standalone"):
                # the kernel's own file no longer parses (an edit, merge-conflict markers): replaying the copy saved
                # at capture would check the code as it was and pass (helper-90): the gate must fail instead
                raise _unparsable(qualname, path, exc, meta) from None
            skipped = getattr(mod, "__tritondbg_skipped__", None)
            problems.append(f"{path}: {type(exc).__name__}: {exc}"
                            + (f" (statements that raised: {'; '.join(skipped)})" if skipped else ""))
            if module == "__main__":
                continue
            try:  # a module importing what this machine lacks (helper-83: vLLM's MoE, `from vllm._C import ops`):
                mod = _load_definitions(path, meta, qualname.split(".")[0])  # its definitions, one at a time
                kernel = resolve(mod, qualname)
            except (Exception, SystemExit):  # noqa: BLE001
                continue
            if mod.__tritondbg_skipped__ and once(os.path.join(folder, meta["name"]), "skipped"):
                print(f"tritondbg: {meta['name']}: {module} could not be imported ({problems[0].split(': ', 1)[-1]}); "
                      f"its definitions were loaded one at a time, skipping {'; '.join(mod.__tritondbg_skipped__)}",
                      file=sys.stderr)
            return kernel
    why = next((u.split(": ", 1)[1] for u in meta.get("unsaved") or () if u.startswith("source: ")), "no saved source")
    raise UsageError(f"cannot load kernel {qualname}: " + "; ".join(problems or [why]))


def _nested(folder: str, meta: dict):
    """A kernel defined inside a function, lifted to module level (program/nested.py) again from its file as it is
    now, so that an edit made since capture is what gets checked (helper-90: the copy saved at capture was always
    replayed, and a regression in the file passed every gate); that copy only when the file is gone, no longer
    defines the kernel or does not load, said in one line. A file that no longer parses fails, as a module's does."""
    from tritondbg.program import nested

    qualname, name = meta["qualname"], meta["qualname"].rsplit(".", 1)[-1]
    path, saved = meta.get("kernel_file"), (os.path.join(folder, "src", meta["source"]) if meta.get("source") else None)
    if path and os.path.isfile(path):
        closure = meta.get("closure")
        if closure is None:  # captured before the closure's values were recorded: those the saved copy set
            closure = nested.closure_of_copy(saved, path)
        try:
            mod = nested.load_current(path, qualname, closure, _private_name(path, meta, "nested:"))
        except SyntaxError as exc:
            raise _unparsable(qualname, path, exc, meta) from None
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - what the lifted module runs may fail here
            why = f"{path} does not load ({type(exc).__name__}: {exc})"
        else:
            if mod is not None:
                return resolve(mod, name)
            why = f"{path} no longer defines {qualname}"
    else:
        why = f"{path or 'its file'} is gone"
    if not (meta.get("standalone") and saved and os.path.isfile(saved)):
        raise UsageError(f"{meta['kernel']} is defined inside a function ({qualname}) and {why}, and no copy was "
                         f"saved at capture; its reproducer cannot load it: move the kernel to module level")
    _say_saved_copy(folder, meta, f"{why}; replaying the copy of {name} saved at capture (src/{meta['source']})")
    return resolve(_load_file(saved, meta), name)


def _unparsable(qualname: str, path: str, exc: SyntaxError, meta: dict) -> UsageError:
    """The kernel's own file no longer parses: an error, never the copy saved at capture in its place."""
    return UsageError(f"cannot load kernel {qualname}: {exc.filename or path}:{exc.lineno or '?'}: SyntaxError: "
                      f"{exc.msg} (the copy saved at capture, src/{meta.get('source') or '?'}, is the code as it was "
                      "then: it is not replayed in place of a file that is there)")


def _say_frozen(folder: str, meta: dict, problems: list) -> None:
    own = meta.get("kernel_file") or "its file"
    why = [f"{own} is gone"] if not os.path.isfile(own) else problems  # (its import failing follows from that)
    _say_saved_copy(folder, meta, f"{'; '.join(why)}; replaying the copy of {os.path.basename(own)} saved at "
                                  f"capture (src/{meta['source']})")


_SAVED_COPY: dict[tuple, str] = {}  # (reproducer folder, reproducer name) -> why it replays the copy saved at capture


def _say_saved_copy(folder: str, meta: dict, text: str) -> None:
    """A reproducer replays the code as it was at capture (its file is gone or no longer defines the kernel): said
    on stderr once, and kept for ``saved_copies`` (`check` runs in workers whose stderr no one sees: its gate
    reason says it instead; helper-94: a kernel moved to another file passed `check` on the old copy, unsaid)."""
    _SAVED_COPY[(os.path.abspath(folder), meta["name"])] = text
    if once(os.path.join(folder, meta["name"]), "frozen"):
        print(f"tritondbg: {meta['name']}: {text}", file=sys.stderr)


def saved_copy(folder: str, name: str) -> str:
    """Why reproducer ``name`` of capture folder ``folder`` replayed the copy saved at capture in this process, or
    "" (it loaded the kernel's own file, or has not loaded it yet)."""
    return _SAVED_COPY.get((os.path.abspath(folder), name), "")


def _file_of(kernel) -> str | None:
    code = getattr(getattr(unwrap(kernel), "fn", None), "__code__", None)
    return os.path.realpath(code.co_filename) if code is not None else None


def _the_captured_file(kernel, folder: str, meta: dict):
    """``kernel`` as imported by its module's name, unless that name found another file than the one captured while
    that one is still there (helper-88: two capture folders of kernels in same-named modules, ``kern.py`` of a copy
    made to try a change, replayed in one `check` worker, or a PYTHONPATH naming the other copy: the second
    reproducer ran the first one's kernel and its bug was missed). Then the captured file, loaded under a private
    name; if it does not load alone (relative imports), the imported kernel, said in one line."""
    captured = meta.get("kernel_file")
    found = _file_of(kernel)
    if not captured or not os.path.isfile(captured) or found is None or found == os.path.realpath(captured):
        return kernel
    try:
        own = resolve(_load_file(captured, meta), meta["qualname"])
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a module may exit at import
        if once(os.path.join(folder, meta["name"]), "elsewhere"):
            print(f"tritondbg: {meta['name']}: module {meta['module']} imports from {found}, not from the captured "
                  f"{captured}, which does not load alone ({type(exc).__name__}: {exc}); replaying the imported "
                  f"kernel", file=sys.stderr)
        return kernel
    if once(os.path.join(folder, meta["name"]), "elsewhere"):
        print(f"tritondbg: {meta['name']}: module {meta['module']} imports from {found}; replaying the captured "
              f"file {captured}", file=sys.stderr)
    return own


class _NotTried(Exception):
    pass


def _import_past_parents(module: str, kernel_file: str | None):
    """``module`` imported from its folder with its parent packages as bare packages (their ``__path__`` set,
    their ``__init__`` not run), so its relative imports (``from . import custom_autotune``) still work. For a
    package whose ``__init__`` imports what this machine lacks (helper-57: AutoGPTQ's needs accelerate and
    transformers; the program had loaded the kernel's module past it). The bare packages are removed again if the
    module still fails."""
    import types

    parts = module.split(".")
    if len(parts) < 2 or not kernel_file or not os.path.isfile(kernel_file):
        raise _NotTried
    folder = os.path.dirname(os.path.abspath(kernel_file))
    if os.path.splitext(os.path.basename(kernel_file))[0] != parts[-1]:
        raise _NotTried
    dirs = []
    for i in range(len(parts) - 1, 0, -1):  # the package that holds the file, then its parents
        if os.path.basename(folder) != parts[i - 1]:
            raise _NotTried  # the file's folders do not spell the module's name
        dirs.insert(0, (".".join(parts[:i]), folder))
        folder = os.path.dirname(folder)
    added = []
    for name, path in dirs:
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__, pkg.__package__ = [path], name
            sys.modules[name] = pkg
            added.append(name)
    try:
        return importlib.import_module(module)
    except BaseException:
        for name in added:
            sys.modules.pop(name, None)
        raise


_SAID: set = set()


def once(file: str, name: str) -> bool:
    """True the first time this process, or the process that started it, loads this reproducer (its note is
    printed then only: `check` loads it again in each of its workers)."""
    key = f"{os.path.abspath(file)}::{name}"
    said = os.environ.get("TRITONDBG_NOTED", "").split(os.pathsep)
    if key in _SAID or key in said or "*" in said:  # ("*": `check`, whose gates say it)
        return False
    _SAID.add(key)
    os.environ["TRITONDBG_NOTED"] = os.pathsep.join([*filter(None, said), key])
    return True
