"""A user's own kernel and scenario file, outside the package, through the CLI from another cwd."""
import json

from conftest import DATA, run_cli

CASES = DATA / "user_kernels" / "my_cases.py"


def test_user_scenario_file_runs_from_any_cwd(cli_env, tmp_path):
    p = run_cli(["interpret", f"{CASES}::axpy", "--json"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    record = json.loads(p.stdout)
    assert record["passed"] and [r["dtype"] for r in record["results"]] == ["float32", "float16"]
    assert record["results"][0]["config"]["axpy_kernel"]["BLOCK"] == 128
    saved = list((tmp_path / "traces").rglob("record.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["passed"]


def test_user_scenario_config_and_plain_output(cli_env, tmp_path):
    p = run_cli(["interpret", str(CASES), "--config", "BLOCK=256", "--dtype", "float16"], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "PASS axpy case=tiny dtype=float16" in p.stdout
    assert "BLOCK=256" in p.stdout and "(--config)" in p.stdout


def test_mismatch_exits_1(cli_env, tmp_path):
    bad = tmp_path / "bad_cases.py"
    bad.write_text(CASES.read_text().replace("return alpha * x.float() + y.float()",
                                             "return alpha * x.float() - y.float()"))
    (tmp_path / "my_kernels.py").write_text((DATA / "user_kernels" / "my_kernels.py").read_text())
    p = run_cli(["interpret", str(bad), "--dtype", "float32"], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "FAIL axpy" in p.stdout and "mismatched" in p.stdout


def test_scenario_code_that_ends_the_process_is_an_error_naming_the_line(cli_env, tmp_path):
    """A launch wrapper calling ``sys.exit(0)`` or ``os._exit(0)`` ended `interpret` with no word and exit 0 (a
    silent pass); it is an error result at the wrapper's line. An exception raised inside a library the wrapper
    calls names the library's line too."""
    (tmp_path / "my_kernels.py").write_text((DATA / "user_kernels" / "my_kernels.py").read_text())
    (tmp_path / "lib_helper.py").write_text("def check(x):\n    raise ValueError('the library refused')\n")
    base = CASES.read_text()
    cases = tmp_path / "ends.py"
    cases.write_text(base + '''
import os, sys
import lib_helper


def _exits(x, y, alpha):
    axpy(x, y, alpha)
    sys.exit(0)


def _os_exits(x, y, alpha):
    axpy(x, y, alpha)
    os._exit(0)


def _in_library(x, y, alpha):
    lib_helper.check(x)


_one = [Case("tiny", params=dict(n=100), dtypes=("float32",))]
exits = Scenario("exits", make_inputs, _exits, reference, _one, kernels=[axpy_kernel])
os_exits = Scenario("os_exits", make_inputs, _os_exits, reference, _one, kernels=[axpy_kernel])
in_library = Scenario("in_library", make_inputs, _in_library, reference, _one, kernels=[axpy_kernel])
''')
    lines = cases.read_text().splitlines()
    for name, call in (("exits", "sys.exit(0)"), ("os_exits", "os._exit(0)")):
        p = run_cli(["interpret", f"{cases}::{name}"], cli_env, cwd=tmp_path)
        line = next(i + 1 for i, ln in enumerate(lines) if ln.strip() == call)
        assert p.returncode == 1, p.stdout + p.stderr
        assert f"ends.py:{line}:" in p.stdout and f"{call} called" in p.stdout, p.stdout
    p = run_cli(["interpret", f"{cases}::in_library"], cli_env, cwd=tmp_path)
    assert p.returncode == 1 and "ValueError: the library refused (raised at " in p.stdout, p.stdout
    assert "ERROR in_library case=tiny dtype=float32 mode=interpret\n" in p.stdout  # no "(0.0 ms ...)" time
    assert "lib_helper.py:2)" in p.stdout, p.stdout


def test_a_case_may_list_integer_dtypes_and_they_compare_exactly():
    """A histogram or quantising kernel's case had to call itself float32 (integer dtypes were refused)."""
    import pytest

    from tritondbg.compare import tolerance
    from tritondbg.selection import select_dtypes
    from tritondbg.scenario import Case

    case = Case("tiny", dtypes=("int32", "uint8", "float8_e5m2"))
    assert tolerance("int32") == (0.0, 0.0) and tolerance("uint8") == (0.0, 0.0)
    assert select_dtypes(case, "i32,u8,e5m2") == ["int32", "uint8", "float8_e5m2"]
    with pytest.raises(ValueError, match="unknown dtype"):
        Case("tiny", dtypes=("int128",))
