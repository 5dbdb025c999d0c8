"""The wheel carries every subpackage and the bundled kernels and scenarios (pip install . outside the repo)."""
import subprocess
import sys
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


def test_a_source_checkout_finds_the_bundled_packages_without_an_install():
    """The repo's tritondbg/ imported as is (``python -m tritondbg...`` run in a clone after ``pip install .``:
    -m puts the cwd first) maps tritondbg.kernels / .scenarios to the repo's folders. -S: no site-packages, so no
    editable install's finder does it instead."""
    code = ("import importlib.util, tritondbg; "
            "print(importlib.util.find_spec('tritondbg.kernels').origin); "
            "print(importlib.util.find_spec('tritondbg.scenarios').origin); "
            "print(tritondbg.__file__)")
    p = subprocess.run([sys.executable, "-S", "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    kernels, scenarios, package = p.stdout.split()
    assert Path(package).parent == REPO / "tritondbg"
    assert Path(kernels) == REPO / "kernels" / "__init__.py"
    assert Path(scenarios) == REPO / "scenarios" / "__init__.py"


def test_the_checkout_finder_stays_out_of_an_installed_copy(tmp_path, monkeypatch):
    """An installed layout (tritondbg/kernels on disk) gets no finder; a checkout layout gets one, once."""
    from tritondbg import _checkout

    (tmp_path / "site" / "tritondbg" / "kernels").mkdir(parents=True)
    monkeypatch.setattr(_checkout, "_PACKAGE", tmp_path / "site" / "tritondbg")
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if not isinstance(f, _checkout.CheckoutFinder)])
    assert _checkout.install() is False
    assert not any(isinstance(f, _checkout.CheckoutFinder) for f in sys.meta_path)
    monkeypatch.setattr(_checkout, "_PACKAGE", REPO / "tritondbg")
    assert _checkout.install() is True and _checkout.install() is True
    assert sum(isinstance(f, _checkout.CheckoutFinder) for f in sys.meta_path) == 1
