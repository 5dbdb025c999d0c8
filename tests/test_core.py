"""Record, comparison, config parsing and pinning: the pieces every command builds on."""
import pytest
import torch

from tritondbg import configs, loader, runner
from tritondbg.compare import TOLERANCES, compare
from tritondbg.errors import ModeError, UsageError
from tritondbg.record import RunRecord


def test_compare_counts_mismatches_and_nan():
    ref = torch.zeros(4, 5)
    out = ref.clone()
    out[1, 2] = 0.5
    out[3, 4] = float("nan")
    (s,) = compare(out, ref, atol=1e-3, rtol=0.0)
    assert s.mismatched == 2 and s.nonfinite == 1 and not s.passed
    assert s.worst_index == [3, 4]  # NaN is the worst violation
    (s,) = compare(ref.clone(), ref, atol=1e-3, rtol=0.0)
    assert s.passed and s.max_abs == 0


def test_an_output_stored_in_fp8_gets_its_own_rounding_on_top_of_the_cases_tolerance():
    """helper-131: vLLM's merge_attn_states writing float8_e4m3fn failed at the fp8 case's 3e-2 with -2.5, the nearest
    e4m3 value to the reference's -2.378 (e4m3 rounds by up to 6.25%). A value 20% off still fails; a bf16 output
    in a bf16 case keeps the case's tolerance."""
    ref = torch.linspace(-3, 3, 61)
    for dt in (torch.float8_e4m3fn, torch.float8_e5m2):
        (s,) = compare(ref.to(dt), ref, atol=3e-2, rtol=3e-2)
        assert s.passed, (dt, s)
        (s,) = compare((ref * 1.3).to(dt), ref, atol=3e-2, rtol=3e-2)
        assert not s.passed, dt
    (s,) = compare(ref.to(torch.bfloat16), ref, atol=2e-2, rtol=2e-2)
    assert (s.atol, s.rtol) == (2e-2, 2e-2)
    (s,) = compare(ref.to(torch.bfloat16), ref, atol=1e-4, rtol=1e-4)  # a float32 case writing bf16
    assert s.passed and s.rtol > 1e-4


def test_compare_names_an_integer_output_against_a_float_reference():
    """A launch that wrote into an int32 buffer (a truncating cast) against a float reference: the mismatch names
    both dtypes; a matching one, or two float dtypes, says nothing about them."""
    ref = torch.tensor([0.5, 1.5, 2.0])
    (s,) = compare(ref.to(torch.int32), ref, atol=1e-3, rtol=0.0)
    assert not s.passed and s.dtypes == "int32 output, float32 reference"
    (s,) = compare(torch.tensor([1, 2], dtype=torch.int32), torch.tensor([1.0, 2.0]), atol=1e-3, rtol=0.0)
    assert s.passed and s.dtypes == ""
    (s,) = compare(ref.half() + 1, ref, atol=1e-3, rtol=0.0)
    assert not s.passed and s.dtypes == ""


def test_a_nan_or_infinite_reference_against_a_number_is_a_mismatch():
    """NaN allowance (atol + rtol * |NaN|) and inf - inf made these pass ("max abs err inf ... ok"); a reproducer
    captured from a poisoned run could then not tell a fixed kernel from a broken one. Equal NaN / inf still match."""
    ref = torch.tensor([float("nan"), float("inf"), 1.0, float("nan"), float("-inf")])
    out = torch.tensor([2.0, 3.0, 1.0, float("nan"), float("-inf")])
    (s,) = compare(out, ref, atol=1e-3, rtol=1e-3)
    assert s.mismatched == 2 and not s.passed and s.worst_index in ([0], [1])
    (s,) = compare(ref.clone(), ref, atol=1e-3, rtol=1e-3)
    assert s.passed


def test_integer_outputs_are_compared_exactly():
    """An index off by one near 6.7e7 passed under a float32 rtol (and float32 cannot hold it); ints match exactly."""
    ref = torch.tensor([67108864, 5, -3], dtype=torch.int32)
    (s,) = compare(ref + torch.tensor([8, 0, 0], dtype=torch.int32), ref, atol=1e-4, rtol=1e-4)
    assert s.mismatched == 1 and (s.atol, s.rtol) == (0.0, 0.0) and s.max_abs == 8
    (s,) = compare(ref + torch.tensor([1, 0, 0], dtype=torch.int32), ref, atol=1e-4, rtol=1e-4)
    assert not s.passed  # 67108865 and 67108864 are one float32 value
    (s,) = compare(ref.clone(), ref, atol=1e-4, rtol=1e-4)
    assert s.passed


def test_compare_shape_mismatch_raises():
    with pytest.raises(ValueError, match="shape"):
        compare(torch.zeros(3), torch.zeros(4), 1e-3, 1e-3)


def test_tolerances_cover_every_dtype():
    from tritondbg.scenario import DTYPES

    assert set(TOLERANCES) == set(DTYPES)


def test_parse_config():
    assert configs.parse_config("BLOCK_M=64, num_warps=4,name=x") == {"BLOCK_M": 64, "num_warps": 4, "name": "x"}
    assert configs.parse_config(None) == {}
    with pytest.raises(UsageError):
        configs.parse_config("BLOCK_M")


def test_record_roundtrip(tmp_path):
    record = runner.run("add", mode="interpret", dtype="float32")
    assert record.passed and record.results[0].mode == "interpret"
    assert record.environment["triton"] and record.environment["torch"]
    path = record.save(tmp_path / "run" / "record.json")
    again = RunRecord.load(path)
    assert again.to_dict() == record.to_dict()
    assert again.results[0].errors[0].max_abs == record.results[0].errors[0].max_abs
    assert not list(tmp_path.rglob("*.part"))


def test_record_rejects_other_schema(tmp_path):
    p = tmp_path / "r.json"
    p.write_text('{"schema": 99, "command": "x"}')
    with pytest.raises(ValueError, match="schema"):
        RunRecord.load(p)


def test_mode_switch_in_one_process_is_refused():
    with pytest.raises(ModeError):
        runner.set_mode("compiled")


def test_autotuned_kernel_runs_pinned_config_and_records_it():
    scenario = loader.load("gemm")
    tuner = configs.autotuners(scenario.kernels)
    assert set(tuner) == {"gemm_kernel", "gemm_tma_kernel"}
    name = "gemm_kernel"   # the first case (tiny, K=91) runs the pointer kernel
    at = tuner[name]
    second = configs.config_dict(at.configs[1])
    wanted = {k: v for k, v in second.items() if k.startswith("BLOCK")}
    record = runner.run("gemm", mode="interpret", dtype="float16", config=wanted)
    r = record.results[0]
    assert r.status == "pass", r.message
    assert all(r.config[name][k] == v for k, v in wanted.items())
    # (the tiny case's pruning removes this big-tile config, and the source says so)
    assert r.config_source[name].startswith("--config") and "prune_configs_by removes it" in r.config_source[name]
    assert len(at.configs) > 1, "pinning must restore the autotuner's config list"


def test_default_config_comes_from_case():
    scenario = loader.load("gemm")
    record = runner.run("gemm", mode="interpret", dtype="float16")
    r = record.results[0]
    (name,) = r.config
    assert r.config_source[name] == "case"
    for k, v in (scenario.case("tiny").config or {}).items():
        assert r.config[name][k] == v


def test_a_mismatch_shows_enough_digits_to_tell_the_values_apart():
    """helper-45: an fp64 mismatch printed "got 1.18814, expected 1.18814"."""
    from tritondbg.render.console import _apart

    assert _apart(1.188141234, 1.188141334) == ("1.18814123", "1.18814133")
    assert _apart(0.5, 0.25) == ("0.5", "0.25")
    assert _apart(1.0 + 2 ** -50, 1.0) == ("1.0000000000000009", "1")


def test_an_ok_with_both_maxima_over_their_tolerances_says_the_test_is_per_element():
    """helper-56: "max abs err 0.0617, max rel err 0.0511 (atol=0.02, rtol=0.02) ok" read as a bug: the largest
    absolute and relative errors sit at different elements, each within atol + rtol*|ref|."""
    import io

    from rich.console import Console

    from tritondbg.record import CaseResult
    from tritondbg.render.console import print_case

    ref = torch.tensor([3.0, 0.01])
    out = ref + torch.tensor([0.0617, 0.0005])
    r = CaseResult(kernel="k", case="tiny", dtype="float32", mode="interpret", device="cpu", seed=0, params={},
                   errors=compare(out, ref, 0.02, 0.02))
    buf = io.StringIO()
    print_case(Console(file=buf, width=200, highlight=False), r)
    assert r.errors[0].passed and r.errors[0].max_abs > 0.02 and r.errors[0].max_rel > 0.02
    assert "(atol=0.02, rtol=0.02) ok (each element within atol + rtol*|ref|)" in buf.getvalue(), buf.getvalue()


def test_tuple_outputs_take_the_names_of_the_wrappers_return():
    """helper-51: vLLM's decode attention returns (o, lse); the report said out0 / out1."""
    from tritondbg.compare import Named, return_names

    def attn(q):
        o, lse = q * 2, q.sum(-1)
        if q.numel() == 0:
            return o, lse
        return o, lse

    def mixed(q):
        if q.numel():
            return q, q
        return q * 2, q.sum()

    def nested(q):
        def inner():
            return 1, 2, 3
        a, b = q, q
        return a, b

    assert return_names(attn, 2) == ("o", "lse")
    assert return_names(attn, 3) is None            # not as many as it returned
    assert return_names(mixed, 2) is None           # returns that differ, or a name twice
    assert return_names(nested, 2) == ("a", "b")    # the nested function's return is its own
    assert return_names(lambda q: (q, q), 2) is None
    q = torch.ones(3, 4)
    stats = compare(Named(attn(q), ("o", "lse")), (q * 2, q.sum(-1)), 1e-5, 1e-5)
    assert [s.name for s in stats] == ["o", "lse"], stats


@pytest.mark.interpreter
def test_a_scenarios_tuple_outputs_are_reported_by_name(tmp_path):
    (tmp_path / "two.py").write_text(
        "import torch, triton, triton.language as tl\nfrom tritondbg import Case, Scenario\n\n"
        "@triton.jit\ndef k(x_ptr, y_ptr, n, B: tl.constexpr):\n    o = tl.arange(0, B)\n"
        "    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)\n\n"
        "def launch(x):\n    out = torch.empty_like(x)\n    k[(1,)](x, out, x.numel(), B=16)\n"
        "    total = out.sum().reshape(1)\n    return out, total\n\n"
        "s = Scenario('s', lambda case, dtype, device, generator: dict(x=torch.ones(10)), launch,\n"
        "             lambda x: (2 * x, (2 * x).sum().reshape(1) + 1), [Case('tiny', dtypes=('float32',))],"
        " kernels=[k])\n")
    (r,) = runner.run(str(tmp_path / "two.py"), mode="interpret").results
    assert [e.name for e in r.errors] == ["out", "total"] and r.status == "fail", (r.errors, r.message)
    assert "total" in r.message, r.message


def test_a_config_no_listed_one_has_is_refused_in_one_readable_line():
    """helper-53: `--config BLOCK_M=48` on a kernel with 98 configs printed each of them, a line of 9 KB. Past a
    dozen configs the refusal says which values each key takes, the keys asked for first."""
    import triton

    from tritondbg.configs import LISTED_MAX, choose

    class Tuner:
        configs = [triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=w)
                   for m in (16, 128, 32) for n in (64, 32) for w in (4, 8) for _ in range(3)]

    with pytest.raises(UsageError) as info:
        choose(Tuner, "mm", {"BLOCK_N": 48}, strict=True)
    text = str(info.value)
    assert len(Tuner.configs) > LISTED_MAX and len(text) < 300, text
    assert "its 36 configs take BLOCK_N in 32, 64; BLOCK_M in 16, 32, 128; num_warps in 4, 8" in text, text
