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
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with _outside_pytest():
            spec.loader.exec_module(module)
    except Exception:
        sys.modules.pop(name, None)
        raise
    return module


def load(target: str) -> Scenario:
    """Resolve a bundled name or ``file.py[::name]`` to its Scenario (imports the file: mode must be set)."""
    if is_path_target(target):
        file, _, wanted = target.partition("::")
        path = Path(file).expanduser().resolve()
        if not path.is_file():
            raise UsageError(f"no such scenario file: {file}")
        module = _import_file(path)
        scenarios = _scenarios_in(module)
        if not scenarios:
            raise UsageError(f"{file} defines no Scenario (see README: 'Your own kernels')")
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
        raise UsageError(f"unknown kernel {target!r}; choose from: {', '.join(names)} (or path/to/cases.py::name)")
    with _outside_pytest():
        module = importlib.import_module(f"{BUNDLED_PACKAGE}.{target}")
    scenarios = _scenarios_in(module)
    if len(scenarios) != 1:
        raise RuntimeError(f"bundled scenario module {target} must define exactly one Scenario")
    scenarios[0].source = module.__file__
    return scenarios[0]
