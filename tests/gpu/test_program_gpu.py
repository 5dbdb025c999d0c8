"""Program mode on the GPU machine (issue 16): capture a model run on the GPU and replay every reproducer on
the CPU interpreter against the GPU-recorded outputs; tritonparse and Proton in the same program.

    python -m pytest tests/gpu/test_program_gpu.py -q      (needs liger-kernel and tritonparse installed)
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "program" / "model.py"


def tdbg(args, env=None, cwd=None, timeout=500):
    full = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=full,
                          cwd=cwd or REPO, timeout=timeout)


def test_gpu_capture_replays_on_the_cpu_interpreter(tmp_path):
    pytest.importorskip("liger_kernel")
    folder = tmp_path / "cap"
    out = tdbg(["capture", "--compiled", "--out", str(folder), "--", "python", str(EXAMPLE)],
               env={"EXAMPLE_BUG": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads((folder / "captures.json").read_text())
    assert len(doc["captures"]) == 5 and all(t["device"].startswith("cuda") for c in doc["captures"]
                                             for t in c["tensors"])
    results = {}
    for c in doc["captures"]:
        rep = tdbg(["interpret", str(folder / c["reproducer"]), "--json"], cwd=tmp_path)
        record = json.loads(rep.stdout)
        r = record["results"][0]
        results[c["kernel"]] = (r["status"], [(f["kind"], f["line"]) for f in r["findings"]], r["message"])
    print(json.dumps(results, indent=1))
    for name, (status, findings, message) in results.items():
        if name == "scale_shift_kernel":   # the GPU read garbage past the end; the CPU replay says where
            assert ("out_of_bounds", 20) in [tuple(f) for f in findings], message
        else:
            assert status == "pass" and not findings, (name, message)


@pytest.mark.parametrize("replay", ["run", "interpret"])
def test_gpu_capture_through_address_tables_replays_on_the_gpu_and_the_cpu(replay, tmp_path):
    """Tables of CUDA data pointers (grouped GEMM, MoE): the tensors behind them are saved and each replay points
    the tables at its own copies, on the GPU (`run`) and on the CPU interpreter (`interpret`); a script written
    for the GPU is left as it is there (no "served on the CPU" note: CUDA is available)."""
    folder = tmp_path / "cap"
    prog = REPO / "tests" / "program_data" / "grouped.py"
    out = tdbg(["capture", "--compiled", "--out", str(folder), "--max-per-kernel", "2", "--", "python", str(prog)])
    assert out.returncode == 0 and "grouped OK" in out.stdout, out.stderr[-3000:]
    assert "served on the CPU" not in out.stderr
    for name in ("grouped_scale_kernel_0", "grouped_scale_kernel_1", "mix_kernel_0"):
        rep = tdbg([replay, str(folder / f"{name}.py"), "--json"], cwd=tmp_path)
        r = json.loads(rep.stdout)["results"][0]
        assert rep.returncode == 0 and r["status"] == "pass" and not r["findings"], (name, rep.stdout[-2000:],
                                                                                     rep.stderr[-2000:])


def test_a_script_naming_cuda_runs_on_the_gpu_under_interpret():
    out = tdbg(["interpret", "--", "python", str(REPO / "tests" / "program_data" / "cuda_by_name.py"), "tensors"])
    assert out.returncode == 0 and "devices ['cuda:0']" in out.stdout, out.stdout + out.stderr[-3000:]
    assert "served on the CPU" not in out.stderr


def test_gpu_capture_of_an_autotuned_launch_keeps_the_state_before_its_timed_runs(tmp_path):
    """Compiled, the autotuner times both configs before the launch it keeps, and each timed run writes y: the
    capture's before-state is taken when the autotuner is called, so the reproducer has y as an output (it had
    none: the timed runs had written y already) and replays on the CPU against it."""
    folder = tmp_path / "cap"
    prog = REPO / "tests" / "program_data" / "programs.py"
    out = tdbg(["capture", "--compiled", "--out", str(folder), "--", "python", str(prog), "autotuned_out"])
    assert out.returncode == 0, out.stderr[-3000:]
    (entry,) = json.loads((folder / "captures.json").read_text())["captures"]
    assert entry["outputs"] == ["y_ptr"] and entry["tensors"][0]["device"].startswith("cuda"), entry
    rep = tdbg(["interpret", str(folder / entry["reproducer"]), "--json"], cwd=tmp_path)
    r = json.loads(rep.stdout)["results"][0]
    assert rep.returncode == 0 and r["status"] == "pass" and len(r["errors"]) == 1, (rep.stdout[-2000:], rep.stderr[-2000:])


def test_gpu_capture_of_an_autotuned_launch_replays_its_pick_and_sweeps_the_rest(tmp_path):
    """tail_kernel (no mask: out of bounds for BLOCK=64 at n = 96) captured compiled, after its autotuner timed
    three configs: `run` replays the config it picked through the autotuner without timing them again
    ("(captured)"), the saved arch is this GPU's, and `interpret --all-configs` on the CPU names BLOCK=64."""
    folder = tmp_path / "cap"
    prog = REPO / "tests" / "program_data" / "programs.py"
    out = tdbg(["capture", "--compiled", "--out", str(folder), "--", "python", str(prog), "autotuned_tail"])
    assert out.returncode == 0, out.stderr[-3000:]
    meta = json.loads((folder / "data" / "tail_kernel_0.json").read_text())
    assert meta["arch"].startswith("sm_") and len(meta["config_grids"]) == 3, meta
    print("picked", meta["config"], "arch", meta["arch"])
    rep = tdbg(["run", str(folder / "tail_kernel_0.py")], cwd=tmp_path)
    assert rep.returncode == 0 and "(captured)" in rep.stdout, rep.stdout[-2000:] + rep.stderr[-2000:]
    rep = tdbg(["interpret", str(folder / "tail_kernel_0.py"), "--all-configs"], cwd=tmp_path)
    assert rep.returncode == 1, rep.stdout[-2000:] + rep.stderr[-2000:]
    assert "tail_kernel BLOCK=64" in rep.stdout and "out_of_bounds" in rep.stdout, rep.stdout[-2000:]


def test_gpu_capture_of_a_config_pre_hook_replays_it(tmp_path):
    """Compiled, the capture's total is 5.0 from before the autotuner's call; the config's pre_hook zeroes it
    before each launch: the replay runs the hook (through the autotuner) and gets the captured 4950."""
    folder = tmp_path / "cap"
    prog = REPO / "tests" / "program_data" / "programs.py"
    out = tdbg(["capture", "--compiled", "--out", str(folder), "--", "python", str(prog), "pre_hook"])
    assert out.returncode == 0, out.stderr[-3000:]
    for cmd in ("run", "interpret"):
        rep = tdbg([cmd, str(folder / "total_kernel_0.py")], cwd=tmp_path)
        assert rep.returncode == 0 and "pre_hook zeroed the total" in rep.stderr, (cmd, rep.stdout[-2000:],
                                                                                  rep.stderr[-2000:])


@pytest.mark.parametrize("mode", ["tritonparse", "proton", "both"])
def test_tritonparse_and_proton_coexist(tmp_path, mode):
    """Each of tritonparse and Proton active in the same program as tritondbg: each writes its own output,
    tritondbg captures, and after tritondbg detaches the hooks it found are in place. In `both`, tritonparse's
    launch tracing is off: with it on, Proton's finalize() fails on tritonparse's launch_enter_hook object
    without tritondbg too (see tests/program_data/coexist.py)."""
    pytest.importorskip("liger_kernel")
    if mode != "proton":
        pytest.importorskip("tritonparse")
    folder, out_dir = tmp_path / "cap", tmp_path / "out"
    out_dir.mkdir()
    out = tdbg(["capture", "--compiled", "--out", str(folder), "--", "python",
                str(REPO / "tests" / "program_data" / "coexist.py"), mode, str(out_dir)], timeout=170)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "hooks kept" in out.stdout, out.stdout[-2000:]
    if mode != "proton":
        logs = [p for p in (out_dir / "tritonparse").rglob("*") if p.is_file()]
        marker = b"launch" if mode == "tritonparse" else b"compilation"
        assert logs and any(marker in p.read_bytes() for p in logs), logs   # tritonparse traced
    if mode != "tritonparse":
        assert list(out_dir.glob("proton*")), list(out_dir.iterdir())      # proton wrote its profile
    kernels = {c["kernel"] for c in json.loads((folder / "captures.json").read_text())["captures"]}
    assert {"layernorm_fwd_kernel", "scale_shift_kernel"} <= kernels          # tritondbg captured too


COMPILED = REPO / "tests" / "program_data" / "compiled_program.py"


def test_torch_compile_kernels_are_captured_replayed_and_profiled(tmp_path):
    """TorchInductor launches its Triton kernels without JITFunction.run: capture and profile saw none (0 launches,
    exit 0; profile listed them as torch's). Now each is a launch: captured with its grid and config, replayed on
    the CPU interpreter against the GPU's output, and a row of profile's table."""
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    folder = tmp_path / "cap"
    out = tdbg(["capture", "--compiled", "--out", str(folder), "--", "python", str(COMPILED)], env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads((folder / "captures.json").read_text())
    kernels = {c["kernel"] for c in doc["captures"]}
    assert len(kernels) >= 3 and all(k.startswith("triton_") for k in kernels), (kernels, out.stderr[-2000:])
    assert sum(doc["launches"].values()) >= 6  # each compiled function called twice
    assert all(str(COMPILED) in (c["program_site"] or "") for c in doc["captures"]), doc["captures"]
    for c in doc["captures"]:
        rep = tdbg(["interpret", str(folder / c["reproducer"]), "--json"], cwd=tmp_path)
        r = json.loads(rep.stdout)["results"][0]
        assert r["status"] == "pass" and not r.get("findings"), (c["reproducer"], r["message"], rep.stderr[-1500:])
    prof = tdbg(["profile", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "p.json"), "--", "python",
                 str(COMPILED)], env=env)
    assert prof.returncode == 0, prof.stderr[-3000:]
    js = json.loads((tmp_path / "p.json").read_text())
    rows = {r["kernel"]: r for r in js["kernels"]}
    assert kernels <= set(rows), (sorted(rows), kernels)
    assert all(rows[k]["launches"] >= 2 and rows[k]["total_ms"] > 0 for k in kernels), rows


@pytest.mark.parametrize("case", ["reset", "heuristics"])
def test_gpu_captures_of_tuned_replays_replay_on_the_gpu_and_the_cpu(case, tmp_path):
    """tests/program_data/tuned_replays.py captured compiled: reset_to_zero zeroes acc before the key's first call
    only (the capture's before-state of acc is the one after the reset: no reset on replay), a heuristics value
    the grid reads is recomputed per config."""
    folder = tmp_path / "cap"
    prog = REPO / "tests" / "program_data" / "tuned_replays.py"
    out = tdbg(["capture", "--compiled", "--max-per-kernel", "2", "--out", str(folder), "--", "python", str(prog),
                case])
    assert out.returncode == 0 and out.stdout.strip() == "OK", out.stdout + out.stderr[-3000:]
    repros = sorted(folder.glob("*_kernel_*.py"))
    assert len(repros) == (2 if case == "reset" else 1), out.stderr[-2000:]
    for repro in repros:
        for cmd in ("run", "interpret"):
            rep = tdbg([cmd, str(repro)], cwd=tmp_path)
            assert rep.returncode == 0 and "(captured)" in rep.stdout, (cmd, repro.name, rep.stdout[-2000:],
                                                                       rep.stderr[-2000:])
        rep = tdbg(["interpret", str(repro), "--all-configs"], cwd=tmp_path)
        assert rep.returncode == 0, (repro.name, rep.stdout[-3000:], rep.stderr[-2000:])
        print(repro.name, rep.stdout.splitlines()[-2:])


def test_gpu_capture_of_partial_sums_the_timed_runs_wrote_says_so(tmp_path):
    """Compiled, the autotuner's timed runs of the other configs write partial sums (one per program) the picked
    config does not write, and the program's buffer holds them after the launch: the replay of the pick alone
    leaves those elements as they were before the autotuner's call. The failure says why, and what fixes the
    program (reset_to_zero)."""
    folder = tmp_path / "cap"
    prog = REPO / "tests" / "program_data" / "tuned_replays.py"
    out = tdbg(["capture", "--compiled", "--out", str(folder), "--", "python", str(prog), "partial"])
    assert out.returncode == 0 and out.stdout.strip() == "OK", out.stdout + out.stderr[-3000:]
    meta = json.loads((folder / "data" / "partial_kernel_0.json").read_text())
    print("picked", meta["config"])
    rep = tdbg(["run", str(folder / "partial_kernel_0.py")], cwd=tmp_path)
    if meta["config"]["BLOCK"] == 16:  # the pick writes every slot the timed runs wrote: nothing left over
        assert rep.returncode == 0, rep.stdout[-2000:]
    else:
        assert rep.returncode == 1 and "timed runs of the other configs wrote them" in rep.stdout, rep.stdout[-2000:]
        assert "reset_to_zero" in rep.stdout, rep.stdout[-2000:]
