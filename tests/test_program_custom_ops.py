"""A kernel behind a torch custom op (``torch.library.custom_op``, ``triton_op``), under ``interpret -- CMD``.

helper-100: flash-attn wraps its Triton kernels in custom ops, and torch runs an op's Python kernel with no function
mode on the stack (a mode handles a call with itself popped). The program's torch reads of memory a launch left
unwritten were told outside an op and silent inside one (exit 0), a ``device="cuda"`` inside one would meet torch's
CPU build, and an op registered for CUDA alone had no kernel for the program's "cuda" tensors (CPU tensors here).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = Path(__file__).parent / "program_data" / "custom_ops.py"


def _line(tag: str) -> int:
    return next(i for i, ln in enumerate(PROG.read_text().splitlines(), 1) if ln.rstrip().endswith(f"# {tag}") or
                f"# {tag} " in ln)


@pytest.mark.parametrize("mode", ["plain", "op", "cuda_op"])
def test_a_read_of_what_a_launch_left_unwritten_is_told_inside_a_custom_op_too(tmp_path, cli_env, mode):
    shutil.copy(PROG, tmp_path / "prog.py")
    p = run_cli(["interpret", "--", sys.executable, "prog.py", mode], cli_env, cwd=tmp_path)
    assert "Torch not compiled with CUDA" not in p.stderr and "has no CPU kernel" not in p.stderr, p.stderr[-3000:]
    assert "max nan" in p.stdout, p.stdout + p.stderr[-3000:]
    told = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: uninit in partial_kernel")]
    assert len(told) == 1, p.stderr[-3000:]
    assert f"prog.py:{_line('STORE')}:" in told[0] and f"Tensor.max at prog.py:{_line('USE')}" in told[0], told[0]
    assert p.returncode == 1, p.stderr[-2000:]


OWN_CPU = '''
import torch

@torch.library.custom_op("tdbg_test::triple", mutates_args=(), device_types="cuda")
def triple(x: torch.Tensor) -> torch.Tensor:
    return x * 2  # the CUDA kernel (served to the program's "cuda" tensors here)

if __import__("sys").argv[1] == "own":
    @triple.register_kernel("cpu")
    def _(x):
        return x * 3  # the program's own CPU kernel: it takes over

print(triple(torch.ones(3, device="cuda")).tolist())
'''


@pytest.mark.parametrize("own", ["own", "none"])
def test_a_cuda_only_op_serves_cuda_tensors_and_a_cpu_kernel_of_the_programs_own_takes_over(tmp_path, cli_env, own):
    (tmp_path / "prog.py").write_text(OWN_CPU)
    p = run_cli(["interpret", "--", sys.executable, "prog.py", own], cli_env, cwd=tmp_path)
    assert ("[3.0, 3.0, 3.0]" if own == "own" else "[2.0, 2.0, 2.0]") in p.stdout, p.stdout + p.stderr[-3000:]
    assert "Overriding" not in p.stderr and "Traceback" not in p.stderr, p.stderr[-3000:]
