"""Scenarios for the inline-asm shim (tritondbg/interp/inline_asm.py): one-instruction PTX snippets as kernels
inline them (round-to-nearest fp32 ops, with ``=f`` and with ``=r`` constraints; ``.approx`` functions; a bit
cast; a clock read), checked against torch; and a two-instruction snippet the CPU cannot run."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def _asm2(a, b, ASM: tl.constexpr, CONSTRAINTS: tl.constexpr):
    return tl.inline_asm_elementwise(ASM, CONSTRAINTS, [a, b], dtype=tl.float32, is_pure=True, pack=1)


@triton.jit
def asm_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.load(y_ptr + offs, mask=m, other=1.0)
    t0 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    tl.store(out_ptr + offs, _asm2(x, y, "add.rn.f32 $0, $1, $2;", "=f,f,f"), mask=m)
    tl.store(out_ptr + n + offs, _asm2(x, y, "div.rn.f32 $0, $1, $2;", "=r,r,r"), mask=m)
    tanh = tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(out_ptr + 2 * n + offs, tanh, mask=m)
    ex2 = tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True,
                                    pack=1)
    tl.store(out_ptr + 3 * n + offs, ex2, mask=m)
    bits = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(out_ptr + 4 * n + offs, bits.to(tl.float32, bitcast=True), mask=m)
    fma = tl.inline_asm_elementwise("fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f", [x, y, y], dtype=tl.float32,
                                    is_pure=True, pack=1)
    tl.store(out_ptr + 5 * n + offs, fma, mask=m)
    t1 = tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)
    tl.store(out_ptr + 6 * n + offs, tl.where(t1 >= t0, 1.0, 0.0) + 0 * x, mask=m)


@triton.jit
def two_instructions_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.inline_asm_elementwise("{ .reg .f32 t; mul.rn.f32 t, $1, $1; add.rn.f32 $0, t, $1; }", "=f,f", [x],
                                  dtype=tl.float32, is_pure=True, pack=1)  # MARK: two_instructions
    tl.store(out_ptr + offs, y, mask=m)


def make_inputs(case, dtype, device, generator):
    n = case.params["n"]
    x = torch.randn(n, generator=generator).to(device)
    y = (torch.rand(n, generator=generator) + 0.5).to(device)
    return dict(x=x, y=y)


def _launch(x, y):
    out = torch.empty(7, x.numel(), device=x.device)
    asm_kernel[(triton.cdiv(x.numel(), 32),)](x, y, out, x.numel(), BLOCK=32)
    return out


def _reference(x, y):
    fma = (x.double() * y.double() + y.double()).float()
    return torch.stack([x + y, x / y, torch.tanh(x), torch.exp2(x), x, fma, torch.ones_like(x)])


def _two_launch(x, y):
    out = torch.empty_like(x)
    two_instructions_kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
    return out


_CASES = [Case("tiny", params=dict(n=77), dtypes=("float32",))]
inline_asm = Scenario("inline_asm", make_inputs, _launch, _reference, _CASES, kernels=[asm_kernel])
two_instructions = Scenario("two_instructions", make_inputs, _two_launch, lambda x, y: x * x + x, _CASES,
                            kernels=[two_instructions_kernel])
