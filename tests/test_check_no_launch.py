"""A check that ran none of the kernel is no pass (helper report, session 35): a launch that takes a torch
fallback passed correctness and sanitize ("1 case x dtype runs match", exit 0), and a case with no dtypes ran
nothing and passed ("0 case x dtype runs match")."""
from __future__ import annotations

import textwrap

import pytest

from tritondbg import Case, loader
from tritondbg.check.gates import GateContext, run_gate
from tritondbg.check.outcome import FAIL, PASS

CASES = textwrap.dedent('''
    import torch, triton, triton.language as tl
    from tritondbg import Case, Scenario

    @triton.jit
    def scale_kernel(x_ptr, y_ptr, s, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)

    def scale(x, s):
        y = torch.empty_like(x)
        if x.numel() == 0:  # an early return on an empty input: nothing to launch for
            return y
        scale_kernel[(triton.cdiv(x.numel(), 64),)](x, y, s, x.numel(), BLOCK=64)
        return y

    def fallback(x, s):
        return x * s  # the library's torch path: no Triton launch at all

    def make(case, dtype, device, generator):
        return dict(x=torch.randn(case.params["n"], generator=generator).to(dtype), s=2.0)

    ref = lambda x, s: x.float() * s
    kernel = Scenario(name="kernel", make_inputs=make, launch=scale, reference=ref, kernels=[scale_kernel],
                      cases=[Case("tiny", params=dict(n=100)), Case("empty", params=dict(n=0))])
    torch_path = Scenario(name="torch_path", make_inputs=make, launch=fallback, reference=ref,
                          kernels=[scale_kernel], cases=[Case("tiny", params=dict(n=100))])
''')


@pytest.mark.interpreter
@pytest.mark.parametrize("gate", ["correctness", "sanitize", "determinism"])
def test_a_launch_that_ran_no_triton_kernel_fails_the_gate(tmp_path, gate):
    """determinism too (helper-131): a torch fallback is bitwise equal twice, "1 case x dtype runs bitwise equal
    twice", exit 0, where correctness said no_launch."""
    (tmp_path / "cases.py").write_text(CASES)
    ctx = GateContext(device="cpu", target=str(tmp_path / "cases.py") + "::torch_path")
    out = run_gate(gate, loader.load(ctx.target), ctx)
    assert out.status == FAIL and "ran no Triton kernel" in out.reason, out.reason
    ctx = GateContext(device="cpu", target=str(tmp_path / "cases.py") + "::kernel")  # incl. an empty case
    out = run_gate(gate, loader.load(ctx.target), ctx)
    assert out.status == PASS, out.reason


def test_a_case_without_dtypes_is_refused_when_written():
    with pytest.raises(ValueError, match="no dtypes"):
        Case("tiny", dtypes=())
    assert Case("tiny", dtypes="bfloat16").dtypes == ("bfloat16",)  # one dtype, not its characters


def test_a_check_where_every_item_was_skipped_is_no_pass():
    """Every item skipped (a scenario of GPU-only cases on a CPU runner) exited 0 with `"passed": true`."""
    from tritondbg.check.session import exit_status
    from tritondbg.record import RunRecord

    skipped = RunRecord(command="check", extra={"gates": [{"status": "skipped"}, {"status": "skipped"}]})
    assert exit_status(skipped) == 1 and not skipped.passed
    some = RunRecord(command="check", extra={"gates": [{"status": "pass"}, {"status": "skipped"}]})
    assert exit_status(some) == 0 and some.passed


@pytest.mark.interpreter
@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="GPU-only cases run on a GPU machine")
def test_the_cli_says_nothing_ran_when_every_item_was_skipped(tmp_path):
    import subprocess
    import sys

    (tmp_path / "cases.py").write_text(CASES.replace('cases=[Case("tiny", params=dict(n=100))])',
                                                     'cases=[Case("big", params=dict(n=100), interpret=False)])'))
    out = subprocess.run([sys.executable, "-m", "tritondbg", "check", f"{tmp_path / 'cases.py'}::torch_path",
                          "--gates", "correctness,sanitize", "--json", str(tmp_path / "c.json")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "0 passed, 0 failed, 2 skipped: nothing ran (every item was skipped)" in out.stdout, out.stdout
    import json

    assert json.loads((tmp_path / "c.json").read_text())["passed"] is False


@pytest.mark.interpreter
def test_a_scenario_that_fails_to_import_in_a_worker_says_why(tmp_path):
    """It imported in `check`'s own process, not in the gate worker (a branch on the worker's environment, a
    module-level setup that fails there): the item said only "pytest exit status 5 (pytest collected nothing)"."""
    import json
    import subprocess
    import sys

    (tmp_path / "cases.py").write_text("import os\n" + CASES + textwrap.dedent('''
        if os.environ.get("PYTEST_XDIST_WORKER"):
            raise ImportError("the worker has no such module")
    '''))
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}  # this test may run in one
    out = subprocess.run([sys.executable, "-m", "tritondbg", "check", f"{tmp_path / 'cases.py'}::kernel",
                          "--gates", "correctness", "--json", str(tmp_path / "c.json")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 1, out.stdout + out.stderr
    (gate,) = json.loads((tmp_path / "c.json").read_text())["extra"]["gates"]
    assert gate["status"] == "error", gate
    assert "a worker could not load the scenario: importing cases.py failed" in gate["reason"], gate["reason"]
    assert "ImportError: the worker has no such module" in gate["reason"], gate["reason"]


@pytest.mark.parametrize("kw", [dict(atol="0.1"), dict(atol=float("inf")), dict(rtol=-1.0), dict(atol=float("nan")),
                                dict(perf_floor=True)])
def test_a_case_tolerance_that_is_no_finite_number_is_refused_when_written(kw):
    """atol="0.1" crashed the gate ("can only concatenate str"); atol=inf passed anything; NaN or negative later."""
    with pytest.raises(ValueError, match="give a finite number >= 0"):
        Case("tiny", **kw)


@pytest.mark.interpreter
def test_the_resources_gate_tells_a_case_that_launches_no_kernel(tmp_path):
    """`--case all` compiles every case (helper-131: it compiled the first); the empty one's wrapper returns early
    and launches nothing: nothing to compile, said in the pass (not "could not compile case empty")."""
    (tmp_path / "cases.py").write_text(CASES)
    ctx = GateContext(device="cpu", target=str(tmp_path / "cases.py") + "::kernel", case="all")
    out = run_gate("resources", loader.load(ctx.target), ctx)
    assert out.status == PASS, out.reason
    assert "(1 case x dtype)" in out.reason and "empty/float32 launched no kernel: nothing to compile" in out.reason
    assert out.details["compiled"] == ["tiny/float32", "empty/float32"], out.details


@pytest.mark.parametrize("gates, rc", [
    # GPU-only cases on a CPU runner: resources compiled them, every gate that runs the kernel skipped (exit 0 before)
    ([("resources", "pass"), ("correctness", "skipped"), ("sanitize", "skipped")], 1),
    ([("resources", "pass")], 0),                                     # only the compile gate asked: it ran
    ([("resources", "skipped")], 1),
    ([("resources", "pass"), ("correctness", "pass"), ("sanitize", "skipped")], 0),
    ([("resources", "FAIL"), ("correctness", "skipped")], 1),
], ids=["compile-only-pass", "resources-asked-alone", "all-skipped", "one-ran", "a-fail"])
def test_a_compile_only_pass_is_not_something_ran(gates, rc):
    from tritondbg.check import session
    from tritondbg.check.outcome import GateOutcome

    items = [session.Item("k", "k", g) for g, _ in gates]
    record = session.make_record(items, [GateOutcome("k", g, s, "why") for g, s in gates], device="cpu", workers=1)
    assert session.exit_status(record) == rc
    assert record.passed is (rc == 0)


@pytest.mark.interpreter
def test_a_scenario_whose_every_output_is_empty_compared_nothing_and_is_no_pass(tmp_path):
    """A case of n = 0 alone passed every gate and `interpret` exited 0; beside a case with elements (the
    ``kernel`` scenario above: a wrapper's early return on an empty input) it stays a pass."""
    from tritondbg import runner

    (tmp_path / "cases.py").write_text(CASES.replace('cases=[Case("tiny", params=dict(n=100)), Case("empty"',
                                                     'cases=[Case("empty"'))
    ctx = GateContext(device="cpu", target=str(tmp_path / "cases.py") + "::kernel")
    out = run_gate("correctness", loader.load(ctx.target), ctx)
    assert out.status == FAIL and "nothing was compared" in out.reason, out.reason
    record = runner.run(ctx.target, mode="interpret", cases="all")
    assert record.compared_nothing and not record.passed and all(r.passed for r in record.results)


@pytest.mark.interpreter
@pytest.mark.parametrize("gate", ["sanitize", "determinism"])
@pytest.mark.parametrize("wrapper", ["early_return", "grid_of_0"])
def test_sanitize_and_determinism_checked_nothing_when_every_output_is_empty(tmp_path, gate, wrapper):
    """helper-131: a scenario of n = 0 only (a grid of 0 programs, or the wrapper's early return) passed sanitize
    ("no finding on 1 runs") and determinism ("bitwise equal twice"), exit 0: no program ran. Both now fail as
    correctness does; beside a case with elements the empty one is fine (the first test)."""
    cases = CASES.replace('cases=[Case("tiny", params=dict(n=100)), Case("empty"', 'cases=[Case("empty"')
    if wrapper == "grid_of_0":
        cases = cases.replace("if x.numel() == 0:", "if x.numel() < 0:")
    (tmp_path / "cases.py").write_text(cases)
    ctx = GateContext(device="cpu", target=str(tmp_path / "cases.py") + "::kernel")
    out = run_gate(gate, loader.load(ctx.target), ctx)
    assert out.status == FAIL and "every output of the 1 case x dtype run(s) was empty: nothing was" in out.reason, \
        out.reason
