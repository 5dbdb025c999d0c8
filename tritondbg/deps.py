"""Packages a command needs at run time: a missing one is one line that says the `pip install` to run."""
from __future__ import annotations

import importlib

from tritondbg.errors import UsageError

# import name -> distribution name, where they differ
PIP_NAMES = {"xdist": "pytest-xdist", "liger_kernel": "liger-kernel", "torch_tb_profiler": "torch-tb-profiler",
             "sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow", "cv2": "opencv-python"}


class MissingPackage(UsageError):
    """A package is not installed; the message holds the exact pip line."""


def pip_name(module: str) -> str:
    top = module.split(".")[0]
    return PIP_NAMES.get(top, top.replace("_", "-"))


def missing_message(modules: list[str], what: str) -> str:
    names = " ".join(dict.fromkeys(pip_name(m) for m in modules))
    return f"{what} needs {', '.join(dict.fromkeys(m.split('.')[0] for m in modules))}: pip install {names}"


def require(modules: list[str], what: str) -> None:
    """Import ``modules`` or raise MissingPackage naming all the missing ones and the pip line."""
    missing = []
    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            missing.append(m)
    if missing:
        raise MissingPackage(missing_message(missing, what))
