"""Tensors on another GPU than the current one (kernels/_launch.py ``device_guard``, ``Launcher.device``).

Triton launches on the current device; torch ops, and the bundled wrappers, on their tensors' device. There is one
device here (none), so the current device is a stand-in the test owns: ``torch._C._cuda_getDevice`` reads it and
``torch.cuda.device`` sets it. The wrappers run for real under the interpreter, with ``device_guard`` answering as
if their tensors were on GPU 1 while GPU 0 is current; every kernel launch must happen while GPU 1 is current, and
the result must be the reference's (the re-entered call got every argument). Checked on 2 H200s by
tests/gpu/test_multi_gpu.py."""
import pytest
import torch
import triton
from _launch_fakes import fake_compiled
from triton.runtime.interpreter import InterpretedFunction

from tritondbg.kernels import _launch
from tritondbg.kernels import add as ADD
from tritondbg.kernels import attention as A
from tritondbg.kernels import fp8_gemm as F8
from tritondbg.kernels import gemm as G
from tritondbg.kernels import layernorm as LN
from tritondbg.kernels import softmax as SM

pytestmark = pytest.mark.interpreter


@pytest.fixture
def gpus(monkeypatch):
    """The current device (0 at the start) and a ``torch.cuda.device`` that switches it and switches back."""
    state = {"current": 0, "switches": []}

    class Device:
        def __init__(self, idx):
            self.idx = idx

        def __enter__(self):
            self.prev, state["current"] = state["current"], self.idx
            state["switches"].append(self.idx)

        def __exit__(self, *exc):
            state["current"] = self.prev

    monkeypatch.setattr(_launch, "_TORCH_STREAMS", True)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: state["current"], raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda dev: 1000 + dev, raising=False)
    monkeypatch.setattr(torch.cuda, "device", Device)
    return state


class _CudaTensor:
    def __init__(self, idx):
        self.device = torch.device("cuda", idx)


def test_device_guard_switches_only_to_another_gpu(gpus):
    assert _launch.device_guard(torch.zeros(2)) is None  # CPU
    assert _launch.device_guard(_CudaTensor(0)) is None  # the current one
    assert _launch.device_guard("not a tensor") is None
    guard = _launch.device_guard(_CudaTensor(1))
    with guard:
        assert gpus["current"] == 1
    assert gpus["current"] == 0


def test_a_launcher_launches_on_the_device_it_was_loaded_on(gpus):
    calls = []  # (current device, stream) of each launch through the C entry; (current device, "runner")
    compiled = fake_compiled(lambda args: calls.append((gpus["current"], args[3])),
                             lambda grid, args: calls.append((gpus["current"], "runner")))

    gpus["current"] = 1  # the first call (the full path, under its wrapper's guard) ran on GPU 1
    launcher = _launch.Launcher(compiled, (5,), ())
    assert launcher.device == 1
    t = torch.empty(2, device="meta")
    launcher(t)
    gpus["current"] = 0  # a later call while GPU 0 is current: GPU 1, its current stream, then back to 0
    launcher(t)
    launcher.with_descriptors((t,), ())
    assert calls == [(1, 1001)] * 3 and gpus["current"] == 0 and gpus["switches"] == [1, 1]
    hook = lambda *a: None  # noqa: E731
    triton.knobs.runtime.launch_enter_hook.add(hook)
    try:
        launcher(t)  # through CompiledKernel[grid] (a hook is installed): on GPU 1 too
    finally:
        triton.knobs.runtime.launch_enter_hook.remove(hook)
    assert calls[-1] == (1, "runner") and gpus["current"] == 0


def _fp8(*shape):
    return (torch.randn(*shape) / 2).to(torch.float8_e4m3fn)


_H = torch.float16
CALLS = {
    "add": lambda: ((torch.randn(1000), torch.randn(1000)), {}, ADD.add, ADD.reference),
    "softmax": lambda: ((torch.randn(5, 300, dtype=_H),), {}, SM.softmax, SM.reference),
    "layernorm": lambda: ((torch.randn(5, 300, dtype=_H), torch.randn(300, dtype=_H), torch.randn(300, dtype=_H),
                           1e-2), {}, LN.layernorm, LN.reference),
    "gemm": lambda: ((torch.randn(33, 40, dtype=_H), torch.randn(40, 24, dtype=_H), "gelu"), {}, G.gemm,
                     G.reference),
    "fp8_gemm": lambda: ((_fp8(5, 64), _fp8(64, 32), torch.tensor(0.5), torch.tensor(2.0)), {}, F8.fp8_gemm,
                         F8.reference),
    "attention": lambda: (tuple(torch.randn(1, 2, 17, 32, dtype=_H) for _ in range(3)),
                          dict(causal=True, sm_scale=0.3), A.attention, A.reference),
    "attention_decode": lambda: ((torch.randn(2, 4, 32, dtype=_H), torch.randn(2, 2, 40, 32, dtype=_H),
                                  torch.randn(2, 2, 40, 32, dtype=_H), torch.tensor([33, 7])),
                                 dict(sm_scale=0.3), A.attention_decode, A.reference_decode),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_each_wrapper_launches_on_its_tensors_device(name, gpus, monkeypatch):
    """The wrapper's first call re-enters itself under the guard: each of its launches runs with GPU 1 current,
    and its result is the reference's (every argument made it through the re-entry)."""
    launched = []
    run = InterpretedFunction.run

    def recording_run(self, *args, **kwargs):
        launched.append(gpus["current"])
        return run(self, *args, **kwargs)

    monkeypatch.setattr(InterpretedFunction, "run", recording_run)
    monkeypatch.setattr(_launch, "device_guard",
                        lambda t: None if gpus["current"] == 1 else torch.cuda.device(1))
    torch.manual_seed(0)
    args, kwargs, fn, ref = CALLS[name]()
    out = fn(*args, **kwargs)
    assert launched and set(launched) == {1}, launched
    assert gpus["switches"] == [1] and gpus["current"] == 0
    want = ref(*args, **kwargs)
    torch.testing.assert_close(out.float(), want.float(), atol=2e-2, rtol=2e-2)
