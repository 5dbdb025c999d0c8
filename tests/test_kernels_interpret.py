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


_BARE = r'''
import torch
from tritondbg import loader
from tritondbg.compare import compare, tolerance
bad = []
for name in loader.bundled_names():
    sc = loader.load(name)
    for case in sc.cases:
        if not case.interpret:
            continue
        # bf16 dots are wrong under a bare interpreter (it multiplies the raw uint16 storage; tritondbg's
        # shims fix it: tritondbg/interp/shims.py): check another dtype where the case has one
        others = [d for d in case.dtypes if d != "bfloat16"]
        dtype = (others or case.dtypes)[0]
        inputs = sc.make_inputs(case, getattr(torch, dtype), "cpu", torch.Generator().manual_seed(0))
        try:
            out = sc.launch_for(case)(**inputs)  # the kernel's own wrapper and autotuner: nothing of tritondbg
        except Exception as e:
            bad.append(f"{name}/{case.name}: {type(e).__name__}: {str(e)[:100]}")
            continue
        if not others:
            continue  # bf16 only: it ran, which is what the autotuner fix is about
        atol, rtol = tolerance(dtype, case.atol, case.rtol)
        for err in compare(out, sc.reference_for(case)(**inputs), atol, rtol):
            if not err.passed:
                bad.append(f"{name}/{case.name}: {err.name} max_abs={err.max_abs:.3g}")
print("BAD" if bad else "ALL OK", *bad, sep="\n")
'''


def test_bundled_kernels_run_under_a_bare_interpreter_without_a_gpu(cli_env):
    """A user who imports a bundled kernel and runs it with plain TRITON_INTERPRET=1 (no tritondbg pinning)
    on a machine without a GPU: Triton's default autotune timer asks for a GPU driver ("0 active drivers");
    the kernels' ``autotune_bench`` runs the first config left after pruning instead. Every interpretable
    case runs; each against the reference in a dtype other than bf16 where it has one."""
    import os
    import subprocess
    import sys

    env = dict(cli_env, TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="")
    p = subprocess.run([sys.executable, "-c", _BARE], env=env, capture_output=True, text=True, timeout=900,
                       cwd=os.path.dirname(__file__))
    assert p.returncode == 0 and "ALL OK" in p.stdout, p.stdout[-3000:] + p.stderr[-3000:]


def test_loop_bounds_fix_mends_triton_36s_conversion(monkeypatch):
    """kernels/_autotune.py ``fix_loop_bounds`` (run when tritondbg.kernels is imported under the interpreter):
    Triton 3.6's interpreter converts a tensor used as an int with ``int(handle.data)``, which numpy >= 2.4
    refuses for the 1-element array it holds, so every persistent loop of the bundled kernels failed under a bare
    TRITON_INTERPRET=1 on 3.6 (found in session 18). Here 3.6's conversion is put back, then the fix mends it."""
    import numpy as np
    import torch
    import triton
    import triton.language as tl
    from triton.runtime import interpreter as interp

    from tritondbg.kernels import _autotune

    @triton.jit
    def steps(out_ptr, n, STEP: tl.constexpr):
        for i in range(tl.program_id(0), n, STEP):  # a bound computed from a kernel argument
            tl.store(out_ptr + i, i)

    current = interp._patch_lang_tensor

    def patch_36(tensor, scope):  # Triton 3.6's __index__
        current(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data))

    monkeypatch.setattr(interp, "_patch_lang_tensor", patch_36)
    out = torch.zeros(10, dtype=torch.int32)
    if tuple(int(v) for v in np.__version__.split(".")[:2]) >= (2, 4):
        with pytest.raises(Exception, match="0-dimensional"):
            steps[(1,)](out, 10, STEP=1)
    assert _autotune.fix_loop_bounds()
    fixed = interp._patch_lang_tensor
    assert fixed is not patch_36 and _autotune.fix_loop_bounds() and interp._patch_lang_tensor is fixed  # once
    steps[(2,)](out, 10, STEP=2)
    assert out.tolist() == list(range(10))


@pytest.mark.parametrize("where", ["launch", "instrument"])
def test_a_deadline_stays_a_deadline_when_cleanup_fails_under_it(where):
    """The watchdog's Timeout (or Ctrl-C) raised in a launch, then replaced by a cleanup's exception (a context
    manager of the user's or an instrument whose exit fails on a kernel cut short): run_case raises the Timeout
    again instead of reporting the kernel as failed (a timed-out check item came back FAIL, not error, in CI)."""
    import contextlib
    import dataclasses

    from tritondbg import watchdog

    scenario = loader.load("add")

    @contextlib.contextmanager
    def failing_cleanup():
        try:
            yield
        finally:
            raise RuntimeError("cleanup failed on a kernel cut short")

    def stuck(**inputs):
        with failing_cleanup() if where == "launch" else contextlib.nullcontext():
            raise watchdog.Timeout("timed out after 3 s")

    class Instrument:
        def active(self, scenario, case, inputs):
            return failing_cleanup()

    bad = dataclasses.replace(scenario, launch=stuck)
    with pytest.raises(watchdog.Timeout, match="timed out after 3 s"):
        runner.run_case(bad, scenario.case("tiny"), "float32", device="cpu", seed=0,
                        instruments=[Instrument()] if where == "instrument" else ())
    # a plain kernel exception is still a result, whatever was raised and handled before it
    def raises_after_handled(**inputs):
        try:
            raise ValueError("handled")
        except ValueError:
            raise RuntimeError("the kernel's own error") from None

    r = runner.run_case(dataclasses.replace(scenario, launch=raises_after_handled), scenario.case("tiny"),
                        "float32", device="cpu", seed=0)
    assert r.status == "error" and "the kernel's own error" in r.message
