"""Scenarios for the inline-asm shim (tritondbg/interp/inline_asm.py): one-instruction PTX snippets as kernels
inline them (round-to-nearest fp32 ops, with ``=f`` and with ``=r`` constraints; ``.approx`` functions; a bit
cast; a clock read), checked against torch; a block of two instructions; a branching one the CPU cannot
run; and tl.extra.cuda's
globaltimer() / smid() with libdevice's integer bit functions (popc, clz, ffs, brev, mulhi)."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

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


@triton.jit
def branchy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    y = tl.inline_asm_elementwise("{ .reg .pred done; L: setp.ge.f32 done, $1, 0f00000000; @!done bra L; mov.b32 $0, $1; }",
                                  "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1)  # MARK: branchy
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


def _branchy_launch(x, y):
    out = torch.empty_like(x)
    branchy_kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
    return out


branchy = Scenario("branchy", make_inputs, _branchy_launch, lambda x, y: x, _CASES, kernels=[branchy_kernel])


@triton.jit
def extras_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    t0 = tl.extra.cuda.globaltimer()
    tl.store(out_ptr + offs, libdevice.popc(x), mask=m)
    tl.store(out_ptr + n + offs, libdevice.clz(x), mask=m)
    tl.store(out_ptr + 2 * n + offs, libdevice.ffs(x), mask=m)
    tl.store(out_ptr + 3 * n + offs, libdevice.brev(x), mask=m)
    tl.store(out_ptr + 4 * n + offs, libdevice.mulhi(x, x + 12345), mask=m)
    t1 = tl.extra.cuda.globaltimer()
    tl.store(out_ptr + 5 * n + offs, (t1 >= t0).to(tl.int32) + tl.extra.cuda.smid(), mask=m)


def make_ints(case, dtype, device, generator):
    n = case.params["n"]
    x = torch.randint(-2**31, 2**31 - 12346, (n,), generator=generator, dtype=torch.int64)
    x[:3] = torch.tensor([0, -1, 1])
    return dict(x=x.to(torch.int32).to(device))


def _extras_launch(x):
    out = torch.empty(6, x.numel(), dtype=torch.int32, device=x.device)
    extras_kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
    return out


def _extras_reference(x):
    def i32(v):
        return (v + 2**31) % 2**32 - 2**31
    rows = []
    for v in x.tolist():
        u = v % 2**32
        rows.append([bin(u).count("1"), 32 - u.bit_length(), (u & -u).bit_length(), i32(int(f"{u:032b}"[::-1], 2)),
                     i32((v * (v + 12345)) >> 32), 1])
    return torch.tensor(rows, dtype=torch.int32).t().contiguous().to(x.device)


extras = Scenario("extras", make_ints, _extras_launch, _extras_reference,
                  [Case("tiny", params=dict(n=77), dtypes=("float32",))], kernels=[extras_kernel])


@triton.jit
def asm_nan_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    r = tl.inline_asm_elementwise("sqrt.approx.f32 $0, $1;", "=f,f", [x - 0.5], dtype=tl.float32, is_pure=True,
                                  pack=1)  # MARK: asm_nan (BUG: x + 0.5)
    tl.store(out_ptr + offs, r * 2.0, mask=m)


def _asm_nan_launch(x, y):
    out = torch.empty_like(x)
    asm_nan_kernel[(triton.cdiv(x.numel(), 32),)](x.abs(), out, x.numel(), BLOCK=32)
    return out


asm_nan = Scenario("asm_nan", make_inputs, _asm_nan_launch, lambda x, y: 2.0 * torch.sqrt(x.abs() + 0.5), _CASES,
                   kernels=[asm_nan_kernel])



@triton.jit
def quant_kernel(x_ptr, q_ptr, q4_ptr, h_ptr, n, BLOCK: tl.constexpr):
    """Quantisation as kernels inline it: a per-element fp8 through a .b16 register (pack=1, int32 out), four fp8
    per .b32 register (pack=4), and bf16 pairs (pack=2, 16-bit out) from a bf16 tensor's fp32 upcast."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    bits = tl.inline_asm_elementwise(
        "{ .reg .b16 p; cvt.rn.satfinite.e4m3x2.f32 p, $1, $1; cvt.u32.u16 $0, p; }", "=r,f", [x],
        dtype=tl.int32, is_pure=True, pack=1)
    tl.store(q_ptr + offs, bits.to(tl.uint8), mask=m)
    q4 = tl.inline_asm_elementwise(
        "{ .reg .b16 lo, hi; cvt.rn.satfinite.e4m3x2.f32 lo, $2, $1; cvt.rn.satfinite.e4m3x2.f32 hi, $4, $3; "
        "mov.b32 $0, {lo, hi}; }", "=r,r,r,r,r", [x], dtype=tl.uint8, is_pure=True, pack=4)
    tl.store(q4_ptr + offs, q4, mask=m)
    h = tl.inline_asm_elementwise("cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,r,r", [x], dtype=tl.bfloat16, is_pure=True,
                                  pack=2)
    tl.store(h_ptr + offs, h, mask=m)


def make_quant_inputs(case, dtype, device, generator):
    n = case.params["n"]
    x = torch.randn(n, generator=generator) * 100
    x[:4] = torch.tensor([1000.0, -1000.0, 2.0 ** -9, 0.0])
    return dict(x=x.to(device))


def _quant_launch(x):
    q = torch.empty(x.numel(), dtype=torch.uint8, device=x.device)
    q4 = torch.empty_like(q)
    h = torch.empty(x.numel(), dtype=torch.bfloat16, device=x.device)
    quant_kernel[(triton.cdiv(x.numel(), 64),)](x, q, q4, h, x.numel(), BLOCK=64)
    return q.to(torch.int32), q4.to(torch.int32), h.float()


def _quant_reference(x):
    fp8 = x.clamp(-448, 448).to(torch.float8_e4m3fn).view(torch.uint8).to(torch.int32)
    return fp8, fp8, x.to(torch.bfloat16).float()


quant = Scenario("quant", make_quant_inputs, _quant_launch, _quant_reference,
                 [Case("tiny", params=dict(n=256), dtypes=("float32",))], kernels=[quant_kernel])
