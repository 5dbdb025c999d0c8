"""attention's race between the tl prefill kernel and the warp-specialised Gluon kernel (kernels/_attention_race.py,
kernels/_race.py), on the CPU: the candidates are faked (their kernels need an sm_90 GPU; tests/gpu/
test_attention_gluon_gpu.py runs them there), so what is tested is the wiring: every candidate built with the
call's tensors, checked against the tl output, timed against the tl path, the winner cached under the signature
with the tl plan's interface and recomputing the first output. Then the Gluon kernel itself compiles for sm_90
without a GPU, warp-specialised, spilling nothing, its wgmma pipeline not serialised by ptxas."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tritondbg.kernels import _attention_race as AR, _race as R

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(R, "DECISIONS", {})
    monkeypatch.setattr(R, "_RACING", set())
    monkeypatch.setattr(AR, "_num_sms", lambda device: 132)


class _Plan:
    def __init__(self, cfg, value):
        self.cfg, self.value, self.launches = cfg, value, 0

    def launch(self, q, k, v, o):
        self.launches += 1
        o.copy_(self.value(q) if callable(self.value) else self.value)


def _tensors():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 100, 64, generator=g, dtype=torch.bfloat16) for _ in range(3))
    ref = (q.float() * 0.5).to(torch.bfloat16)  # stands in for the tl output
    return q, k, v, ref


def test_the_fastest_right_candidate_serves_the_signature_with_the_tl_plans_interface(monkeypatch):
    q, k, v, ref = _tensors()
    names = [AR.config_name(c) for c in AR.CANDIDATES]
    right = lambda q: (q.float() * 0.5).to(torch.bfloat16)  # noqa: E731
    values = {names[0]: right, names[1]: right, names[2]: torch.zeros_like(ref), names[3]: RuntimeError("no smem")}
    times = {names[0]: 9.0, names[1]: 7.0, names[2]: 1.0}
    built, seen = {}, []

    def build(cfg, q_, k_, v_, o, causal, sm_scale, num_sms):
        seen.append((cfg, q_ is q, k_ is k, v_ is v, causal, sm_scale, num_sms))
        value = values[AR.config_name(cfg)]
        if isinstance(value, Exception):
            raise value
        plan = built[AR.config_name(cfg)] = _Plan(cfg, value)
        plan.launch(q_, k_, v_, o)
        return plan

    tl_launches = []

    def steady():
        tl_launches.append(1)

    def timer(fn):
        if fn is steady:
            fn()
            return 10.0
        before = {n: p.launches for n, p in built.items()}
        fn()
        (name,) = [n for n, p in built.items() if p.launches > before[n]]
        return times[name]

    monkeypatch.setattr(AR, "build", build)
    plans = {"sig": "tl plan"}
    o = ref.clone()
    AR.race("sig", q, k, v, o, True, 0.125, plans, steady, timer=timer)
    rec = R.DECISIONS["sig"]
    assert rec["pick"] == names[1] and plans["sig"] is built[names[1]]
    assert rec["kernel"] == "gluon_attention_kernel" and rec["key"]["op"] == "attention"
    assert rec["key"]["causal"] is True and rec["key"]["N_Q"] == 100 and rec["key"]["D"] == 64
    assert rec["ws"][names[2]] == "wrong result" and rec["ws"][names[3]].startswith("RuntimeError")
    assert rec["tl"] == 10.0 and len(tl_launches) == R.ROUNDS
    assert all(s[1:] == (True, True, True, True, 0.125, 132) for s in seen) and len(seen) == len(AR.CANDIDATES)
    assert torch.equal(o, right(q)) and built[names[1]].launches == 1 + R.ROUNDS + 1
    assert rec["tiles"][names[1]] == {"BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 3, "persistent": False}


def test_a_tie_keeps_the_tl_plan_and_a_signature_races_once(monkeypatch):
    q, k, v, ref = _tensors()
    right = lambda q: (q.float() * 0.5).to(torch.bfloat16)  # noqa: E731
    builds = []

    def build(cfg, q_, k_, v_, o, *rest):
        builds.append(cfg)
        plan = _Plan(cfg, right)
        plan.launch(q_, k_, v_, o)
        return plan

    monkeypatch.setattr(AR, "build", build)
    plans = {"sig": "tl plan"}
    AR.race("sig", q, k, v, ref.clone(), False, 0.125, plans, lambda: None, timer=lambda fn: 10.0 * (1 - R.MARGIN / 2))
    assert plans == {"sig": "tl plan"} and R.DECISIONS["sig"]["pick"] is None
    AR.race("sig", q, k, v, ref.clone(), False, 0.125, plans, lambda: None, timer=lambda fn: 1.0)
    assert len(builds) == len(AR.CANDIDATES)  # decided: not raced again


def test_nothing_races_off_hopper_or_when_turned_off(monkeypatch):
    q, k, v, _ = _tensors()
    assert not AR.eligible(q, k, v, 0.125)  # CPU tensors
    monkeypatch.setenv("TRITONDBG_GLUON_ATTENTION", "0")
    assert not AR.enabled()


def test_attention_races_after_the_tl_path_and_not_when_a_config_is_pinned(monkeypatch):
    """kernels/attention.py calls the race on a signature's first call (eligible, nothing pinned), with the tl
    path's cached plan as the steady call; a pinned tl config (tritondbg run --config) races nothing."""
    from tritondbg.kernels import _launch, attention as A

    q, k, v, _ = _tensors()
    calls = []
    monkeypatch.setattr(A._AR, "eligible", lambda *a: True)
    monkeypatch.setattr(A._AR, "race", lambda sig, q_, k_, v_, o, causal, scale, plans, steady: calls.append(
        (sig is not None, o.shape, causal, scale, plans is A._PREFILL_PLANS)))
    A.attention(q, k, v, causal=True)
    assert calls == [(True, q.shape, True, 0.125, True)]
    monkeypatch.setattr(_launch, "PINNED", {"_attn_fwd_kernel"})
    A.attention(q, k, v, causal=True)
    assert len(calls) == 1


def test_race_decision_reads_the_record_the_race_left_under_the_calls_signature(monkeypatch):
    """attention.race_decision (what the sweep's config column and tools show) finds the race's record for the
    same call, and nothing for another causal flag or scale (other signatures)."""
    from tritondbg.kernels import attention as A

    q, k, v, _ = _tensors()
    monkeypatch.setattr(A._AR, "eligible", lambda *a: True)
    monkeypatch.setattr(A._AR, "race", lambda sig, *a: R.DECISIONS.__setitem__(sig, {"pick": None, "tl": 9.0}))
    A.attention(q, k, v, causal=True)
    assert A.race_decision(q, k, v, causal=True) == {"pick": None, "tl": 9.0}
    assert A.race_decision(q, k, v, causal=False) is None
    assert A.race_decision(q, k, v, causal=True, sm_scale=0.1) is None


def test_the_gluon_attention_kernel_compiles_for_sm90_unserialised(cli_env):
    """D = 128 and 64, causal and not, the raced BLOCK_N / STAGES, persistent (tiles taken in turn from the
    counters) and one program per tile: each compiles for sm_90 on this Triton
    without a GPU, warp-specialised (setmaxnreg), with wgmma, spilling nothing (Triton 3.6 and 3.9), and ptxas
    keeps the wgmma pipeline (no C7514: P is a register operand of the PV wgmma while the next block's softmax
    runs). S = Q K^T is one m64n128 instruction per k-step at D = 64 too (two m64n64 re-read Q from shared
    memory: 2% slower on the H200). Shared memory stays within sm_90's 227 KiB with the Q buffers
    ``q_buffers`` picks (two where they fit)."""
    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/gluon_attention.py"), "--compile-only",
                        "--variants", "128s2,128s3,128s2t", "--dims", "128,64"],
                       env=dict(cli_env, TRITON_DEFAULT_FP_FUSION="1"), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-2000:]
    lines = [ln for ln in p.stdout.splitlines() if " regs " in ln or " FAILED " in ln]
    assert len(lines) == 12, p.stdout[-3000:]
    for ln in lines:
        assert int(ln.split(" spills ")[1].split()[0]) == 0, ln
        assert int(ln.split(" smem ")[1].split()[0]) <= 227, ln  # sm_90's limit, with the Q buffers it picked
        assert "m64n128k16" in ln, ln  # S (BLOCK_N = 128) at both head dims
        assert "SERIALISED" not in ln and "not run" not in ln, ln
        assert " wgmma 0" not in ln and "setmaxnreg -" not in ln, ln
