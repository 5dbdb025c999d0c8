"""Shims that let real kernels run under TRITON_INTERPRET=1 the way they run on a GPU.

Installed by the runner once interpreter mode is on; each is idempotent and reversible (``uninstall``).
"""
from __future__ import annotations

_saved: dict[str, object] = {}


def _bf16_dot():
    """tl.dot on bf16 operands: the interpreter multiplies the raw uint16 storage (garbage, ~1e10 errors
    measured on Triton 3.9). Upcast bf16 operands to fp32 first, as the tensor cores do (exact)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as I

    builder = I.InterpreterBuilder
    original = builder.create_dot

    def create_dot(self, a, b, d, *args, **kwargs):
        if a.dtype.scalar == tl.bfloat16 or b.dtype.scalar == tl.bfloat16:
            def up(h):
                if h.dtype.scalar == tl.bfloat16:
                    return I.TensorHandle(I._convert_float(h.data, tl.bfloat16, tl.float32, None).view(np.float32),
                                          tl.float32)
                return h
            a, b = up(a), up(b)
        return original(self, a, b, d, *args, **kwargs)

    builder.create_dot = create_dot
    return lambda: setattr(builder, "create_dot", original)


def _bf16_round():
    """fp32 -> bf16 casts: the interpreter truncates (up to 1 ulp low); the GPU rounds to nearest even.
    Round the same way here, so CPU results match the GPU bit for bit on stores of bf16 outputs."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as I

    original = I._convert_float

    def convert(data, input_dtype, output_dtype, rounding_mode):
        if input_dtype == tl.float32 and output_dtype == tl.bfloat16 and rounding_mode is None:
            u = np.ascontiguousarray(data, dtype=np.float32).view(np.uint32)
            rounded = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))
            nan = np.isnan(data.view(np.float32) if data.dtype == np.float32 else data)
            out = np.where(nan, np.uint32(0x7FC0), rounded).astype(np.uint16)
            return out.reshape(np.shape(data))
        return original(data, input_dtype, output_dtype, rounding_mode)

    I._convert_float = convert
    return lambda: setattr(I, "_convert_float", original)


_SHIMS = {"bf16_dot": _bf16_dot, "bf16_round": _bf16_round}


def install() -> None:
    """Install every shim (no-op for those already installed)."""
    for name, make in _SHIMS.items():
        if name not in _saved:
            _saved[name] = make()


def uninstall() -> None:
    for name in list(_saved):
        _saved.pop(name)()
