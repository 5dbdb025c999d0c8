"""Find scenarios: bundled ones by name, users' files by path (``path/to/cases.py[::name]``).

Names of bundled scenarios are listed from the files, without importing them (no torch, no triton);
importing a scenario happens only through ``load``, which the runner calls after choosing the mode.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path

from tritondbg.errors import UsageError
from tritondbg.scenario import Scenario

BUNDLED_PACKAGE = "tritondbg.scenarios"


def bundled_dir() -> Path:
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("bundled scenarios are missing from this install of tritondbg")
    return Path(list(spec.submodule_search_locations)[0])


def bundled_names() -> list[str]:
    return sorted(p.stem for p in bundled_dir().glob("*.py") if not p.stem.startswith("_"))


def is_path_target(target: str) -> bool:
    path = target.split("::", 1)[0]
    return "::" in target or path.endswith(".py") or "/" in path or Path(path).is_file()


def unknown_kernel(target: str, names) -> str:
    """The line for a KERNEL that is neither bundled nor a path; names ``TARGET.py`` when that file is here."""
    here = f"; did you mean ./{target}.py?" if Path(f"{target.partition('::')[0]}.py").is_file() else ""
    if Path(target.partition("::")[0]).is_dir():  # a capture's folder: its reproducers are files in it
        here = "; " + _folder_hint(target.partition("::")[0])
    if Path(target).name.split(".")[0].rstrip("0123456789.") in ("python", "pytest", "torchrun", "accelerate",
                                                                   "deepspeed", "bash", "sh"):
        here = f"; to run a program, put it after --: tritondbg <command> -- {target} ..."
    return f"unknown kernel {target!r}; choose from: {', '.join(names)} (or path/to/cases.py::name){here}"


def _folder_hint(folder: str) -> str:
    """What to give instead of a folder (a capture's: its reproducers are files in it; helper-149)."""
    repros = sorted(p.name for p in Path(folder).expanduser().glob("*.py"))
    if not repros:
        return f"{folder} is a folder with no .py file"
    return (f"{folder} is a folder: name one of its files ({', '.join(repros[:3])}{', ...' if len(repros) > 3 else ''}), "
            f"or give the folder to `tritondbg check`, which checks every reproducer in it")


def check_target(target: str) -> None:
    """Reject a KERNEL argument that cannot be loaded, without importing anything (UsageError, exit 2): an
    unknown bundled name, a missing or non-.py file, a file that does not compile (``file:line``)."""
    if not is_path_target(target):
        names = bundled_names()
        if target not in names:
            raise UsageError(unknown_kernel(target, names))
        return
    file = target.partition("::")[0]
    path = Path(file).expanduser()
    if not path.is_file():
        raise UsageError(f"no such scenario file: {file}" + (f" ({_folder_hint(file)})" if path.is_dir() else ""))
    if path.suffix != ".py":
        raise UsageError(f"{file} is not a Python file: a scenario file is path/to/cases.py[::name]")
    try:
        source = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read scenario file {file}: {exc.strerror or exc}") from None
    try:
        compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise UsageError(_syntax_line(exc, file)) from None
    except ValueError as exc:   # e.g. null bytes
        raise UsageError(f"{file}: not Python source ({exc})") from None
    if not _names_a_scenario(source):
        import ast

        tree = ast.parse(source)  # (compile() above took it)
        kernels = _jit_kernels(tree)
        name = target.partition("::")[2]
        if kernels and not _runs_as_program(tree):
            # a library's kernel file (flash-attn's rotary.py): nothing there launches the kernel (helper-123)
            k = name if name in kernels else _entry_kernel(tree, kernels)
            raise UsageError(f"{file}{'::' + name if name else ''}: a file of @triton.jit kernels ({', '.join(kernels[:4])}"
                             f"{', ...' if len(kernels) > 4 else ''}), not a Scenario: a kernel needs its launch "
                             f"(arguments, grid) from the code that calls it: `tritondbg capture -- python PROG.py` "
                             f"over a program that calls it saves each launch as a reproducer for ir / interpret / check "
                             f"(`tritondbg ir CAPTURE/{k}_0.py --stage ptx`), or `tritondbg interpret -- python "
                             f"PROG.py` checks them where they run")
        # a program (a training script) given as KERNEL: refused before importing it, which would run it whole
        raise UsageError(f"{file}: not imported, its text names no Scenario (a program imported would run whole); "
                         f"a program that launches kernels runs as one: "
                         f"tritondbg interpret -- python {file} (`tritondbg capture -- python {file}` saves its "
                         "launches as scenario files for ir / check); a file whose Scenarios a helper builds is read "
                         "once its text names them (a `# Scenario` comment will do)")


def _jit_kernels(tree) -> list[str]:
    """The functions a module's ``tree`` decorates with something named ``jit`` (``@triton.jit``, ``@jit``,
    ``@triton.jit(...)``), under any autotune / heuristics decorators."""
    import ast

    def named_jit(d) -> bool:
        d = d.func if isinstance(d, ast.Call) else d
        return (isinstance(d, ast.Attribute) and d.attr == "jit") or (isinstance(d, ast.Name) and d.id == "jit")

    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and any(map(named_jit, n.decorator_list))]


def _entry_kernel(tree, kernels: list[str]) -> str:
    """The kernel a reproducer would be named after: the first that no other @triton.jit function of the file calls
    (helper-144: a jit helper, print_tensor_dim, was offered as CAPTURE/print_tensor_dim_0.py, which never exists)."""
    import ast

    called = {c.func.id for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in kernels
              for c in ast.walk(n) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id != n.name}
    return next((k for k in kernels if k not in called), kernels[0])


def _runs_as_program(tree) -> bool:
    """Whether a file does something when run, as an import-only library module does not: an
    ``if __name__ == "__main__"`` block, a call statement, a ``with`` / ``for`` / ``while`` at module level, or a
    kernel launch (``name[grid](...)``) anywhere outside its functions (helper-125: ``out = k[grid](x)``,
    ``with torch.no_grad(): run()``). A module-level ``ALPHA = tl.constexpr(...)`` is a library's too."""
    import ast

    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.dump(node.test):
            return True
        if isinstance(node, (ast.Expr, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) for n in ast.walk(node)):
            return True
    return False


def _names_a_scenario(source: bytes) -> bool:
    """Whether a file's code names a scenario (a name or attribute with "scenario" in it, an import from tritondbg,
    a star import) or a comment says ``Scenario``: the word in a program's comment or string ("not a scenario
    file") does not count (helper-88: such a program ran whole before "defines no Scenario")."""
    import ast
    import re

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return True  # (compile() said so already)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and "scenario" in node.id.lower():
            return True
        if isinstance(node, ast.Attribute) and "scenario" in node.attr.lower():
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(n == "*" or "tritondbg" in n or "scenario" in n.lower() for n in names):
                return True
    return re.search(rb"#[^\n]*\bScenarios?\b", source) is not None


def _syntax_line(exc: SyntaxError, file: str | None = None) -> str:
    where = exc.filename or file or "?"
    return f"{where}:{exc.lineno or '?'}: SyntaxError: {exc.msg}"


def _import_error_line(exc: BaseException, path: Path) -> str:
    """One line for an exception raised while importing a user's scenario file (or a module it imports)."""
    import traceback

    if isinstance(exc, SyntaxError):
        return _syntax_line(exc)
    from tritondbg.errors import not_users_file

    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if "importlib" not in f.filename and "<frozen" not in f.filename]
    # the innermost frame of the user's own files (it named torch/__init__.py for a helper's getattr(torch, ...))
    own = [f for f in user if not not_users_file(f.filename)]
    last = own[-1] if own else user[-1] if user else None
    where = f"{last.filename}:{last.lineno}: " if last else ""
    text = str(exc).strip().splitlines()
    hint = ""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        from tritondbg import deps

        top = exc.name.split(".")[0]
        if top == exc.name or importlib.util.find_spec(top) is None:
            hint = f" (pip install {deps.pip_name(top)})"
        else:  # the package is there: a submodule it does not have (a typo), not something to install
            hint = f" ({top} is installed and has no {exc.name[len(top) + 1:]})"
    return f"importing {path.name} failed: {where}{type(exc).__name__}: {text[0] if text else ''}{hint}"


def _scenarios_in(module) -> list[Scenario]:
    found, seen = [], set()
    for value in vars(module).values():
        if isinstance(value, Scenario) and id(value) not in seen:
            seen.add(id(value))
            found.append(value)
    return found


@contextlib.contextmanager
def _outside_pytest():
    """Import kernels as a plain run would: without ``PYTEST_VERSION`` in the environment.

    Kernel modules decide their autotune configs at import, and some look at pytest (Triton's tutorial 06
    keeps 1 of its 36 configs when ``PYTEST_VERSION`` is set). `tritondbg check` and the pytest plugin run
    scenarios inside pytest; without this they would check fewer configs than `interpret` and a real run see."""
    saved = os.environ.pop("PYTEST_VERSION", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["PYTEST_VERSION"] = saved


def _import_file(path: Path):
    """Import a user's scenario file under a private module name; its folder goes on sys.path so it can
    import the kernel module beside it."""
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    name = f"tritondbg_user_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path} is not a Python file: a scenario file is path/to/cases.py[::name]")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    from tritondbg.program import cpu_device

    try:  # without a GPU, CUDA tensors a module makes at import are made on the CPU (`interpret`, `ir`, `check`)
        with _outside_pytest(), cpu_device.serving():
            spec.loader.exec_module(module)
    except UsageError:
        sys.modules.pop(name, None)
        raise
    except Exception as exc:   # the user's code raised while importing, not the tool: one line naming file:line
        sys.modules.pop(name, None)
        raise UsageError(_import_error_line(exc, path)) from exc
    return module


def no_scenario(file: str) -> str:
    """A file without a Scenario: most likely a program that launches kernels, which program mode runs."""
    return (f"{file} defines no Scenario (see README: 'Your own kernels'); a program that launches kernels runs "
            f"as one: tritondbg interpret -- python {file}")


def load_each(target: str) -> list[tuple[str, Scenario]]:
    """Every scenario ``target`` names, with the name to run it by: a scenario file without ``::name`` each one it
    defines (``/abs/file.py::name``; a file that defines none is bad usage), else the one ``load`` finds."""
    if is_path_target(target) and "::" not in target:
        check_target(target)  # a program given as a scenario file is refused before it runs
        path = Path(target).expanduser().resolve()
        scenarios = _scenarios_in(_import_file(path))
        if not scenarios:
            raise UsageError(no_scenario(target))
        for s in scenarios:
            s.source = str(path)
        return [(f"{path}::{s.name}", s) for s in scenarios]
    return [(target, load(target))]


def load(target: str) -> Scenario:
    """Resolve a bundled name or ``file.py[::name]`` to its Scenario (imports the file: mode must be set)."""
    if is_path_target(target):
        file, _, wanted = target.partition("::")
        check_target(target)
        path = Path(file).expanduser().resolve()
        module = _import_file(path)
        scenarios = _scenarios_in(module)
        if not scenarios:
            raise UsageError(no_scenario(file))
        if wanted:
            for s in scenarios:
                if s.name == wanted:
                    s.source = str(path)
                    return s
            choices = ", ".join(s.name for s in scenarios)
            raise UsageError(f"no scenario {wanted!r} in {file}; choose from: {choices}")
        if len(scenarios) > 1:
            choices = ", ".join(f"{file}::{s.name}" for s in scenarios)
            raise UsageError(f"{file} defines several scenarios; choose one of: {choices}")
        scenarios[0].source = str(path)
        return scenarios[0]

    names = bundled_names()
    if target not in names:
        raise UsageError(unknown_kernel(target, names))
    with _outside_pytest():
        module = importlib.import_module(f"{BUNDLED_PACKAGE}.{target}")
    scenarios = _scenarios_in(module)
    if len(scenarios) != 1:
        raise RuntimeError(f"bundled scenario module {target} must define exactly one Scenario")
    scenarios[0].source = module.__file__
    return scenarios[0]
