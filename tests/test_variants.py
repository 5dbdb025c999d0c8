"""Kernel variants under trial (tests/bench/variants/: candidates for the bundled kernels, measured on the
H200 with tests/bench/kernels_h200.py): every interpretable case matches the reference on the CPU, so a
variant timed on the GPU computes the same function as the kernel it would replace."""
from pathlib import Path

import pytest

from tritondbg import loader, runner

pytestmark = pytest.mark.interpreter

VARIANTS = sorted((Path(__file__).parent / "bench" / "variants").glob("*.py"))


def _targets() -> list[str]:
    """``file.py::name`` of every variant scenario (a bundled scenario a file imports is not a variant)."""
    bundled = {id(loader.load(n)) for n in loader.bundled_names()}
    out = []
    for path in VARIANTS:
        for s in loader._scenarios_in(loader._import_file(path)):
            if id(s) not in bundled:
                out.append(f"{path}::{s.name}")
    return out


def _params():
    out = []
    for target in _targets():
        scenario = loader.load(target)
        for case in scenario.cases:
            if case.interpret:
                for dtype in case.dtypes:
                    tid = f"{Path(target.split('::')[0]).stem}::{scenario.name}-{case.name}-{dtype}"
                    out.append(pytest.param(target, case.name, dtype, id=tid))
    return out


def test_each_variant_file_has_a_cpu_and_a_gpu_case():
    targets = _targets()  # none under trial is fine (tests/bench/variants/README.md)
    for path in VARIANTS:
        scenarios = [loader.load(t) for t in targets if t.split("::")[0] == str(path)]
        assert scenarios, f"{path.name} defines no variant scenario"
        assert any(not c.interpret for s in scenarios for c in s.cases), f"{path.name}: nothing to time on a GPU"
        assert all(any(c.interpret for c in s.cases) for s in scenarios), f"{path.name}: a variant unchecked on CPU"


@pytest.mark.parametrize("target, case, dtype", _params())
def test_variant_case_matches_reference(target, case, dtype):
    scenario = loader.load(target)
    result = runner.run_case(scenario, scenario.case(case), dtype, device="cpu", seed=0)
    assert result.status == "pass", f"{result.message} {[e.max_abs for e in result.errors]}"
    assert not result.findings, result.findings
