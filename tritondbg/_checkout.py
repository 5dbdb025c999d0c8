"""``tritondbg.kernels`` and ``tritondbg.scenarios`` when this package is imported from a source checkout.

pyproject.toml maps the repo's top-level kernels/ and scenarios/ into the package (``package-dir``), so an
installed copy has them as tritondbg/kernels and tritondbg/scenarios. The checkout's tritondbg/ does not: a
process that imports tritondbg from the repo (``python -m tritondbg`` run there, or any ``python -m tritondbg...``
subprocess the CLI starts while the user's cwd is the repo: ``-m`` puts the cwd first on sys.path) found the
checkout's tritondbg and then no tritondbg.kernels (``tritondbg check``'s resources gate failed so after the
README's ``pip install .``, run in the clone). Here a meta-path finder maps the two names to the checkout's
folders, as the installed mapping does; an editable install's finder, where present, maps them the same way.
"""
from __future__ import annotations

import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_MAPPED = {"tritondbg.kernels": _PACKAGE.parent / "kernels", "tritondbg.scenarios": _PACKAGE.parent / "scenarios"}


class CheckoutFinder:
    """A meta-path finder (the protocol: ``find_spec``) for the two mapped packages in the checkout; their
    submodules then load from the package's path. importlib.util is imported on first use, not at start-up."""

    def find_spec(self, name, path=None, target=None):
        folder = _MAPPED.get(name)
        if folder is None:
            return None
        import importlib.util

        return importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])


def install() -> bool:
    """Add the finder where this package is a source checkout (no tritondbg/kernels beside this file, the repo's
    kernels/ and scenarios/ above it); once per process. Returns whether it is installed."""
    if (_PACKAGE / "kernels").is_dir() or not all((d / "__init__.py").is_file() for d in _MAPPED.values()):
        return False  # an installed copy (the mapping is on disk), or no checkout around this package
    if not any(isinstance(f, CheckoutFinder) for f in sys.meta_path):
        sys.meta_path.append(CheckoutFinder())  # after the path finders: an installed layout wins where present
    return True
