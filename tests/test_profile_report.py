"""Exporters of a profile run record, on the CPU from a synthetic GPU run (tests/profile_synthetic.py):
report.html, the roofline figure, the autotune track and rank in the trace, the launch timeline, TensorBoard
summaries (HParams columns, scalar steps, autotune text)."""
import json
import warnings
from html.parser import HTMLParser
from pathlib import Path

import pytest

from profile_synthetic import GEMM_CONFIGS, gemm_decision, synthetic_record


class Tables(HTMLParser):
    """Every <table>: its attributes, header cells, and rows (cell texts + the row's class)."""

    def __init__(self):
        super().__init__()
        self.tables, self.tags, self._cell, self._row = [], [], None, None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append({"attrs": dict(attrs), "head": [], "rows": []})
        elif tag == "tr":
            self._row = {"cells": [], "class": dict(attrs).get("class", "")}
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            text = "".join(self._cell).strip()
            (self.tables[-1]["head"] if tag == "th" else self._row["cells"]).append(text)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row["cells"]:
                self.tables[-1]["rows"].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def parse(html: str) -> Tables:
    p = Tables()
    p.feed(html)
    return p


def assert_self_contained(html: str, tags) -> None:
    """Nothing is fetched: no script, no stylesheet link, no src/href to another file, no CSS url()/@import."""
    names = {t for t, _ in tags}
    assert "script" not in names and "link" not in names and "iframe" not in names and "img" not in names
    for tag, attrs in tags:
        for k in ("src", "href", "xlink:href"):
            assert not attrs.get(k) or attrs[k].startswith("#"), (tag, attrs)
    assert "@import" not in html and "url(http" not in html and "<metadata>" not in html


def test_report_tables_from_a_synthetic_run():
    from tritondbg.profile import report

    html = report.render(synthetic_record())
    p = parse(html)
    assert_self_contained(html, p.tags)
    by_id = {t["attrs"].get("id"): t for t in p.tables}
    summary = by_id["summary"]
    assert summary["head"][:4] == ["kernel", "case", "dtype", "check"]
    assert [r["cells"][:3] for r in summary["rows"]] == [["gemm", "square_4096", "bfloat16"], ["add", "big", "float32"]]
    assert summary["rows"][0]["cells"][4] == "200.0 us" and summary["rows"][0]["cells"][7] == "0.95x"

    decisions = [t for t in p.tables if t["attrs"].get("class") == "autotune"]
    assert [(t["attrs"]["data-kernel"], t["attrs"]["data-source"]) for t in decisions] == [
        ("gemm_kernel", "benchmark"), ("add_kernel", "pinned (case)")]
    gemm = decisions[0]
    assert gemm["head"] == ["#", "BLOCK_M", "BLOCK_N", "num_warps", "status", "p20", "p50", "p80", "winner"]
    assert [r["cells"][4] for r in gemm["rows"]] == ["timed", "timed", "failed", "pruned"]
    assert [r["class"] for r in gemm["rows"]] == ["", "winner", "failed", "pruned"]
    assert gemm["rows"][1]["cells"][5:8] == ["180.0 us", "200.0 us", "220.0 us"]
    assert "winner" in gemm["rows"][1]["cells"][8] and not gemm["rows"][0]["cells"][8]
    assert gemm["rows"][2]["cells"][5:8] == ["-", "-", "-"]
    assert "source: <b>benchmark</b>" in html and "1 pruned" in html and "benchmark 1.25 s" in html

    points = by_id["roofline-points"]
    assert [r["cells"][:4] for r in points["rows"]] == [["1", "gemm", "square_4096", "bfloat16"],
                                                        ["2", "add", "big", "float32"]]
    assert html.count("<section class=\"timeline\"") == 2
    assert html.count("<svg") == 3  # roofline + two timelines, inline


def test_report_of_an_interpreter_run_says_so():
    from tritondbg.profile import report

    rec = synthetic_record()
    rec.extra["profile"]["note"] = "interpreter timings: not GPU performance"
    assert "<p class=\"note\">Note: interpreter timings: not GPU performance.</p>" in report.render(rec)


def test_roofline_labels_every_point_without_overlap(tmp_path):
    from tritondbg.profile import roofline

    rec = synthetic_record()
    for r in list(rec.results):  # crowd the plot: the same point four more times
        for i in range(4):
            import copy

            twin = copy.deepcopy(r)
            twin.case = f"{r.case}_{i}"
            twin.extra["profile"]["kernel"]["median_ms"] *= 1 + 0.01 * i
            rec.results.append(twin)
    rows = roofline.legend_rows(rec)
    assert [r["n"] for r in rows] == list(range(1, 11))
    assert {(r["kernel"], r["case"]) for r in rows} >= {("gemm", "square_4096_3"), ("add", "big_0")}
    fig = roofline.figure(rec, synthetic_record().extra["profile"]["peaks"])
    ax = fig.axes[0]
    fig.canvas.draw()  # the final layout, as saved
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    assert sorted(t.get_text() for t in ax.texts) == sorted(str(n) for n in range(1, 11) for _ in (0, 1))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), "two point labels overlap"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "bf16 roof 989 TFLOP/s" in labels and "DRAM 4.80 TB/s (the slope)" in labels
    png = roofline.draw(rec, tmp_path / "r.png", synthetic_record().extra["profile"]["peaks"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert roofline.draw(type(rec)(command="x"), tmp_path / "none.png", None) is None


def test_place_labels_moves_a_label_off_a_taken_spot():
    from tritondbg.profile.roofline import place_labels

    offsets = place_labels([(100, 100), (100, 100), (100, 101)], [(10, 9)] * 3)
    boxes = [(100 + dx, 100 + dy, 110 + dx, 109 + dy) for dx, dy in offsets]
    assert len(set(offsets)) == 3
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])


def _kineto_like_trace(path: Path) -> None:
    events = [{"ph": "X", "cat": "user_annotation", "name": "gemm:square_4096:bfloat16", "pid": 7, "tid": 7,
               "ts": 1000.0 + 300 * i, "dur": 20.0} for i in range(3)]
    events += [{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1030.0 + 300 * i,
                "dur": 200.0} for i in range(3)]
    events += [{"ph": "X", "cat": "user_annotation", "name": "torch: gemm (torch.matmul)", "pid": 7, "tid": 7,
                "ts": 2000.0, "dur": 15.0}]
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))


def test_autotune_track_and_rank_in_the_trace(tmp_path):
    from tritondbg.profile import trace_events

    path = tmp_path / "w.1.pt.trace.json"
    _kineto_like_trace(path)
    trace_events.add_to_trace(path, [gemm_decision()], label="gemm:square_4096:bfloat16", rank=(2, 5))
    trace = json.loads(path.read_text())  # strict JSON still
    assert trace["distributedInfo"]["rank"] == 2 and trace["distributedInfo"]["world_size"] == 5
    track = [e for e in trace["traceEvents"] if e.get("pid") == trace_events.AUTOTUNE_PID]
    meta = {e["name"]: e["args"] for e in track if e["ph"] == "M"}
    assert meta["process_name"] == {"name": "autotune"} and "autotune" in meta["thread_name"]["name"]
    benched = [e for e in track if e["ph"] == "X"]
    assert [e["args"]["status"] for e in benched] == ["timed", "timed", "failed"]  # pruned: never benchmarked
    assert all(e["cat"] == "autotune" and e["tid"] == trace_events.AUTOTUNE_TID for e in benched)
    win = [e for e in benched if e["args"]["winner"]]
    assert len(win) == 1 and win[0]["name"].endswith("(winner)") and win[0]["args"]["config"] == GEMM_CONFIGS[1]["config"]
    assert win[0]["dur"] == pytest.approx(200.0) and win[0]["args"]["p20_us"] == pytest.approx(180.0)
    assert win[0]["args"]["pruned"] == [GEMM_CONFIGS[3]["config"]]
    assert benched[0]["ts"] == 1000.0 and benched[1]["ts"] == pytest.approx(1250.0)  # end to end from the trace start
    # a trace that already has a rank (a distributed program) keeps it
    path.write_text(json.dumps({"traceEvents": [], "distributedInfo": {"rank": 3, "world_size": 8}}))
    assert trace_events.add_to_trace(path, [], rank=(0, 1))["distributedInfo"] == {"rank": 3, "world_size": 8}


def test_launch_timeline_read_from_the_trace(tmp_path):
    from tritondbg.profile import trace_events

    path = tmp_path / "w.json"
    _kineto_like_trace(path)
    tl = trace_events.launch_timeline(json.loads(path.read_text()), "gemm:square_4096:bfloat16",
                                      "torch: gemm (torch.matmul)")
    assert tl["launches"] == [[0.0, 20.0], [300.0, 20.0], [600.0, 20.0]]
    assert tl["gpu_kernels"][1] == [330.0, 200.0, "gemm_kernel"]
    assert tl["torch"] == [[1000.0, 15.0]]


def test_profiler_warnings_are_kept_not_printed():
    from tritondbg.profile.session import keeping_profiler_warnings

    kept: list[str] = []
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with keeping_profiler_warnings(kept):
            warnings.warn_explicit("Profiler won't be using warmup", UserWarning,
                                   "/x/site-packages/torch/profiler/profiler.py", 1)
            warnings.warn_explicit("the kernel's own warning", UserWarning, "/work/my_kernel.py", 3)
            for i in range(200):  # a flood is not kept whole
                warnings.warn_explicit(f"again {i}", UserWarning, "/x/torch/profiler/profiler.py", 2)
    assert kept[0] == "UserWarning: Profiler won't be using warmup" and len(kept) == 50
    assert [str(w.message) for w in shown] == ["the kernel's own warning"]


def test_tensorboard_columns_steps_and_autotune_text(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import metadata

    from tritondbg.profile import tensorboard

    rec = synthetic_record(str(tmp_path))
    tensorboard.write(rec, tmp_path)
    root = EventAccumulator(str(tmp_path))
    root.Reload()
    # four equal points per scalar: TensorBoard's default outlier filter drops a single point per run
    assert [s.step for s in root.Scalars("best_time_us/gemm/square_4096/bfloat16")] == [0, 1, 2, 3]
    assert "autotune" in root.Tags()["tensors"] or "autotune/text_summary" in root.Tags()["tensors"]
    exp_acc = EventAccumulator(str(tmp_path / "hparams"))
    exp_acc.Reload()
    content = exp_acc.PluginTagToContent("hparams")[metadata.EXPERIMENT_TAG]
    infos = metadata.parse_experiment_plugin_data(content).hparam_infos
    # the plugin shows the first five after sorting by (differs, name): these five
    shown = sorted(infos, key=lambda i: (not i.differs, i.name))[:5]
    assert [i.name for i in shown] == ["case", "dtype", "scenario", "source", "winner"]
    assert {"config", "BLOCK_M", "num_warps", "BLOCK"} <= {i.name for i in infos}
    trial = sorted(tmp_path.glob("hparams/gemm-square_4096-bfloat16/*"))[1]
    acc = EventAccumulator(str(trial))
    acc.Reload()
    start = metadata.parse_session_start_info_plugin_data(
        acc.PluginTagToContent("hparams")[metadata.SESSION_START_INFO_TAG])
    assert start.hparams["winner"].string_value == "yes" and start.hparams["source"].string_value == "benchmark"
    assert start.hparams["config"].string_value == "BLOCK_M=128,BLOCK_N=256,num_warps=8"


def test_autotune_markdown_lists_every_config():
    from tritondbg.profile.tensorboard import autotune_markdown

    md = autotune_markdown(synthetic_record())
    assert "`gemm_kernel` key=(4096, 4096, 4096, torch.bfloat16): source **benchmark**" in md
    assert "| BLOCK_M=128,BLOCK_N=256,num_warps=8 | timed | 180.0 us | 200.0 us | 220.0 us | **yes** |" in md
    assert "| BLOCK_M=64,BLOCK_N=64,num_warps=4 | pruned | - | - | - |  |" in md


def test_report_without_matplotlib_keeps_its_tables(monkeypatch, tmp_path):
    from tritondbg.profile import report, roofline

    monkeypatch.setattr(roofline, "available", lambda: False)
    html = report.render(synthetic_record())
    assert html.count("matplotlib is not installed") == 2 and "<svg" not in html
    assert 'id="summary"' in html and html.count('class="autotune"') == 2
    assert roofline.draw(synthetic_record(), tmp_path / "r.png", None) is None
