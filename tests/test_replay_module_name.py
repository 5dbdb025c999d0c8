"""A reproducer replays the kernel of the file it captured, not another module of the same name (helper-88: two
capture folders of kernels in same-named modules, replayed in one `check` worker, passed the buggy one)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

KERNEL = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs {cmp} n)
''')
PROG = ("import torch\nfrom kern import scale_kernel\nx = torch.randn(100, device='cuda')\ny = torch.empty_like(x)\n"
        "scale_kernel[(2,)](x, y, 100, BLOCK=64)\n")


@pytest.mark.interpreter
def test_a_reproducer_runs_its_captured_file_when_a_same_named_module_imports_first(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def cli(*args, cwd=tmp_path, **extra):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True,
                              env={**env, **extra}, timeout=300, cwd=cwd)

    for name, cmp in (("fixed", "<"), ("buggy", "<=")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "kern.py").write_text(KERNEL.format(cmp=cmp))
        (tmp_path / name / "prog.py").write_text(PROG)
        cap = cli("capture", "--out", str(tmp_path / f"cap_{name}"), "--", sys.executable, "prog.py",
                  cwd=tmp_path / name)
        assert cap.returncode == 0, cap.stderr[-2000:]
    fixed, buggy = (str(tmp_path / f"cap_{n}" / "scale_kernel_0.py") for n in ("fixed", "buggy"))
    # the other copy first on the path: the captured file runs, and the run says which module name misled it
    rep = cli("interpret", buggy, PYTHONPATH=str(tmp_path / "fixed"))
    assert rep.returncode == 1 and "out_of_bounds" in rep.stdout + rep.stderr, (rep.stdout + rep.stderr)[-2000:]
    assert f"module kern imports from {tmp_path / 'fixed' / 'kern.py'}; replaying the captured file" in rep.stderr
    # both in one worker, the fixed one loaded first: the buggy one still fails (it passed: "4 passed")
    chk = cli("check", "-n", "1", "--gates", "correctness,sanitize", fixed, buggy, "--json", str(tmp_path / "r.json"))
    assert chk.returncode == 1 and "2 passed, 2 failed" in chk.stdout + chk.stderr, (chk.stdout + chk.stderr)[-3000:]
    # two files of one stem: told apart by their folder in the table, JSON and progress lines (two alike rows)
    import json

    rows = {(g["kernel"], g["gate"]): g["status"] for g in json.loads((tmp_path / "r.json").read_text())["extra"]["gates"]}
    assert rows == {(f"cap_{n}/scale_kernel_0", g): ("pass" if n == "fixed" else "FAIL")
                    for n in ("fixed", "buggy") for g in ("correctness", "sanitize")}, rows
    assert "cap_buggy/scale_kernel_0::sanitize: FAIL" in chk.stderr, chk.stderr


@pytest.mark.interpreter
def test_two_kernels_of_one_name_are_two_kernels_to_capture_and_to_the_summary(tmp_path):
    """helper-88 (lightllm defines ``_fwd_kernel`` ten times): a second ``_fwd_kernel`` launched with the first's
    argument types was never captured, and the summary counted both as one kernel."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    for mod, cmp in (("ka", "<"), ("kb", "<=")):
        (tmp_path / f"{mod}.py").write_text(KERNEL.format(cmp=cmp).replace("scale_kernel", "_fwd_kernel"))
    (tmp_path / "prog.py").write_text(
        "import torch\nimport ka, kb\nx = torch.randn(100, device='cuda')\ny = torch.empty_like(x)\n"
        "for _ in range(3):\n    ka._fwd_kernel[(2,)](x, y, 100, BLOCK=64)\n"
        "for _ in range(2):\n    kb._fwd_kernel[(2,)](x, y, 100, BLOCK=64)\n")

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)

    cap = cli("capture", "--out", str(tmp_path / "cap"), "--", sys.executable, "prog.py")
    assert cap.returncode == 0 and "5 launch(es) of 2 kernel(s); 2 reproducer(s)" in cap.stderr, cap.stderr[-2000:]
    rep = cli("interpret", str(tmp_path / "cap" / "_fwd_kernel__kb_0.py"))
    assert rep.returncode == 1 and "out_of_bounds" in rep.stdout + rep.stderr, (rep.stdout + rep.stderr)[-2000:]
    run = cli("interpret", "--", sys.executable, "prog.py")
    rows = [ln.split() for ln in run.stderr.splitlines() if ln.startswith("  _fwd_kernel")]
    assert ["_fwd_kernel", "3", "3", "0"] in rows and ["_fwd_kernel__kb", "2", "2", "2"] in rows, run.stderr[-2000:]
    # --kernel takes the names the summary prints, and NAME__MODULE for the one that kept the bare name (helper-143:
    # "--kernel _attn_fwd__attn_qk_int8_per_block_causal matched none of ... _attn_fwd__attn_qk_int8_per_block_causal")
    for pick, checked in (("_fwd_kernel__kb", ("0", "2")), ("_fwd_kernel__ka", ("3", "0"))):
        run = cli("interpret", "--kernel", pick, "--", sys.executable, "prog.py")
        rows = [ln.split() for ln in run.stderr.splitlines() if ln.startswith("  _fwd_kernel")]
        assert ["_fwd_kernel", "3", checked[0]] == rows[0][:3] and ["_fwd_kernel__kb", "2", checked[1]] == \
            rows[1][:3], run.stderr[-2000:]


@pytest.mark.interpreter
def test_a_kernel_file_that_no_longer_parses_fails_its_reproducers_gates(tmp_path):
    """helper-90: the replay fell back to the copy saved at capture (src/), so `check` passed a kernel whose file
    had a syntax error (a bad edit, merge-conflict markers)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)

    (tmp_path / "kern.py").write_text(KERNEL.format(cmp="<"))
    (tmp_path / "prog.py").write_text(PROG)
    assert cli("capture", "--out", "cap", "--", sys.executable, "prog.py").returncode == 0
    (tmp_path / "kern.py").write_text(KERNEL.format(cmp="<") + "<<<<<<< HEAD\n")
    chk = cli("check", "cap/scale_kernel_0.py", "--gates", "correctness", "--json", "r.json")
    import json

    [gate] = json.loads((tmp_path / "r.json").read_text())["extra"]["gates"]
    assert chk.returncode == 1 and gate["status"] == "FAIL", gate
    assert "kern.py:9: SyntaxError" in gate["reason"], gate["reason"]


@pytest.mark.interpreter
def test_check_on_a_reproducer_whose_kernel_file_is_gone_says_it_checked_the_code_as_captured(tmp_path):
    """helper-94: the kernel moved to another file after capture; `check` on its reproducer replayed the copy saved
    at capture and said "2 passed", with nothing in the table saying the code checked was not today's (the note went
    to a worker's stderr, which `check` does not show)."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    (tmp_path / "kern.py").write_text(KERNEL.format(cmp="<"))
    (tmp_path / "other.py").write_text(KERNEL.format(cmp="<").replace("scale_kernel", "other_kernel"))
    (tmp_path / "prog.py").write_text(PROG + "from other import other_kernel\nother_kernel[(2,)](x, y, 100, BLOCK=64)\n")
    cap = subprocess.run([sys.executable, "-m", "tritondbg", "capture", "--out", "cap", "--", sys.executable,
                          "prog.py"], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert cap.returncode == 0, cap.stderr[-2000:]
    (tmp_path / "kern.py").rename(tmp_path / "moved.py")
    chk = subprocess.run([sys.executable, "-m", "tritondbg", "check", "cap/scale_kernel_0.py", "cap/other_kernel_0.py",
                          "--gates", "correctness,sanitize", "-n", "1", "--json", "r.json"], capture_output=True,
                         text=True, env=env, timeout=600, cwd=tmp_path)
    gates = json.loads((tmp_path / "r.json").read_text())["extra"]["gates"]
    assert chk.returncode == 0 and [g["status"] for g in gates] == ["pass"] * 4, (gates, chk.stderr[-2000:])
    for g in gates:  # one worker loads both: the note stays with the reproducer whose file is gone
        moved = g["kernel"].startswith("scale_kernel")
        assert ("checked the code as captured" in g["reason"] and "kern.py is gone" in g["reason"]) is moved, g



SCRIPT_WITH_ITS_TEST = textwrap.dedent('''
    import torch, triton, triton.language as tl

    @triton.jit
    def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    class scale(torch.autograd.Function):
        @staticmethod
        def _call(x):
            y = torch.empty_like(x)
            scale_kernel[(2,)](x, y, x.numel(), BLOCK=64)
            return y

        @staticmethod
        def forward(ctx, x):
            return scale._call(x)

    def test_scale():
        y = scale.apply(torch.randn(100, device="cuda"))
        print("THE SCRIPT'S TEST RAN")
        return y

    result_gold = test_scale()  # the script's own test, at its top level, through a class's methods
''')


@pytest.mark.interpreter
def test_a_replay_does_not_run_the_scripts_own_test_at_load(tmp_path):
    """helper-141: TritonBench's files run their test at the top level (`result_gold = test_matmul()`), reaching
    the kernel through wrappers; the replay loaded the script's definitions and kept that statement, so every replay
    ran the whole test first, before its --timeout (stream-K's hung 605 s under --timeout 40). A statement that
    launches a kernel is stopped at the launch and left out."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    (tmp_path / "script.py").write_text(SCRIPT_WITH_ITS_TEST)
    cap = subprocess.run([sys.executable, "-m", "tritondbg", "capture", "--out", "cap", "--", sys.executable,
                          "script.py"], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert cap.returncode == 0 and "THE SCRIPT'S TEST RAN" in cap.stdout, cap.stderr[-2000:]
    rep = subprocess.run([sys.executable, "-m", "tritondbg", "interpret", "cap/scale_kernel_0.py"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert rep.returncode == 0 and "1/1 passed" in rep.stdout, (rep.stdout + rep.stderr)[-2000:]
    assert "THE SCRIPT'S TEST RAN" not in rep.stdout + rep.stderr, (rep.stdout + rep.stderr)[-2000:]
