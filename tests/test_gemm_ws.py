"""gemm's race between the tl kernels and the warp-specialised Gluon kernel (kernels/_gemm_ws.py), on the CPU.

The race's launches are stand-ins here (``build`` returns a plan that writes chosen numbers; ``timer`` returns
chosen times); what is tested is the decision: who may enter, who drops out, who wins, what the call returns.
The Gluon kernel itself compiles for sm_90 in tests/test_bench_scripts.py and runs on the H200 in
tests/gpu/test_gemm_ws_gpu.py. fp8_gemm's race: tests/test_fp8_race.py; the stand-ins: tests/_race_stubs.py."""
import time

import pytest
import torch
from _race_stubs import (_REAL_KERNEL, _clean, _install, _names, _operands, _Plan, _right,  # noqa: F401
                         _steady, stub_launch)

from tritondbg.kernels import _gemm_ws as WS, _race as R
from tritondbg.kernels import gemm as GEMM

def test_the_fastest_right_candidate_wins_and_recomputes_the_first_output(monkeypatch):
    a, b, c_tl = _operands()
    n = _names()
    values = {n[0]: _right, n[1]: _right, n[2]: lambda a, b: torch.zeros(127, 256, dtype=torch.bfloat16),
              n[3]: RuntimeError("out of resources: shared memory")}
    built, timer = _install(monkeypatch, values, {n[0]: 9.0, n[1]: 7.0, n[2]: 1.0})
    plans = {}
    c = c_tl.clone()
    out = WS.race("sig", a, b, c, False, plans, _steady, 132, timer=timer)
    rec = R.DECISIONS["sig"]
    assert rec["pick"] == n[1] and plans["sig"] is built[n[1]]
    assert rec["ws"][n[2]] == "wrong result"  # the fastest, but wrong: never timed, never picked
    assert rec["ws"][n[3]].startswith("RuntimeError: out of resources")
    assert rec["ws"][n[0]] == 9.0 and rec["ws"][n[1]] == 7.0 and rec["tl"] == 10.0
    assert out is c and torch.equal(out, _right(a, b))
    assert built[n[1]].launches == 1 + R.ROUNDS + 1  # built (checked), timed once a round, the first call redone


def test_contenders_are_timed_in_rounds_of_rotated_order_and_their_median_counts(monkeypatch):
    a, b, c_tl = _operands()
    n = _names()
    values = dict.fromkeys(n, RuntimeError("x"))
    values[n[0]] = values[n[1]] = _right
    built, _ = _install(monkeypatch, values, {})
    seq = []
    rounds = {n[0]: iter([9.0, 1.0, 8.0]), n[1]: iter([7.5, 7.5, 7.5]), "tl": iter([10.0, 10.0, 30.0])}

    def timer(fn):
        if fn is _steady:
            name = "tl"
        else:
            before = {k: p.launches for k, p in built.items()}
            fn()
            (name,) = [k for k, p in built.items() if p.launches > before[k]]
        seq.append(name)
        return next(rounds[name])

    WS.race("sig", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer)
    assert seq == [n[0], n[1], "tl", n[1], "tl", n[0], "tl", n[0], n[1]]
    rec = R.DECISIONS["sig"]
    assert rec["ws"][n[0]] == 8.0 and rec["ws"][n[1]] == 7.5 and rec["tl"] == 10.0  # medians, not minima
    assert rec["pick"] == n[1]


def test_a_winner_that_writes_nothing_returns_nan_not_the_tl_numbers(monkeypatch):
    a, b, c_tl = _operands()
    n = _names()
    values = dict.fromkeys(n, RuntimeError("x"))
    values[n[0]] = _right
    built, timer = _install(monkeypatch, values, {n[0]: 1.0})
    real_build = WS.build

    def build(*args):
        plan = real_build(*args)
        plan.value = None  # right when checked, then writes nothing
        return plan

    monkeypatch.setattr(WS, "build", build)
    out = WS.race("sig", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer)
    assert R.DECISIONS["sig"]["pick"] == n[0]
    assert torch.isnan(out.float()).all()


def test_no_candidate_margin_faster_keeps_the_tl_path(monkeypatch):
    a, b, c_tl = _operands()
    n = _names()
    built, timer = _install(monkeypatch, dict.fromkeys(n, _right), dict.fromkeys(n, 9.9), tl_us=10.0)
    plans, c = {}, c_tl.clone()
    out = WS.race("sig", a, b, c, False, plans, _steady, 132, timer=timer)
    assert plans == {} and R.DECISIONS["sig"]["pick"] is None
    assert torch.equal(out, c_tl)  # untouched: the tl kernel's output


def _warm_timer(built: dict, times: dict, tl_us: float, calls: list):
    """The near-tie's timer: ``tl_us`` for the tl path, ``times[name]`` for a candidate; each call noted."""
    def timer(fn):
        if fn is _steady:
            calls.append("tl")
            return tl_us
        before = {n: p.launches for n, p in built.items()}
        fn()
        (name,) = [n for n, p in built.items() if p.launches > before[n]]
        calls.append(name)
        return times[name]
    return timer


@pytest.mark.parametrize("flushed, warm, picked", [
    (9.9, 5.7, True),     # 1% ahead flushed (under the 1.5% margin), 19% ahead warm: the candidate
    (9.9, 6.95, False),   # 1% ahead flushed, 0.7% warm: the tl kernel stays
    (10.0, 5.0, True),    # an exact tie flushed: the warm timing decides
    (10.1, 5.0, None),    # behind flushed: no second timing, the tl kernel stays
    (9.0, 9.0, "won"),    # 10% ahead flushed: won outright, no second timing
])
def test_a_near_tie_is_broken_with_the_l2_warm(monkeypatch, flushed, warm, picked):
    """Session 47-48 (H100): the fp8 decode race at 1x4096x4096 led by 0.7-6.9% with the L2 flushed against a
    1.5% margin, so the tl kernel served in some processes and the Gluon kernel in others (20% faster under graph
    replay, with the weight in the L2): the perf gate's row flipped between runs. A candidate no slower than the tl
    path but under the margin is timed again with the L2 warm, and wins if the margin faster there."""
    a, b, c_tl = _operands()
    n = _names()
    times = {**dict.fromkeys(n, 12.0), n[1]: flushed}
    built, timer = _install(monkeypatch, dict.fromkeys(n, _right), times, tl_us=10.0)
    calls, plans, c = [], {}, c_tl.clone()
    wt = _warm_timer(built, {**dict.fromkeys(n, 99.0), n[1]: warm}, 7.0, calls)
    WS.race("sig", a, b, c, False, plans, _steady, 132, timer=timer, warm_timer=wt)
    rec = R.DECISIONS["sig"]
    if picked is None or picked == "won":
        assert calls == [] and "warm" not in rec  # no near-tie: no second timing
        assert (rec["pick"] == n[1]) is (picked == "won") and "tie_break" not in rec
        return
    assert sorted(set(calls)) == sorted({"tl", n[1]}) and len(calls) == 2 * R.ROUNDS  # the best candidate only
    assert rec["warm"] == {"tl": 7.0, n[1]: warm}
    assert rec["ws"][n[1]] == flushed and rec["tl"] == 10.0  # the flushed figures stay the record's
    if picked:
        assert rec["pick"] == n[1] and rec["tie_break"] == "warm L2" and plans["sig"] is built[n[1]]
        assert torch.equal(c, _right(a, b))
    else:
        assert rec["pick"] is None and plans == {} and torch.equal(c, c_tl)
    from tritondbg.check.perf import race_note
    from tritondbg.profile.autotune import _warm_note

    note = race_note([rec])
    assert (f"{'it won' if picked else 'not won'} the near-tie's second timing with the L2 warm "
            f"({warm:.1f} us against the tl kernel's 7.0)") in note and "another process" not in note, note
    assert _warm_note(rec).endswith("the candidate wins" if picked else "the tl kernel stays"), _warm_note(rec)


def test_a_caller_timer_without_a_warm_timer_breaks_no_tie(monkeypatch):
    """Only the default timer brings the warm one (a caller's stand-in timer cannot time a warm L2)."""
    a, b, c_tl = _operands()
    n = _names()
    built, timer = _install(monkeypatch, dict.fromkeys(n, _right), {**dict.fromkeys(n, 12.0), n[1]: 9.9}, tl_us=10.0)
    WS.race("sig", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer)
    assert R.DECISIONS["sig"]["pick"] is None and "warm" not in R.DECISIONS["sig"]


@pytest.mark.parametrize("env, picked", [("0.005", True), ("", False), ("nonsense", False), ("1.5", False)])
def test_race_margin_from_the_environment(monkeypatch, env, picked):
    """TRITONDBG_RACE_MARGIN=0.005 lets a 1% lead win (gemm's GEMM_MARGIN, 1.5%, does not); unset, not a number or
    out of [0, 1): the race's own margin, recorded in the decision."""
    monkeypatch.setenv("TRITONDBG_RACE_MARGIN", env)
    a, b, c_tl = _operands()
    n = _names()
    built, timer = _install(monkeypatch, dict.fromkeys(n, _right), dict.fromkeys(n, 9.9), tl_us=10.0)
    plans = {}
    WS.race("sig", a, b, c_tl.clone(), False, plans, _steady, 132, timer=timer)
    assert (R.DECISIONS["sig"]["pick"] is not None) is picked and bool(plans) is picked
    assert R.DECISIONS["sig"]["margin"] == (0.005 if picked else WS.GEMM_MARGIN)


def test_a_race_the_tl_path_keeps_leaves_what_ran_as_it_was(monkeypatch):
    """Each candidate launch reports itself in ``_launch.SERVED`` (what tritondbg run / check / the perf gate list as
    the config that ran); after a race the tl path keeps, the entry is what it was before the race (absent, or an
    earlier call's), and after a race a candidate wins, it is the winner's."""
    a, b, c_tl = _operands()
    n = _names()
    built, timer = _install(monkeypatch, dict.fromkeys(n, _right), dict.fromkeys(n, 9.9), tl_us=10.0)
    real_call = _Plan.__call__

    def call(self, *args):
        WS._launch.SERVED["gluon_gemm_kernel"] = {"plan": self.name}
        return real_call(self, *args)

    monkeypatch.setattr(_Plan, "__call__", call)
    monkeypatch.setattr(WS._launch, "SERVED", {})
    WS.race("s1", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer)
    assert R.DECISIONS["s1"]["pick"] is None and WS._launch.SERVED == {}
    WS._launch.SERVED["gluon_gemm_kernel"] = {"plan": "an earlier call's"}
    WS.race("s2", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer)
    assert WS._launch.SERVED == {"gluon_gemm_kernel": {"plan": "an earlier call's"}}
    built2, timer2 = _install(monkeypatch, dict.fromkeys(n, _right), {**dict.fromkeys(n, 9.8), n[1]: 5.0})
    WS.race("s3", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer2)
    assert R.DECISIONS["s3"]["pick"] == n[1] and WS._launch.SERVED == {"gluon_gemm_kernel": {"plan": n[1]}}


def test_extra_candidates_of_another_kernel_race_beside_the_tiles_and_report_only_when_they_win(monkeypatch):
    """fp8 decode: the Gluon decode kernel's candidates (``extra``) race with the gemm tiles (or alone,
    ``gemm_tiles=False``); the record names each one's kernel; what ran (``SERVED``) is the winner's kernel only:
    a losing tile of the other kernel, timed during the race, leaves no entry behind."""
    a, b, c_tl = _operands()
    n = _names()
    built, timer = _install(monkeypatch, dict.fromkeys(n, _right), {**dict.fromkeys(n, 9.8), "dec": 5.0})
    real_call = _Plan.__call__

    def call(self, *args):
        kernel = "gluon_decode_kernel" if self.name == "dec" else "gluon_gemm_kernel"
        WS._launch.SERVED[kernel] = {"plan": self.name}
        return real_call(self, *args)

    def make(out):
        plan = built["dec"] = _Plan("dec", _right)
        plan(a, b, out)
        return plan

    monkeypatch.setattr(_Plan, "__call__", call)
    monkeypatch.setattr(WS._launch, "SERVED", {})
    plans = {}
    extra = (("dec", make, {"BLOCK_T": 8}, "gluon_decode_kernel"),)
    WS.race("s1", a, b, c_tl.clone(), False, plans, _steady, 132, timer=timer, extra=extra)
    rec = R.DECISIONS["s1"]
    tiles = {WS.config_name(cfg) for cfg in WS.expand(WS.candidates(127), 127, 256, 64, 132)}
    assert rec["pick"] == "dec" and plans["s1"] is built["dec"] and set(rec["ws"]) == {*tiles, "dec"}
    assert rec["tiles"]["dec"] == {"path": "gluon_decode_kernel", "BLOCK_T": 8} and "path" not in rec["tiles"][n[0]]
    assert WS._launch.SERVED == {"gluon_decode_kernel": {"plan": "dec"}}  # the gemm tiles' timing launches: gone
    built.clear()
    WS.race("s2", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer, extra=extra, gemm_tiles=False)
    assert set(R.DECISIONS["s2"]["ws"]) == {"dec"} and set(built) == {"dec"}
    WS.race("s3", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer, extra=extra, gemm_tiles=False, margin=0.6)
    assert R.DECISIONS["s3"]["pick"] is None and R.DECISIONS["s3"]["margin"] == 0.6  # a 50% lead, 60% asked
    assert R.DECISIONS["s2"]["kernel"] == "gluon_decode_kernel"  # a race of decode candidates only names that kernel
    c = c_tl.clone()
    assert WS.race("s4", a, b, c, False, {}, _steady, 132, timer=timer, gemm_tiles=False) is c  # nothing to race
    assert "s4" not in R.DECISIONS


def test_a_signature_races_once(monkeypatch):
    a, b, c_tl = _operands()
    n = _names()
    built, timer = _install(monkeypatch, dict.fromkeys(n, _right), dict.fromkeys(n, 5.0))
    WS.race("sig", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer)
    monkeypatch.setattr(WS, "build", lambda *a: pytest.fail("raced twice"))
    WS.race("sig", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer)
    R._RACING.add("other")  # a race under way for this signature (the steady call re-entering): no nested race
    WS.race("other", a, b, c_tl.clone(), False, {}, _steady, 132, timer=timer)
    assert "other" not in R.DECISIONS


def test_pick_and_agrees():
    assert WS.pick(10.0, {"x": 9.8, "y": "wrong result"}) is None  # 2% faster: under MARGIN
    assert WS.pick(10.0, {"x": 9.8}, margin=0.015) == "x"  # a race that asks for a smaller lead (fp8 decode)
    assert WS.pick(10.0, {"x": 9.0, "y": 8.0}) == "y"
    assert WS.pick(None, {"x": 1.0}) is None and WS.pick(10.0, {}) is None
    ref = torch.tensor([[100.0, -3.0], [0.5, 2.0]]).to(torch.bfloat16)
    assert WS.agrees(ref.float() * (1 + 2 ** -9), ref)  # within the rounding of bf16
    assert not WS.agrees(torch.tensor([[100.0, -3.0], [0.5, float("nan")]]), ref)
    assert not WS.agrees(torch.zeros(2, 2), ref)


def test_eligible_only_hopper_cuda_16bit_row_major_a_up_to_ws_max_m(monkeypatch):
    if WS.GK is None:
        pytest.skip("this Triton has no Gluon Hopper API")
    monkeypatch.setattr(WS, "_on_hopper", lambda a: True)
    monkeypatch.setattr(WS._launch, "pristine", lambda k: True)
    a, b, _ = _operands(M=127, N=256, K=64)
    assert WS.eligible(a, b, None) is False  # row-major b
    w = torch.empty(256, 64, dtype=torch.bfloat16)
    assert WS.eligible(a, w.t(), None) is True  # K-major b (an nn.Linear weight)
    assert WS.eligible(a, b, "gelu") is None
    assert WS.eligible(a[:32], b, None) is False and WS.eligible(a[:1], b, None) is False  # decode candidates race
    assert WS.eligible(a[:0], b, None) is None
    assert WS.eligible(torch.zeros(WS.WS_MAX_M + 1, 64, dtype=torch.bfloat16), b, None) is None
    assert WS.eligible(a.t().contiguous().t(), b, None) is None  # column-major a
    assert WS.eligible(a[:, :60], b[:60], None) is None  # K % 8
    assert WS.eligible(a.float(), b.float(), None) is None
    monkeypatch.setattr(WS._launch, "pristine", lambda k: False)  # tritondbg ir, config pinning
    assert WS.eligible(a, b, None) is None
    monkeypatch.setattr(WS._launch, "pristine", lambda k: True)
    monkeypatch.setattr(WS, "_on_hopper", lambda a: False)
    assert WS.eligible(a, b, None) is None
    monkeypatch.undo()
    assert WS.eligible(a, b, None) is None  # CPU tensors


def test_gemm_races_once_per_signature_and_serves_the_winner(monkeypatch):
    """gemm's wiring: the first call of an eligible signature runs the tl path, then the race (whose steady call
    is the tl path's cached one); later calls take the race's winner; gemm_tiled never races."""
    a, b, want = _operands(M=64, N=32, K=32)
    monkeypatch.setattr(WS, "eligible", lambda a, b, act: False)
    monkeypatch.setattr(GEMM, "_num_sms", lambda device: 4)
    winner = _Plan("w", lambda a, b: torch.full((64, 32), 7.0, dtype=torch.bfloat16))
    winner.kernel = object()
    races = []

    def race(sig, a_, b_, c, b_nk, plans, steady, num_sms, gemm_tiles=True, extra=()):
        assert gemm_tiles is (a_.shape[0] > WS.WS_MIN_M) and extra == ("decode", a_.shape[0], b_nk, num_sms)
        races.append(sig)
        plans[sig] = winner
        return c

    monkeypatch.setattr(WS, "race", race)
    monkeypatch.setattr(WS, "decode_candidates", lambda a, b, b_nk, num_sms: ("decode", a.shape[0], b_nk, num_sms))
    monkeypatch.setattr(GEMM._launch, "pristine", lambda k: True)
    monkeypatch.setattr(GEMM._launch, "aligned", lambda *t: True)
    monkeypatch.setattr(GEMM, "_PLANS", {})
    monkeypatch.setattr(GEMM._TMA, "plans", GEMM._PLANS)
    GEMM._gemm(a, b, None, False, True)  # the tl path (the interpreter on CPU tensors), then the race
    c2 = GEMM._gemm(a, b, None, False, True)
    assert len(races) == 1 and winner.launches == 1 and bool((c2 == 7.0).all())
    assert GEMM._sig(a, b, None, False, True) == races[0]
    GEMM._gemm(a[:17], b, None, False, True)  # M <= WS_MIN_M: the decode candidates only (the race asserts it)
    assert len(races) == 2
    monkeypatch.setattr(WS, "race", lambda *x: pytest.fail("gemm_tiled raced"))
    GEMM._gemm(a, b, None, False, False)


def test_decode_candidates_up_to_decode_max_m_16bit_without_scales_fp8_with(monkeypatch):
    """The Gluon decode kernel's candidates (kernels/_gluon_decode.py) for M <= DECODE_MAX_M: the candidate list
    for the operands' element size, each built over the call's b layout (w_kmajor) with the call's scales (16-bit:
    none); none above DECODE_MAX_M, without the kernel, or with its launch path patched."""
    built = []

    class GD:
        KERNEL = "gluon_decode_kernel"
        gluon_decode_kernel = "gluon"
        candidates = staticmethod(lambda elem: f"cands{elem}")
        name = staticmethod(lambda cfg: f"decode {cfg}")
        tile_dict = staticmethod(lambda cfg: {"cfg": cfg})

        @staticmethod
        def expand(M, N, K, num_sms, cands, elem):
            return ((M, N, K, num_sms, cands, elem),)

        @staticmethod
        def build(cfg, a, b, out, *scales, w_kmajor):
            built.append((cfg, scales, w_kmajor))
            return "plan"

    monkeypatch.setattr(WS, "GD", GD)
    monkeypatch.setattr(WS._launch, "pristine", lambda k: k == "gluon")
    a, b = torch.empty(17, 64, dtype=torch.bfloat16), torch.empty(64, 48, dtype=torch.bfloat16)
    (name, build, tile, kernel), = WS.decode_candidates(a, b, False, 132)
    assert name == "decode (17, 48, 64, 132, 'cands2', 2)" and kernel == "gluon_decode_kernel"
    assert build("out") == "plan" and built[-1] == ((17, 48, 64, 132, "cands2", 2), (), False)
    f8 = torch.empty(64, 64, dtype=torch.float8_e4m3fn)
    (_, build, _, _), = WS.decode_candidates(f8, f8.t(), True, 132, ("sa", "sb"))
    build("out")
    assert built[-1] == ((64, 64, 64, 132, "cands1", 1), ("sa", "sb"), True)
    assert WS.decode_candidates(torch.empty(WS.DECODE_MAX_M + 1, 64, dtype=torch.bfloat16), b, False, 132) == ()
    monkeypatch.setattr(WS._launch, "pristine", lambda k: False)  # tritondbg ir: the Gluon launch path patched
    assert WS.decode_candidates(a, b, False, 132) == ()
    monkeypatch.setattr(WS._launch, "pristine", lambda k: True)
    monkeypatch.setattr(WS, "GD", None)
    assert WS.decode_candidates(a, b, False, 132) == ()


def test_build_binds_every_parameter_and_plans_rebase_descriptors(stub_launch):
    """WS.build's launch passes the kernel's parameters after the descriptors in order (num_warps as the launch
    option the binder fills it from), and the plan relaunches over descriptors rebased on each call's tensors,
    holding no tensor itself."""
    real, calls = _REAL_KERNEL, stub_launch
    a, b, _ = _operands(M=127, N=256, K=64)
    w = torch.empty(256, 64, dtype=torch.bfloat16)
    c = torch.empty(127, 256, dtype=torch.bfloat16)
    plan = WS.build((64, 128, 64, 8, 4), a, w.t(), c, True, 132)
    (grid, args, kwargs), = calls
    assert grid == (min(132, 2 * 2),) and kwargs == {"num_warps": 4, "maxnreg": WS.GK.maxnreg(4)}
    assert len(args) + 1 == len(real.arg_names)  # + num_warps, from the launch option
    bound = dict(zip(real.arg_names, args))
    assert plan.launcher.tail == tuple(args[3:]) + (4,)  # every parameter after the descriptors, then num_warps
    assert bound["B_NK"] is True and bound["SPLIT_K"] == 1 and bound["ws_ptr"] is None and bound["cnt_ptr"] is None
    assert [list(d.block_shape) for d in args[:3]] == [[64, 64], [128, 64], [64, 128]]
    assert not any(isinstance(v, torch.Tensor) for _, f in plan.templates for v in f.values())
    a2, w2, c2 = a.clone(), w.clone(), torch.empty_like(c)
    plan(a2, w2.t(), c2)
    (tensors, descs, trailing), = plan.launcher.runs
    assert tensors == () and trailing == ()
    assert [d.base.data_ptr() for d in descs] == [a2.data_ptr(), w2.data_ptr(), c2.data_ptr()]
    assert [list(d.shape) for d in descs] == [[127, 64], [256, 64], [127, 256]]


def _built(cfg, M, N, K, calls):
    """``cfg`` built (stubbed launch) over bf16 a (M, K), b = w.t() of w (N, K), c (M, N): the operands, the plan,
    the launch's grid and its arguments by name."""
    a = torch.empty(M, K, dtype=torch.bfloat16)
    w = torch.empty(N, K, dtype=torch.bfloat16)
    c = torch.empty(M, N, dtype=torch.bfloat16)
    plan = WS.build(cfg, a, w.t(), c, True, 132)
    (grid, args, _), = calls
    return (a, w, c), plan, grid, dict(zip(_REAL_KERNEL.arg_names, args))


def test_split_k_candidates_are_sized_per_shape_and_launch_with_the_streams_buffers(stub_launch):
    """A split-K candidate gets tiles x splits within one wave of SMs (dropped where that is one split: it would
    be its unsplit twin); its launch compiles over the workspace and counters (tensors, for the specialisation)
    and its launcher gets them as a per-stream scratch after the (None) scales, not baked into its tail."""
    calls = stub_launch
    (sk,) = [c for c in WS.candidates(127) if len(c) > 6]
    assert WS.expand((sk,), 127, 4096, 11008, 132) == (sk[:6] + (2,),)  # 64 tiles of 128x64: 2 splits
    assert WS.expand((sk,), 127, 11008, 4096, 132) == ()  # 172 tiles: no split
    assert WS.expand((sk,), 127, 4096, 64, 132) == ()  # one k step: nothing to split
    tiles_only = tuple(c for c in WS.candidates(1024) if len(c) < 7)
    assert WS.expand(WS.candidates(1024), 1024, 4096, 4096, 132) == tiles_only  # 256 tiles: no tail to split
    cfg = sk[:6] + (2,)
    assert WS.config_name(cfg).endswith(" split-K 2") and WS.tile_dict(cfg)["SPLIT_K"] == 2
    (a, w, c), plan, grid, bound = _built(cfg, 127, 4096, 11008, calls)
    assert grid == (128,) and bound["SPLIT_K"] == 2 and bound["PINGPONG"] is False
    ws, cnt = bound["ws_ptr"], bound["cnt_ptr"]
    assert ws.dtype == torch.float32 and ws.numel() >= 64 * 2 * 128 * 64
    assert cnt.dtype == torch.int32 and cnt.numel() >= 64 and not bool(cnt.any())
    assert plan.launcher.tail == (8, 8, True, 0, False, 2, 0, 4)  # GROUP_M .. SPLIT_K, TAIL, num_warps: no buffers
    assert tuple(plan.launcher.scratch()) == (ws, cnt)  # this (CPU) stream's set, the one the first launch used
    plan(a, w.t(), c)
    (_, _, trailing), = plan.launcher.runs
    assert trailing == (None, None)  # the 16-bit scales; the launcher puts the stream's scratch after them
    with pytest.raises(ValueError, match="ping-pong"):
        WS.build((128, 64, 64, 8, 4, True, 2), a, w.t(), c, True, 132)


def test_split_tail_candidates_race_where_the_last_round_is_at_most_half_full(stub_launch):
    """M > 128: the split-tail candidate (the last partial round's tiles split along K over the programs it leaves
    idle) races where that round is at most half full, and its launch binds TAIL = the splits, a full grid of
    programs and a per-stream workspace of tail tiles x splits (the tiles of whole rounds need none)."""
    calls = stub_launch
    (st,) = [c for c in WS.candidates(2048) if len(c) > 6]
    assert st[6] == WS.TAIL and WS.candidates(256).count(st) == 1
    assert WS.expand((st,), 2048, 11008, 4096, 132) == (st,)  # 16 x 86 = 1376 tiles = 10 x 132 + 56: 2 splits
    assert WS.expand((st,), 1024, 14336, 4096, 132) == ()  # 896 = 6 x 132 + 104: over half full, no split
    assert WS.expand((st,), 1024, 4096, 4096, 132) == ()  # 256 = 132 + 124
    assert WS.expand((st,), 256, 4096, 4096, 132) == ()  # 64 tiles, no whole round: no tail (split-K's case)
    assert WS.config_name(st).endswith(" s5 w8 split tail") and WS.tile_dict(st)["SPLIT_TAIL"] is True
    (a, w, c), plan, grid, bound = _built(st, 2048, 11008, 4096, calls)
    assert grid == (132,) and bound["TAIL"] == 2 and bound["SPLIT_K"] == 1
    ws, cnt = bound["ws_ptr"], bound["cnt_ptr"]
    assert ws.numel() >= 56 * 2 * 128 * 128 and cnt.numel() >= 56 and not bool(cnt.any())
    assert tuple(plan.launcher.scratch()) == (ws, cnt)
    with pytest.raises(ValueError, match="no tail to split"):
        WS.build(st, a[:1024], w[:4096].t(), c[:1024, :4096], True, 132)


def test_pinning_reports_what_the_race_served_and_blocks_the_race_while_a_tl_config_is_pinned(monkeypatch):
    """tritondbg run / check (Pinning) report the Gluon kernel's config beside the autotuners' when it served a
    call (source "raced"); a tl config pinned by --config keeps gemm on the tl kernels (no race, no cached
    Gluon plan) and the pin is forgotten after the run."""
    from tritondbg.pinning import Pinning

    from tritondbg.kernels import _launch

    a, b, _ = _operands()
    plan = WS.WSPlan()
    plan.report = {"BLOCK_M": 64, "num_warps": 4}
    plan.launcher = type("L", (), {"with_templates": lambda self, *a: None})()
    plan.templates = ()
    _launch.SERVED["gluon_gemm_kernel"] = {"stale": True}  # from before this run: not reported
    pinning = Pinning({}, pin_all=False)
    with pinning.active():
        assert _launch.SERVED == {}
        plan(a, b, None)
    assert pinning.used["gluon_gemm_kernel"] == {"BLOCK_M": 64, "num_warps": 4}
    assert pinning.sources["gluon_gemm_kernel"] == "raced"

    monkeypatch.setattr(WS, "_on_hopper", lambda a: True)
    monkeypatch.setattr(WS._launch, "pristine", lambda k: True)
    if WS.GK is not None:
        assert WS.eligible(a, b, None) is False
    monkeypatch.setattr(_launch, "PINNED", {"gemm_tma_kernel"})
    assert WS.eligible(a, b, None) is None
    sig = GEMM._sig(a, b, None, GEMM.USE_SPLITK, True)
    monkeypatch.setattr(GEMM, "_PLANS", {sig: plan})
    monkeypatch.setattr(GEMM._TMA, "plans", GEMM._PLANS)
    monkeypatch.setattr(GEMM._launch, "aligned", lambda *t: True)
    full = []
    monkeypatch.setattr(GEMM, "_check_args", lambda *x: full.append(1) or pytest.skip("full path reached"))
    with pytest.raises(pytest.skip.Exception):
        GEMM.gemm(a, b)  # the cached Gluon plan is passed over: the full (tl) path
    assert full == [1]


def test_a_pin_reaches_the_bundled_launch_module_during_the_run_only(monkeypatch):
    """Pinning a tl gemm config (--config) puts its name in _launch.PINNED while the run lasts."""
    from triton.runtime.autotuner import Autotuner

    from tritondbg.pinning import Pinning
    from tritondbg.kernels import _launch
    from tritondbg.kernels import gemm as G

    tuner = G.gemm_tma_kernel
    pinning = Pinning({id(tuner): (tuner.configs[0], "--config")}, pin_all=False)
    monkeypatch.setattr(Autotuner, "run", lambda self, *args, **kwargs: None)
    with pinning.active():
        try:
            tuner.run(*([None] * len(tuner.arg_names)))  # the pin's bookkeeping comes first
        except Exception:  # noqa: BLE001 - pruning on these stand-in arguments
            pass
        assert "gemm_tma_kernel" in _launch.PINNED
    assert _launch.PINNED == set()


@pytest.mark.parametrize("value,on", [("0", False), ("off", False), ("1", True), ("", True)])
def test_the_race_can_be_turned_off(monkeypatch, value, on):
    if WS.GK is None:
        pytest.skip("this Triton has no Gluon Hopper API")
    monkeypatch.setattr(WS, "_on_hopper", lambda a: True)
    monkeypatch.setattr(WS._launch, "pristine", lambda k: True)
    monkeypatch.setenv("TRITONDBG_GLUON_GEMM", value)
    a, b, _ = _operands()
    assert (WS.eligible(a, b, None) is not None) is on


def test_a_first_call_with_non_finite_output_does_not_decide_the_signature(monkeypatch):
    """Inf or NaN in the first call's output leaves nothing to check a candidate against: no race, no record;
    the next call of the signature races."""
    a, b, c_tl = _operands()
    n = _names()
    built, timer = _install(monkeypatch, dict.fromkeys(n, _right), dict.fromkeys(n, 5.0))
    bad = c_tl.clone()
    bad[3, 7] = float("inf")
    assert WS.race("sig", a, b, bad, False, {}, _steady, 132, timer=timer) is bad
    assert "sig" not in R.DECISIONS and built == {}
    plans = {}
    WS.race("sig", a, b, c_tl.clone(), False, plans, _steady, 132, timer=timer)
    assert R.DECISIONS["sig"]["pick"] is not None and "sig" in plans


# ---------------------------------------------------------------- fp8_gemm (M > 64): the same race
def test_the_race_timer_sleeps_the_stream_past_the_calls_host_part(monkeypatch):
    """``_time`` (GPU time only): before each timed call the L2 is flushed and the stream sleeps for more than twice
    the call's host time, then start event, the call, end event; the median of the events' times is returned.
    The GPU is faked here: the order of what reaches the stream and the sleep's length are what is checked."""
    import types

    import triton

    log = []

    class Event:
        def __init__(self, enable_timing=False):
            self.n = len([x for x in log if x[0] == "event"])

        def record(self):
            log.append(("event", self))

        def elapsed_time(self, end):
            return 0.010 + 0.001 * (self.n % 5)  # ms

    class Driver:
        def get_empty_cache_for_benchmark(self):
            return "cache"

        def clear_cache(self, cache):
            log.append(("flush", cache))

    monkeypatch.setattr(triton.runtime, "driver", types.SimpleNamespace(active=Driver()))
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: log.append(("sleep", cycles)))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)

    def fn():  # ~2 ms of host work before its launch
        t = time.perf_counter()
        while time.perf_counter() - t < 2e-3:
            pass
        log.append(("fn", None))

    us = R._time(fn)
    kinds = [k for k, _ in log]
    assert kinds[:2] == ["fn", "fn"]  # warm-up, then the host-time measurement
    reps = kinds[2:]
    assert len(reps) % 5 == 0 and 4 <= len(reps) // 5 <= 101
    assert all(reps[i:i + 5] == ["flush", "sleep", "event", "fn", "event"] for i in range(0, len(reps), 5))
    sleeps = [v for k, v in log if k == "sleep"]
    assert min(sleeps) >= 2 * 2000 * R.SLEEP_CYCLES_PER_US  # > twice the ~2 ms host part, in cycles
    assert 10.0 <= us <= 14.0  # the median of the events' times, in us


def test_gemm_imports_when_triton_was_built_interpreted_and_the_interpreter_is_off_now():
    """A process that imported triton.language under TRITON_INTERPRET=1 and then turned the interpreter off makes
    Gluon's import assert (its tl functions are interpreted); gemm and fp8_gemm still import, without the race."""
    import os
    import subprocess
    import sys

    code = ("import os, triton.language\n"
            "os.environ.pop('TRITON_INTERPRET')\n"
            "from tritondbg.kernels import gemm, fp8_gemm, _gemm_ws\n"
            "print('GK', _gemm_ws.GK)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "TRITON_INTERPRET": "1"})
    assert p.returncode == 0, p.stderr[-2000:]
    assert "GK " in p.stdout
