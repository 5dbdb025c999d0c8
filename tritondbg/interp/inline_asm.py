"""``tl.inline_asm_elementwise`` under the interpreter, for the one-instruction PTX snippets kernels inline.

Triton's interpreter raises ``NotImplementedError`` on every inline asm, so a kernel that pins one operation's
rounding (``add.rn.f32`` against FMA contraction, ``div.rn.f32`` for IEEE division), takes a fast approximation
(``tanh.approx.f32``, ``ex2.approx.f32``) or reads a clock (``mov.u64 $0, %globaltimer;``) cannot run on the
CPU at all. Here such a snippet is recognised (one instruction, ``pack=1``, one output ``$0``, inputs ``$1``..
in the order of ``args``) and computed with numpy as the GPU computes it:

- ``add/sub/mul/div.rn.f32`` (and ``.f64``, ``.ftz``): IEEE round to nearest even, as numpy's float32 ops;
  ``fma.rn.f32``: the product and sum in float64, rounded once to float32 (exact but for double-rounding
  ties); ``min/max/abs/neg``;
- ``.approx`` functions (``tanh ex2 lg2 rcp sqrt rsqrt sin cos``) and their ``.rn`` forms: the exact function
  rounded to float32 (the GPU's ``.approx`` results differ from it within their documented error);
- ``mov.b32 / mov.b64`` (a bit cast to the output dtype) and the special registers ``%globaltimer``,
  ``%clock``/``%clock64`` (the host's nanosecond counter), ``%smid`` (0).

The operands' bits are read as the instruction's type (an ``=r`` float operand is the same 32 bits as ``=f``).
An input may also be a PTX constant: ``0f3FB8AA3B`` (a float32's bits, as ptxas and Triton's own snippets write
log2(e)), ``0d...`` (a float64's), a decimal (``2.0``, ``-1e-6``: rounded to the instruction's type) or an integer.
Anything else (several instructions, packed operands, predicates) still raises, with the asm and the advice to
read it with ``tritondbg ir``. A NaN/Inf a snippet makes from finite inputs is the sanitizer's (``nan_inf``) as
any op's. Installed with the other shims (interp/shims.py).
"""
from __future__ import annotations

import re
import time

import numpy as np

_TYPES = {"f32": np.float32, "f64": np.float64, "b32": np.uint32, "b64": np.uint64, "u32": np.uint32,
          "u64": np.uint64, "s32": np.int32, "s64": np.int64}


def _ftz(x):
    """Subnormals to zero of the same sign (``.ftz``)."""
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)


def _fma(a, b, c):
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(a.dtype)


# name -> (operands, numpy function); every one works on arrays of the instruction's float type
_FLOAT_OPS = {
    "add": (2, np.add), "sub": (2, np.subtract), "mul": (2, np.multiply), "div": (2, np.divide),
    "min": (2, np.fmin), "max": (2, np.fmax), "fma": (3, _fma), "abs": (1, np.abs), "neg": (1, np.negative),
    "tanh": (1, np.tanh), "ex2": (1, np.exp2), "lg2": (1, np.log2), "rcp": (1, np.reciprocal), "sqrt": (1, np.sqrt),
    "rsqrt": (1, lambda x: np.reciprocal(np.sqrt(x))), "sin": (1, np.sin), "cos": (1, np.cos),
}
_MODIFIERS = {"rn", "approx", "ftz", "full"}
_SPECIAL = {"%globaltimer": time.time_ns, "%clock64": time.perf_counter_ns, "%clock": time.perf_counter_ns,
            "%smid": lambda: 0}


class UnsupportedAsm(NotImplementedError):
    """An inline asm snippet the interpreter cannot run."""


def _instruction(asm: str):
    """(opcode parts, operand texts) of a one-instruction snippet, else None."""
    text = " ".join(asm.replace("\n", " ").split()).strip().rstrip(";").strip()
    if not text or ";" in text or "{" in text or "@" in text:
        return None
    m = re.fullmatch(r"([a-z0-9.]+)\s+(.+)", text)
    if m is None:
        return None
    return m.group(1).split("."), [o.strip() for o in m.group(2).split(",")]


_HEX_FLOAT = {"0f": (8, np.uint32, np.float32), "0d": (16, np.uint64, np.float64)}
_DECIMAL = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def _constant(text: str, np_type):
    """A PTX constant operand as a 0-d array of ``np_type``, or None when ``text`` is not one."""
    head = text[:2].lower()
    if head in _HEX_FLOAT and re.fullmatch(r"[0-9a-fA-F]+", text[2:]) and len(text) - 2 == _HEX_FLOAT[head][0]:
        _, bits_type, float_type = _HEX_FLOAT[head]
        value = np.array(int(text[2:], 16), dtype=bits_type).view(float_type)
        if value.dtype.itemsize != np.dtype(np_type).itemsize:
            raise UnsupportedAsm(f"constant {text} is {value.dtype.itemsize * 8}-bit for a "
                                 f"{np.dtype(np_type).itemsize * 8}-bit instruction")
        return value.view(np_type)
    if re.fullmatch(r"[+-]?(0[xX][0-9a-fA-F]+|\d+)", text) and np.dtype(np_type).kind in "iu":
        return np.array(int(text, 0), dtype=np_type)
    if _DECIMAL.fullmatch(text) and np.dtype(np_type).kind == "f":
        return np.array(float(text), dtype=np_type)
    return None


def _operand(text: str, values: list, np_type):
    """The array an operand ``$i`` (i >= 1) stands for, its bits read as ``np_type``; a constant as itself."""
    m = re.fullmatch(r"\$(\d+)", text)
    if m is None:
        constant = _constant(text, np_type)
        if constant is not None:
            return constant
    if m is None or not 1 <= int(m.group(1)) <= len(values):
        raise UnsupportedAsm(f"operand {text!r}")
    data = np.asarray(values[int(m.group(1)) - 1].data)
    if data.dtype.itemsize != np.dtype(np_type).itemsize:
        raise UnsupportedAsm(f"operand {text} holds {data.dtype.itemsize * 8}-bit values for a "
                             f"{np.dtype(np_type).itemsize * 8}-bit instruction")
    return data.view(np_type)


def evaluate(asm: str, values: list, shape: tuple):
    """The result of ``asm`` on ``values`` (TensorHandles, broadcast to ``shape``), as an array of the
    instruction's type; raises UnsupportedAsm for a snippet outside the list above."""
    parsed = _instruction(asm)
    if parsed is None:
        raise UnsupportedAsm("more than one instruction")
    parts, operands = parsed
    op, type_name = parts[0], parts[-1]
    if operands[0] != "$0":
        raise UnsupportedAsm("the result must be $0")
    if op == "mov" and len(operands) == 2 and operands[1] in _SPECIAL:
        np_type = _TYPES.get(type_name)
        if np_type is None:
            raise UnsupportedAsm(f"mov.{type_name}")
        return np.full(shape or (1,), _SPECIAL[operands[1]](), dtype=np_type)
    if op == "mov" and len(parts) == 2 and type_name in ("b32", "b64") and len(operands) == 2:
        bits = _operand(operands[1], values, _TYPES[type_name])
        return np.full(shape or (1,), bits, dtype=bits.dtype) if bits.ndim == 0 else bits.copy()
    if op not in _FLOAT_OPS or type_name not in ("f32", "f64") or not set(parts[1:-1]) <= _MODIFIERS:
        raise UnsupportedAsm(f"instruction {'.'.join(parts)}")
    arity, fn = _FLOAT_OPS[op]
    if len(operands) != arity + 1:
        raise UnsupportedAsm(f"{'.'.join(parts)} with {len(operands) - 1} inputs")
    np_type = _TYPES[type_name]
    args = [_operand(o, values, np_type) for o in operands[1:]]
    ftz = "ftz" in parts
    if ftz:
        args = [_ftz(a) for a in args]
    with np.errstate(all="ignore"):
        out = np.asarray(fn(*args), dtype=np_type)
    if out.ndim == 0:  # constants only: one value for every lane
        out = np.full(shape or (1,), out, dtype=np_type)
    return _ftz(out) if ftz else out


def install():
    """Replace the interpreter builder's ``create_inline_asm`` (which raises); returns the undo."""
    from triton.runtime import interpreter as I

    builder = I.InterpreterBuilder
    original = builder.create_inline_asm

    class _Call:
        def __init__(self, results):
            self.results = results

        def get_result(self, i):
            return self.results[i]

    def create_inline_asm(self, asm, constraints, values, types, is_pure, pack):
        types = list(types) if isinstance(types, (list, tuple)) else [types]
        try:
            if pack != 1 or len(types) != 1:
                raise UnsupportedAsm(f"pack={pack}, {len(types)} outputs (one output, pack=1 is supported)")
            ty = types[0]
            elem = getattr(ty, "element_ty", ty)
            shape = tuple(getattr(ty, "shape", ()) or ())
            bits = evaluate(asm, values, shape)
            out = I._get_np_dtype(elem)
            if bits.dtype.itemsize != out.itemsize:
                raise UnsupportedAsm(f"a {bits.dtype.itemsize * 8}-bit result for a {elem} output")
            data = bits.view(out).reshape(shape or (1,))
        except UnsupportedAsm as e:
            raise NotImplementedError(f"inline asm the interpreter cannot run ({e}): {' '.join(asm.split())!r}; "
                                      "the CPU runs one-instruction PTX snippets only (see `tritondbg ir` for "
                                      "what the GPU runs)") from None
        out = I.TensorHandle(np.ascontiguousarray(data), elem)
        from tritondbg.interp.shadow_values import _check_new_nonfinite

        _check_new_nonfinite("inline asm", out, values)  # the sanitizer's first NaN/Inf, as for any other op
        return _Call([out])

    builder.create_inline_asm = create_inline_asm
    return lambda: setattr(builder, "create_inline_asm", original)
