"""fp8_gemm's TMA large-M path (kernels/_fp8_tma.py): when it is chosen, that its listed configs compile for
sm_90 without spills, and the explore script's whole loop under the interpreter. Interpreter correctness of the
kernel itself: the scenario's tiny_tma* cases (tests/test_kernels_interpret.py)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tritondbg.kernels import _fp8_tma as T
from tritondbg.kernels import fp8_gemm as F8

REPO = Path(__file__).resolve().parents[1]
FP8 = torch.float8_e4m3fn


def _t(*shape, dtype=FP8):
    return torch.zeros(*shape, dtype=dtype)


@pytest.fixture
def hopper(monkeypatch):
    monkeypatch.setattr(T, "_hopper_target", lambda: True)
    monkeypatch.setattr(T, "interpreted", lambda: False)


def test_tma_plan_layouts_on_hopper(hopper, monkeypatch):
    a = _t(256, 512)
    c = _t(256, 384, dtype=torch.bfloat16)
    assert T.tma_plan(a, _t(384, 512).t(), c) is True          # K-major b (an (N, K) weight's .t())
    assert T.tma_plan(a, _t(512, 384), c) is None              # row-major (K, N) b: the pointer kernel ...
    monkeypatch.setattr(T, "ROW_MAJOR_B", True)
    assert T.tma_plan(a, _t(512, 384), c) is False             # ... unless enabled (B_TRANS=False)
    assert T.tma_plan(_t(512, 256).t(), _t(384, 512).t(), c) is None  # a not row-major
    assert T.tma_plan(_t(256, 520)[:, :512], _t(384, 512).t(), c) is None  # a's row stride 520: not 16 B
    assert T.tma_plan(_t(256, 513)[:, 1:], _t(384, 512).t(), c) is None     # a's base off by one byte
    c_odd = _t(256, 36, dtype=torch.bfloat16)                   # 72-byte output rows
    assert T.tma_plan(a, _t(36, 512).t(), c_odd) is None
    assert T.tma_plan(a, _t(36, 512).t(), _t(256, 36, dtype=torch.float32)) is True  # 144-byte rows
    assert T.tma_plan(a, _t(512, 40), _t(256, 40, dtype=torch.bfloat16)) is None   # 40-byte rows of b
    assert T.tma_plan(_t(0, 512), _t(384, 512).t(), _t(0, 384, dtype=torch.bfloat16)) is None


def test_tma_plan_off_hopper_or_switched_off(monkeypatch):
    args = (_t(256, 512), _t(384, 512).t(), _t(256, 384, dtype=torch.bfloat16))
    monkeypatch.setattr(T, "interpreted", lambda: False)
    monkeypatch.setattr(T, "_hopper_target", lambda: False)  # pre-Hopper NVIDIA, AMD, no GPU
    assert T.tma_plan(*args) is None
    monkeypatch.setattr(T, "_hopper_target", lambda: True)
    assert T.tma_plan(*args) is True
    monkeypatch.setattr(T, "ENABLED", False)
    assert T.tma_plan(*args) is None


def test_fp8_gemm_takes_the_tma_kernel_where_planned(hopper, monkeypatch):
    """The wrapper launches fp8_gemm_tma_kernel with the plan's layout, the scales' kinds and a persistent
    grid of min(#SMs, #tiles); bad input still fails with the same one-line errors before any plan."""
    calls = []

    class Rec:
        def __getitem__(self, grid):
            return lambda *args, **kw: calls.append((grid, args, kw))

    monkeypatch.setattr(F8, "fp8_gemm_tma_kernel", Rec())
    monkeypatch.setattr(F8, "fp8_gemm_kernel", None)  # the pointer kernel must not run
    monkeypatch.setattr(T, "_num_sms", lambda device: 132)
    a, b = _t(1024, 512), _t(384, 512).t()
    sa, sb = torch.ones(1024, 1), torch.ones(())
    c = F8.fp8_gemm(a, b, sa, sb, fast_accum=True)
    (grid, args, kw), = calls
    assert c.shape == (1024, 384) and args[2] is c and kw == {}
    names = list(T.fp8_gemm_tma_kernel.fn.arg_names)
    bound = dict(zip(names, args))
    assert bound["B_TRANS"] is True and bound["SCALE_A_ROWS"] is True and bound["SCALE_B_COLS"] is False
    assert bound["FAST_ACCUM"] is True and bound["stride_a"] == 512 and bound["stride_b"] == 512
    assert grid(dict(BLOCK_M=128, BLOCK_N=128)) == (min(132, 8 * 3),)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        F8.fp8_gemm(a, _t(384, 500).t(), sa, sb)
    assert len(calls) == 1


def test_prune_keeps_fast_only_tiles_out_of_precise_runs():
    args = dict(M=8192, N=8192)
    precise = T._prune_configs(T.TMA_CONFIGS, dict(args, FAST_ACCUM=False))
    fast = T._prune_configs(T.TMA_CONFIGS, dict(args, FAST_ACCUM=True))
    tile = lambda c: (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"])  # noqa: E731
    assert T.FAST_ONLY and not T.FAST_ONLY & {tile(c) for c in precise}
    assert T.FAST_ONLY <= {tile(c) for c in fast}
    assert all(c.kwargs["BLOCK_M"] >= 64 for c in precise)


@pytest.mark.slow
def test_listed_large_tma_configs_compile_for_sm90_without_spills():
    """The big-tile configs (near the 255-register cap) compile for sm_90 on the CPU with no spills and within
    the H200's 227 KiB of shared memory (precise accumulation; FAST_ONLY tiles with fast). A subprocess: the
    test session runs under the interpreter, which cannot compile."""
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/explore_fp8.py"), "--survey-listed"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert p.stdout.count("\ntma ") == sum(c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] >= 128 * 128
                                           for c in T.TMA_CONFIGS), p.stdout


def test_explore_script_runs_every_candidate_under_the_interpreter(tmp_path):
    """explore_fp8.py's GPU loop (launch arguments of both kernels, checks, summary, JSON) on a tiny shape."""
    import json

    out = tmp_path / "e.json"
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/explore_fp8.py"), "--cpu-smoke", "--shapes",
                        "80x48x96", "--out", str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    data = json.loads(out.read_text())
    rows = data["rows"]
    assert data["meta"]["complete"] is True and data["meta"]["gpu"] == "cpu-smoke" and "triton" in data["meta"]
    kernels = [r for r in rows if r["name"] in ("ptr", "tma")]
    from importlib import util
    spec = util.spec_from_file_location("explore_fp8", REPO / "tests/bench/explore_fp8.py")
    mod = util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    want = sum(len(c[7]) for c in mod.CANDIDATES)
    assert len(kernels) == want and all(r["mismatched"] == 0 and r["us"] for r in kernels), kernels[:3]
