"""`tritondbg profile` on the CPU: the interpreter run, its trace folder, autotune capture, atomic folders.

One CLI run (module fixture) is shared by the tests that read its output; the TensorBoard server test is
in test_profile_tensorboard.py.
"""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli

ITERS = 2


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """`tritondbg profile add --json` under the interpreter, into a fresh output folder."""
    out = tmp_path_factory.mktemp("profile")
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env["CUDA_VISIBLE_DEVICES"] = ""  # the interpreter path, even on a GPU machine
    p = run_cli(["profile", "add", "--iters", str(ITERS), "--warmup", "0", "--out", str(out / "traces"),
                 "--json"], env)
    assert p.returncode == 0, p.stderr
    return out / "traces", json.loads(p.stdout), p


def _traces(run_dir: Path) -> list[Path]:
    return sorted(run_dir.glob("*.pt.trace.json"))


def test_json_summary_says_interpreter_and_names_the_run_folder(cli_run):
    base, js, _ = cli_run
    run_dir = Path(js["run_dir"])
    assert run_dir.is_dir() and run_dir.parent == base
    assert js["mode"] == "interpret" and js["timing"] == "interpreter"
    assert "not GPU performance" in js["note"]
    assert [(r["kernel"], r["case"], r["dtype"]) for r in js["summary"]] == [
        ("add", "tiny", "float32"), ("add", "tiny", "float16"), ("add", "tiny", "bfloat16")]
    for row in js["summary"]:
        assert row["status"] == "pass"
        assert row["median_ms"] > 0 and row["p20_ms"] <= row["median_ms"] <= row["p80_ms"]
        assert row["gbps"] > 0 and row["bound"] == "memory"
        assert row["torch_ms"] > 0 and row["speedup_vs_torch"] == pytest.approx(row["torch_ms"] / row["median_ms"])
        assert row["pct_of_peak"] is None  # no GPU: no peak to compare with
    assert js["passed"] is True


def test_console_output_says_interpreter_plainly(tmp_path, cli_env):
    cli_env["CUDA_VISIBLE_DEVICES"] = ""
    out = tmp_path / "my-runs"
    p = run_cli(["profile", "add", "--dtype", "float32", "--iters", "1", "--warmup", "0", "--out", str(out)], cli_env)
    assert p.returncode == 0, p.stderr
    assert "interpreter timings" in p.stdout and "not GPU performance" in p.stdout
    assert "autotune add_kernel: pinned (case); ran BLOCK=1024" in p.stdout
    assert f"tensorboard --logdir {out} --host 127.0.0.1" in p.stdout  # the real --out, not ./traces
    assert "report: " in p.stdout and "report.html" in p.stdout
    assert "[1/1] add:tiny:float32 ok" in p.stderr  # progress, one line per case
    assert "Warning" not in p.stderr and "USDT" not in p.stderr, p.stderr
    assert "% of peak" in p.stdout and "vs torch" in p.stdout


def test_one_valid_trace_per_case_with_record_function_events_and_metadata(cli_run):
    _, js, _ = cli_run
    run_dir = Path(js["run_dir"])
    traces = _traces(run_dir)
    assert [t.name.split(".")[0] for t in traces] == ["add-tiny-bfloat16", "add-tiny-float16", "add-tiny-float32"]
    for t in traces:
        dtype = t.name.split(".")[0].split("-")[-1]
        trace = json.loads(t.read_text())  # strict JSON: Perfetto and chrome://tracing need it
        names = [e.get("name") for e in trace["traceEvents"] if e.get("ph") == "X"]
        assert names.count(f"add:tiny:{dtype}") == ITERS, sorted(set(names))
        assert sum(n.startswith(f"torch: add:tiny:{dtype}") for n in names) == ITERS
        meta = trace["tritondbg"]
        assert meta["timing"] == "interpreter" and "not GPU performance" in meta["note"]
        assert (meta["kernel"], meta["case"], meta["dtype"]) == ("add", "tiny", dtype)
        assert meta["kernel_time_ms"]["n"] == ITERS
        [decision] = meta["autotune"]
        assert decision["kernel"] == "add_kernel" and decision["timed"] is False
        assert decision["source"] == "pinned (case)" and decision["winner"]["BLOCK"] == 1024
        assert meta["config"] == {"add_kernel": decision["winner"]}
        statuses = [c["status"] for c in decision["configs"]]
        assert statuses.count("ran") == 1 and statuses.count("not run") == 2
        assert meta["nvtx"]["domain"] == "tritondbg" and "/" not in meta["nvtx"]["message"]
        assert meta["nvtx"]["message"].startswith(f"add:tiny:{dtype} | add_kernel BLOCK=1024")


def test_record_is_the_source_of_every_output(cli_run):
    from tritondbg.record import RunRecord

    _, js, _ = cli_run
    run_dir = Path(js["run_dir"])
    record = RunRecord.load(run_dir / "tritondbg" / "record.json")
    assert js["record"] == str(run_dir / "tritondbg" / "record.json")
    assert RunRecord.load(run_dir).to_dict() == record.to_dict()  # a run folder loads too
    info = record.extra["profile"]
    assert info["run_dir"] == str(run_dir) and info["activities"] == ["cpu"]
    assert sorted(info["traces"]) == sorted(t.name for t in _traces(run_dir))
    for r in record.results:
        prof = r.extra["profile"]
        assert (run_dir / prof["trace"]).is_file()
        trace_meta = json.loads((run_dir / prof["trace"]).read_text())["tritondbg"]
        assert trace_meta["autotune"] == prof["autotune"]
        assert trace_meta["kernel_time_ms"] == prof["kernel"]
    assert info["roofline"] == "roofline.png"
    png = (run_dir / "roofline.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert js["report"] == str(run_dir / "report.html")
    html = (run_dir / "report.html").read_text()
    for r in record.results:  # every case in the summary and in a launch timeline read from its trace
        assert f"<td>{r.kernel}</td><td>{r.case}</td><td>{r.dtype}</td>" in html
        tl = r.extra["profile"]["timeline"]
        assert len(tl["launches"]) == ITERS and len(tl["torch"]) == ITERS and tl["gpu_kernels"] == []
        assert f'<section class="timeline" data-case="{r.kernel}:{r.case}:{r.dtype}">' in html


def test_run_folder_layout_lets_hta_read_it(cli_run):
    """Holistic Trace Analysis reads every *.json at the top of the folder as a trace and keys it by the rank
    in its distributedInfo: only traces there, each with a rank; tritondbg's JSON lives in tritondbg/."""
    _, js, _ = cli_run
    run_dir = Path(js["run_dir"])
    top = sorted(p.name for p in run_dir.glob("*.json"))
    assert top == sorted(t.name for t in _traces(run_dir)) and len(top) == 3
    ranks = []
    for t in _traces(run_dir):
        trace = json.loads(t.read_text())
        ranks.append(trace["distributedInfo"]["rank"])  # one rank per case: HTA keeps one trace per rank
        assert trace["distributedInfo"]["world_size"] == 3
        assert isinstance(trace["traceEvents"], list)
        names = [e["args"]["name"] for e in trace["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"]
        assert "autotune" in names  # the pinned decision as an instant event on the autotune track
    assert sorted(ranks) == [0, 1, 2]
    assert (run_dir / "tritondbg" / "record.json").is_file()
    assert not list(run_dir.glob("hparams/**/*.json"))


def test_hta_opens_the_run_folder(cli_run):
    hta = pytest.importorskip("hta.trace_analysis", reason="HolisticTraceAnalysis not installed")
    _, js, _ = cli_run
    analysis = hta.TraceAnalysis(trace_dir=js["run_dir"])
    assert sorted(analysis.t.traces) == [0, 1, 2]  # every case's trace, none replaced by another
    assert all(len(df) > 0 for df in analysis.t.traces.values())


def test_tensorboard_event_files_hold_hparams_and_best_time(cli_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _, js, _ = cli_run
    run_dir = Path(js["run_dir"])
    root = EventAccumulator(str(run_dir))
    root.Reload()
    tags = root.Tags()
    scalar_tags = set(tags["scalars"])
    for dtype in ("float32", "float16", "bfloat16"):
        tag = f"interpreter/best_time_us/add/tiny/{dtype}"  # CPU: its own section
        assert tag in scalar_tags
        row = next(r for r in js["summary"] if r["dtype"] == dtype)
        assert root.Scalars(tag)[0].value == pytest.approx(row["median_ms"] * 1e3, rel=1e-5)
    assert "roofline" in tags["images"]
    with pytest.raises(KeyError):  # no experiment summary at the root (see tritondbg/profile/tensorboard.py)
        root.PluginTagToContent("hparams")
    trials = sorted(p.parent for p in run_dir.glob("hparams/*/*/events.out.tfevents.*"))
    assert len(trials) == 3  # interpreter: one trial per case, the config that ran
    for trial in trials:
        acc = EventAccumulator(str(trial))
        acc.Reload()
        assert set(acc.Tags()["scalars"]) == {"time/p50_us", "time/p20_us", "time/p80_us"}
        assert "_hparams_/session_start_info" in acc.PluginTagToContent("hparams")


def test_no_partial_or_hidden_folder_left(cli_run):
    base, _, _ = cli_run
    assert [p.name for p in base.iterdir() if p.name.startswith(".")] == []
    assert not list(base.rglob("*.partial"))


def test_bad_input_is_one_line_exit_2(cli_env):
    for args, needle in ((["profile"], "name a KERNEL to profile"),
                         (["profile", "add", "--case", "nope"], "unknown case 'nope' for add"),
                         (["profile", "nokernel"], "unknown kernel 'nokernel'")):
        p = run_cli(args, cli_env)
        assert p.returncode == 2, (args, p.stderr)
        assert needle in p.stderr and "Traceback" not in p.stderr
    p = run_cli(["profile", "add", "--iters", "0"], cli_env)
    assert p.returncode == 2 and "--iters" in p.stderr


# ---------------------------------------------------------------- run folder: atomic, interrupted runs

def test_run_folder_commit_renames_traces_and_folder(tmp_path):
    from tritondbg.profile.session import RunFolder

    with RunFolder(tmp_path / "run-1") as f:
        (f.path / "w.1.pt.trace.json.partial").write_text("{}")
        assert f.path.name == ".run-1.partial"
        f.commit()
    assert (tmp_path / "run-1" / "w.1.pt.trace.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-1"]


def test_run_folder_removed_when_the_run_raises(tmp_path):
    from tritondbg.profile.session import RunFolder

    with pytest.raises(KeyboardInterrupt):
        with RunFolder(tmp_path / "run-1") as f:
            (f.path / "x").write_text("half")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


_HOLD = """
import signal, sys, time
from pathlib import Path
# a shell's background job (`pytest ... &`) starts with SIGINT ignored, and Python keeps it so; a terminal's
# Ctrl-C reaches a foreground run with Python's handler in place, which is what this test is about
signal.signal(signal.SIGINT, signal.default_int_handler)
from tritondbg.profile.session import RunFolder
with RunFolder(Path(sys.argv[1]) / "run-{pid}".format(pid=__import__("os").getpid())) as f:
    (f.path / "w.1.pt.trace.json.partial").write_text("{}")
    print("ready", flush=True)
    time.sleep(60)
"""


def _start_holder(base: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", _HOLD, str(base)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline().strip() == "ready", p.stderr.read()
    return p


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_leaves_nothing(tmp_path, sig):
    p = _start_holder(tmp_path)
    assert len(list(tmp_path.iterdir())) == 1  # the partial folder exists while the run goes on
    p.send_signal(sig)
    p.wait(timeout=90)  # (20 s ran out once on 2 cores loaded by three other runs: the exit, not the handler)
    assert p.returncode != 0
    assert list(tmp_path.iterdir()) == []


def test_killed_run_is_swept_by_the_next_run(tmp_path):
    from tritondbg.profile.session import RunFolder

    p = _start_holder(tmp_path)
    p.kill()  # SIGKILL: no cleanup possible in that process
    p.wait(timeout=20)
    [left] = list(tmp_path.iterdir())
    assert left.name.endswith(".partial") and left.name.startswith(".")
    with RunFolder(tmp_path / "run-next") as f:
        f.commit()
    assert [x.name for x in tmp_path.iterdir()] == ["run-next"]


def test_sweep_keeps_partial_folders_of_live_processes(tmp_path):
    from tritondbg.profile.session import sweep_stale

    live = tmp_path / f".run-{os.getppid()}.partial"
    live.mkdir()
    assert sweep_stale(tmp_path) == []
    assert live.is_dir()


# ---------------------------------------------------------------- pieces

def test_nvtx_message_names_kernel_case_config_and_shapes():
    import torch

    from tritondbg.profile.nvtx_ranges import LaunchRange, range_message

    msg = range_message("gemm", "tiny", "float16", {"gemm_kernel": {"BLOCK_M": 16, "num_warps": 4}},
                        {"a": torch.empty(67, 91, dtype=torch.float16), "b": torch.empty(91, 45).t(),
                         "activation": None, "path": "a/b@c"})
    assert msg == ("gemm:tiny:float16 | gemm_kernel BLOCK_M=16 num_warps=4 | a=f16[67x91] b=f32[45x91] "
                   "path=a|batc")
    with LaunchRange("gemm:tiny:float16", msg) as rng:  # no NVTX tool attached: a no-op that must not fail
        pass
    # the regex form on the case prefix (the literal whole-message form profiled nothing under ncu on the H200)
    assert rng.describe()["ncu_filter"] == "regex:tritondbg@gemm:tiny:float16.*/"


def test_launch_range_shows_in_a_torch_trace(tmp_path):
    import torch

    from tritondbg.profile.nvtx_ranges import LaunchRange
    from tritondbg.profile.session import trace_session

    rng = LaunchRange("k:c:d", "k:c:d | cfg")
    with trace_session(tmp_path, "w", cuda=False) as s:
        for _ in range(3):
            with rng.recording():
                torch.ones(4) + 1
        with rng:  # the plain range (NVTX only) never enters torch's record_function
            torch.ones(4) + 1
        s.add_metadata("tritondbg", {"x": float("inf"), "y": [1.5, float("nan")]})
    trace = json.loads((tmp_path / (s.file + ".partial")).read_text())
    assert sum(e.get("name") == "k:c:d" for e in trace["traceEvents"]) == 3
    assert trace["tritondbg"] == {"x": None, "y": [1.5, None]}


def test_derive_picks_the_limiting_roof_and_ratio():
    from tritondbg.profile.summary import derive
    from tritondbg.record import CaseResult

    peaks = {"figures": {"bandwidth": 4.0e12, "bfloat16": 800e12}}
    r = CaseResult(kernel="gemm", case="c", dtype="bfloat16", mode="compiled", device="cuda", seed=0, params={})
    r.flops, r.bytes = 2 * 4096.0 ** 3, 3 * 4096.0 ** 2 * 2
    r.extra["profile"] = {"kernel": {"median_ms": 0.4}, "torch": {"median_ms": 0.3}}
    d = derive(r, peaks)
    assert d["bound"] == "compute" and d["tflops"] == pytest.approx(r.flops / 0.4e-3 / 1e12)
    assert d["pct_of_peak"] == pytest.approx(100 * d["tflops"] / 800)
    assert d["speedup_vs_torch"] == pytest.approx(0.75)
    r.flops, r.bytes = 1e9, 12e9  # elementwise: 1/12 FLOP per byte
    d = derive(r, peaks)
    assert d["bound"] == "memory" and d["pct_of_peak"] == pytest.approx(100 * 12e9 / 0.4e-3 / 4.0e12)
    assert derive(r, None)["pct_of_peak"] is None and derive(r, None)["bound"] == "memory"


def test_spec_peaks_and_cache_location(monkeypatch, tmp_path):
    from tritondbg.profile import peaks

    assert peaks.spec_peaks("NVIDIA H200")["bandwidth"] == 4.8e12
    assert peaks.spec_peaks("NVIDIA H100 80GB HBM3")["bfloat16"] == 989e12
    assert peaks.spec_peaks("Some GPU") is None
    monkeypatch.setenv("TRITONDBG_CACHE_DIR", str(tmp_path))
    assert peaks.cache_path() == tmp_path / "peaks.json"
    assert "interpreter" in peaks.describe(None)
    line = peaks.describe({"source": "spec", "device": "NVIDIA H200", "figures": peaks.SPEC["H200"]})
    assert "4.80 TB/s" in line and "spec sheet" in line


def test_summarize_quantiles():
    from tritondbg.profile.timing import summarize

    s = summarize([5.0, 1.0, 3.0, 2.0, 4.0], "x")
    assert (s["median_ms"], s["p20_ms"], s["p80_ms"], s["n"]) == (3.0, 1.8, 4.2, 5)


def test_gpu_branch_runs_with_a_stand_in_timer(tmp_path, monkeypatch):
    """The compiled-mode branch of a case (do_bench timing, no interpreter note, % of peak) on the CPU:
    do_bench is replaced by a stand-in; softmax has no autotuner, so nothing needs a GPU to benchmark."""
    from torch.profiler import ProfilerActivity

    from tritondbg import loader
    from tritondbg.profile import pipeline, session, timing

    calls = []

    def fake_time_gpu(fn, *, cuda_graph=False, **_):
        fn()
        calls.append(cuda_graph)
        return {"median_ms": 2.0, "p20_ms": 1.9, "p80_ms": 2.2, "n": None, "method": "triton.testing.do_bench"}

    monkeypatch.setattr(timing, "time_gpu", fake_time_gpu)
    monkeypatch.setattr(session, "activities", lambda cuda: [ProfilerActivity.CPU])  # a CPU build of torch
    scenario = loader.load("softmax")
    peaks = {"source": "spec", "device": "test GPU", "figures": {"bandwidth": 1e9, "float32": 1e12}}
    with session.RunFolder(tmp_path / "run") as folder:
        r = pipeline.profile_case(scenario, scenario.case("tiny"), "float32", device="cpu", interpret=False,
                                  opts=pipeline.Options(iters=2, warmup=1, cuda_graph=True), folder=folder,
                                  peaks=peaks)
        folder.commit()
    prof = r.extra["profile"]
    assert r.status == "pass" and prof["timing"] == "gpu" and "note" not in prof
    assert calls == [True, True]  # the kernel, then torch's softmax, both with --cuda-graph
    assert prof["kernel"]["median_ms"] == 2.0 and prof["torch"]["label"] == "torch.softmax"
    m = prof["metrics"]
    assert m["bound"] == "memory" and m["gbps"] == pytest.approx(r.bytes / 2e-3 / 1e9)
    assert m["pct_of_peak"] == pytest.approx(100 * m["gbps"] * 1e9 / 1e9) and m["speedup_vs_torch"] == 1.0
    assert prof["autotune"] == []
    trace = json.loads((tmp_path / "run" / prof["trace"]).read_text())
    assert trace["tritondbg"]["timing"] == "gpu" and trace["tritondbg"]["metrics"] == m
    assert [e["name"] for e in trace["traceEvents"] if e.get("name") == "softmax:tiny:float32"] == [
        "softmax:tiny:float32"] * 2


def test_real_profile_run_killed_midway_leaves_nothing_tensorboard_lists(tmp_path, cli_env):
    """SIGTERM while `profile --all` is writing traces: exit 130 and an empty output folder."""
    cli_env["CUDA_VISIBLE_DEVICES"] = ""
    out = tmp_path / "traces"
    proc = subprocess.Popen([sys.executable, "-m", "tritondbg", "profile", "--all", "--iters", "3", "--out", str(out)],
                            env=cli_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(out.glob(".*.partial/*.pt.trace.json.partial")):
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.05)
        assert list(out.glob(".*.partial/*.pt.trace.json.partial")), "no trace was being written"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read()
    assert proc.returncode == 130, err
    assert list(out.iterdir()) == []
    assert "tritondbg profile: interrupted after " in err and "unfinished run folder was removed" in err, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_profilers_stop_acts_after_it(sig):
    """signals_deferred: the interrupt waits for the block (the torch profiler's stop and export), then raises
    as it would have."""
    from tritondbg.profile.session import _raise_interrupt, signals_deferred

    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)  # what a run folder installs
    # Python's own SIGINT handler, as in a program run from a terminal (pytest run as a background job of a
    # non-interactive shell starts with SIGINT ignored, and then nothing raises)
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    done = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with signals_deferred():
                os.kill(os.getpid(), sig)
                time.sleep(0.05)  # a handler would have run by now
                done.append("the block finished")
        assert done == ["the block finished"]
        assert signal.getsignal(signal.SIGTERM) is _raise_interrupt  # handlers restored
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)


def test_hparams_trials_one_per_config_of_a_timed_decision():
    from tritondbg.profile.tensorboard import trials
    from tritondbg.record import CaseResult, RunRecord

    def entry(block, p50, status, winner=False):
        return {"config": {"BLOCK": block, "num_warps": 4}, "p50_ms": p50, "p20_ms": p50 and p50 * 0.9,
                "p80_ms": p50 and p50 * 1.1, "status": status, "winner": winner}

    r = CaseResult(kernel="add", case="big", dtype="float32", mode="compiled", device="cuda", seed=0, params={})
    r.extra["profile"] = {"timing": "gpu", "kernel": {"median_ms": 0.2, "p20_ms": 0.19, "p80_ms": 0.21},
                          "autotune": [{"kernel": "add_kernel", "source": "benchmark", "configs": [
                              entry(1024, 0.25, "timed"), entry(2048, 0.2, "timed", True),
                              entry(4096, None, "failed"), entry(8192, None, "pruned")]}]}
    rec = RunRecord(command="profile", results=[r])
    got = trials(rec)
    assert [name for name, _, _ in got] == [f"hparams/add-big-float32/add_kernel-0{i}" for i in range(4)]
    assert [hp["BLOCK"] for _, hp, _ in got] == [1024, 2048, 4096, 8192]
    assert [hp["winner"] for _, hp, _ in got] == ["no", "yes", "no", "no"]
    assert [hp["status"] for _, hp, _ in got] == ["timed", "timed", "failed", "pruned"]
    assert got[1][2] == {"time/p50_us": pytest.approx(200.0), "time/p20_us": pytest.approx(180.0),
                         "time/p80_us": pytest.approx(220.0)}
    assert got[2][2] == {} and got[3][2] == {}


def test_hparams_trials_of_two_autotune_keys_of_one_kernel_get_their_own_runs():
    """Two keys of one kernel (a program's n = 1000 and n = 4096): each config trial its own run name (they shared
    one: TensorBoard kept one HParams session and piled the other's event files into it)."""
    from tritondbg.profile.tensorboard import trials
    from tritondbg.record import CaseResult, RunRecord

    def decision(n):
        return {"kernel": "sum_kernel", "source": "interpreter", "key": [str(n)], "configs": [
            {"config": {"BLOCK": 256}, "p50_ms": None, "p20_ms": None, "p80_ms": None, "status": "ran",
             "winner": True}]}

    r = CaseResult(kernel="sum_kernel", case="program", dtype="float32", mode="interpret", device="cpu", seed=0,
                   params={})
    r.extra["profile"] = {"timing": "interpreter", "kernel": {"median_ms": 1.0}, "autotune": [decision(1000),
                                                                                          decision(4096)]}
    names = [name for name, _, _ in trials(RunRecord(command="profile", results=[r]))]
    assert len(names) == len(set(names)) == 2, names


def test_progress_line_gives_a_fast_cases_wall_time_in_ms():
    from tritondbg.profile.pipeline import progress_line
    from tritondbg.record import CaseResult

    r = CaseResult(kernel="add", case="tiny", dtype="float16", device="cpu", mode="interpret", seed=0, params={})
    r.status = "pass"
    r.extra["profile"] = {"kernel": {"median_ms": 6.17}}
    assert progress_line(r, 2, 3, 0.042).endswith("ok 6.17 ms (42 ms of wall time)")
    assert progress_line(r, 2, 3, 12.44).endswith("(12.4 s of wall time)")


def test_an_error_caught_after_a_sigterm_is_the_interrupt_again(tmp_path):
    """A CI run: SIGTERM during `profile --all` on the CPU came back as one case's error (the KeyboardInterrupt it
    became was raised inside a callback and returned as another exception) and the run went on to exit 1, not 130.
    After the run folder's SIGTERM, an error a case catches is the interrupt again."""
    from tritondbg.profile import session

    from tritondbg import stops

    stops.clear()
    session.reraise_if_terminated(RuntimeError("a kernel's own error"))  # no SIGTERM: the case keeps its error
    try:
        with pytest.raises(KeyboardInterrupt):
            session._raise_interrupt(signal.SIGTERM, None)
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            session.reraise_if_terminated(RuntimeError("what the callback made of it"))
    finally:
        stops.clear()
    # Ctrl-C too: inside a run folder SIGINT is noted the same way (Python's own handler is put back after it)
    with session.RunFolder(tmp_path / "run"):
        assert signal.getsignal(signal.SIGINT) is session._raise_interrupt
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt, match="SIGINT"):
            session.reraise_if_terminated(RuntimeError("what the callback made of a Ctrl-C"))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    stops.clear()
