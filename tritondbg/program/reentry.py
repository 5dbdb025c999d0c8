"""tritondbg's torch function modes where torch runs the program's Python without them.

A program's torch calls are seen by function modes tritondbg pushes at the bottom of its stack (cpu_device.py: the
program's "cuda" on the CPU; readwatch.py: reads of what a launch left unwritten). Torch runs some of the
program's own Python with no function mode on the stack, and there those modes were blind:

- a custom ``autograd.Function``'s ``backward``: the autograd engine runs it with none (helper-63: bitsandbytes
  allocating on "cuda" there died with "Torch not compiled with CUDA enabled"; helper-74: a backward's
  ``torch.empty`` rows summed went unseen);
- a custom op's Python kernel (``torch.library.custom_op``, ``triton_op``, ``Library.impl``): a mode handles a
  call with itself popped off the stack, so while it runs the op, the op's kernel runs with none (helper-100:
  flash-attn's layer-norm backward sums a ``torch.empty`` partials buffer inside its op: the read of rows no
  launch wrote was told when the same code ran outside an op, and silent inside one).

Around each, the modes ``add``-ed and missing from the stack are pushed (a fresh one of each: ``make()``). And a
custom op registered for CUDA alone (``device_types="cuda"``, most serving libraries' ops) had no kernel for the
program's "cuda" tensors, which are CPU tensors here: its kernel is registered for the CPU too (only while
cpu_device's stand-in is on, where no CUDA device exists; a CPU kernel of the program's own takes over).
"""
from __future__ import annotations

import contextlib
import functools

_MODES: list = []  # (a mode on the program's stack, what makes one, after(node, grads), before(node, args))
_TORCH_NAMESPACES = ("aten", "prims", "_refs", "quantized", "inductor", "profiler")
_RUN_KEYS = ("", "CompositeExplicitAutograd", "CompositeImplicitAutograd", "CPU", "CUDA")
_state = {"cuda_as_cpu": False}


def add(mode, make=None, after=None, before=None) -> None:
    """Keep ``mode`` (and ``make``, a callable making another, default its class) pushed where torch runs the
    program's Python without it; ``after(node, grads)``: told what a custom Function's backward returned;
    ``before(node, args)``: told the gradients it is handed."""
    _MODES.append((mode, make or type(mode), after, before))
    _patch_backward()
    _patch_library()


def cuda_kernels_on_cpu() -> None:
    """A custom op's CUDA kernel registered from now on serves the CPU too (cpu_device.install)."""
    _state["cuda_as_cpu"] = True


@contextlib.contextmanager
def _missing_pushed():
    from torch.overrides import _get_current_function_mode_stack

    stack = _get_current_function_mode_stack()
    with contextlib.ExitStack() as modes:
        for mode, make, *_ in _MODES:
            if mode not in stack:
                modes.enter_context(make())
        yield


def _patch_backward() -> None:
    """Around ``BackwardCFunction.apply`` (the node class of every custom Function; ``apply_boxed`` where torch
    has it)."""
    from torch.autograd import function as F

    node = getattr(F, "BackwardCFunction", None)
    for name in ("apply", "apply_boxed"):
        original = getattr(node, name, None)
        if original is None or getattr(original, "_tdbg_mode", False):
            continue

        def apply(self, *args, _original=original):
            for *_, before in _MODES:
                if before is not None:
                    before(self, args)
            with _missing_pushed():
                grads = _original(self, *args)
            for _, _, after, _ in _MODES:
                if after is not None:
                    after(self, grads)
            return grads
        apply._tdbg_mode = True
        setattr(node, name, apply)


def _with_modes(fn):
    @functools.wraps(fn)
    def kernel(*args, **kwargs):
        with _missing_pushed():
            return fn(*args, **kwargs)
    kernel._tdbg_mode = True
    return kernel


def _patch_library() -> None:
    """Around the Python kernels registered from now on through ``torch.library.Library.impl`` (custom_op's,
    triton_op's, the legacy ``torch.library.impl``) in the program's namespaces, for keys that run the op."""
    import torch

    lib = getattr(torch.library, "Library", None)
    original = getattr(lib, "impl", None)
    if original is None or getattr(original, "_tdbg_mode", False):
        return

    @functools.wraps(original)
    def impl(self, op_name, fn=None, dispatch_key="", *args, **kwargs):
        programs = getattr(self, "ns", None) not in _TORCH_NAMESPACES and callable(fn) and \
            not getattr(fn, "_tdbg_mode", False)  # a kernel of the program's own namespaces
        ours = programs and dispatch_key in _RUN_KEYS
        if ours:
            fn = _with_modes(fn)
            if dispatch_key == "CPU":  # the program's own CPU kernel takes the place of tritondbg's copy, whose
                _drop_cpu_copy(self, op_name, "CPU")  # library is destroyed first (no "overriding" warning)
        elif dispatch_key == "AutogradCPU":
            _drop_cpu_copy(self, op_name, dispatch_key)
        result = original(self, op_name, fn, dispatch_key, *args, **kwargs)
        # the CUDA kernel, and an AutogradCUDA one (FBGEMM's sll ops: without it torch warned "an autograd kernel
        # was not registered", helper-138), serve the CPU too: the program's "cuda" tensors are CPU tensors
        cpu_key = {"CUDA": "CPU", "AutogradCUDA": "AutogradCPU"}.get(dispatch_key)
        if cpu_key and programs and _state["cuda_as_cpu"] and not kwargs.get("with_keyset") and \
                not _has_cpu_kernel(self, op_name, cpu_key):
            try:  # in a library of tritondbg's own, destroyed when the program registers a CPU kernel of its own
                copy = torch.library.Library(self.ns, "IMPL")
                original(copy, op_name, fn, cpu_key, *args, **kwargs)
                _CPU_COPIES[(_qualname(self, op_name), cpu_key)] = copy
            except Exception:  # noqa: BLE001 - torch refused: the op stays CUDA-only, as without tritondbg
                pass
        return result

    impl._tdbg_mode = True
    lib.impl = impl


_CPU_COPIES: dict = {}  # (op qualname, CPU key) -> the library holding tritondbg's CPU copy of its CUDA kernel


def _qualname(lib, op_name) -> str:
    name = op_name if isinstance(op_name, str) else getattr(op_name, "name", lambda: str(op_name))()
    return (name if "::" in name else f"{lib.ns}::{name}").split(".")[0]


def _drop_cpu_copy(lib, op_name, key: str) -> None:
    copy = _CPU_COPIES.pop((_qualname(lib, op_name), key), None)
    if copy is not None:
        try:
            copy._destroy()
        except Exception:  # noqa: BLE001 - torch has no such method: its own override rules apply
            pass


def _has_cpu_kernel(lib, op_name, key: str = "CPU") -> bool:
    import torch

    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(_qualname(lib, op_name), key))
    except Exception:  # noqa: BLE001 - no such op yet, or another torch: none known
        return False
