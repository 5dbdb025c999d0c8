"""The bundled kernels under Triton's interpreter when imported on their own (a bare ``TRITON_INTERPRET=1``,
outside tritondbg's runner): the timers their autotuners use, and a fix of Triton 3.6's loop bounds.

The timer (``triton.autotune(..., do_bench=autotune_bench)``): on a GPU it is Triton's default
(``driver.active.get_benchmarker()``, i.e. ``triton.testing.do_bench``; ``gpu_time_bench`` replays the launch
from a CUDA graph instead, for kernels with launch-bound shapes). Under the interpreter it times nothing
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


def gpu_time_bench(kernel_call, quantiles=None):
    """An autotuner timer of GPU time: the launch replayed from a CUDA graph (``do_bench_cudagraph``: no per-call
    Python), for kernels whose small shapes are launch-bound. Under plain do_bench every config of such a shape
    measures the same host work and the pick is noise: prefill (H200, 2026-11-30, Triton 3.6) picked 64x64 and
    128x128 in two processes for one B2 H8 N1000 GQA case whose GPU times are 17.8 and 22.8 us; decode attention
    (session 28) took a 32-key tile at B1 KV1024 that runs 11.7 us against the 9.2 of the one it displaced,
    timing its ~80 us host path. Large shapes rank the same either way. With the L2 evicted before each replayed
    call instead (tests/bench/explore_prefill_timer.py) the prefill picks were the same, 3 processes of 3. Under
    the interpreter, without CUDA, during a capture or where a graph cannot be captured: ``autotune_bench``.

    ``do_bench_cudagraph`` runs the calls on a new stream that does not wait for the caller's: its first call wrote
    the output ``torch.empty`` had just handed out while the caller's stream still had work queued on that memory
    (session 57, an H100 beside three busy processes: the attention reference of ``tests/bench/bnhd_load.py``, and
    the inputs of ``tests/gpu/steady_state.py``, came out wrong or NaN; upstream: triton-lang/triton pull request 10312).
    The device is synchronised first."""
    import torch

    if torch.cuda.is_available() and not interpreting() and not torch.cuda.is_current_stream_capturing():
        from triton.testing import do_bench_cudagraph

        torch.cuda.synchronize()  # the benchmark's stream starts after everything queued before it
        try:
            return do_bench_cudagraph(kernel_call, rep=50, quantiles=quantiles)
        except Exception:  # noqa: BLE001 - e.g. out of resources at compile time: the default path says it
            torch.cuda.synchronize()
    return autotune_bench(kernel_call, quantiles)


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
