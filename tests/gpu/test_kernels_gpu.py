"""Every bundled kernel compiled on the GPU against its reference, every case (GPU-size ones too).

Runs `tritondbg run KERNEL --case all` in a subprocess: compiled mode needs a process of its own.
Skipped without CUDA; run on the GPU machine with `pytest -m gpu`.
"""
import json

import pytest

from conftest import run_cli

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("kernel", ["add", "layernorm", "softmax", "attention", "gemm", "fp8_gemm"])
def test_kernel_compiled_matches_reference(kernel, cli_env):
    p = run_cli(["run", kernel, "--case", "all", "--json"], cli_env, timeout=1200)
    assert p.stdout, p.stderr
    record = json.loads(p.stdout)
    failures = [(r["case"], r["dtype"], r["message"]) for r in record["results"] if r["status"] != "pass"]
    assert not failures, failures
    assert p.returncode == 0
    assert len(record["results"]) >= 2
