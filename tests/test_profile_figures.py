"""`profile`'s figures agree with each other (helper-87): the program table's time and its achieved bytes/s are of the
same launch (the median: it showed the mean beside a median-based throughput, 10x apart with one slow launch), and
the interpreter's "vs torch" ratio (the CPU interpreter against torch's CPU op, from 3 samples) is not shown as a
speed."""
import json

import pytest

from tritondbg.record import CaseResult, RunRecord


def _program_record(tmp_path):
    from tritondbg.profile import program_run

    (tmp_path / "tritondbg").mkdir()
    name = "program-7.1.pt.trace.json"
    durs = [900, 10, 11, 12, 10]  # us: one cold launch among fast ones
    (tmp_path / (name + ".partial")).write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "k", "ts": i * 1000, "dur": d} for i, d in enumerate(durs)]}))
    (tmp_path / "tritondbg" / "program-7.json").write_text(json.dumps({
        "pid": 7, "trace": name, "interpreted": True, "launches_seen": 5, "window": {}, "decisions": [],
        "kernels": {"k": {"launches": 5, "traced": 5, "bytes": 5 * 400, "dtype": "float32", "shapes": [],
                          "file": "k.py", "line": 1}}}))
    return program_run.build_record(tmp_path, command="profile -- x", exit_status=0, interpret=True)


def test_the_program_table_shows_the_median_beside_the_throughput_made_from_it(tmp_path):
    from tritondbg.profile.program_run import KERNEL_COLUMNS, kernel_cells
    from tritondbg.profile.summary import fmt_time

    rec = _program_record(tmp_path)
    row = rec.extra["profile"]["program"]["kernels"][0]
    median = rec.results[0].extra["profile"]["kernel"]["median_ms"]
    assert median == pytest.approx(0.011) and row["median_ms"] == median
    cells = dict(zip(KERNEL_COLUMNS, kernel_cells(row)))
    assert cells["median"] == fmt_time(median) == "11.0 us", cells
    # achieved = bytes per launch / the median shown beside it (not / the mean: 0.1886 ms)
    assert row["gbps"] == pytest.approx(400 / (median * 1e-3) / 1e9)
    assert cells["achieved"] == f"{400 / (median * 1e-3) / 1e9:.4g} GB/s", cells
    assert row["mean_ms"] == pytest.approx(943 / 5 / 1e3)  # the mean stays in the record


def test_the_program_report_table_has_the_same_columns(tmp_path):
    from tritondbg.profile.report import program_table

    html = program_table(_program_record(tmp_path).extra["profile"]["program"])
    assert "<th>median</th>" in html and "<th>mean</th>" not in html and "11.0 us" in html, html


def _kernel_record(timing: str) -> RunRecord:
    r = CaseResult(kernel="add", case="tiny", dtype="float32", mode="interpret", device="cpu", seed=0, params={})
    r.bytes = 4096.0
    r.extra["profile"] = {"timing": timing, "kernel": {"median_ms": 4.0, "method": "x"},
                          "torch": {"median_ms": 0.01, "label": "torch.add"}}
    from tritondbg.profile.summary import derive

    r.extra["profile"]["metrics"] = derive(r, None)
    rec = RunRecord(command="profile add", results=[r])
    rec.extra["profile"] = {"timing": timing, "note": "interpreter timings" if timing == "interpreter" else ""}
    return rec


def test_the_interpreters_vs_torch_ratio_is_not_shown_as_a_speed():
    from tritondbg.profile.summary import HEADERS, markdown, rows, table_cells, vs_torch_note

    rec = _kernel_record("interpreter")
    row = rows(rec)[0]
    assert row["speedup_vs_torch"] == pytest.approx(0.0025)  # kept in the record (--json), as a CPU figure
    cells = dict(zip(HEADERS, table_cells(row)))
    assert cells["vs torch"] == "-" and cells["median"] == "4.00 ms", cells
    note = vs_torch_note(rec)
    assert "not shown under the interpreter" in note and "no GPU speed" in note, note
    assert note in markdown(rec)
    gpu = _kernel_record("gpu")
    assert dict(zip(HEADERS, table_cells(rows(gpu)[0])))["vs torch"] == "0.00x"
    assert vs_torch_note(gpu).startswith("'vs torch' = torch time / kernel time")


def test_the_console_summary_says_why_vs_torch_is_left_out(capsys):
    from tritondbg.profile.console import print_profile

    print_profile(_kernel_record("interpreter"))
    out = capsys.readouterr().out
    assert "'vs torch' not shown under the interpreter" in out and "0.00x" not in out, out
