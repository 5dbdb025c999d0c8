"""CUDA streams, events and memory queries as the interpreter's CPU stand-in answers them (``standin.py``).

A program written for a GPU times its kernels with ``torch.cuda.Event(enable_timing=True)``, launches on a side
``torch.cuda.Stream()``, waits on ``torch.cuda.current_stream()`` and prints ``torch.cuda.max_memory_allocated()``.
Without a GPU each of these died with "Torch not compiled with CUDA enabled" under ``interpret -- CMD``, after
(or before) the kernels it meant to check. Under the interpreter every launch runs at once on the CPU, in program
order, so a stream is the one CPU stream and waiting is a no-op; an event's ``elapsed_time`` is NaN with one note
(as ``triton.testing.do_bench`` is: a CPU timing says nothing of a GPU); the memory figures are 0 (nothing is
allocated on a GPU; said once) and ``mem_get_info`` is the target's memory, free up to what the host has;
``torch.cuda.nvtx``'s ranges mark nothing (``torch.cuda.nvtx.range_push``, ``from torch.cuda import nvtx``).
The CPU generator makes the "cuda" tensors' random numbers, so ``torch.cuda``'s seeding and RNG state are its:
``torch.cuda.manual_seed(0)`` before each of two ``torch.randn(n, device="cuda")`` gives the same numbers twice,
``torch.random.fork_rng()`` and a saved ``torch.cuda.get_rng_state()`` put back what they took.
"""
from __future__ import annotations

import contextlib
import math
import sys
import types

from tritondbg.errors import KernelError

_state: dict = {"noted": False, "memory_noted": False}
_NOTE = ("tritondbg: torch.cuda.Event.elapsed_time returns NaN under the interpreter (the kernels run on the CPU: "
         "its timing says nothing of a GPU); time them with `tritondbg profile` or the program on a GPU")


class Event:
    """``torch.cuda.Event`` on the CPU: recorded at once, always complete; ``elapsed_time`` NaN."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 **kwargs):
        self.enable_timing = enable_timing

    def record(self, stream=None) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event) -> float:
        if not _state["noted"]:
            _state["noted"] = True
            print(_NOTE, file=sys.stderr)
        return math.nan


class Stream:
    """``torch.cuda.Stream`` on the CPU: the one stream every launch runs on, in program order."""

    cuda_stream = 0  # the raw handle Triton's launcher and Inductor's code ask for (0 here, as _cuda_getCurrentRawStream)

    def __init__(self, device=None, priority: int = 0, **kwargs):
        import torch

        self.priority = priority
        self.device = torch.device("cuda", 0)

    def wait_event(self, event) -> None:
        pass

    def wait_stream(self, stream) -> None:
        pass

    def record_event(self, event=None):
        return event if event is not None else Event()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


_DEFAULT: list = []


def current_stream(device=None) -> Stream:
    if not _DEFAULT:
        _DEFAULT.append(Stream())
    return _DEFAULT[0]


def stream(s=None):
    """``with torch.cuda.stream(s):``: the launches inside run where every launch runs."""
    return contextlib.nullcontext(s)


_MEMORY_NOTE = ("tritondbg: torch.cuda's memory figures are 0 under the interpreter (its tensors are on the CPU: "
                "nothing is allocated on a GPU)")


def zero(device=None) -> int:
    """``memory_allocated()`` and the like: nothing is allocated on a GPU (said once)."""
    if not _state["memory_noted"]:
        _state["memory_noted"] = True
        print(_MEMORY_NOTE, file=sys.stderr)
    return 0


class _Range:
    """``torch.cuda.nvtx.range(msg)``: a context and a decorator that mark nothing (no profiler here)."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __call__(self, fn):
        return fn


# ``torch.cuda.nvtx`` (range_push / range_pop around a model's steps): "NVTX functions not installed" on a CPU build
NVTX = types.SimpleNamespace(range_push=lambda msg: 0, range_pop=lambda: 0, range_start=lambda msg: 0,
                             range_end=lambda range_id: None, mark=lambda msg: None, range=_Range)


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """``torch.cuda.memory_summary()`` (a KeyError on a CPU build): one line saying there is nothing to sum up."""
    return "tritondbg: no GPU memory under the interpreter (its tensors are on the CPU)"


def _seeded(seed) -> None:
    import torch

    torch.default_generator.manual_seed(int(seed))  # (not torch.manual_seed: it calls cuda.manual_seed_all)


def get_rng_state(device="cuda"):
    """The state of the generator that serves "cuda" tensors: the CPU's."""
    import torch

    return torch.default_generator.get_state()


def set_rng_state(new_state, device="cuda") -> None:
    """A state ``get_rng_state`` gave back; a GPU's (16 bytes: seed and offset, a checkpoint saved on a GPU)
    seeds the CPU generator with its seed."""
    import torch

    if new_state.numel() == torch.default_generator.get_state().numel():
        torch.default_generator.set_state(new_state)
    else:
        _seeded(int.from_bytes(bytes(new_state[:8].tolist()), "little") & ((1 << 63) - 1))


def rng_patches() -> dict:
    """torch.cuda's seeding and RNG state -> the CPU generator's."""
    import torch

    gen = torch.default_generator
    return {
        "manual_seed": _seeded, "manual_seed_all": _seeded, "seed": lambda: gen.seed(), "seed_all": lambda: gen.seed(),
        "initial_seed": lambda: gen.initial_seed(), "get_rng_state": get_rng_state, "set_rng_state": set_rng_state,
        "get_rng_state_all": lambda: [get_rng_state()],
        "set_rng_state_all": lambda new_states: set_rng_state(new_states[0]) if len(new_states) else None,
    }


def patches(total_memory: int) -> dict:
    """torch.cuda's names -> their stand-ins (``standin._torch_cuda_patches`` adds them to its own)."""
    return {
        "Event": Event, "Stream": Stream, "current_stream": current_stream, "default_stream": current_stream,
        "stream": stream, "set_stream": lambda stream: None,
        "memory_allocated": zero, "max_memory_allocated": zero, "memory_reserved": zero,
        "max_memory_reserved": zero, "reset_peak_memory_stats": lambda device=None: None,
        "reset_max_memory_allocated": lambda device=None: None, "empty_cache": lambda: None,
        "mem_get_info": lambda device=None: (min(total_memory, _host_available(total_memory)), total_memory),
        "memory_summary": memory_summary, "nvtx": NVTX, **rng_patches(),
    }


def _host_available(default: int) -> int:
    """The host's available memory (where the tensors are): a program that sizes its work by the free memory
    (Liger's tests skip below a need) must not plan for the target's 80 GB in a CPU's RAM (helper-80)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return default


class DriverUtils:
    """``triton.runtime.driver.active.utils`` under the stand-in: the device's properties and capability; any
    other name (a host TMA descriptor's ``fill_1d_tma_descriptor``, a module loader) is an AttributeError that
    says whether this Triton's own GPU driver has it (helper-138: FBGEMM's TMA path read "'types.SimpleNamespace'
    object has no attribute 'fill_1d_tma_descriptor'", a name Triton 3.9's CUDA driver does not have either)."""

    def __init__(self, properties, capability, backend: str):
        self.get_device_properties, self.get_device_capability = properties, capability
        self._backend = backend

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        import triton

        gpu = "HIP" if self._backend == "hip" else "CUDA"
        if _gpu_driver_has(self._backend, name):
            why = (f"this Triton's {gpu} driver has it, the CPU stand-in of the interpreter does not: a host-side "
                   "GPU call; run that part on a GPU")
        else:
            why = (f"Triton {triton.__version__}'s {gpu} driver has none either: a GPU run fails the same way"
                   + (" (host TMA descriptors: triton.tools.tensor_descriptor.TensorDescriptor)" if "tma" in name
                      else ""))
        raise DriverAttributeError(f"Triton's driver utils have no attribute {name!r}: {why}")


class DriverAttributeError(KernelError, AttributeError):
    """The driver's missing name, told without tritondbg's frames (as a GPU's AttributeError)."""


DriverAttributeError.__module__ = "builtins"
DriverAttributeError.__name__ = DriverAttributeError.__qualname__ = "AttributeError"


def _gpu_driver_has(backend: str, name: str) -> bool:
    """Whether Triton's own driver for ``backend`` sets ``utils.NAME`` (read from its source: building it needs
    the GPU's libraries)."""
    import importlib.util
    import re

    spec = importlib.util.find_spec(f"triton.backends.{'amd' if backend == 'hip' else 'nvidia'}.driver")
    try:
        with open(spec.origin, encoding="utf-8") as fh:
            return re.search(rf"self\.{re.escape(name)}\s*=", fh.read()) is not None
    except (AttributeError, OSError, TypeError):
        return False
