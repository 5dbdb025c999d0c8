"""A device function in a module of its own, for shim_cases.py's ``device_calls`` (its libdevice name is this
module's: the interpreter patches it on the first call from this module in a launch)."""
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def scaled_rsqrt(x, s):
    return x * libdevice.rsqrt(s + 1.0)
