"""Program mode serves "cuda" tensors asked for inside a custom autograd Function's backward (helper-63)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "program_data" / "backward_cuda.py"


@pytest.mark.interpreter
@pytest.mark.parametrize("command", ["interpret", "capture"])
def test_a_backward_that_allocates_on_cuda_runs_on_the_cpu_stand_in(command, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    extra = ["--out", str(tmp_path / "cap")] if command == "capture" else []
    out = subprocess.run([sys.executable, "-m", "tritondbg", command, *extra, "--", "python", str(PROGRAM)],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "OK", out.stdout + out.stderr[-3000:]
    assert "2 launch(es)" in out.stderr, out.stderr[-2000:]



SAVED = '''
import torch, triton, triton.language as tl


@triton.jit
def copy_k(o_ptr, i_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o_ptr + offs, tl.load(i_ptr + offs, mask=offs < n), mask=offs < n)


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.empty_like(x)
        copy_k[(triton.cdiv(x.numel(), 128),)](out, x, x.numel(), B=128)
        ctx.save_for_backward(x, out)  # the output too: autograd hands it back as a new tensor object
        return out

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        print("SAVED", x.device, out.device, out.is_cuda)
        buf = torch.empty(g.shape, device=out.device, dtype=g.dtype)
        copy_k[(triton.cdiv(g.numel(), 128),)](buf, g, g.numel(), B=128)
        return buf


x = torch.randn(333, device="cuda", requires_grad=True)
y = F.apply(x)
y.backward(torch.ones_like(y))
print("GRAD", bool((x.grad == 1).all()))
'''


@pytest.mark.interpreter
def test_a_cuda_output_saved_for_backward_is_still_cuda_there(tmp_path):
    """helper-114: ctx.saved_tensors gave an output of forward back as a new tensor, which read cpu; the backward's
    launch mixing it with its "cuda" gradient was refused as a host tensor (trident's softmax)."""
    (tmp_path / "prog.py").write_text(SAVED)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-m", "tritondbg", "interpret", "--", "python", "prog.py"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    assert out.stdout.splitlines() == ["SAVED cuda:0 cuda:0 True", "GRAD True"], out.stdout
