"""The CLI: help of every command, no torch at import, one-line errors with exit status 2."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA, run_cli
from tritondbg.cli import cli

COMMANDS = sorted(cli.commands)


def test_every_command_has_help():
    runner = CliRunner()
    result = runner.invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output
        sub = runner.invoke(cli, [name, "--help"])
        assert sub.exit_code == 0, (name, sub.output)
        assert "Usage:" in sub.output and name in sub.output


def test_cli_import_and_help_do_not_load_torch_or_triton():
    code = ("import sys\nfrom tritondbg.cli import cli\n"
            "from click.testing import CliRunner\nr = CliRunner().invoke(cli, ['--help'])\n"
            "assert r.exit_code == 0\n"
            "print(sorted(m for m in ('torch', 'triton', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("args, needle", [
    (["interpret", "no_such_kernel"], "unknown kernel 'no_such_kernel'; choose from: add, attention"),
    (["interpret", "add", "--case", "nope"], "unknown case 'nope' for add; choose from: tiny"),
    (["interpret", "add", "--dtype", "float64"], "has no dtype 'float64'"),
    (["interpret", "gemm", "--config", "BLOCK_M=7"], "no config of gemm_kernel has BLOCK_M=7; its configs:"),
    (["interpret", "gemm", "--config", "NOPE=1"], "unknown config key(s) NOPE"),
    (["interpret", "gemm", "--config", "BLOCK_M"], "bad --config item 'BLOCK_M'"),
    (["interpret", "missing_file.py"], "no such scenario file: missing_file.py"),
    (["interpret", str(DATA / "user_kernels" / "my_cases.py") + "::nope"], "no scenario 'nope'"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle, cli_env):
    p = run_cli(args, cli_env)
    assert p.returncode == 2, p.stderr
    assert needle in p.stderr
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_list_shows_every_kernel_cases_and_configs(cli_env):
    p = run_cli(["list", "--json"], cli_env)
    assert p.returncode == 0, p.stderr
    entries = {e["name"]: e for e in json.loads(p.stdout)}
    assert set(entries) == {"add", "layernorm", "softmax", "attention", "gemm", "fp8_gemm"}
    for e in entries.values():
        assert any(c["name"] == "tiny" and c["interpret"] for c in e["cases"]), e["name"]
        assert any(not c["interpret"] for c in e["cases"]), f"{e['name']} has no GPU-size case"
    assert len(entries["gemm"]["configs"]["gemm_kernel"]) >= 3
    assert entries["fp8_gemm"]["configs"], "fp8_gemm is autotuned"
    p = run_cli(["list"], cli_env)
    assert p.returncode == 0 and "attention" in p.stdout


def test_list_takes_scenario_files_and_names(cli_env):
    """helper-57: `tritondbg list gptq_cases.py`, the natural way to see a scenario file's cases, was a bare click
    error; a file lists each of its scenarios, ``file::name`` and bundled names one."""
    zoo = Path(__file__).resolve().parent / "zoo"
    p = run_cli(["list", "--json", str(zoo / "undefined_lanes.py"), f"{zoo / 'race.py'}::buggy", "softmax"], cli_env)
    assert p.returncode == 0, p.stderr
    names = [e["name"] for e in json.loads(p.stdout)]
    assert names[:2] == ["buggy", "twin"] and names[-2:] == ["buggy", "softmax"], names
    assert len(names) > 4 and "add" not in names


def test_run_compiled_without_gpu_says_so(cli_env):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    p = run_cli(["run", "add"], cli_env)
    assert p.returncode == 2
    assert "needs a CUDA GPU" in p.stderr


@pytest.mark.parametrize("script, args", [("gemm_power_state.py", []), ("host_cost.py", ["add", "tiny"])])
def test_gpu_bench_scripts_on_a_cpu_say_so_in_one_line(script, args, cli_env):
    """(the other GPU scripts: test_bench_scripts.py) - torch's AssertionError traceback before."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    from conftest import REPO

    p = subprocess.run([sys.executable, str(REPO / "tests" / "bench" / script), *args], env=cli_env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stderr.strip() == "needs a CUDA GPU", p.stderr[-500:]


@pytest.mark.parametrize("raised, code, said", [("KeyboardInterrupt", 130, "interrupted"),
                                                ("SystemExit(143)", 143, ""), ("SystemExit(3)", 3, None)])
def test_an_interrupt_exits_130_after_atexit_and_without_teardown(raised, code, said):
    """Ctrl-C / SIGTERM reaching main: 'interrupted', atexit hooks run, exit 130 (143 for a command that exits
    so after SIGTERM) — and no interpreter teardown (a torch profiler stopped mid-way crashed there with SIGSEGV,
    exit -11 in CI). The object freed at teardown stands in for that C++ state: its __del__ must not run."""
    prog = ("import atexit, sys\n"
            "import tritondbg.cli as c\n"
            "class Torn:\n"
            "    def __del__(self): sys.stdout.write('torn down\\n'); sys.stdout.flush()\n"
            "held = Torn()\n"
            "atexit.register(lambda: print('atexit ran', flush=True))\n"
            f"def boom(**kw): raise {raised}\n"
            "c.cli.main = boom\n"
            "c.main(['list'])\n")
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=60)
    assert r.returncode == code, r.stderr
    if said is None:  # any other exit status: the usual exit, teardown included
        assert r.stdout.splitlines() == ["atexit ran", "torn down"]
    else:
        assert r.stderr.strip() == said and r.stdout.splitlines() == ["atexit ran"]


def test_kernel_prints_after_an_in_process_json_run_go_to_the_stderr_of_their_time():
    """CI (session 48): `interpret --json` run in-process set the kernel-print stream to the sys.stderr of that
    moment (a test's capture, closed after it); a later test whose kernel calls tl.device_print raised "I/O
    operation on closed file" inside the kernel. The stream is named ("stderr") and looked up at print time."""
    import io

    from tritondbg.interp import shims

    before = shims._prints["stream"]
    old = sys.stderr
    try:
        sys.stderr = first = io.StringIO()
        shims.set_print_stream("stderr")  # what `interpret --json` sets
        first.close()                     # that test's capture, closed
        sys.stderr = now = io.StringIO()
        shims._emit({"text": "printed now"})
        assert "printed now" in now.getvalue()
    finally:
        sys.stderr = old
        shims.set_print_stream(before)
        shims.take_prints()
    src = (Path(__file__).parent.parent / "tritondbg" / "commands" / "execute.py").read_text()
    assert 'set_print_stream("stderr" if as_json else None)' in src  # the --json run names it, not the object
