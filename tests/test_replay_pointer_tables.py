"""A reproducer of a kernel that writes addresses into an int64 table (a grouped GEMM's or MoE setup kernel) compares
them as the program's addresses (tritondbg/program/tables.py, ``relocate``)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

PTR_TABLE = textwrap.dedent('''
    import torch, triton, triton.language as tl

    @triton.jit
    def group_args(x_ptrs, x, indptr, K):
        pid = tl.program_id(0)
        tl.store(x_ptrs + pid, x + tl.load(indptr + pid) * K)  # a pointer written into an int64 table

    x = torch.randn(13, 8, device="cuda")[3:]  # a view inside a larger storage: its bytes start past the group's
    indptr = torch.tensor([0, 3, 7], dtype=torch.int64, device="cuda")
    x_ptrs = torch.empty(3, dtype=torch.int64, device="cuda")
    group_args[(3,)](x_ptrs, x, indptr, 8)
    assert x_ptrs[1].item() == x.data_ptr() + 3 * 8 * 4
''')


@pytest.mark.interpreter
def test_a_reproducer_of_a_kernel_that_writes_addresses_compares_them_as_the_replays_own(tmp_path):
    """helper-97: FlashInfer's compute_sm80_group_gemm_args stores pointers (x + indptr * k) into int64 tables; its
    reproducer compared the replay's addresses with the capturing process's and failed a correct kernel ("3/3
    elements of x_ptr outside atol=0"). The captured entries that point into the launch's tensors are moved to the
    replay's copies; a wrong entry still fails."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)

    (tmp_path / "prog.py").write_text(PTR_TABLE)
    cap = cli("capture", "--out", "cap", "--", sys.executable, "prog.py")
    assert cap.returncode == 0, cap.stderr[-2000:]
    chk = cli("check", "cap/group_args_0.py", "--gates", "correctness", "--json", "r.json")
    [gate] = json.loads((tmp_path / "r.json").read_text())["extra"]["gates"]
    assert chk.returncode == 0 and gate["status"] == "pass", (gate, chk.stderr[-2000:])
    src = (tmp_path / "prog.py").read_text()
    (tmp_path / "prog.py").write_text(src.replace("tl.load(indptr + pid) * K", "tl.load(indptr + pid) * K + 1"))
    chk = cli("check", "cap/group_args_0.py", "--gates", "correctness", "--json", "r.json")
    [gate] = json.loads((tmp_path / "r.json").read_text())["extra"]["gates"]
    assert chk.returncode == 1 and gate["status"] == "FAIL" and "x_ptrs" in gate["reason"], gate
