"""`tritondbg ir` on the GPU machine: the default arch is the local GPU, the cache entry `ir` compiles is the very
one a real launch of the same case and config uses (so the specialisation is the GPU's), and the stats equal
what the driver reports for the loaded kernel."""
import json
import subprocess
import sys

import pytest

from conftest import run_cli
from ir_shared import ir_env

pytestmark = pytest.mark.gpu

# Launch gemm square_4096 for real with one pinned config, then report the CompiledKernel the launch used.
LAUNCH = r"""
import json, os, sys
from tritondbg import loader, runner
runner.set_mode("compiled")
scenario = loader.load("gemm")
case = scenario.case("square_4096")
result = runner.run_case(scenario, case, "bfloat16", device="cuda", seed=0, config=json.loads(sys.argv[1]))
# the kernel ir reported (gemm has two: the pointer kernel and, on Hopper, the TMA one)
jit = next(k.fn for k in scenario.kernels if k.fn.__name__ == sys.argv[2])
kernels = [k for caches in jit.device_caches.values() for k in caches[0].values()]
k = kernels[-1]
meta = next(p for c, p in k.metadata_group.items() if c.endswith(".json"))
print(json.dumps({"status": result.status, "message": result.message, "n_regs": k.n_regs, "n_spills": k.n_spills,
                  "shared": k.metadata.shared, "entry": os.path.dirname(meta)}))
"""


def test_ir_entry_and_stats_are_the_real_launchs(tmp_path):
    import torch

    env = ir_env(tmp_path / "cache", tmp_path / "traces")
    p = run_cli(["ir", "gemm", "--case", "square_4096", "--stats", "--json"], env)
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    major, minor = torch.cuda.get_device_capability()
    assert row["arch"] == f"sm_{major}{minor}"
    launch = subprocess.run([sys.executable, "-c", LAUNCH, json.dumps(row["config"]), row["kernel"]], env=env,
                            capture_output=True, text=True, timeout=600)
    assert launch.returncode == 0, launch.stderr
    real = json.loads(launch.stdout.strip().splitlines()[-1])
    assert real["status"] == "pass", real["message"]
    assert real["entry"] == row["cache_entry"]          # Triton's key from the GPU launch == the one ir computed
    assert (real["n_regs"], real["n_spills"], real["shared"]) == (row["n_regs"], row["n_spills"], row["shared"])


def test_ir_sass_on_the_local_gpu(tmp_path):
    import torch

    env = ir_env(tmp_path / "cache", tmp_path / "traces")
    p = run_cli(["ir", "gemm", "--case", "square_4096", "--stage", "sass", "--stats"], env)
    assert p.returncode == 0, p.stderr
    assert "local GPU" in p.stderr
    if torch.cuda.get_device_capability()[0] == 9:
        assert "HGMMA (warpgroup mma)" in p.stdout
