"""tritondbg's program-mode bootstrap, imported by Python's ``site`` at the start of a program tritondbg runs.

``tritondbg.program.launcher`` puts this folder first on the program's PYTHONPATH and its settings in
``TRITONDBG_PROGRAM`` (JSON). This file first runs the ``sitecustomize`` it shadows (if the environment
has one), then attaches tritondbg before the program's first import. It never stops the program: a
failure to attach is one line on stderr.
"""
import os
import sys
import time

_tritondbg_t0 = time.monotonic()  # tritondbg profile -- CMD reports its own start cost from here


def _chain_previous() -> None:
    import importlib

    here = os.path.dirname(os.path.abspath(__file__))
    mine = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        try:
            importlib.import_module("sitecustomize")
        except ImportError as exc:
            if exc.name != "sitecustomize":
                raise
    except Exception as exc:  # noqa: BLE001 - as site.py does for a failing sitecustomize
        print(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(exc).__name__}: {exc}",
              file=sys.stderr)
    finally:
        sys.path[:] = saved
        if mine is not None:
            sys.modules["sitecustomize"] = mine


class _LaunchingTritondbg:
    """A meta-path finder for the one name ``tritondbg``: the package this file belongs to, the tritondbg that
    started the program. Without it the program imports whichever tritondbg its own sys.path finds: none where
    tritondbg ran from a source checkout (``python -m tritondbg`` in the repo) and the program's script lies
    elsewhere (the attach failed so), another version where one is installed too. The package's submodules
    then load from its own folder; nothing else is looked up here."""

    _package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def find_spec(self, name, path=None, target=None):
        if name != "tritondbg":
            return None
        import importlib.util

        return importlib.util.spec_from_file_location(name, os.path.join(self._package, "__init__.py"),
                                                      submodule_search_locations=[self._package])


_chain_previous()
if os.environ.get("TRITONDBG_PROGRAM"):
    sys.meta_path.insert(0, _LaunchingTritondbg())
    try:
        # child.py is loaded by path, under its own name, without importing the tritondbg package yet: a
        # program's pytest would warn that its tritondbg plugin was imported before it could be rewritten.
        import importlib.util as _ilu

        _path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "child.py")
        _spec = _ilu.spec_from_file_location("tritondbg.program.child", _path)
        _tritondbg_child = _ilu.module_from_spec(_spec)
        sys.modules["tritondbg.program.child"] = _tritondbg_child
        _spec.loader.exec_module(_tritondbg_child)
        _tritondbg_child.start({"bootstrap": _tritondbg_t0})
    except Exception as _exc:  # noqa: BLE001 - never stop the program
        print(f"tritondbg: could not attach to this Python ({sys.executable}): {type(_exc).__name__}: {_exc}",
              file=sys.stderr)
