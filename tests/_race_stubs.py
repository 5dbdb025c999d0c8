"""Stand-ins shared by the race tests (tests/test_gemm_ws.py, tests/test_fp8_race.py): operands, plans that write
chosen numbers and count their launches, a timer that returns chosen times, and the Gluon kernel's launch recorded
instead of run (``stub_launch``). The fixtures here are imported by the test modules that use them."""
import pytest
import torch

from tritondbg.kernels import _gemm_ws as WS, _race as R

_REAL_KERNEL = WS.GK.gluon_gemm_kernel if WS.GK is not None else None  # before any test stubs it
F8_DTYPE = torch.float8_e4m3fn


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.setattr(R, "DECISIONS", {})
    monkeypatch.setattr(R, "_RACING", set())


def _operands(M=127, N=256, K=64):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(M, K, generator=g).to(torch.bfloat16)
    b = torch.randn(K, N, generator=g).to(torch.bfloat16)
    return a, b, (a.float() @ b.float()).to(torch.bfloat16)


class _Plan:
    """A stand-in plan: writes ``value(a, b)`` into c (or nothing) and counts its launches."""

    def __init__(self, name, value):
        self.name, self.value, self.launches = name, value, 0

    def __call__(self, a, b, c, *scales):
        self.launches += 1
        self.scales = scales
        if self.value is not None:
            c.copy_(self.value(a, b))


def _steady():
    """The tl path's steady-state call (the timer tells it apart by identity)."""


def _install(monkeypatch, values: dict, times: dict, tl_us=10.0):
    """build(cfg) -> the plan of its name (values: name -> value function, or an exception to raise); the timer
    gives ``tl_us`` for ``_steady`` and ``times[name]`` for a candidate's call."""
    built = {}

    def build(cfg, a, b, c, b_nk, num_sms, scales=(), precise=0):
        name = WS.config_name(cfg)
        v = values[name]
        if isinstance(v, Exception):
            raise v
        plan = built[name] = _Plan(name, v)
        plan.built_with = (b_nk, scales, precise)
        plan(a, b, c, *scales)
        return plan

    def timer(fn):
        if fn is _steady:
            return tl_us
        before = {n: p.launches for n, p in built.items()}
        fn()
        (name,) = [n for n, p in built.items() if p.launches > before[n]]
        return times[name]

    monkeypatch.setattr(WS, "build", build)
    return built, timer


def _names(M=127, fp8=False):
    return [WS.config_name(c) for c in WS.candidates(M, fp8)]


def _right(a, b):
    return (a.float() @ b.float()).to(torch.bfloat16)


@pytest.fixture
def stub_launch(monkeypatch):
    """WS.build's kernel launch and Launcher recorded instead of run: returns the list of launches
    (grid, args, kwargs); each plan's launcher records its runs (tensors, rebased descriptors, trailing)."""
    if WS.GK is None:
        pytest.skip("this Triton has no Gluon Hopper API")
    calls = []

    class Kernel:
        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                calls.append((grid, args, kwargs))
                return "compiled"
            return launch

    class Launcher:
        def __init__(self, compiled, grid, tail, kernel, scratch=None):
            self.compiled, self.grid, self.tail, self.kernel, self.runs = compiled, grid, tail, kernel, []
            self.scratch = scratch

        def with_templates(self, tensors, templates, bases, trailing=()):
            self.runs.append((tensors, tuple(map(WS._launch.rebased, templates, bases)), trailing))

    monkeypatch.setattr(WS.GK, "gluon_gemm_kernel", Kernel())
    monkeypatch.setattr(WS._launch, "Launcher", Launcher)
    return calls
