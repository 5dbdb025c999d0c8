"""The wheel carries every subpackage and the bundled kernels and scenarios (pip install . outside the repo)."""
import tomllib
from pathlib import Path

from conftest import REPO


def test_every_subpackage_is_listed_in_pyproject():
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {"tritondbg"} | {
        "tritondbg." + ".".join(p.parent.relative_to(REPO / "tritondbg").parts)
        for p in (REPO / "tritondbg").rglob("__init__.py") if p.parent != REPO / "tritondbg"}
    assert on_disk - listed == set(), f"add to pyproject [tool.setuptools] packages: {sorted(on_disk - listed)}"
    assert {"tritondbg.kernels", "tritondbg.scenarios"} <= listed


def test_bundled_folders_are_mapped_into_the_package():
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert tool["package-dir"]["tritondbg.kernels"] == "kernels"
    assert tool["package-dir"]["tritondbg.scenarios"] == "scenarios"
    # every kernel module has its scenario (``_``-prefixed helpers such as kernels/_autotune.py are not kernels)
    assert sorted(p.stem for p in (REPO / "kernels").glob("*.py") if not p.stem.startswith("_")) == \
        sorted(p.stem for p in (REPO / "scenarios").glob("*.py") if p.stem != "__init__")
