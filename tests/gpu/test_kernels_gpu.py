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


def test_every_prefill_config_is_right_wherever_it_is_pinned(cli_env):
    """The autotuner times configs without checking them: each listed prefill config, pinned, must be right on
    every path of the kernel (tests/gpu/prefill_configs.py)."""
    import subprocess
    import sys

    from conftest import REPO

    p = subprocess.run([sys.executable, str(REPO / "tests/gpu/prefill_configs.py")], env=cli_env,
                       capture_output=True, text=True, timeout=500)
    print(p.stdout[-4000:])
    assert p.returncode == 0 and p.stdout.strip().splitlines()[-1].startswith("OK "), (p.stdout[-3000:],
                                                                                     p.stderr[-2000:])


@pytest.mark.parametrize("kernel,case,served", [("fp8_gemm", "decode_m1", "gluon_decode_kernel"),
                                                 ("gemm", "decode_m1_11008x4096", None)])
def test_run_checks_the_raced_kernel_users_get(kernel, case, served, cli_env):
    """tritondbg run patches the tl autotuners (config pinning) but pins nothing on a case without a config: the
    Gluon race runs there as in a user's process, and the kernel it serves is the one checked and reported
    ("raced"). fp8 decode at M = 1 on the H200: the Gluon decode kernel (session 19: 1.5% margin, it led by 2%);
    gemm: whichever kernel won is reported, and the record says what ran."""
    p = run_cli(["run", kernel, "--case", case, "--json"], cli_env, timeout=900)
    assert p.stdout, p.stderr
    result = json.loads(p.stdout)["results"][0]
    print(result["config"], result["config_source"])
    assert result["status"] == "pass", result["message"]
    raced = [k for k, src in result["config_source"].items() if src == "raced"]
    if served is not None:
        assert served in raced, result["config_source"]
    assert all(k in result["config"] for k in raced)
