"""`tritondbg profile -- CMD` on the CPU: the observer's window and autotune reading with stand-in launches
(tritondbg/profile/program.py), and one real run of tests/gpu/profile_program.py under the interpreter."""
import gzip
import json
import os
import re
from pathlib import Path

import pytest

from conftest import REPO, run_cli

PROGRAM = REPO / "tests" / "gpu" / "profile_program.py"


class FakeConfig:
    def __init__(self, **kw):
        self.kwargs, self.num_warps, self.num_stages, self.num_ctas, self.maxnreg = kw, 4, 3, 1, None
        self.pre_hook = None

    def all_kwargs(self):
        return {**self.kwargs, "num_warps": 4, "num_stages": 3}

    def __hash__(self):
        return hash(tuple(sorted(self.kwargs.items())))

    def __eq__(self, other):
        return isinstance(other, FakeConfig) and self.kwargs == other.kwargs


class FakeTuner:
    """What ProgramProfiler reads from a triton Autotuner right at its launch."""

    def __init__(self, configs):
        self.configs, self.keys, self.arg_names = configs, ["n"], ["x_ptr", "n", "BLOCK"]
        self.configs_timings, self.bench_time, self.best_config = None, None, None


def _launch(fn, name, n, config=None):
    import torch

    from tritondbg.program.attach import Launch

    x = torch.zeros(n)
    return Launch(fn=fn, name=name, qualname=name, module="m", file="k.py", line=1,
                  args={"x_ptr": x, "n": n, "BLOCK": 64}, options={}, grid=(1,), config=config)


@pytest.fixture
def profiler(tmp_path, monkeypatch):
    from tritondbg.profile import program

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # the compiled path of the decision reading
    import torch

    from tritondbg.program import exits

    monkeypatch.setattr(exits, "on_exit", lambda fn, in_forks=True: None)
    # the observer wraps torch.profiler.profile.start (to see the program's own session): undone after the test
    monkeypatch.setattr(torch.profiler.profile, "start", torch.profiler.profile.start)
    (tmp_path / "tritondbg").mkdir()

    def make(**cfg):
        return program.ProgramProfiler({"run_dir": str(tmp_path / "tritondbg"), "trace_dir": str(tmp_path), **cfg})
    return make


def test_window_and_autotune_decisions_from_stand_in_launches(profiler, tmp_path):
    import torch

    from tritondbg.program import attach

    configs = [FakeConfig(BLOCK=64), FakeConfig(BLOCK=128), FakeConfig(BLOCK=256)]
    tuner = FakeTuner(configs)
    fn = object()
    p = profiler(skip=1, active=3)
    attach._local.tuners = [tuner]
    try:
        # a benchmark of key (100, float32) just ran: BLOCK=256 was pruned, BLOCK=128 won
        tuner.configs_timings = {configs[0]: [0.02, 0.018, 0.022], configs[1]: [0.01, 0.009, 0.011]}
        tuner.bench_time = 0.5
        for i in range(6):  # launches 1..3 are traced; 5 has a new key that was served by a cache
            n = 200 if i == 5 else 100
            p.around(_launch(fn, "k_kernel", n, configs[1]), lambda: torch.ones(8) * 2)
    finally:
        attach._local.tuners = None
    p.finish()
    data = json.loads((tmp_path / "tritondbg" / f"program-{os.getpid()}.json").read_text())
    k = data["kernels"]["k_kernel"]
    assert (k["launches"], k["traced"], k["bytes"]) == (6, 3, 3 * 100 * 4)
    assert data["window"] == {"skip": 1, "active": 3, "started_at_launch": 1, "source": "launches 1..3",
                              "cycles": []}
    assert data["own_ns"] > 0 and data["phases"]["json_written"] >= data["phases"]["exit"]
    first, second = data["decisions"]
    assert first["source"] == "benchmark" and first["key"] == ["100", "torch.float32"]
    assert [c["status"] for c in first["configs"]] == ["timed", "timed", "pruned"]
    assert [c["winner"] for c in first["configs"]] == [False, True, False]
    assert first["configs"][1]["p20_ms"] == pytest.approx(0.009) and first["launches"] == 5
    assert first["cache_hits"] == 4 and first["bench_s"] == 0.5
    assert second["source"] == "cache" and second["cache_hit"] and second["key"] == ["200", "torch.float32"]
    from tritondbg.profile import program_run

    trace_file = tmp_path / (data["trace"] + ".partial")
    assert "distributedInfo" not in json.loads(trace_file.read_text())  # the parent adds rank and track
    program_run.build_record(tmp_path, command="profile -- x", exit_status=0, interpret=False)
    trace = json.loads(trace_file.read_text())
    ranges = [e for e in trace["traceEvents"] if e.get("name") == "k_kernel" and e.get("ph") == "X"]
    assert len(ranges) == 3  # the window: launches 1, 2, 3
    assert trace["distributedInfo"]["rank"] == 0
    track = [e for e in trace["traceEvents"] if e.get("cat") == "autotune" and e.get("ph") == "X"]
    assert [e["args"]["winner"] for e in track] == [False, True]


def test_profile_a_program_under_the_interpreter(tmp_path, cli_env):
    cli_env["CUDA_VISIBLE_DEVICES"] = ""
    out = tmp_path / "runs"
    p = run_cli(["profile", "--out", str(out), "--json", str(tmp_path / "p.json"), "--", "python", str(PROGRAM),
                 "--steps", "2"], cli_env, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.startswith("profile_program: 2 steps on cpu")  # the program's stdout; tritondbg's table: stderr
    assert "layernorm_fwd_kernel" in p.stderr and f"tensorboard --logdir {out} --host 127.0.0.1" in p.stderr
    assert "layernorm_fwd_kernel" not in p.stdout  # stdout is the program's
    js = json.loads((tmp_path / "p.json").read_text())
    assert js["timing"] == "interpreter" and "not GPU performance" in js["note"]
    # the program's own time (it prints it) < the child's wall time; tritondbg's report time apart
    script_s = float(re.search(r"script_s=([0-9.]+)", p.stdout).group(1))
    assert 0 < script_s < js["wall_s"] and 0 < js["report_s"] < 60, (script_s, js["wall_s"], js["report_s"])
    rows = {r["kernel"]: r for r in js["kernels"]}
    assert set(rows) == {"add_kernel", "softmax_kernel", "layernorm_fwd_kernel", "gemm_tma_kernel"} or \
        set(rows) == {"add_kernel", "softmax_kernel", "layernorm_fwd_kernel", "gemm_kernel"}
    for r in rows.values():
        assert r["launches"] == 2 and r["timed_launches"] == 2 and r["total_ms"] > 0 and r["gbps"] > 0
    assert sum(r["share"] for r in rows.values()) == pytest.approx(1.0)
    assert rows["add_kernel"]["bytes_per_launch"] == 3 * 1000 * 4  # x, y, out: float32[1000]
    tuned = {d["kernel"]: d for d in js["autotune"]}
    assert tuned["add_kernel"]["source"] == "interpreter" and tuned["add_kernel"]["cache_hits"] == 1
    # (helper-108: it said "ran the one the autotuner picked", and no autotuner had run)
    assert "ran the first one its autotuner would try after its pruning" in tuned["add_kernel"]["note"], tuned
    run_dir = Path(js["run_dir"])
    [trace] = list(run_dir.glob("*.json"))  # layout rule: only the program's trace at the top
    assert trace.name.startswith("program-") and trace.name.endswith(".pt.trace.json")
    doc = json.loads(trace.read_text())
    assert doc["distributedInfo"]["rank"] == 0
    # tritondbg's metadata, as `profile KERNEL`'s traces have it, and the name the trace has once committed (it
    # named the deleted .partial folder)
    meta = json.loads(doc["tritondbg"])
    assert meta["timing"] == "interpreter" and "layernorm_fwd_kernel" in meta["kernels"], meta
    assert doc["traceName"] == str(trace)
    html = (run_dir / "report.html").read_text()
    assert 'id="program-kernels"' in html and html.count('class="autotune"') == len(js["autotune"])


def test_program_exit_status_and_missing_program(tmp_path, cli_env):
    cli_env["CUDA_VISIBLE_DEVICES"] = ""
    prog = tmp_path / "fails.py"
    prog.write_text("import sys\nsys.exit(3)\n")
    p = run_cli(["profile", "--out", str(tmp_path / "runs"), "--", "python", str(prog)], cli_env)
    assert p.returncode == 3, p.stderr[-2000:]
    assert "the program exited with status 3" in p.stderr
    p = run_cli(["profile", "--", "no-such-program-xyz"], cli_env)
    assert p.returncode == 127 and p.stderr.strip() == "error: no-such-program-xyz: command not found"
    p = run_cli(["profile", "--"], cli_env)
    assert p.returncode == 2 and "no program to run" in p.stderr and "Traceback" not in p.stderr


def test_kernel_totals_leave_autotune_benchmark_launches_out():
    from tritondbg.profile.trace_events import kernel_totals

    def x(name, cat, ts, dur, corr=None):
        return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "args": {"correlation": corr} if corr else {}}

    trace = {"traceEvents": [
        x("cuLaunchKernel", "cuda_driver", 10, 2, corr=1), x("add_kernel", "kernel", 20, 50, corr=1),  # benchmark
        x("add_kernel", "user_annotation", 100, 10),
        x("cuLaunchKernel", "cuda_driver", 102, 2, corr=2), x("add_kernel", "kernel", 110, 40, corr=2),
        x("cudaLaunchKernel", "cuda_runtime", 150, 2, corr=3), x("void at::native::copy", "kernel", 160, 5, corr=3),
    ]}
    totals, source = kernel_totals(trace, ["add_kernel"])
    assert source == "gpu"
    assert totals["add_kernel"] == {"launches": 1, "total_us": 40.0, "durs_us": [40.0]}
    assert totals["add_kernel (autotune benchmark)"] == {"launches": 1, "total_us": 50.0, "durs_us": [50.0]}
    assert totals["void at::native::copy"]["total_us"] == 5.0
    cpu, source = kernel_totals({"traceEvents": [x("add_kernel", "user_annotation", 0, 7)]}, ["add_kernel"])
    assert source == "cpu" and cpu == {"add_kernel": {"launches": 1, "total_us": 7.0, "durs_us": [7.0]}}


def test_processes_of_one_program_get_their_own_rank_and_one_row_per_kernel(tmp_path):
    """Each process's trace gets its own rank (TensorBoard shows them side by side) and its own result in the
    record; the kernels table has one row per kernel across the processes (`profile -- pytest -n 2` showed one row
    per worker's pid: helper-132), its median over every traced launch."""
    from tritondbg.profile import program_run

    (tmp_path / "tritondbg").mkdir()
    for pid, dur in ((11, 5), (12, 15)):
        name = f"program-{pid}.1.pt.trace.json"
        (tmp_path / (name + ".partial")).write_text(json.dumps({
            "traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "k", "ts": 0, "dur": dur}],
            "distributedInfo": {"backend": "none", "rank": 0, "world_size": 1}}))
        (tmp_path / "tritondbg" / f"program-{pid}.json").write_text(json.dumps({
            "pid": pid, "trace": name, "interpreted": True, "launches_seen": 1, "window": {}, "decisions": [],
            "kernels": {"k": {"launches": 1, "traced": 1, "bytes": 400, "dtype": "float32", "shapes": [],
                              "file": "k.py", "line": 1}}}))
    rec = program_run.build_record(tmp_path, command="profile -- x", exit_status=0, interpret=True)
    ranks = sorted(json.loads(p.read_text())["distributedInfo"]["rank"] for p in tmp_path.glob("*.partial"))
    assert ranks == [0, 1]
    (row,) = rec.extra["profile"]["program"]["kernels"]
    assert (row["label"], row["pids"], row["launches"]) == ("k (2 processes)", [11, 12], 2), row
    assert row["total_ms"] == pytest.approx(0.02) and row["median_ms"] == pytest.approx(0.01), row
    assert row["share"] == pytest.approx(1.0) and row["gbps"] == pytest.approx(400 / 1e-5 / 1e9), row
    assert sorted(r.params["pid"] for r in rec.results) == [11, 12]


def test_a_programs_kernel_time_is_the_median_of_its_launches_not_their_mean(tmp_path):
    """One slow launch (a cold first call) among fast ones: the table's and TensorBoard's "median" is the
    median of the traced launches; the mean stays in the kernels table."""
    from tritondbg.profile import program_run

    (tmp_path / "tritondbg").mkdir()
    name = "program-7.1.pt.trace.json"
    durs = [900, 10, 11, 12, 10]
    (tmp_path / (name + ".partial")).write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "k", "ts": i * 1000, "dur": d} for i, d in enumerate(durs)]}))
    (tmp_path / "tritondbg" / "program-7.json").write_text(json.dumps({
        "pid": 7, "trace": name, "interpreted": True, "launches_seen": 5, "window": {}, "decisions": [],
        "kernels": {"k": {"launches": 5, "traced": 5, "bytes": 400, "dtype": "float32", "shapes": [],
                          "file": "k.py", "line": 1}}}))
    rec = program_run.build_record(tmp_path, command="profile -- x", exit_status=0, interpret=True)
    kernel = rec.results[0].extra["profile"]["kernel"]
    assert kernel["median_ms"] == pytest.approx(0.011) and kernel["n"] == 5
    assert kernel["p20_ms"] < kernel["median_ms"] < kernel["p80_ms"]
    assert kernel["mean_ms"] == pytest.approx(sum(durs) / 5 / 1e3)
    assert rec.extra["profile"]["program"]["kernels"][0]["mean_ms"] == pytest.approx(sum(durs) / 5 / 1e3)


OWN_PROFILER = """
import torch
from tritondbg.kernels.add import add
x = torch.ones(1000)
add(x, x)
with torch.profiler.profile() as prof:
    add(x, x)
prof.export_chrome_trace({out!r})
print("own trace written")
"""


def test_a_program_with_its_own_profiler_keeps_it(tmp_path, cli_env):
    cli_env["CUDA_VISIBLE_DEVICES"] = ""
    prog = tmp_path / "own.py"
    prog.write_text(OWN_PROFILER.format(out=str(tmp_path / "own.json")))
    p = run_cli(["profile", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "p.json"), "--", "python",
                 str(prog)], cli_env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "own trace written" in p.stdout
    own = json.loads((tmp_path / "own.json").read_text())  # the program's session recorded its launch
    assert any(e.get("name") == "add_kernel" for e in own["traceEvents"])
    assert "the program started its own torch.profiler session at Triton launch 1" in p.stderr
    [row] = json.loads((tmp_path / "p.json").read_text())["kernels"]
    assert (row["kernel"], row["launches"], row["traced"]) == ("add_kernel", 2, 1)


SCHEDULED = """
import sys
import torch
from tritondbg.kernels.add import add

own_dir = sys.argv[1]
dev = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.ones(64, device=dev)
add(x, x)  # before the program's profiler: counted, not traced
cpu = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if dev == "cuda" else [])
# session A: wait 1, warmup 1, active 2, twice; the program's traces through tensorboard_trace_handler (gzip)
sched = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
with torch.profiler.profile(activities=cpu, schedule=sched,
                            on_trace_ready=torch.profiler.tensorboard_trace_handler(own_dir, use_gzip=True)) as prof:
    for step in range(9):
        add(x, x)
        prof.step()
# session B: a handler that reads the results but never exports them (tritondbg exports that cycle itself)
seen = []
with torch.profiler.profile(activities=cpu, schedule=torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=1),
                            on_trace_ready=lambda p: seen.append(len(p.key_averages()))) as prof:
    for step in range(3):
        add(x, x)
        prof.step()
print("program done", len(seen))
"""


def _launch_steps(trace):
    """The ProfilerStep#N ranges holding an add_kernel launch range."""
    evs = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    steps = [e for e in evs if e.get("name", "").startswith("ProfilerStep#")]
    out = []
    for e in evs:
        if e.get("name") == "add_kernel" and e.get("cat") == "user_annotation":
            out += [int(s["name"].split("#")[1]) for s in steps if s["ts"] <= e["ts"] <= s["ts"] + s["dur"]]
    return sorted(out)


def _follow_schedule(tmp_path, cli_env):
    prog = tmp_path / "sched.py"
    prog.write_text(SCHEDULED)
    own = tmp_path / "own"
    p = run_cli(["profile", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "p.json"), "--", "python",
                 str(prog), str(own)], cli_env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "program done 1" in p.stdout
    js = json.loads((tmp_path / "p.json").read_text())
    assert js["window"]["source"] == "program schedule" and "program schedule" in p.stderr
    assert "tritondbg follows it" in p.stderr
    cycles = js["window"]["cycles"]
    assert [(c["steps"], c["launches"], c["exported_by"]) for c in cycles] == [
        ([2, 3], 2, "the program"), ([6, 7], 2, "the program"), ([1], 1, "tritondbg")]
    assert (js["window"]["launches"], js["window"]["traced"]) == (1 + 9 + 3, 5)
    [row] = js["kernels"]
    assert (row["launches"], row["traced"], row["timed_launches"]) == (13, 5, 5)
    # the program's own handler wrote its two traces where it wanted them
    assert len(list(own.glob("*.pt.trace.json.gz"))) == 2
    run_dir = Path(js["run_dir"])
    names = [c["trace"] for c in cycles]
    assert names[0].endswith(".pt.trace.json.gz") and names[2].endswith(".pt.trace.json")  # copies keep gzip
    traces = sorted((f for f in run_dir.iterdir() if ".json" in f.name), key=lambda f: names.index(f.name))
    assert [t.name for t in traces] == names  # one trace per cycle at the top, no other JSON there
    loaded = [json.loads(gzip.decompress(t.read_bytes()) if t.suffix == ".gz" else t.read_text()) for t in traces]
    assert [_launch_steps(t) for t in loaded] == [[2, 3], [6, 7], [1]]
    assert sorted(t["distributedInfo"]["rank"] for t in loaded) == [0, 1, 2]  # HTA keeps every cycle
    assert all(t["distributedInfo"]["world_size"] == 3 for t in loaded)
    assert all(any(e.get("cat") == "autotune" for e in t["traceEvents"]) for t in loaded)
    line = "traced: 5 of 13 Triton launches (program schedule: 3 trace(s), one per cycle of the program's profiler"
    assert line in p.stderr and line in (run_dir / "report.html").read_text().replace("&#x27;", "'")
    return prog, js, loaded


def test_profile_follows_the_programs_schedule(tmp_path, cli_env):
    cli_env["CUDA_VISIBLE_DEVICES"] = ""
    prog, _, _ = _follow_schedule(tmp_path, cli_env)
    # --active given: tritondbg's own window wins; the program's sessions run unfollowed
    p = run_cli(["profile", "--out", str(tmp_path / "runs"), "--active", "1", "--json", str(tmp_path / "q.json"),
                 "--", "python", str(prog), str(tmp_path / "own2")], cli_env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    js = json.loads((tmp_path / "q.json").read_text())
    assert js["window"]["source"] == "launches 0..0" and js["window"]["cycles"] == []
    assert any("not followed (--skip/--active given" in n for n in js["notes"])
    assert len(list(Path(js["run_dir"]).glob("*.json"))) == 1 and len(list((tmp_path / "own2").glob("*.gz"))) == 2


EARLY_PROFILER = """
import torch
with torch.profiler.profile() as prof:  # its start imports inductor, which imports triton: tritondbg attaches there
    from tritondbg.kernels.add import add
    x = torch.ones(64)
    add(x, x)
add(x, x)
print("early done")
"""


def test_a_profiler_whose_start_imports_triton_is_followed(tmp_path, cli_env):
    """Attaching inside the program's profiler start must not start a second session (it crashed at exit)."""
    cli_env["CUDA_VISIBLE_DEVICES"] = ""
    prog = tmp_path / "early.py"
    prog.write_text(EARLY_PROFILER)
    p = run_cli(["profile", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "p.json"), "--", "python",
                 str(prog)], cli_env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "early done" in p.stdout and "tritondbg follows it" in p.stderr
    js = json.loads((tmp_path / "p.json").read_text())
    [row] = js["kernels"]
    assert (row["launches"], row["traced"], row["timed_launches"]) == (2, 1, 1)
    assert js["window"]["source"] == "program profiler" and len(js["window"]["cycles"]) == 1


INTERRUPTED = """
import os, signal, sys, time
# a background job (`pytest ... &`) starts with SIGINT ignored; a terminal's Ctrl-C finds Python's handler
signal.signal(signal.SIGINT, signal.default_int_handler)
import torch
from tritondbg.kernels.add import add
x = torch.ones(64)
add(x, x)
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
time.sleep(120)
"""


def test_ctrl_c_of_the_program_still_writes_the_run_folder(tmp_path, cli_env):
    """Ctrl-C reaches tritondbg and the program (one process group): the program's files are written at its
    exit, the run folder is built from them, and the exit status is 130."""
    import signal
    import subprocess
    import sys
    import time

    cli_env["CUDA_VISIBLE_DEVICES"] = ""
    prog, pidfile = tmp_path / "hold.py", tmp_path / "pid"
    prog.write_text(INTERRUPTED)
    proc = subprocess.Popen([sys.executable, "-m", "tritondbg", "profile", "--out", str(tmp_path / "runs"), "--json",
                             str(tmp_path / "p.json"), "--", "python", str(prog), str(pidfile)], env=cli_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.time() + 120
        while not (pidfile.exists() and pidfile.read_text()) and time.time() < deadline and proc.poll() is None:
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-3000:]
    # the program's KeyboardInterrupt (the whole stderr on failure: a CI run once lacked one of the two)
    assert "was interrupted (Ctrl-C / SIGINT" in err and "Traceback (most recent call last)" in err, err
    js = json.loads((tmp_path / "p.json").read_text())
    assert js["exit_status"] == 130
    [row] = js["kernels"]
    assert (row["kernel"], row["launches"], row["traced"], row["timed_launches"]) == ("add_kernel", 1, 1, 1)
    run_dir = Path(js["run_dir"])
    [trace] = list(run_dir.glob("*.pt.trace.json"))
    assert any(e.get("name") == "add_kernel" for e in json.loads(trace.read_text())["traceEvents"])
    assert (run_dir / "report.html").is_file() and (run_dir / "tritondbg" / "record.json").is_file()


@pytest.mark.gpu
def test_profile_follows_the_programs_schedule_on_the_gpu(tmp_path, cli_env):
    """The same program on a GPU: every cycle's trace holds the GPU kernels of exactly its recorded launches."""
    _, js, loaded = _follow_schedule(tmp_path, cli_env)
    assert js["timing"] == "gpu"
    gpu = [sum(e.get("cat") == "kernel" and e.get("name") == "add_kernel" for e in t["traceEvents"]) for t in loaded]
    assert gpu == [2, 2, 1]
    [row] = js["kernels"]
    assert row["timed_launches"] == 5 and row["total_ms"] > 0


RAISES = '''
import torch, triton, triton.language as tl

@triton.jit
def helper(x):
    y = x * x  # (no return)

@triton.jit
def kern(x_ptr, y_ptr, n, BLOCK: tl.constexpr, BAD: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if BAD:
        x = tl.sum(helper(x), 0)
    tl.store(y_ptr + offs, x, mask=offs < n)

@triton.jit
def fine(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

x = torch.randn(100); y = torch.empty(100)
fine[(1,)](x, 100, BLOCK=128)
kern[(4,)](x, y, 100, BLOCK=32, BAD=False)
kern[(4,)](x, y, 100, BLOCK=32, BAD=True)
'''


def test_profiling_a_program_checks_nothing_and_says_which_launches_failed(tmp_path, cli_env):
    """Profiling compares nothing: a kernel whose launches all finished was "check ok" / status pass in the
    record, the report and the console, and one whose launch raised (a forgotten return) was timed as a
    finished launch and marked ok too (a stranger's find)."""
    cli_env["CUDA_VISIBLE_DEVICES"] = ""
    prog = tmp_path / "raises.py"
    prog.write_text(RAISES)
    p = run_cli(["profile", "--out", str(tmp_path / "runs"), "--json", str(tmp_path / "p.json"), "--", "python",
                 str(prog)], cli_env, timeout=600)
    assert p.returncode == 1 and "the program exited with status 1" in p.stderr, p.stderr[-3000:]
    assert "kern: 1 of its 2 launch(es) raised " in p.stderr, p.stderr[-3000:]
    assert "profiling checks nothing" in p.stderr
    run_dir = Path(json.loads((tmp_path / "p.json").read_text())["run_dir"])
    record = json.loads((run_dir / "tritondbg" / "record.json").read_text())
    status = {r["kernel"]: r["status"] for r in record["results"]}
    assert status == {"fine": "not checked", "kern": "error"}, status
    html = (run_dir / "report.html").read_text()
    assert "<td>ok</td>" not in html and '<tr class="failed"><td>kern</td>' in html, html[:3000]


@pytest.mark.parametrize("env, nodes, visible", [
    ({}, {"/dev/nvidiactl"}, True),
    ({"CUDA_VISIBLE_DEVICES": ""}, {"/dev/nvidiactl"}, False),
    ({"CUDA_VISIBLE_DEVICES": "-1"}, {"/dev/nvidiactl"}, False),
    ({"CUDA_VISIBLE_DEVICES": "0"}, {"/dev/nvidiactl"}, True),
    ({"HIP_VISIBLE_DEVICES": ""}, {"/dev/kfd"}, False),
    ({}, set(), False),
])
def test_a_gpu_machine_whose_devices_are_hidden_runs_programs_under_the_interpreter(env, nodes, visible,
                                                                                   monkeypatch):
    """`CUDA_VISIBLE_DEVICES= tritondbg profile -- CMD` on a GPU machine ran the program compiled (a device node
    exists) and every launch died of Triton's "0 active drivers" (seen on the H200 machine)."""
    from tritondbg.program import modes

    for name in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(modes.os.path, "exists", lambda p: p in nodes)
    assert modes.gpu_visible() is visible


def test_own_time_line_adds_up_and_a_windowed_profiler_stop_is_not_negative():
    """helper-46: with --active the profiler stops before the program's exit, and "profiler stop -1.29 s" was
    measured from the exit; "2958.5 us/launch x 12 = 0.03 s" did not multiply out (the first launch, which pays the
    imports, is left out of the per-launch figure)."""
    from tritondbg.profile.program_run import breakdown, overhead, overhead_line

    phases = {"bootstrap": 1.0, "child_loaded": 1.2, "attach_start": 1.2, "attach_ready": 1.3,
              "session_begin": 1.5, "session_started": 1.52,  # --skip 2: the session starts inside launch 2
              "profiler_stopping": 2.0, "profiler_stopped": 2.25, "trace_exported": 2.5, "exit": 3.3,
              "json_written": 3.4}
    data = {"phases": phases, "launches_seen": 12, "own_ns": 30e6 + 11 * 500e3 + 270e6, "first_launch_ns": 30e6}
    o = overhead(data)
    assert o["profiler_stop_s"] == pytest.approx(0.25) and o["per_launch_us"] == pytest.approx(500.0)
    line = overhead_line(breakdown([{"overhead": o, "launches_seen": 12}], 0.5, 3.6, 0.1))
    assert ("12 launch(es) 0.31 s (the first 0.03 s, the profiler's start and stop in the window's edge launches "
            "0.27 s, then 500.0 us each)") in line, line
    assert "profiler stop 0.25 s" in line and "-" not in line.split("profiler stop")[1][:3], line


def test_a_kernel_launched_only_outside_the_window_shows_no_time():
    from tritondbg.profile.program_run import kernel_cells

    row = {"kernel": "k", "launches": 3, "timed_launches": 0, "total_ms": 0.0, "mean_ms": None, "share": 0.0,
           "gbps": None, "autotune": "-"}
    assert kernel_cells(row)[2:5] == ["- (not traced)", "-", "-"]
    row.update(timed_launches=2, total_ms=0.5, mean_ms=0.25, share=0.5)
    assert kernel_cells(row)[4] == "50.0%"


def test_the_report_imports_prefetch_has_ended_before_the_report(tmp_path, monkeypatch):
    """On a machine of >= 8 cores the report's heavy imports run in a daemon thread while the program runs. One
    still importing at the exit is cut down inside C, which can abort the process after its output (session 53:
    the heartbeat's thread did so on the GPU machine). profile_program joins it before the report."""
    import sys
    import threading

    from tritondbg.profile import program_run

    monkeypatch.setattr(program_run, "PREFETCH_MIN_CORES", 0)
    (tmp_path / "slow_prefetched_mod.py").write_text("import time\ntime.sleep(4)\n")  # outlasts the program
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(program_run, "_PREFETCH", ("slow_prefetched_mod",))
    monkeypatch.delenv("TRITONDBG_NO_PREFETCH", raising=False)
    started = []
    real = threading.Thread.start

    def start(self):
        if self.name == "tritondbg-prefetch":
            started.append(self)
        real(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    (tmp_path / "prog.py").write_text("print('hi')\n")
    rc, record = program_run.profile_program([sys.executable, str(tmp_path / "prog.py")], out_dir=str(tmp_path / "t"),
                                             interpret=True)
    assert rc == 0 and record is not None
    assert len(started) == 1 and not started[0].is_alive()
