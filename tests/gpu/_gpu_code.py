"""Run a GPU test's code in a subprocess (compiled mode needs a process without TRITON_INTERPRET); its last line
is "ALL OK", or "SKIP: why" where the GPU cannot run it."""
import os
import subprocess
import sys

import pytest


def run_gpu_code(code: str, timeout: int = 900) -> str:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU (run on the GPU machine: pytest -m gpu)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, "TRITON_INTERPRET": "0"})
    print(p.stdout[-6000:])
    if "SKIP:" in p.stdout:
        pytest.skip(p.stdout.strip().splitlines()[-1])
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip().endswith("ALL OK"), p.stdout[-3000:] + p.stderr[-2000:]
    return p.stdout
