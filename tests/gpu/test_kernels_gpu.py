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



CODE_PINNING = r'''
import sys, torch
from tritondbg.pinning import Pinning
from tritondbg.kernels import fp8_gemm as F8, gemm as G, _launch, _gemm_ws as WS
if WS.GD is None or torch.cuda.get_device_capability() != (9, 0):
    print("SKIP: needs Gluon and an sm_90 GPU"); sys.exit(0)
f8 = torch.float8_e4m3fn
bad = []
_launch.verify_new_launchers(True)  # as tritondbg run / check have it
for name, M, N, K in (("fp8", 1, 8192, 8192), ("fp8", 3, 1000, 3008), ("bf16", 17, 1000, 3000), ("bf16", 3, 4160, 1000)):
    if name == "fp8":
        a = (torch.randn(M, K, device="cuda") / 4).to(f8)
        b = (torch.randn(N, K, device="cuda") / 4).to(f8).t()
        sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor([0.25], device="cuda")
        call, decision = (lambda: F8.fp8_gemm(a, b, sa, sb)), (lambda: F8.ws_decision(a, b, sa, sb))
        ref = (a.float() @ b.float()) * 0.125
    else:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = (torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K ** 0.5).t()
        call, decision = (lambda: G.gemm(a, b)), (lambda: G.ws_decision(a, b))
        ref = a.float() @ b.float()
    pinning = Pinning({}, False)  # tritondbg run's: the tl autotuners patched, nothing pinned (a case without config)
    with pinning.active():
        outs = [call() for _ in range(3)]
    rec = decision()
    tag = f"{name} {M}x{N}x{K}"
    if rec is None or rec["tl"] is None or not any(isinstance(v, float) for v in rec["ws"].values()):
        bad.append(f"{tag}: no race under the tool: {rec}")
        continue
    raced = {k for k, src in pinning.sources.items() if src == "raced"}
    want = {rec["pick"].split(":")[0]} if rec["pick"] else set()
    err = (outs[0].float() - ref).abs().max().item()
    same = all(torch.equal(outs[0], o) for o in outs[1:])
    if raced != want or not same or not err <= 2 ** -6 * ref.abs().max().item():
        bad.append(f"{tag}: pick {rec['pick']}, reported raced {raced}, same bits {same}, max error {err:.3g}")
    print(f"{tag}: pick {rec['pick']}; tl {rec['tl']:.1f}; reported {pinning.sources}")
print("\n".join(bad) if bad else "ALL OK")
'''


def test_run_and_check_race_and_report_the_kernel_users_get():
    """tritondbg run / check patch the tl autotuners (config pinning) but pin nothing on a case without a config:
    the Gluon race runs there as in a user's process, whatever wins serves every later call of the signature (the
    same bits: the determinism gate), and a Gluon winner is reported as "raced". fp8 decode and bf16 gemm at M <= 64
    (the Gluon decode kernel's candidates; at M = 1 fp8 it and the tl kernel are within the race's margin, so
    either may win)."""
    from _gpu_code import run_gpu_code

    run_gpu_code(CODE_PINNING)
