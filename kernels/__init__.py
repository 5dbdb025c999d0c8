"""The bundled kernels (tritondbg.kernels). Under a bare ``TRITON_INTERPRET=1`` they run as under tritondbg's
runner, bar its shims: ``_autotune.fix_loop_bounds`` mends Triton 3.6's loop bounds first."""
from ._autotune import fix_loop_bounds as _fix_loop_bounds

_fix_loop_bounds()
