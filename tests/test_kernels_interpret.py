"""Every bundled kernel's interpretable cases, every dtype, against the torch reference on the CPU."""
import pytest

from tritondbg import loader, runner

pytestmark = pytest.mark.interpreter


def _params():
    out = []
    for name in loader.bundled_names():
        scenario = loader.load(name)
        for case in scenario.cases:
            if case.interpret:
                for dtype in case.dtypes:
                    out.append(pytest.param(name, case.name, dtype, id=f"{name}-{case.name}-{dtype}"))
    return out


@pytest.mark.parametrize("kernel, case, dtype", _params())
def test_bundled_case_matches_reference(kernel, case, dtype):
    scenario = loader.load(kernel)
    result = runner.run_case(scenario, scenario.case(case), dtype, device="cpu", seed=0)
    detail = "; ".join(f"{e.name}: max_abs={e.max_abs:.3g} worst {e.worst_index} got {e.worst_out} "
                       f"want {e.worst_ref}" for e in result.errors)
    assert result.status == "pass", f"{result.message} {detail}"
    assert result.errors and all(e.numel > 0 for e in result.errors)
    assert result.flops and result.flops > 0 and result.bytes and result.bytes > 0


def test_every_kernel_has_odd_tiny_case():
    """Tiny cases include a size that is not a power of two (masks and loop tails are exercised)."""
    for name in loader.bundled_names():
        tiny = loader.load(name).case("tiny")
        sizes = [v for v in tiny.params.values() if isinstance(v, int) and v > 1]
        assert any(v & (v - 1) for v in sizes), f"{name}: tiny case sizes {sizes} are all powers of two"


def test_wrong_kernel_output_is_reported_as_fail():
    """The comparison can fail: a scenario whose launch is off by one element fails with a worst index."""
    import dataclasses

    scenario = loader.load("add")
    def broken(**inputs):
        out = scenario.launch(**inputs)
        out.view(-1)[-1] += 1.0
        return out
    bad = dataclasses.replace(scenario, launch=broken)
    case = scenario.case("tiny")
    result = runner.run_case(bad, case, "float32", device="cpu", seed=0)
    assert result.status == "fail"
    assert result.errors[0].mismatched == 1
    assert result.errors[0].worst_index == [case.params.get("n", result.errors[0].numel) - 1] or \
        result.errors[0].worst_index[-1] == result.errors[0].shape[-1] - 1


def test_kernel_exception_is_an_error_result_with_location():
    import dataclasses

    scenario = loader.load("add")

    def raising(**inputs):
        raise ValueError("boom in the launch wrapper")
    bad = dataclasses.replace(scenario, launch=raising)
    result = runner.run_case(bad, scenario.case("tiny"), "float32", device="cpu", seed=0)
    assert result.status == "error"
    assert "ValueError: boom in the launch wrapper" in result.message
