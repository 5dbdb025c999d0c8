"""``triton.language.extra.libdevice`` under the interpreter.

The libdevice module a kernel imports holds empty stubs (``def rsqrt(arg0): ...``); the compiler swaps in
the CUDA/HIP implementation, the interpreter does not, so a stub returns None and the kernel fails later
with "cannot convert None to tensor" (Liger-Kernel's rms_norm does ``from ...libdevice import rsqrt``).
Kernels written for one backend call its module directly (Triton's tutorial 07: ``tl.extra.cuda.libdevice.asin``,
``from triton.language.extra.cuda import libdevice``); those functions need the compiler too (the bare interpreter:
"Did you forget to add @triton.jit?"). Here the functions a kernel can see, in the generic stub module and in the
CUDA and HIP ones, are replaced, for one launch, by numpy versions of the same math.
"""
from __future__ import annotations

import math

import numpy as np

STUB_MODULE = "triton.language.extra.libdevice"
# the modules whose functions a kernel may call: the generic stubs and each backend's implementation
CUDA_MODULE = "triton.language.extra.cuda.libdevice"
MODULES = (STUB_MODULE, CUDA_MODULE, "triton.language.extra.hip.libdevice")


def _vec(f):
    return np.vectorize(f, otypes=[np.float64])


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# name -> (numpy function, result kind: "float" keeps the input float type, "int32"/"int64" for integers)
_UNARY = {
    "abs": np.abs, "fabs": np.abs, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "rint": np.rint, "nearbyint": np.rint, "round": _round_half_away,
    "sqrt": np.sqrt, "sqrt_rn": np.sqrt, "sqrt_rz": np.sqrt, "sqrt_rd": np.sqrt, "sqrt_ru": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "rsqrt_rn": lambda x: 1.0 / np.sqrt(x),
    "rcp_rn": lambda x: 1.0 / x, "rcp_rz": lambda x: 1.0 / x, "rcp_rd": lambda x: 1.0 / x,
    "rcp_ru": lambda x: 1.0 / x, "cbrt": np.cbrt, "rcbrt": lambda x: 1.0 / np.cbrt(x),
    "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x), "expm1": np.expm1,
    "fast_expf": np.exp, "fast_exp10f": lambda x: np.power(10.0, x),
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "fast_logf": np.log, "fast_log2f": np.log2, "fast_log10f": np.log10,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "fast_sinf": np.sin, "fast_cosf": np.cos, "fast_tanf": np.tan,
    "sinpi": lambda x: np.sin(np.pi * x), "cospi": lambda x: np.cos(np.pi * x),
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "fast_tanhf": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": _vec(math.erf), "erfc": _vec(math.erfc), "lgamma": _vec(math.lgamma), "tgamma": _vec(math.gamma),
    "saturatef": lambda x: np.clip(x, 0.0, 1.0), "logb": lambda x: np.floor(np.log2(np.abs(x))),
}
_UNARY_INT = {
    "isnan": np.isnan, "isinf": np.isinf, "finitef": np.isfinite, "isfinited": np.isfinite,
    "signbit": np.signbit, "ilogb": lambda x: np.floor(np.log2(np.abs(x))),
    "float2int_rn": np.rint, "float2int_rz": np.trunc, "float2int_rd": np.floor, "float2int_ru": np.ceil,
    "double2int_rn": np.rint, "double2int_rz": np.trunc, "double2int_rd": np.floor, "double2int_ru": np.ceil,
}
_UNARY_INT64 = {"llrint": np.rint, "llround": _round_half_away, "float2ll_rn": np.rint, "float2ll_rz": np.trunc,
                "double2ll_rn": np.rint, "double2ll_rz": np.trunc}
# libdevice's float-to-integer conversions: PTX cvt, defined past the range (values.gpu_int: what an H100 stores)
_CONVERSIONS = frozenset(n for n in [*_UNARY_INT, *_UNARY_INT64] if n.startswith(("float2", "double2", "ll")))
_BINARY = {
    "pow": np.power, "fast_powf": np.power, "atan2": np.arctan2, "hypot": np.hypot,
    "rhypot": lambda x, y: 1.0 / np.hypot(x, y), "fmod": np.fmod, "remainder": np.remainder,
    "fmin": np.fmin, "fmax": np.fmax, "fdim": lambda x, y: np.maximum(x - y, 0.0),
    "copysign": np.copysign, "nextafter": np.nextafter, "fast_dividef": np.divide,
    "div_rn": np.divide, "div_rz": np.divide, "div_rd": np.divide, "div_ru": np.divide,
    "add_rn": np.add, "add_rz": np.add, "add_rd": np.add, "add_ru": np.add,
    "sub_rn": np.subtract, "sub_rz": np.subtract, "sub_rd": np.subtract, "sub_ru": np.subtract,
    "mul_rn": np.multiply, "mul_rz": np.multiply, "mul_rd": np.multiply, "mul_ru": np.multiply,
    "ldexp": lambda x, e: np.ldexp(x, e.astype(np.int32)), "scalbn": lambda x, e: np.ldexp(x, e.astype(np.int32)),
}


def _bits(fn):
    """An integer function of one lane's bits (as an unsigned Python int of the input's width) -> int, vectorised."""
    def apply(x):
        width = x.dtype.itemsize * 8
        u = x.view(np.dtype(f"uint{width}"))
        return np.vectorize(lambda v: fn(int(v), width), otypes=[object])(u)
    return apply


def _brev(v: int, width: int) -> int:
    return int(format(v, f"0{width}b")[::-1], 2)


def _mulhi(x, y):
    """The high half of the full product (signed or unsigned as the inputs are), lane by lane."""
    width = x.dtype.itemsize * 8
    return np.vectorize(lambda a, b: (int(a) * int(b)) >> width, otypes=[object])(x, y)


# integer bit functions: "int32" results (counts) or "same" (the input's integer type)
_INT_BITS = {"popc": ("int32", _bits(lambda v, w: bin(v).count("1"))),
             "clz": ("int32", _bits(lambda v, w: w - v.bit_length())),
             "ffs": ("int32", _bits(lambda v, w: (v & -v).bit_length())),
             "brev": ("same", _bits(_brev)), "mulhi": ("same", _mulhi)}
_TERNARY = {"fma": lambda x, y, z: x * y + z, "fma_rn": lambda x, y, z: x * y + z,
            "fma_rz": lambda x, y, z: x * y + z, "fma_rd": lambda x, y, z: x * y + z,
            "fma_ru": lambda x, y, z: x * y + z}

SUPPORTED = (frozenset(_UNARY) | frozenset(_UNARY_INT) | frozenset(_UNARY_INT64) | frozenset(_BINARY)
             | frozenset(_TERNARY) | frozenset(_INT_BITS))


def _decode(t):
    """A tl.tensor's values as a float/int numpy array (bf16/fp8 raw storage decoded to fp32) and its type."""
    from tritondbg.interp import lowp

    if lowp.is_lowp(t):
        return lowp.decode(t.handle.data, t.dtype.scalar), t.dtype.scalar
    return t.handle.data, t.dtype.scalar


class _TableCore:
    """``core`` for a copy of a libdevice function: ``extern_elementwise`` returns its dtype table."""

    def __init__(self, core):
        self._core = core

    def __getattr__(self, name):
        return getattr(self._core, name)

    @staticmethod
    def extern_elementwise(lib_name, lib_path, args, table, *rest, **kwargs):
        return table


_TABLES: dict[str, dict | None] = {}
_ORIGINALS: dict[str, object] = {}  # the CUDA module's own functions (their dtype tables), kept before patching


def dtype_table(name: str) -> dict | None:
    """The argument dtypes the CUDA libdevice accepts for ``name`` (the keys of the table its function hands the
    compiler, e.g. asin: fp32 and fp64 only), or None where it cannot be read (another Triton, no such function)."""
    if name not in _TABLES:
        import inspect
        import types

        table = None
        try:
            from triton.language import core
            from triton.language.extra.cuda import libdevice as cuda

            raw = getattr(_ORIGINALS.get(name) or getattr(cuda, name, None), "__wrapped__", None)
            if raw is not None:
                copy = types.FunctionType(raw.__code__, {**raw.__globals__, "core": _TableCore(core)}, name,
                                          raw.__defaults__, raw.__closure__)
                n = sum(1 for p in inspect.signature(raw).parameters if not p.startswith("_"))
                got = copy(*([None] * n))
                table = got if isinstance(got, dict) else None
        except Exception:  # noqa: BLE001 - a libdevice of another shape: no check
            table = None
        _TABLES[name] = table
    return _TABLES[name]


def check_dtypes(name: str, types: tuple) -> None:
    """Raise the compiler's error where CUDA's libdevice has no ``name`` for these argument dtypes (after the
    promotion it applies to mixed float arguments): the interpreter would compute asin of fp16, which the GPU
    compiler refuses (Triton 3.6 / 3.9: a KeyError on the dtypes at the call)."""
    table = dtype_table(name)
    if not table or types in table:
        return
    floats = [t for t in types if t.is_floating()]
    if floats:
        widest = max(floats, key=lambda t: t.primitive_bitwidth)
        if tuple(widest if (t.is_floating() or t.is_int()) else t for t in types) in table:
            return
    want = ", ".join("(" + ", ".join(str(t) for t in k) + ")" for k in table)
    advice = "cast to fp32 first" if floats else "cast to one of those first"
    raise ValueError(f"libdevice.{name}: input arg type does not match. Expect one of {want}, got "
                     f"({', '.join(str(t) for t in types)}) (the GPU compiler refuses it too: {advice})")


def explain_refusal(source_line: str, text: str) -> str | None:
    """The compiler's bare ``KeyError: (triton.language.float16)`` at a libdevice call, said as the interpreter
    says it: which dtypes the function has (``ir`` and the resources gate)."""
    import re

    got = re.findall(r"triton\.language\.(\w+)", text)
    call = re.search(r"(?:libdevice|math)\.(\w+)\s*\(", source_line or "")
    if not got or call is None or not dtype_table(call.group(1)):
        return None
    import triton.language as tl

    types = tuple(getattr(tl, g, None) for g in got)
    if any(t is None for t in types):
        return None
    try:
        check_dtypes(call.group(1), types)
    except ValueError as exc:
        return str(exc)
    return None


def _make(name: str):
    import triton.language as tl

    if name in _INT_BITS:
        kind, fn = _INT_BITS[name]
    else:
        fn = _UNARY.get(name) or _UNARY_INT.get(name) or _UNARY_INT64.get(name) or _BINARY.get(name) or _TERNARY[name]
        kind = "int32" if name in _UNARY_INT else "int64" if name in _UNARY_INT64 else "float"

    def impl(*args, _semantic=None, _builder=None, **kwargs):
        from triton.runtime import interpreter as I

        from tritondbg.interp import lowp, values

        tensors = [a if isinstance(a, tl.tensor) else I.interpreter_semantic.to_tensor(a) for a in args]
        check_dtypes(name, tuple(t.dtype.scalar for t in tensors))
        decoded = [_decode(t) for t in tensors]
        floats = [ty for _, ty in decoded if ty.is_floating()]
        out_ty = ({"int32": tl.int32, "int64": tl.int64, "same": decoded[0][1]}.get(kind)
                  or (floats[0] if floats else tl.float32))
        with np.errstate(all="ignore"):
            out = np.asarray(fn(*[d for d, _ in decoded]))
        if out.dtype == object:  # Python ints of the bit functions: wrap to the output's width, as the GPU does
            width = np.dtype(I._get_np_dtype(out_ty)).itemsize * 8
            out = np.vectorize(lambda v: v & ((1 << width) - 1), otypes=[np.uint64])(out).astype(
                np.dtype(f"uint{width}")).view(I._get_np_dtype(out_ty))
        if lowp.type_name(out_ty) in lowp.LOWP:  # bf16/fp8 in: computed in fp32, rounded to the input's type
            out = lowp.encode(out.astype(np.float32), out_ty)
        elif name in _CONVERSIONS and out.dtype.kind == "f":  # PTX cvt: saturated, NaN 0 (int64: its smallest)
            out = values.gpu_int(out, I._get_np_dtype(out_ty))
        else:
            out = out.astype(I._get_np_dtype(out_ty))
        is_block = any(t.type.is_block() for t in tensors)
        handle = I.TensorHandle(out if is_block else out.reshape(1), out_ty)
        _shadow(name, handle, [t.handle for t in tensors])
        if is_block:
            return tl.tensor(handle, tl.block_type(out_ty, list(out.shape)))
        return tl.tensor(handle, out_ty)

    impl.__name__ = name
    return impl


def _shadow(name: str, out, ins: list) -> None:
    """The sanitizers follow a libdevice call as any elementwise op: its masked-off lanes (a load without
    ``other=``) stay so in the result, and a NaN / Inf it makes from finite inputs is the first one
    (``libdevice.rsqrt`` of a negative mean, as ``tl.rsqrt``)."""
    from tritondbg.interp.shadow_pads import _elementwise_pad
    from tritondbg.interp.shadow_values import PAD, _check_new_nonfinite, floatlike

    if any(PAD in (getattr(h, "attr", None) or ()) for h in ins):
        _elementwise_pad(out, ins)
    if floatlike(out):
        _check_new_nonfinite(f"libdevice.{name}", out, ins)


_impls: dict[str, object] = {}


def implementation(name: str):
    if name not in _impls:
        _impls[name] = _make(name)
        _impls[name]._tdbg_libdevice = name  # (the compile check maps it back: gpu_compile._original)
    return _impls[name]


def _modules() -> list:
    """The libdevice modules, imported: ``tl.extra.cuda.libdevice`` in a kernel body may be the first import of
    it, which would hand the kernel the unpatched functions."""
    import importlib

    out = []
    for name in MODULES:
        try:
            out.append(importlib.import_module(name))
        except Exception:  # noqa: BLE001 - a Triton without that backend's module
            pass
    return out


def patch(scope, fn) -> None:
    """Inside an interpreter patch scope: replace the libdevice functions visible to ``fn`` (imported names in
    its module and the libdevice modules' attributes) by numpy implementations; the scope restores them."""
    import sys

    for module in _modules():
        for name in SUPPORTED:
            if hasattr(module, name) and getattr(getattr(module, name), "__module__", "") == module.__name__:
                if module.__name__ == CUDA_MODULE:
                    _ORIGINALS.setdefault(name, getattr(module, name))
                scope.set_attr(module, name, implementation(name))
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    if module is None:
        return
    for key, value in list(fn.__globals__.items()):
        if getattr(value, "__module__", "") in MODULES and callable(value):
            name = getattr(value, "__name__", key)
            if name in SUPPORTED:
                scope.set_attr(module, key, implementation(name))
