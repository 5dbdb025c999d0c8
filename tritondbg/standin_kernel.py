"""What ``kernel.warmup(...)`` and ``kernel[grid](...)`` return under the stand-in (standin.py).

On a GPU both return the CompiledKernel, and host code reads it: tutorial 02 sizes its grid from ``n_regs`` and
``metadata.shared`` after a warmup, applied-ai prints ``k.n_regs`` and ``k.asm['ttir']`` after a launch, libraries
keep it and launch later calls through ``compiled[grid](...)``. Triton's interpreter returns None. The stand-in
is a CompiledKernel look-alike that launches the interpreted kernel; its figures are placeholders (nothing is
compiled for a GPU under the interpreter): 32 registers per thread, no spill, 1 KiB of shared memory per warp. Its
``asm`` has no stage: reading one says where the real text is (`tritondbg ir`).
"""
from __future__ import annotations

import sys
import types

_told: list = []  # the placeholder note, once per process


class NoAsm(dict):
    """``asm`` of a kernel nothing compiled: a stage read raises a KeyError that says why."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def __missing__(self, stage):
        raise KeyError(f"{stage!r}: nothing was compiled for a GPU (the interpreter ran {self.name}); `tritondbg ir` "
                       f"compiles it for a target and shows each stage (capture the launch, then `tritondbg ir "
                       f"REPRODUCER --stage {stage}`)")


class StandinKernel:
    """A CompiledKernel look-alike that launches the interpreted kernel (module docstring)."""

    def __init__(self, fn, args, kwargs, arch):
        self.fn = fn
        self.name = getattr(fn, "__name__", "kernel")
        self.bound = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        self.n_args = len(args)
        num_warps = int(kwargs.get("num_warps") or 4)
        self.n_max_threads = 1024
        self.metadata = types.SimpleNamespace(name=self.name, shared=1024 * num_warps, num_warps=num_warps,
                                              num_stages=int(kwargs.get("num_stages") or 3), num_ctas=1,
                                              target=arch.gpu_target(), tritondbg_stand_in=True)
        self.asm: dict[str, str] = NoAsm(self.name)
        self.packed_metadata = None

    @property
    def n_regs(self) -> int:
        _placeholder(self.name, "n_regs", 32)
        return 32

    @property
    def n_spills(self) -> int:
        _placeholder(self.name, "n_spills", 0)
        return 0

    def _init_handles(self):
        pass

    def __getitem__(self, grid):
        def runner(*args, stream=None, **kwargs):
            names = self.fn.arg_names
            given = set(names[:len(args)]) | set(kwargs)
            rest = {k: v for k, v in self.bound.items() if k not in given}
            return self.fn.run(*args, grid=grid, warmup=False, **rest, **kwargs)
        return runner


def _placeholder(kernel: str, what: str, value) -> None:
    """One line, the first time the program reads a figure nothing measured."""
    if _told:
        return
    _told.append(True)
    print(f"tritondbg: note: {kernel}'s {what} is a placeholder ({value}): nothing is compiled for a GPU under the "
          "interpreter; `tritondbg ir REPRODUCER --stats` gives the target's registers and spills", file=sys.stderr)
