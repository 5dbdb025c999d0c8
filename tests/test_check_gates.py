"""`tritondbg check` reports only what ran (issue 15): a worker that dies, a SIGINT, a timeout, a launch that
returns nothing, an in-place kernel, a broken scenario file; and the resources gate without false alarms."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import types
import tomllib
import xml.etree.ElementTree as ET

import pytest

from conftest import REPO, run_cli
from tritondbg import loader
from tritondbg.check.gates import GateContext, run_gate
from tritondbg.check.outcome import ERROR, FAIL, INTERRUPTED, PASS
from tritondbg.record import RunRecord

DATA = REPO / "tests" / "check_data"
ZOO = REPO / "tests" / "zoo"


def _junit(path):
    """{(classname, name): (kind of the first child or 'pass', its message)}"""
    out = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        child = next(iter(tc), None)
        out[(tc.get("classname"), tc.get("name"))] = (child.tag if child is not None else "pass",
                                                      child.get("message", "") if child is not None else "")
    return out


def _gates(path):
    return {(g["kernel"], g["gate"]): g for g in RunRecord.load(path).extra["gates"]}


def test_a_dying_worker_is_an_error_for_its_item_in_table_junit_and_json(cli_env, tmp_path):
    """SIGSEGV and SIGKILL (the OOM killer's) inside a launch: the items stay, as errors with the signal and
    the command that reruns them; the healthy scenario beside them still passes; exit 1."""
    junit, record = tmp_path / "c.xml", tmp_path / "c.json"
    p = run_cli(["check", str(DATA / "crash.py"), "--gates", "correctness", "-n", "2", "--junit", str(junit),
                 "--json", str(record)], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    gates = _gates(record)
    assert set(gates) == {("crash::segv", "correctness"), ("crash::killed", "correctness"),
                          ("crash::fine", "correctness"), ("crash::segv_in_c", "correctness")}
    assert gates[("crash::fine", "correctness")]["status"] == PASS
    segv, killed = gates[("crash::segv", "correctness")], gates[("crash::killed", "correctness")]
    assert segv["status"] == ERROR and "SIGSEGV" in segv["reason"] and "crash.py" in segv["reason"]
    assert killed["status"] == ERROR and "SIGKILL" in killed["reason"]
    assert killed["seconds"] > 0, killed  # the time it ran before it died (helper-85: 0.0 s everywhere)
    assert killed["command"].startswith("tritondbg check ") and "crash.py::killed --gates correctness" in killed["command"]
    xml = _junit(junit)
    assert len(xml) == 4 and xml[("crash::segv", "correctness")][0] == "error"
    assert "SIGKILL" in xml[("crash::killed", "correctness")][1]
    assert "3 error(s)" in p.stdout and "1 passed" in p.stdout
    # the one case that ran passed, but the run did not: the JSON's verdict is the exit status's
    assert json.loads(record.read_text())["passed"] is False and RunRecord.load(record).passed is False


def _check_then_sigint(cli_env, tmp_path, when, sig=signal.SIGINT):
    """Start `tritondbg check`, send SIGINT at ``when`` ("workers": as soon as a worker process exists;
    "running": once the sleeping launch has started), return (process, json, junit)."""
    marker = tmp_path / "started"
    env = dict(cli_env, TRITONDBG_TEST_STARTED=str(marker))
    record, junit = tmp_path / "r.json", tmp_path / "r.xml"
    # a shell's background job starts with SIGINT ignored and Python keeps it so: restore the default
    p = subprocess.Popen([sys.executable, "-m", "tritondbg", "check", f"{DATA / 'hang.py'}::sleeps", "add",
                          "--gates", "correctness,determinism", "--json", str(record), "--junit", str(junit)],
                         env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t0 = time.time()
    while time.time() - t0 < 240 and p.poll() is None:
        if when == "running" and marker.exists():
            break
        if when == "workers" and subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True).stdout.strip():
            break
        time.sleep(0.05)
    p.send_signal(sig)
    p.communicate(timeout=180)
    return p, record, junit


@pytest.mark.parametrize("when", ["workers", "running"])
def test_sigint_exits_130_and_every_unfinished_item_says_interrupted(cli_env, tmp_path, when):
    p, record, junit = _check_then_sigint(cli_env, tmp_path, when)
    assert p.returncode == 130
    gates = _gates(record)
    assert set(gates) == {(k, g) for k in ("hang::sleeps", "add") for g in ("correctness", "determinism")}
    assert gates[("hang::sleeps", "correctness")]["status"] == INTERRUPTED
    assert all(g["status"] in (INTERRUPTED, PASS) for g in gates.values())
    assert RunRecord.load(record).extra["interrupted"] is True
    assert json.loads(record.read_text())["passed"] is False  # an interrupted check is never a pass
    xml = _junit(junit)
    assert len(xml) == 4 and "interrupted" in xml[("hang::sleeps", "correctness")][1]


def test_sigterm_winds_down_as_sigint_and_exits_143(cli_env, tmp_path):
    """SIGTERM (a CI runner's or Kubernetes' cancel) to tritondbg alone: the same wind-down as Ctrl-C, the files
    written, the unfinished items "interrupted (SIGTERM)", exit 128 + 15 (it ended at once: no table, no --json,
    no --junit, the workers left running; ``_prompt_shutdown`` now ends them as it does on SIGINT)."""
    p, record, junit = _check_then_sigint(cli_env, tmp_path, "running", signal.SIGTERM)
    assert p.returncode == 143, p.stderr[-2000:]
    gates = _gates(record)
    assert gates[("hang::sleeps", "correctness")]["status"] == INTERRUPTED
    assert "SIGTERM" in gates[("hang::sleeps", "correctness")]["reason"]
    assert RunRecord.load(record).extra["interrupted_by"] == "SIGTERM" and len(_junit(junit)) == 4


def test_a_bare_assert_in_a_library_is_quoted_with_why_a_jit_type_check_fails(tmp_path, monkeypatch):
    """helper-62 (triton_kernels' ``specialize`` asserts a JITFunction): the run said ``AssertionError:  (raised at
    specialize.py:82)``, no words; now the statement, and why the interpreter's @triton.jit fails it."""
    import importlib

    from tritondbg.runner import kernel_error_message

    (tmp_path / "speclib.py").write_text("import triton\n\n\ndef specialize(fn):\n"
                                         "    assert isinstance(fn, triton.runtime.jit.JITFunction)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    speclib = importlib.import_module("speclib")
    try:
        speclib.specialize(object())
    except AssertionError as e:
        exc = e
    scenario = types.SimpleNamespace(source=None)
    text = kernel_error_message(exc, scenario)
    assert "`assert isinstance(fn, triton.runtime.jit.JITFunction)`" in text, text
    assert "gives an InterpretedFunction" in text, text


@pytest.mark.interpreter
@pytest.mark.parametrize("name, words", [
    ("no_return", ["launch returned None", "forget `return`"]),
    ("ref_str", ["reference `reference_str`", "mistakes.py:", "returned str, not a tensor"]),
    ("ref_no_return", ["reference `reference_no_return`", "returned None", "forget `return`"]),
    ("ref_assert", ["reference `reference_asserts`", "raised AssertionError: `assert x.numel() % 64 == 0`"]),
    ("tuple_none", ["output out1: launch", "returned None where the other side has a tensor", "forget `return`"]),
    ("bad_inputs", ["make_inputs `make_inputs_raises`", "mistakes.py:", "ValueError: bad shape parameter"]),
    ("inputs_list", ["make_inputs `make_inputs_list`", "returned list, not a dict"]),  # it blamed the reference
])
def test_a_run_that_compared_nothing_fails_naming_the_callable(name, words):
    target = f"{DATA / 'mistakes.py'}::{name}"
    # determinism compares two launches, not a launch with the reference: a bad reference is no failure of it
    reference_only = ("ref_str", "ref_no_return", "ref_assert", "tuple_none")
    for gate in ("correctness", "sanitize") + (() if name in reference_only else ("determinism",)):
        out = run_gate(gate, loader.load(target), GateContext(device="cpu", target=target))
        assert out.status == FAIL, (gate, out.reason)
        for w in words:
            assert w in out.reason, (gate, w, out.reason)


@pytest.mark.interpreter
def test_dict_outputs_are_matched_by_key_and_none_on_both_sides_is_skipped():
    """Outputs returned as dicts were compared by position (a user's report): a right kernel listing its outputs
    in another order than the reference failed, one whose outputs are swapped passed, other keys passed. An
    optional output that is None on both sides (Liger's ``(loss, None)``) was an error."""
    def gate(name, which="correctness"):
        target = f"{DATA / 'mistakes.py'}::{name}"
        return run_gate(which, loader.load(target), GateContext(device="cpu", target=target))

    for which in ("correctness", "sanitize"):
        assert gate("dict_reordered", which).status == PASS, gate("dict_reordered", which).reason
        assert gate("none_both", which).status == PASS, gate("none_both", which).reason
    out = gate("dict_swapped")
    assert out.status == FAIL and "elements of y outside" in out.reason, out.reason
    out = gate("dict_keys")
    assert out.status == FAIL and "differ in keys: missing 'y'; not in the reference 'out'" in out.reason, out.reason


@pytest.mark.interpreter
def test_determinism_runs_every_dtype_of_a_case():
    """A case listing float32 then bfloat16, non-deterministic in bfloat16 only: the gate ran the first dtype."""
    target = f"{DATA / 'mistakes.py'}::jitter_bf16"
    out = run_gate("determinism", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == FAIL and out.reason.startswith("tiny/bfloat16 output 0:"), out.reason
    assert {r.dtype for r in out.results} == {"float32", "bfloat16"}


@pytest.mark.interpreter
def test_determinism_does_not_blame_program_order_for_elements_nothing_wrote():
    """helpers 45 and 46: a store mask one column short left torch.empty's memory in the output, which differed
    between the two runs: "more than rounding: a program depends on what another writes". The runs now mark that
    memory (the same in both); the gate passes on what the kernel wrote and names the unwritten elements."""
    zoo = REPO / "tests" / "zoo" / "unwritten_tail.py"
    target = f"{zoo}::buggy"
    out = run_gate("determinism", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == PASS, out.reason
    assert "element(s) no program wrote" in out.reason and ": 40 of 1000" in out.reason, out.reason
    twin = f"{zoo}::twin"
    clean = run_gate("determinism", loader.load(twin), GateContext(device="cpu", target=twin))
    assert clean.status == PASS and "no program wrote" not in clean.reason, clean.reason


@pytest.mark.interpreter
def test_the_sanitize_gate_names_the_warnings_it_passes_with(tmp_path):
    """Every program storing 1 to one flag: a warning, no error. The gate passes and says so ("no finding" alone
    hid the warning `interpret` prints)."""
    (tmp_path / "flag.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        @triton.jit
        def k(x_ptr, o_ptr, flag_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
            tl.store(flag_ptr, 1)

        def launch(x):
            o, f = torch.empty_like(x), torch.zeros(1, dtype=torch.int32)
            k[(triton.cdiv(x.numel(), 128),)](x, o, f, x.numel(), BLOCK=128)
            return o

        flag = Scenario("flag", lambda case, dtype, device, generator: dict(x=torch.randn(300)), launch,
                        lambda x: x * 2, [Case("tiny", dtypes=("float32",))], kernels=[k])
    '''))
    target = str(tmp_path / "flag.py")
    out = run_gate("sanitize", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == PASS and "(1 warning(s); first: race at" in out.reason and "flag.py:9)" in out.reason, \
        out.reason
    out = run_gate("sanitize", loader.load(target), GateContext(device="cpu", target=target, strict=True))
    assert out.status == FAIL and out.reason.startswith("1 warning(s) (--strict); first: race at"), out.reason
    assert "flag.py:9: " in out.reason, out.reason


def test_check_strict_fails_on_a_warning_from_the_command_line(cli_env, tmp_path):
    """`check --strict` (as `interpret --strict`): a reproducer whose launch left a band of its output unwritten
    passed `check` with a warning; --strict fails it, exit 1, in the table and in --json."""
    target = f"{REPO / 'tests' / 'interp_data' / 'lane_collisions.py'}::hist"
    p = run_cli(["check", target, "--gates", "sanitize", "-n", "1"], env=cli_env)
    assert p.returncode == 0, p.stdout + p.stderr
    p = run_cli(["check", target, "--gates", "sanitize", "-n", "1", "--strict", "--json", str(tmp_path / "r.json")],
                env=cli_env)
    assert p.returncode == 1, p.stdout + p.stderr
    [gate] = json.loads((tmp_path / "r.json").read_text())["extra"]["gates"]
    assert gate["status"] == FAIL and "(--strict); first: race at" in gate["reason"], gate


@pytest.mark.interpreter
def test_a_gate_that_checked_nothing_is_never_a_pass():
    """A scenario whose case list is empty fails every gate (a mistake in the file, not a skip CI goes green on);
    an autotuned kernel whose every config refuses itself (tl.static_assert) fails all-configs: no config ran."""
    target = f"{DATA / 'mistakes.py'}::no_cases"
    for gate in ("correctness", "determinism", "sanitize"):  # (all-configs: skipped, add_one is not autotuned)
        out = run_gate(gate, loader.load(target), GateContext(device="cpu", target=target))
        assert out.status == FAIL and "lists no case" in out.reason, (gate, out.status, out.reason)
    target = f"{DATA / 'mistakes.py'}::all_refused"
    out = run_gate("all-configs", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == FAIL and "no config ran: 2 not applicable" in out.reason, out.reason


@pytest.mark.interpreter
@pytest.mark.parametrize("gate", ["correctness", "sanitize", "determinism"])
def test_a_kernel_error_in_a_gate_names_the_kernel_line_and_pid(gate):
    """An exception inside the kernel: the gate's reason names the kernel line and pid, as `interpret` does (it
    named the launch wrapper's line that called the kernel)."""
    cases = REPO / "tests" / "interp_data" / "shim_cases.py"
    line = next(i for i, ln in enumerate(cases.read_text().splitlines(), 1) if "# MARK: kernel_error" in ln)
    target = f"{cases}::kernel_error"
    out = run_gate(gate, loader.load(target), GateContext(device="cpu", target=target))
    if gate == "determinism" and out.status == "skipped":
        pytest.skip(out.reason)
    assert out.status == FAIL and f"shim_cases.py:{line}" in out.reason and "ValueError" in out.reason, out.reason
    if gate == "correctness":
        assert f"shim_cases.py:{line}: pid (0, 0, 0): ValueError" in out.reason, out.reason
        assert out.reason.count("ValueError") == 1, out.reason  # the message and its finding: said once


def test_case_option_on_a_file_of_scenarios_runs_those_that_have_it():
    """`check FILE --case odd`: the scenarios of FILE that have the case (it was an unknown-case error for the first
    scenario without it); a case no scenario has is one usage line naming the cases there are."""
    from tritondbg.check import session
    from tritondbg.errors import UsageError

    target = str(DATA / "two_scenarios.py")
    items = session.plan([target], ["correctness"], device="cpu", case="odd")
    assert [it.label for it in items] == ["two_scenarios::both"]
    assert len(session.plan([target], ["correctness"], device="cpu", case="tiny")) == 2
    with pytest.raises(UsageError, match="no scenario in .* has a case 'huge'; its cases: odd, tiny"):
        session.plan([target], ["correctness"], device="cpu", case="huge")


def test_a_crash_names_the_case_and_the_users_line_not_pythons_library(cli_env, tmp_path):
    record = tmp_path / "c.json"
    p = run_cli(["check", f"{DATA / 'crash.py'}::segv_in_c", "--gates", "correctness", "--json", str(record)],
                cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    reason = _gates(record)[("crash::segv_in_c", "correctness")]["reason"]
    line = next(i for i, ln in enumerate((DATA / "crash.py").read_text().splitlines(), 1) if "# CRASH" in ln)
    assert "SIGSEGV" in reason and "in segv_in_c case second/float32" in reason, reason
    assert f'crash.py", line {line} in launch_reads_address_zero' in reason and "__init__.py" not in reason, reason


def test_interpret_says_where_a_crashing_launch_died(cli_env):
    """A launch wrapper that segfaults the process (interpret runs in-process): Python's fatal-error stack names
    the wrapper's line (it ended with no word at all); the exit status is the signal's."""
    p = run_cli(["interpret", f"{DATA / 'crash.py'}::segv"], cli_env)
    assert p.returncode != 0 and "Segmentation fault" in p.stderr, p.stderr[-2000:]
    assert f'File "{DATA / "crash.py"}", line' in p.stderr and "launch_and_die" in p.stderr, p.stderr[-2000:]


def test_interpret_keeps_the_cases_that_finished_before_a_crash(cli_env, tmp_path):
    """`interpret --case all` on a scenario whose second case segfaults in-process: the record of the first case
    was lost (saved only at the end); it is saved after each case, marked incomplete, and is not a pass."""
    p = run_cli(["interpret", f"{DATA / 'crash.py'}::segv_in_c", "--case", "all"], cli_env)
    assert p.returncode == -11 or p.returncode == 139, (p.returncode, p.stderr[-2000:])
    (path,) = (tmp_path / "traces").rglob("record.json")
    record = RunRecord.load(path)
    assert [(r.case, r.status) for r in record.results] == [("tiny", "pass")]
    assert "1 of 2 case(s) finished" in record.extra["incomplete"] and not record.passed


@pytest.mark.parametrize("command", ["interpret", "ir"])
def test_a_missing_constexpr_names_the_launch_line(command, cli_env):
    """A launch wrapper (in a module the scenario imports) that forgets a constexpr: interpret printed the
    TypeError with no line; ir said "compiling K for cuda:90 failed: ... dynamic_func() missing ..."."""
    wrapper = DATA / "_wrappers.py"
    line = next(i for i, ln in enumerate(wrapper.read_text().splitlines(), 1) if "# MISSING" in ln)
    p = run_cli([command, f"{DATA / 'missing_constexpr.py'}::missing"], cli_env)
    text = p.stdout + p.stderr
    assert p.returncode != 0 and f"{wrapper}:{line}" in text, text[-2000:]
    assert "needs_block() missing 1 required positional argument: 'BLOCK'" in text, text[-2000:]
    assert "dynamic_func" not in text and "Traceback" not in text, text[-2000:]


def test_interpret_fails_a_launch_that_returns_none(cli_env):
    p = run_cli(["interpret", f"{DATA / 'mistakes.py'}::no_return"], cli_env)
    assert p.returncode == 1 and "launch returned None" in p.stdout and "Traceback" not in p.stderr


@pytest.mark.interpreter
def test_each_callable_gets_its_own_inputs():
    """A reference that changes its inputs in place does not change the launch's; torch's baseline of the
    three-way check sees the inputs from before an in-place kernel ran (so a 0.4% error is caught)."""
    target = f"{DATA / 'mistakes.py'}::ref_in_place"
    assert run_gate("correctness", loader.load(target), GateContext(device="cpu", target=target)).status == PASS
    target = f"{DATA / 'in_place.py'}::in_place"
    out = run_gate("correctness", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == FAIL and "three_way" in out.reason, out.reason
    rows = out.results[0].extra["three_way"]
    assert rows[0]["torch_err"] < 0.01 < rows[0]["kernel_err"]


def test_interpret_timeout_names_kernel_case_pid_and_line(cli_env):
    p = run_cli(["interpret", f"{DATA / 'hang.py'}::loop", "--timeout", "3"], cli_env)
    # (once in CI, under load, this run ended 1 with an empty stderr: the message keeps what it printed)
    assert p.returncode == 124, (p.returncode, p.stdout[-3000:], p.stderr[-2000:])
    line = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert len(line) == 1 and "Traceback" not in p.stderr, p.stderr
    lines = (DATA / "hang.py").read_text().splitlines()
    loop_lines = [i for i, ln in enumerate(lines, 1) if "while i < n" in ln or "x = x + 0.0" in ln]
    assert any(f"hang.py:{n} (in spin)" in line[0] for n in loop_lines), line[0]
    for w in ("timed out after 3 s", "loop case tiny/float32", "pid (0, 0, 0)"):
        assert w in line[0], (w, line[0])


def test_check_timeout_is_an_error_per_item_and_the_run_moves_on(cli_env, tmp_path):
    """A kernel looping in Python (interpreter) ends at the deadline; one stuck where no Python runs ends its
    worker (a new one takes the next item); the healthy item after them still runs. (8 s: with 3 it failed now and
    then on two loaded cores.)"""
    record = tmp_path / "r.json"
    p = run_cli(["check", f"{DATA / 'hang.py'}::loop", f"{DATA / 'hang.py'}::deaf", f"{DATA / 'crash.py'}::fine",
                 "--gates", "correctness", "-n", "1", "--timeout", "8", "--device", "cpu", "--json", str(record)],
                cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    gates = _gates(record)
    loop, deaf = gates[("hang::loop", "correctness")], gates[("hang::deaf", "correctness")]
    assert loop["status"] == ERROR and "timed out after 8 s" in loop["reason"] and "pid (0, 0, 0)" in loop["reason"], loop
    assert "hang.py:" in loop["reason"] and "--timeout 8" in loop["command"]
    assert deaf["status"] == ERROR and "did not come back to Python" in deaf["reason"]
    assert gates[("crash::fine", "correctness")]["status"] == PASS


def test_check_needs_only_the_runtime_dependencies():
    """Everything `check` imports (its modules, the pytest plugin) is the standard library, tritondbg, or a
    runtime dependency in pyproject (after `pip install torch==2.13.0 .`, no test extras, check works)."""
    import ast
    import importlib.metadata as md
    import re

    deps = {re.split(r"[<>=!~\[ ;]", d)[0].lower().replace("_", "-")
            for d in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]}
    dists = md.packages_distributions()
    files = [*(REPO / "tritondbg" / "check").glob("*.py"), REPO / "tritondbg" / "pytest_plugin.py",
             REPO / "tritondbg" / "commands" / "check.py", REPO / "tritondbg" / "deps.py",
             REPO / "tritondbg" / "watchdog.py"]
    missing = set()
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top == "tritondbg":
                    continue
                if not {d.lower().replace("_", "-") for d in dists.get(top, [top])} & deps:
                    missing.add((f.name, top))
    assert not missing, f"imported at run time but not a dependency: {sorted(missing)}"


def test_a_missing_package_says_the_pip_line(cli_env):
    code = "import sys; sys.modules['xdist'] = None; from tritondbg.cli import main; main()"
    p = subprocess.run([sys.executable, "-c", code, "check", "add", "--gates", "correctness"], env=cli_env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "pip install pytest-xdist" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_check_file_with_several_scenarios_runs_them_all_and_takes_case(cli_env, tmp_path):
    record = tmp_path / "r.json"
    p = run_cli(["check", str(ZOO / "missing_mask.py"), "--gates", "sanitize", "--case", "tiny", "-n", "1",
                 "--json", str(record)], cli_env, cwd=tmp_path)
    gates = _gates(record)
    assert gates[("missing_mask::buggy", "sanitize")]["status"] == FAIL
    assert gates[("missing_mask::twin", "sanitize")]["status"] == PASS
    assert p.returncode == 1


@pytest.mark.parametrize("args, needle", [
    (["check", "add", "-n", "-3"], "-n/--workers must be at least 1"),
    (["check", "add", "--case", "nope"], "unknown case 'nope'"),
    (["check", "add", "--timeout", "-1"], "--timeout"),
])
def test_check_bad_usage_is_one_line(args, needle, cli_env):
    p = run_cli(args, cli_env)
    assert p.returncode == 2 and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_check_scenario_with_syntax_error_is_one_line(cli_env, tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("from tritondbg import Scenario\n\ndef launch(x):\n    return x +\n")
    p = run_cli(["check", str(bad)], cli_env, cwd=tmp_path)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "broken.py:4: SyntaxError" in p.stderr


def _row(kernel="k", config=None, spills=0, shared=1024, limit=232448, kept=True, autotuned=True, case="c"):
    return {"kernel": kernel, "case": case, "dtype": "float16", "arch": "sm_90", "config": config or {},
            "n_spills": spills, "shared": shared, "shared_limit": limit, "n_regs": 128, "kept_by_pruning": kept,
            "config_source": "--all-configs: config 1 of 3" if autotuned else "Triton's defaults (not autotuned)"}


def test_resources_judge_without_false_alarms():
    from tritondbg.check.resources import judge

    limits = {"max_spills": 0, "max_shared": None, "max_regs": None}
    big = _row(config={"BLOCK": 256}, shared=300000)        # the autotuner skips it (OutOfResources)
    pruned = _row(config={"BLOCK": 512}, kept=False, spills=40)
    spills = _row(config={"BLOCK": 128}, spills=134)
    fine = _row(config={"BLOCK": 64})
    out = judge("k", [big, pruned, spills, fine], limits)
    assert out.status == PASS, out.reason
    assert "not applicable" in out.reason and "spill but need not be picked" in out.reason
    assert len(out.details["not_applicable"]) == 2 and "OutOfResources" in out.details["not_applicable"][0]["reason"]
    # every config that can run spills; the recorded one spills; Scenario.limits asks; a fixed launch spills
    assert judge("k", [big, spills], limits).status == FAIL
    picked = {("c", "float16", "k"): {"BLOCK": 128}}
    assert "recorded config" in judge("k", [spills, fine], limits, picked=picked).reason
    assert judge("k", [spills, fine], limits, explicit={"max_spills": 0}).status == FAIL
    assert judge("k", [_row(spills=3, autotuned=False)], limits).status == FAIL
    # nothing can run: every config over the shared limit; a fixed launch over it
    assert "none of its" in judge("k", [big], limits).reason
    assert "cannot run" in judge("k", [_row(shared=300000, autotuned=False)], limits).reason


def test_a_reproducers_spills_are_told_not_failed(monkeypatch):
    """helper-100: Cut Cross-Entropy's own default config (8 spills, 32 B) failed `check` on its reproducer. A
    reproducer is the program's kernel as it ran: the resources gate fails it where it cannot run (shared memory),
    and tells its spills; a scenario of the user's own still fails on a spill."""
    from types import SimpleNamespace

    from tritondbg.check import resources_gate
    from tritondbg.check.gates import GateContext

    row = dict(_row(spills=8, autotuned=False), local_bytes=32)
    monkeypatch.setattr(resources_gate, "_compile_rows",
                        lambda *a: ([dict(row)], {"captured": 1.0}, [("captured", "float32", True)], None))
    monkeypatch.setattr(resources_gate, "_resource_pairs",
                        lambda scenario, ctx: ([(SimpleNamespace(name="captured"), "float32")], [], []))
    monkeypatch.setattr(resources_gate, "_kernel_names", lambda scenario: {"k"})
    monkeypatch.setattr(resources_gate, "_recorded_picks", lambda scenario, ctx: {})
    for captured in (True, False):
        scenario = SimpleNamespace(name="k_0", cases=[], limits=None, reference_is_capture=captured)
        out = resources_gate.resources(scenario, GateContext(device="cpu"))
        if captured:
            assert out.status == PASS and "1 with register spills, not gated for a reproducer" in out.reason, out.reason
            assert "8 spill(s), 32 B of local memory" in out.reason, out.reason
        else:
            assert out.status == FAIL and "8 register spill(s)" in out.reason, out.reason


def test_resources_compiles_every_code_path_of_a_wrapper():
    """The wrapper launches `wide_rows` only for the second case; it spills and must be found."""
    target = f"{DATA / 'two_paths.py'}::two_paths"
    out = run_gate("resources", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == FAIL and "wide_rows" in out.reason and "spill" in out.reason, out.reason
    assert out.details["cases"] == ["short", "wide"]
    assert all(isinstance(out.details["case_seconds"][c], float) for c in ("short", "wide"))


def test_resources_lists_a_pruned_config_without_compiling_it(tmp_path, monkeypatch):
    """A config the kernel's own pruning removes never runs: not applicable, and not worth a compile."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    target = f"{DATA / 'pruned.py'}::pruned"
    out = run_gate("resources", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == PASS, out.reason
    na = out.details["not_applicable"]
    assert [r["config"].get("BLOCK") for r in na] == [1024] and "prune_configs_by" in na[0]["reason"]
    assert sorted(r["config"].get("BLOCK") for r in out.details["rows"]) == [64, 128]
    assert len(list(cache.glob("*/scale_kernel.json"))) == 2   # the two configs that can run, compiled once each


def test_resources_compiles_from_a_folder_that_holds_a_folder_named_tritondbg(tmp_path, monkeypatch):
    """helpers 68-70 ran `check --gates resources` from the folder holding their clone (`./tritondbg`): the
    gate's subprocess, `python -m ...`, put the working directory first on sys.path and imported that folder as
    a namespace package over the (editable) install: "cannot import name '__version__' from 'tritondbg'"."""
    (tmp_path / "tritondbg").mkdir()  # (here a package that fails: what shadows the install, whichever kind)
    (tmp_path / "tritondbg" / "__init__.py").write_text("raise ImportError('the folder in the working directory')\n")
    monkeypatch.chdir(tmp_path)
    target = f"{DATA / 'two_paths.py'}::two_paths"
    out = run_gate("resources", loader.load(target), GateContext(device="cpu", target=target))
    assert "could not compile" not in out.reason and "__version__" not in out.reason, out.reason
    assert out.details["cases"] == ["short", "wide"], out.reason


def test_resources_names_the_case_and_line_of_a_failed_compile():
    target = f"{DATA / 'no_compile.py'}::no_compile"
    out = run_gate("resources", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == FAIL and out.reason.startswith("could not compile case tiny: compiling neg_block"), out.reason
    assert "no_compile.py:12: BLOCK must be negative" in out.reason and "\n" not in out.reason


def _run_watched(args, env, cwd, limit, say):
    """`tritondbg ARGS` in its own process group, killed with its children after ``limit`` seconds (a failure that
    names the command and shows its last output, never a silent hang); ``say`` reports each step at once."""
    say(f"$ tritondbg {' '.join(map(str, args))}   (limit {limit} s)")
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "tritondbg", *map(str, args)], env=env, cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # stuck in the driver even after SIGKILL: report what is known
            out, err = "", "(no output: the process did not end 30 s after SIGKILL)"
        say(f"still running after {limit} s: killed")
        pytest.fail(f"`tritondbg {' '.join(map(str, args))}` still running after {limit} s (its own --timeout did "
                    f"not end it); last output:\n{(out or '')[-1500:]}\n{(err or '')[-2500:]}", pytrace=False)
    tail = (err.strip().splitlines() or ["(no stderr)"])[-1][:300]
    say(f"exit {proc.returncode} after {time.monotonic() - t0:.0f} s; last stderr line: {tail}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.gpu
def test_a_kernel_spinning_on_the_gpu_ends_at_the_timeout(cli_env, tmp_path, capsys):
    """Compiled, the main thread waits in C for the spinning kernel: the watchdog ends the process (run) or
    the worker (check, which goes on and still reports the item). Each step has its own limit (both together
    well under 10 minutes) and says what it runs as it goes (shown live, past pytest's capture)."""
    def say(text):
        with capsys.disabled():
            print(f"[spinning {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)

    p = _run_watched(["run", f"{DATA / 'hang.py'}::loop", "--timeout", "20"], cli_env, tmp_path, 150, say)
    assert p.returncode == 124 and "loop case tiny/float32" in p.stderr, p.stderr[-3000:]
    record = tmp_path / "r.json"
    p = _run_watched(["check", f"{DATA / 'hang.py'}::loop", f"{DATA / 'crash.py'}::fine", "--gates", "correctness",
                      "--device", "cuda", "--timeout", "20", "--json", record], cli_env, tmp_path, 270, say)
    gates = _gates(record)
    say("check items: " + ", ".join(f"{k}/{g}: {v['status']} ({v['reason'][:120]})" for (k, g), v in gates.items()))
    assert p.returncode == 1 and gates[("hang::loop", "correctness")]["status"] == ERROR, (p.stdout + p.stderr)[-3000:]
    assert "timed out after 20 s" in gates[("hang::loop", "correctness")]["reason"]
    assert gates[("crash::fine", "correctness")]["status"] == PASS


def test_a_scenario_file_that_does_not_import_is_one_usage_line(tmp_path):
    from tritondbg.check import session
    from tritondbg.errors import UsageError

    raises, missing = tmp_path / "raises.py", tmp_path / "missing.py"
    raises.write_text("import os\n\nraise TypeError('boom')\nfrom tritondbg import Scenario\n")
    missing.write_text("import not_a_real_pkg_xyz\nfrom tritondbg import Scenario\n")
    with pytest.raises(UsageError, match=r"raises.py:3: TypeError: boom"):
        session.plan([str(raises)], ["correctness"], device="cpu")
    with pytest.raises(UsageError, match=r"No module named 'not_a_real_pkg_xyz' \(pip install not-a-real-pkg-xyz\)"):
        session.plan([str(missing)], ["correctness"], device="cpu")


def test_a_main_thread_holding_the_gil_in_c_still_ends(tmp_path):
    """Stage 3 of tritondbg/watchdog.py: a C call that holds the GIL (ctypes.PyDLL keeps it) blocks both the
    SIGALRM handler and the watchdog thread; faulthandler's C thread still ends the process, with the stacks."""
    import subprocess
    import sys
    import time

    # SIGALRM blocked: a C wait that a signal does not interrupt (as a CUDA sync spinning on a hung kernel)
    code = ("import ctypes, signal\nfrom tritondbg import watchdog\nwatchdog.BACKSTOP = 2\n"
            "with watchdog.deadline(1, grace=1):\n    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
            "    ctypes.PyDLL(None).sleep(60)\nprint('finished')\n")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50)
    assert time.monotonic() - t0 < 30, "the backstop did not end the process"
    assert p.returncode != 0 and "finished" not in p.stdout
    assert "Timeout" in p.stderr and "Thread" in p.stderr, p.stderr[-2000:]


@pytest.mark.interpreter
def test_all_configs_sweeps_autotuned_kernels_the_scenario_does_not_list():
    """A launch running autotuned kernels that `kernels=` does not list (fla's chunk_simple_gla): the gate finds
    them as `interpret` does and sweeps them (it was skipped, "no autotuned kernel"), with the verdict of the twin
    scenario that lists them: copy_tuned's BLOCK=128 config is wrong (its 79 programs step by 64: 4880 elements
    never written)."""
    outs = {}
    for name in ("unlisted", "listed"):
        target = f"{DATA / 'unlisted.py'}::{name}"
        outs[name] = run_gate("all-configs", loader.load(target), GateContext(device="cpu", target=target))
    out = outs["unlisted"]
    assert out.status == FAIL and "copy_tuned BLOCK=128" in out.reason and "4880/10000 elements" in out.reason, \
        out.reason
    assert (out.status, out.reason) == (outs["listed"].status, outs["listed"].reason)
    swept = {(r.extra["sweep"]["kernel"], str(r.extra["sweep"]["config"])) for r in out.results}
    assert {k for k, _ in swept} == {"rownorm_tuned", "copy_tuned"} and len(swept) == 4, swept


def test_resources_judges_autotuned_kernels_the_scenario_does_not_list():
    """rownorm_tuned, autotuned but not listed in `kernels=`, spills with num_warps=1 only: a config the
    autotuner need not pick, as for a listed kernel (it was a FAIL: its rows were judged as a fixed launch)."""
    target = f"{DATA / 'unlisted.py'}::unlisted"
    out = run_gate("resources", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == PASS and "1 config(s) spill but need not be picked" in out.reason, out.reason
    assert "rownorm_tuned [num_warps=1" in out.reason, out.reason
    assert sorted((r["kernel"], str(r["config"])) for r in out.details["rows"]) == sorted(
        [("rownorm_tuned", str({"num_warps": w, "num_stages": 3})) for w in (1, 16)]
        + [("copy_tuned", str({"BLOCK": b, "num_warps": 1, "num_stages": 3})) for b in (64, 128)])


def test_the_sanitize_gate_reason_counts_the_findings_after_the_first(tmp_path):
    """helper-48: the reason named the first finding only (a nan_inf in case m1); 6 out-of-bounds findings of
    another case were in --json alone."""
    (tmp_path / "two.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        @triton.jit
        def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            tl.store(y_ptr + offs, x * 2)

        def launch(x):
            y = torch.empty_like(x)
            k[(1,)](x, y, x.numel(), BLOCK=16)
            return y

        two = Scenario("two", lambda case, dtype, device, generator: dict(x=torch.randn(case.params["n"])), launch,
                       lambda x: 2 * x, [Case("a", params=dict(n=10), dtypes=("float32",)),
                                         Case("b", params=dict(n=12), dtypes=("float32",))], kernels=[k])
    '''))
    target = str(tmp_path / "two.py")
    out = run_gate("sanitize", loader.load(target), GateContext(device="cpu", target=target))
    n = len(out.details["findings"])
    assert out.status == FAIL and n == 4, (out.status, [(f["kind"], f["line"]) for f in out.details["findings"]])
    assert out.reason.startswith("out_of_bounds at ") and "(a/float32)" in out.reason, out.reason
    assert "[+3 more: out_of_bounds at two.py:9 (a, b); out_of_bounds at two.py:8 (b)]" in out.reason or \
        "[+3 more: out_of_bounds at two.py:8 (b); out_of_bounds at two.py:9 (a, b)]" in out.reason, out.reason


NOISY = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario

print("[WARNING] a library's logger, on stdout at import")
print("{not json either")


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2.0, mask=o < n)


def launch(x):
    y = torch.empty_like(x)
    scale[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


noisy = Scenario("noisy", lambda case, dtype, device, generator: dict(x=torch.rand(100, generator=generator)),
                 launch, lambda x: x * 2, [Case("tiny", dtypes=("float32",))], kernels=[scale])
'''


def test_gates_read_their_subprocess_record_past_what_the_scenario_printed(cli_env, tmp_path):
    """helper-64 (DeepSpeed's logger writes to stdout at import): the resources and sanitize gates parsed their
    subprocess's whole stdout as JSON and failed ("could not compile: <the last stderr line>") a right kernel."""
    (tmp_path / "noisy.py").write_text(NOISY)
    record = tmp_path / "r.json"
    p = run_cli(["check", str(tmp_path / "noisy.py"), "--gates", "sanitize,resources", "-n", "1", "--json",
                 str(record)], cli_env, cwd=tmp_path)
    gates = _gates(record)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert {g: v["status"] for (_, g), v in gates.items()} == {"sanitize": PASS, "resources": PASS}, gates


def test_determinism_calls_fp16_atomics_rounding_at_the_outputs_scale():
    """helper-83: a split-K gemm adding fp16 partials with tl.atomic_add differed between the two runs by 0.00195
    ("2 relative": a sum near zero) and the gate said "more than rounding: a program depends on what another
    writes". Rounding-size is judged at the output dtype's step and the output's scale too."""
    import torch

    from tritondbg.check.gates import _order_cause

    x = torch.full((8,), 30.0, dtype=torch.float16)
    assert _order_cause(2.0, 0.00195, x).startswith("float atomics"), _order_cause(2.0, 0.00195, x)
    assert _order_cause(2.0, 0.00195, x.float()).startswith("more than rounding")  # ~550 fp32 steps: no
    assert _order_cause(2.0, 5.0, x).startswith("more than rounding")  # far past rounding in fp16 too
    assert _order_cause(1e-4).startswith("float atomics")  # the per-element rule stands


@pytest.mark.interpreter
def test_the_resources_gate_fails_a_listed_kernel_no_case_compiled():
    """helper-84: unsloth's gemma rms_norm kernel, listed in the scenario, launched by its 5th case only; the gate
    tried 3 extra cases, passed, and said in its JSON only that the kernel was never launched. It tries more cases
    now, and a listed kernel none of them compiled fails the gate, named."""
    target = f"{DATA / 'mistakes.py'}::unlaunched"
    out = run_gate("resources", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == FAIL, out.reason
    assert out.reason.startswith("listed_but_never_launched never compiled: no case tried (tiny)"), out.reason
    assert out.details["never_launched"] == ["listed_but_never_launched"]


@pytest.mark.interpreter
def test_the_resources_gate_is_an_error_when_its_compiling_process_ends_early():
    """helper-85: a launch calling os._exit(3) made the resources gate "FAIL could not compile: no output": no
    verdict was reached, and nothing said why. It is an error naming the exit and the rerun command."""
    target = f"{DATA / 'mistakes.py'}::exits"
    out = run_gate("resources", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == "error", (out.status, out.reason)
    assert "the compiling subprocess exited with status 3 before it reported" in out.reason, out.reason
    assert f"rerun: tritondbg ir {target} --stats" in out.reason, out.reason


@pytest.mark.interpreter
def test_all_configs_leaves_out_a_config_the_target_cannot_launch(monkeypatch):
    """helper-108: GPTQModel's transpose kernel read out of bounds in one config only, whose compile for sm_90 needs
    278528 B of shared memory (the autotuner skips it on any GPU, as the resources gate said); the all-configs gate
    ran it under the interpreter and failed. Now such a config is not applicable; the one that fits still runs."""
    target = f"{DATA.parent / 'interp_data' / 'oor_config.py'}::oor"
    out = run_gate("all-configs", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == PASS and "1 configs correct" in out.reason and "1 not applicable" in out.reason, out.reason
    na = out.details["not_applicable"]
    assert len(na) == 1 and "tile_mm BLOCK=256" in na[0] and "OutOfResources" in na[0], na
    # with no compile to tell (it failed), every config runs, as before: the 256-wide one's reads fail the gate
    from tritondbg.check import resources_gate

    monkeypatch.setattr(resources_gate, "_compile_rows", lambda *a, **k: ([], {}, [], None))
    out = run_gate("all-configs", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == FAIL and "tile_mm BLOCK=256" in out.reason, out.reason
