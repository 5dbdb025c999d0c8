"""`tritondbg check` and its pytest plugin (helper-87): --json results name their gate; the all-configs gate skips a
kernel without autotune configs before running anything; an interrupted run on a CPU keeps its GPU-only gates
skipped; `check --out DIR` keeps a failed compile's log there; `pytest --co` counts the gate items, whose node ids
name their scenario file."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, run_cli
from tritondbg import loader
from tritondbg.check.gates import GateContext, run_gate
from tritondbg.check.outcome import FAIL, INTERRUPTED, PASS, SKIP
from tritondbg.record import RunRecord

DATA = REPO / "tests" / "check_data"
ZOO = REPO / "tests" / "zoo"


def test_each_json_result_names_the_gate_that_made_it(cli_env, tmp_path):
    """The results of `check --json` did not say which gate ran them (correctness and determinism both run every
    case): each now has extra.gate and extra.gate_kernel, the keys of its extra.gates row."""
    record = tmp_path / "c.json"
    p = run_cli(["check", "add", f"{ZOO / 'missing_mask.py'}::twin", "--gates", "correctness,determinism", "-n", "1",
                 "--json", str(record)], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    data = json.loads(record.read_text())
    rows = {(g["kernel"], g["gate"]) for g in data["extra"]["gates"]}
    assert data["results"]
    seen = set()
    for r in data["results"]:
        assert (r["extra"]["gate_kernel"], r["extra"]["gate"]) in rows, r["extra"]
        seen.add((r["extra"]["gate_kernel"], r["extra"]["gate"]))
    want = {("add", "correctness"), ("missing_mask::twin", "correctness"), ("missing_mask::twin", "determinism")}
    assert want <= seen, seen
    assert all(r.extra["gate"] for r in RunRecord.load(record).results)  # still a loadable run record


def test_run_gate_names_its_gate_on_each_run():
    target = f"{ZOO / 'missing_mask.py'}::twin"
    out = run_gate("correctness", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == PASS and out.results and all(r.extra["gate"] == "correctness" for r in out.results)


def test_all_configs_skips_a_kernel_without_autotune_configs_before_running_it(cli_env, tmp_path):
    """hang.py::loop spins forever and has no autotuner: the gate ran the case to look for launched autotuned
    kernels and spent the whole --timeout there (an error); now it skips at once, saying why."""
    record = tmp_path / "c.json"
    t0 = time.monotonic()
    p = run_cli(["check", f"{DATA / 'hang.py'}::loop", "--gates", "all-configs", "--timeout", "30", "-n", "1",
                 "--json", str(record)], cli_env, cwd=tmp_path, timeout=200)
    gate = json.loads(record.read_text())["extra"]["gates"][0]
    assert gate["status"] == SKIP, gate
    assert "spin has no autotune configs" in gate["reason"] and "nothing to sweep" in gate["reason"], gate
    assert gate["seconds"] < 20 and time.monotonic() - t0 < 120, gate
    assert p.returncode == 1  # every item skipped: nothing ran, as before


_LAZY = '''
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def plain(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def launch(x):
    import h87_tuned  # imported when the launch runs: its autotuned kernel cannot be seen before

    y = torch.empty_like(x)
    h87_tuned.copy[lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),)](x, y, x.numel())
    return y


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(100, generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float()


lazy = Scenario("lazy", make_inputs, launch, reference, [Case("tiny")], kernels=[plain])
'''

_TUNED = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
'''


def test_all_configs_still_sweeps_an_autotuned_kernel_a_wrapper_imports_when_it_runs(tmp_path, monkeypatch):
    """The skip is only for what is known without running: a wrapper importing its autotuned kernel's module
    when it runs is swept as before (the cases are run to find it)."""
    (tmp_path / "h87_lazy_cases.py").write_text(_LAZY)
    (tmp_path / "h87_tuned.py").write_text(_TUNED)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "h87_tuned", raising=False)
    target = f"{tmp_path / 'h87_lazy_cases.py'}::lazy"
    out = run_gate("all-configs", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == PASS and "2 configs correct" in out.reason, out.reason


def test_an_interrupted_check_on_a_cpu_keeps_its_gpu_only_gates_skipped(cli_env, tmp_path):
    """Ctrl-C during a CPU run marked perf and agreement "interrupted", where a run that ends says "skipped: needs a
    GPU"; the item that was running is interrupted, and the exit status still says so (130)."""
    marker, record = tmp_path / "started", tmp_path / "r.json"
    env = dict(cli_env, TRITONDBG_TEST_STARTED=str(marker))
    p = subprocess.Popen([sys.executable, "-m", "tritondbg", "check", f"{DATA / 'hang.py'}::sleeps", "--gates",
                          "correctness,perf,agreement", "-n", "1", "--json", str(record)],
                         env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t0 = time.time()
    while time.time() - t0 < 240 and p.poll() is None and not marker.exists():
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=180)
    assert p.returncode == 130, out[-2000:] + err[-2000:]
    gates = {g["gate"]: g for g in json.loads(record.read_text())["extra"]["gates"]}
    assert gates["correctness"]["status"] == INTERRUPTED, gates
    for gate in ("perf", "agreement"):
        assert gates[gate]["status"] == SKIP and gates[gate]["reason"] == "needs a GPU (--device cuda)", gates[gate]
    assert "1 interrupted" in out and "2 skipped" in out, out


def test_an_interrupt_before_the_gates_started_keeps_gpu_only_gates_skipped_on_a_cpu():
    from tritondbg.check.session import Item, exit_status, interrupted_record

    items = [Item("add", "add", g) for g in ("correctness", "perf", "agreement")]
    record = interrupted_record(items, device="cpu", workers=1)
    assert [g["status"] for g in record.extra["gates"]] == [INTERRUPTED, SKIP, SKIP]
    assert exit_status(record) == 130
    on_gpu = interrupted_record(items, device="cuda", workers=1)
    assert [g["status"] for g in on_gpu.extra["gates"]] == [INTERRUPTED] * 3


def test_check_out_dir_keeps_the_failed_compiles_log(cli_env, tmp_path):
    """The resources gate's failed compile wrote its full log to /tmp whatever the run was given: `--out DIR` keeps
    it there, named in the reason."""
    out, record = tmp_path / "artifacts", tmp_path / "c.json"
    p = run_cli(["check", str(DATA / "no_compile.py"), "--gates", "resources", "-n", "1", "--out", str(out),
                 "--json", str(record)], cli_env, cwd=tmp_path)
    assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-2000:]
    reason = json.loads(record.read_text())["extra"]["gates"][0]["reason"]
    logs = list(out.glob("tritondbg-compile-neg_block-*.log"))
    assert len(logs) == 1 and f"(full log: {logs[0]})" in reason, (reason, list(out.iterdir()) if out.exists() else [])
    assert "BLOCK must be negative" in logs[0].read_text()


def test_pytest_collect_only_counts_the_gate_items_and_names_their_file(tmp_path):
    """`pytest --co --tritondbg F` said "collected 0 items" / "no tests collected" and listed node ids with an empty
    file part (``::missing_mask::buggy::correctness``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "--co",
            "--tritondbg", str(ZOO / "missing_mask.py"), "--tritondbg-gates", "correctness,sanitize",
            "--tritondbg-device", "cpu"]
    p = subprocess.run(base + ["-q"], capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "4 tests collected" in out, out
    ids = [line for line in p.stdout.splitlines() if "::" in line]
    file = (ZOO / "missing_mask.py").as_posix()  # outside the rootdir: its absolute path
    assert ids == [f"{file}::{s}::{g}" for s in ("buggy", "twin") for g in ("correctness", "sanitize")], ids
    p = subprocess.run(base, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert "collected 4 items" in p.stdout and "<ScenarioFile" in p.stdout, p.stdout


def test_pytest_plugin_items_run_under_their_new_node_ids(tmp_path):
    """The items still run (in the worker --tritondbg starts) and fail with their label."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path),
                        "-rA", "--tritondbg", str(ZOO / "missing_mask.py"), "--tritondbg-gates", "sanitize",
                        "--tritondbg-device", "cpu"], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env=env)
    out = p.stdout + p.stderr
    assert p.returncode == 1 and "1 failed, 1 passed" in out, out
    assert "missing_mask.py::buggy::sanitize" in out and "missing_mask::buggy::sanitize: out_of_bounds" in out, out


def test_pytest_tritondbg_without_test_paths_collects_the_scenario_files_only(tmp_path):
    """helper-90: `pytest --tritondbg F` in a project folder collected its tests too, and four that did not import
    here failed the run; named test paths still run beside the gate items."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_broken.py").write_text("import no_such_module_here\n")
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    pass\n")
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "--co", "-q",
            "--tritondbg", str(ZOO / "missing_mask.py"), "--tritondbg-gates", "sanitize", "--tritondbg-device", "cpu"]
    p = subprocess.run(base, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert p.returncode == 0 and "2 tests collected" in p.stdout, p.stdout + p.stderr
    p = subprocess.run(base + ["test_ok.py"], capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert p.returncode == 0 and "3 tests collected" in p.stdout and "test_ok.py::test_ok" in p.stdout, p.stdout
    run = [a for a in base if a != "--co"]  # and run, in the worker --tritondbg starts (it collects alike)
    p = subprocess.run(run, capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert p.returncode == 1 and "1 failed, 1 passed" in p.stdout and "test_broken" not in p.stdout, p.stdout


@pytest.mark.parametrize("data", ["autotuned_via_function_apply.py", "autotuned_in_a_table.py"])
def test_all_configs_reaches_an_autotuner_behind_a_function_apply_or_a_table(data):
    """Review of helper-87's pre-run skip: an autotuned kernel launched from an autograd Function's forward
    (``Function.apply``, the Liger / unsloth pattern) or from a dispatch table ``{dtype: kernel}`` was taken for none,
    so the all-configs gate skipped a wrong config (BLOCK=32 here) without running it."""
    target = f"{DATA / data}::bad"
    out = run_gate("all-configs", loader.load(target), GateContext(device="cpu", target=target))
    assert out.status == FAIL and "BLOCK=32" in out.reason, (out.status, out.reason)
