"""A CPU stand-in for the GPU that host code asks about: Triton's active driver, ``torch.cuda``'s queries, warmup().

Real host code asks for a GPU before it launches anything: every Triton tutorial does
``DEVICE = triton.runtime.driver.active.get_active_torch_device()`` at import, others read
``driver.active.get_current_target()``, ``driver.active.utils.get_device_properties(0)["multiprocessor_count"]``,
``torch.cuda.get_device_capability()`` or ``torch.cuda.get_device_properties(0)``, and tutorial 02 compiles with
``kernel.warmup(...)`` and reads ``n_regs``. On a machine without a GPU each of these dies with "0 active drivers"
or "Torch not compiled with CUDA enabled". ``install(arch)`` makes them answer as the chosen target would (the torch
device is ``cpu``; properties are that GPU's), so such code runs unmodified under the interpreter;
``uninstall()`` puts everything back. One mechanism, two users:

- ``tritondbg ir`` imports a scenario and runs its launch wrapper under ``answering_as``: its strict driver
  (tritondbg/ir/capture.py ``StubDriver``: the target, the cpu torch device and the target's properties) and
  torch.cuda's device queries; it only compiles, so a launch or a benchmark is an error there;
- interpreter runs (``runner.set_mode("interpret")``, program mode) ``install`` the full ``StandinDriver``.

``torch.utils._triton.has_triton()`` answers True (libraries such as torchao gate their kernels on it).
What it does not do: make ``torch.cuda.is_available()`` true or give tensors a CUDA device (code that allocates
on ``"cuda"`` by name still needs a GPU). ``warmup()`` and a launch return a ``StandinKernel`` (standin_kernel.py)
whose resource figures are placeholders (no GPU compile happens under the interpreter; `tritondbg ir` gives the
real ones).
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import sys
import types
from typing import Any, Iterator

from tritondbg import cuda_objects, target_reads
from tritondbg.errors import KernelError
from tritondbg.ir.targets import DEFAULT_ARCH, Arch, parse_arch
from tritondbg.standin_kernel import StandinKernel

# Per target: the figures Triton's driver (``utils.get_device_properties``) and torch report for one such GPU.
# clocks in kHz (as CUDA reports them), memory in bytes.
_SPECS: dict[str, dict[str, Any]] = {
    "sm_75": dict(name="Tesla T4", sms=40, smem=65536, clock=1590000, mem_clock=5001000, bus=256,
                  memory=15 << 30, l2=4 << 20, threads_per_sm=1024),
    "sm_80": dict(name="NVIDIA A100-SXM4-80GB", sms=108, smem=166912, clock=1410000, mem_clock=1593000, bus=5120,
                  memory=80 << 30, l2=40 << 20, threads_per_sm=2048),
    "sm_86": dict(name="NVIDIA A10", sms=72, smem=101376, clock=1695000, mem_clock=6251000, bus=384,
                  memory=24 << 30, l2=6 << 20, threads_per_sm=1536),
    "sm_89": dict(name="NVIDIA L40S", sms=142, smem=101376, clock=2520000, mem_clock=9001000, bus=384,
                  memory=48 << 30, l2=96 << 20, threads_per_sm=1536),
    "sm_90": dict(name="NVIDIA H100 80GB HBM3", sms=132, smem=232448, clock=1980000, mem_clock=2619000, bus=5120,
                  memory=80 << 30, l2=50 << 20, threads_per_sm=2048),
    "sm_100": dict(name="NVIDIA B200", sms=148, smem=232448, clock=1965000, mem_clock=3996000, bus=8192,
                   memory=180 << 30, l2=126 << 20, threads_per_sm=2048),
    "sm_120": dict(name="NVIDIA GeForce RTX 5090", sms=170, smem=101376, clock=2407000, mem_clock=14001000,
                   bus=512, memory=32 << 30, l2=96 << 20, threads_per_sm=1536),
    "gfx90a": dict(name="AMD Instinct MI250X", sms=110, smem=65536, clock=1700000, mem_clock=1600000, bus=4096,
                   memory=64 << 30, l2=8 << 20, threads_per_sm=2048),
    "gfx942": dict(name="AMD Instinct MI300X", sms=304, smem=65536, clock=2100000, mem_clock=2525000, bus=8192,
                   memory=192 << 30, l2=4 << 20, threads_per_sm=2048),
}


def spec_for(arch: Arch) -> dict[str, Any]:
    """The figures of ``arch``; an unlisted target gets those of the nearest listed one of its backend below it."""
    if arch.name in _SPECS:
        return _SPECS[arch.name]
    if arch.is_cuda:
        lower = [k for k in _SPECS if k.startswith("sm_") and int(k[3:]) <= int(arch.arch)]
        return _SPECS[max(lower, key=lambda k: int(k[3:]))] if lower else _SPECS["sm_75"]
    return _SPECS["gfx942"]


def _nvsmi_for(arch: Arch):
    """``triton.testing.nvsmi(attrs)`` answered with the target's figures (Triton's matmul perf model, which
    xformers' tiled matmul and torchao's autotuners prune with, reads ``clocks.max.sm``: without a GPU nvidia-smi is
    missing, its fallback imports pynvml, and the kernel could not run even with ``--config``)."""
    s = spec_for(arch)
    known = {"clocks.max.sm": s["clock"] // 1000, "clocks.sm": s["clock"] // 1000,
             "clocks.max.mem": s["mem_clock"] // 1000, "clocks.mem": s["mem_clock"] // 1000,
             "memory.total": s["memory"] >> 20, "clocks.max.graphics": s["clock"] // 1000}

    def nvsmi(attrs):
        unknown = [a for a in attrs if a not in known]
        if unknown:
            raise ValueError(f"nvidia-smi --query-gpu={','.join(unknown)}: the CPU stand-in ({arch.name}) answers "
                             f"only {', '.join(sorted(known))}")
        return [int(known[a]) for a in attrs]

    return nvsmi


def driver_properties(arch: Arch) -> dict[str, Any]:
    """``triton.runtime.driver.active.utils.get_device_properties(i)`` as the real driver returns it."""
    s = spec_for(arch)
    props = {"max_shared_mem": s["smem"], "max_num_regs": 65536, "multiprocessor_count": s["sms"],
             "warpSize": arch.warp_size, "sm_clock_rate": s["clock"], "mem_clock_rate": s["mem_clock"],
             "mem_bus_width": s["bus"]}
    if not arch.is_cuda:
        props.update(arch=arch.arch, max_threads_per_sm=s["threads_per_sm"])
    return props


def torch_properties(arch: Arch):
    """An object with the fields of ``torch.cuda.get_device_properties(i)``."""
    s = spec_for(arch)
    major, minor = capability(arch)
    return types.SimpleNamespace(
        name=s["name"], major=major, minor=minor, total_memory=s["memory"], multi_processor_count=s["sms"],
        shared_memory_per_block=49152, shared_memory_per_block_optin=s["smem"],
        shared_memory_per_multiprocessor=s["smem"] + 1024, regs_per_multiprocessor=65536,
        max_threads_per_multi_processor=s["threads_per_sm"], max_threads_per_block=1024, warp_size=arch.warp_size,
        L2_cache_size=s["l2"], is_integrated=False, is_multi_gpu_board=False, uuid="tritondbg-cpu-stand-in",
        gcnArchName=str(arch.arch) if not arch.is_cuda else "NVIDIA")


def capability(arch: Arch) -> tuple[int, int]:
    if not arch.is_cuda:
        return (9, 4) if arch.arch == "gfx942" else (9, 0)
    return int(arch.arch) // 10, int(arch.arch) % 10


class TargetDriver:
    """Reports a chosen target and nothing else: `tritondbg ir` compiles for it with no device and no stream."""

    def __init__(self, target):
        self.target = target       # a triton GPUTarget

    def get_current_device(self):
        # a key of its own in JITFunction.device_caches, so binders of different targets never mix
        return f"tritondbg-ir:{self.target.backend}:{self.target.arch}"

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return self.target

    def is_active(self):
        return True

    def _missing(self, name: str) -> Exception:
        return RuntimeError(f"the code asked Triton's driver for {name!r}, which needs a GPU")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise self._missing(name)


class _CpuDeviceInterface:
    """``driver.active.get_device_interface()``: the parts of ``torch.cuda`` that host code and do_bench use."""

    def current_device(self):
        return 0

    def device_count(self):
        return 1

    def set_device(self, index):
        _set_device(index)  # another ordinal than 0 is noted, as torch.cuda.set_device's

    def synchronize(self, device=None):
        pass

    def is_available(self):
        return False

    def __getattr__(self, name):
        raise AttributeError(f"tritondbg's CPU stand-in for the GPU has no device-interface {name!r} "
                             "(events and streams need a GPU)")


def _cpu_benchmarker(fn, *args, rep: int = 3, **kwargs):
    """A wall-clock stand-in for do_bench (ms): under the interpreter a timing says nothing of the GPU."""
    import time

    t0 = time.perf_counter()
    for _ in range(max(1, min(int(rep), 3))):
        fn()
    ms = (time.perf_counter() - t0) * 1e3 / max(1, min(int(rep), 3))
    quantiles = kwargs.get("quantiles")
    return [ms] * len(quantiles) if quantiles else ms


_BENCH_NOTE = ("tritondbg: triton.testing.do_bench returns NaN under the interpreter, without running the function: "
               "a CPU timing says nothing of a GPU (the kernels it would time are checked where the program calls "
               "them itself)")


def _nan_bench(fn, *args, quantiles=None, return_mode="mean", **kwargs):
    """``triton.testing.do_bench`` / ``do_bench_cudagraph`` under the stand-in: NaN, in the shape the caller asked
    for, with a note on stderr once. The real ones would fail on the stand-in's device interface (no events), and
    running a benchmark's sizes on the interpreter (tutorial 01 goes to 2^27 elements) would take hours."""
    if not _state.get("bench_noted"):
        _state["bench_noted"] = True
        print(_BENCH_NOTE, file=sys.stderr)
    nan = float("nan")
    if quantiles:
        return [nan] * len(quantiles)
    return [nan] if return_mode == "all" else nan


def _set_cpu_stream(stream) -> None:
    """``torch.cpu.set_stream`` under the stand-in: the CPU has one stream."""


class StandinDriver(TargetDriver):
    """Triton's active driver on a CPU, under the interpreter: the target and properties of the chosen GPU,
    the torch device ``cpu``."""

    def __init__(self, arch: Arch):
        super().__init__(arch.gpu_target())
        self.arch = arch
        self.backend = arch.backend
        self.utils = cuda_objects.DriverUtils(lambda device=0: driver_properties(arch),
                                              lambda device=0: capability(arch), arch.backend)

    def get_current_target(self):
        target_reads.note(sys._getframe(1))
        return self.target

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_active_torch_device(self):
        """``cpu``; ``cuda:0`` where the program's "cuda" tensors are served on the CPU (``interpret -- CMD``,
        tritondbg/program/cpu_device.py): there a tensor made on it is one of those, and says cuda:0 as they do
        (a tutorial's ``x.device == DEVICE`` beside a library's tensors made on "cuda")."""
        import torch

        cpu_device = sys.modules.get("tritondbg.program.cpu_device")
        if cpu_device is not None and cpu_device.serving_cuda():
            return torch.device("cuda", 0)
        return torch.device("cpu")

    def get_device_interface(self):
        return _CpuDeviceInterface()

    def get_benchmarker(self):
        return _cpu_benchmarker

    def get_empty_cache_for_benchmark(self):
        import torch

        return torch.empty(1024, dtype=torch.int8)

    def clear_cache(self, cache):
        cache.zero_()

    def _missing(self, name: str) -> Exception:
        return AttributeError(f"tritondbg's CPU stand-in for Triton's driver ({self.arch.name}) has no {name!r}: "
                              "it needs a real GPU")


@contextlib.contextmanager
def driver_swapped(stand_in) -> Iterator[None]:
    """Make ``stand_in`` Triton's active driver for a block (3.6 and 3.9 both have ``driver.set_active``)."""
    from triton.runtime.driver import driver

    saved = driver._active
    driver.set_active(stand_in)
    try:
        yield
    finally:
        driver._active = saved   # not reset_active(): that would create the real driver (none on a CPU)


@contextlib.contextmanager
def answering_as(arch: Arch, stand_in=None) -> Iterator[None]:
    """Host code's GPU questions answered as ``arch`` for a block, without the interpreter: Triton's driver is
    ``stand_in`` (``tritondbg ir``'s compile-only driver) or a ``StandinDriver``, and torch.cuda's device queries
    (capability, properties, name) are the target's. `tritondbg ir` imports a scenario and runs its launch wrapper
    under it: a module that asks for the device at import (every Triton tutorial's ``DEVICE = ...``; fla's
    Hopper checks and config lists) gets the answers the target's GPU would give."""
    import torch

    import triton.testing as testing

    saved = {}
    with driver_swapped(stand_in or StandinDriver(arch)):
        saved_has_triton = _answer_has_triton()
        saved_nvsmi = getattr(testing, "nvsmi", None)
        try:
            for name, value in _torch_cuda_patches(arch).items():
                saved[name] = getattr(torch.cuda, name, None)
                setattr(torch.cuda, name, value)
            testing.nvsmi = _nvsmi_for(arch)
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    delattr(torch.cuda, name)
                else:
                    setattr(torch.cuda, name, value)
            testing.nvsmi = saved_nvsmi
            _restore_has_triton(saved_has_triton)


@functools.cache
def _has_triton() -> bool:
    """``torch.utils._triton.has_triton()`` under the stand-in: Triton kernels run here (interpreted, or compiled
    by `tritondbg ir`). torch answers False on a machine without a GPU, and libraries gate their Triton kernels
    on it (torchao's blockwise fp8 quantization: "unsupported without triton"; mx_formats, quantized_training
    define their kernels only ``if has_triton():``)."""
    return True


def _answer_has_triton():
    """Make ``torch.utils._triton.has_triton`` answer True; returns what to put back (None: nothing patched).
    Modules that imported the function before this (torch's own, at ``import torch``) keep theirs."""
    try:
        import torch.utils._triton as torch_triton
    except ImportError:
        return None
    saved = getattr(torch_triton, "has_triton", None)
    if saved is None:
        return None
    torch_triton.has_triton = _has_triton
    return saved


def _restore_has_triton(saved) -> None:
    if saved is not None:
        import torch.utils._triton as torch_triton

        torch_triton.has_triton = saved


_state: dict[str, Any] = {}


def _torch_cuda_patches(arch: Arch) -> dict[str, Any]:
    import torch

    props = torch_properties(arch)
    # streams, events, memory figures, NVTX: only where torch has no CUDA (on a GPU machine a program's real CUDA
    # work keeps them: ``x.record_stream(torch.cuda.current_stream())`` takes only a real stream)
    available = getattr(torch.cuda.is_available, "__wrapped__", torch.cuda.is_available)  # (not a program's ask)
    objects = {} if available() else {**cuda_objects.patches(props.total_memory), "_DeviceGuard": _NullDevice}
    return {
        "get_device_capability": lambda device=None: capability(arch),
        "get_device_properties": lambda device=None: props,
        "get_device_name": lambda device=None: props.name,
        # as the target answers (a program picks bf16 or fp16 by it); torch's own says False without CUDA
        "is_bf16_supported": lambda including_emulation=True: (not arch.is_cuda) or capability(arch) >= (8, 0),
        "current_device": lambda: 0,
        "device_count": lambda: 1,
        "set_device": _set_device,
        "synchronize": lambda device=None: None,
        "device": _NullDevice,
        **objects,
    }


def _set_device(device) -> None:
    """``torch.cuda.set_device`` without CUDA: one device; another's index is noted (``cpu_device.ordinal``)."""
    cpu_device = sys.modules.get("tritondbg.program.cpu_device")
    if cpu_device is not None:
        cpu_device.ordinal(getattr(device, "index", device))


def answer_torch_cuda(arch: Arch | str | None = None) -> None:
    """torch.cuda's queries as ``install`` answers them, before Triton is imported (``interpret -- CMD`` serves a
    program's "cuda" tensors from its torch import: ``torch.cuda.set_device(0)`` or ``get_device_properties`` ahead
    of ``import triton`` failed, helper-80), and ``has_triton()`` answers True for a module that takes it from
    torch before anything imports Triton (helper-119: ``if has_triton():`` at a module's import took its no-Triton
    path). ``install`` takes over at Triton's import; nothing is put back."""
    import torch

    for name, value in _torch_cuda_patches(_arch(arch)).items():
        setattr(torch.cuda, name, value)
    _answer_has_triton()


def _arch(arch: Arch | str | None) -> Arch:
    """``arch`` parsed; the default target (sm_90) when none is given."""
    return parse_arch(arch) if isinstance(arch, str) else (arch or parse_arch(DEFAULT_ARCH))


class _NullDevice(contextlib.nullcontext):
    """``torch.cuda.device(i)`` as a no-op context on the CPU."""

    def __init__(self, device=None):
        super().__init__()
        self.idx = 0
        _set_device(device)


def current() -> Arch | None:
    """The target the stand-in reports, or None when it is not installed."""
    return _state.get("arch")


def install(arch: Arch | str | None = None) -> Arch:
    """Answer GPU questions as ``arch`` (default sm_90) would, for interpreted runs. Idempotent; a second call
    with another target switches to it."""
    import torch
    from triton.runtime.driver import driver
    from triton.runtime.interpreter import InterpretedFunction

    prev, was_explicit = _state.get("arch"), _state.get("explicit", False)
    explicit = arch is not None and (prev is None or arch != prev or was_explicit)  # (current() passed back: as was)
    arch = _arch(arch)
    if _state:
        uninstall()
    _state["arch"] = arch
    _state["explicit"] = explicit
    _state["driver"] = driver._active
    driver.set_active(StandinDriver(arch))
    _state["cuda"] = {}
    for name, value in _torch_cuda_patches(arch).items():
        _state["cuda"][name] = getattr(torch.cuda, name, None)
        setattr(torch.cuda, name, value)
    original_run = InterpretedFunction.run
    _state["run"] = original_run
    from tritondbg.interp import gpu_compile

    def run(self, *args, grid, warmup, **kwargs):
        if warmup:  # Triton's interpreter returns None here; host code goes on to read n_regs and launch it
            return StandinKernel(self, args, kwargs, arch)
        try:
            _refuse_fp8_types(arch, (*args, *kwargs.values()))
            _refuse_launch_options(arch, self.arg_names, kwargs)
        except (ValueError, KeyError) as exc:
            raise _refused(self, exc) from None
        with gpu_compile.lock:  # (no launch of another thread while a check has the language swapped)
            gpu_compile.check(self, args, kwargs, arch)  # the GPU compiler's verdict, for the sanitizer (findings)
            value = original_run(self, *args, grid=grid, warmup=warmup, **kwargs)
        # a GPU launch returns the CompiledKernel, which host code reads (helper-144: applied-ai prints k.n_regs
        # after its launch; the interpreter's None died there with no word of why)
        return StandinKernel(self, args, kwargs, arch) if value is None else value

    InterpretedFunction.run = run
    _state["options_before"] = _target_options(arch)
    _state["has_triton"] = _answer_has_triton()
    import triton.testing as testing

    _state["bench"] = {n: getattr(testing, n) for n in ("do_bench", "do_bench_cudagraph", "nvsmi")
                       if hasattr(testing, n)}
    for name in _state["bench"]:
        setattr(testing, name, _nvsmi_for(arch) if name == "nvsmi" else _nan_bench)
    # `getattr(torch, DEVICE.type).set_stream(stream)` (tutorial 02's benchmark): torch.cpu has Stream, not set_stream
    _state["cpu_set_stream"] = not hasattr(torch.cpu, "set_stream")
    if _state["cpu_set_stream"]:
        torch.cpu.set_stream = _set_cpu_stream
    return arch


class TargetValueError(KernelError, ValueError):
    """The target's compiler refused the launch (ValueError as there): a kernel's error, no tritondbg frame."""


class TargetKeyError(KernelError, KeyError):
    """The target's compiler refused a launch option (KeyError as there)."""


for _cls, _base in ((TargetValueError, "ValueError"), (TargetKeyError, "KeyError")):
    _cls.__module__, _cls.__name__, _cls.__qualname__ = "builtins", _base, _base  # told (and pickled) as the GPU's


def _refused(fn, exc: Exception) -> Exception:
    """``exc`` as the kernel's error, counted for the run's note (``refused``): a launch the target refused ran no
    program, and the run said "no Triton launch" with the reason only in a traceback through this file."""
    name = getattr(getattr(fn, "fn", fn), "__name__", "?")
    message = str(exc.args[0] if exc.args else exc)
    count, first = _state.setdefault("refused", {}).get(name, (0, message))
    _state["refused"][name] = (count + 1, first)
    return (TargetKeyError if isinstance(exc, KeyError) else TargetValueError)(message)


def target_read() -> str | None:
    """file:line of the first host code that read the stand-in's target (target_reads.py), while the target is the
    default one (no --arch given), else None."""
    return None if _state.get("explicit") else target_reads.first()


def refused() -> dict:
    """Kernel name -> [launches the target's compiler refused, its first reason]."""
    return {k: list(v) for k, v in _state.get("refused", {}).items()}


_FP8_NAMES = {"float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5", "float8_e4m3fnuz": "fp8e4b8",
              "float8_e5m2fnuz": "fp8e5b16"}


def _refuse_fp8_types(arch: Arch, values) -> None:
    """A tensor argument of an fp8 type the target's compiler refuses (fp8e4nv before sm_89): the same error,
    where the interpreter, which never lowers the kernel's signature, ran it."""
    from triton.runtime import interpreter

    options = getattr(getattr(interpreter, "interpreter_builder", None), "options", None)
    supported = getattr(options, "supported_fp8_dtypes", None)
    if supported is None or _state.get("options_before") is None:  # the target's own list was not set
        return
    for v in values:
        name = _FP8_NAMES.get(str(getattr(v, "dtype", "")).replace("torch.", ""))
        if name is not None and name not in supported and hasattr(v, "data_ptr"):
            raise ValueError(f"type {name} not supported in this architecture ({arch.name}). The supported fp8 dtypes "
                             f"are {tuple(supported)}")


def _refuse_launch_options(arch: Arch, arg_names, kwargs: dict) -> None:
    """A launch keyword that is no kernel argument is a compile option: the target's compiler refuses one it does
    not know (``launch_pdl`` for gfx942, a typo as ``num_warp=8``) or a value it cannot take (``num_ctas=2`` before
    sm_90), where the interpreter ignored it. The same error, said as raised by the target's compiler."""
    extra = {k: v for k, v in kwargs.items() if k not in arg_names}
    if not extra:
        return
    if not _state.get("explicit"):  # no --arch: the kernel may be AMD's (waves_per_eu) or NVIDIA's; typos only
        known = _all_option_names()
        for k in extra:
            if known and k not in known:
                raise KeyError(f"Keyword argument {k} was specified but unrecognised (no Triton backend takes it "
                               "as a compile option, and it is no argument of the kernel)")
        return
    try:
        options = _backend(arch).parse_options(dict(extra))
    except (KeyError, ValueError) as exc:
        raise type(exc)(f"{exc.args[0] if exc.args else exc} (the {arch.name} compiler's refusal; the "
                        "interpreter itself ignores launch options)") from None
    except Exception:  # noqa: BLE001 - a target this Triton's backends cannot describe: not checked
        return
    for k in extra:
        if k not in options.__dict__:
            raise KeyError(f"Keyword argument {k} was specified but unrecognised (by the {arch.name} compiler, "
                           "which takes it as a compile option: it is no argument of the kernel)")


def _backend(arch: Arch):
    """The target's compiler backend (made once per install): what its ``parse_options`` takes and refuses."""
    if _state.get("backend") is None:
        from triton.compiler.compiler import make_backend

        _state["backend"] = make_backend(StandinDriver(arch).get_current_target())
    return _state["backend"]


@functools.lru_cache(maxsize=None)
def _all_option_names() -> frozenset:
    """The compile options some installed backend (CUDA, HIP) takes, or an empty set when none can be read."""
    names = set()
    for module, cls in (("triton.backends.nvidia.compiler", "CUDAOptions"), ("triton.backends.amd.compiler",
                                                                            "HIPOptions")):
        try:
            names |= set(getattr(importlib.import_module(module), cls).__dataclass_fields__)
        except Exception:  # noqa: BLE001 - a backend this Triton does not ship
            pass
    return frozenset(names)


def _target_options(arch: Arch):
    """The interpreter's options take the target's fp8 types (its compiler's ``parse_options``): an fp8e4nv kernel
    passed under `interpret --arch sm_80`, where the sm_80 compiler refuses the type. Returns the options before."""
    import dataclasses

    from triton.runtime import interpreter

    builder = getattr(interpreter, "interpreter_builder", None)
    before = getattr(builder, "options", None)
    if before is None or not dataclasses.is_dataclass(before):
        return None
    try:
        theirs = _backend(arch).parse_options({})
        fields = {f.name for f in dataclasses.fields(before)}
        changes = {k: tuple(getattr(theirs, k)) for k in ("supported_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes")
                   if k in fields and hasattr(theirs, k)}
        builder.options = dataclasses.replace(before, **changes)
    except Exception:  # noqa: BLE001 - a target this Triton's backends cannot describe: the interpreter's own
        return None
    return before


def uninstall() -> None:
    """Put Triton's driver, torch.cuda and InterpretedFunction.run back as they were."""
    if not _state:
        return
    import torch
    from triton.runtime.driver import driver
    from triton.runtime.interpreter import InterpretedFunction

    driver._active = _state["driver"]
    for name, value in _state["cuda"].items():
        if value is None:
            delattr(torch.cuda, name)
        else:
            setattr(torch.cuda, name, value)
    InterpretedFunction.run = _state["run"]
    if _state.get("options_before") is not None:
        from triton.runtime import interpreter

        interpreter.interpreter_builder.options = _state["options_before"]
    _restore_has_triton(_state.get("has_triton"))
    import triton.testing as testing

    for name, fn in _state.get("bench", {}).items():
        setattr(testing, name, fn)
    if _state.get("cpu_set_stream"):
        del torch.cpu.set_stream
    _state.clear()
