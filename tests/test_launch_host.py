"""The cached launchers of layernorm, softmax, add and gemm (kernels/_launch.py): what a steady-state call passes
to the compiled kernel, when it may skip Triton's launch path, and how little Python it runs.

No GPU here, so launches are stand-ins: the kernel is replaced by a recorder whose ``[grid](*args, **kwargs)``
is one trip through Triton's launch path and returns a fake compiled kernel, whose ``[grid](*args)`` records
what the cached launcher passes. Tensors live on the ``meta`` device (shapes, strides, dtypes, no data), which
the test lets the launchers take (``_launch.launchable``); ``pristine`` (nothing patched) is set by the test."""
import inspect
import sys

import pytest
import torch
import triton
from _launch_fakes import fake_compiled
from triton.runtime.autotuner import Autotuner

from tritondbg.kernels import _launch
from tritondbg.kernels import add as ADD
from tritondbg.kernels import fp8_gemm as F8
from tritondbg.kernels import gemm as GEMM
from tritondbg.kernels import layernorm as LN
from tritondbg.kernels import softmax as SM

_TORCH_DIR = str(__import__("pathlib").Path(torch.__file__).parent)


class _Compiled:
    def __init__(self):
        self.direct = []  # (grid, args) of every launch through the cached launcher

    def __getitem__(self, grid):
        return lambda *args: self.direct.append((grid, args))


class _Kernel:
    """Stands in for a kernel (a JITFunction, or an Autotuner when ``config`` is given)."""

    def __init__(self, real, config=None):
        self.real = real
        self.arg_names = list(real.fn.arg_names if isinstance(real, Autotuner) else real.arg_names)
        self.best_config = config
        self.compiled = _Compiled()
        self.full = []  # (grid, args, kwargs) of every call through Triton's launch path

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.full.append((grid, args, kwargs))
            return self.compiled
        return launch


@pytest.fixture
def fake(monkeypatch):
    state = {"pristine": True}
    monkeypatch.setattr(_launch, "pristine", lambda kernel: state["pristine"])
    monkeypatch.setattr(_launch, "launchable", lambda t: True)
    monkeypatch.setattr(_launch, "_VERIFY", [True])  # as under tritondbg run/check
    kernels = {}

    def install(module, attr, launches_attr, config=None):
        k = _Kernel(getattr(module, attr), config)
        monkeypatch.setattr(module, attr, k)
        launches = _launch.Launches(k)
        monkeypatch.setattr(launches, "_jit", lambda: k)  # the recorder carries the real parameter names
        monkeypatch.setattr(module, launches_attr, launches)
        kernels[attr] = k
        return k
    return install, state


def _bound(k, args, kwargs, config=None):
    """What JITFunction.run would bind: every parameter's value, in the kernel's order."""
    names = k.arg_names
    values = dict(zip(names, args))
    values.update({n: v for n, v in kwargs.items() if n in names})
    if config is not None:
        values.update(config.kwargs)
    return [values[n] for n in names]


def _same(a, b):
    return a is b if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor) else a == b


def _ln_inputs(M=4096, N=1000, dtype=torch.bfloat16):
    x = torch.empty(M, N, device="meta", dtype=dtype)
    w = torch.empty(N, device="meta", dtype=dtype)
    b = torch.empty(N, device="meta", dtype=dtype)
    return x, w, b


def test_layernorm_cached_launcher_passes_what_jitfunction_run_binds(fake):
    install, _ = fake
    k = install(LN, "layernorm_fwd_kernel", "_SINGLE")
    x, w, b = _ln_inputs()
    y = LN.layernorm(x, w, b, 1e-5)
    (grid, args, kwargs), = k.full
    (dgrid, dargs), = k.compiled.direct  # first call of a signature: one check launch through the launcher
    assert dgrid == tuple(grid) + (1, 1)[: 3 - len(grid)]
    want = _bound(k, args, kwargs)
    assert len(dargs) == len(want) and all(_same(a, b) for a, b in zip(dargs, want)), (dargs, want)
    assert dargs[3] is y and kwargs["VEC"] == 8 and kwargs["ROWS"] > 1  # N=1000: 16-byte vectors, 4 rows
    # steady state: no trip through Triton's launch path, one direct launch with fresh output
    y2 = LN.layernorm(x, w, b, 1e-5)
    assert len(k.full) == 1 and len(k.compiled.direct) == 2
    _, dargs2 = k.compiled.direct[1]
    assert dargs2[0] is x and dargs2[3] is y2 and y2 is not y and dargs2[4:] == dargs[4:]
    # a different eps is a different signature (eps is a kernel argument): the full path again
    LN.layernorm(x, w, b, 1e-6)
    assert len(k.full) == 2


def test_patched_launch_path_always_takes_the_full_path(fake):
    """tritondbg pins configs / captures IR by patching Triton's launch path: every call must go through it."""
    install, state = fake
    k = install(SM, "softmax_kernel", "_SINGLE")
    x = torch.empty(4, 8, 256, device="meta", dtype=torch.float16)
    state["pristine"] = False
    SM.softmax(x)
    SM.softmax(x)
    assert len(k.full) == 2 and not k.compiled.direct
    state["pristine"] = True  # the first unpatched call builds (and checks) the launcher, the next uses it
    SM.softmax(x)
    SM.softmax(x)
    assert len(k.full) == 3 and len(k.compiled.direct) == 2
    (grid, args, kwargs) = k.full[-1]
    assert grid == (32 // kwargs["ROWS"],) and args[0].shape == (32, 256)  # leading dims flattened


def test_autotuned_kernels_bind_the_config_that_ran(fake):
    install, _ = fake
    cfg = ADD.add_kernel.configs[1]
    k = install(ADD, "add_kernel", "_LAUNCHES", config=cfg)
    x = torch.empty(10_000, device="meta", dtype=torch.float16)
    ADD.add(x, x)
    out = ADD.add(x, x)
    (grid, args, kwargs), = k.full
    assert callable(grid)
    (g1, d1), (g2, d2) = k.compiled.direct
    assert g1 == g2 == (-(-10_000 // cfg.kwargs["BLOCK"]), 1, 1)
    assert all(_same(a, b) for a, b in zip(d1, _bound(k, args, kwargs, cfg)))
    assert d2[2] is out and d2[3:] == (10_000, cfg.kwargs["BLOCK"])


def test_gemm_cached_launcher_keeps_the_kernel_the_first_call_chose(fake, monkeypatch):
    install, _ = fake
    cfg = GEMM.TMA_CONFIGS[0]
    k = install(GEMM, "gemm_tma_kernel", "_TMA", config=cfg)
    monkeypatch.setattr(GEMM, "tma_plan", lambda a, b: (False, True))
    monkeypatch.setattr(GEMM, "_num_sms", lambda device: 132)
    a = torch.empty(127, 4096, device="meta", dtype=torch.bfloat16)
    b = torch.empty(11008, 4096, device="meta", dtype=torch.bfloat16).t()
    GEMM.gemm(a, b)
    monkeypatch.setattr(GEMM, "tma_plan", lambda a, b: pytest.fail("steady state re-planned"))
    monkeypatch.setattr(GEMM, "_ensure_allocator", lambda: None)
    c = GEMM.gemm(a, b)
    (grid, args, kwargs), = k.full
    (_, d1), (g2, d2) = k.compiled.direct
    assert all(_same(x, y) for x, y in zip(d1, _bound(k, args, kwargs, cfg)))
    tiles = -(-11008 // cfg.kwargs["BLOCK_N"])  # one row of tiles: split-K over the idle SMs (kernels/gemm.py)
    ways = min(132 // tiles, GEMM.TAIL_SPLIT_MAX, -(-4096 // cfg.kwargs["BLOCK_K"]))
    assert g2 == (tiles * ways, 1, 1) == (GEMM.tma_programs(127, 11008, 4096, cfg.kwargs, 132, GEMM.TAIL_SPLIT_MAX), 1, 1)
    assert d2[2] is c and c.shape == (127, 11008)
    assert d2[3:] == d1[3:]


def test_fp8_large_m_cached_launcher_keys_on_fast_accum(fake, monkeypatch):
    install, _ = fake
    monkeypatch.setattr(F8._fp8_tma, "tma_plan", lambda a, b, c: None)  # the pointer kernel
    cfg = F8.CONFIGS[0]
    k = install(F8, "fp8_gemm_kernel", "_LARGE", config=cfg)
    a = torch.empty(256, 512, device="meta", dtype=torch.float8_e4m3fn)
    b = torch.empty(384, 512, device="meta", dtype=torch.float8_e4m3fn).t()
    sa = torch.empty((), device="meta")
    c = F8.fp8_gemm(a, b, sa, sa)
    c2 = F8.fp8_gemm(a, b, sa, sa)
    (grid, args, kwargs), = k.full
    (_, d1), (_, d2) = k.compiled.direct
    assert all(_same(x, y) for x, y in zip(d1, _bound(k, args, kwargs, cfg))) and d1[2] is c
    assert d2[2] is c2 and d2[0] is a and d2[3:] == d1[3:] and c2.shape == (256, 384)
    F8.fp8_gemm(a, b, sa, sa, fast_accum=True)  # another kernel specialisation: the full path again
    assert len(k.full) == 2 and k.full[1][2]["FAST_ACCUM"] is True


def test_fp8_tma_cached_launcher_keeps_the_kernel_the_first_call_chose(fake, monkeypatch):
    """The TMA kernel's launcher shares the pointer kernel's signature dict: the steady state finds it without
    planning again and launches it on the persistent grid with the first call's arguments."""
    install, _ = fake
    cfg = F8._fp8_tma.TMA_CONFIGS[0]
    k = install(F8, "fp8_gemm_tma_kernel", "_LARGE_TMA", config=cfg)
    monkeypatch.setattr(F8._LARGE_TMA, "plans", F8._LARGE.plans)
    monkeypatch.setattr(F8._fp8_tma, "tma_plan", lambda a, b, c: True)
    monkeypatch.setattr(F8._fp8_tma, "_num_sms", lambda device: 132)
    monkeypatch.setattr(F8._fp8_tma, "interpreted", lambda: False)  # a GPU run
    a = torch.empty(8192, 512, device="meta", dtype=torch.float8_e4m3fn)
    b = torch.empty(4096, 512, device="meta", dtype=torch.float8_e4m3fn).t()
    sa = torch.empty((), device="meta")
    F8.fp8_gemm(a, b, sa, sa)
    monkeypatch.setattr(F8._fp8_tma, "tma_plan", lambda a, b, c: pytest.fail("steady state re-planned"))
    monkeypatch.setattr(F8._fp8_tma, "_ensure_allocator", lambda: None)
    c = F8.fp8_gemm(a, b, sa, sa)
    (grid, args, kwargs), = k.full
    (_, d1), (g2, d2) = k.compiled.direct
    assert all(_same(x, y) for x, y in zip(d1, _bound(k, args, kwargs, cfg)))
    tiles = -(-8192 // cfg.kwargs["BLOCK_M"]) * -(-4096 // cfg.kwargs["BLOCK_N"])
    assert g2 == (min(132, tiles), 1, 1) and d2[2] is c and c.shape == (8192, 4096) and d2[3:] == d1[3:]


def test_steady_state_call_runs_little_python(fake):
    """The host cost of a steady-state call (issue 18: no more than torch's op): with the launch stubbed, one
    call of each wrapper runs only the signature lookup and the cached launcher; no argument checks, no config
    rule, no trip through Triton's launch path (whose binder and cache key alone make dozens of calls)."""
    install, _ = fake
    install(LN, "layernorm_fwd_kernel", "_SINGLE")
    install(SM, "softmax_kernel", "_SINGLE")
    install(ADD, "add_kernel", "_LAUNCHES", config=ADD.add_kernel.configs[0])
    x, w, b = _ln_inputs()
    allowed = {"<lambda>", "layernorm", "softmax", "add", "plan", "aligned", "__call__"}
    for fn in (lambda: LN.layernorm(x, w, b), lambda: SM.softmax(x), lambda: ADD.add(w, b)):
        fn()
        called = []

        def prof(frame, event, arg):
            # torch's own Python frames are left out: on the meta device here, torch.empty_like runs a Python
            # meta implementation that CUDA tensors do not
            if event == "call" and not frame.f_code.co_filename.startswith(_TORCH_DIR):
                called.append(frame.f_code.co_name)
        sys.setprofile(prof)
        try:
            fn()
        finally:
            sys.setprofile(None)
        assert set(called) <= allowed and len(called) <= 8, called


def test_launcher_binds_defaults_and_names_a_missing_argument():
    class J:
        arg_names = ["x_ptr", "n", "BLOCK"]
        params = [type("P", (), {"name": "n", "default": inspect.Parameter.empty})(),
                  type("P", (), {"name": "BLOCK", "default": 64})()]
    launches = _launch.Launches(J())
    t = torch.empty(8, device="meta")
    old = _launch.launchable, _launch.pristine
    _launch.launchable, _launch.pristine = (lambda t: True), (lambda k: True)
    try:
        compiled = _Compiled()
        launches.record("s", compiled, (2,), (t,), {"n": 8})
        assert launches.plans["s"].tail == (8, 64)
        with pytest.raises(RuntimeError, match="'n'"):
            launches.record("s2", compiled, (2,), (t,), {})
    finally:
        _launch.launchable, _launch.pristine = old


def test_direct_c_entry_of_a_triton_36_launcher(monkeypatch):
    """Triton 3.6's CudaLauncher without scratch: the cached launcher calls its C entry itself (the arguments
    CudaLauncher.__call__ would forward, no hooks, tensors as integer pointers), and goes back through CompiledKernel[grid] once a launch
    hook is installed (a profiler must still see every launch)."""
    calls = []
    compiled = fake_compiled(lambda args: calls.append(("direct", args)),
                             lambda grid, args: calls.append(("runner", grid, args)))

    monkeypatch.setattr(_launch, "_TORCH_STREAMS", True)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda dev: 99, raising=False)
    launcher = _launch.Launcher(compiled, (5,), (7, "C"))
    t = torch.empty(2, device="meta")
    launcher(t)
    # the tensor goes in as its integer pointer (the C entry would otherwise call data_ptr and query the driver)
    assert calls == [("direct", (5, 1, 1, 99, 1234, False, False, None, None, (4, 1, 0), None, None, None,
                                 t.data_ptr(), 7, "C"))]
    assert type(calls[0][1][13]) is int
    hook = lambda *a: None  # noqa: E731
    triton.knobs.runtime.launch_enter_hook.add(hook)
    try:
        launcher(t)
    finally:
        triton.knobs.runtime.launch_enter_hook.remove(hook)
    assert calls[1] == ("runner", (5, 1, 1), (t, 7, "C"))
    compiled.run.global_scratch_size = 128  # a kernel that needs scratch: always the runner
    assert _launch.Launcher(compiled, (5,), ()).direct is None


def test_no_check_launch_while_a_profiler_hook_is_installed(fake):
    """Proton and tritondbg profile count launches through Triton's hooks: the first call of a signature must
    launch once, as the program asked, not twice (GPU test of 2026-11-30: Proton saw 21 add launches for 20)."""
    install, _ = fake
    k = install(SM, "softmax_kernel", "_SINGLE")
    x = torch.empty(8, 256, device="meta", dtype=torch.float16)
    hook = lambda *a: None  # noqa: E731
    triton.knobs.runtime.launch_enter_hook.add(hook)
    try:
        SM.softmax(x)
        assert len(k.full) == 1 and not k.compiled.direct  # no check launch
        SM.softmax(x)
        assert len(k.full) == 1 and len(k.compiled.direct) == 1  # the cached launcher still serves the call
    finally:
        triton.knobs.runtime.launch_enter_hook.remove(hook)


def test_no_check_launch_outside_tritondbg_run_and_check(fake, monkeypatch):
    """A user's program (and nsys, Proton without hooks) calls a bundled kernel: one launch per call, also the
    first call of a signature (the NaN check launch is tritondbg run/check's own)."""
    install, _ = fake
    monkeypatch.setattr(_launch, "_VERIFY", [False])
    k = install(SM, "softmax_kernel", "_SINGLE")
    x = torch.empty(8, 256, device="meta", dtype=torch.float16)
    SM.softmax(x)
    assert len(k.full) == 1 and not k.compiled.direct
    SM.softmax(x)
    assert len(k.full) == 1 and len(k.compiled.direct) == 1


def test_the_runner_turns_the_check_launch_on_in_compiled_mode(monkeypatch):
    from tritondbg import runner

    monkeypatch.setattr(_launch, "_VERIFY", [False])
    monkeypatch.setattr(runner, "_mode", None)
    monkeypatch.setattr(runner, "_mode_from_env_if_loaded", lambda: None)
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    runner.set_mode("compiled")
    assert _launch.verifying()


def test_host_descriptors_are_expanded_once_per_base_pointer_on_the_36_entry(monkeypatch):
    """Triton 3.6 wraps the C entry of a kernel with host descriptor arguments in a Python function that builds
    every descriptor's CUtensorMap on every launch: ``with_templates`` calls the C entry in the wrapper's
    closure with descriptors expanded once per base pointer, and rebuilds them through the wrapper (as
    ``with_descriptors``) while a launch hook is installed."""
    calls, expanded = [], []

    def make_inner(launcher):
        def inner(*args):  # the wrapper: would expand descriptors itself
            calls.append(("wrapper", launcher, args))
        return inner

    def c_entry(*args):  # the C entry (the module's `launch`)
        calls.append(("c", args))
    c_entry.__name__ = "launch"

    class CudaLauncher:
        global_scratch_size = profile_scratch_size = 0
        launch_cooperative_grid, launch_pdl = False, False
        launch = staticmethod(make_inner(c_entry))

        def __call__(self, gridX, gridY, gridZ, stream, function, *args):
            raise AssertionError("not the direct entry")

    class Meta:
        tensordesc_meta = [{"swizzle": 3}]

    class Compiled:
        run = CudaLauncher()
        packed_metadata = (4, 1, 0)
        function = 1234
        metadata = Meta()

        def __getitem__(self, grid):
            return lambda *args: calls.append(("runner", grid, args))

    def expand(desc, meta):
        expanded.append(desc.base.data_ptr())
        return ["map@%d" % desc.base.data_ptr(), *desc.shape, *desc.strides]

    monkeypatch.setattr(_launch, "_TORCH_STREAMS", True)
    monkeypatch.setattr(_launch, "_descriptor_expander", lambda: expand)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda dev: 99, raising=False)
    from triton.tools.tensor_descriptor import TensorDescriptor

    x = torch.zeros(64, 32)
    template = _launch.descriptor_template(TensorDescriptor.from_tensor(x, [16, 32]))
    launcher = _launch.Launcher(Compiled(), (5,), (7,))
    assert launcher.raw is c_entry
    ptr = torch.zeros(2)
    y = torch.zeros(64, 32)
    for base in (x, x, y):
        launcher.with_templates((ptr,), (template,), (base,))
    assert expanded == [x.data_ptr(), y.data_ptr()]  # x once, then y
    head = (5, 1, 1, 99, 1234, False, False, None, None, (4, 1, 0), None, None, None, ptr.data_ptr())
    assert calls == [("c", head + (f"map@{x.data_ptr()}", 64, 32, 32, 1, 7))] * 2 + \
        [("c", head + (f"map@{y.data_ptr()}", 64, 32, 32, 1, 7))]
    hook = lambda *a: None  # noqa: E731
    triton.knobs.runtime.launch_enter_hook.add(hook)
    try:
        launcher.with_templates((ptr,), (template,), (x,))
    finally:
        triton.knobs.runtime.launch_enter_hook.remove(hook)
    (kind, grid, args), = calls[3:]
    assert kind == "runner" and args[0] is ptr and args[1].base is x and list(args[1].block_shape) == [16, 32]
    # trailing tensors (fp8's per-call scales) follow the descriptors, as integer pointers on the C entry
    s = torch.zeros(())
    launcher.with_templates((), (template,), (x,), (s,))
    assert calls[4] == ("c", head[:-1] + (f"map@{x.data_ptr()}", 64, 32, 32, 1, s.data_ptr(), 7))
    triton.knobs.runtime.launch_enter_hook.add(hook)
    try:
        launcher.with_templates((), (template,), (x,), (s,))
    finally:
        triton.knobs.runtime.launch_enter_hook.remove(hook)
    (kind, grid, args), = calls[5:]
    assert kind == "runner" and args[0].base is x and args[1] is s and args[2] == 7
    Meta.tensordesc_meta = [None]  # a descriptor without metadata: through the wrapper, every launch
    assert _launch.Launcher(Compiled(), (5,), ()).raw is None


def test_layernorm_on_leading_dims_reuses_the_launcher_of_its_rows(fake):
    """x (B, T, N): the first call launches on the (B*T, N) views; the steady state passes x and a fresh output of
    x's shape (the same data pointers), with the first call's row strides."""
    install, _ = fake
    k = install(LN, "layernorm_fwd_kernel", "_SINGLE")
    x = torch.empty(4, 7, 1000, device="meta", dtype=torch.bfloat16)
    w = torch.empty(1000, device="meta", dtype=torch.bfloat16)
    y = LN.layernorm(x, w, w)
    (grid, args, kwargs), = k.full
    assert args[0].shape == (28, 1000) and y.shape == x.shape
    y2 = LN.layernorm(x, w, w)
    assert len(k.full) == 1
    (_, first), (_, steady) = k.compiled.direct[0], k.compiled.direct[-1]
    assert steady[0] is x and steady[3] is y2 and y2.shape == x.shape and steady[4:] == first[4:]
    assert steady[4:6] == (1000, 1000)  # the rows' strides (x and y)
