"""Program mode over several processes: limits that hold for the whole program, a run folder that holds the
run's record and nothing of a previous run, and the kernel form's stepping options in the program form.

The programs run through the CLI under the interpreter (as a user runs them, `tests/program_data/multiproc.py`).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROG = REPO / "tests" / "program_data" / "multiproc.py"
TRITONDBG = [sys.executable, "-m", "tritondbg"]


def run(args, env=None, timeout=240):
    full = dict(os.environ)
    full.pop("TRITON_INTERPRET", None)
    full.update(env or {})
    return subprocess.run(TRITONDBG + list(args), capture_output=True, text=True, env=full, timeout=timeout,
                          cwd=REPO)


def leftovers(folder: Path) -> list[str]:
    """Per-process files of the program left in the folder (multiprocessing's resource tracker, which outlives the
    program, used to write an empty summary after the parent cleaned up: child.write_summary skips a process that
    never imported triton)."""
    out = []
    for p in folder.iterdir():
        if p.name.startswith("summary-") or p.name in ("captures.jsonl", ".claims") or p.name.endswith(".tmp"):
            out.append(p.name)
    return sorted(out)


# ---------------------------------------------------------------------------------------------------------
# claims: one process gets each
# ---------------------------------------------------------------------------------------------------------

def _in_children(n, fn):
    """Run ``fn()`` in n forked processes started together; their results (one JSON line each)."""
    r, w = os.pipe()
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                os.write(w, (json.dumps(fn()) + "\n").encode())
            finally:
                os._exit(0)
        pids.append(pid)
    os.close(w)
    for pid in pids:
        os.waitpid(pid, 0)
    with os.fdopen(r) as f:
        return [json.loads(line) for line in f.read().splitlines()]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_claims_give_each_slot_and_each_byte_to_one_process(tmp_path):
    from tritondbg.program import claims

    slots = _in_children(8, lambda: [claims.slot(str(tmp_path), "k", 3) for _ in range(2)])
    got = [i for pair in slots for i in pair if i is not None]
    assert sorted(got) == [0, 1, 2]                     # 16 asks, 3 slots: each given once
    assert claims.slot(str(tmp_path), "k", 3) is None
    firsts = _in_children(6, lambda: claims.first(str(tmp_path), "sig"))
    assert firsts.count(True) == 1
    budget = claims.Budget(str(tmp_path), 100)
    took = _in_children(6, lambda: budget.reserve(40))
    assert took.count(True) == 2 and budget.used() == 80
    budget.give_back(50)
    assert budget.used() == 30 and budget.reserve(70) and not budget.reserve(1)
    # no run folder: a process on its own, never a folder made where none was
    gone = tmp_path / "gone"
    assert claims.first(str(gone), "x") and claims.Budget(str(gone), 10).reserve(5) and not gone.exists()


# ---------------------------------------------------------------------------------------------------------
# capture --max-per-kernel: the program's limit, not each process's
# ---------------------------------------------------------------------------------------------------------

def test_max_per_kernel_holds_across_spawned_processes(tmp_path):
    folder = tmp_path / "c"
    out = run(["capture", "--interpret", "--max-per-kernel", "4", "--out", str(folder), "--", "python", str(PROG),
               "spawn"])
    assert out.returncode == 0, out.stderr
    doc = json.loads((folder / "captures.json").read_text())
    assert doc["launches"] == {"inc_kernel": 8}          # both processes' launches, merged
    # 5 distinct signatures in 2 processes, 3 of them launched by both: 4 reproducers, none the same launch twice
    # (before: 4 per process, 8 in all, the 3 shared signatures saved twice, names like inc_kernel_0_p<pid>)
    assert sorted(c["reproducer"] for c in doc["captures"]) == [f"inc_kernel_{i}.py::inc_kernel_{i}"
                                                                  for i in range(4)]
    sizes = [c["tensors"][0]["shape"][0] for c in doc["captures"]]
    assert len(set(sizes)) == 4 and set(sizes) <= {16, 17, 18, 19, 20}
    pids = {json.loads((folder / "data" / f"inc_kernel_{i}.json").read_text())["pid"] for i in range(4)}
    assert len(pids) in (1, 2)
    assert sorted(p.name for p in folder.glob("inc_kernel_*.py")) == [f"inc_kernel_{i}.py" for i in range(4)]
    # the folder holds the record, not the processes' working files (their summaries, captures.jsonl, claims)
    assert leftovers(folder) == []


# ---------------------------------------------------------------------------------------------------------
# a run folder used again
# ---------------------------------------------------------------------------------------------------------

def _last_run(folder: Path, kernel: str, findings: bool) -> None:
    """What an earlier run left in a folder before the fix: a process's summary, its streamed captures and
    findings (a previous run of the same program: before, the next run merged them with its own)."""
    folder.mkdir()
    (folder / "summary-4242.json").write_text(json.dumps({"pid": 4242, "argv": ["old.py"], "launches": {kernel: 5},
                                                          "checked": {kernel: 5}, "notes": []}))
    (folder / "captures.jsonl").write_text(json.dumps({"reproducer": f"{kernel}_9.py::{kernel}_9", "kernel": kernel,
                                                       "bytes": 10}) + "\n")
    if findings:
        (folder / "findings.jsonl").write_text(json.dumps({"kind": "out_of_bounds", "kernel": kernel, "file": "x.py",
                                                           "line": 1, "severity": "error"}) + "\n")


def test_interpret_out_folder_used_again_reports_only_this_run(tmp_path):
    folder = tmp_path / "i"
    _last_run(folder, "copy_kernel", findings=True)
    out = run(["interpret", "--out", str(folder), "--json", str(tmp_path / "r.json"), "--", "python", str(PROG),
               "once", "0"])
    doc = json.loads((tmp_path / "r.json").read_text())
    # before: 6 launches, the earlier run's finding, its capture, exit 1
    assert out.returncode == 0, out.stderr
    assert doc["launches"] == {"copy_kernel": 1} and doc["findings"] == [] and doc["captures"] == []
    assert "1 launch(es), 0 finding(s)" in out.stderr
    assert not (folder / "findings.jsonl").exists() and leftovers(folder) == []


def test_interpret_out_folder_keeps_the_findings_and_no_process_files(tmp_path):
    folder = tmp_path / "i"
    out = run(["interpret", "--out", str(folder), "--", "python", str(PROG), "once", "1"])
    assert out.returncode == 1 and "out_of_bounds" in out.stderr, out.stderr
    lines = (folder / "findings.jsonl").read_text().splitlines()
    assert lines and all(json.loads(line)["kernel"] == "copy_kernel" for line in lines)
    assert leftovers(folder) == []                       # before: summary-<pid>.json stayed


def test_capture_out_folder_used_again_counts_only_this_run(tmp_path):
    folder = tmp_path / "c"
    _last_run(folder, "copy_kernel", findings=False)
    (folder / "copy_kernel_0.py").write_text("# an earlier run's reproducer\n")
    out = run(["capture", "--interpret", "--out", str(folder), "--", "python", str(PROG), "once", "0"])
    assert out.returncode == 0, out.stderr
    doc = json.loads((folder / "captures.json").read_text())
    assert doc["launches"] == {"copy_kernel": 1}                 # before: 6
    assert [c["reproducer"] for c in doc["captures"]] == ["copy_kernel_0.py::copy_kernel_0"]  # before: + _9
    assert "load_scenario" in (folder / "copy_kernel_0.py").read_text()   # replaced, not copy_kernel_0_p<pid>
    assert not list(folder.glob("copy_kernel_0_p*")) and leftovers(folder) == []


# ---------------------------------------------------------------------------------------------------------
# interpret's stepping options are the kernel form's: the program form says how to get there
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("option", [["--trace"], ["--watch", "acc"], ["--break", "12"], ["--pid", "1,0,0"]])
def test_stepping_options_in_the_program_form_say_how_to_step_through_a_launch(option):
    out = run(["interpret", *option, "--", "python", str(PROG), "once", "0"], timeout=60)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert f"{option[0]} is not an option of the program form" in lines[0]
    assert "tritondbg capture --kernel NAME -- CMD" in lines[0]
    assert f"tritondbg interpret {option[0]}" in lines[0] and "NAME_0.py" in lines[0]


def test_capture_and_interpret_describe_their_kernel_filter_alike():
    helps = [run([cmd, "--help", "--"], timeout=60).stdout for cmd in ("capture", "interpret")]
    for text in helps:
        flat = " ".join(text.split())
        assert "(name or glob; repeatable, or comma-separated)" in flat, text
