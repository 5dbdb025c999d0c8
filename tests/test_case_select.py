"""`--case` takes a name, a comma-separated list, shell-style globs and `all`, the same way in interpret / run /
profile / ir / check. Before, only one exact name (or `all`) was taken, and `check --case all` gave every gate
zero cases: correctness "skipped: no case runs under the interpreter", exit 0, nothing checked. `--dtype` takes a
list and the usual short spellings (bf16, fp16, fp32, torch.bfloat16): before, "case 'tiny' has no dtype 'bf16'"."""
import json

import pytest

from conftest import TWICE, run_cli
from tritondbg import loader, selection
from tritondbg.errors import UsageError

pytestmark = pytest.mark.interpreter


@pytest.fixture(scope="module")
def attention():
    return loader.load("attention")  # interpreter mode: tests/conftest.py


def _names(cases):
    return [c.name for c in cases]


def test_a_list_and_globs_pick_cases_once_in_the_order_named(attention):
    got = selection.select_cases(attention, "decode_tiny_gqa*, tiny,decode_tiny_gqa4_single,tiny_c*", interpret=True)
    assert _names(got) == ["decode_tiny_gqa4_single", "tiny", "tiny_causal", "tiny_causal_9heads", "tiny_cross_gqa"]


def test_a_glob_under_the_interpreter_keeps_the_cases_it_can_run(attention):
    got = _names(selection.select_cases(attention, "decode*", interpret=True))
    assert "decode_tiny" in got and "decode_tiny_many_splits" in got
    assert not any(n.startswith("decode_b") for n in got)  # GPU-size cases (interpret=False)
    compiled = _names(selection.select_cases(attention, "decode*", interpret=False))
    assert "decode_b8_h32_kv32k_d128" in compiled and set(got) < set(compiled)


@pytest.mark.parametrize("spec, needle", [
    ("zzz*", "no case of attention matches 'zzz*'"),
    ("prefill_*", "the cases matching 'prefill_*' are GPU-size cases"),
    ("tiny,nope", "unknown case 'nope' for attention"),
    (" , ", "--case is empty"),
])
def test_a_case_list_that_names_nothing_runnable_is_bad_usage(attention, spec, needle):
    with pytest.raises(UsageError) as err:
        selection.select_cases(attention, spec, interpret=True)
    assert needle in str(err.value)


def test_all_in_a_list_is_every_runnable_case(attention):
    assert selection.select_cases(attention, "tiny,all", interpret=True) == \
        [c for c in attention.cases if c.interpret]


def test_case_wanted():
    assert selection.case_wanted(None, "x") and selection.case_wanted("all", "x") and selection.case_wanted("a,x", "x")
    assert selection.case_wanted("tiny*", "tiny_one_block") and not selection.case_wanted("tiny", "tiny_one_block")


def _checked(cli_env, tmp_path, case):
    out = tmp_path / "r.json"
    p = run_cli(["check", "add", "--case", case, "--gates", "correctness", "--device", "cpu", "-n", "1",
                 "--json", str(out)], cli_env, cwd=tmp_path)
    record = json.loads(out.read_text())
    return p, record["extra"]["gates"], sorted({r["case"] for r in record["results"]})


@pytest.mark.parametrize("case", ["all", "tiny*"])
def test_check_runs_the_cases_a_list_or_glob_names(case, cli_env, tmp_path):
    p, gates, cases = _checked(cli_env, tmp_path, case)
    assert [(g["gate"], g["status"]) for g in gates] == [("correctness", "pass")], gates
    assert cases == ["tiny", "tiny_one_block"], cases
    assert p.returncode == 0, p.stderr


def test_a_gpu_size_case_is_taken_where_only_compile_gates_run_it(cli_env, tmp_path):
    """helper-69: `check --gates resources --case big` exited 2 ("a GPU-size case ... under the interpreter choose
    from ...") though the resources gate compiles any case, as its own reason says; a gate that runs the case on
    the CPU still refuses it."""
    out = tmp_path / "r.json"
    p = run_cli(["check", "add", "--case", "h200_64M", "--gates", "resources", "--device", "cpu", "-n", "1",
                 "--json", str(out)], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    (gate,) = json.loads(out.read_text())["extra"]["gates"]
    assert gate["status"] == "pass" and gate["details"]["cases"] == ["h200_64M"], gate
    p = run_cli(["check", "add", "--case", "h200_64M", "--gates", "resources,correctness", "--device", "cpu"],
                cli_env, cwd=tmp_path)
    assert p.returncode == 2 and "is a GPU-size case" in p.stderr, p.stderr


def test_interpret_runs_a_case_list(cli_env, tmp_path):
    p = run_cli(["interpret", "add", "--case", "tiny_one_block,tiny", "--json"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [r["case"] for r in json.loads(p.stdout)["results"]][::3] == ["tiny_one_block", "tiny"]


@pytest.mark.parametrize("given, expected", [
    ("bf16", ["bfloat16"]), ("FP16", ["float16"]), ("torch.float32", ["float32"]),
    ("half,float", ["float16", "float32"]), ("bfloat16, bf16,fp32", ["bfloat16", "float32"]),
])
def test_dtype_spellings_and_lists(given, expected):
    case = loader.load("add").case("tiny")
    assert selection.select_dtypes(case, given) == expected


@pytest.mark.parametrize("given, needle", [("fp8", "'fp8' is not a torch dtype"), (" , ", "--dtype is empty"),
                                           ("bf16,int8", "no dtype 'int8'")])
def test_a_dtype_the_case_does_not_list_is_bad_usage(given, needle):
    with pytest.raises(UsageError) as err:
        selection.select_dtypes(loader.load("add").case("tiny"), given)
    assert needle in str(err.value)


def test_a_dtype_some_selected_cases_lack_runs_on_the_others(capsys):
    """`--case all --dtype fp32` on a scenario with bf16-only cases: it was refused for the first case lacking
    fp32. Now those cases are left out with a note; only a dtype no selected case lists is an error."""
    from tritondbg.scenario import Case

    cases = [Case("tiny", dtypes=("bfloat16", "float32")), Case("odd", dtypes=("bfloat16",)),
             Case("one", dtypes=("bfloat16",))]
    runs = selection.select_runs(cases, "fp32")
    assert [(c.name, dt) for c, dt in runs] == [("tiny", "float32")]
    assert "not run: float32 for odd (it lists bfloat16); float32 for one" in capsys.readouterr().err
    runs = selection.select_runs(cases, "fp32,bf16")
    assert [(c.name, dt) for c, dt in runs] == [("tiny", "float32"), ("tiny", "bfloat16"), ("odd", "bfloat16"),
                                               ("one", "bfloat16")]
    with pytest.raises(UsageError, match="no selected case has dtype 'fp8'"):
        selection.select_runs(cases, "fp8")
    with pytest.raises(UsageError, match="case 'odd' has no dtype 'fp32'"):  # one case named: as before
        selection.select_runs(cases[1:2], "fp32")


def test_ir_takes_a_dtype_or_a_list_of_them(cli_env, tmp_path):
    p = run_cli(["ir", "add", "--dtype", "bf16", "--stage", "ttir"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "dtype=bfloat16" in p.stderr and "tt.func" in p.stdout, p.stderr
    p = run_cli(["ir", "add", "--dtype", "bf16,fp16", "--stage", "ttir"], cli_env, cwd=tmp_path)  # each in turn
    assert p.returncode == 0 and "dtype=bfloat16" in p.stderr and "dtype=float16" in p.stderr, p.stderr
    assert p.stdout.count("tt.func public @add_kernel") == 2, p.stdout[:2000]


def test_a_plugin_case_that_matches_nothing_fails_the_gate(tmp_path):
    """`pytest --tritondbg add --tritondbg-case zzz` (no `tritondbg check` to validate the name first): a FAIL
    naming the cases, never a skip (it said "no case runs under the interpreter", exit 0)."""
    import subprocess
    import sys
    from importlib.metadata import entry_points

    if not any(ep.value.startswith("tritondbg") for ep in entry_points(group="pytest11")):
        pytest.skip("tritondbg is not installed here (no pytest11 entry point): `pip install -e .` registers it")

    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "--rootdir", str(tmp_path),
            "--tritondbg", "add", "--tritondbg-device", "cpu", "--tritondbg-gates", "correctness", "--tritondbg-case"]
    p = subprocess.run(base + ["zzz"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == 1 and "--case 'zzz' matches no case of add; its cases: tiny" in p.stdout, p.stdout
    p = subprocess.run(base + ["h200*"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    # every item skipped: nothing checked, exit 1 as `tritondbg check` (session 48; it was a green 0)
    assert p.returncode == 1 and "every case --case 'h200*' names is interpret=False" in p.stdout, p.stdout
    assert "all 1 gate item(s) that run the kernel were skipped: nothing was checked" in p.stdout, p.stdout


@pytest.mark.parametrize("spec, timed", [(None, ["big_a", "big_b"]), ("all", ["big_a", "big_b"]),
                                         ("big_*", ["big_a", "big_b"]), ("tiny,big_b", ["big_b"])])
def test_the_gpu_perf_gate_times_the_cases_a_list_or_glob_names(spec, timed, monkeypatch, tmp_path):
    """The perf and agreement gates (GPU) filtered by `case in (None, name)` after the other gates stopped: under
    `check --device cuda --case 'big_*'` (or `all`) the perf gate timed nothing and passed ("0 timed")."""
    import dataclasses

    from tritondbg.check import perf
    from tritondbg.check.gates import GateContext
    from tritondbg.scenario import Case

    monkeypatch.setattr(perf, "time_ms", lambda fn, how: fn())
    seen = []
    scenario = dataclasses.replace(
        loader.load("add"), make_inputs=lambda case, dtype, device, gen: {"case": case.name},
        launch=lambda case: seen.append(case) or 1.0, baseline=lambda case: 1.0,
        cases=[Case("tiny", dtypes=("float16",)), Case("big_a", dtypes=("float16",), interpret=False),
               Case("big_b", dtypes=("float16",), interpret=False)])
    ctx = GateContext(device="cuda", case=spec, baseline_file=str(tmp_path / "b.json"), update_baseline=True)
    out = perf.perf_gate(scenario, ctx)
    assert out.status == "pass" and out.reason == f"{len(timed)} timed", out
    assert sorted(set(seen)) == timed


@pytest.mark.parametrize("gate", ["perf", "agreement"])
def test_a_gpu_gate_never_passes_on_zero_cases(gate, tmp_path):
    from tritondbg.check import perf
    from tritondbg.check.gates import GateContext

    run = perf.perf_gate if gate == "perf" else perf.agreement_gate
    ctx = GateContext(device="cuda", case="zzz*", baseline_file=str(tmp_path / "b.json"))
    out = run(loader.load("layernorm"), ctx)
    assert out.status == "FAIL" and "--case 'zzz*' matches no case of layernorm" in out.reason, out
    # a case that exists but is not one this gate runs: a skip that names the cases it would run
    other = "tiny" if gate == "perf" else "h200_4096x1024"
    out = run(loader.load("layernorm"), GateContext(device="cuda", case=other, baseline_file=str(tmp_path / "b.json")))
    assert out.status == "skipped" and f"--case '{other}' names no case this gate" in out.reason, out


def test_a_scenario_with_no_interpreter_case_says_so_instead_of_an_empty_list(attention):
    """'under the interpreter choose from: ' with nothing after it (a helper's scenario of GPU-only cases)."""
    import dataclasses

    gpu_only = dataclasses.replace(attention, cases=[c for c in attention.cases if not c.interpret])
    name = gpu_only.cases[0].name
    with pytest.raises(UsageError) as err:
        selection.select_cases(gpu_only, name, interpret=True)
    assert "has no case that runs under the interpreter" in str(err.value) and not str(err.value).endswith(": ")
    with pytest.raises(UsageError, match="every case is interpret=False"):
        selection.select_cases(gpu_only, None, interpret=True)


def test_ir_takes_a_list_that_names_one_case_and_compiles_each_case_of_one_that_names_more(cli_env, tmp_path):
    """`ir --case all` was refused even for a scenario of one case (the README says lists and `all` work as in
    profile and check); then one naming several was refused listing them (helper-131: the unknown-case error
    offered `all`); now each case is compiled in turn."""
    from pathlib import Path

    shim = Path(__file__).parent / "interp_data" / "shim_cases.py"
    p = run_cli(["ir", f"{shim}::small_dot", "--case", "all", "--stage", "ttir"], cli_env, cwd=tmp_path)
    # k8's tl.dot (K < 16) compiles under the interpreter only: the error names the case
    assert p.returncode == 1 and "error: k8/float16: compiling small_dot_kernel for sm_90 failed" in p.stderr, \
        p.stderr[-2000:]
    # the cases compiled before the one that failed are shown, then its error (they were dropped)
    p = run_cli(["ir", f"{shim}::small_dot", "--case", "k16,k8", "--stage", "ttir"], cli_env, cwd=tmp_path)
    assert p.returncode == 1 and "tt.dot" in p.stdout and "case=k16" in p.stderr, p.stderr[-2000:]
    assert p.stderr.splitlines()[-1].startswith("error: k8/float16: compiling small_dot_kernel"), p.stderr[-2000:]
    p = run_cli(["ir", f"{shim}::small_dot", "--case", "k16,k8", "--json"], cli_env, cwd=tmp_path)
    rows = [(r["case"], r["dtype"], r["status"]) for r in json.loads(p.stdout)]
    assert p.returncode == 1 and rows == [("k16", "float16", "ok"), ("k8", "float16", "error")], rows
    p = run_cli(["ir", f"{shim}::small_dot", "--case", "k1*", "--stage", "ttir"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "tt.dot" in p.stdout, p.stderr[-2000:]


NO_CASES = TWICE + '''mk = lambda case, dtype, device, generator: dict(x=torch.randn(8, generator=generator).to(device))
nocases = Scenario(name="nocases", description="none", make_inputs=mk, launch=launch, reference=lambda x: 2 * x,
                   kernels=[twice], cases=[])
some = Scenario(name="some", description="one", make_inputs=mk, launch=launch, reference=lambda x: 2 * x,
                kernels=[twice], cases=[Case("tiny", dtypes=("float32",))])
'''


def test_a_scenario_with_no_case_says_so_in_one_line(attention, tmp_path, capsys):
    """helper-131: `list FILE::nocases` (cases=[]) crashed with "ValueError: max() arg is an empty sequence", exit 1;
    `interpret` said "every case is interpret=False". Both: the scenario lists no case, exit 2; `list FILE` lists
    the others and names it."""
    import dataclasses

    from tritondbg.commands.catalog import list_kernels

    empty = dataclasses.replace(attention, cases=[])
    for interpret in (True, False):
        for case in (None, "tiny", "all"):
            with pytest.raises(UsageError, match=r"^attention lists no case \(its `cases` is empty\)"):
                selection.select_cases(empty, case, interpret=interpret)
    path = tmp_path / "edge_cases.py"
    path.write_text(NO_CASES)
    assert list_kernels((f"{path}::nocases",)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "error: nocases lists no case (its `cases` is empty): add a Case(...) to run, " \
                                "compile or list it\n", (out, err)
    assert list_kernels((str(path),), as_json=True) == 2
    out, err = capsys.readouterr()
    assert [e["name"] for e in json.loads(out)] == ["some"] and err.count("\n") == 1 and "nocases lists" in err
