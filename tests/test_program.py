"""Program mode (issue 16): tritondbg attached to whole programs, on the CPU interpreter.

The programs run in subprocesses through the CLI (as a user runs them); the hook-chain tests run in this
process and restore what they touched.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import textwrap
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "program" / "model.py"
DATA = REPO / "tests" / "program_data"
TRITONDBG = [sys.executable, "-m", "tritondbg"]


def run(args, env=None, timeout=300, cwd=None):
    full = dict(os.environ, **(env or {}))
    full.pop("TRITON_INTERPRET", None)
    full.pop("TRITONDBG_NOTED", None)  # (a `check` run in this process marks its reproducer notes said)
    full.update(env or {})
    return subprocess.run(TRITONDBG + list(args), capture_output=True, text=True, env=full, timeout=timeout,
                          cwd=cwd or REPO)


# ---------------------------------------------------------------------------------------------------------
# hooks: add beside other tools', remove only ours
# ---------------------------------------------------------------------------------------------------------

def test_chain_hook_adds_to_a_hook_chain_and_removes_only_ours():
    from triton.knobs import HookChain

    from tritondbg.program.attach import chain_hook

    calls = []
    owner = types.SimpleNamespace(hook=HookChain())
    theirs = lambda *a, **k: calls.append("theirs")  # noqa: E731
    owner.hook.add(theirs)
    undo = chain_hook(owner, "hook", lambda *a, **k: calls.append("ours"))
    owner.hook(1)
    assert calls == ["theirs", "ours"]
    undo()
    calls.clear()
    owner.hook(1)
    assert calls == ["theirs"] and owner.hook.calls == [theirs]


def test_chain_hook_on_a_single_slot_keeps_the_other_tools_hook():
    from tritondbg.program.attach import chain_hook

    calls = []

    def theirs(**kw):
        calls.append("theirs")
        return True

    owner = types.SimpleNamespace(slot=theirs)
    undo = chain_hook(owner, "slot", lambda **kw: calls.append("ours"))
    assert owner.slot(key=1) is True            # their result is kept
    assert calls == ["theirs", "ours"]
    undo()
    assert owner.slot is theirs
    # another tool wrapped our chain after us: detaching leaves its wrapper and only turns ours off
    undo = chain_hook(owner, "slot", lambda **kw: calls.append("ours"))
    ours_chain = owner.slot
    owner.slot = lambda **kw: (calls.append("later"), ours_chain(**kw))
    undo()
    calls.clear()
    owner.slot(key=1)
    assert calls == ["later", "theirs"]


def test_install_chains_jit_post_compile_hook_and_restores_everything():
    import triton
    from triton.runtime import autotuner, jit

    from tritondbg.program import attach

    knobs = triton.knobs.runtime
    seen = []

    def theirs(**kw):
        seen.append("theirs")

    before_slot, before_run, before_tune = knobs.jit_post_compile_hook, jit.JITFunction.run, autotuner.Autotuner.run
    tuning = getattr(triton.knobs, "autotuning", None)
    # Triton >= 3.8; not chained under the interpreter (this session's mode, see attach.install)
    has_listener = hasattr(tuning, "listener") and not knobs.interpret
    interpreting = knobs.interpret
    before_listener = tuning.listener if has_listener else None
    knobs.jit_post_compile_hook = theirs
    if has_listener:
        tuning.listener = theirs
    try:
        obs = attach.add_observer(attach.Observer())
        assert getattr(jit.JITFunction.run, "_tritondbg", False)
        fn = types.SimpleNamespace(module="m", name="k", jit_function=None)
        knobs.jit_post_compile_hook(key="x", repr="k[...]", fn=fn, compile={"num_warps": 8}, is_manual_warmup=False,
                                    already_compiled=False)
        assert seen == ["theirs"] and attach.compile_info["m.k"]["num_warps"] == 8
        if has_listener:
            tuning.listener(fn=types.SimpleNamespace(fn=types.SimpleNamespace(__qualname__="kq")), key=(1,),
                            best_config="cfg", configs_timings={}, duration=0.1, cache_hit=False)
            assert seen == ["theirs", "theirs"] and attach.autotune_info["kq"]["best_config"] == "'cfg'"
        if interpreting and hasattr(tuning, "listener"):
            assert tuning.listener is None      # the interpreter's Autotuner.run fails with a listener set
        attach.remove_observer(obs)
        assert knobs.jit_post_compile_hook is theirs
        assert not has_listener or tuning.listener is theirs
        assert jit.JITFunction.run is before_run and autotuner.Autotuner.run is before_tune
    finally:
        knobs.jit_post_compile_hook = before_slot
        if has_listener:
            tuning.listener = before_listener


def test_proton_and_tritonparse_hooks_stay_in_place(tmp_path):
    """Proton adds its launch hooks to Triton's HookChains; tritonparse assigns jit_post_compile_hook,
    launch_enter_hook and the autotuning listener. tritondbg attached beside each (and adding a launch hook
    of its own, as `profile` does) leaves their hooks where they were when it detaches. A subprocess: both
    tools' state is process-wide. (Proton first: tritonparse replaces the launch_enter_hook chain Proton adds to.)"""
    pytest.importorskip("tritonparse")
    code = f"""
import triton, tritonparse.structured_logging as tp
from triton.profiler.hooks.hook import HookManager
from triton.profiler.hooks.launch import LaunchHook
from tritondbg.program import attach
rt = triton.knobs.runtime
HookManager.register(LaunchHook(), 0)                      # Proton's launch hooks (no GPU needed to register)
proton = (list(rt.launch_enter_hook.calls), list(rt.launch_exit_hook.calls))
obs = attach.add_observer(attach.Observer())
undo = attach.chain_hook(rt, "launch_enter_hook", lambda *a: None)
assert rt.launch_enter_hook.calls[0] is proton[0][0] and len(rt.launch_enter_hook.calls) == 2
undo()
attach.remove_observer(obs)
assert (rt.launch_enter_hook.calls, rt.launch_exit_hook.calls) == proton
HookManager.unregister(0)
assert rt.launch_enter_hook.calls == []
tp.init({str(tmp_path)!r}, enable_trace_launch=True)
rt = triton.knobs.runtime
jit_hook, launch_hook = rt.jit_post_compile_hook, rt.launch_enter_hook
tuning = getattr(triton.knobs, "autotuning", None)
listener = getattr(tuning, "listener", None)
assert type(jit_hook).__module__.startswith("tritonparse"), type(jit_hook)
obs = attach.add_observer(attach.Observer())
assert rt.jit_post_compile_hook.previous is jit_hook      # chained: tritonparse first, then tritondbg
if listener is not None:                                  # Triton >= 3.8 (compiled mode)
    assert tuning.listener.previous is listener
attach.remove_observer(obs)
assert rt.jit_post_compile_hook is jit_hook and rt.launch_enter_hook is launch_hook
assert getattr(tuning, "listener", None) is listener
print("ok")
"""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}   # compiled mode: every hook
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]


# ---------------------------------------------------------------------------------------------------------
# the example program
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.interpreter
def test_interpret_program_reports_the_planted_bug_with_the_call_site(tmp_path):
    pytest.importorskip("liger_kernel")  # the example counts Liger's two launches
    report, folder = tmp_path / "findings.json", tmp_path / "on-finding"
    out = run(["interpret", "--json", str(report), "--capture-on-finding", "--out", str(folder), "--", "python",
               str(EXAMPLE)], env={"EXAMPLE_BUG": "1"})
    assert out.returncode == 1, out.stderr[-3000:]
    assert "model: output (6, 40)" in out.stdout           # the program's own output passes through
    assert "out_of_bounds in scale_shift_kernel at examples/program/user_kernels.py:20" in out.stderr  # (its path from the cwd)
    assert "5 launch(es), 1 finding(s)" in out.stderr
    doc = json.loads(report.read_text())
    (f,) = doc["findings"]
    assert (f["kind"], f["line"], f["tensor"], f["pid"]) == ("out_of_bounds", 20, "x_ptr", [3, 0, 0])
    assert f["call_site"][0].endswith("user_kernels.py") and f["call_site"][2] == "scale_shift"
    assert any(s[0].endswith("model.py") and s[2] == "block" for s in f["stack"])
    assert set(doc["launches"]) == {"layernorm_fwd_kernel", "gemm_tma_kernel", "_swiglu_forward_kernel",
                                    "_rms_norm_forward_kernel", "scale_shift_kernel"}
    # --capture-on-finding: a reproducer for the one launch with a finding, none for the others
    captured = json.loads((folder / "captures.json").read_text())["captures"]
    assert [c["reproducer"] for c in captured] == ["scale_shift_kernel_0.py::scale_shift_kernel_0"]
    assert (folder / "scale_shift_kernel_0.py").is_file() and (folder / "data" / "scale_shift_kernel_0.pt").is_file()


@pytest.mark.interpreter
def test_interpret_program_bug_free_variant_exits_0():
    pytest.importorskip("liger_kernel")  # the example counts Liger's two launches
    out = run(["interpret", "--", "python", str(EXAMPLE)], env={"EXAMPLE_BUG": "0"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert "5 launch(es), 0 finding(s)" in out.stderr and "out_of_bounds" not in out.stderr


@pytest.mark.interpreter
def test_capture_on_cpu_every_launch_replays(tmp_path):
    """Every launch of the example gets a reproducer; each passes `interpret` except the buggy one, which
    reports its bug at the kernel line."""
    pytest.importorskip("liger_kernel")  # the example counts Liger's two launches
    folder = tmp_path / "cap"
    out = run(["capture", "--interpret", "--out", str(folder), "--", "python", str(EXAMPLE)], env={"EXAMPLE_BUG": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads((folder / "captures.json").read_text())
    first = doc["captures"][0]["reproducer"].split("::")[0]
    assert f"replay one: tritondbg interpret {folder / first}" in out.stderr  # the command to take next
    assert "capture saves, it checks nothing" in out.stderr  # helper-56 took a capture without findings for clean
    kernels = {c["kernel"]: c for c in doc["captures"]}
    assert set(kernels) == set(doc["launches"]) and len(kernels) == 5
    ss = kernels["scale_shift_kernel"]
    assert ss["grid"] == [4, 1, 1] and ss["outputs"] == ["y_ptr"] and ss["program_site"] is not None
    assert kernels["_swiglu_forward_kernel"]["program_site"].split(":")[0].endswith("model.py")
    results = {name.rsplit("_", 1)[0]: r for name, r in
               replay([folder / c["reproducer"] for c in doc["captures"]], tmp_path).items()}
    for name, (status, findings, message) in results.items():
        if name == "scale_shift_kernel":
            assert status == "fail" and findings == [["out_of_bounds", 20]], (name, message)
        else:
            assert status == "pass" and not findings, (name, message)


@pytest.mark.interpreter
def test_program_that_asks_triton_for_its_device_runs_on_the_cpu():
    """`triton.runtime.driver.active.get_active_torch_device()` (every Triton tutorial) answers cuda:0 where the
    program's "cuda" tensors are served on the CPU (helper-78: it said cpu while tensors made on "cuda" said
    cuda:0, and a tutorial's `x.device == DEVICE` failed beside them); a tensor made on it runs on the CPU."""
    out = run(["interpret", "--", "python", str(DATA / "programs.py"), "device"])
    assert out.returncode == 0, out.stderr[-3000:]
    expected = "cpu" if __import__("torch").cuda.is_available() else "cuda:0"  # (a GPU machine runs compiled)
    assert f"device {expected}: [1.0, 2.0, 3.0]" in out.stdout and "1 launch(es), 0 finding(s)" in out.stderr


@pytest.mark.interpreter
def test_benchmarks_in_a_program_return_nan_without_running_on_the_interpreter():
    """``triton.testing.do_bench`` (tutorials end with a benchmark): it used to fail on the stand-in's device
    interface (no events) after the kernels had been checked; it now returns NaN as the caller asked for it
    (a float, quantiles), without running the function, and says why once. Tutorial 02's
    ``getattr(torch, DEVICE.type).set_stream(...)`` runs too (torch.cpu has no set_stream)."""
    out = run(["interpret", "--", "python", str(DATA / "programs.py"), "bench"])
    assert out.returncode == 0, out.stderr[-3000:]
    assert "bench nan [nan, nan, nan] 0 [1.0, 2.0, 3.0]" in out.stdout, out.stdout
    assert out.stderr.count("triton.testing.do_bench returns NaN under the interpreter") == 1
    assert "1 launch(es), 0 finding(s)" in out.stderr


@pytest.mark.interpreter
def test_interpret_pytest_suite_finds_planted_bugs(tmp_path):
    report = tmp_path / "f.json"
    out = run(["interpret", "--json", str(report), "--", "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               str(DATA / "user_suite.py")])
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    assert "3 passed" in out.stdout and "PytestAssertRewriteWarning" not in out.stdout
    found = sorted((f["kernel"], f["kind"], f["line"]) for f in json.loads(report.read_text())["findings"])
    assert found == [("row_sum_kernel", "race", 19), ("shift_copy_kernel", "out_of_bounds", 12)]
    # each finding names the test that launched it (pytest captures the inline line of a test that passes)
    tests = {f["kernel"]: f.get("test") for f in json.loads(report.read_text())["findings"]}
    assert all(t and t.startswith("tests/program_data/user_suite.py::test_") for t in tests.values()), tests
    assert f"in test {tests['row_sum_kernel']}" in out.stderr, out.stderr[-2000:]
    # and says what it found there: its inline line went to the passing test's captured output (helper-135)
    race = next(ln for ln in out.stderr.splitlines() if ln.lstrip().startswith(("race: ", "warning: race: ")))
    assert "write the same element out_ptr[0]" in race, race


@pytest.mark.interpreter
def test_autotuned_kernel_runs_one_pinned_config_in_a_program(tmp_path):
    """Under `interpret -- CMD` and `capture -- CMD` (interpreted) an autotuned kernel runs the first config its
    autotuner would try, once, as `interpret KERNEL` runs it: no timing of every config on the CPU (which ran an
    in-place kernel once per timed run, unsanitized, and kept whichever config the CPU timed fastest). The
    config is reported; the capture's reproducer compares the output the launch wrote."""
    report = tmp_path / "f.json"
    prog = ["--", "python", str(DATA / "programs.py"), "autotuned"]
    out = run(["interpret", "--json", str(report), *prog])
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert "acc [1.0, 2.0, 3.0]" in out.stdout and "1 launch(es), 0 finding(s)" in out.stderr
    assert "accumulate_kernel BLOCK=32" in out.stderr
    # one kernel a line under the note (helper-122: mamba's fifteen configs made a line of 1429 characters)
    assert "(no timing on the CPU):\n    accumulate_kernel BLOCK=32,num_warps=4,num_stages=3\n" in out.stderr
    assert json.loads(report.read_text())["pinned_configs"] == {"accumulate_kernel": ["BLOCK=32,num_warps=4,num_stages=3"]}
    out = run(["capture", "--interpret", "--out", str(tmp_path / "cap"), *prog])
    assert out.returncode == 0, out.stderr[-3000:]
    (entry,) = json.loads((tmp_path / "cap" / "captures.json").read_text())["captures"]
    name = entry["reproducer"].split("::")[0].removesuffix(".py")
    saved = json.loads((tmp_path / "cap" / "data" / f"{name}.json").read_text())
    assert entry["outputs"] == ["acc_ptr"] and saved["config"]["BLOCK"] == 32
    ((status, findings, message),) = replay([tmp_path / "cap" / entry["reproducer"]], tmp_path).values()
    assert status == "pass" and not findings, message


@pytest.mark.interpreter
def test_a_reproducer_of_an_autotuned_launch_sweeps_every_config_its_autotuner_lists(tmp_path):
    """The reproducer replays the captured config through the kernel's own autotuner: `check --gates all-configs`,
    `interpret --all-configs` and `ir --all-configs` on it reach the configs the program did not pick (each with
    the grid the program's grid function gives it), and the gate runs them under the sanitizers. tail_kernel has
    no mask: right for BLOCK=32 (the pick) and 16, out of bounds for 64, which still matches the reference. The
    reproducer used to hand the jit function the captured config: "no autotuned kernel", nothing swept."""
    cap = tmp_path / "cap"
    out = run(["capture", "--interpret", "--out", str(cap), "--", "python", str(DATA / "programs.py"), "autotuned_tail"])
    assert out.returncode == 0, out.stderr[-3000:]
    repro = str(cap / "tail_kernel_0.py")
    grids = json.loads((cap / "data" / "tail_kernel_0.json").read_text())["config_grids"]
    assert [(g["config"]["BLOCK"], g["grid"]) for g in grids] == [(32, [3]), (64, [2]), (16, [6])]
    out = run(["interpret", repro])
    assert out.returncode == 0 and "tail_kernel: BLOCK=32,num_warps=4,num_stages=3  (captured)" in out.stdout, \
        out.stdout[-2000:] + out.stderr[-2000:]
    report = tmp_path / "check.json"
    out = run(["check", "--device", "cpu", "--gates", "correctness,all-configs,determinism", "--json", str(report), repro])
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    gates = {g["gate"]: g for g in json.loads(report.read_text())["extra"]["gates"]}
    assert gates["correctness"]["status"] == "pass" and gates["all-configs"]["status"] == "FAIL", gates
    reason = gates["all-configs"]["reason"]
    assert "1 config run(s) wrong" in reason and "BLOCK=64" in reason and "programs.py:" in reason, reason
    assert gates["determinism"]["reason"].startswith("a reproducer claims nothing"), gates["determinism"]
    out = run(["ir", repro, "--all-configs", "--stage", "ttir"])
    assert out.returncode == 0, out.stderr[-2000:]
    assert [f"BLOCK={b}" in out.stdout for b in (32, 64, 16)] == [True] * 3, out.stdout[:3000]


@pytest.mark.interpreter
def test_a_reproducer_runs_the_pre_hook_of_the_config_it_replays(tmp_path):
    """total_kernel's configs zero the total in a pre_hook, which the autotuner runs before the launch. The
    reproducer handed the bare jit function the config's values, so the hook never ran (compiled, the capture's
    before-state is from before the autotuner's call: 5 + 4950 against the captured 4950)."""
    cap = tmp_path / "cap"
    out = run(["capture", "--interpret", "--out", str(cap), "--", "python", str(DATA / "programs.py"), "pre_hook"])
    assert out.returncode == 0, out.stderr[-3000:]
    out = run(["interpret", str(cap / "total_kernel_0.py")])
    assert out.returncode == 0 and "(captured)" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    assert "pre_hook zeroed the total" in out.stderr, out.stderr[-2000:]  # (interpreted, the capture's total
    # was taken after the hook: only a compiled capture's "before" shows 5.0, tests/gpu/test_program_gpu.py)
    out = run(["interpret", str(cap / "total_kernel_0.py"), "--all-configs"])
    assert out.returncode == 0 and "all 2 config runs agree with the reference" in out.stdout, \
        out.stdout[-2000:] + out.stderr[-2000:]


@pytest.mark.interpreter
def test_the_resources_gate_tells_a_reproducers_spills_whoever_picked_its_config(tmp_path):
    """rowsum's BLOCK=128 / 1-warp config spills on sm_90, its other config does not. Captured under the
    interpreter (which takes the first config) or as a compiled capture (the GPU autotuner's pick), the
    reproducer's spills are told in the gate's reason, never failed."""
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl


        @triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=1), triton.Config({"BLOCK": 16}, num_warps=4)],
                         key=["n"])
        @triton.jit
        def rowsum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            c = tl.arange(0, 128)
            x = tl.load(x_ptr + r[:, None] * n + c[None, :], mask=(r[:, None] < n) & (c[None, :] < n), other=0.0)
            tl.store(y_ptr + r, tl.sum(x * x, axis=1) + tl.sum(tl.exp(x), axis=1), mask=r < n)


        if __name__ == "__main__":
            x = torch.randn(100, 100)
            rowsum[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, torch.empty(100), 100)
    """))
    cap = tmp_path / "cap"
    out = run(["capture", "--interpret", "--out", str(cap), "--", "python", str(prog)])
    assert out.returncode == 0, out.stderr[-3000:]
    repro, meta_file = str(cap / "rowsum_0.py"), cap / "data" / "rowsum_0.json"
    report = tmp_path / "r.json"

    def resources():
        p = run(["check", repro, "--gates", "resources", "--arch", "sm_90", "--json", str(report)])
        (gate,) = json.loads(report.read_text())["extra"]["gates"]
        return p.returncode, gate["status"], gate["reason"]

    # (session 51, helper-100: a reproducer is the program's kernel as it ran; its spills, even those of the
    # config a GPU's autotuner picked, fastest there, are told, not failed: Cut Cross-Entropy's default config)
    for interpreted in (True, False):
        meta = json.loads(meta_file.read_text())
        meta_file.write_text(json.dumps({**meta, "interpreted": interpreted}))
        rc, status, reason = resources()
        assert (rc, status) == (0, "pass") and "with register spills, not gated for a reproducer" in reason, reason
        assert "BLOCK=128,num_warps=1" in reason, reason


@pytest.mark.interpreter
def test_capture_leaves_a_stateful_grid_as_the_launch_left_it_and_replays_a_named_args_prune(tmp_path):
    """Two faults a stranger found in autotuned reproducers: capture evaluates the grid function for every
    listed config, and this one records how many partial sums to add up (the program printed WRONG under
    capture); the replay passed every argument by name, so an early_config_prune reading named_args['n'] got a
    KeyError (the autotuner's nargs holds the positional ones)."""
    prog = tmp_path / "partial.py"
    prog.write_text(textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl


        def prune(configs, named_args, **kwargs):
            return [c for c in configs if c.kwargs["BLOCK"] <= triton.next_power_of_2(named_args["n"])]


        @triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32, 64, 128)], key=["n"],
                         prune_configs_by={"early_config_prune": prune})
        @triton.jit
        def partial_sum(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(part_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), 0))


        if __name__ == "__main__":
            x, part, launched = torch.randn(50), torch.full((64,), 1000.0), {}

            def grid(meta):
                launched["n"] = triton.cdiv(50, meta["BLOCK"])
                return (launched["n"],)

            partial_sum[grid](x, part, 50)
            print("OK" if abs(float(part[:launched["n"]].sum() - x.sum())) < 1e-3 else "WRONG")
    """))
    cap = tmp_path / "cap"
    out = run(["capture", "--interpret", "--out", str(cap), "--", "python", str(prog)])
    assert out.returncode == 0 and out.stdout.strip() == "OK", out.stdout + out.stderr[-3000:]
    out = run(["interpret", str(cap / "partial_sum_0.py")])  # (its partials' layout is the config's: no sweep)
    assert out.returncode == 0 and "partial_sum: BLOCK=16" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]


@pytest.mark.interpreter
def test_ir_on_a_reproducer_compiles_for_the_gpu_it_was_captured_for(tmp_path):
    """With no GPU at hand `ir REPRO` compiles for the arch the capture ran for (here the stand-in's sm_80), not
    the blind default sm_90; --arch still wins."""
    _no_cuda()
    cap = tmp_path / "cap"
    out = run(["capture", "--interpret", "--arch", "sm_80", "--out", str(cap), "--", "python", str(DATA / "programs.py"),
               "autotuned_tail"])
    assert out.returncode == 0, out.stderr[-3000:]
    out = run(["ir", str(cap / "tail_kernel_0.py"), "--stage", "ptx"])
    assert out.returncode == 0 and ".target sm_80" in out.stdout, out.stdout[:2000] + out.stderr[-2000:]
    assert "recorded at capture" in out.stdout + out.stderr
    out = run(["ir", str(cap / "tail_kernel_0.py"), "--stage", "ptx", "--arch", "sm_90"])
    assert out.returncode == 0 and ".target sm_90" in out.stdout, out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_reproducer_says_which_outputs_the_replayed_kernel_no_longer_writes(tmp_path):
    """A regression that stops a kernel writing part of its output: the replay's mismatch message says those
    elements still hold their bytes from before the launch (it showed "got 0" and left the reader to guess)."""
    prog = tmp_path / "fill.py"
    prog.write_text(textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def fill_kernel(y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, offs.to(tl.float32) + 1, mask=offs < n)


        if __name__ == "__main__":
            y = torch.zeros(100)
            fill_kernel[(4,)](y, 100, BLOCK=32)
    """))
    out = run(["capture", "--interpret", "--out", str(tmp_path / "cap"), "--", "python", str(prog)])
    assert out.returncode == 0, out.stderr[-3000:]
    prog.write_text(prog.read_text().replace("mask=offs < n)", "mask=offs < n - 10)"))
    out = run(["interpret", str(tmp_path / "cap" / "fill_kernel_0.py")])
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    assert "10 element(s) of y_ptr differ from the capture and still hold what they held before the launch" \
        in out.stdout, out.stdout[-2000:]


@pytest.mark.interpreter
def test_a_config_with_a_compile_option_among_its_kwargs_replays(tmp_path):
    """helper-138 (FBGEMM's fp8 GEMM configs carry AMD's waves_per_eu, matrix_instr_nonkdim, kpack in their
    kwargs): those are compile options, not kernel arguments, so the grid function's meta never holds them, and the
    reproducer said "this config's grid was not recorded at capture" for the very config the program ran."""
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import torch, triton, triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK": 32, "waves_per_eu": 2}, num_warps=2)], key=["n"])
        @triton.jit
        def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

        x = torch.randn(100)
        y = torch.empty(100)
        twice[lambda meta: (triton.cdiv(100, meta["BLOCK"]),)](x, y, 100)
        print("ok", bool((y == 2 * x).all()))
    """))
    out = run(["capture", "--interpret", "--out", str(tmp_path / "cap"), "--", sys.executable, str(prog)])
    assert out.returncode == 0 and "ok True" in out.stdout, out.stdout[-1000:] + out.stderr[-3000:]
    out = run(["interpret", str(tmp_path / "cap" / "twice_0.py")])
    assert out.returncode == 0 and "waves_per_eu=2" in out.stdout and "not recorded" not in out.stdout + out.stderr, \
        out.stdout[-2000:] + out.stderr[-2000:]


@pytest.mark.interpreter
def test_an_in_place_reproducer_replays_from_the_captured_bytes_each_time(tmp_path):
    """accumulate_kernel adds x into acc in place: each config of an --all-configs sweep starts from the bytes
    captured before the launch (the runs of one process shared, and added into, the saved tensors: got 397,
    expected 100)."""
    cap = tmp_path / "cap"
    out = run(["capture", "--interpret", "--out", str(cap), "--", "python", str(DATA / "programs.py"), "autotuned"])
    assert out.returncode == 0, out.stderr[-3000:]
    out = run(["interpret", str(cap / "accumulate_kernel_0.py"), "--all-configs"])
    assert out.returncode == 0 and "all 3 config runs agree with the reference" in out.stdout, \
        out.stdout[-2000:] + out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_launch_from_python_dash_c_names_its_line():
    """`python -c CODE` has no file: its frames are "<string>", which were dropped with Python's own ("<frozen
    runpy>"), and the finding said "[launched from ?]". A program that runs no pytest names no test, though the
    PYTEST_CURRENT_TEST of a test that started it reaches its environment."""
    code = textwrap.dedent("""
        import torch, triton, triton.language as tl

        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)

        k[(1,)](torch.zeros(10), BLOCK=16)
    """)
    out = run(["interpret", "--", sys.executable, "-c", code])
    # (and no "in test ...": this test's PYTEST_CURRENT_TEST reaches the program, which runs no pytest)
    assert out.returncode == 1 and "[launched from <string>:9 (<module>)]" in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
def test_each_autotune_key_runs_the_first_config_its_own_pruning_keeps(tmp_path):
    """n = 1024 keeps BLOCK=256 first, n = 192 only BLOCK=64 (an early_config_prune for a kernel with no mask): the
    second key ran BLOCK=256 (grid 0, the output never written) when the pruning was done once per kernel."""
    report = tmp_path / "f.json"
    out = run(["interpret", "--json", str(report), "--", "python", str(DATA / "programs.py"), "pruned"])
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert json.loads(report.read_text())["pinned_configs"] == {
        "triple_kernel": ["BLOCK=256,num_warps=4,num_stages=3", "BLOCK=64,num_warps=4,num_stages=3"]}
    assert "one config per autotune key" in out.stderr


def _no_cuda():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the tensors are made there")


@pytest.mark.interpreter
@pytest.mark.parametrize("order", ["tensors", "triton_first"])
def test_a_script_written_for_the_gpu_runs_its_cuda_tensors_on_the_cpu(order, tmp_path):
    """torch.randn(..., device="cuda"), .cuda(), .to("cuda:0"), device=0, pin_memory, set_default_device("cuda"):
    without a GPU each of these died before the first launch ("Torch not compiled with CUDA enabled"); under
    `interpret --` they are CPU tensors, the kernels run and the run says how many requests were moved. torch's
    warnings name the program's line, not tritondbg's function mode."""
    _no_cuda()
    record = tmp_path / "r.json"
    out = run(["interpret", "--json", str(record), "--", sys.executable, str(DATA / "cuda_by_name.py"), order])
    assert out.returncode == 0, out.stderr[-2000:]
    assert "devices ['cuda:0']" in out.stdout          # as on a GPU (the program's code asks)
    err = float(out.stdout.split("max error ")[1].split()[0])
    assert err < 0.1, out.stdout                       # bf16 chained five times; a wrong input would be ~1
    assert "warned at ['cuda_by_name.py:" in out.stdout, out.stdout
    assert json.loads(record.read_text())["launches"] == {"axpy_kernel": 5}
    assert "note: 6 request(s) for a CUDA tensor or device were served on the CPU" in out.stderr, out.stderr
    assert "besides cuda:0" not in out.stderr, out.stderr


@pytest.mark.interpreter
def test_a_reinterpreted_view_of_a_cuda_tensor_is_on_cuda():
    """helper-138: triton.reinterpret(x) of a "cuda" tensor said device cpu (Triton's TensorWrapper copies
    x.device inside Triton's code, which the stand-in answers as torch's own), and FBGEMM's blockwise fp8 GEMM
    stopped at its "not supported on cpu" check."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "reinterpret_view.py")])
    assert out.returncode == 0 and "device cuda:0 values [1.0, 2.0, -1.0, 0.0]" in out.stdout, \
        out.stdout[-1000:] + out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_fullgraph_compile_over_a_custom_op_on_cuda_tensors_runs(tmp_path):
    """helper-138 (FBGEMM's test_matmul_fp8_row_skip_scaling): torch.compile(fullgraph=True) over a custom op that
    returns a tuple traced the stand-in's mode, whose setattr of its tag on a traced tensor is unsupported: the
    program failed under tritondbg alone. torch.compile's own read of torch.version.cuda is no program's."""
    _no_cuda()
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import torch

        @torch.library.custom_op("tdbg_test::twice", mutates_args=())
        def twice(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return x * 2, x.sum(-1)

        @twice.register_fake
        def _(x):
            return torch.empty_like(x), x.new_empty(x.shape[:-1])

        @torch.compile(fullgraph=True)
        def f(x):
            a, s = twice(x)
            return a + s

        print("out", f(torch.ones(4, device="cuda")).tolist())
    """))
    out = run(["interpret", "--", sys.executable, str(prog)], timeout=600)
    assert "out [6.0, 6.0, 6.0, 6.0]" in out.stdout, out.stdout[-1000:] + out.stderr[-3000:]
    assert "torch.version.cuda" not in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
def test_an_ops_autograd_cuda_kernel_serves_the_cpu_too():
    """helper-138 (FBGEMM's sll ops register CUDA and AutogradCUDA kernels): the CUDA kernel was copied to the CPU
    key, the AutogradCUDA one not, and torch warned "an autograd kernel was not registered to the Autograd key(s)
    ... may lead to silently incorrect behavior", which a GPU never shows."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "autograd_cuda_op.py")])
    assert out.returncode == 1 and "grad [2.0, 2.0, 2.0, 2.0] warned False" in out.stdout, \
        out.stdout[-1000:] + out.stderr[-2000:]  # (exit 1: the program launches no Triton kernel)


@pytest.mark.interpreter
def test_a_read_of_torch_version_cuda_is_named_in_the_note():
    """helper-135: lmdeploy's is_bf16_supported reads torch.version.cuda, None on torch's CPU build, and its bf16
    tests skipped without a word though the interpreter runs bf16 kernels; ColossalAI's tests failed at import on
    version.parse(None) (helper-142). The program reads a CUDA version (None under --arch gfx942, as ROCm's torch
    says); the note names the line that read it."""
    _no_cuda()
    prog = DATA / "cuda_version_check.py"
    out = run(["interpret", "--", sys.executable, str(prog)])
    assert out.returncode == 0 and "dtype torch.bfloat16 2.0" in out.stdout and "parsed True" in out.stdout, \
        out.stdout[-1000:] + out.stderr[-2000:]
    line = next(i for i, ln in enumerate(prog.read_text().splitlines(), 1) if "# READS" in ln)
    assert f"the program read torch.version.cuda at {os.path.relpath(prog)}:{line} (and 1 more place(s)): the " \
        "stand-in answered '12.8'" in out.stderr, out.stderr[-2000:]
    out = run(["interpret", "--arch", "gfx942", "--", sys.executable, str(prog)])
    assert out.returncode == 1 and "InvalidVersion: Invalid version: None" in out.stderr \
        and "read torch.version.cuda" not in out.stderr, \
        out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_program_for_several_gpus_is_told_its_devices_are_one_here():
    """helper-132: cuda:1, set_device(2) and torch.cuda.device(3) are served as the CPU (one device there), so a
    multi-GPU program runs; its placement was not said. The note names the ordinals besides cuda:0 (Triton's
    device interface's set_device too: session 59's review)."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "cuda_ordinals.py")])
    assert out.returncode == 0 and "sum 16.0" in out.stdout, out.stderr[-2000:]
    assert ("they named cuda:1, cuda:2, cuda:3, cuda:4 besides cuda:0 (one device here: the tensors of every GPU are on "
            "the CPU together, and which GPU a launch would run on is not checked)") in out.stderr, out.stderr


@pytest.mark.interpreter
def test_moves_between_the_host_and_cuda_copy_as_on_a_gpu():
    """helper-70: ``x.cuda()`` / ``x.to("cuda")`` returned x itself, so a test of an in-place kernel (lightllm's
    rotary) computed its reference from the host tensor the kernel had just changed and failed a correct kernel.
    A host tensor's move is a copy now; a "cuda" tensor's ``.cuda()`` / ``.to(its .device)`` is itself (a
    library's ``x.to(w.device)`` before an in-place update), and its ``.cpu()`` a copy (a snapshot)."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "cuda_by_name.py"), "alias"])
    assert out.returncode == 0, out.stderr[-2000:]
    assert "alias True True True True True True True" in out.stdout, out.stdout


@pytest.mark.interpreter
def test_autocast_named_for_cuda_runs_on_the_cpu_at_cudas_dtype():
    """``torch.autocast("cuda")`` on a machine without CUDA: torch disabled it with a warning and the kernel got
    float32 where a GPU gives it float16 (a user's report); GradScaler("cuda") likewise; the autocast state asked
    for CUDA is the CPU's (helper-74); a float32 CUDA autocast is off, with a note instead of torch's warning."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "cuda_by_name.py"), "amp"])
    assert out.returncode == 0, out.stderr[-2000:]
    assert "amp torch.float16 torch.bfloat16 torch.float16 scaler enabled True" in out.stdout, out.stdout
    # helper-74: inside CUDA autocast torch.is_autocast_enabled("cuda") said False (attorch's tests failed on dtypes)
    assert "state True True torch.bfloat16 torch.float32 False" in out.stdout, out.stdout
    assert "Disabling" not in out.stderr and "8 request(s) for a CUDA tensor or device" in out.stderr, out.stderr
    assert "1 torch.autocast('cuda') block(s) with a dtype other than float16 / bfloat16" in out.stderr, out.stderr
    # CUDA autocast's op lists (tritondbg/program/cuda_autocast.py), the CPU's under an inner autocast("cpu")
    assert ("lists float32 float32 float32 float32 float32 float32 float16 float16 float16 float16"
            in out.stdout), out.stdout


@pytest.mark.interpreter
def test_a_cuda_tensor_says_it_is_on_cuda_to_the_programs_code():
    """``x.is_cuda`` / ``x.device`` said cpu: a library's own check (``assert x.is_cuda``, fla's "Only support
    CUDA/NPU/XPU tensors") refused the program's "cuda" tensors, and code branching on the device (Liger's
    backward grid by SM count) took its CPU branch, so the launch checked was not the GPU run's. A "cuda" tensor,
    what ops make of it and a Parameter of one say cuda:0 to the program's code, as Triton's
    ``get_active_torch_device()`` does (tutorial 01's ``x.device == DEVICE`` holds); a host tensor says cpu;
    ``.to(torch.device("cpu"))`` is a copy."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "cuda_by_name.py"), "queries"])
    assert out.returncode == 0, out.stderr[-2000:]
    assert "queries True False cuda:0 cuda 0 cuda:0 True cuda:0 cuda:0 False cpu True True True" in out.stdout, \
        out.stdout + out.stderr[-2000:]
    # helper-78: torch.load(map_location="cpu") said cuda:0, Module.cpu() left cuda:0, torch.compile failed
    assert "more cpu cpu True cuda:0 4" in out.stdout, out.stdout + out.stderr[-2000:]
    assert "1 launch(es), 0 finding(s)" in out.stderr, out.stderr[-2000:]


@pytest.mark.interpreter
def test_what_a_cuda_path_asks_of_torch_that_a_cpu_build_lacks(tmp_path):
    """helper-79, once "cuda" tensors said cuda:0: Liger's fused linear cross entropy took its CUDA path and died on
    ``torch.addmm(..., out_dtype=torch.float32, out=...)`` (no CPU kernel); ``torch.load(f, map_location="cuda")``
    and a checkpoint saved on a GPU failed to load; a custom backward's incoming gradient said cpu; and a
    checkpoint saved under tritondbg carried its tag into the user's file; one saved from "cuda" tensors and loaded
    without map_location came back on the host (helper-136: gemlite's own test). The memory figures say 0."""
    import torch
    import torch.serialization as serialization

    _no_cuda()
    location = serialization.location_tag
    serialization.location_tag = lambda storage: "cuda:0"  # a checkpoint as a GPU machine writes it
    try:
        torch.save({"w": torch.ones(2)}, tmp_path / "gpu.pt")
    finally:
        serialization.location_tag = location
    out = run(["interpret", "--", sys.executable, str(DATA / "cuda_by_name.py"), "fallbacks", str(tmp_path)])
    assert out.returncode == 0, out.stderr[-3000:]
    assert "fallbacks " in out.stdout, out.stdout + out.stderr[-2000:]
    err, *rest = out.stdout.split("fallbacks ")[1].split()
    assert float(err) < 1e-4 and rest == ["cuda:0", "cuda:0", "cpu", "cuda:0", "cuda:0", "cuda:0", "0", "0",
                                          "1,2,0,1,0,0,0,3", "torch.int64", "cuda:0"], out.stdout
    assert out.stderr.count("torch.cuda's memory figures are 0 under the interpreter") == 1, out.stderr[-2000:]
    # the user's file holds no tritondbg attribute, and its storages name cuda:0 as a GPU's would
    assert torch.load(tmp_path / "mine.pt", map_location="cpu")["w"].__dict__ == {}
    with pytest.raises(RuntimeError, match="CUDA device"):
        torch.load(tmp_path / "mine.pt")


@pytest.mark.interpreter
@pytest.mark.parametrize("bug", [True, False])
def test_a_host_tensor_handed_to_a_launch_beside_cuda_ones_is_an_error(bug):
    """helper-79: ``y = torch.ones(n)`` (``device="cuda"`` forgotten) beside "cuda" tensors: a GPU refuses the launch
    ("Pointer argument ... cannot be accessed from Triton (cpu tensor?)"); the interpreter ran it and said nothing.
    Pinned memory and the null pointer of an empty tensor, which a GPU takes, are no finding."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "cuda_by_name.py"), "host", *(["bug"] if bug else [])])
    assert "host " in out.stdout, out.stdout + out.stderr[-2000:]
    assert float(out.stdout.split("host ")[1].split()[0]) < 1e-5, out.stdout  # x + y, up to fp32 rounding
    lines = [ln for ln in out.stderr.splitlines() if "is a host tensor" in ln and ln.startswith("  kernel_error")]
    if bug:
        assert out.returncode == 1, out.stderr[-2000:]
        assert len(lines) == 1 and "kernel_error: tests/program_data/cuda_by_name.py" in lines[0] and \
            "tensor y_ptr: y_ptr is a host " \
            "tensor (made on the CPU by the program, or moved there) while x_ptr, out_ptr are on \"cuda\": a GPU " \
            "refuses this launch" in lines[0], out.stderr[-2000:]
        # the interpreter ran it and raised nothing into the program (helper-132: the line said it did)
        told = [ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: kernel_error") and "host tensor" in ln]
        assert len(told) == 1 and "raised into the program" not in told[0], out.stderr[-2000:]
    else:
        assert out.returncode == 0 and not lines, out.stderr[-2000:]


@pytest.mark.interpreter
def test_capture_without_a_gpu_serves_cuda_tensors_too(tmp_path):
    _no_cuda()
    out = run(["capture", "--out", str(tmp_path / "cap"), "--", sys.executable, str(DATA / "cuda_by_name.py"),
               "tensors"])
    assert out.returncode == 0 and "reproducer(s)" in out.stderr, out.stderr[-2000:]
    assert "were served on the CPU" in out.stderr


@pytest.mark.interpreter
def test_a_cuda_only_torch_object_gets_one_line_saying_what_to_do():
    """torch.cuda.CUDAGraph() on a machine without CUDA: the program's own traceback, then one tritondbg line;
    the exit status is the program's."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "cuda_by_name.py"), "rng"])
    assert out.returncode == 1 and "Traceback" in out.stderr, out.stderr[-2000:]
    hint = [ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: the program used a CUDA-only part")]
    assert len(hint) == 1 and "no graph capture" in hint[0], out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_benchmarks_streams_events_and_memory_figures_stand_in():
    """``torch.cuda.Event(enable_timing=True)`` (every benchmark script), a side ``Stream``, ``current_stream()``,
    ``record_stream``, ``max_memory_allocated()``, ``torch.Generator(device="cuda")``, ``torch.cuda.nvtx`` ranges,
    ``memory_summary()``: each died ("Torch not compiled with CUDA enabled", "Cannot get CUDA generator", "NVTX
    functions not installed", a KeyError) under ``interpret --`` without a GPU. The launches run in program order on the one CPU stream; ``elapsed_time`` is
    NaN with one note (as do_bench is); the memory figures are 0."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "cuda_by_name.py"), "timing"])
    assert out.returncode == 0, out.stderr[-2000:]
    assert "timing nan nan 0 [2.0, 2.0] 0 True cuda:0 True" in out.stdout, out.stdout + out.stderr[-2000:]
    assert out.stderr.count("torch.cuda.Event.elapsed_time returns NaN under the interpreter") == 1, out.stderr
    assert "1 launch(es), 0 finding(s)" in out.stderr, out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_worker_threads_cuda_tensor_is_made_on_the_cpu():
    """Function modes are per thread: each thread the program starts enters one (a thread's "cuda" failed)."""
    _no_cuda()
    out = run(["interpret", "--", sys.executable, str(DATA / "cuda_by_name.py"), "thread"])
    assert "thread: made" in out.stdout, out.stdout + out.stderr


@pytest.mark.interpreter
@pytest.mark.parametrize("how", ["script", "pytest", "device_assert"])
def test_a_kernel_error_traceback_holds_the_programs_frames_not_tritondbgs(how):
    """The traceback of an error raised through a wrapped launch went through ~10 frames of tritondbg (standin,
    attach, checker, interp/hooks) between the program's line and Triton's; they are left out, by Python's printer
    and by pytest's. A failed device_assert too, though tritondbg's shim raises it (helper-132 saw two frames)."""
    prog = str(DATA / "kernel_error.py")
    cmd = {"script": [sys.executable, prog], "device_assert": [sys.executable, prog, "assert"],
           "pytest": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", prog]}[how]
    out = run(["interpret", "--", *cmd])
    text = out.stdout + out.stderr
    said = "x must stay below 5" if how == "device_assert" else "must be a power of 2"
    assert out.returncode == 1 and said in text and ("Traceback" in text or how == "pytest"), text[-3000:]
    assert "kernel_error.py" in text and "interpreter.py" in text, text[-3000:]
    frames = [ln for ln in text.splitlines() if ("tritondbg/" in ln or "tritondbg\\" in ln)
              and (ln.lstrip().startswith("File ") or ".py:" in ln)]
    assert not frames, frames


@pytest.mark.parametrize("how", ["fallback", "pytest.raises"])
def test_a_kernel_error_the_program_caught_is_a_warning(how, tmp_path):
    """A launch that raises into a program that handles it (a negative test's ``pytest.raises``, a ``try`` with a
    fallback) and exits 0: the run exited 1 where the bare interpreter's exits 0 (a user's report). The finding
    stays, as a warning that says the program caught it; uncaught, it is still an error (test above)."""
    prog = str(DATA / "kernel_error.py")
    cmd = ([sys.executable, prog, "fallback"] if how == "fallback" else
           [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", prog, "-k", "refused"])
    out = run(["interpret", "--json", str(tmp_path / "r.json"), "--", *cmd])
    assert out.returncode == 0, out.stderr[-3000:]
    line = [ln for ln in out.stderr.splitlines() if ln.lstrip().startswith("warning: kernel_error:")]
    assert len(line) == 1 and line[0].endswith("the program caught the error and went on (--strict fails the run "
                                               "on it)"), out.stderr[-3000:]
    (finding,) = json.loads((tmp_path / "r.json").read_text())["findings"]
    assert finding["severity"] == "warning" and finding["handled"] is True
    strict = run(["interpret", "--strict", "--", *cmd])  # for CI: a fallback must not hide a broken kernel
    lines = [ln for ln in strict.stderr.splitlines() if ln.startswith("  kernel_error: ")]  # an error, not a warning
    assert strict.returncode == 1 and len(lines) == 1 and "kernel_error.py:12 " in lines[0], strict.stderr[-3000:]


def test_an_error_raised_inside_tritondbg_keeps_every_frame(monkeypatch):
    from tritondbg.program import attach, tracebacks

    monkeypatch.setattr(tracebacks, "hide_from_pytest", lambda: None)  # no marking of this process's modules
    monkeypatch.setattr(attach, "_launches", {})
    monkeypatch.setattr(attach, "_fns", {})

    def boom():
        raise KeyError("the program's")

    try:
        attach.observe(-1, object(), lambda: None, boom)   # through a tritondbg frame
    except KeyError as exc:
        tracebacks.strip(exc)
        files = [f.filename for f in __import__("traceback").extract_tb(exc.__traceback__)]
        assert files and not any(tracebacks.ours(f) for f in files), files
        assert files[-1] == __file__
    try:
        tracebacks.ours(None)  # a bug of ours: its innermost frame is tritondbg's
    except AttributeError as exc:
        tracebacks.strip(exc)
        files = [f.filename for f in __import__("traceback").extract_tb(exc.__traceback__)]
        assert tracebacks.ours(files[-1]), files


def test_a_ctrl_c_inside_tritondbgs_frames_is_not_shown_as_ours(monkeypatch):
    """Ctrl-C during a launch raises KeyboardInterrupt in tritondbg's SIGINT handler, mid-shim: its traceback had
    tritondbg's frames (the 'raised inside tritondbg' rule); an interrupt is where the program was, not a bug."""
    from tritondbg.program import exits, tracebacks

    monkeypatch.setitem(exits._state, "sigint_at", None)
    try:
        exits._sigint_once(signal.SIGINT, None)
    except KeyboardInterrupt as exc:
        tracebacks.strip(exc)
        files = [f.filename for f in __import__("traceback").extract_tb(exc.__traceback__)]
        assert files == [__file__], files


def test_a_ctrl_c_in_an_interpreted_launch_leaves_tritons_frames_out_too():
    """The traceback of a Ctrl-C in a launch ran through some forty lines of Triton's interpreter between the
    program's line and the kernel's (a stranger's find): the program's and the kernel's frames stay."""
    import triton
    from triton.runtime import interpreter

    from tritondbg.program import tracebacks

    def kernel_line():
        raise KeyboardInterrupt

    def triton_frame(fn):  # a frame whose code is in Triton's folder, as the interpreter's are
        code = compile("def run(fn):\n    fn()\n", interpreter.__file__, "exec")
        scope: dict = {}
        exec(code, scope)
        scope["run"](fn)

    try:
        triton_frame(kernel_line)
    except KeyboardInterrupt as exc:
        tracebacks.strip(exc)
        frames = [(os.path.basename(f.filename), f.name) for f in __import__("traceback").extract_tb(exc.__traceback__)]
        assert frames == [("test_program.py", "test_a_ctrl_c_in_an_interpreted_launch_leaves_tritons_frames_out_too"),
                          ("test_program.py", "triton_frame"), ("test_program.py", "kernel_line")], frames
        assert triton.__file__  # (Triton is loaded: its folder is the one left out)


@pytest.mark.interpreter
def test_a_launch_through_address_tables_replays_with_its_tensors(tmp_path):
    """A grouped kernel handed int64 tables of data pointers (Triton's tutorial 08, MoE): capture saved the tables
    alone, and the replay read the capturing process's addresses (every load "points into no argument tensor").
    The tensors behind the tables are saved and the replay's tables point at its own copies; int64 values that
    are not addresses are left as they are. A uint64 table (vLLM's LoRA, helper-69) is one too."""
    cap = tmp_path / "cap"
    out = run(["capture", "--out", str(cap), "--max-per-kernel", "2", "--", sys.executable, str(DATA / "grouped.py")])
    assert out.returncode == 0 and "grouped OK" in out.stdout, out.stdout + out.stderr[-2000:]
    meta = json.loads((cap / "data" / "grouped_scale_kernel_0.json").read_text())
    assert sorted(meta["outputs"]) == [f"out_ptrs[{i}]" for i in range(4)], meta["outputs"]
    assert len(meta["pointers"]) == 8 and json.loads((cap / "data" / "mix_kernel_0.json").read_text())["pointers"] == []
    for name in ("grouped_scale_kernel_0", "mix_kernel_0"):
        replay = run(["interpret", str(cap / f"{name}.py")], cwd=tmp_path)
        assert replay.returncode == 0 and "1/1 passed" in replay.stdout and "out_of_bounds" not in replay.stdout, \
            replay.stdout + replay.stderr[-2000:]
    assert replay.stdout.count(" ok") == 1  # mix_kernel: its output equals the capture's (the hashes untouched)
    # an fp64 launch replays as fp64 with fp64's tolerance (it was labelled float32 and checked at 1e-4)
    replay = run(["interpret", str(cap / "grouped_scale_kernel_1.py")], cwd=tmp_path)
    assert replay.returncode == 0 and "dtype=float64" in replay.stdout and "atol=1e-08" in replay.stdout, replay.stdout


@pytest.mark.interpreter
def test_a_launch_through_tables_that_changed_no_byte_compares_its_tensors_not_the_tables(tmp_path):
    """helper-81: the replay of a grouped GEMM launch that changed no byte compared every tensor, the pointer
    tables too, whose entries are each process's addresses ("arg0 (1,): got 9.41584e+13, expected 9.4792e+13":
    FAIL), and named them arg0..arg7. The tables are left out, the rest named by argument path."""
    cap = tmp_path / "cap"
    out = run(["capture", "--out", str(cap), "--max-per-kernel", "3", "--", sys.executable, str(DATA / "grouped.py")])
    assert out.returncode == 0 and "grouped OK" in out.stdout, out.stdout + out.stderr[-2000:]
    assert json.loads((cap / "data" / "grouped_scale_kernel_2.json").read_text())["outputs"] == {}
    replay = run(["interpret", str(cap / "grouped_scale_kernel_2.py")], cwd=tmp_path)
    assert replay.returncode == 0 and "1/1 passed" in replay.stdout, replay.stdout + replay.stderr[-2000:]
    assert "in_ptrs[0] (70,)" in replay.stdout and "sizes (1,)" in replay.stdout, replay.stdout
    assert "arg0" not in replay.stdout and "in_ptrs (1,)" not in replay.stdout, replay.stdout


@pytest.mark.interpreter
def test_a_launch_that_raises_outside_the_kernel_is_not_counted_as_checked():
    """helper-50: a launch that raised on its arguments (FlagGems' StridedBuffer, before the shim) printed
    "1 launches, 1 checked, 0 findings": nothing ran, so nothing was checked. It is a kernel_error now (a warning
    when the program caught it) and the table counts it as not checked."""
    out = run(["interpret", "--", sys.executable, str(DATA / "programs.py"), "raise_early"])
    assert out.returncode == 0 and "caught: no pointer here" in out.stdout, out.stdout + out.stderr
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: kernel_error"))
    assert "raised outside the kernel's code, so no program ran and nothing was checked" in line, line
    assert "RuntimeError: no pointer here" in line, line
    row = next(ln.split() for ln in out.stderr.splitlines() if ln.strip().startswith("unmasked_copy_kernel"))
    assert row[1:3] == ["2", "1"], out.stderr  # 2 launches, 1 checked
    assert "the program caught the error and went on" in out.stderr, out.stderr
    # the summary line at the end says the error's own words too
    summary = next(ln for ln in out.stderr.splitlines() if ln.startswith("  warning: kernel_error"))
    assert "RuntimeError: no pointer here" in summary, summary


@pytest.mark.interpreter
def test_an_out_of_bounds_load_finding_says_what_the_program_got():
    """The finding said the lanes "hold poison: NaN for floats": in a program they hold the plain interpreter's 0
    (the launch runs again without the poison and the program keeps that run), and the program printed 0."""
    out = run(["interpret", "--", sys.executable, str(DATA / "programs.py"), "oob_load"])
    assert out.returncode == 1 and "y[98:102] [1.0, 1.0, 0.0, 0.0]" in out.stdout, out.stdout + out.stderr
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: out_of_bounds"))
    assert "your program got 0 there" in line and "here they hold poison" not in line, line
    # x's tail is y's memory: the program read y there (a plain interpreter run, as a GPU would), not 0
    out = run(["interpret", "--", sys.executable, str(DATA / "programs.py"), "oob_neighbour"])
    assert "y[98:102] [1.0, 1.0, 1.0, 1.0]" in out.stdout, out.stdout  # x[100:] is y[:28], which program 0 set
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: out_of_bounds"))
    assert "28 lane(s)" in line and "28 of them land in another argument, e.g. y_ptr[0]" in line, line
    assert "your program read the other argument's values there" in line and "got 0" not in line, line


@pytest.mark.parametrize("code, rc, said", [("print('no kernel here')", 1, "no Triton launch: nothing captured"),
                                             ("raise SystemExit(3)", 3, "no Triton launch; the program exited with "
                                              "status 3: nothing captured")])
def test_capture_of_a_program_that_launches_nothing_says_so_and_leaves_no_folder(code, rc, said, tmp_path):
    """It printed '0 launch(es) of 0 kernel(s); 0 reproducer(s), 0 B' and left a folder holding an empty
    captures.json (and, after a crash, "the 0 reproducer(s) written before are kept")."""
    (tmp_path / "prog.py").write_text(code + "\n")
    out = run(["capture", "--out", str(tmp_path / "cap"), "--", sys.executable, str(tmp_path / "prog.py")])
    assert out.returncode == rc and out.stderr.strip().splitlines()[-1] == f"tritondbg capture: {said}", out.stderr
    assert not (tmp_path / "cap").exists()


@pytest.mark.interpreter
def test_a_big_capture_lists_twenty_reproducers_and_counts_the_rest(tmp_path):
    """One line per reproducer was 1000 lines after `--max-per-kernel 1000`; captures.json has them all."""
    (tmp_path / "prog.py").write_text(
        "import torch, triton, triton.language as tl\n"
        "@triton.jit\n"
        "def inc(x_ptr):\n"
        "    tl.store(x_ptr, tl.load(x_ptr) + 1)\n"
        "for i in range(25):\n"
        "    inc[(1,)](torch.zeros(i + 1))  # another shape each time: another reproducer\n")
    cap = tmp_path / "cap"
    out = run(["capture", "--interpret", "--max-per-kernel", "100", "--out", str(cap), "--", sys.executable,
               str(tmp_path / "prog.py")])
    assert out.returncode == 0, out.stderr[-2000:]
    listed = [ln for ln in out.stderr.splitlines() if "launched from" in ln]
    assert len(listed) == 19, out.stderr
    assert f"  ... and 6 more reproducer(s): {cap / 'captures.json'} lists them all" in out.stderr, out.stderr
    assert len(json.loads((cap / "captures.json").read_text())["captures"]) == 25


@pytest.mark.interpreter
def test_capture_counts_the_distinct_launches_past_max_per_kernel(tmp_path):
    """Distinct launches past --max-per-kernel were dropped without a word (captures.json "skipped": []), where
    the README promised them counted (a stranger's find): now the summary and captures.json say how many."""
    prog = tmp_path / "many.py"
    prog.write_text(textwrap.dedent("""
        import torch, triton, triton.language as tl

        @triton.jit
        def bump(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

        for n in (10, 20, 30, 30, 40):  # 4 distinct (30 twice)
            bump[(1,)](torch.zeros(n), n, BLOCK=64)
        bump[(1,)](torch.zeros(10, dtype=torch.float16), 10, BLOCK=64)
    """))
    for per_kernel, more in ((1, 4), (3, 2), (5, 0)):
        cap = tmp_path / f"cap{per_kernel}"
        out = run(["capture", "--interpret", "--max-per-kernel", str(per_kernel), "--out", str(cap), "--", "python",
                   str(prog)])
        assert out.returncode == 0, out.stderr[-2000:]
        doc = json.loads((cap / "captures.json").read_text())
        assert len(doc["captures"]) == per_kernel and doc["not_saved"] == ({"bump": more} if more else {}), doc
        said = f"not saved: {more} more distinct launch(es) of bump"
        assert (said in out.stderr) == bool(more), out.stderr[-2000:]


def test_a_damaged_reproducer_data_file_is_one_line_naming_it(tmp_path):
    """A reproducer whose tensors were cut short (a disk full, a kill mid-copy) or whose JSON was overwritten: the
    run said make_inputs raised torch's "PytorchStreamReader failed reading zip archive" (exit 1, as if the case
    failed), or named Python's json module; now one line naming the file, exit 2, for interpret and ir."""
    cap = tmp_path / "cap"
    out = run(["capture", "--interpret", "--out", str(cap), "--", sys.executable, str(DATA / "programs.py"), "oob_load"])
    assert out.returncode == 0, out.stderr[-2000:]
    (repro,) = cap.glob("unmasked_copy_kernel_*.py")
    data = cap / "data" / f"{repro.stem}.pt"
    data.write_bytes(data.read_bytes()[:100])
    for cmd in (["interpret", str(repro)], ["ir", str(repro)]):
        bad = run(cmd)
        assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
            f"error: reproducer {repro.stem}: {data} is damaged (not the tensor file capture wrote: File is not a zip "
            "file)"], (cmd, bad.stderr[-2000:])
    data.unlink()  # gone (a folder copied without data/): one line too (helper-97: it named replay.py's insides)
    bad = run(["interpret", str(repro)])
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        f"error: reproducer {repro.stem}: its tensor file {data} is missing (capture wrote it under data/ beside the "
        "reproducer: copy the capture folder whole, or capture again)"], bad.stderr[-2000:]
    meta = data.with_suffix(".json")
    meta.write_text("{\n")
    bad = run(["interpret", str(repro)])
    assert bad.returncode == 2 and f"{meta} is damaged (not the JSON capture wrote" in bad.stderr, bad.stderr[-2000:]


@pytest.mark.interpreter
def test_a_program_killed_by_a_segfault_still_reports_its_launches():
    """A segfault in the program's C code after its launches: no exit hook runs, and the report said "0
    launch(es)" beside the findings of those launches. The counts are written as the launches go (child.checkpoint,
    at most once a second: the first launch's at once)."""
    out = run(["interpret", "--", sys.executable, str(DATA / "programs.py"), "oob_then_segv"])
    assert out.returncode == 139, out.stderr[-3000:]
    row = next(ln.split() for ln in out.stderr.splitlines() if ln.strip().startswith("unmasked_copy_kernel "))
    assert row[1:3] == ["1", "1"], out.stderr[-3000:]   # launched once, checked once (the first launch's write)
    assert "finding(s)" in out.stderr and "0 launch(es)" not in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
def test_a_capture_killed_by_a_segfault_counts_its_launches_as_a_floor(tmp_path):
    """capture after a segfault said "0 launch(es) of 0 kernel(s); 1 reproducer(s)": the capture feature never
    wrote its counts as it ran (only interpret's checker did), and a count written at most once a second is a
    floor once the process is killed."""
    out = run(["capture", "--interpret", "--out", str(tmp_path / "c"), "--", sys.executable,
               str(DATA / "programs.py"), "oob_then_segv"])
    assert out.returncode == 139, out.stderr[-3000:]
    assert "tritondbg capture: at least 2 launch(es) of 2 kernel(s) (the program was killed" in out.stderr, \
        out.stderr[-3000:]
    assert "0 launch(es)" not in out.stderr, out.stderr[-3000:]
    out = run(["interpret", "--", sys.executable, str(DATA / "programs.py"), "oob_then_segv"])
    assert "tritondbg interpret: at least 1 launch(es) (the program was killed" in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
def test_a_library_autotuner_subclass_is_not_named_as_the_launch_site(tmp_path):
    """A kernel launched through a library's Autotuner subclass (flash-linear-attention's CachedAutotuner.run):
    the finding's call site is the program's function that called the kernel, not the subclass's run."""
    report = tmp_path / "f.json"
    out = run(["interpret", "--json", str(report), "--", "python", str(DATA / "programs.py"), "subclass"])
    assert out.returncode == 1, out.stderr[-3000:]
    sites = {f["call_site"][2] for f in json.loads(report.read_text())["findings"]}
    assert sites == {"call_through_a_library_tuner"}, sites
    assert "lib_tuner.py" not in out.stderr and "(call_through_a_library_tuner)" in out.stderr, out.stderr[-2000:]


@pytest.mark.interpreter
def test_capture_keeps_distinct_signatures_up_to_the_limits(tmp_path):
    prog = ["--", "python", str(DATA / "programs.py"), "sizes"]        # n = 100, 200, 100
    out = run(["capture", "--interpret", "--max-per-kernel", "3", "--out", str(tmp_path / "a"), *prog])
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads((tmp_path / "a" / "captures.json").read_text())
    assert [c["grid"] for c in doc["captures"]] == [[2, 1, 1], [4, 1, 1]]   # the repeated launch is not saved again
    assert doc["launches"] == {"scale_shift_kernel": 3}
    out = run(["capture", "--interpret", "--max-mb", "0.001", "--out", str(tmp_path / "b"), *prog])
    assert out.returncode == 0 and "skipped" in out.stderr and "--max-mb 0.001" in out.stderr
    doc = json.loads((tmp_path / "b" / "captures.json").read_text())
    assert doc["captures"] == [] and len(doc["skipped"]) == 2           # each distinct launch: one line
    assert all("scale_shift_kernel" in line and "not saved" in line for line in doc["skipped"])


@pytest.mark.interpreter
def test_interpret_kernel_option_checks_only_those_kernels(tmp_path):
    report = tmp_path / "f.json"
    out = run(["interpret", "--kernel", "shift_*", "--json", str(report), "--", "python", "-m", "pytest", "-q",
               "-p", "no:cacheprovider", str(DATA / "user_suite.py")])
    assert out.returncode == 1, out.stderr[-2000:]
    assert [f["kernel"] for f in json.loads(report.read_text())["findings"]] == ["shift_copy_kernel"]
    row = next(line.split() for line in out.stderr.splitlines() if line.strip().startswith("row_sum_kernel"))
    assert row[1:] == ["1", "0", "0"]                                    # launched, not checked, no finding


@pytest.mark.interpreter
def test_capture_under_pytest_names_the_test_of_each_reproducer(tmp_path):
    """interpret's findings named the test ("in test test_x.py::test_scale[37]"); capture's reproducers did not."""
    out = run(["capture", "--out", str(tmp_path / "c"), "--", "python", "-m", "pytest", "-q", "-p",
               "no:cacheprovider", str(DATA / "user_suite.py")])
    doc = json.loads((tmp_path / "c" / "captures.json").read_text())
    assert doc["captures"] and all("user_suite.py::test_" in (c["test"] or "") for c in doc["captures"]), doc
    assert " in test " in out.stderr and "user_suite.py::test_" in out.stderr, out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_second_capture_into_a_folder_keeps_the_first_ones_listed(tmp_path):
    """captures.json listed only the last capture's reproducers while the folder held both runs' (and a second
    run that launched nothing removed the list)."""
    progs = []
    for name in ("first", "second"):
        p = tmp_path / f"{name}.py"
        p.write_text(textwrap.dedent(f'''
            import torch, triton, triton.language as tl

            @triton.jit
            def {name}_kernel(x_ptr, BLOCK: tl.constexpr):
                o = tl.arange(0, BLOCK)
                tl.store(x_ptr + o, tl.load(x_ptr + o) * 2)

            {name}_kernel[(1,)](torch.randn(16), BLOCK=16)
        '''))
        progs.append(p)
    folder = tmp_path / "c"
    for p in progs + [None]:
        cmd = [sys.executable, str(p)] if p else [sys.executable, "-c", "print(1)"]
        out = run(["capture", "--interpret", "--out", str(folder), "--", *cmd])
        assert out.returncode == (0 if p else 1), out.stderr[-2000:]  # the last launches nothing: no pass
    doc = json.loads((folder / "captures.json").read_text())
    assert doc["captures"] == [] and sorted(c["kernel"] for c in doc["earlier_captures"]) == \
        ["first_kernel", "second_kernel"], doc


@pytest.mark.interpreter
def test_a_kernel_filter_that_matched_nothing_is_said_when_the_program_fails_too(tmp_path):
    """A helper's report: with a failing test suite, `--kernel nomatch*` printed only "the program exited with
    status 1", not that nothing was checked."""
    out = run(["interpret", "--kernel", "nomatch*", "--", "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               str(DATA / "user_suite.py")])
    assert out.returncode != 0, out.stderr[-2000:]
    assert "--kernel nomatch* matched none of the" in out.stderr, out.stderr[-2000:]


# ---------------------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, rc, text", [
    (["capture", "--"], 2, "no program to run"),
    (["interpret", "--"], 2, "no program to run"),
    (["capture", "--", "no-such-command-xyz"], 127, "no-such-command-xyz: command not found"),
    (["interpret", "--", "./no/such/file.py"], 127, "no such executable file"),
    # python's own missing script: one line before anything runs (profile made an empty run folder)
    (["profile", "--", "python", "-u", "nope.py"], 127,
     "nope.py: no such file (the Python script the command `python -u nope.py` would run; looked for from "),
    (["capture", "--", "python3", "nope.py"], 127, "nope.py: no such file"),
    # helper-61: a venv's python by its path ran, printed Python's own error and a "no Triton launch" summary, exit 2
    (["interpret", "--", sys.executable, "nope.py"], 127, "nope.py: no such file (the Python script the command"),
])
def test_bad_program_command_is_one_line(args, rc, text, tmp_path):
    out = run(args, cwd=tmp_path)
    assert out.returncode == rc and text in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "traces").exists()


@pytest.mark.parametrize("args", [["capture", "prog.py"], ["interpret", "--", "./prog.py"]])
def test_a_script_given_without_python_says_how_to_run_it(args, tmp_path):
    """It said "prog.py: no such executable file" about a file that is there (a helper's `capture prog.py`)."""
    (tmp_path / "prog.py").write_text("print('ran')\n")
    out = run(args, cwd=tmp_path)
    assert out.returncode == 127 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "a Python script, not an executable: run it with python, `tritondbg" in out.stderr, out.stderr
    assert f"-- python {args[-1]}`" in out.stderr, out.stderr


@pytest.mark.interpreter
def test_crashing_program_keeps_its_exit_status_and_captures(tmp_path):
    out = run(["capture", "--interpret", "--out", str(tmp_path / "c"), "--", "python", str(DATA / "programs.py"), "crash"])
    assert out.returncode == 1 and "the program failed after one launch" in out.stderr
    doc = json.loads((tmp_path / "c" / "captures.json").read_text())
    assert doc["exit_status"] == 1 and [c["kernel"] for c in doc["captures"]] == ["scale_shift_kernel"]


@pytest.mark.interpreter
def test_a_process_that_skips_atexit_still_reports_its_launches(tmp_path):
    """os._exit (no atexit) after one launch; forked Pool workers (they end in os._exit, and inherit the parent's
    counts): the summary said "0 launch(es)" / missed the workers, or counted the parent's launches twice."""
    out = run(["interpret", "--", "python", str(DATA / "programs.py"), "osexit"])
    assert out.returncode == 3 and "1 launch(es), 0 finding(s)" in out.stderr, out.stderr[-2000:]
    out = run(["interpret", "--", "python", str(DATA / "programs.py"), "forkpool"])
    assert out.returncode == 0, out.stderr[-2000:]
    assert "3 launch(es), 0 finding(s)" in out.stderr, out.stderr[-2000:]  # 2 workers + the parent's 1
    # `with Pool`: its __exit__ ends the workers by SIGTERM; each said "terminated (SIGTERM) outside any launch, in
    # the program at ..." (the parent's line, its stack copied by the fork) in a run that went well (helper-132)
    out = run(["interpret", "--", "python", str(DATA / "programs.py"), "forkpool_with"])
    assert out.returncode == 0 and "launch(es), 0 finding(s)" in out.stderr, out.stderr[-2000:]
    assert "SIGTERM" not in out.stderr, out.stderr[-2000:]


def _interrupt(cmd: list[str], pidfile: Path, cwd: Path, group: bool = True) -> tuple[int, str]:
    """Run ``tritondbg CMD`` in its own session, Ctrl-C its whole group once the program wrote ``pidfile`` (``group``
    False: SIGINT to the program alone, the pid it wrote there)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.Popen(TRITONDBG + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=cwd, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 120
        while not (pidfile.exists() and pidfile.read_text()) and time.time() < deadline:
            time.sleep(0.2)
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(int(pidfile.read_text()), signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out


def test_a_sigint_to_the_program_alone_ends_it_by_sigint(tmp_path):
    """``kill -INT <program's pid>`` (no copy to tritondbg): the program ends by SIGINT, status 130. CI (session
    54): the exit hook's check of tritondbg's pid imported a module at exit, and the program ended with status 1."""
    pidfile = tmp_path / "pid"
    (tmp_path / "prog.py").write_text(textwrap.dedent(f"""\
        import os, time
        open({str(pidfile)!r}, "w").write(str(os.getpid()))
        time.sleep(120)
        """))
    rc, out = _interrupt(["interpret", "--", "python", "prog.py"], pidfile, tmp_path, group=False)
    assert rc == 130 and "the program was interrupted (Ctrl-C / SIGINT, exit status 130)" in out, out[-3000:]


def test_ctrl_c_lands_on_the_programs_line_not_tritondbgs_handler(tmp_path):
    """Ctrl-C in a program that never imports triton ended with status 1, not 130 (the exit hook imported
    tritondbg's modules at exit, which loses CPython's end-by-SIGINT), and its traceback's last line was
    tritondbg's SIGINT handler (exits.py); under pytest, "!!! KeyboardInterrupt !!!" named that handler too."""
    pidfile = tmp_path / "pid"
    (tmp_path / "prog.py").write_text(textwrap.dedent(f"""\
        import os, time
        open({str(pidfile)!r}, "w").write(str(os.getpid()))
        time.sleep(120)  # LANDS
        """))
    rc, out = _interrupt(["interpret", "--", "python", "prog.py"], pidfile, tmp_path)
    assert rc == 130 and "was interrupted (Ctrl-C / SIGINT, exit status 130)" in out, out[-3000:]
    assert 'prog.py", line 3' in out and "exits.py" not in out, out[-3000:]
    pidfile.unlink()
    (tmp_path / "test_slow.py").write_text(textwrap.dedent(f"""\
        import os, time
        def test_slow():
            open({str(pidfile)!r}, "w").write(str(os.getpid()))
            time.sleep(120)
        """))
    rc, out = _interrupt(["interpret", "--", "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "test_slow.py"], pidfile, tmp_path)
    assert "test_slow.py:4: KeyboardInterrupt" in out and "exits.py" not in out, out[-3000:]
    # helper-82: pytest ends a Ctrl-C'd run with status 2, tritondbg's own "bad usage" status, and the closing
    # line said only "exited with status 2": the run was interrupted, and tritondbg's status and line say so
    assert rc == 130 and "was interrupted (Ctrl-C / SIGINT; it exited with status 2)" in out, out[-3000:]


@pytest.mark.interpreter
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_tritondbg_alone_reaches_the_program_and_keeps_its_summary(tmp_path, sig):
    """SIGTERM or SIGINT to tritondbg alone (a CI cancel, ``kill -INT``; no terminal sent it to the group):
    forwarded to the program (SIGINT was swallowed: the program ran on), whose default SIGTERM action used to end
    it with no summary ("0 launch(es)"); the launch before it is counted, the exit status is 128 + the signal."""
    pidfile = tmp_path / "pid"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.Popen(TRITONDBG + ["interpret", "--", "python", str(DATA / "programs.py"), "sigint",
                                         str(pidfile)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
                            start_new_session=True,  # no controlling terminal, as under CI
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 120
        while not (pidfile.exists() and pidfile.read_text()) and time.time() < deadline:
            time.sleep(0.2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = "was interrupted (Ctrl-C / SIGINT, exit status 130)" if sig == signal.SIGINT else \
        f"killed by {sig.name} (exit status {128 + sig})"
    assert proc.returncode == 128 + sig and said in err, err[-2000:]
    assert "exited with status" not in err, err[-2000:]  # one ending said once (it said both)
    assert "1 launch(es), 0 finding(s)" in err, err[-2000:]


@pytest.mark.interpreter
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_second_sigint_while_an_exit_hook_writes_does_not_stop_it(tmp_path):
    """A Ctrl-C sent to the whole process group reaches the program twice (from the group and from tritondbg,
    which passes its own on): the second one, landing while the summary is written, used to raise
    KeyboardInterrupt in the hook and lose the summary (a flaky CI failure: "0 launches", exit 130)."""
    done = tmp_path / "done"
    code = f"""
import os, signal, time
from tritondbg.program import exits
def write():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)  # the handler runs here
    open({str(done)!r}, "w").write("written")
exits.on_exit(write)
raise KeyboardInterrupt  # the first Ctrl-C
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "KeyboardInterrupt" in p.stderr
    assert done.read_text() == "written", p.stderr[-2000:]
    assert p.stderr.count("KeyboardInterrupt") == 1, p.stderr[-2000:]  # the late one is dropped, not printed


def test_the_program_ends_when_tritondbg_is_killed(tmp_path):
    """SIGKILL to tritondbg (the OOM killer): the program gets SIGTERM instead of running on as an orphan, and
    removes the temporary folder nobody reads now (its summary at exit had left it in /tmp)."""
    pidfile = tmp_path / "pid"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TMPDIR"] = str(tmp)
    proc = subprocess.Popen(TRITONDBG + ["interpret", "--", "python", str(DATA / "programs.py"), "sigint",
                                         str(pidfile)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    deadline = time.time() + 120
    while not (pidfile.exists() and pidfile.read_text()) and time.time() < deadline:
        time.sleep(0.2)
    child = int(pidfile.read_text())
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the program outlived tritondbg")
    assert [p.name for p in tmp.iterdir() if p.name.startswith("tritondbg-program-")] == []


@pytest.mark.interpreter
def test_interrupted_program_exits_130_and_keeps_captures(tmp_path):
    pidfile = tmp_path / "pid"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.Popen(TRITONDBG + ["capture", "--interpret", "--out", str(tmp_path / "c"), "--", "python",
                                         str(DATA / "programs.py"), "sigint", str(pidfile)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
                            # a shell's background job (`pytest ... &`) starts with SIGINT ignored and Python keeps
                            # it so, down to the program: restore the default, as a terminal's Ctrl-C finds it
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 120
        while not (pidfile.exists() and pidfile.read_text()) and time.time() < deadline:
            time.sleep(0.2)
        os.kill(int(pidfile.read_text()), signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "was interrupted (Ctrl-C / SIGINT" in err
    doc = json.loads((tmp_path / "c" / "captures.json").read_text())
    assert [c["kernel"] for c in doc["captures"]] == ["scale_shift_kernel"]
    assert (tmp_path / "c" / doc["captures"][0]["reproducer"].split("::")[0]).is_file()


REPLAY = """
import json, sys
from tritondbg import runner
from tritondbg.interp import instruments
out = {}
for target in sys.argv[1:]:
    r = runner.run(target, mode="interpret", instruments=instruments.build(target)).results[0]
    out[target.rsplit("::", 1)[-1]] = [r.status, [(f["kind"], f["line"]) for f in r.findings], r.message]
print(json.dumps(out))
"""


def replay(targets, cwd) -> dict:
    """Replay reproducers in one interpreter process: name -> [status, [(kind, line)], message]."""
    rep = subprocess.run([sys.executable, "-c", REPLAY, *map(str, targets)], capture_output=True, text=True,
                         timeout=300, cwd=cwd, env={k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"})
    assert rep.returncode == 0, rep.stderr[-3000:]
    return json.loads(rep.stdout.strip().splitlines()[-1])


@pytest.mark.interpreter
def test_descriptor_argument_and_in_place_strided_view_replay(tmp_path):
    """A host-side TensorDescriptor argument is saved and rebuilt, and the program's file may be gone at
    replay (the saved copy of its source is used). x and y as one strided view (storage offset 3, stride 2)
    are saved once, replayed aliased, and the recorded output is the view after the in-place update."""
    folder, prog = tmp_path / "c", tmp_path / "prog" / "descriptor.py"
    prog.parent.mkdir()
    prog.write_text((DATA / "descriptor.py").read_text())
    out = run(["capture", "--interpret", "--out", str(folder), "--", "python", str(prog)])
    assert out.returncode == 0, out.stderr[-3000:]
    prog.unlink()
    out = run(["capture", "--interpret", "--out", str(folder), "--", "python", str(DATA / "programs.py"), "inplace"])
    assert out.returncode == 0, out.stderr[-3000:]
    desc = json.loads((folder / "data" / "td_copy_kernel_0.json").read_text())
    assert desc["unsaved"] == [] and desc["args"]["in_desc"]["dataclass"].endswith(":TensorDescriptor")
    meta = json.loads((folder / "data" / "add_one_kernel_0.json").read_text())
    assert len(meta["groups"]) == 1 and [t["storage_offset"] for t in meta["tensors"]] == [3, 3]
    assert meta["tensors"][0]["stride"] == [2] and sorted(meta["outputs"]) == ["x_ptr", "y_ptr"]
    results = replay([folder / "td_copy_kernel_0.py::td_copy_kernel_0", folder / "add_one_kernel_0.py::add_one_kernel_0"],
                     tmp_path)
    assert results == {"td_copy_kernel_0": ["pass", [], ""], "add_one_kernel_0": ["pass", [], ""]}, results


def test_an_argument_that_cannot_be_saved_is_named():
    import torch

    from tritondbg.program import attach, capture

    class Opaque:
        pass

    launch = attach.Launch(fn=None, name="k", qualname="k", module="m", file="f.py", line=1,
                           args={"x": torch.zeros(4), "w": Opaque(), "n": 4, "eps": 1e-5}, options={}, grid=(1,))
    snap = capture.snapshot(launch)
    assert len(snap.unsaved) == 1 and snap.unsaved[0].startswith("w: ") and "Opaque" in snap.unsaved[0]
    assert snap.args["n"] == {"v": 4} and snap.args["x"] == {"t": 0} and snap.specs[0]["shape"] == [4]


def test_uninstall_leaves_a_patch_another_tool_put_over_ours():
    from triton.runtime import jit

    from tritondbg.program import attach

    before = jit.JITFunction.__dict__["run"]
    obs = attach.add_observer(attach.Observer())
    ours = jit.JITFunction.__dict__["run"]

    def theirs(self, *args, **kwargs):
        return ours(self, *args, **kwargs)
    jit.JITFunction.run = theirs
    try:
        attach.remove_observer(obs)
        assert jit.JITFunction.__dict__["run"] is theirs and not attach.installed()
    finally:
        jit.JITFunction.run = before


def test_summary_table_keeps_its_columns_apart_for_short_kernel_names():
    """A one-letter kernel name (``k``) ran the header into "kernellaunches"; the name column is at least as wide
    as its header."""
    from tritondbg.program.modes import _summary_table

    lines = _summary_table({"k": 1}, {"k": 1}, {"k": 0})
    assert lines[0].split() == ["kernel", "launches", "checked", "findings"]
    assert lines[1].split() == ["k", "1", "1", "0"]
    assert len(lines[0]) == len(lines[1])
    # helper-154: a kernel with warnings only read 0 beside the summary line's "8 warning(s)": a warnings column
    lines = _summary_table({"k": 1, "bwd": 2}, {"k": 1, "bwd": 2}, {"k": 1}, {"bwd": 3})
    assert lines[0].split() == ["kernel", "launches", "checked", "findings", "warnings"]
    assert [ln.split() for ln in lines[1:]] == [["bwd", "2", "2", "0", "3"], ["k", "1", "1", "1", "0"]], lines


def test_findings_repeated_over_launches_are_one_line_with_a_count():
    """A kernel a loop launches with the same bug gives one finding line per distinct (kind, line, kernel,
    tensor, call site), with how many launches had it; another line or kernel stays its own line."""
    from tritondbg.program.modes import _finding_lines

    site = [["train.py", 12, "step"]]
    same = dict(kind="out_of_bounds", file="/k/kern.py", line=20, kernel="k", tensor="x_ptr", stack=site)
    findings = [dict(same, pid=[3, 0, 0]) for _ in range(27)] + [dict(same, line=21, pid=[0, 0, 0])]
    lines = _finding_lines(findings)
    assert len(lines) == 2 and "kern.py:20 in k pid (3, 0, 0)" in lines[0] and lines[0].endswith("(in 27 launches)")
    assert "kern.py:21" in lines[1] and "launches)" not in lines[1]
    assert ", tensor x_ptr;" in lines[0]
    [line] = _finding_lines([dict(same, kind="device_assert", tensor=None, pid=[0, 0, 0])])
    assert "tensor" not in line  # it printed "tensor None"
    # a load and a store of one line in one launch: one launch (it said "in 2 launches")
    [line] = _finding_lines([dict(same, op="load", launch=0, pid_process=1), dict(same, op="store", launch=0,
                                                                                  pid_process=1)])
    assert "launches)" not in line, line


def test_a_finding_repeated_over_launches_is_printed_once_then_counted():
    """helper-62 (triton_kernels' topk): the same 3 findings, ~600 characters each, printed for every launch."""
    p = run(["interpret", "--", "python", str(DATA / "repeat_oob.py")])
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: ")]
    assert p.returncode == 1 and p.stdout.strip() == "done", p.stderr[-2000:]
    assert sum(ln.startswith("tritondbg: out_of_bounds in k") for ln in lines) == 2, lines  # load, store
    assert sum("come again in its later launches" in ln for ln in lines) == 1, lines
    assert "(8 findings in 4 launches)" in p.stderr, p.stderr[-2000:]  # a load and a store, each launch


def test_capture_keeps_the_state_from_before_the_autotuner_timed_its_configs(tmp_path, monkeypatch):
    """A compiled program's autotuner times every config before the launch it keeps, and each timed run writes
    the outputs: capture takes the before-state when the autotuner is called (``tuner_enter``), not at the launch,
    so the reproducer's reference is what the launch wrote over the program's own bytes. Arguments the autotuner
    resets itself (``reset_to_zero``) keep their state at the launch. Nothing is taken when it will not time."""
    import torch
    import triton

    from tritondbg.program import attach, capturer, child

    monkeypatch.setitem(child._state, "config", {"run_dir": str(tmp_path)})  # where the capture entry goes

    class Tuner:  # what capture reads of Triton's Autotuner
        configs, arg_names, keys, cache = [1, 2], ["x_ptr", "y_ptr", "acc_ptr", "n"], ["n"], {}
        reset_to_zero, restore_value = ["acc_ptr"], []

    x, y, acc = torch.arange(8.0), torch.full((8,), -1.0), torch.full((8,), 5.0)
    fn = object()
    cap = capturer.Capturer({"run_dir": str(tmp_path)})
    cap.tuner_enter(fn, Tuner(), (x, y, acc, 8), {})
    y.copy_(x * 2)              # the timed runs wrote y (the value the launch writes again)
    acc.zero_()                 # the autotuner's reset_to_zero hook, before the launch
    launch = attach.Launch(fn=fn, name="k", qualname="k", module="m", file="?", line=0,
                           args={"x_ptr": x, "y_ptr": y, "acc_ptr": acc, "n": 8}, options={}, grid=(1,),
                           config=triton.Config({"BLOCK": 8}), interpreted=True)

    def proceed():
        y.copy_(x * 2)
        acc.add_(x)

    cap.around(launch, proceed)
    name = "k_0"
    data = torch.load(tmp_path / "data" / f"{name}.pt")
    meta = json.loads((tmp_path / "data" / f"{name}.json").read_text())
    assert sorted(meta["outputs"]) == ["acc_ptr", "y_ptr"]  # y: the program's -1s before, 2x after
    before = {meta["tensors"][i]["group"]: data["before"][meta["tensors"][i]["group"]] for i in range(3)}
    y_group, acc_group = meta["tensors"][1]["group"], meta["tensors"][2]["group"]
    assert torch.equal(before[y_group][:32].view(torch.float32), torch.full((8,), -1.0))
    assert torch.equal(before[acc_group][:32].view(torch.float32), torch.zeros(8))  # after its reset, as launched
    Tuner.cache = {(8, "torch.float32", "torch.float32", "torch.float32"): 1}  # a cached key: nothing is timed
    assert not capturer.will_benchmark(Tuner(), (x, y, acc, 8), {})


@pytest.mark.interpreter
def test_a_kernel_filter_that_matches_no_launch_fails_saying_so(tmp_path):
    """`--kernel` with a typo: the run checked / captured nothing and exited 0, hiding the program's real finding.
    It fails, naming the kernels the program launched; capture takes the same globs as interpret."""
    prog = ["--", "python", str(DATA / "programs.py"), "sizes"]
    out = run(["interpret", "--kernel", "scale_shift_kernl", *prog])
    assert out.returncode == 1, out.stderr[-2000:]
    assert "--kernel scale_shift_kernl matched none of the 1 kernel(s) the program launched (scale_shift_kernel)" \
        in out.stderr
    out = run(["capture", "--interpret", "--kernel", "scale_shift_kernl", "--out", str(tmp_path / "a"), *prog])
    assert out.returncode == 1 and "nothing was captured" in out.stderr, out.stderr[-2000:]
    out = run(["capture", "--interpret", "--kernel", "scale_*", "--out", str(tmp_path / "b"), *prog])
    assert out.returncode == 0 and "1 reproducer(s)" in out.stderr, out.stderr[-2000:]  # max-per-kernel 1


@pytest.mark.interpreter
def _capture_then_replay(tmp_path, prog, reproducer: str) -> str:
    """Capture ``prog`` on the interpreter, then replay ``reproducer``: it must pass; returns its stdout."""
    p = run(["capture", "--interpret", "--out", str(tmp_path / "cap"), "--", "python", str(prog)], cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    rep = run(["interpret", str(tmp_path / "cap" / reproducer)], cwd=tmp_path / "cap")
    assert rep.returncode == 0 and "PASS" in rep.stdout, rep.stdout[-1500:] + rep.stderr[-1500:]
    return rep.stdout


def test_a_reproducer_replays_when_the_program_put_its_package_on_sys_path(tmp_path):
    """Repo scripts and conftest.py files put their library's folder on sys.path themselves: the reproducer could
    import neither the package nor the saved copy of the one module (its sibling import failed)."""
    pkg = tmp_path / "libroot" / "mypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("import triton\nimport triton.language as tl\n\n@triton.jit\ndef twice(x):\n    return 2 * x\n")
    (pkg / "kern.py").write_text(
        "import torch, triton, triton.language as tl\nfrom mypkg.helpers import twice\n\n@triton.jit\n"
        "def dbl_kernel(X, Y, N, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    m = offs < N\n    tl.store(Y + offs, twice(tl.load(X + offs, mask=m, other=0.0)), mask=m)\n\n"
        "def dbl(x):\n    y = torch.empty_like(x)\n    dbl_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)\n"
        "    return y\n")
    prog = tmp_path / "prog.py"
    prog.write_text("import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                    "'libroot'))\nimport torch\nfrom mypkg.kern import dbl\nprint(dbl(torch.arange(100.0)).sum().item())\n")
    _capture_then_replay(tmp_path, prog, "dbl_kernel_0.py")


def test_a_reproducer_replays_without_the_pythonpath_the_program_had(tmp_path):
    """helper-70: the program ran with PYTHONPATH=stubs (lightllm's utils, stubbed); the reproducer, replayed from
    another shell, failed "cannot load kernel _fwd_kernel: ... No module named 'lightllm'". The program's own
    sys.path folders are recorded and added last at replay."""
    (tmp_path / "stubs" / "stubbed").mkdir(parents=True)
    (tmp_path / "stubs" / "stubbed" / "__init__.py").write_text("SCALE = 3.0\n")
    (tmp_path / "kern.py").write_text(
        "import torch, triton, triton.language as tl\nfrom stubbed import SCALE\n\n@triton.jit\n"
        "def scale_kernel(X, Y, N, S, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    m = offs < N\n    tl.store(Y + offs, tl.load(X + offs, mask=m) * S, mask=m)\n")
    prog = tmp_path / "prog.py"
    prog.write_text("import torch, triton\nfrom kern import scale_kernel, SCALE\nx = torch.arange(100.0)\n"
                    "y = torch.empty_like(x)\nscale_kernel[(2,)](x, y, 100, SCALE, BLOCK=64)\nprint(y.sum().item())\n")
    env = {"PYTHONPATH": os.pathsep.join([os.environ.get("PYTHONPATH", ""), str(tmp_path / "stubs")])}
    p = run(["capture", "--interpret", "--out", str(tmp_path / "cap"), "--", "python", str(prog)], cwd=tmp_path,
            env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    away = tmp_path / "elsewhere"
    away.mkdir()
    rep = run(["interpret", str(tmp_path / "cap" / "scale_kernel_0.py")], cwd=away)
    assert rep.returncode == 0 and "PASS" in rep.stdout, rep.stdout[-1500:] + rep.stderr[-1500:]


def test_a_reproducer_replays_a_module_whose_package_init_needs_what_is_missing(tmp_path):
    """helper-57: AutoGPTQ's package __init__ imports accelerate and transformers; the program loaded its kernel
    module past them, and the reproducer failed ("No module named 'accelerate'"; the saved copy: "attempted
    relative import with no known parent package"). It now imports the module with bare parent packages."""
    pkg = tmp_path / "libroot" / "heavypkg" / "ops"
    pkg.mkdir(parents=True)
    (pkg.parent / "__init__.py").write_text(
        "import os\nif not os.environ.get('HEAVY_OK'):\n    import accelerate_not_installed_here  # noqa\n")
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("import triton\nimport triton.language as tl\n\n@triton.jit\ndef twice(x):\n"
                                    "    return 2 * x\n")
    (pkg / "kern.py").write_text(
        "import torch, triton, triton.language as tl\nfrom . import helpers\n\n@triton.jit\n"
        "def dbl_kernel(X, Y, N, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    m = offs < N\n    tl.store(Y + offs, helpers.twice(tl.load(X + offs, mask=m, other=0.0)), mask=m)\n")
    prog = tmp_path / "prog.py"
    prog.write_text("import os, sys\nos.environ['HEAVY_OK'] = '1'\nsys.path.insert(0, os.path.join("
                    "os.path.dirname(os.path.abspath(__file__)), 'libroot'))\nimport torch, triton\n"
                    "from heavypkg.ops.kern import dbl_kernel\nx = torch.arange(100.0); y = torch.empty_like(x)\n"
                    "dbl_kernel[(2,)](x, y, 100, BLOCK=64)\nprint(y.sum().item())\n")
    _capture_then_replay(tmp_path, prog, "dbl_kernel_0.py")


def test_a_reproducer_of_mixed_precision_outputs_takes_the_loosest_dtype(tmp_path):
    """helper-61: FlagAttention's forward writes fp32 row statistics beside its bf16 output; the reproducer was
    labelled float32 and held the bf16 output to fp32's tolerance (a GPU capture replayed on the CPU misses it)."""
    (tmp_path / "prog.py").write_text(
        "import torch, triton, triton.language as tl\n\n@triton.jit\n"
        "def stats(x, m, o, n, B: tl.constexpr):\n    c = tl.arange(0, B)\n"
        "    v = tl.load(x + c, mask=c < n, other=0.0).to(tl.float32)\n    tl.store(m, tl.sum(v, 0))\n"
        "    tl.store(o + c, (v * 2).to(tl.bfloat16), mask=c < n)\n\n"
        "x = torch.randn(100).bfloat16(); m = torch.empty(1); o = torch.empty(100, dtype=torch.bfloat16)\n"
        "stats[(1,)](x, m, o, 100, B=128)\nprint('ok')\n")
    out = _capture_then_replay(tmp_path, tmp_path / "prog.py", "stats_0.py")
    assert "PASS stats_0 case=captured dtype=bfloat16" in out, out[-1500:]


@pytest.mark.interpreter
def test_a_program_that_asks_whether_triton_is_installed_first_is_still_attached(tmp_path):
    """torch asks ``importlib.util.find_spec("triton")`` before importing it (on a CUDA machine): tritondbg's
    import hook took that question for the import and stood down, and nothing was attached (0 launches of a
    torch.compile'd model on the H200)."""
    prog = tmp_path / "asks.py"
    prog.write_text("import importlib.util\nassert importlib.util.find_spec('triton') is not None\nimport torch\n"
                    "from tritondbg.kernels.add import add\nx = torch.ones(64)\nprint(add(x, x).sum().item())\n")
    p = run(["capture", "--interpret", "--out", str(tmp_path / "cap"), "--", "python", str(prog)], cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "1 launch(es) of 1 kernel(s); 1 reproducer(s)" in p.stderr, p.stderr[-2000:]


@pytest.mark.interpreter
def test_reproducer_of_a_tutorial_style_script_loads_its_definitions_only(tmp_path, monkeypatch):
    """Kernels defined in a script without a ``__main__`` guard (Triton's tutorials) or inside its main block: their
    reproducers load the script's definitions, not its module-level launches and prints, so the kernels replay on
    the interpreter (both in one process too) and compile for a GPU target without one (running the script there
    fails at its ``DEVICE = ...`` line)."""
    mark = tmp_path / "mark.txt"
    folder = tmp_path / "cap"
    out = run(["capture", "--interpret", "--out", str(folder), "--", "python", str(DATA / "tutorial_script.py")],
              env={"MARK": str(mark)})
    assert out.returncode == 0, out.stderr[-3000:]
    ran = "launch\nran\nmain\n"
    assert mark.read_text() == ran
    captures = json.loads((folder / "captures.json").read_text())["captures"]
    repros = {c["kernel"]: str(folder / c["reproducer"].split("::")[0]) for c in captures}
    assert set(repros) == {"axpy_kernel", "negate_kernel"}
    for kernel, repro in repros.items():
        out = run(["interpret", repro], env={"MARK": str(mark)})
        assert out.returncode == 0 and "1/1 passed" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
        assert "max diff" not in out.stdout
        out = run(["ir", repro, "--arch", "sm_90", "--stage", "ptx"], env={"MARK": str(mark)})
        assert out.returncode == 0, out.stderr[-2000:]
        assert f".entry {kernel}" in out.stdout and "max diff" not in out.stdout
    monkeypatch.setenv("MARK", str(mark))
    results = replay([repros["axpy_kernel"], repros["negate_kernel"]], tmp_path)  # one process, one module
    assert sorted(status for status, _, _ in results.values()) == ["pass", "pass"], results
    assert mark.read_text() == ran  # no replay ran the script's launches or module-level code


def test_a_sigint_delivered_twice_interrupts_the_program_once():
    """A SIGINT sent to the whole group (no terminal) reaches the program and tritondbg passes its own copy on:
    the program's handler raises KeyboardInterrupt once and drops the twin; a later Ctrl-C interrupts again."""
    from tritondbg.program import exits

    saved = exits._state.pop("sigint_at", None)
    try:
        with pytest.raises(KeyboardInterrupt):
            exits._sigint_once(2, None)
        assert exits._sigint_once(2, None) is None          # the twin, within SIGINT_TWIN_S
        exits._state["sigint_at"] -= exits.SIGINT_TWIN_S + 0.1
        with pytest.raises(KeyboardInterrupt):
            exits._sigint_once(2, None)                     # a later Ctrl-C
    finally:
        exits._state.pop("sigint_at", None)
        if saved is not None:
            exits._state["sigint_at"] = saved


@pytest.mark.interpreter
def test_reproducers_of_a_launch_that_changed_nothing_or_did_not_finish(tmp_path):
    """A helper's report: the replay of a launch cut short (Ctrl-C) said "the captured launch changed no byte" and
    ERROR "returned a dict of None only", and ran nothing (the reference was checked first); a launch that really
    changed nothing could never pass. Now: the unchanged launch compares every argument (it must leave them as
    they were: PASS); the unfinished one runs, and is an error that says why nothing is compared."""
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl

        @triton.jit
        def noop(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            tl.store(y_ptr + o, tl.load(x_ptr + o), mask=o < n)

        @triton.jit
        def fails(x_ptr, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            tl.store(x_ptr + o, tl.load(x_ptr + o) + 1)
            tl.device_assert(o < 0, "always")

        x, y = torch.randn(16), torch.zeros(16)
        noop[(1,)](x, y, 0, BLOCK=16)
        try:
            fails[(1,)](x, BLOCK=16)
        except Exception:
            pass
    '''))
    out = run(["capture", "--interpret", "--out", str(tmp_path / "c"), "--", sys.executable, str(prog)])
    assert out.returncode == 0, out.stderr[-3000:]
    assert "fails_0.py::fails_0  fails" in out.stderr and "(the launch did not finish: " in out.stderr, out.stderr
    done = run(["interpret", str(tmp_path / "c" / "noop_0.py")])
    assert done.returncode == 0 and "PASS noop_0" in done.stdout, done.stdout + done.stderr
    assert "checks that it leaves them as they were" in done.stderr, done.stderr
    cut = run(["interpret", str(tmp_path / "c" / "fails_0.py")])  # it runs again, and fails again, at its line
    assert cut.returncode == 1 and "device_assert failed: always" in cut.stdout, cut.stdout + cut.stderr
    assert cut.stderr.count("the captured launch did not finish in the program (") == 1, cut.stderr  # was 3
    assert "None only" not in cut.stdout + cut.stderr and "changed no byte" not in cut.stderr
    assert done.stderr.count("checks that it leaves them as they were") == 1, done.stderr


GLOBALS = '''
import os, torch, triton, triton.language as tl
SCALE: tl.constexpr = tl.constexpr(float(os.environ.get("SCALE", "1.0")))
OFFSET = tl.constexpr(int(os.environ.get("OFFSET", "0")))


@triton.jit
def _helper(v):
    return v + OFFSET


@triton.jit
def gscale(x, n, B: tl.constexpr):
    o = tl.arange(0, B)
    v = tl.load(x + o, mask=o < n)
    tl.store(x + o, _helper(v * SCALE), mask=o < n)


x = torch.ones(10)
gscale[(1,)](x, 10, B=16)
print(float(x[0]))
'''


def test_a_reproducer_replays_the_module_constants_the_program_had(tmp_path):
    """helper-46: a `tl.constexpr` global computed at import from the environment took the replay's value (a
    "mismatch ... the replayed kernel did not write them", wrong on both counts). Capture saves the plain globals
    the kernel and its jit helpers read; the replay sets them and says which differed."""
    (tmp_path / "gconst.py").write_text(GLOBALS)
    folder = tmp_path / "cap"
    out = run(["capture", "--out", str(folder), "--", "python", str(tmp_path / "gconst.py")],
              env={"SCALE": "3.0", "OFFSET": "2"}, cwd=tmp_path)
    assert out.returncode == 0 and "5.0" in out.stdout, out.stderr[-3000:]
    meta = json.loads((folder / "data" / "gscale_0.json").read_text())
    assert meta["globals"] == {"__main__": {"OFFSET": {"constexpr": 2}, "SCALE": {"constexpr": 3.0}}}
    replay = run(["interpret", str(folder / "gscale_0.py")], cwd=tmp_path)
    assert replay.returncode == 0 and "PASS" in replay.stdout, replay.stdout + replay.stderr
    assert "SCALE: 3.0 in the program, 1.0 on import here" in replay.stderr, replay.stderr
    assert "OFFSET: 2 in the program, 0 on import here" in replay.stderr, replay.stderr


def test_a_kernel_defined_on_stdin_is_captured_as_not_replayable_and_says_why(tmp_path):
    """helper-46: `capture -- python - < script` said "1 reproducer(s)" and its replay "no saved source"."""
    script = textwrap.dedent('''
        import torch, triton, triton.language as tl
        @triton.jit
        def k(x, n, B: tl.constexpr):
            o = tl.arange(0, B)
            tl.store(x + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)
        x = torch.ones(10)
        k[(1,)](x, 10, B=16)
    ''')
    folder = tmp_path / "cap"
    full = dict(os.environ)
    full.pop("TRITON_INTERPRET", None)
    out = subprocess.run(TRITONDBG + ["capture", "--out", str(folder), "--", "python", "-"], input=script,
                         capture_output=True, text=True, env=full, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "could not save: source: k is defined in <stdin>, not in a file" in out.stderr, out.stderr
    replay = run(["interpret", str(folder / "k_0.py")], cwd=tmp_path)
    assert replay.returncode == 2 and "put the kernel in a .py file" in replay.stderr, replay.stderr


def test_capture_under_the_interpreter_lets_no_numpy_warning_through(tmp_path):
    """helpers 47 and 48: `capture -- CMD` printed numpy's "interpreter.py:599: RuntimeWarning: invalid value
    encountered in divide" for a guarded 0/0 (bitsandbytes' nf4 quantize, unsloth's cross entropy) that
    `interpret --` kept quiet: the kernel never stores those lanes, and the line named was Triton's own."""
    (tmp_path / "prog.py").write_text(textwrap.dedent("""\
        import torch, triton, triton.language as tl

        @triton.jit
        def k(x_ptr, y_ptr, n, B: tl.constexpr):
            o = tl.arange(0, B)
            x = tl.load(x_ptr + o, mask=o < n, other=0.0)
            tl.store(y_ptr + o, tl.where(x == 0.0, 0.0, (x * 0.0) / x), mask=o < n)

        x = torch.zeros(10); y = torch.empty_like(x)
        k[(1,)](x, y, 10, B=16)
        print("ok", float(y.sum()))
        """))
    out = run(["capture", "--interpret", "--out", str(tmp_path / "cap"), "--", "python", "prog.py"], cwd=tmp_path)
    assert out.returncode == 0 and "ok 0.0" in out.stdout, out.stdout + out.stderr[-2000:]
    assert "RuntimeWarning" not in out.stderr, out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_bare_static_assert_that_fails_names_its_condition(tmp_path):
    """helper-81: tutorial 06's ``tl.static_assert(BLOCK_N <= HEAD_DIM)`` failed as "kernel_error ...
    AssertionError:" with no text; the condition is the message."""
    _no_cuda()
    (tmp_path / "sa.py").write_text(textwrap.dedent("""\
        import torch, triton, triton.language as tl

        @triton.jit
        def k(x, H: tl.constexpr):
            tl.static_assert(H >= 32)
            tl.store(x + tl.arange(0, 16), tl.zeros((16,), tl.float32))

        k[(1,)](torch.empty(16, device="cuda"), H=16)
        """))
    out = run(["interpret", "--", sys.executable, "sa.py"], cwd=tmp_path)
    assert out.returncode == 1, out.stderr[-2000:]
    assert "kernel_error: sa.py:5 in k pid (0, 0, 0): AssertionError: `tl.static_assert(H >= 32)` failed" \
        in out.stderr, out.stderr[-2000:]


NO_STORE = """\
import torch, triton, triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    z = tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m)
    # tl.store(out_ptr + offs, z, mask=m)   <- forgotten

@triton.jit
def masked_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)  # a store whose mask is false in this launch

@triton.jit
def check_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.device_assert(tl.load(x_ptr + offs, mask=offs < n, other=0.0) < 100.0, "too big")

x, y, out = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda"), torch.zeros(1000, device="cuda")
for _ in range(2):
    add_kernel[(8,)](x, y, out, 1000, BLOCK=128)
masked_kernel[(1,)](x, 0, BLOCK=16)
check_kernel[(8,)](x, 1000, BLOCK=128)
print("max", out.abs().max().item())
"""


@pytest.mark.interpreter
def test_a_kernel_that_writes_nothing_is_a_warning(tmp_path):
    """helpers 81 and 83: a forgotten ``tl.store`` whose output came from torch.zeros (or a grouped kernel's
    tables) gave 0 findings. A launch that changed no byte, of a kernel whose source has no write, is a warning,
    once per kernel; a store masked off in this launch and a kernel that only asserts are none."""
    _no_cuda()
    (tmp_path / "prog.py").write_text(NO_STORE)
    out = run(["interpret", "--", sys.executable, "prog.py"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: warning: not_stored")]
    assert len(lines) == 1 and "in add_kernel at prog.py:3" in lines[0] and "forgotten tl.store" in lines[0], \
        out.stderr[-2000:]
    assert "masked_kernel" not in "".join(lines) and "1 warning(s)" in out.stderr, out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_reproducer_loads_a_kernel_whose_module_imports_what_is_missing_here(tmp_path):
    """helper-83: applied-ai's MoE module does ``from vllm._C import ops``; the program had it, the replay did not,
    and the reproducer could not load ("cannot load kernel ...: No module named 'vllm'", exit 2). The module's
    definitions are loaded one at a time then, the failing import skipped and said."""
    (tmp_path / "hostdep_kernel.py").write_text(textwrap.dedent("""\
        import torch, triton, triton.language as tl
        from fake_ext._C import ops  # a host-only extension the program provides

        @triton.jit
        def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

        def scale(x):
            out = torch.empty_like(x)
            scale_kernel[(8,)](x, out, x.numel(), BLOCK=128)
            return ops.identity(out)
        """))
    (tmp_path / "prog.py").write_text(textwrap.dedent("""\
        import sys, types, torch
        c = types.ModuleType("fake_ext._C")
        c.ops = types.SimpleNamespace(identity=lambda t: t)
        sys.modules["fake_ext"], sys.modules["fake_ext._C"] = types.ModuleType("fake_ext"), c
        from hostdep_kernel import scale
        print("sum", float(scale(torch.ones(1000)).sum()))
        """))
    out = run(["capture", "--out", "cap", "--interpret", "--", sys.executable, "prog.py"], cwd=tmp_path)
    assert out.returncode == 0 and "sum 2000.0" in out.stdout, out.stdout + out.stderr[-2000:]
    replay = run(["interpret", "cap/scale_kernel_0.py"], cwd=tmp_path)
    assert replay.returncode == 0 and "1/1 passed" in replay.stdout, replay.stdout + replay.stderr[-2000:]
    assert "hostdep_kernel could not be imported (ModuleNotFoundError: No module named 'fake_ext')" in replay.stderr


@pytest.mark.interpreter
def test_two_findings_at_one_line_through_two_tensors_are_both_told(tmp_path):
    """helper-81: a grouped GEMM's K-tail read past two groups' b at the same line; the second finding (another
    tensor) was taken for a repeat and said as "findings come again in its later launches" of a single launch."""
    _no_cuda()
    (tmp_path / "two.py").write_text(textwrap.dedent("""\
        import torch, triton, triton.language as tl

        @triton.jit
        def pair_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(a_ptr + offs) + tl.load(b_ptr + offs)  # both unmasked: LINE
            tl.store(out_ptr + offs, x, mask=offs < n)

        a, b = torch.randn(100, device="cuda"), torch.randn(100, device="cuda")
        out = torch.empty(100, device="cuda")
        pair_kernel[(1,)](a, b, out, 100, BLOCK=128)
        """))
    out = run(["interpret", "--", sys.executable, "two.py"], cwd=tmp_path)
    told = [ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: out_of_bounds in pair_kernel at two.py:6")]
    assert len(told) == 2 and "through a_ptr" in told[0] + told[1] and "through b_ptr" in told[0] + told[1], \
        out.stderr[-3000:]
    assert "come again" not in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
def test_lanes_past_a_table_tensor_into_the_next_one_say_where_they_land(tmp_path):
    """helper-81: a grouped GEMM's K tail read past group b into group c (both reached through pointer tables);
    the finding said "your program got 0 there" while the program got c's values (its NaN marks). Lanes in a
    tensor the launch reached through a table count as landing in another argument, named by its entry."""
    _no_cuda()
    (tmp_path / "prog.py").write_text(textwrap.dedent("""\
        import torch, triton, triton.language as tl

        @triton.jit
        def tk(src_tbl, dst_tbl, n, BLOCK: tl.constexpr):
            src = tl.load(src_tbl).to(tl.pointer_type(tl.float32))
            dst = tl.load(dst_tbl).to(tl.pointer_type(tl.float32))
            offs = tl.arange(0, BLOCK)
            tl.store(dst + offs, tl.load(src + offs) * 2, mask=offs < n)  # the load has no mask

        buf = torch.full((256,), 7.0, device="cuda")
        a, c = buf[:100], buf[100:200]
        tk[(1,)](torch.tensor([a.data_ptr()], device="cuda"), torch.tensor([c.data_ptr()], device="cuda"), 100,
                 BLOCK=128)
        """))
    out = run(["interpret", "--", sys.executable, "prog.py"], cwd=tmp_path)
    line = next((ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: out_of_bounds in tk")), out.stderr)
    assert "28 of them land in another argument, e.g. dst_tbl[0][0]" in line, line
    assert "your program read the other argument's values there" in line and "got 0" not in line, line


_CLOSE = "assert torch.allclose(y, ref, atol=1e-3)"


@pytest.mark.interpreter
@pytest.mark.parametrize("dtype, hinted, check", [("float16", True, _CLOSE), ("float32", False, _CLOSE),
                                                  ("float16", False, _CLOSE + ", f'max err {(y - ref).abs().max() * float(\"nan\")}'"),
                                                  ("float16", True, _CLOSE + ", 'Greatest relative difference: inf'"),
                                                  ("float16", False, "assert y.shape[0] == ref.shape[0] + 1, 'size'"),
                                                  ("float16", True, _CLOSE + ", f'{y.shape}'"),
                                                  ("float16", True, "assert (y == ref).all()")])
def test_a_failed_half_precision_check_with_no_finding_says_the_reference_ran_on_the_cpu(tmp_path, dtype, hinted,
                                                                                          check):
    """helpers 79 and 81: Triton's tutorials 05 and 08 fail their own fp16 assertions under ``interpret --``
    because CPU torch's fp16 ops (the reference) round differently from CUDA's; tritondbg said nothing. With no
    finding and half-precision tensors at the failed assertion, one line says so; float32: none. A check that
    failed on a NaN (its message says nan): none either, an ulp is no NaN (helper-97); nor a check of shapes
    (helper-106: lmdeploy's wrapper asserting its weight's size)."""
    _no_cuda()
    (tmp_path / "half.py").write_text(textwrap.dedent(f"""\
        import torch, triton, triton.language as tl

        @triton.jit
        def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

        x = torch.randn(100, device="cuda", dtype=torch.{dtype})
        y = torch.empty_like(x)
        copy_kernel[(1,)](x, y, 100, BLOCK=128)
        ref = x + 1e-2
        {check}
        """))
    out = run(["interpret", "--", sys.executable, "half.py"], cwd=tmp_path)
    assert out.returncode == 1 and "AssertionError" in out.stderr, out.stderr[-2000:]
    assert ("its torch reference ran on the CPU here" in out.stderr) is hinted, out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_sum_made_nan_by_an_inf_in_the_data_is_no_masked_reduction(tmp_path):
    """helper-84: unsloth's rms_norm backward after a forgotten eps upstream (inv_var = inf): every lane of its
    tl.sum, real and padding (other=0), is 0 * inf = NaN, and tritondbg said "masked_reduction ... padding lanes
    whose values change the result". A NaN no op made from finite values came in with the data: the padding
    changes nothing there."""
    _no_cuda()
    (tmp_path / "prog.py").write_text(textwrap.dedent("""\
        import torch, triton, triton.language as tl

        @triton.jit
        def k(x_ptr, scale_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
            s = tl.load(scale_ptr)                 # inf: an upstream launch's rsqrt(0)
            tl.store(out_ptr, tl.sum(x * s, 0))    # every lane 0 * inf = NaN

        out = torch.zeros(1, device="cuda")
        k[(1,)](torch.zeros(1000, device="cuda"), torch.full((1,), float("inf"), device="cuda"), out, 1000, BLOCK=1024)
        """))
    out = run(["interpret", "--", sys.executable, "prog.py"], cwd=tmp_path)
    assert out.returncode == 0 and "masked_reduction" not in out.stderr, out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_launch_with_a_finding_and_a_band_is_captured_once(tmp_path):
    """helper-84: ``--capture-on-finding`` wrote two identical reproducers of a launch that had both an
    out-of-bounds finding and an unwritten band (one for each)."""
    _no_cuda()
    (tmp_path / "prog.py").write_text(textwrap.dedent("""\
        import torch, triton, triton.language as tl

        @triton.jit
        def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)                       # no mask: out of bounds
            tl.store(y_ptr + offs, x, mask=offs < n - 5)    # leaves the last 5 of y unwritten

        y = torch.empty(100, device="cuda")
        k[(1,)](torch.randn(100, device="cuda"), y, 100, BLOCK=128)
        """))
    out = run(["interpret", "--capture-on-finding", "--out", "cap", "--", sys.executable, "prog.py"], cwd=tmp_path)
    assert "out_of_bounds" in out.stderr and "unwritten" in out.stderr, out.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "cap").glob("k_*.py")) == ["k_0.py"], out.stderr[-2000:]
