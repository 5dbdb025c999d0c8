"""A real TensorBoard server on a profile run: the PyTorch Profiler plugin lists the run and its views, the
HParams plugin lists one session per trial. The server listens on 127.0.0.1 (port chosen by the OS), every
wait is bounded, and the server is always stopped.
"""
import contextlib
import json
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

START_TIMEOUT_S = 60
LOAD_TIMEOUT_S = 90


@contextlib.contextmanager
def tensorboard_server(logdir: Path):
    """Start `tensorboard --logdir LOGDIR --host 127.0.0.1 --port 0`; yields its base URL; always stops it."""
    proc = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host",
                             "127.0.0.1", "--port", "0", "--reload_interval", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    found = threading.Event()

    def read():
        for line in proc.stderr:  # keep draining so the server never blocks on a full pipe
            lines.append(line)
            if re.search(r"at http://127\.0\.0\.1:\d+/", line):
                found.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not found.wait(START_TIMEOUT_S):
            raise AssertionError("tensorboard did not start:\n" + "".join(lines[-20:]))
        port = re.search(r"at http://127\.0\.0\.1:(\d+)/", "".join(lines)).group(1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def get_json(url: str, body: dict | None = None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read().decode())


def wait_for_profiler_run(base: str, run: str, timeout: float = LOAD_TIMEOUT_S) -> dict:
    """Poll the PyTorch Profiler plugin until it lists ``run`` and has finished loading it."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = get_json(f"{base}/data/plugin/pytorch_profiler/runs")
            if run in last["runs"] and not last.get("loading"):
                return last
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"run {run} not listed by the profiler plugin within {timeout}s: {last}")


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    """An interpreter profile of `add` (float32 and float16) and `softmax` (float32), written in-process."""
    from tritondbg.profile import pipeline

    out = tmp_path_factory.mktemp("tb") / "traces"
    records = [pipeline.profile(["add"], case="tiny", dtype="float32", iters=2, warmup=0, out_dir=str(out)),
               pipeline.profile(["softmax"], dtype="float32", iters=2, warmup=0, out_dir=str(out))]
    return out, records


def test_tensorboard_lists_the_run_its_workers_views_and_hparams_sessions(profiled):
    out, records = profiled
    runs = [Path(r.extra["profile"]["run_dir"]).name for r in records]
    with tensorboard_server(out) as base:
        for run in runs:
            wait_for_profiler_run(base, run)
        listed = get_json(f"{base}/data/plugin/pytorch_profiler/runs")["runs"]
        assert sorted(listed) == sorted(runs)  # the hparams trial folders hold no trace: not profiler runs

        add_run = runs[0]
        assert get_json(f"{base}/data/plugin/pytorch_profiler/workers?run={add_run}&view=Overview") == [
            "add-tiny-float32"]
        views = get_json(f"{base}/data/plugin/pytorch_profiler/views?run={add_run}")
        assert {"Overview", "Operator", "Trace"} <= set(views)
        [span] = get_json(f"{base}/data/plugin/pytorch_profiler/spans?run={add_run}&worker=add-tiny-float32")
        ops = get_json(f"{base}/data/plugin/pytorch_profiler/operation?run={add_run}&worker=add-tiny-float32"
                       f"&span={span}&group_by=Operation")
        assert ops["host_total_time"]["rows"], ops

        # HParams: one experiment, one session (trial) per case here (interpreter: the config that ran)
        exp = get_json(f"{base}/data/plugin/hparams/experiment", {"experimentName": ""})
        names = [h["name"] for h in exp["hparamInfos"]]
        # the plugin shows the first five columns by default: tritondbg's own, then config, kernel, ...
        assert names[:5] == ["case", "dtype", "scenario", "source", "winner"], names
        assert {"config", "kernel", "status", "timing"} <= set(names)
        assert {m["name"]["tag"] for m in exp["metricInfos"]} >= {"time/p50_us"}
        groups = get_json(f"{base}/data/plugin/hparams/session_groups", {
            "experimentName": "", "allowedStatuses": ["STATUS_UNKNOWN", "STATUS_SUCCESS", "STATUS_FAILURE",
                                                      "STATUS_RUNNING"],
            "colParams": [], "startIndex": 0, "sliceSize": 100})["sessionGroups"]
        sessions = {g["name"]: g for g in groups}
        assert len(sessions) == 2, list(sessions)
        add_trial = next(g for n, g in sessions.items() if n.startswith(add_run))
        assert add_trial["hparams"]["config"] == "BLOCK=1024,num_warps=4,num_stages=3"
        assert add_trial["hparams"]["scenario"] == "add" and add_trial["hparams"]["winner"] == "yes"
        p50 = {m["name"]["tag"]: m["value"] for m in add_trial["metricValues"]}["time/p50_us"]
        median_ms = records[0].results[0].extra["profile"]["kernel"]["median_ms"]
        assert p50 == pytest.approx(median_ms * 1e3, rel=1e-5)

        # best-time scalar and the roofline image are served too
        scalar_tags = get_json(f"{base}/data/plugin/scalars/tags")
        assert "interpreter/best_time_us/add/tiny/float32" in scalar_tags[add_run]
        image_tags = get_json(f"{base}/data/plugin/images/tags")
        assert "roofline" in image_tags[add_run]
