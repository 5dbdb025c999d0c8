"""fp8_gemm's race between its tl kernels (large M: the tl TMA / pointer kernels; M <= 64: the decode kernel) and
the warp-specialised Gluon kernel, on the CPU: who may enter, what each candidate and the winner are handed (the
scales per call, the promotion mode), which signature a winner serves. Stand-ins: tests/_race_stubs.py; the
kernels themselves run on the H200 in tests/gpu/test_gemm_ws_gpu.py."""
import pytest
import torch
from _race_stubs import (F8_DTYPE, _REAL_KERNEL, _clean, _install, _names, _operands, _Plan,  # noqa: F401
                         _right, _steady, stub_launch)

from tritondbg.kernels import _gemm_ws as WS, _race as R
from tritondbg.kernels import fp8_gemm as F8


def test_fp8_race_hands_the_scales_and_the_promotion_to_every_candidate_and_the_winner(monkeypatch):
    a, b, c_tl = _operands(M=256, N=128, K=64)  # stand-in operands: the race compares outputs only
    sa, sb = torch.tensor(0.5), torch.tensor(2.0)
    n = _names(256, fp8=True)
    assert n == [WS.config_name(c) for c in WS._FP8] and all("128x128x128" in x and " w8" in x for x in n)
    assert len(_names(127, fp8=True)) == 4 and any(" w4" in x for x in _names(127, fp8=True))  # M <= 128
    built, timer = _install(monkeypatch, {n[0]: _right, n[1]: _right}, {n[0]: 6.0, n[1]: 5.0})
    plans = {}
    c = WS.race("s", a, b, c_tl.clone(), True, plans, _steady, 4, timer, scales=(sa, sb), precise=2)
    assert plans["s"] is built[n[1]] and R.DECISIONS["s"]["pick"] == n[1]
    assert all(p.built_with == (True, (sa, sb), 2) for p in built.values())
    assert built[n[1]].scales == (sa, sb) and torch.equal(c, c_tl)  # the recompute got the scales too


def test_build_fp8_passes_the_scales_per_call_not_in_the_launcher_tail(stub_launch):
    calls = stub_launch
    a = torch.empty(256, 128, dtype=F8_DTYPE)
    w = torch.empty(192, 128, dtype=F8_DTYPE)  # b = w.t(): K-major, as torch._scaled_mm takes it
    c = torch.empty(256, 192, dtype=torch.bfloat16)
    sa, sb = torch.ones(()), torch.ones(())
    plan = WS.build((128, 128, 128, 5, 8), a, w.t(), c, True, 132, (sa, sb), 2)
    (grid, args, kwargs), = calls
    bound = dict(zip(_REAL_KERNEL.arg_names, args))
    assert bound["scale_a_ptr"] is sa and bound["scale_b_ptr"] is sb and bound["PRECISE"] == 2 and bound["B_NK"]
    assert plan.launcher.tail == tuple(args[5:]) + (8,)  # every parameter after the scales, then num_warps
    assert not any(isinstance(v, torch.Tensor) for v in plan.launcher.tail)
    sa2, sb2 = torch.full((), 3.0), torch.full((), 4.0)
    a2, w2, c2 = a.clone(), w.clone(), torch.empty_like(c)
    plan(a2, w2.t(), c2, sa2, sb2)
    (tensors, descs, trailing), = plan.launcher.runs
    assert tensors == () and trailing == (sa2, sb2)
    assert [d.base.data_ptr() for d in descs] == [a2.data_ptr(), w2.data_ptr(), c2.data_ptr()]


def test_eligible_fp8_only_k_major_b_per_tensor_scales_16bit_out(monkeypatch):
    if WS.GK is None:
        pytest.skip("this Triton has no Gluon Hopper API")
    monkeypatch.setattr(WS, "_on_hopper", lambda a: True)
    monkeypatch.setattr(WS._launch, "pristine", lambda k: True)
    a = torch.empty(256, 64, dtype=F8_DTYPE)
    w = torch.empty(128, 64, dtype=F8_DTYPE)
    s = torch.ones(())
    bf16 = torch.bfloat16
    assert WS.eligible_fp8(a, w.t(), s, s, bf16) is True
    assert WS.eligible_fp8(a, w.t(), s, s, torch.float16) is True
    assert WS.eligible_fp8(a, w.t(), s, s, torch.float32) is False  # the kernel writes 16-bit c
    assert WS.eligible_fp8(a, torch.empty(64, 128, dtype=F8_DTYPE), s, s, bf16) is False  # row-major b
    assert WS.eligible_fp8(a, w.t(), torch.ones(256, 1), s, bf16) is False  # per-row scales
    assert WS.eligible_fp8(a, w.t(), s, torch.ones(1, 128), bf16) is False  # per-column scales
    assert WS.eligible_fp8(a, w.t(), s.half(), s, bf16) is False
    assert WS.eligible_fp8(a, w.t(), s.to("meta"), s, bf16) is False  # a scale on another device
    assert WS.eligible_fp8(a[:, :40], torch.empty(128, 40, dtype=F8_DTYPE).t(), s, s, bf16) is False  # K % 16
    assert WS.eligible_fp8(a, torch.empty(100, 64, dtype=F8_DTYPE).t(), s, s, bf16) is False  # N % 8
    assert WS.eligible_fp8(a.t().contiguous().t(), w.t(), s, s, bf16) is False  # column-major a
    assert WS.eligible_fp8(a, torch.empty(128, 80, dtype=F8_DTYPE)[:, :64].t(), s, s, bf16) is True  # padded rows
    skewed = torch.empty(128 * 64 + 1, dtype=F8_DTYPE)[1:].view(128, 64)
    assert WS.eligible_fp8(a, skewed.t(), s, s, bf16) is False  # base not 16-byte aligned
    monkeypatch.setattr(WS._launch, "PINNED", {"fp8_gemm_tma_kernel"})  # tritondbg run --config pinned it
    assert WS.eligible_fp8(a, w.t(), s, s, bf16) is False
    monkeypatch.setattr(WS._launch, "PINNED", set())
    monkeypatch.setenv("TRITONDBG_GLUON_GEMM", "0")
    assert WS.eligible_fp8(a, w.t(), s, s, bf16) is False
    monkeypatch.delenv("TRITONDBG_GLUON_GEMM")
    monkeypatch.setattr(WS, "_on_hopper", lambda a: False)
    assert WS.eligible_fp8(a, w.t(), s, s, bf16) is False


def test_fp8_gemm_races_once_per_signature_and_serves_the_winner_unless_a_config_is_pinned(monkeypatch):
    """fp8_gemm's wiring: the first large-M call runs the tl kernel, then the race (scales, the promotion mode,
    the cached path as its steady call); later calls launch the winner with the call's scales; a pinned tl
    config takes the full path again."""
    launches = []

    class TL:  # the pointer kernel, recorded (meta tensors: nothing runs)
        def __getitem__(self, grid):
            return lambda *args, **kw: launches.append(args) or None

    monkeypatch.setattr(F8, "fp8_gemm_kernel", TL())
    monkeypatch.setattr(F8._fp8_tma, "tma_plan", lambda a, b, c: None)
    monkeypatch.setattr(F8._fp8_tma, "_num_sms", lambda device: 132)
    monkeypatch.setattr(F8._WS, "eligible_fp8", lambda *args: True)
    monkeypatch.setattr(F8._launch, "pristine", lambda k: True)
    monkeypatch.setattr(F8._launch, "aligned", lambda *t: True)
    monkeypatch.setattr(F8._LARGE, "plans", {})
    winner = _Plan("w", None)
    winner.kernel = object()
    races = []

    def race(sig, a, b, c, b_nk, plans, steady, num_sms, scales=(), precise=0):
        races.append((sig, b_nk, scales, precise, num_sms))
        plans[sig] = winner
        R.DECISIONS[sig] = {"pick": "w", "precise": precise}  # what _race.run records under the signature
        return c

    monkeypatch.setattr(F8._WS, "race", race)
    a = torch.empty(256, 512, device="meta", dtype=F8_DTYPE)
    b = torch.empty(384, 512, device="meta", dtype=F8_DTYPE).t()
    sa, sb = torch.empty((), device="meta"), torch.empty((), device="meta")
    assert F8.ws_decision(a, b, sa, sb) is None
    F8.fp8_gemm(a, b, sa, sb)
    (sig, b_nk, scales, precise, num_sms), = races
    assert b_nk is True and scales[0] is sa and scales[1] is sb and precise == 2 and num_sms == 132
    # the record is found by the public lookup the sweep and tools use (the race function once shadowed the
    # _race module there: ws_decision raised AttributeError on the GPU)
    assert F8.ws_decision(a, b, sa, sb) == {"pick": "w", "precise": 2}
    assert F8.ws_decision(a, b, sa, sb, fast_accum=True) is None
    assert len(launches) == 1
    c2 = F8.fp8_gemm(a, b, sa, sb)
    assert winner.launches == 1 and winner.scales == (sa, sb) and c2.shape == (256, 384) and len(launches) == 1
    F8.fp8_gemm(a, b, sa, sb, fast_accum=True)  # another signature: fast accumulation races with PRECISE 0
    assert len(races) == 2 and races[1][3] == 0
    monkeypatch.setattr(F8._launch, "PINNED", {"fp8_gemm_kernel"})
    F8.fp8_gemm(a, b, sa, sb)
    assert winner.launches == 1 and len(launches) == 3  # the pinned tl kernel ran, not the raced plan


def _stub_decode_path(monkeypatch, decode, race, pristine: bool):
    """fp8_gemm's decode path with the decode kernel's launch (``decode``), the race and the SM count stubbed."""
    monkeypatch.setattr(F8, "_PLANS", {})
    monkeypatch.setattr(F8, "_decode", decode)
    monkeypatch.setattr(F8, "_pristine", lambda: pristine)
    monkeypatch.setattr(F8._fp8_tma, "_num_sms", lambda device: 132)
    monkeypatch.setattr(F8._WS, "eligible_fp8", lambda *args: True)
    monkeypatch.setattr(F8._WS, "race", race)


def _meta_operands(M: int):
    """a (M, 512), b = w.t() (512, 384) and two scalar scales, on the meta device (no memory, no kernel)."""
    a = torch.empty(M, 512, device="meta", dtype=F8_DTYPE)
    b = torch.empty(384, 512, device="meta", dtype=F8_DTYPE).t()
    return a, b, torch.empty((), device="meta"), torch.empty((), device="meta")


def test_fp8_decode_calls_race_the_gluon_tiles_against_the_decode_kernels_cached_path(monkeypatch):
    """M <= 64: after the decode kernel's first call of a signature (its cached plan stored), the Gluon decode
    kernel's candidates (and for 16 < M the Gluon gemm tiles) race that plan's steady call under the key
    (signature, precise); a winner serves later calls through the decode steady state (the call's scales, a new c).
    M <= 16 races the decode candidates only (the gemm tiles lost there on the H200), and nothing without them; a
    pinned decode config or a pointer off 16 bytes: no race."""
    launches, races = [], []

    class TLPlan:
        def __init__(self, shape):
            self.out_shape, self.device, self.calls = shape, torch.device("meta"), 0

        def launch(self, a, b, c, sa, sb):
            self.calls += 1

        @staticmethod
        def usable():
            return F8._pristine()

    def decode(a, b, c, sa, sa_rows, sb, sb_cols, sig, scale_a, scale_b):
        launches.append(sig)
        if keep[0]:
            F8._PLANS[sig] = TLPlan(c.shape)
        return c

    winner = _Plan("w", None)
    winner.kernel = "gluon"  # what the steady state asks _launch.pristine about

    def race(sig, a, b, c, b_nk, plans, steady, num_sms, scales=(), precise=0, gemm_tiles=True, extra=(),
             margin=None):
        assert margin == F8.DECODE_MARGIN < R.MARGIN
        races.append((sig, b_nk, scales, precise, num_sms))
        tiles.append((gemm_tiles, [e[0] for e in extra], {e[3] for e in extra}))
        steady()  # the decode kernel's cached path
        plans[sig] = winner
        return c

    class GD:  # the Gluon decode module, as far as the race's caller asks it
        KERNEL = "gluon_decode_kernel"
        gluon_decode_kernel = object()

        @staticmethod
        def expand(M, N, K, num_sms, cands, elem):
            assert cands == "fp8 candidates" and elem == 1
            return ((M, 256, 6, 1), (M, 512, 4, 1))

        candidates = staticmethod(lambda elem: "fp8 candidates")

        name = staticmethod(lambda cfg: f"decode {cfg}")
        tile_dict = staticmethod(lambda cfg: {"cfg": cfg})

    tiles = []
    monkeypatch.setattr(F8._WS, "GD", GD)
    monkeypatch.setattr(F8._launch, "pristine", lambda kernel: True)

    keep = [True]
    _stub_decode_path(monkeypatch, decode, race, pristine=True)
    a, b, sa, sb = _meta_operands(64)
    F8.fp8_gemm(a, b, sa, sb)
    sig = F8._signature(a, b, sa, sb, torch.bfloat16)
    assert launches == [sig] and races == [((sig, False), True, (sa, sb), 2, 132)]
    assert tiles == [(True, ["decode (64, 256, 6, 1)", "decode (64, 512, 4, 1)"], {"gluon_decode_kernel"})]
    served = F8._PLANS[sig]
    assert served.plan is winner and served.out_shape == (64, 384)
    sa2, sb2 = torch.empty((), device="meta"), torch.empty((), device="meta")
    c2 = F8.fp8_gemm(a, b, sa2, sb2)
    assert winner.launches == 1 and winner.scales == (sa2, sb2) and c2.shape == (64, 384) and launches == [sig]
    a16 = torch.empty(16, 512, device="meta", dtype=F8_DTYPE)
    F8.fp8_gemm(a16, b, sa, sb)  # M <= RACE_DECODE_MIN_M: the decode candidates only
    assert len(races) == 2 and len(launches) == 2 and F8.RACE_DECODE_MIN_M == 16
    assert tiles[-1] == (False, ["decode (16, 256, 6, 1)", "decode (16, 512, 4, 1)"], {"gluon_decode_kernel"})
    monkeypatch.setattr(F8._WS, "GD", None)  # no Gluon decode kernel (no Gluon Hopper API): M <= 16 races nothing
    a8 = torch.empty(8, 512, device="meta", dtype=F8_DTYPE)
    F8.fp8_gemm(a8, b, sa, sb)
    assert len(races) == 2 and len(launches) == 3
    a33 = torch.empty(33, 512, device="meta", dtype=F8_DTYPE)
    F8.fp8_gemm(a33, b, sa, sb)  # ... and 16 < M the gemm tiles only
    assert len(races) == 3 and tiles[-1] == (True, [], set())
    monkeypatch.setattr(F8._WS, "GD", GD)
    a48 = torch.empty(48, 512, device="meta", dtype=F8_DTYPE)
    monkeypatch.setattr(F8._launch, "PINNED", {"fp8_gemm_decode_kernel"})  # a tool pinned the decode config
    F8.fp8_gemm(a48, b, sa, sb)
    assert len(races) == 3 and len(launches) == 5
    monkeypatch.setattr(F8._launch, "PINNED", set())
    monkeypatch.setattr(F8._launch, "aligned", lambda *t: False)
    a40 = torch.empty(40, 512, device="meta", dtype=F8_DTYPE)
    F8.fp8_gemm(a40, b, sa, sb)  # a pointer off 16 bytes: no descriptor, no race
    assert len(races) == 3 and len(launches) == 6


def test_fp8_decode_race_runs_and_its_winner_serves_under_a_tool_that_pins_nothing(monkeypatch):
    """tritondbg run / check patch the tl autotuners (the decode kernel's cached plan is off: no plan stored) but
    pin no config for a case without one: the race still runs, and its Gluon winner serves the signature's later
    calls there (a determinism gate compares it with itself, and run / check check the kernel users get). With a
    decode config pinned the tl path runs; ``tritondbg ir``'s capture (the Gluon kernel's launch path patched) gets
    the tl path too."""
    launches, races = [], []

    def decode(a, b, c, sa, sa_rows, sb, sb_cols, sig, scale_a, scale_b):
        launches.append(sig)  # the tl path under a tool: no cached plan kept
        return c

    winner = _Plan("w", None)
    winner.kernel = "gluon"

    def race(sig, a, b, c, b_nk, plans, steady, num_sms, scales=(), precise=0, gemm_tiles=True, extra=(),
             margin=None):
        races.append(sig)
        plans[sig] = winner
        return c

    class GD:
        KERNEL = "gluon_decode_kernel"
        gluon_decode_kernel = "gluon"
        expand = staticmethod(lambda M, N, K, num_sms, cands, elem: ((M, 256, 6, 1),))
        candidates = staticmethod(lambda elem: ())
        name = staticmethod(lambda cfg: f"decode {cfg}")
        tile_dict = staticmethod(lambda cfg: {"cfg": cfg})

    patched = {"gluon": False}
    monkeypatch.setattr(F8._WS, "GD", GD)
    monkeypatch.setattr(F8._launch, "pristine", lambda kernel: not patched.get(kernel, True))
    monkeypatch.setattr(F8._launch, "aligned", lambda *t: True)
    monkeypatch.setattr(F8._launch, "PINNED", set())
    _stub_decode_path(monkeypatch, decode, race, pristine=False)  # the tl autotuner is patched (config pinning)
    a, b, sa, sb = _meta_operands(1)
    F8.fp8_gemm(a, b, sa, sb)
    assert len(races) == 1 and len(launches) == 1
    F8.fp8_gemm(a, b, sa, sb)  # the steady state serves the Gluon winner though the tl autotuner is patched
    assert winner.launches == 1 and len(launches) == 1 and len(races) == 1
    monkeypatch.setattr(F8._launch, "PINNED", {"fp8_gemm_decode_kernel"})
    F8.fp8_gemm(a, b, sa, sb)  # a pinned decode config runs, not the raced plan
    assert winner.launches == 1 and len(launches) == 2
    monkeypatch.setattr(F8._launch, "PINNED", set())
    patched["gluon"] = True  # tritondbg ir: JITFunction.run patched, the Gluon kernel's launch path too
    F8.fp8_gemm(a, b, sa, sb)
    assert winner.launches == 1 and len(launches) == 3
