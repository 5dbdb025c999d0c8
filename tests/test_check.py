"""`tritondbg check`: every gate fails its planted bug with the right reason and passes the correct twin;
JUnit XML read by a maintained JUnit library; the JSON is a loadable run record; the pytest plugin."""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, run_cli
from tritondbg import loader
from tritondbg.check.gates import GateContext, run_gate
from tritondbg.check.outcome import FAIL, PASS, SKIP
from tritondbg.check.perf import judge_perf
from tritondbg.record import RunRecord

ZOO = REPO / "tests" / "zoo"


def _bug_line(file: str) -> int:
    for i, line in enumerate((ZOO / file).read_text().splitlines(), 1):
        if "# BUG:" in line:
            return i
    raise AssertionError(f"no BUG marker in {file}")


# (gate, zoo file, words the FAIL reason must contain); the file's twin must pass the same gate.
CPU_ZOO = [
    ("correctness", "masked_variance.py", ["tiny/float32", "outside"]),
    ("correctness", "tf32_dot.py", ["tiny/float32", "outside", "tl.dot at tests/zoo/tf32_dot.py:{line} computed in TF32"]),
    ("all-configs", "config_bug.py", ["BLOCK=128", "rowsum_buggy"]),
    ("sanitize", "missing_mask.py", ["out_of_bounds", "missing_mask.py:{line}"]),
    ("sanitize", "race.py", ["race", "race.py:{line}"]),
    ("sanitize", "undefined_lanes.py", ["poison", "undefined_lanes.py:{line}"]),
    ("resources", "spills.py", ["spill", "rownorm_kernel"]),
    ("determinism", "nondeterministic.py", ["differ between two identical runs"]),
    # float atomics across programs: the interpreter's second run takes the programs in reverse order
    ("determinism", "atomic_order.py", ["differ between two identical runs", "reverse order"]),
]


@pytest.mark.interpreter
@pytest.mark.parametrize("gate, file, words", CPU_ZOO, ids=[f"{g}-{f[:-3]}" for g, f, _ in CPU_ZOO])
def test_gate_fails_planted_bug_and_passes_twin(gate, file, words):
    ctx = GateContext(device="cpu", target=str(ZOO / file) + "::buggy")
    bad = run_gate(gate, loader.load(ctx.target), ctx)
    assert bad.status == FAIL, bad.reason
    for w in words:
        w = w.format(line=_bug_line(file))
        assert w in bad.reason, f"{w!r} not in {bad.reason!r}"
    ctx = GateContext(device="cpu", target=str(ZOO / file) + "::twin")
    good = run_gate(gate, loader.load(ctx.target), ctx)
    assert good.status == PASS, good.reason


@pytest.mark.interpreter
def test_gpu_gates_skip_with_reason_on_cpu():
    """The one GPU-only rule (outcome.GPU_ONLY / skipped_here), applied by run_gate before the gate runs."""
    from tritondbg.check.outcome import GPU_ONLY, NEEDS_GPU

    scenario = loader.load("add")
    assert GPU_ONLY == ("perf", "agreement")
    for gate in GPU_ONLY:
        out = run_gate(gate, scenario, GateContext(device="cpu"))
        assert out.status == SKIP and out.reason == NEEDS_GPU and not out.results, out


def test_perf_judgement():
    assert judge_perf("k", ours_ms=1.0, torch_ms=1.0, recorded_ms=1.0, margin=0.1, min_ratio=0.5) is None
    slow = judge_perf("k", ours_ms=1.2, torch_ms=None, recorded_ms=1.0, margin=0.1, min_ratio=0.5)
    assert slow and "20% slower" in slow
    behind = judge_perf("k", ours_ms=3.0, torch_ms=1.0, recorded_ms=None, margin=0.1, min_ratio=0.5)
    assert behind and "0.33x torch" in behind


def test_update_baseline_rewrites_the_record_but_keeps_the_torch_floor():
    from tritondbg.check.perf import judge_case
    from tritondbg.scenario import Case

    case, kept = Case("c"), Case("slow_layout", perf_floor=0.2)
    # slower than recorded: fails a normal run, passes when the baseline is being rewritten
    assert "slower than the recorded" in judge_case(case, "k", 1.5, 1.5, 1.0, GateContext(device="cuda"))
    assert judge_case(case, "k", 1.5, 1.5, 1.0, GateContext(device="cuda", update_baseline=True)) is None
    # 0.29x torch: below the gate's 0.5x floor, even with --update-baseline ...
    for ctx in (GateContext(device="cuda"), GateContext(device="cuda", update_baseline=True)):
        assert "0.29x torch" in judge_case(case, "k", 3.45, 1.0, None, ctx)
    # ... unless the case lowers its own floor (a documented slow path)
    assert judge_case(kept, "k", 3.45, 1.0, None, GateContext(device="cuda", update_baseline=True)) is None
    assert "0.14x torch" in judge_case(kept, "k", 7.0, 1.0, None, GateContext(device="cuda"))


def test_launch_bound_cases_are_timed_on_the_gpu_alone_and_keyed_apart():
    from tritondbg.check.perf import _key
    from tritondbg.scenario import Case

    with pytest.raises(ValueError, match="perf_timing"):
        Case("c", perf_timing="wall")
    ln = loader.load("layernorm")
    graph, eager = ln.case("h200_4096x1024"), ln.case("h200_8192x8192")
    assert graph.perf_timing == "graph" and eager.perf_timing == "do_bench"
    # a GPU-time baseline entry is never compared with a do_bench one
    assert _key(ln, graph, "float16") == "layernorm/h200_4096x1024/float16@graph"
    assert _key(ln, eager, "float16") == "layernorm/h200_8192x8192/float16"


def test_perf_gate_times_each_case_its_way_and_fails_what_it_cannot_time(monkeypatch, tmp_path):
    """The gate's loop without a GPU: time_ms is replaced by fixed figures (the GPU timing itself runs on the
    H200, tests/gpu)."""
    import dataclasses

    from tritondbg.check import perf
    from tritondbg.scenario import Case

    times = {("ours", "do_bench"): 3.0, ("torch", "do_bench"): 1.0,   # do_bench: 0.33x, below the floor
             ("ours", "graph"): 1.0, ("torch", "graph"): 0.8}          # graph: 0.8x
    def fake_time(fn, how):
        who = fn()
        if who == "broken":
            raise RuntimeError("operation not permitted when stream is capturing")
        return times[(who, how)]

    monkeypatch.setattr(perf, "time_ms", fake_time)
    scenario = dataclasses.replace(
        loader.load("add"), make_inputs=lambda case, dtype, device, gen: {"case": case.name},
        launch=lambda case: "broken" if case == "uncapturable" else "ours", baseline=lambda case: "torch",
        cases=[Case("launch_bound", dtypes=("float16",), interpret=False, perf_timing="graph"),
               Case("uncapturable", dtypes=("float16",), interpret=False, perf_timing="graph")])
    ctx = GateContext(device="cuda", baseline_file=str(tmp_path / "b.json"), update_baseline=True)
    out = perf.perf_gate(scenario, ctx)
    assert out.status == FAIL and "add/uncapturable/float16@graph: cannot be timed with graph" in out.reason
    assert out.details["timings"]["add/launch_bound/float16@graph"]["timing"] == "graph"
    assert json.loads((tmp_path / "b.json").read_text())["times_ms"] == {"add/launch_bound/float16@graph": 1.0}
    # the same case timed with do_bench is 0.33x torch: the floor fails it, --update-baseline or not
    scenario.cases = [dataclasses.replace(scenario.cases[0], perf_timing="do_bench")]
    out = perf.perf_gate(scenario, ctx)
    assert out.status == FAIL and "0.33x torch" in out.reason


def test_perf_gate_times_a_failing_case_again_before_failing_it(monkeypatch, tmp_path):
    """A case over its recorded time is timed once more and fails only if it is slow both times."""
    import dataclasses

    from tritondbg.check import perf
    from tritondbg.scenario import Case

    ours = []  # the figures the fake timer hands out for our kernel, in order

    def fake_time(fn, how):
        return ours.pop(0) if fn() == "ours" else 1.0

    monkeypatch.setattr(perf, "time_ms", fake_time)
    scenario = dataclasses.replace(
        loader.load("add"), make_inputs=lambda case, dtype, device, gen: {}, launch=lambda: "ours",
        baseline=lambda: "torch", cases=[Case("small", dtypes=("float16",), interpret=False, perf_timing="graph")])
    base = tmp_path / "b.json"
    perf.save_baseline(str(base), {"add/small/float16@graph": 0.5}, {})
    ctx = GateContext(device="cuda", baseline_file=str(base), perf_min_ratio=0.0)
    ours[:] = [0.56, 0.52]  # 12% over, then within the 10% margin: a noisy first timing
    out = perf.perf_gate(scenario, ctx)
    assert out.status == PASS and out.details["timings"]["add/small/float16@graph"]["ours_ms"] == 0.52
    assert out.details["timings"]["add/small/float16@graph"]["retimed"] and not ours
    ours[:] = [0.56, 0.57]  # slow both times: a regression
    out = perf.perf_gate(scenario, ctx)
    assert out.status == FAIL and "560.0 us is 12% slower" in out.reason and not ours
    ours[:] = [0.51]  # within the margin: timed once
    assert perf.perf_gate(scenario, ctx).status == PASS and not ours


def test_perf_baseline_keeps_the_configs_and_a_slower_run_names_a_changed_pick(tmp_path):
    """The baseline file records which configs ran; a run slower than the record whose autotuner picked
    differently says so (on the H200 a launch-bound attention case was picked 64x64 in one process and
    128x128 in the next, 28% slower)."""
    from tritondbg.check.perf import config_change, load_baseline, save_baseline

    f = str(tmp_path / "b.json")
    small = {"_attn_fwd_kernel": {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4}}
    big = {"_attn_fwd_kernel": {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8}}
    save_baseline(f, {"attention/odd/bfloat16@graph": 0.0178}, {"gpu": "x"}, {"attention/odd/bfloat16@graph": small})
    save_baseline(f, {"add/big/float32": 0.19}, {"gpu": "x"}, {"add/big/float32": {}})  # merged, not replaced
    assert load_baseline(f) == {"attention/odd/bfloat16@graph": 0.0178, "add/big/float32": 0.19}
    recorded = load_baseline(f, "configs")["attention/odd/bfloat16@graph"]
    assert recorded == small
    assert config_change(small, recorded) == ""
    assert config_change(big, recorded) == ("; autotuner picked _attn_fwd_kernel BLOCK_M=128,BLOCK_N=128,num_warps=8"
                                            " (recorded run: BLOCK_M=64,BLOCK_N=64,num_warps=4)")
    assert config_change(big, None) == ""  # an old baseline file without configs: nothing to compare


def test_a_perf_failure_says_how_a_race_chose_the_kernel_that_ran():
    """Session 44's gate failed one fp8 row (1x4096x4096 under graph replay, 7.1 us against 5.6 recorded) with no
    word of why: the fp8 decode race had kept the tl kernel, whose lead over the Gluon one sits near the race's
    margin with the L2 flushed (2-6% on the H100 in session 47) while the two are 20% apart under graph replay. The
    races a watched launch decides are recorded (``Pinning.races``, kernels/_race.py's records, here decided on
    the CPU with a stand-in timer) and a failure's reason says how each went."""
    import torch

    from tritondbg.check.perf import race_note
    from tritondbg.kernels import _race
    from tritondbg.pinning import Pinning

    ref = torch.ones(4)
    steady = lambda: ref.clone()  # noqa: E731 - the tl path's call: 14.1 us, the candidate 13.9 (1.4% faster)
    watch = Pinning({}, pin_all=False)
    with watch.active():
        _race.run(("sig-test", 1), {"op": "test"}, ref, steady, {"gluon_x: 64x8x512 s4": lambda out:
                  out.fill_(1.0)}, lambda plan, out: out.fill_(1.0), {}, kernel="gluon_x",
                  timer=lambda fn: 14.1 if fn is steady else 13.9, margin=0.015)
    assert len(watch.races) == 1 and watch.races[0]["pick"] is None, watch.races  # a lead under the margin
    note = race_note(watch.races)
    assert note.startswith("; its race kept the tl kernel (14.1 us; best candidate gluon_x: 64x8x512 s4 13.9 us, "
                           "+1.4% lead against a 1.5% margin, L2 flushed): a near-tie"), note
    picked = {"tl": 14.1, "ws": {"g: a": 13.0, "g: b": "wrong result"}, "pick": "g: a", "margin": 0.015}
    assert race_note([picked]) == ("; its race picked g: a (13.0 us against the tl kernel's 14.1 us, +7.8% lead "
                                   "against a 1.5% margin, L2 flushed)")
    forced = dict(picked, ws={"g: a": 13.6}, pick=None, margin=0.5)  # TRITONDBG_RACE_MARGIN=0.5 (the H100 run)
    assert race_note([forced]).endswith("+3.5% lead against a 50.0% margin, L2 flushed)"), race_note([forced])
    assert race_note([{"tl": None, "ws": {}, "pick": None}]) == ""  # a race that timed nothing says nothing
    _race.DECISIONS.pop(("sig-test", 1), None)


def test_perf_times_gpu_size_cases_when_there_are_some():
    from tritondbg.check.perf import perf_cases

    assert [c.name for c in perf_cases(loader.load("gemm"))] == \
        [c.name for c in loader.load("gemm").cases if not c.interpret]
    zoo = loader.load(f"{ZOO / 'tf32_dot.py'}::buggy")  # only a tiny case: that one is timed
    assert [c.name for c in perf_cases(zoo)] == ["tiny"]


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="the perf gate runs on a GPU machine")
def test_check_cli_junit_json_and_exit_status(cli_env, tmp_path):
    junit, record = tmp_path / "check.xml", tmp_path / "check.json"
    p = run_cli(["check", "add", f"{ZOO / 'missing_mask.py'}::buggy", "--gates", "correctness,sanitize,perf",
                 "--junit", str(junit), "--json", str(record)], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL" in p.stdout and "out_of_bounds" in p.stdout
    # no terminal (a CI log): one line per finished gate item, so a run cut short still shows its progress
    progress = re.findall(r"^\[(\d+)/6\] (\S+): (passed|FAIL|skipped) \(", p.stderr, re.M)
    assert sorted(int(n) for n, _, _ in progress) == [1, 2, 3, 4, 5, 6], p.stderr
    # the correctness gate runs without sanitizers: the lanes the guard kept out fail it too (they read 0 here)
    assert sorted(item for _, item, outcome in progress if outcome == "FAIL") == [
        "missing_mask::buggy::correctness", "missing_mask::buggy::sanitize"]
    assert sorted(item for _, item, outcome in progress if outcome == "skipped") == ["add::perf",
                                                                                    "missing_mask::buggy::perf"]

    junitparser = pytest.importorskip("junitparser")
    xml = junitparser.JUnitXml.fromfile(str(junit))
    cases = [c for suite in xml for c in suite]
    assert len(cases) == 6
    by_name = {(c.classname, c.name): c for c in cases}
    failed = [k for k, c in by_name.items() if c.result and isinstance(c.result[0], junitparser.Failure)]
    skipped = [k for k, c in by_name.items() if c.result and isinstance(c.result[0], junitparser.Skipped)]
    assert sorted(k[1] for k in failed) == ["correctness", "sanitize"] and "missing_mask" in failed[0][0]
    assert sorted(k[1] for k in skipped) == ["perf", "perf"]
    assert "out_of_bounds" in by_name[failed[0]].result[0].message
    # a pass carries its reason too (helper-85: a caveat in the console was a plain green in the XML)
    assert "runs match" in (by_name[("add", "correctness")].system_out or ""), by_name[("add", "correctness")].system_out

    loaded = RunRecord.load(record)
    gates = {(g["kernel"], g["gate"]): g["status"] for g in loaded.extra["gates"]}
    assert gates[("add", "correctness")] == PASS and gates[("missing_mask::buggy", "sanitize")] == FAIL
    assert gates[("add", "perf")] == SKIP
    assert any(f["kind"] == "out_of_bounds" for r in loaded.results for f in r.findings)


def test_scenarios_with_the_same_name_in_two_files_stay_apart(cli_env, tmp_path):
    record = tmp_path / "r.json"
    p = run_cli(["check", f"{ZOO / 'missing_mask.py'}::buggy", f"{ZOO / 'race.py'}::buggy", "--gates", "sanitize",
                 "-n", "1", "--json", str(record)], cli_env, cwd=tmp_path)
    assert p.returncode == 1
    gates = {g["kernel"]: g for g in RunRecord.load(record).extra["gates"]}
    assert set(gates) == {"missing_mask::buggy", "race::buggy"}
    assert "out_of_bounds" in gates["missing_mask::buggy"]["reason"] and "race" in gates["race::buggy"]["reason"]


@pytest.mark.parametrize("args, needle", [
    (["check", "add", "--gates", "nope"], "unknown gate(s) nope"),
    (["check", "add", "--gates", ""], "--gates names no gate"),  # an unset CI variable: not "every gate"
    (["check", "add", "--gates", ","], "--gates names no gate"),
    (["check"], "name kernels, a scenario file, or --all"),
    (["check", "nokernel"], "unknown kernel 'nokernel'"),
    (["check", "add", "--device", "tpu"], "Invalid value for '--device'"),
])
def test_check_bad_usage(args, needle, cli_env):
    p = run_cli(args, cli_env)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("content", ["garbage{\n", "[1, 2]\n", '{"times_ms": [1]}\n'])
@pytest.mark.parametrize("update", [False, True])
def test_a_corrupt_baseline_file_is_one_usage_line(content, update, cli_env, tmp_path):
    """A --baseline file that is not one was read as an empty baseline (every gate passed against nothing), and
    --update-baseline failed on it after every gate had run: now one line before any work, exit 2."""
    bad = tmp_path / "base.json"
    bad.write_text(content)
    p = run_cli(["check", "add", "--gates", "resources", "--baseline", str(bad)]
                + (["--update-baseline"] if update else []), cli_env, cwd=tmp_path)
    assert p.returncode == 2 and "not a baseline file" in p.stderr, (p.returncode, p.stderr[-2000:])
    assert len(p.stderr.strip().splitlines()) == 1 and p.stdout == "", (p.stdout, p.stderr)
    assert bad.read_text() == content  # left as it was


def test_pytest_plugin_option_and_fixture(tmp_path):
    """A user's pytest run applies the gates: --tritondbg collects scenario files; the fixture checks inline."""
    twin, buggy = f"{ZOO / 'missing_mask.py'}::twin", f"{ZOO / 'missing_mask.py'}::buggy"
    (tmp_path / "test_mine.py").write_text(textwrap.dedent(f"""
        def test_twin_is_clean(tritondbg_check):
            outcomes = tritondbg_check({twin!r}, gates=["correctness", "sanitize"])
            assert [o.status for o in outcomes] == ["pass", "pass"]

        def test_buggy_is_caught(tritondbg_check):
            tritondbg_check({buggy!r}, gates=["sanitize"])

        def test_a_gate_name_typo_fails_naming_the_gates(tritondbg_check):
            tritondbg_check({twin!r}, gates=["corectness"])

        def test_only_skips_is_a_skip(tritondbg_check):
            tritondbg_check({twin!r}, gates=["perf"])

        def test_a_scenario_name_typo_is_one_line(tritondbg_check):
            tritondbg_check({twin + "z"!r}, gates=["correctness"])

        def test_a_file_is_every_scenario_in_it(tritondbg_check):
            outcomes = tritondbg_check({str(ZOO / 'missing_mask.py')!r}, gates=["sanitize"])

        def test_gates_as_the_command_line_writes_them(tritondbg_check):
            outcomes = tritondbg_check({twin!r}, gates="correctness,sanitize")
            assert [o.gate for o in outcomes] == ["correctness", "sanitize"]

        def test_cuda_without_a_gpu_is_one_line(tritondbg_check):
            tritondbg_check({twin!r}, gates=["correctness"], device="cuda")
    """))
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path)]
    env_cmd = dict(capture_output=True, text=True, cwd=tmp_path, timeout=600)
    p = subprocess.run(base + ["test_mine.py", "--tritondbg-device", "cpu", "--tritondbg", twin,
                               "--tritondbg-gates", "sanitize"], **env_cmd)
    out = p.stdout + p.stderr
    # fixture twin + collected twin::sanitize pass; buggy fails, and so does the gate typo (it crashed the gate with
    # a KeyError); a call whose every gate skipped (perf on the CPU) is a skip, not a pass
    # a scenario name typo was a UsageError traceback; a file of several scenarios was refused: now every one is
    # checked (the buggy one fails the test)
    assert "5 failed, 3 passed, 1 skipped" in out, out
    assert "device='cuda' needs a CUDA GPU and none is visible" in out, out
    assert "out_of_bounds" in out and "missing_mask.py" in out
    assert "unknown gate(s) ['corectness']; valid: correctness" in out, out
    assert "tritondbg_check: no scenario 'twinz' in" in out and "UsageError" not in out, out
    assert "test_a_file_is_every_scenario_in_it" in out and "buggy sanitize: FAIL" in out, out


def test_check_all_cpu_gates_pass_on_bundled_kernels(cli_env, tmp_path):
    """Every bundled kernel passes every gate that applies on a CPU (perf/agreement skip with a reason)."""
    record = tmp_path / "all.json"
    p = run_cli(["check", "--all", "--json", str(record)], cli_env, cwd=tmp_path, timeout=1500)
    loaded = RunRecord.load(record)
    bad = [(g["kernel"], g["gate"], g["reason"]) for g in loaded.extra["gates"] if g["status"] == FAIL]
    assert not bad, bad
    assert p.returncode == 0, p.stdout + p.stderr
    statuses = {(g["kernel"], g["gate"]): g["status"] for g in loaded.extra["gates"]}
    assert len(statuses) == 6 * 7
    for kernel in ("add", "layernorm", "softmax", "attention", "gemm", "fp8_gemm"):
        for gate in ("correctness", "sanitize", "resources", "determinism"):
            assert statuses[(kernel, gate)] == PASS, (kernel, gate)
        assert statuses[(kernel, "perf")] == SKIP and statuses[(kernel, "agreement")] == SKIP


@pytest.mark.interpreter
def test_determinism_tells_rounding_from_programs_that_depend_on_each_other():
    """The reversed run's difference was always put down to float atomics: a program reading what its neighbour
    overwrites (no atomic at all) was told the same, and a user would mark it deterministic=False."""
    ctx = GateContext(device="cpu", target=str(REPO / "tests" / "check_data" / "inplace_neighbor.py") + "::buggy")
    out = run_gate("determinism", loader.load(ctx.target), ctx)
    assert out.status == FAIL and "more than rounding" in out.reason and "relative" in out.reason, out.reason
    ctx = GateContext(device="cpu", target=str(ZOO / "atomic_order.py") + "::buggy")
    out = run_gate("determinism", loader.load(ctx.target), ctx)
    assert out.status == FAIL and "rounding-size" in out.reason, out.reason


def test_pytest_plugin_device_option_alone_sets_the_mode_and_items_run_in_a_worker(tmp_path):
    """--tritondbg-device cpu without --tritondbg: a test module importing its kernel at the top was compiled
    mode ("needs a real GPU"); pytest --tritondbg without -n ran its items in pytest's own process, so a segfault
    ended the session (exit 139, no report of the other items), where the README promises a worker each."""
    (tmp_path / "test_top.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO / 'tests' / 'check_data')!r})
        from _tiny import add_one  # the kernel, imported when pytest collects this module

        def test_fixture(tritondbg_check):
            tritondbg_check({str(REPO / 'tests' / 'check_data' / 'crash.py') + '::fine'!r}, gates=["correctness"])
    """))
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}  # this test may run in a worker
    env_cmd = dict(capture_output=True, text=True, cwd=tmp_path, timeout=600, env=env)
    p = subprocess.run(base + ["test_top.py", "--tritondbg-device", "cpu"], **env_cmd)
    assert p.returncode == 0 and "1 passed" in p.stdout, p.stdout + p.stderr
    crash = str(REPO / "tests" / "check_data" / "crash.py")
    p = subprocess.run(base + ["test_top.py", "--tritondbg", crash + "::segv", "--tritondbg", crash + "::fine",
                               "--tritondbg-gates", "correctness", "--tritondbg-device", "cpu"], **env_cmd)
    out = p.stdout + p.stderr
    assert p.returncode == 1 and "1 failed, 2 passed" in out and "crashed" in out, out  # test_top.py too


def test_check_takes_a_folder_of_scenario_files_as_capture_writes_them(tmp_path, cli_env):
    """`capture` writes a folder of reproducers; check refused it ("name a scenario file in it")."""
    import json
    import shutil

    folder = tmp_path / "cap"
    folder.mkdir()
    shutil.copy(ZOO / "missing_mask.py", folder / "one.py")
    shutil.copy(ZOO / "race.py", folder / "two.py")
    (folder / "captures.json").write_text("{}")
    p = run_cli(["check", str(folder), "--gates", "resources", "--json", str(tmp_path / "c.json")], cli_env,
                cwd=tmp_path)
    kernels = {g["kernel"] for g in json.loads((tmp_path / "c.json").read_text())["extra"]["gates"]}
    assert {k.split("::")[0] for k in kernels} == {"one", "two"}, (kernels, p.stdout[-2000:], p.stderr[-2000:])


def test_a_capture_folder_gives_every_reproducer_even_those_named_with_an_underscore(tmp_path):
    """Liger's kernels are named `_rms_norm_forward_kernel`: check skipped their reproducers (`_` files are a
    scenario folder's helpers), passed on the rest, and called a folder of only those empty (helper-46)."""
    import json

    from tritondbg.check.session import folder_files, resolve_targets

    cap = tmp_path / "cap"
    (cap / "data").mkdir(parents=True)
    for stem in ("_rms_norm_forward_kernel_0", "bias_act_kernel_0"):
        (cap / f"{stem}.py").write_text("")
        (cap / "data" / f"{stem}.json").write_text("{}")
    (cap / "captures.json").write_text(json.dumps({"captures": [
        {"reproducer": "_rms_norm_forward_kernel_0.py::_rms_norm_forward_kernel_0"},
        {"reproducer": "bias_act_kernel_0.py::bias_act_kernel_0"}]}))
    want = [str(cap / "_rms_norm_forward_kernel_0.py"), str(cap / "bias_act_kernel_0.py")]
    assert folder_files(cap) == want and resolve_targets((str(cap),), False) == want
    (cap / "captures.json").unlink()  # an older folder: the reproducers' data name them
    assert folder_files(cap) == want
    scen = tmp_path / "scen"
    scen.mkdir()
    (scen / "_common.py").write_text("")
    (scen / "cases.py").write_text("")
    assert folder_files(scen) == [str(scen / "cases.py")]  # a scenario folder's helper module stays out


def test_pytest_plugin_bad_targets_are_one_usage_line(tmp_path):
    """A missing scenario file showed loader.py's FileNotFoundError (and, in the worker --tritondbg starts, only
    "no tests ran")."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path),
                        "--tritondbg", str(tmp_path / "missing.py"), "--tritondbg-device", "cpu"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert p.returncode == 4 and "ERROR: no such scenario file:" in p.stderr + p.stdout, p.stdout + p.stderr
    assert "FileNotFoundError" not in p.stdout + p.stderr


def test_the_table_keeps_long_kernel_names_and_lists_no_command_per_interrupted_item(capsys):
    """A reproducer's name was cut ("rmsnorm_kernel_0::rmsno…"); an interrupted run printed a reproduce command
    under every unfinished item (21 rows of noise); an error's command stays."""
    from tritondbg.record import RunRecord
    from tritondbg.render.gates import print_gates

    name = "rmsnorm_kernel_0::rmsnorm_kernel_0"
    gates = [dict(kernel=name, gate="sanitize", status="interrupted", reason="interrupted (SIGINT)",
                  command="tritondbg check x --gates sanitize"),
             dict(kernel=name, gate="correctness", status="error", reason="crashed", command="tritondbg check y")]
    print_gates(RunRecord(command="check", extra={"gates": gates, "device": "cpu", "workers": 1}))
    out = capsys.readouterr().out
    assert "…" not in out and "orm_kernel_0" in out and out.count("reproduce:") == 1, out


def test_pytest_plugin_all_skipped_is_no_pass_and_a_stray_scenario_file_is_refused(tmp_path):
    """helper-85: ``pytest --tritondbg F --tritondbg-gates perf,agreement`` on a CPU said "2 skipped", exit 0, where
    ``tritondbg check`` exits 1 (nothing ran, so nothing passed); and ``pytest --tritondbg A.py B.py`` checked A.py
    alone (B.py went to pytest as a path with no tests: "1 passed")."""
    twin = f"{ZOO / 'missing_mask.py'}::twin"
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path)]
    env_cmd = dict(capture_output=True, text=True, cwd=tmp_path, timeout=600)
    p = subprocess.run(base + ["--tritondbg", twin, "--tritondbg-gates", "perf,agreement", "--tritondbg-device", "cpu"],
                       **env_cmd)
    out = p.stdout + p.stderr
    assert p.returncode == 1 and "2 skipped" in out, out
    assert "all 2 gate item(s) that run the kernel were skipped: nothing was checked, so nothing passed" in out, out
    # the compile-only resources gate passing beside them checks nothing that runs: exit 1 too, as `check` (it was 0)
    p = subprocess.run(base + ["--tritondbg", twin, "--tritondbg-gates", "perf,resources", "--tritondbg-device", "cpu"],
                       **env_cmd)
    out = p.stdout + p.stderr
    assert p.returncode == 1 and "1 passed, 1 skipped" in out and "all 1 gate item(s) that run" in out, out
    stray = str(ZOO / "missing_mask.py")
    p = subprocess.run(base + ["--tritondbg", twin, stray, "--tritondbg-device", "cpu"], **env_cmd)
    out = p.stdout + p.stderr
    assert p.returncode == 4 and f"{stray}: a scenario file given as a pytest path" in out, out
    assert f"--tritondbg {twin} --tritondbg {stray}" in out, out


def test_check_all_in_a_capture_folder_says_it_checks_the_bundled_kernels(tmp_path, monkeypatch, capsys):
    """helper-97 ran `tritondbg check --all` in a capture folder and waited 2 minutes on the bundled kernels."""
    from tritondbg.check.session import resolve_targets

    monkeypatch.chdir(tmp_path)
    resolve_targets((), True)
    assert "note: --all" not in capsys.readouterr().err
    (tmp_path / "captures.json").write_text("{}")
    names = resolve_targets((), True)
    assert "layernorm" in names and "this folder's reproducers: tritondbg check ." in capsys.readouterr().err


def test_a_reproducer_is_named_once_in_the_table():
    """helper-149: a reproducer's scenario is named as its file, and the table said `silu_kernel_0::silu_kernel_0`;
    a file's scenario of another name keeps `stem::name` (two files may both define `buggy`)."""
    from types import SimpleNamespace

    from tritondbg.check.session import rough_plan
    from tritondbg.pytest_plugin import label

    assert label("/x/cap/silu_kernel_0.py::silu_kernel_0", SimpleNamespace(name="silu_kernel_0")) == "silu_kernel_0"
    assert label("/x/zoo/missing_mask.py::buggy", SimpleNamespace(name="buggy")) == "missing_mask::buggy"
    assert label("attention", SimpleNamespace(name="attention")) == "attention"
    assert [i.label for i in rough_plan(["/x/cap/silu_kernel_0.py::silu_kernel_0", "/x/a.py::twin", "/x/a.py"],
                                        ["sanitize"])] == ["silu_kernel_0", "a::twin", "a"]
