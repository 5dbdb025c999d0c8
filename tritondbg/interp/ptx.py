"""Straight-line PTX on numpy: the inline-asm snippets Triton kernels carry, run lane-wise on the CPU.

A snippet is one instruction or a ``{ ... }`` block of them with ``.reg`` declarations; no predicates, labels or
branches. Every register is an array over the lanes (one lane per group of ``pack`` elements, interp/inline_asm.py)
holding raw bits of its width; an instruction reads its operands as its own type, as the GPU does (the bits of an
``=r`` float are the float). Constants: ``0f3FB8AA3B`` (a float32's bits), ``0d...``, decimals, integers.

Instructions (the ones kernels inline, see inline_asm.py for why):
- ``add sub mul div min max fma abs neg`` and the ``.approx`` functions (``tanh ex2 lg2 rcp sqrt rsqrt sin cos``)
  on ``.f32`` / ``.f64`` with ``.rn .approx .ftz .full``: IEEE round to nearest even (``fma``: rounded once);
- ``add sub mul.lo and or xor not shl shr`` on integer / bit types (wrapping; ``shr.s``: arithmetic);
- ``mov`` (a bit copy; ``{a, b}`` packs halves low first, ``mov.b32 {a, b}, $1`` unpacks), the special registers
  ``%globaltimer %clock %clock64 %smid``;
- ``cvt``: ``.e4m3x2 .e5m2x2 .f16x2 .bf16x2`` from two ``.f32`` (the first source to the high half; ``.satfinite``
  clamps to the largest finite value, NaN stays NaN; ``.relu`` clamps at 0), ``.e4m3x2 .e5m2x2`` from one
  ``.f16x2`` / ``.bf16x2`` (high half to high byte: the form Triton emits itself), ``.f16x2`` from ``.e4m3x2`` /
  ``.e5m2x2``, ``.ue8m0x2`` (an MX scale's exponent byte, ``.rz`` / ``.rp``) from two ``.f32`` or one
  ``.bf16x2``, ``.f16 .bf16`` from ``.f32`` (``.rn``), ``.f32`` from ``.f16 .bf16``, float to integer
  (``.rni .rzi .rmi .rpi``, saturating as the GPU does), integer to float (``.rn``) and integer to integer
  (truncated, or extended by the source's signedness).
Anything else raises UnsupportedAsm naming it.
"""
from __future__ import annotations

import re
import time

import numpy as np

_WIDTH = {"8": 8, "16": 16, "32": 32, "64": 64}
_FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_PACKED = {"e4m3x2": 16, "e5m2x2": 16, "ue8m0x2": 16, "f16x2": 32, "bf16x2": 32}
_SPECIAL = {"%globaltimer": time.time_ns, "%clock64": time.perf_counter_ns, "%clock": time.perf_counter_ns,
            "%smid": lambda: 0}
_MODIFIERS = {"rn", "approx", "ftz", "full"}


class UnsupportedAsm(NotImplementedError):
    """An inline asm snippet the interpreter cannot run."""


def width(type_name: str) -> int:
    """Bits of a PTX type: ``f32`` 32, ``bf16`` 16, ``u8`` 8, ``e4m3x2`` 16, ``pred`` refused."""
    if type_name in _PACKED:
        return _PACKED[type_name]
    m = re.fullmatch(r"(?:b|u|s|f|bf)(8|16|32|64)", type_name)
    if m is None:
        raise UnsupportedAsm(f"type .{type_name}")
    return _WIDTH[m.group(1)]


def _ftz(x):
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)


def _fma(a, b, c):
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(a.dtype)


_FLOAT_OPS = {
    "add": (2, np.add), "sub": (2, np.subtract), "mul": (2, np.multiply), "div": (2, np.divide),
    "min": (2, np.fmin), "max": (2, np.fmax), "fma": (3, _fma), "abs": (1, np.abs), "neg": (1, np.negative),
    "tanh": (1, np.tanh), "ex2": (1, np.exp2), "lg2": (1, np.log2), "rcp": (1, np.reciprocal), "sqrt": (1, np.sqrt),
    "rsqrt": (1, lambda x: np.reciprocal(np.sqrt(x))), "sin": (1, np.sin), "cos": (1, np.cos),
}
_INT_OPS = {"add": (2, np.add), "sub": (2, np.subtract), "mul": (2, np.multiply), "and": (2, np.bitwise_and),
            "or": (2, np.bitwise_or), "xor": (2, np.bitwise_xor), "not": (1, np.invert)}


def _split(text: str) -> list[str]:
    """Operands split on the commas outside ``{}``."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def statements(asm: str) -> list[tuple[str, list[str], list[str]]]:
    """The snippet as ("reg", [type], names) and ("op", opcode parts, operands) statements, in order."""
    text = " ".join(asm.replace("\n", " ").split()).strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if re.search(r"\{\s*(\.reg|[a-z]+\.)", text):
        raise UnsupportedAsm("nested blocks")
    out = []
    for stmt in (s.strip() for s in text.split(";")):
        if not stmt:
            continue
        if stmt.startswith("@") or re.match(r"[\w$]+:", stmt):
            raise UnsupportedAsm(f"predicates, labels and branches ({stmt!r})")
        m = re.fullmatch(r"\.reg\s+\.(\w+)\s+(.+)", stmt)
        if m:
            names = []
            for n in _split(m.group(2)):
                v = re.fullmatch(r"(%?\w+)<(\d+)>", n)
                names += [f"{v.group(1)}{i}" for i in range(int(v.group(2)))] if v else [n]
            out.append(("reg", [m.group(1)], names))
            continue
        m = re.fullmatch(r"([a-z][a-z0-9.]*)\s+(.+)", stmt)
        if m is None:
            raise UnsupportedAsm(f"statement {stmt!r}")
        out.append(("op", m.group(1).split("."), _split(m.group(2))))
    if not any(kind == "op" for kind, _, _ in out):
        raise UnsupportedAsm("no instruction")
    return out


def _constant(text: str, type_name: str):
    """A PTX constant as raw bits of ``type_name``'s width, or None when ``text`` is not one."""
    bits = width(type_name)
    head = text[:2].lower()
    if head in ("0f", "0d") and re.fullmatch(r"[0-9a-fA-F]+", text[2:]):
        size = 32 if head == "0f" else 64
        if len(text) - 2 != size // 4:
            return None
        if size != bits:
            raise UnsupportedAsm(f"constant {text} is {size}-bit for a {bits}-bit instruction")
        return np.array(int(text[2:], 16), dtype=_UINT[size])
    if re.fullmatch(r"[+-]?(0[xX][0-9a-fA-F]+|\d+)", text) and type_name[0] in "bus":
        return np.array(int(text, 0) % (1 << bits), dtype=_UINT[bits])
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", text) and type_name[0] == "f" and bits >= 32:
        return np.array(float(text), dtype=_FLOAT[type_name]).view(_UINT[bits])
    return None


class Machine:
    """Registers (name -> (bits array, width)) of one snippet's run over ``lanes`` lanes."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        self.regs: dict[str, tuple[np.ndarray, int]] = {}

    def declare(self, name: str, bits: int, value=None) -> None:
        self.regs[name] = (np.zeros(self.lanes, _UINT[max(bits, 8)]) if value is None else value, bits)

    def bits(self, text: str, type_name: str) -> np.ndarray:
        """The raw bits of operand ``text`` read as ``type_name`` (unsigned array of that width)."""
        want = width(type_name)
        if text.startswith("{"):
            parts = _split(text[1:-1])
            piece = want // len(parts)
            acc = np.zeros(self.lanes, _UINT[want])
            for i, p in enumerate(parts):
                acc |= self.bits(p, f"b{piece}").astype(_UINT[want]) << _UINT[want](i * piece)
            return acc
        if text in _SPECIAL:
            return np.full(self.lanes, _SPECIAL[text](), _UINT[want])
        if text in self.regs:
            data, have = self.regs[text]
            if have == want:
                return data
            if type_name[0] in "f" or have < want and type_name[0] not in "bus":
                raise UnsupportedAsm(f"operand {text} holds {have}-bit values for a {want}-bit instruction")
            return data.astype(_UINT[want])  # integer / bit types: truncated or zero-extended
        constant = _constant(text, type_name)
        if constant is None:
            raise UnsupportedAsm(f"operand {text!r}")
        return np.broadcast_to(constant, (self.lanes,))

    def value(self, text: str, type_name: str) -> np.ndarray:
        """Operand ``text`` as numbers of ``type_name`` (floats, signed or unsigned integers)."""
        b = self.bits(text, type_name)
        if type_name in _FLOAT:
            return b.view(_FLOAT[type_name])
        if type_name == "bf16":
            return self.value_of(b, "bf16")
        return b.view(_SINT[width(type_name)]) if type_name[0] == "s" else b

    @staticmethod
    def value_of(bits: np.ndarray, type_name: str) -> np.ndarray:
        """Raw 16-bit halves as float32 numbers of ``f16`` / ``bf16``."""
        b = bits.astype(np.uint16)
        if type_name == "bf16":
            return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)
        return b.view(np.float16).astype(np.float32)

    def write(self, text: str, result: np.ndarray, bits: int) -> None:
        """Store ``result`` (raw bits of ``bits`` width) into register ``text`` (or unpack into ``{a, b}``)."""
        result = np.broadcast_to(np.asarray(result), (self.lanes,)).astype(_UINT[max(bits, 8)])
        if text.startswith("{"):
            parts = _split(text[1:-1])
            piece = bits // len(parts)
            for i, p in enumerate(parts):
                self.write(p, (result >> _UINT[max(bits, 8)](i * piece)) & _UINT[max(bits, 8)]((1 << piece) - 1),
                           piece)
            return
        if text not in self.regs:
            raise UnsupportedAsm(f"destination {text!r} (not an output or a declared register)")
        _, have = self.regs[text]
        if have < bits:
            raise UnsupportedAsm(f"a {bits}-bit result into {have}-bit register {text}")
        self.regs[text] = (result.astype(_UINT[max(have, 8)]), have)


def _to_float_bits(x: np.ndarray, type_name: str, sat: bool, relu: bool) -> np.ndarray:
    """Round float32/64 values to ``type_name`` (f16 bf16 e4m3 e5m2) to nearest even: raw bits."""
    import torch

    x = np.asarray(x, np.float32)
    if relu:
        x = np.where(np.isnan(x), x, np.maximum(x, 0))
    target = {"f16": torch.float16, "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn,
              "e5m2": torch.float8_e5m2}[type_name]
    if sat:
        big = float(torch.finfo(target).max)
        x = np.where(np.isnan(x), x, np.clip(x, -big, big))
    t = torch.from_numpy(np.ascontiguousarray(x)).to(target)
    return t.view({1: torch.uint8, 2: torch.int16}[t.element_size()]).numpy().view(_UINT[t.element_size() * 8])


def _from_fp8(b: np.ndarray, type_name: str) -> np.ndarray:
    import torch

    t = torch.from_numpy(np.ascontiguousarray(b.astype(np.uint8))).view(
        {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[type_name])
    return t.to(torch.float32).numpy()


def _ue8m0(x: np.ndarray, up: bool, sat: bool, relu: bool) -> np.ndarray:
    """float32 values to E8M0 (an exponent alone: 2 ** (code - 127), 0xFF NaN) rounded to zero, or up (``.rp``):
    what MX kernels compute their block scales with on Blackwell (torchao's "rceil")."""
    x = np.asarray(x, np.float32)
    if relu:
        x = np.where(np.isnan(x), x, np.maximum(x, 0))
    a = np.abs(x).astype(np.float64)
    mant, exp = np.frexp(np.where(np.isfinite(a) & (a > 0), a, 1.0))  # a = mant * 2 ** exp, 0.5 <= mant < 1
    code = exp - 1 + 127 + (up & (mant != 0.5))
    code = np.where(a > 0, code, 0)  # 0 (or less than 2 ** -127): code 0, the smallest
    code = np.clip(code, 0, 255)
    code = np.where(code > 254, 254 if sat else 255, code)
    code = np.where(np.isinf(a), 254 if sat else 255, code)
    return np.where(np.isnan(a), 255, code).astype(np.uint16)


def _cvt_ue8m0(m: Machine, mods: set, src: str, ops: list[str], sat: bool, relu: bool) -> None:
    """``cvt.rz|rp{.satfinite}{.relu}.ue8m0x2.f32 d, a, b`` (a to the high byte) and ``.ue8m0x2.bf16x2``."""
    if not mods & {"rz", "rp"}:
        raise UnsupportedAsm("cvt.ue8m0x2 without .rz or .rp")
    up = "rp" in mods
    if src == "f32":
        if len(ops) != 3:
            raise UnsupportedAsm("cvt.ue8m0x2.f32 takes two sources")
        hi, lo = (_ue8m0(m.value(o, "f32"), up, sat, relu) for o in ops[1:])
    else:
        b = m.bits(ops[1], src)
        lo, hi = (_ue8m0(m.value_of(part, "bf16"), up, sat, relu) for part in (b & np.uint32(0xFFFF),
                                                                               b >> np.uint32(16)))
    m.write(ops[0], (hi << np.uint16(8)) | lo, 16)


def _cvt(m: Machine, parts: list[str], ops: list[str]) -> None:
    mods = set(parts[1:-2])
    dst, src = parts[-2], parts[-1]
    sat, relu = "satfinite" in mods or "sat" in mods, "relu" in mods
    if dst in ("e4m3x2", "e5m2x2", "f16x2", "bf16x2") and src == "f32":
        if len(ops) != 3:
            raise UnsupportedAsm(f"cvt.{dst}.{src} takes two sources")
        half = width(dst) // 2
        hi, lo = (_to_float_bits(m.value(o, "f32"), dst[:-2], sat, relu).astype(_UINT[width(dst)]) for o in ops[1:])
        m.write(ops[0], (hi << _UINT[width(dst)](half)) | lo, width(dst))
        return
    if dst == "ue8m0x2" and src in ("f32", "bf16x2"):
        _cvt_ue8m0(m, mods, src, ops, sat, relu)
        return
    if dst in ("e4m3x2", "e5m2x2") and src in ("f16x2", "bf16x2"):  # the form Triton itself emits for bf16 -> fp8
        b = m.bits(ops[1], src)
        half = "bf16" if src == "bf16x2" else "f16"
        lo, hi = (m.value_of(part, half) for part in (b & np.uint32(0xFFFF), b >> np.uint32(16)))
        lo, hi = (_to_float_bits(v, dst[:-2], sat, relu).astype(np.uint16) for v in (lo, hi))
        m.write(ops[0], (hi << np.uint16(8)) | lo, 16)
        return
    if dst == "f16x2" and src in ("e4m3x2", "e5m2x2"):
        b = m.bits(ops[1], src)
        lo = _to_float_bits(_from_fp8(b & np.uint16(0xFF), src[:-2]), "f16", False, relu).astype(np.uint32)
        hi = _to_float_bits(_from_fp8(b >> np.uint16(8), src[:-2]), "f16", False, relu).astype(np.uint32)
        m.write(ops[0], (hi << np.uint32(16)) | lo, 32)
        return
    if len(ops) != 2:
        raise UnsupportedAsm(f"cvt.{dst}.{src} with {len(ops) - 1} sources")
    if dst in ("f16", "bf16") and src in ("f32", "f64"):
        m.write(ops[0], _to_float_bits(m.value(ops[1], src), dst, sat, relu), 16)
    elif dst in ("f32", "f64") and src in ("f16", "bf16", "f32", "f64"):
        m.write(ops[0], m.value(ops[1], src).astype(_FLOAT[dst]).view(_UINT[width(dst)]), width(dst))
    elif dst[0] in "us" and src in ("f16", "bf16", "f32", "f64"):
        rounding = next((f for k, f in (("rni", np.rint), ("rzi", np.trunc), ("rmi", np.floor), ("rpi", np.ceil))
                         if k in mods), None)
        if rounding is None:
            raise UnsupportedAsm(f"cvt.{dst}.{src} without an integer rounding (.rni .rzi .rmi .rpi)")
        kind = _SINT if dst[0] == "s" else _UINT
        info = np.iinfo(kind[width(dst)])
        v = rounding(m.value(ops[1], src).astype(np.float64))
        v = np.where(np.isnan(v), 0, np.clip(v, info.min, info.max))  # the GPU saturates; NaN -> 0
        m.write(ops[0], v.astype(kind[width(dst)]).view(_UINT[width(dst)]), width(dst))
    elif dst in ("f32", "f64", "f16") and src[0] in "us":
        m.write(ops[0], m.value(ops[1], src).astype(_FLOAT[dst]).view(_UINT[width(dst)]), width(dst))
    elif dst[0] in "usb" and src[0] in "usb":
        v = m.value(ops[1], src)
        v = v.astype(_SINT[width(dst)] if src[0] == "s" and width(dst) > width(src) else _UINT[width(dst)])
        m.write(ops[0], v.view(_UINT[width(dst)]), width(dst))
    else:
        raise UnsupportedAsm(f"cvt.{dst}.{src}")


def _shift(m: Machine, op: str, type_name: str, ops: list[str]) -> None:
    bits = width(type_name)
    a = m.value(ops[1], type_name)
    n = np.minimum(m.value(ops[2], "u32").astype(np.int64), bits)
    if op == "shl":
        r = np.where(n >= bits, 0, a.astype(np.uint64) << n.astype(np.uint64)).astype(_UINT[bits])
    elif type_name[0] == "s":
        r = (a.astype(np.int64) >> np.minimum(n, 63)).astype(_SINT[bits]).view(_UINT[bits])
    else:
        r = np.where(n >= bits, 0, a.astype(np.uint64) >> n.astype(np.uint64)).astype(_UINT[bits])
    m.write(ops[0], r, bits)


def execute(m: Machine, parts: list[str], ops: list[str]) -> None:
    """Run one instruction on the machine's registers."""
    op, type_name = parts[0], parts[-1]
    if op == "cvt":
        return _cvt(m, parts, ops)
    if op == "mov":
        if len(ops) != 2:
            raise UnsupportedAsm("mov with other than one source")
        return m.write(ops[0], m.bits(ops[1], type_name), width(type_name))
    if op in ("shl", "shr") and len(ops) == 3:
        return _shift(m, op, type_name, ops)
    if type_name in ("f32", "f64"):
        if op not in _FLOAT_OPS or not set(parts[1:-1]) <= _MODIFIERS:
            raise UnsupportedAsm(f"instruction {'.'.join(parts)}")
        arity, fn = _FLOAT_OPS[op]
        if len(ops) != arity + 1:
            raise UnsupportedAsm(f"{'.'.join(parts)} with {len(ops) - 1} inputs")
        args = [m.value(o, type_name) for o in ops[1:]]
        ftz = "ftz" in parts
        if ftz:
            args = [_ftz(a) for a in args]
        with np.errstate(all="ignore"):
            out = np.asarray(fn(*args), dtype=_FLOAT[type_name])
        out = _ftz(out) if ftz else out
        return m.write(ops[0], np.broadcast_to(out, (m.lanes,)).view(_UINT[width(type_name)]), width(type_name))
    if type_name[0] in "bus" and op in _INT_OPS and set(parts[1:-1]) <= {"lo"}:
        arity, fn = _INT_OPS[op]
        if len(ops) != arity + 1:
            raise UnsupportedAsm(f"{'.'.join(parts)} with {len(ops) - 1} inputs")
        bits = width(type_name)
        args = [m.bits(o, type_name).astype(np.uint64) for o in ops[1:]]
        with np.errstate(all="ignore"):
            out = fn(*args) & np.uint64((1 << bits) - 1)
        return m.write(ops[0], out.astype(_UINT[bits]), bits)
    raise UnsupportedAsm(f"instruction {'.'.join(parts)}")
