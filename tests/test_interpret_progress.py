"""`interpret` / `run` print each case as it finishes, and a run cut short keeps what finished: SIGINT (exit 130),
SIGTERM (143) and --timeout (124) print the finished cases, write the run record with the unfinished cases as
errors saying why, and print the summary line. Before, nothing was printed until every case had finished and an
interrupt lost it all (`aborted`, no record)."""
import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import run_cli

from tritondbg import runner
from tritondbg.record import RunRecord

# three cases: `fast` finishes at once, `slow` spins (it never ends in a test's time), `after` never starts.
# make_inputs of `slow` touches $TRITONDBG_TEST_STARTED, so a test knows `fast` is done and `slow` running.
SCENARIO = '''
import os
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def loop_add(x_ptr, out_ptr, n, ITERS, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    acc = tl.load(x_ptr + offs, mask=m, other=0.0)
    for i in range(ITERS):
        acc = acc + 0.0
    tl.store(out_ptr + offs, acc, mask=m)


def launch(x, iters):
    out = torch.empty_like(x)
    loop_add[(1,)](x, out, x.numel(), iters, BLOCK=64)
    return out


def make_inputs(case, dtype, device, generator):
    marker = os.environ.get("TRITONDBG_TEST_STARTED")
    if case.name == "slow" and marker:
        open(marker, "w").close()
    return dict(x=torch.randn(50, generator=generator).to(dtype), iters=case.params["iters"])


demo = Scenario(name="demo", description="", launch=launch, reference=lambda x, iters: x.float(),
                make_inputs=make_inputs, kernels=[loop_add],
                cases=[Case("fast", params=dict(iters=1), dtypes=("float32",)),
                       Case("slow", params=dict(iters=10 ** 9), dtypes=("float32",)),
                       Case("after", params=dict(iters=1), dtypes=("float32",))])
'''
FAST_LINE = "PASS demo case=fast dtype=float32 mode=interpret ("


class _Cli:
    """`tritondbg interpret cases.py --case all ARGS` in a subprocess; stdout read line by line as it comes."""

    def __init__(self, tmp_path: Path, env: dict, *args: str):
        (tmp_path / "cases.py").write_text(SCENARIO)
        self.tmp, self.marker = tmp_path, tmp_path / "started"
        env = dict(env, TRITONDBG_TEST_STARTED=str(self.marker))
        # a shell's background job starts with SIGINT ignored and Python keeps it so: restore the default
        self.p = subprocess.Popen([sys.executable, "-m", "tritondbg", "interpret", str(tmp_path / "cases.py"),
                                   "--case", "all", *args], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True,
                                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines: queue.Queue = queue.Queue()
        self.out: list[str] = []
        self.err = ""
        threading.Thread(target=self._read_out, daemon=True).start()
        self.err_reader = threading.Thread(target=self._read_err, daemon=True)
        self.err_reader.start()

    def _read_out(self):
        for line in self.p.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_err(self):
        self.err = self.p.stderr.read()

    def wait_started(self, limit=120.0):
        """Until `slow` has started (so `fast` has finished)."""
        t0 = time.time()
        while not self.marker.exists():
            assert self.p.poll() is None, f"ended early ({self.p.returncode}): {self.err[-2000:]}"
            assert time.time() - t0 < limit, "the slow case did not start"
            time.sleep(0.05)

    def next_line(self, limit: float) -> str | None:
        try:
            line = self.lines.get(timeout=limit)
        except queue.Empty:
            return None
        if line is not None:
            self.out.append(line)
        return line

    def finish(self, sig=None, limit=60.0) -> tuple[int, str, str]:
        """Send ``sig`` (if any), wait for the end; (exit status, all of stdout, stderr)."""
        if sig is not None:
            self.p.send_signal(sig)
        try:
            self.p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            pytest.fail(f"still running {limit} s after {sig!r}")
        while self.next_line(10) is not None:
            pass
        self.err_reader.join(10)
        if self.err_reader.is_alive():  # for a failure's message: stderr not at EOF 10 s after the exit
            self.err = "<stderr still open 10 s after the process ended: another process holds the pipe>"
        return self.p.returncode, "".join(self.out), self.err

    def record(self) -> dict:
        found = list((self.tmp / "traces").glob("*/tritondbg/record.json"))
        assert len(found) == 1, f"run records: {found}"
        return json.loads(found[0].read_text())


def _results(run: "_Cli") -> list:
    """Each case's status and message from the run's record, for a failure's message (two CI runs of session 31
    ended with exit 1, an empty stderr and the record's summary cut from the assertion text: not diagnosed)."""
    try:
        return [(r["case"], r["status"], r["message"][:300]) for r in run.record()["results"]]
    except Exception as exc:  # noqa: BLE001 - only for the message
        return [f"no record: {exc}"]


def _statuses(record: dict) -> list[tuple[str, str]]:
    return [(r["case"], r["status"]) for r in record["results"]]


def test_each_case_prints_as_it_finishes(cli_env, tmp_path):
    run = _Cli(tmp_path, cli_env)
    try:
        run.wait_started()
        t0, seen = time.time(), False
        while not seen and time.time() - t0 < 15:
            line = run.next_line(max(0.1, 15 - (time.time() - t0)))
            if line is None:
                break
            seen = line.startswith(FAST_LINE)
        assert seen, f"no PASS line for the finished case while the slow one runs; stdout so far: {run.out}"
        assert run.p.poll() is None  # the slow case is still running: the line came before the end
    finally:
        run.p.kill()
        run.p.wait()


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_keeps_the_finished_cases(cli_env, tmp_path, sig, status):
    run = _Cli(tmp_path, cli_env)
    run.wait_started()
    time.sleep(1.5)  # `slow` is in its kernel's loop by then
    code, out, err = run.finish(sig)
    name = signal.Signals(sig).name
    assert code == status, (code, out[-2000:], err[-2000:], _results(run))
    assert out.startswith(FAST_LINE), out
    assert f"1/3 passed, sanitizers on: no finding, interrupted ({name})  record: " in out, out
    # the kernel line the signal landed in, as program mode names it (it said only "interrupted (SIGINT)")
    found = re.search(rf"interrupted \({name}\) (in loop_add at cases\.py:(\d+), pid \(0, 0, 0\)): 1 of 3 case\(s\) "
                      "finished", err)
    assert "Traceback" not in err and found and int(found.group(2)) in (12, 13), err  # the loop's two lines
    where = found.group(1)
    record = run.record()
    assert _statuses(record) == [("fast", "pass"), ("slow", "error"), ("after", "error")]
    slow, after = record["results"][1:]
    assert slow["message"].startswith(f"interrupted ({name}) {where}, after "), slow["message"]
    assert after["message"] == f"not run: interrupted ({name}) before it started"
    assert record["passed"] is False and record["extra"]["interrupted_by"] == name
    assert f"ERROR demo case=slow dtype=float32 mode=interpret\n  {slow['message']}\n" in out


def test_a_timeout_keeps_the_finished_cases(cli_env, tmp_path):
    run = _Cli(tmp_path, cli_env, "--timeout", "8")  # the fast case must end before it, under load too
    code, out, err = run.finish(limit=120)
    assert code == 124, (code, out[-2000:], err[-2000:], _results(run))
    assert out.startswith(FAST_LINE), out
    assert "1/3 passed, sanitizers on: no finding, timed out  record: " in out, out
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    assert "timed out after 8 s: demo case slow/float32, pid (0, 0, 0) at " in errors[0], errors
    record = run.record()
    assert _statuses(record) == [("fast", "pass"), ("slow", "error"), ("after", "error")]
    assert record["results"][1]["message"] == errors[0][len("error: "):]
    assert record["results"][2]["message"] == "not run: the run timed out (--timeout 8) before it started"
    assert record["passed"] is False and record["extra"]["interrupted_by"] == "timeout"


def test_json_stays_one_document_when_interrupted(cli_env, tmp_path):
    run = _Cli(tmp_path, cli_env, "--json")
    run.wait_started()
    time.sleep(0.5)
    code, out, err = run.finish(signal.SIGINT)
    assert code == 130, (code, out[-2000:], err[-2000:], _results(run))
    doc = json.loads(out)  # stdout is the record alone: no case block streamed into it
    assert _statuses(doc) == [("fast", "pass"), ("slow", "error"), ("after", "error")]
    assert doc["passed"] is False and doc["extra"]["interrupted_by"] == "SIGINT"
    assert _statuses(run.record()) == _statuses(doc)


@pytest.mark.interpreter
def test_runner_reports_each_result_as_it_finishes():
    seen = []
    record = runner.run("add", mode="interpret", on_result=seen.append)
    assert len(seen) == len(record.results) > 1 and all(a is b for a, b in zip(seen, record.results))


@pytest.mark.interpreter
def test_stop_marks_what_did_not_finish():
    run = runner.Run("add", mode="interpret", cases="all")
    planned = len(run.planned)
    done = []

    def stop_after_first(result):
        done.append(result)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run.run(stop_after_first)
    unfinished = run.stop("SIGINT", "interrupted (SIGINT)")
    record = RunRecord.from_dict(json.loads(run.record.to_json()))
    assert len(done) == 1 and len(unfinished) == planned - 1 == len(record.results) - 1
    assert all(r.status == "error" and r.message == "not run: interrupted (SIGINT) before it started"
               for r in record.results[1:])
    assert record.results[0].passed and not record.passed and record.extra["interrupted_by"] == "SIGINT"


def test_a_case_stuck_outside_python_still_writes_the_record(cli_env, tmp_path):
    """The main thread waits in C past the deadline (as a kernel spinning on the GPU keeps it): the watchdog's
    thread writes the record and prints the summary, then ends the process with 124 (its os._exit was refused as
    if the scenario had called it: exit 1 from faulthandler's backstop 20 s later, no record)."""
    hang = Path(__file__).resolve().parent / "check_data" / "hang.py"
    p = subprocess.run([sys.executable, "-m", "tritondbg", "interpret", f"{hang}::deaf", "--timeout", "1"],
                       env=cli_env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 124, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "0/1 passed, sanitizers on: no finding, timed out  record: " in p.stdout, p.stdout
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "did not come back to Python" in errors[0] and "Traceback" not in p.stderr, p.stderr
    record = RunRecord.load(next((tmp_path / "traces").glob("*")))
    assert [r.status for r in record.results] == ["error"] and record.extra["interrupted_by"] == "timeout"
    assert record.results[0].message == errors[0][len("error: "):]


SWEPT = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.autotune(configs=[triton.Config({"SPIN": 0}), triton.Config({"SPIN": 1})], key=["n"])
@triton.jit
def spin_copy(x_ptr, out_ptr, n, SPIN: tl.constexpr, BLOCK: tl.constexpr = 64):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    acc = tl.load(x_ptr + offs, mask=m, other=0.0)
    for i in range(SPIN * 10 ** 9):  # the second config never ends in a test's time
        acc = acc + 0.0
    tl.store(out_ptr + offs, acc, mask=m)


def launch(x):
    out = torch.empty_like(x)
    spin_copy[(1,)](x, out, x.numel())
    return out


swept = Scenario(name="swept", description="", launch=launch, reference=lambda x: x.float(),
                 make_inputs=lambda case, dtype, device, generator: dict(x=torch.randn(50, generator=generator)),
                 kernels=[spin_copy], cases=[Case("tiny", params={}, dtypes=("float32",))])
'''


def test_all_configs_prints_each_config_and_keeps_them_on_ctrl_c(cli_env, tmp_path):
    """--all-configs printed nothing until every config had run, and Ctrl-C lost them all."""
    (tmp_path / "swept.py").write_text(SWEPT)
    p = subprocess.Popen([sys.executable, "-m", "tritondbg", "interpret", str(tmp_path / "swept.py"), "--all-configs"],
                         env=cli_env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        import select

        ready, _, _ = select.select([p.stdout], [], [], 90)  # the first config's block, while the second spins
        assert ready, "nothing printed while the second config runs"
        first = p.stdout.readline()
        assert first.startswith("PASS swept case=tiny"), first
        time.sleep(1.0)
        assert p.poll() is None
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err[-2000:]
    # the config that was running is an error naming it (it was in no list: "0/0 passed" when it was the first)
    assert "1/2 passed" in out and "interrupted (SIGINT)" in out and "before the run was cut short" in out, out
    assert "of spin_copy did not finish (interrupted by SIGINT)" in out, out
    assert "all 1 config runs that ran before the run was cut short agree" in out, out
    [path] = (tmp_path / "traces").glob("*/tritondbg/record.json")
    record = json.loads(path.read_text())
    assert record["extra"]["interrupted_by"] == "SIGINT" and len(record["results"]) == 2


def test_a_long_case_says_it_is_still_running_and_where(capsys):
    """helper-45: a kernel whose loop never ends (tutorial 08 without `tile_idx += NUM_SM`) hung `interpret` with no
    word; --timeout had to be known. Now a line after a minute (TRITONDBG_HEARTBEAT_S) says what runs and where."""
    from tritondbg import watchdog

    with watchdog.activity(kernel="grouped", case="tiny", dtype="float16"), watchdog.heartbeat(first=0.2, every=0.2):
        t0 = time.monotonic()
        while time.monotonic() - t0 < 0.7:
            time.sleep(0.01)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("tritondbg: still running after")]
    assert 2 <= len(lines) <= 4, err
    assert "grouped case tiny/float16" in lines[0] and "test_interpret_progress.py" in lines[0], lines[0]
    assert "Ctrl-C stops it and says where; --timeout SECONDS ends a run" in lines[0]
    time.sleep(0.5)
    assert "still running" not in capsys.readouterr().err  # it stops with the case
    with watchdog.heartbeat(first=0):  # stepping or at a breakpoint: none
        time.sleep(0.3)
    assert "still running" not in capsys.readouterr().err


def test_the_watchers_have_ended_when_their_block_ends():
    """GPU machine under load (session 53): `tritondbg run gemm --case all` printed every result, then aborted
    (exit 134, "terminate called without an active exception"): the heartbeat thread, told to stop, was still
    waking up when the interpreter finalised, which cut it down inside C. On the CPU a 0.05 s heartbeat did the
    same 1 run in 3. The heartbeat's and the deadline's threads are joined before their block returns."""
    import threading

    from tritondbg import watchdog

    def watchers():
        return [t for t in threading.enumerate() if t.name in ("tritondbg-heartbeat", "tritondbg-watchdog")]

    for _ in range(5):
        with watchdog.heartbeat(first=0.02, every=0.02):
            time.sleep(0.05)  # past its first look: the thread waits in its next one
        assert not watchers(), watchers()
        with watchdog.deadline(30):
            time.sleep(0.01)
        assert not watchers(), watchers()


@pytest.mark.interpreter
def test_a_long_launch_under_pytest_still_says_it_is_running(tmp_path, cli_env):
    """helper-83: under ``interpret -- python -m pytest`` the heartbeat went into pytest's capture of the test's
    stderr: a launch of more than a minute said nothing. It goes to the stderr the program started with."""
    (tmp_path / "test_slow.py").write_text(
        "import torch, triton, triton.language as tl\n\n"
        "@triton.jit\n"
        "def slow(x_ptr, n):\n"
        "    acc = tl.zeros((16,), tl.float32)\n"
        "    for i in range(n):\n"
        "        acc += tl.load(x_ptr + tl.arange(0, 16))\n"
        "    tl.store(x_ptr + tl.arange(0, 16), acc)\n\n"
        "def test_slow():\n"
        "    x = torch.ones(16, device='cuda')\n"
        "    slow[(1,)](x, 40000)\n")
    env = dict(cli_env, TRITONDBG_HEARTBEAT_S="0.5")
    out = run_cli(["interpret", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_slow.py"],
                  env, cwd=tmp_path)
    assert "1 passed" in out.stdout, out.stdout + out.stderr[-2000:]
    assert "tritondbg: still running after" in out.stderr, out.stdout + out.stderr[-2000:]


def test_an_interrupt_in_host_code_names_the_wrappers_line(tmp_path):
    """helper-51: Ctrl-C while a MoE wrapper sorted tokens in torch said only "interrupted (SIGINT) after 7.6 s":
    no kernel line, since none was running. It names the innermost line of the user's own code now."""
    import importlib.util

    from tritondbg.commands.execute import _kernel_line_of

    (tmp_path / "host.py").write_text("def slow_wrapper():\n    x = 1\n    raise KeyboardInterrupt\n")
    spec = importlib.util.spec_from_file_location("host_for_test", tmp_path / "host.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(KeyboardInterrupt) as info:
        mod.slow_wrapper()
    assert _kernel_line_of(info.value) == "in slow_wrapper at host.py:3, outside kernel code"


SWALLOWED = '''
import signal
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def copy(x_ptr, y_ptr, n, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n), mask=o < n)


def launch(x, how):
    y = torch.empty_like(x)
    copy[(1,)](x, y, x.numel(), B=16)
    caught = False
    try:
        signal.raise_signal(signal.SIGINT)  # Ctrl-C landing inside a C extension's call back into Python
    except KeyboardInterrupt:
        caught = True
    if caught and how == "converted":  # raised anew, as C code does: no trace of the interrupt in its context
        raise TypeError("expected a sequence of integers or a single integer, got '(64)'")  # numpy's words
    return y


s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.ones(10), how=case.params["how"]), launch,
             lambda x, how: x, [Case(name, params=dict(how=name), dtypes=("float32",))
                                for name in ("converted", "swallowed", "after")])
'''


@pytest.mark.parametrize("first", ["converted", "swallowed"])
def test_a_ctrl_c_that_comes_back_as_another_error_still_stops_the_run(cli_env, tmp_path, first):
    """CI (session 42): a SIGINT landed in numpy's shape parsing, which turned the KeyboardInterrupt into
    "TypeError: expected a sequence of integers"; the case kept it as its own error, the next case ran, and the run
    exited 1 instead of 130. The handler notes the signal, so the case's error is the interrupt again; one a case
    swallows whole ends the run after that case."""
    (tmp_path / "cases.py").write_text(SWALLOWED)
    p = run_cli(["interpret", str(tmp_path / "cases.py"), "--case", f"{first},after"], cli_env, cwd=tmp_path)
    assert p.returncode == 130, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "PASS s case=after" not in p.stdout and "not run: interrupted (SIGINT) before it started" in p.stdout, \
        p.stdout
    if first == "converted":  # the case that was running: interrupted, not "TypeError: expected a sequence ..."
        assert "ERROR s case=converted dtype=float32 mode=interpret\n  interrupted (SIGINT)" in p.stdout, p.stdout
    else:  # it finished (the program swallowed the interrupt): kept, and the run ended after it
        assert "PASS s case=swallowed" in p.stdout, p.stdout


def test_a_timeout_outside_the_kernel_names_no_console_script():
    """helper-75: `--timeout` reached in host code (the reference, make_inputs) named `venv/bin/tritondbg:8`, the
    console script beside the interpreter: no user's file. The user's innermost frame is named."""
    import os

    from tritondbg import watchdog
    from tritondbg.errors import not_users_file

    script = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "tritondbg")
    assert not_users_file(script) and not not_users_file(__file__)
    code = compile("import sys\ndef main(where):\n    return where(sys._getframe(0))\n", script, "exec")
    scope: dict = {}
    exec(code, scope)  # the innermost frame is the console script's, called from this test's
    loc = scope["main"](watchdog.where)
    assert loc.startswith(f"in host code at {__file__}:"), loc
