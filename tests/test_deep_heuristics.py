"""An autotuner over many @triton.heuristics (mamba's layer_norm backward stacks five) is found as the kernel's
autotuner all the way down (helper-90: a walk of four levels missed it; the capture recorded no config and its
reproducer failed every gate with "Heuristics.run() got multiple values for keyword argument 'num_warps'")."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

KERNEL = textwrap.dedent('''
    import torch, triton, triton.language as tl

    @triton.autotune(configs=[triton.Config({}, num_warps=1), triton.Config({}, num_warps=2)], key=["n"])
    @triton.heuristics({"H1": lambda args: args["b_ptr"] is not None})
    @triton.heuristics({"H2": lambda args: False})
    @triton.heuristics({"H3": lambda args: False})
    @triton.heuristics({"H4": lambda args: False})
    @triton.heuristics({"H5": lambda args: False})
    @triton.jit
    def scale_kernel(x_ptr, b_ptr, y_ptr, n, H1: tl.constexpr, H2: tl.constexpr, H3: tl.constexpr,
                     H4: tl.constexpr, H5: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=m, other=0.0), mask=m)

    x = torch.randn(100, device="cuda")
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(100, 64),)](x, None, y, 100, BLOCK=64)
''')


@pytest.mark.interpreter
def test_an_autotuner_over_five_heuristics_is_captured_with_its_config_and_its_reproducer_passes(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    (tmp_path / "kern.py").write_text(KERNEL)

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)

    cap = cli("capture", "--out", "cap", "--", sys.executable, "kern.py")
    assert cap.returncode == 0, cap.stderr[-2000:]
    meta = json.loads((tmp_path / "cap" / "data" / "scale_kernel_0.json").read_text())
    assert meta["config"] == {"num_warps": 1, "num_stages": 3, "num_ctas": 1}, meta["config"]
    chk = cli("check", "cap/scale_kernel_0.py", "--gates", "correctness,all-configs", "--json", "r.json")
    assert chk.returncode == 0, (chk.stdout + chk.stderr)[-3000:]
    gates = {g["gate"]: g for g in json.loads((tmp_path / "r.json").read_text())["extra"]["gates"]}
    assert gates["all-configs"]["status"] == "pass" and "2 config" in gates["all-configs"]["reason"], gates
