"""The timer the bundled kernels' autotuners use (``triton.autotune(..., do_bench=autotune_bench)``).

On a GPU it is Triton's default (``driver.active.get_benchmarker()``, i.e. ``triton.testing.do_bench``).
Under the interpreter (``TRITON_INTERPRET=1``) it times nothing and gives every config 0 ms, so the first
config left after pruning runs, the choice ``tritondbg interpret`` makes. Triton's default would ask for a
GPU driver and fail on a machine without one ("0 active drivers"), and on one with a GPU it would time numpy,
running every config many times on the CPU.
"""
import triton


def interpreting() -> bool:
    return bool(getattr(triton.knobs.runtime, "interpret", False))


def autotune_bench(kernel_call, quantiles=None):
    if interpreting():
        return [0.0] * len(quantiles) if quantiles else 0.0
    return triton.runtime.driver.active.get_benchmarker()(kernel_call, quantiles=quantiles)

