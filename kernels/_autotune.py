"""The bundled kernels under Triton's interpreter when imported on their own (a bare ``TRITON_INTERPRET=1``,
outside tritondbg's runner): the timer their autotuners use, and a fix of Triton 3.6's loop bounds.

The timer (``triton.autotune(..., do_bench=autotune_bench)``): on a GPU it is Triton's default
(``driver.active.get_benchmarker()``, i.e. ``triton.testing.do_bench``). Under the interpreter it times nothing
and gives every config 0 ms, so the first config left after pruning runs, the choice ``tritondbg interpret``
makes. Triton's default would ask for a GPU driver and fail on a machine without one ("0 active drivers"), and
on one with a GPU it would time numpy, running every config many times on the CPU.

The loop bounds (``fix_loop_bounds``, run when the package is imported): Triton 3.6's interpreter turns a
tensor used as an int (``range(start, n, step)`` with n computed from kernel arguments: every persistent loop
here) into one with ``int(handle.data)``, which numpy >= 2.4 refuses for the 1-element array the tensor holds
("only 0-dimensional arrays can be converted to Python scalars"); 3.9 converts ``handle.data.squeeze()``.
"""
import triton


def interpreting() -> bool:
    return bool(getattr(triton.knobs.runtime, "interpret", False))


def autotune_bench(kernel_call, quantiles=None):
    if interpreting():
        return [0.0] * len(quantiles) if quantiles else 0.0
    return triton.runtime.driver.active.get_benchmarker()(kernel_call, quantiles=quantiles)


def fix_loop_bounds() -> bool:
    """Under the interpreter, convert a tensor used as an int as Triton 3.9 does (its single element; an error for
    more), whatever this Triton's own conversion is; once per process. True when installed (now or before)."""
    if not interpreting():
        return False
    try:
        import numpy as np
        from triton.runtime import interpreter as interp
    except ImportError:
        return False
    original = getattr(interp, "_patch_lang_tensor", None)
    if original is None:  # a Triton whose interpreter is laid out otherwise: leave it as it is
        return False
    if getattr(original, "fixes_loop_bounds", False):
        return True

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).squeeze()))

    patch_lang_tensor.fixes_loop_bounds = True
    interp._patch_lang_tensor = patch_lang_tensor
    return True
