"""Interpreter shims for ``tl.dot`` and ``tl.dot_scaled`` (installed by shims.py with the others): what the
tensor cores compute, where the plain interpreter computes something else or nothing.

- bf16 operands: the interpreter multiplied the raw uint16 storage; upcast exactly (``bf16_dot``).
- fp32 operands at the default input precision: TF32 on NVIDIA GPUs; truncate as the tensor cores do, and keep
  which kernel lines did it for the run's message (``tf32_dot``).
- block-scaled dots (Triton's tutorial 10): Triton 3.6's interpreter has no ``create_dot_scaled`` and its
  semantic wants constexpr formats; both supplied where missing (``dot_scaled``).
"""
from __future__ import annotations

import sys


def min_dot_size():
    """The GPU compiler's lower bounds on ``tl.dot``'s shapes (K >= 16 for 16-bit operands on NVIDIA, 32 for 8-bit,
    8 for fp32), which the interpreter's builder waives with (1, 1, 1): a dot the GPU compiler refuses ("Input
    shapes should have ... K >= 16") ran on the CPU and passed. The bounds of the target the stand-in reports
    (default sm_90; ``--arch``)."""
    from triton.runtime import interpreter as I

    builder = I.interpreter_builder
    old = builder.codegen_fns["min_dot_size"]  # KeyError where this Triton has none: the shim is skipped

    def bounds(lhs_type, rhs_type):
        from tritondbg import standin
        from tritondbg.ir.targets import DEFAULT_ARCH, parse_arch

        arch = standin.current() or parse_arch(DEFAULT_ARCH)
        try:
            if arch.is_cuda:
                from triton.backends.nvidia.compiler import min_dot_size as of_target
            else:
                from triton.backends.amd.compiler import get_min_dot_size as of_target
            check = of_target(arch.gpu_target())
        except (ImportError, AttributeError, TypeError):  # a Triton without that backend: no bound
            return old(lhs_type, rhs_type)
        return check(lhs_type, rhs_type)

    builder.codegen_fns["min_dot_size"] = bounds

    def undo():
        builder.codegen_fns["min_dot_size"] = old
    return undo


def bf16_dot():
    """tl.dot on bf16 operands: the interpreter multiplies the raw uint16 storage (garbage, ~1e10 errors
    measured on Triton 3.9). Upcast bf16 operands to fp32 first, as the tensor cores do (exact). fp8 operands too:
    the interpreter's own fp8 -> fp16 conversion has no NaN for e4m3fn (0x7F became 480: helper-154, DeepSeek-V3's
    fp8_gemm over a block its act_quant made NaN returned finite values), lowp.decode has (exact as well)."""
    from triton.runtime import interpreter as I

    from tritondbg.interp import lowp

    builder = I.InterpreterBuilder
    original = builder.create_dot

    def create_dot(self, a, b, d, *args, **kwargs):
        a, b = lowp.up(a), lowp.up(b)  # (bf16 / fp8 storage only: any other handle as it is)
        return original(self, a, b, d, *args, **kwargs)

    builder.create_dot = create_dot
    return lambda: setattr(builder, "create_dot", original)


# tl.dot calls computed in TF32 (file:line): this launch's (taken by attribution.KernelReport) and the process's
_tf32: dict[str, dict] = {"launch": {}, "all": {}}


def _note_tf32() -> None:
    from tritondbg.interp import frames

    file, line, _ = frames.site(sys._getframe(2))
    where = f"{frames.site_name(file)}:{line}"
    for seen in _tf32.values():
        if len(seen) < 64:
            seen[where] = None


def take_tf32_sites() -> list[str]:
    """The kernel lines whose tl.dot ran in TF32 since the last call (``tf32_dot``)."""
    sites = list(_tf32["launch"])
    _tf32["launch"].clear()
    return sites


def tf32_sites() -> list[str]:
    """Every kernel line of this process whose tl.dot ran in TF32."""
    return list(_tf32["all"])


TF32_PLAUSIBLE = 0.02  # an error TF32 can explain: at most this share of the output's scale (its own is ~5e-4)


def tf32_could_explain(errors) -> bool:
    """Whether the mismatches are small enough for TF32's rounding (2**-11 relative per operand) to be the cause:
    every failing output finite and off by at most ``TF32_PLAUSIBLE`` of its reference's largest value. The note was
    added to any fp32-dot mismatch, a wrong reference off by 27.7 included (helper-53)."""
    failing = [e for e in errors if not e.passed]
    return bool(failing) and all(e.nonfinite == 0 and e.max_abs <= TF32_PLAUSIBLE * e.ref_absmax for e in failing)


def tf32_note(sites: list[str]) -> str:
    """One sentence for a run whose tl.dot ran in TF32 at ``sites``."""
    more = f" (and {len(sites) - 1} more)" if len(sites) > 1 else ""
    return (f"tl.dot at {sites[0]}{more} computed in TF32 as on NVIDIA GPUs (fp32 operands truncated to 10 mantissa "
            f"bits: Triton's default input_precision for fp32); input_precision=\"ieee\" computes in fp32")


def _nvidia_target() -> bool:
    """The interpreted run stands in for an NVIDIA GPU (the default, sm_90; ``--arch``). On an AMD target Triton's
    default precision for fp32 dots is "ieee" (the interpreter's own default stays "tf32"): no truncation there."""
    from tritondbg import standin

    arch = standin.current()
    return arch is None or arch.is_cuda


def tf32_dot():
    """tl.dot on fp32 operands at input_precision "tf32" (Triton's default for fp32 on NVIDIA GPUs): the tensor
    cores read each operand's sign, exponent and top 10 mantissa bits and ignore the low 13 (truncation: Triton
    feeds the fp32 bits to mma/wgmma as they are; only its tf32x3 split rounds, with cvt.rna). The interpreter
    multiplied in full fp32, so a kernel whose tolerance only fp32 meets passed on the CPU and failed on the GPU.
    Truncate the operands the same way here (products of two tf32 values are exact in fp32, so what is left
    between CPU and GPU is the summation order). "ieee" and "tf32x3" stay fp32."""
    import numpy as np
    import triton.language as tl
    from triton._C.libtriton import ir
    from triton.runtime import interpreter as I

    builder = I.InterpreterBuilder
    original = builder.create_dot
    tf32 = ir.INPUT_PRECISION.TF32

    def truncated(h):
        bits = np.ascontiguousarray(h.data).view(np.uint32)
        finite = (bits & np.uint32(0x7F800000)) != np.uint32(0x7F800000)  # NaN and inf as they are
        return I.TensorHandle(np.where(finite, bits & np.uint32(0xFFFFE000), bits).view(np.float32), h.dtype)

    def create_dot(self, a, b, d, input_precision=None, *args, **kwargs):
        if input_precision == tf32 and a.dtype.scalar == tl.float32 and b.dtype.scalar == tl.float32 \
                and _nvidia_target():
            a, b = truncated(a), truncated(b)
            _note_tf32()
        return original(self, a, b, d, input_precision, *args, **kwargs)

    builder.create_dot = create_dot
    return lambda: setattr(builder, "create_dot", original)


class _Format(str):
    """A dot_scaled format string that also answers ``.value``, as a ``tl.constexpr`` does."""

    @property
    def value(self) -> str:
        return str(self)


def _formats():
    """``tl.dot_scaled(a, sa, "e4m3", ...)``: Triton 3.6's semantic reads ``lhs_format.value`` (compiled code hands it
    a constexpr) where its interpreter hands a plain str: "'str' object has no attribute 'value'" on any
    block-scaled dot (tutorial 10). Pass the formats as strings that also have ``.value`` (3.9 takes plain str)."""
    from triton.language.semantic import TritonSemantic

    original = TritonSemantic.dot_scaled

    def dot_scaled(self, lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, *args, **kwargs):
        fix = lambda f: _Format(f) if type(f) is str else f  # noqa: E731
        return original(self, lhs, lhs_scale, fix(lhs_format), rhs, rhs_scale, fix(rhs_format), *args, **kwargs)

    TritonSemantic.dot_scaled = dot_scaled
    return lambda: setattr(TritonSemantic, "dot_scaled", original)


# e2m1 (fp4) codes 0..15: sign, 2 exponent bits, 1 mantissa bit (the OCP MX spec's table)
_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def _mx_values(handle, fmt: str, k_pack: bool, is_rhs: bool):
    """An operand of tl.dot_scaled as fp32 values: e2m1 unpacked (the even element in the low nibble, along K
    unless packed along M / N), fp8 and bf16 decoded, fp16 widened."""
    import numpy as np
    import triton.language as tl

    from tritondbg.interp import lowp

    data = handle.data
    if fmt == "E2M1":
        axis = (-2 if k_pack else -1) if is_rhs else (-1 if k_pack else -2)
        codes = data.astype(np.uint8)
        table = np.array(_E2M1, dtype=np.float32)
        both = np.stack([table[codes & 15], table[codes >> 4]], axis=codes.ndim + axis + 1)
        shape = list(codes.shape)
        shape[axis] *= 2
        return both.reshape(shape)
    if fmt == "FP16":
        return data.astype(np.float32)
    # bf16 / fp8 storage, decoded by the format's type (fp8 may still be typed as the uint8 it was loaded as)
    return lowp.decode(data, {"BF16": tl.bfloat16, "E4M3": tl.float8e4nv, "E5M2": tl.float8e5}[fmt])


def _create_dot_scaled(self, lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, fast_math, lhs_k_pack,
                       rhs_k_pack, acc):
    """``InterpreterBuilder.create_dot_scaled`` where this Triton's interpreter has none (3.6), or where a scale is
    a float8 (nvfp4: e4m3 scales over groups of 16, which 3.9's interpreter decodes as e8m0 bits: 1e-39 where 386
    was meant, helper-124): each operand decoded to fp32 and multiplied by its scales over groups of K (e8m0:
    2 ** (s - 127), 255 is NaN; a float8 scale: its value), then one fp32 matmul. The GPU without native MX (Hopper)
    upcasts to bf16 and scales there: exact for e2m1 and fp8 values, so the two differ by the summation order only."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as I

    from tritondbg.interp import values

    def operand(h, scale, fmt, k_pack, is_rhs):
        v = _mx_values(h, fmt.name, k_pack, is_rhs)
        if scale is None:
            return v
        if _float_scale(scale):  # (bf16 / fp8 storage decoded, fp16 widened)
            f = values.array(scale).astype(np.float32)
        else:
            s = scale.data.astype(np.int32)
            f = np.where(s == 255, np.float32(np.nan), np.ldexp(np.float32(1), s - 127)).astype(np.float32)
        k = v.shape[-2 if is_rhs else -1]
        f = np.repeat(f, k // f.shape[-1], axis=-1)
        return v * (np.swapaxes(f, -1, -2) if is_rhs else f)

    a = operand(lhs, lhs_scale, lhs_format, lhs_k_pack, False)
    b = operand(rhs, rhs_scale, rhs_format, rhs_k_pack, True)
    return I.TensorHandle((np.matmul(a, b) + acc.data).astype(np.float32), tl.float32)


def _float_scale(scale) -> bool:
    ty = getattr(scale.dtype, "scalar", scale.dtype)
    return bool(getattr(ty, "is_floating", lambda: False)())


def dot_scaled():
    """tl.dot_scaled under interpreters that cannot run it: formats that answer ``.value`` (``_formats``), a
    ``create_dot_scaled`` where the builder has none, and float8 scales where it has one. Returns the undo."""
    from triton.runtime import interpreter as I

    undo = [_formats()]
    native = I.InterpreterBuilder.__dict__.get("create_dot_scaled")
    if native is None:
        I.InterpreterBuilder.create_dot_scaled = _create_dot_scaled
        undo.append(lambda: delattr(I.InterpreterBuilder, "create_dot_scaled"))
    else:
        def create_dot_scaled(self, lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, *rest):
            if any(s is not None and _float_scale(s) for s in (lhs_scale, rhs_scale)):
                return _create_dot_scaled(self, lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, *rest)
            return native(self, lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, *rest)

        I.InterpreterBuilder.create_dot_scaled = create_dot_scaled
        undo.append(lambda: setattr(I.InterpreterBuilder, "create_dot_scaled", native))
    return lambda: [u() for u in reversed(undo)]
