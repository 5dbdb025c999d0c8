"""Per-stream scratch of the one-launch split merges (kernels/_scratch.py) and how the cached launchers pass it
(kernels/_launch.py ``Launcher``): two launches running at once on two streams must never share a workspace or
an arrival counter. No GPU here: streams are stood in for by the value ``Scratch.stream`` returns, the C launch
entry by a recorder (as tests/test_launch_host.py does)."""
import pytest
import torch
import triton
from _launch_fakes import fake_compiled

from tritondbg.kernels import _launch, _scratch
from tritondbg.kernels import _splitk as SK


@pytest.fixture
def streams(monkeypatch):
    """``current[0]`` is the raw handle of the current stream, as every Scratch and the launchers' direct entry
    (Triton 3.6's C launcher, stood in for) see it."""
    current = [0]
    monkeypatch.setattr(_scratch, "_BUFFERS", {})
    monkeypatch.setattr(_scratch.Scratch, "stream", lambda self: current[0])
    monkeypatch.setattr(_launch, "_TORCH_STREAMS", True)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda dev: current[0], raising=False)
    return current


def test_each_stream_gets_its_own_zeroed_set_shared_by_every_path_on_that_stream(streams):
    specs = (("ws", 1000, torch.float32), ("cnt", 5, torch.int32))
    one, two = _scratch.Scratch("cpu", *specs), _scratch.Scratch("cpu", *specs)
    ws0, cnt0 = one()
    assert ws0.numel() == 1024 and cnt0.numel() == 8 and cnt0.dtype == torch.int32 and not bool(cnt0.any())
    assert all(x is y for x, y in zip(two(), (ws0, cnt0)))  # one stream's order: paths share its set
    streams[0] = 77
    ws1, cnt1 = one()
    assert ws1.data_ptr() != ws0.data_ptr() and cnt1.data_ptr() != cnt0.data_ptr()
    assert one.ptrs(77) == (ws1.data_ptr(), cnt1.data_ptr())
    streams[0] = 0
    assert one()[0] is ws0 and one.ptrs(0) == (ws0.data_ptr(), cnt0.data_ptr())  # the first stream: its set again
    assert two.ptrs(5)[0] not in (ws0.data_ptr(), ws1.data_ptr())  # a launcher's stream it has not seen: a new set
    assert len(_scratch.buffers("cnt")) == 3


def _direct_compiled(calls):
    return fake_compiled(lambda args: calls.append(("direct", args[13:])),  # the kernel's own arguments
                         lambda grid, args: calls.append(("runner", args)))


def test_launcher_passes_the_launching_streams_scratch_where_the_kernel_takes_it(streams, monkeypatch):
    """Direct C entry: integer pointers of the launching stream's set, after the call's tensors; with a launch
    hook installed (the runner, as a profiler needs it): the tensors themselves, same place."""
    calls = []
    scratch = _scratch.Scratch("cpu", ("ws", 64, torch.float32), ("cnt", 4, torch.int32))
    launcher = _launch.Launcher(_direct_compiled(calls), (5,), (7, "C"), scratch=scratch)
    a, b = torch.empty(2), torch.empty(3)
    launcher(a, b)
    streams[0] = 5
    launcher(a, b)
    (ws0, cnt0), (ws1, cnt1) = [_scratch.Scratch("cpu", *scratch.specs)() for streams[0] in (0, 5)]
    assert calls == [("direct", (a.data_ptr(), b.data_ptr(), ws0.data_ptr(), cnt0.data_ptr(), 7, "C")),
                     ("direct", (a.data_ptr(), b.data_ptr(), ws1.data_ptr(), cnt1.data_ptr(), 7, "C"))]
    assert ws0.data_ptr() != ws1.data_ptr()
    hook = lambda *args: None  # noqa: E731
    triton.knobs.runtime.launch_enter_hook.add(hook)
    try:
        launcher(a, b)
    finally:
        triton.knobs.runtime.launch_enter_hook.remove(hook)
    (_, args), = calls[2:]
    assert args[0] is a and args[1] is b and args[2] is ws1 and args[3] is cnt1 and args[4:] == (7, "C")


def test_descriptor_launch_puts_the_scratch_after_trailing_operands_none_included(streams, monkeypatch):
    """The Gluon gemm's split tiles: (descriptors, scale_a, scale_b, ws, cnt, ...); a 16-bit gemm passes its two
    scales as None (the kernel was specialised without them), the stream's workspace and counters follow."""
    calls = []
    scratch = _scratch.Scratch("cpu", ("gluon_ws", 64, torch.float32), ("gluon_cnt", 4, torch.int32))
    launcher = _launch.Launcher(_direct_compiled(calls), (5,), (8,), scratch=scratch)
    launcher.with_descriptors((), ("DESC",), (None, None))
    ws, cnt = scratch()
    assert calls == [("direct", ("DESC", None, None, ws.data_ptr(), cnt.data_ptr(), 8))]
    plain = _launch.Launcher(_direct_compiled(calls), (5,), (8,))  # no scratch: trailing tensors as pointers
    t = torch.empty(4)
    plain.with_descriptors((), ("DESC",), (t,))
    assert calls[1] == ("direct", ("DESC", t.data_ptr(), 8))


def test_split_k_decode_plan_launches_with_its_streams_workspace(streams, monkeypatch):
    """kernels/_splitk.py ``_Plan``: the kernel's (a, b, c, scale_a, scale_b, ws, cnt, ...) with the workspace and
    counters of the launching stream, sized for every listed config at this (M, N)."""
    calls = []
    config = SK.fp8_gemm_decode_kernel.configs[0]
    scalars = dict(M=3, N=40, K=64, stride_am=64, stride_ak=1, stride_bk=1, stride_bn=64, stride_cm=40,
                   stride_cn=1, SCALE_A_ROWS=False, SCALE_B_COLS=False)
    plan = SK._Plan(_direct_compiled(calls), config, scalars, torch.device("cpu"),
                    SK._scratch_for(3, 40, torch.device("cpu")))
    a, b, c, sa, sb = (torch.empty(n) for n in (1, 2, 3, 4, 5))
    plan.launch(a, b, c, sa, sb)
    streams[0] = 3
    plan.launch(a, b, c, sa, sb)
    sets = []
    for streams[0] in (0, 3):
        sets.append(SK._buffers_for(3, 40, torch.device("cpu")))
    for (_, args), (ws, cnt) in zip(calls, sets):
        assert args[:7] == tuple(t.data_ptr() for t in (a, b, c, sa, sb, ws, cnt))
        assert args[7:10] == (3, 40, 64)
        assert ws.numel() >= max(k.kwargs["SPLIT_K"] for k in SK.fp8_gemm_decode_kernel.configs) * 3 * 40
    assert sets[0][0].data_ptr() != sets[1][0].data_ptr()
