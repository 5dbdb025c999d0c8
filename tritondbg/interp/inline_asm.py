"""``tl.inline_asm_elementwise`` under the interpreter, for the straight-line PTX kernels inline.

Triton's interpreter raises ``NotImplementedError`` on every inline asm, so a kernel that pins one operation's
rounding (``add.rn.f32`` against FMA contraction, ``div.rn.f32`` for IEEE division), takes a fast approximation
(``tanh.approx.f32``, ``ex2.approx.f32``), reads a clock (``mov.u64 $0, %globaltimer;``) or quantises through the
hardware's conversions (``{ .reg .b16 p; cvt.rn.satfinite.e4m3x2.f32 p, $1, $1; cvt.u32.u16 $0, p; }``,
``cvt.rn.bf16x2.f32`` with ``pack=2``) cannot run on the CPU at all. Here the snippet is run with numpy as the GPU
runs it (interp/ptx.py: the instructions, their rounding, the ``.approx`` functions computed exactly: within their
documented error of the GPU's), one lane per group of ``pack`` elements:

- operands ``$0``.. are the output registers, then each input's, in the order of ``args``: an element of 32 bits
  or more is one register, narrower ones are packed low element first into registers of up to 32 bits (``pack=4``
  fp8 elements: one ``.b32``), as Triton's lowering passes them;
- the bits of an operand are read as the instruction's type (an ``=r`` float operand is the same 32 bits as
  ``=f``); a float instruction given a register of another width is refused, as ptxas refuses it.

Anything else (predicates, branches, an instruction not listed in ptx.py) raises, with the asm and the advice to
read it with ``tritondbg ir``. A NaN/Inf a snippet makes from finite inputs is the sanitizer's (``nan_inf``) as
any op's. Installed with the other shims (interp/shims.py).
"""
from __future__ import annotations

import numpy as np

from .ptx import _UINT, Machine, UnsupportedAsm, execute, statements, width

__all__ = ["UnsupportedAsm", "evaluate", "install"]


def _registers(bits: int, pack: int) -> tuple[int, int]:
    """(registers, bits per register) that ``pack`` elements of ``bits`` bits take."""
    if bits >= 32:
        return pack, bits
    per = pack * bits
    return -(-per // 32), min(per, 32)


def _split_elements(flat: np.ndarray, bits: int, pack: int) -> list[np.ndarray]:
    """The registers (raw bits, one entry per lane) holding ``flat``'s elements, ``pack`` per lane."""
    raw = flat.view(_UINT[bits]).reshape(-1, pack)
    n, rbits = _registers(bits, pack)
    if bits >= 32:
        return [np.ascontiguousarray(raw[:, j]) for j in range(pack)]
    per_reg = rbits // bits
    regs = []
    for r in range(n):
        acc = np.zeros(raw.shape[0], _UINT[max(rbits, 8)])
        for i in range(per_reg):
            j = r * per_reg + i
            if j < pack:
                acc |= raw[:, j].astype(acc.dtype) << acc.dtype.type(i * bits)
        regs.append(acc)
    return regs


def _join_elements(regs: list[np.ndarray], bits: int, pack: int) -> np.ndarray:
    """The inverse of ``_split_elements``: (lanes * pack,) raw bits of ``bits`` width."""
    lanes = regs[0].shape[0]
    out = np.zeros((lanes, pack), _UINT[bits])
    if bits >= 32:
        for j in range(pack):
            out[:, j] = regs[j]
        return out.reshape(-1)
    _, rbits = _registers(bits, pack)
    per_reg = rbits // bits
    for j in range(pack):
        r, i = divmod(j, per_reg)
        out[:, j] = (regs[r].astype(np.uint64) >> np.uint64(i * bits)) & np.uint64((1 << bits) - 1)
    return out.reshape(-1)


def _result_type(stmts) -> str:
    """The type of the last instruction that writes ``$0`` (cvt: its destination type)."""
    for kind, parts, ops in reversed(stmts):
        if kind == "op" and ops and ops[0] == "$0":
            return parts[-2] if parts[0] == "cvt" else parts[-1]
    raise UnsupportedAsm("no instruction writes $0")


def evaluate(asm: str, values: list, shape: tuple, out_dtype=None, pack: int = 1):
    """The result of ``asm`` on ``values`` (TensorHandles of one shape or scalars), an array of ``shape`` of
    ``out_dtype``'s bits (None: the type of the instruction that writes ``$0``, as its numpy type); a list of them
    for a list of dtypes (several outputs: each one's registers in turn, then the inputs'). Raises UnsupportedAsm
    for what the CPU cannot run."""
    stmts = statements(asm)
    count = int(np.prod(shape)) if shape else 1
    if pack < 1 or count % pack:
        raise UnsupportedAsm(f"pack={pack} does not divide the {count} elements")
    lanes = count // pack
    several = isinstance(out_dtype, (list, tuple))
    if out_dtype is None:
        kind = _result_type(stmts)
        out_dtype = {"f32": np.float32, "f64": np.float64}.get(kind) or _UINT[width(kind)]
    dtypes = list(out_dtype) if several else [out_dtype]
    m = Machine(lanes)
    k, outs = 0, []
    for dt in dtypes:
        bits = np.dtype(dt).itemsize * 8
        n, rbits = _registers(bits, pack)
        outs.append((dt, bits, [f"${k + i}" for i in range(n)]))
        for i in range(n):
            m.declare(f"${k + i}", rbits)
        k += n
    for v in values:
        data = np.asarray(v.data)
        flat = np.ascontiguousarray(np.broadcast_to(data, shape or (1,)) if data.size != count else data).reshape(-1)
        bits = flat.dtype.itemsize * 8
        rbits = _registers(bits, pack)[1]
        for reg in _split_elements(flat, bits, pack):
            m.declare(f"${k}", rbits, reg)
            k += 1
    for kind, parts, ops in stmts:
        if kind == "reg":
            for name in ops:
                m.declare(name, width(parts[0]))
        else:
            execute(m, parts, ops)
    results = [_join_elements([m.regs[r][0] for r in regs], bits, pack).view(dt).reshape(shape or (1,))
               for dt, bits, regs in outs]
    return results if several else results[0]


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
        elems = [getattr(ty, "element_ty", ty) for ty in types]
        try:
            shape = tuple(getattr(types[0], "shape", ()) or ())
            datas = evaluate(asm, values, shape, out_dtype=[I._get_np_dtype(e) for e in elems], pack=int(pack))
        except UnsupportedAsm as e:
            raise NotImplementedError(f"inline asm the interpreter cannot run ({e}): {' '.join(asm.split())!r}; "
                                      "tritondbg runs on the CPU the straight-line PTX instructions kernels inline "
                                      "(tritondbg/interp/ptx.py lists them), not this one (see `tritondbg ir` for "
                                      "what the GPU runs)") from None
        from tritondbg.interp.shadow_values import _check_new_nonfinite

        outs = [I.TensorHandle(np.ascontiguousarray(d), e) for d, e in zip(datas, elems)]
        for out in outs:
            _check_new_nonfinite("inline asm", out, values)  # the sanitizer's first NaN/Inf, as for any other op
        return _Call(outs)

    builder.create_inline_asm = create_inline_asm
    return lambda: setattr(builder, "create_inline_asm", original)
