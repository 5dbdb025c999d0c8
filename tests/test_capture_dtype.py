"""A capture's dtype label follows the launch's inputs, and its replay compares each output at its own dtype's
tolerance (helper-87: an fp8 quantiser of fp32 input was labelled float8_e4m3fn and its fp32 scales were held to
fp8's 3e-2; a bf16 cross-entropy writing an fp32 loss was labelled float32)."""
import json
import sys

import pytest

from conftest import run_cli

PROGRAM = '''
import torch
import triton
import triton.language as tl


@triton.jit
def quant_kernel(x_ptr, q_ptr, s_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=m, other=0.0)
    scale = tl.max(tl.abs(x), axis=0) / 448.0 + 1e-12
    tl.store(q_ptr + row * N + cols, (x / scale).to(tl.float8e4nv), mask=m)
    tl.store(s_ptr + row, scale)


@triton.jit
def xent_kernel(x_ptr, loss_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
    mx = tl.max(x, axis=0)
    tl.store(loss_ptr + row, mx + tl.log(tl.sum(tl.exp(x - mx), axis=0)))


x = torch.randn(4, 100, device="cuda")
q = torch.empty(4, 100, dtype=torch.float8_e4m3fn, device="cuda")
s = torch.empty(4, device="cuda")
quant_kernel[(4,)](x, q, s, 100, BLOCK=128)
xb = torch.randn(4, 100, device="cuda").bfloat16()
loss = torch.empty(4, device="cuda")
xent_kernel[(4,)](xb, loss, 100, BLOCK=128)
'''


def test_capture_labels_by_the_inputs_and_the_replay_holds_each_output_to_its_dtype(cli_env, tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    cap = tmp_path / "cap"
    p = run_cli(["capture", "--out", str(cap), "--", sys.executable, str(tmp_path / "prog.py")], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    labels = {c["kernel"]: c["dtype"] for c in json.loads((cap / "captures.json").read_text())["captures"]}
    assert labels == {"quant_kernel": "float32", "xent_kernel": "bfloat16"}, labels
    assert json.loads((cap / "data" / "quant_kernel_0.json").read_text())["dtype"] == "float32"
    p = run_cli(["interpret", str(cap / "quant_kernel_0.py")], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    lines = {ln.split()[0]: ln for ln in p.stdout.splitlines() if ln.startswith("  ")}
    # fp8 values: fp8's tolerance, plus half an e4m3 step for an output stored in fp8 (compare._stored_in)
    assert "(atol=0.0309766, rtol=0.0925)" in lines["q_ptr"], p.stdout
    assert "(atol=0.0001, rtol=0.0001)" in lines["s_ptr"], p.stdout    # fp32 scales: fp32's (they had fp8's)


def _replay(out_value: float, **case_args):
    """A reproducer-like scenario (its reference is the capture) labelled fp8 whose fp32 output is off by
    ``out_value`` from the captured one."""
    import torch

    from tritondbg import Case, Scenario, runner

    def make_inputs(case, dtype, device, generator):
        return {"x": torch.ones(8)}

    def launch(x):
        return {"q": x.to(torch.float8_e4m3fn), "scale": x + out_value}

    def reference(x):
        return {"q": x.to(torch.float8_e4m3fn), "scale": x.clone()}

    scenario = Scenario("repro", make_inputs, launch, reference, [Case("captured", dtypes=("float8_e4m3fn",),
                                                                       **case_args)],
                        reference_is_capture=True)
    return runner.run_case(scenario, scenario.cases[0], "float8_e4m3fn", device="cpu", seed=0)


def test_a_replays_fp32_output_is_held_to_fp32s_tolerance_whatever_the_label():
    result = _replay(1e-3)  # 1e-3 off: inside fp8's 3e-2, outside fp32's 1e-4
    errors = {e.name: e for e in result.errors}
    assert result.status == "fail" and not errors["scale"].passed and errors["q"].passed, result.message
    assert errors["scale"].atol == 1e-4 and errors["q"].atol == pytest.approx(3e-2 + 2 ** -6 * 2 ** -4)  # (+ half
    # an e4m3 subnormal step: an output stored in fp8, compare._stored_in)
    assert _replay(1e-6).status == "pass"
    assert _replay(1e-3, atol=1e-2).status == "pass"  # a case's own tolerance still applies to every output


def test_a_scenarios_outputs_keep_the_case_tolerance():
    """Only a replay (whose case dtype only labels it) compares per output dtype: a scenario's case dtype is its
    run's, and an fp32 output of a bf16 run carries bf16's error."""
    import torch

    from tritondbg import Case, Scenario, runner

    scenario = Scenario("s", lambda case, dtype, device, generator: {"x": torch.ones(8)},
                        lambda x: {"y": x + 1e-3}, lambda x: {"y": x.clone()}, [Case("tiny", dtypes=("bfloat16",))])
    assert runner.run_case(scenario, scenario.cases[0], "bfloat16", device="cpu", seed=0).status == "pass"


@pytest.mark.parametrize("specs, outputs, want", [
    ([{"dtype": "float32"}, {"dtype": "float8_e4m3fn"}, {"dtype": "float32"}], [1, 2], "float32"),  # quantiser
    ([{"dtype": "bfloat16"}, {"dtype": "int64"}, {"dtype": "float32"}], [0, 2], "bfloat16"),  # in-place CE
    ([{"dtype": "float8_e4m3fn"}, {"dtype": "float8_e4m3fn"}, {"dtype": "float32"}, {"dtype": "bfloat16"}], [3],
     "float8_e4m3fn"),  # fp8 GEMM with fp32 scales
    ([{"dtype": "int32"}, {"dtype": "int32"}], [1], "int32"),  # a histogram
])
def test_the_label_is_the_inputs_dtype(specs, outputs, want):
    from tritondbg.program.capture import run_dtype

    assert run_dtype(specs, outputs) == want
