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
