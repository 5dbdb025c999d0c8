"""Reproducers of autotuned launches (`tritondbg capture`), on kernels whose replay a stranger found wrong:
each test fails on the code before its fix. The programs are tests/program_data/tuned_replays.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROG = REPO / "tests" / "program_data" / "tuned_replays.py"

pytestmark = pytest.mark.interpreter


def tritondbg(*args, timeout=300):
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO)


def capture(tmp_path, *argv, per_kernel=1):
    cap = tmp_path / "cap"
    out = tritondbg("capture", "--interpret", "--max-per-kernel", str(per_kernel), "--out", str(cap), "--",
                    "python", str(PROG), *argv)
    assert out.returncode == 0 and out.stdout.strip() == "OK", out.stdout + out.stderr[-3000:]
    return cap, out


def test_a_refused_config_is_no_launch_and_reset_to_zero_is_replayed_as_the_program_had_it(tmp_path):
    """acc_kernel's first config fails its tl.static_assert; the interpreter then runs the next. That try was
    counted as a launch of the program (4 for 2), captured as a reproducer that did not finish, and reported as
    a kernel error "the program caught". Its autotuner zeroes acc before the first call of a key only; each
    replay zeroed it again, so the second call's reproducer lost the first call's sum (5x where 8x was due)."""
    cap, out = capture(tmp_path, "reset", per_kernel=3)
    assert "2 launch(es) of 1 kernel(s); 2 reproducer(s)" in out.stderr, out.stderr[-2000:]
    assert "did not finish" not in out.stderr and "BLOCK=8" not in out.stderr.split("ran one config")[-1], out.stderr
    for i in (0, 1):
        rep = tritondbg("interpret", str(cap / f"acc_kernel_{i}.py"))
        assert rep.returncode == 0 and "BLOCK=16" in rep.stdout, rep.stdout[-2000:] + rep.stderr[-2000:]
    prog = tritondbg("interpret", "--", "python", str(PROG), "reset")
    assert prog.returncode == 0 and "warning" not in prog.stderr and "2 launch(es), 0 finding(s)" in prog.stderr, \
        prog.stderr[-2000:]


@pytest.mark.parametrize("case, expect", [
    ("heuristics", "all 3 config runs agree"),  # NPROG recomputed per config: the grids 4, 2 (were all 4)
    ("dtype", "all 2 config runs agree"),       # a tl.dtype value: no config matched its recorded grid
    ("made_up", "all 3 config runs agree"),     # new Config objects from the prune: all listed as "pruned"
    ("warps", "all 3 config runs agree"),       # heuristics above: "got multiple values for argument 'HAS_SCALE'"
])
def test_every_config_of_a_reproducer_replays_with_its_own_grid(case, expect, tmp_path):
    cap, _ = capture(tmp_path, case)
    repro = next(cap.glob("*_kernel_0.py"))
    grids = json.loads((cap / "data" / f"{repro.stem}.json").read_text())["config_grids"]
    if case == "heuristics":
        assert [g["grid"] for g in grids] == [[4], [2], [1]], grids
    out = tritondbg("interpret", str(repro), "--all-configs")
    assert out.returncode == 0 and expect in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
    pruned = out.stdout.count("pruned by the autotuner's")
    assert pruned == (1 if case == "made_up" else 0), out.stdout[-3000:]


def test_a_pruner_that_reads_keyword_arguments_and_adds_a_key_replays(tmp_path):
    """helper-48 (gemlite's gemm_splitK_INT_kernel): the pruner reads `load_scales_as_block` from its **kwargs
    (the program passes it by keyword) and returns configs with NUM_STAGES added. The reproducer passed every
    argument positionally ("KeyError: 'load_scales_as_block'"), then pinned the listed config without the added
    key ("missing 1 required positional argument: 'NUM_STAGES'")."""
    cap, _ = capture(tmp_path, "added")
    meta = json.loads((cap / "data" / "added_kernel_0.json").read_text())
    assert meta["by_name"] == ["scale"] and meta["config"]["STAGES"] == 2, meta
    out = tritondbg("interpret", str(cap / "added_kernel_0.py"))
    assert out.returncode == 0 and "STAGES=2" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]


def test_partial_sums_laid_out_per_program_are_not_compared_across_configs(tmp_path):
    """part holds one partial sum per program: BLOCK=16 (the capture) writes 4, BLOCK=32 writes 2. Compared with
    the capture, every other config failed the all-configs gate on a correct kernel (Liger-Kernel's DyT
    backward). Now such an output is a warning naming it, and the elementwise output y is still compared: the
    BUG variant, wrong at BLOCK=64 only, fails there. part is torch.empty's (mamba's ddA_cumsum): the elements a
    config leaves are no "never written" error either (helper-68)."""
    cap, _ = capture(tmp_path, "partial")
    report = tmp_path / "check.json"
    out = tritondbg("check", "--device", "cpu", "--gates", "correctness,all-configs", "--json", str(report),
                    str(cap / "partial_kernel_0.py"))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    gate = {g["gate"]: g for g in json.loads(report.read_text())["extra"]["gates"]}["all-configs"]
    assert gate["status"] == "pass" and "1 configs correct" in gate["reason"], gate
    assert "3 not compared with the capture" in gate["reason"], gate
    assert "never written" not in out.stdout, out.stdout[-3000:]

    bug = tmp_path / "bug"
    bug.mkdir()
    cap, _ = capture(bug, "partial", "bug")
    out = tritondbg("interpret", str(cap / "partial_kernel_0.py"), "--all-configs")
    assert out.returncode == 1, out.stdout[-3000:]
    assert "1 of 4 config runs disagree" in out.stdout and "BLOCK=64" in out.stdout.split("disagree")[-1], out.stdout
    assert "elements of y_ptr outside" in out.stdout, out.stdout[-3000:]
    assert "warning: not_compared" in out.stdout and "part_ptr" in out.stdout, out.stdout[-3000:]


def test_a_config_the_compiler_refuses_is_not_applicable_to_ir_and_the_resources_gate(tmp_path):
    """acc_kernel's BLOCK=8 fails its tl.static_assert: `ir --all-configs` stopped at it with "compiling acc_kernel
    for sm_90 failed" (no other config shown) and the resources gate failed on it, where Triton's autotuner skips
    such a config and `interpret --all-configs` lists it as not applicable."""
    cap, _ = capture(tmp_path, "reset")
    repro = str(cap / "acc_kernel_0.py")
    out = tritondbg("ir", repro, "--all-configs", "--stage", "ttir")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "acc_kernel [BLOCK=8,num_warps=4,num_stages=3]: --all-configs: config 1 of 3 (not applicable: " \
           "CompileTimeAssertionFailure: BLOCK too small)" in out.stderr, out.stderr[-2000:]
    assert out.stdout.count("tt.func") >= 2, out.stdout[:2000]  # BLOCK=16 and 32 compiled and shown
    report = tmp_path / "check.json"
    out = tritondbg("check", "--device", "cpu", "--gates", "resources", "--json", str(report), repro)
    gate = json.loads(report.read_text())["extra"]["gates"][0]
    assert out.returncode == 0 and gate["status"] == "pass", gate
    assert "1 config(s) not applicable" in gate["reason"] and "BLOCK too small" in gate["reason"], gate


@pytest.mark.parametrize("case, status, said", [
    ("persistent", 0, "add up to the same total"),  # fixed grid: the partials' ranges follow BLOCK (was a FAIL)
    ("tail", 1, "1 of 2 config runs disagree"),      # BLOCK=256 drops the tail: it was excused as a layout
])
def test_partial_sums_are_told_from_a_dropped_tail(case, status, said, tmp_path):
    """Two strangers' finds on the first rule (a config whose grid writes another set of elements is not
    compared): a dropped tail passed, a persistent kernel's partial sums on a fixed grid failed. An output is left
    uncompared only when what the config wrote adds up to what the capture wrote without being the same values."""
    cap, _ = capture(tmp_path, case)
    out = tritondbg("interpret", str(next(cap.glob("*_kernel_0.py"))), "--all-configs")
    assert out.returncode == status and said in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]


def test_a_config_pinned_with_config_that_the_pruning_removes_says_so(tmp_path):
    """made_up_kernel's prune keeps BLOCK <= 64: `--config BLOCK=128` ran it with no word that the program's
    autotuner never would (a stranger's find)."""
    cap, _ = capture(tmp_path, "made_up")
    out = tritondbg("interpret", str(cap / "made_up_kernel_0.py"), "--config", "BLOCK=128")
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "(--config; its prune_configs_by removes it for this call: the autotuner never runs it here)" in out.stdout
    out = tritondbg("interpret", str(cap / "made_up_kernel_0.py"), "--config", "BLOCK=32")
    assert "(--config)" in out.stdout, out.stdout[-2000:]


SEEDED = REPO / "tests" / "program_data" / "seeded_cache.py"


def test_a_config_the_program_put_in_its_autotuners_cache_runs_and_is_captured(tmp_path):
    """helper-64 (DeepSpeed loads its saved autotune table into Autotuner.cache): the autotuner runs the cached
    config without timing, on a GPU as anywhere, but program mode ran its first config instead, said so, and
    capture labelled that one the program's pick. The kernel writes its BLOCK; nothing seeded: the first config."""
    out = tritondbg("interpret", "--", "python", str(SEEDED), "seeded")
    assert out.returncode == 0 and out.stdout.strip() == "BLOCK 64", out.stdout + out.stderr[-2000:]
    assert "the first their autotuner would try" not in out.stderr, out.stderr[-2000:]
    out = tritondbg("interpret", "--", "python", str(SEEDED), "cold")
    assert out.returncode == 0 and out.stdout.strip() == "BLOCK 16", out.stdout + out.stderr[-2000:]
    cap = tmp_path / "cap"
    out = tritondbg("capture", "--interpret", "--out", str(cap), "--", "python", str(SEEDED), "seeded")
    assert out.returncode == 0, out.stderr[-2000:]
    rep = tritondbg("interpret", str(cap / "which_block_0.py"))
    assert rep.returncode == 0 and "BLOCK=64" in rep.stdout and "(captured)" in rep.stdout, rep.stdout[-2000:]


def test_a_kernel_no_config_of_which_could_run_is_not_said_to_have_run_one():
    """helper-67 (tritonbench's jagged_sum): every config fails its tl.static_assert; the error said so, and the
    summary still named the last config as the one the kernel ran."""
    out = tritondbg("interpret", "--", "python", str(REPO / "tests" / "program_data" / "no_config_runs.py"))
    assert out.returncode == 1 and "none of the 2 configs the autotuner of never would try" in out.stderr, \
        out.stderr[-2000:]
    assert "autotuned kernels ran one config" not in out.stderr, out.stderr[-2000:]
