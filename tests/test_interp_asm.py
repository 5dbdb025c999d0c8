"""Inline PTX under the interpreter (tritondbg/interp/inline_asm.py): one-instruction snippets run on the CPU as
the GPU runs them; anything else is an error that names the snippet."""
from pathlib import Path

import numpy as np
import pytest

from conftest import run_cli

pytestmark = pytest.mark.interpreter

CASES = Path(__file__).resolve().parent / "interp_data" / "inline_asm_cases.py"


class _H:  # a TensorHandle's data is all evaluate reads
    def __init__(self, data):
        self.data = np.asarray(data)


def test_snippets_compute_as_the_gpu_does():
    from tritondbg.interp.inline_asm import evaluate

    a = np.array([1.0, 1e-40, -3.5, 16777216.0], dtype=np.float32)
    b = np.array([3.0, 2.0, 0.25, 1.0], dtype=np.float32)
    got = evaluate("add.rn.f32 $0, $1, $2;", [_H(a), _H(b)], (4,))
    assert got.dtype == np.float32 and np.array_equal(got, a + b)  # 16777216 + 1 rounds to even, as float32 does
    got = evaluate(" div.rn.f32  $0, $1, $2 ", [_H(a.view(np.int32)), _H(b.view(np.int32))], (4,))  # "=r" operands
    assert np.array_equal(got, a / b)
    got = evaluate("add.rn.ftz.f32 $0, $1, $2;", [_H(a), _H(np.zeros(4, np.float32))], (4,))
    assert got[1] == 0.0 and got[0] == 1.0  # the subnormal input flushed to zero
    bits = evaluate("mov.b32 $0, $1;", [_H(a)], (4,))
    assert np.array_equal(bits.view(np.float32), a)
    assert evaluate("mov.u64 $0, %globaltimer;", [], ()).dtype == np.uint64


@pytest.mark.parametrize("asm, values", [
    ("{ .reg .pred p; setp.lt.f32 p, $1, 0f00000000; @p mov.b32 $0, $1; }", 1),  # a predicate
    ("{ L: add.rn.f32 $0, $1, $1; bra L; }", 1),                                  # a label and a branch
    ("add.rz.f32 $0, $1, $2;", 2),                         # a rounding mode numpy does not have
    ("add.rn.f32 $0, $1, $2;", 1),                         # an operand that is not there
    ("cvt.rs.satfinite.e4m3x4.f32 $0, {$1, $1, $1, $1}, $1;", 1),  # stochastic rounding (sm_100a)
    ("{ .reg .f32 t; add.rn.f32 u, $1, $1; }", 1),         # a register never declared
    ("{ .reg .b16 h; add.rn.f32 $0, h, $1; }", 1),         # a 16-bit register in a 32-bit float op
])
def test_other_snippets_are_refused(asm, values):
    from tritondbg.interp.inline_asm import UnsupportedAsm, evaluate

    with pytest.raises(UnsupportedAsm):
        evaluate(asm, [_H(np.ones(4, np.float32))] * values, (4,))


def test_a_width_mismatch_is_refused():
    from tritondbg.interp.inline_asm import UnsupportedAsm, evaluate

    with pytest.raises(UnsupportedAsm, match="16-bit values for a 32-bit instruction"):
        evaluate("add.rn.f32 $0, $1, $1;", [_H(np.ones(4, np.uint16))], (4,))


def test_kernel_with_inline_ptx_runs_under_interpret_and_its_ptx_compiles(cli_env):
    out = run_cli(["interpret", f"{CASES}::inline_asm"], env=cli_env)
    assert out.returncode == 0 and "PASS inline_asm" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    # the snippets are the GPU's own: ptxas takes them (MUFU.TANH is tanh.approx.f32)
    out = run_cli(["ir", f"{CASES}::inline_asm", "--arch", "sm_90", "--stage", "sass"], env=cli_env)
    assert out.returncode == 0 and "MUFU.TANH" in out.stdout, out.stderr[-2000:]


def test_a_block_runs_and_a_snippet_the_cpu_cannot_run_is_an_error_naming_it(cli_env):
    out = run_cli(["interpret", f"{CASES}::two_instructions"], env=cli_env)  # { .reg .f32 t; mul; add }
    assert out.returncode == 0 and "PASS two_instructions" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    out = run_cli(["interpret", f"{CASES}::branchy"], env=cli_env)
    assert out.returncode != 0
    line = next(i for i, ln in enumerate(CASES.read_text().splitlines(), 1) if "# MARK: branchy" in ln)
    assert "ERROR branchy" in out.stdout and f"inline_asm_cases.py:{line - 1}" in out.stdout, out.stdout[-2000:]
    assert "inline asm the interpreter cannot run (predicates, labels and branches" in out.stdout
    assert "@!done bra L" in out.stdout


def test_blocks_packed_conversions_and_pack_as_the_gpu_computes_them():
    """What quantising kernels inline: a ``.b16`` register between two cvt (a Triton fp8 row-quant kernel's),
    fp32 pairs to e4m3 / e5m2 / bf16 / f16 (first source in the high half, ``.satfinite`` clamps), back from e4m3,
    integer widening, ``pack=2`` / ``pack=4`` register packing (narrow elements low first), vector operands."""
    import torch

    from tritondbg.interp.inline_asm import evaluate

    x = np.array([0.3, -1.7, 500.0, -1e6, 3.0, np.nan, 0.0, 2.0 ** -9], dtype=np.float32)
    e4m3 = torch.from_numpy(np.clip(x, -448, 448)).to(torch.float8_e4m3fn).view(torch.uint8).numpy()
    got = evaluate("{ .reg .b16 packed; cvt.rn.satfinite.e4m3x2.f32 packed, $1, $1; cvt.u32.u16 $0, packed; }",
                   [_H(x)], (8,), out_dtype=np.int32)
    assert np.array_equal(got.view(np.uint32), e4m3.astype(np.uint32) * 257), got  # the byte twice
    y = x[::-1].copy()
    got = evaluate("cvt.rn.bf16x2.f32 $0, $1, $2;", [_H(x), _H(y)], (8,), out_dtype=np.uint32)
    bf = lambda v: torch.from_numpy(v).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)  # noqa: E731
    assert np.array_equal(got, (bf(x).astype(np.uint32) << 16) | bf(y))
    e5 = torch.from_numpy(np.clip(x, -57344, 57344)).to(torch.float8_e5m2).view(torch.uint8).numpy()
    got = evaluate("cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;", [_H(x), _H(x)], (8,), out_dtype=np.uint16)
    assert np.array_equal(got, e5.astype(np.uint16) * 257)
    # pack=2 over 16-bit outputs: one .b32 register holds two bf16 results, element 0 in the low half
    pairs = evaluate("cvt.rn.bf16x2.f32 $0, $2, $1;", [_H(x)], (8,), out_dtype=np.uint16, pack=2)
    assert np.array_equal(pairs, bf(x))
    # pack=4 fp8 out of fp32: {$4, $3, $2, $1} puts element 0 in the low byte
    q = evaluate("{ .reg .b16 lo, hi; cvt.rn.satfinite.e4m3x2.f32 lo, $2, $1; cvt.rn.satfinite.e4m3x2.f32 hi, $4, $3;"
                 " mov.b32 $0, {lo, hi}; }", [_H(x)], (8,), out_dtype=np.uint8, pack=4)
    assert np.array_equal(q, e4m3)
    back = evaluate("{ .reg .b16 p; .reg .b32 h; cvt.rn.satfinite.e4m3x2.f32 p, $1, $1; cvt.rn.f16x2.e4m3x2 h, p;"
                    " mov.b32 {$0, p}, h; }", [_H(x)], (8,), out_dtype=np.float16)
    ref = torch.from_numpy(e4m3).view(torch.float8_e4m3fn).to(torch.float16).numpy()
    assert np.array_equal(back, ref, equal_nan=True)
    got = evaluate("cvt.rn.satfinite.e4m3x2.bf16x2 $0, $1;", [_H(bf(x))], (8,), out_dtype=np.uint8, pack=2)
    via_bf16 = torch.from_numpy(bf(x).view(np.int16)).view(torch.bfloat16).float().clamp(-448, 448)
    assert np.array_equal(got, via_bf16.to(torch.float8_e4m3fn).view(torch.uint8).numpy())
    ints = evaluate("cvt.rni.s32.f32 $0, $1;", [_H(x)], (8,), out_dtype=np.int32)
    assert list(ints) == [0, -2, 500, -1000000, 3, 0, 0, 0]
    assert list(evaluate("cvt.s32.s8 $0, $1;", [_H(np.array([-3, 5], np.int8))], (2,), out_dtype=np.int32)) == [-3, 5]
    assert list(evaluate("shr.s32 $0, $1, 1;", [_H(np.array([-8, 8], np.int32))], (2,), out_dtype=np.int32)) == [-4, 4]


def test_cuda_timer_smid_and_libdevice_bit_functions_run_under_interpret(cli_env):
    """``tl.extra.cuda.globaltimer()`` / ``smid()`` (the plain interpreter: "Did you forget to add @triton.jit ?")
    and libdevice's popc / clz / ffs / brev / mulhi (stubs that return None there), bit-exact against Python."""
    out = run_cli(["interpret", f"{CASES}::extras"], env=cli_env)
    assert out.returncode == 0 and "PASS extras" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    assert "max abs err 0," in out.stdout


def test_the_first_nan_an_asm_snippet_makes_is_a_finding_at_its_line(cli_env):
    out = run_cli(["interpret", f"{CASES}::asm_nan"], env=cli_env)
    line = next(i for i, ln in enumerate(CASES.read_text().splitlines(), 1) if "# MARK: asm_nan" in ln)
    assert out.returncode == 1, out.stdout[-2000:]
    assert f"nan_inf tests/interp_data/inline_asm_cases.py:{line - 1}" in out.stdout, out.stdout[-2000:]
    assert "first NaN that its inputs did not hold: inline asm(" in out.stdout


def test_ptx_constants_are_operands_too():
    """``0f...`` (a float32's bits, as Triton's own snippets write log2(e)), ``0d...``, decimals and integers:
    computed as the GPU does, one value for every lane; a constant of the wrong width or kind is refused."""
    from tritondbg.interp.inline_asm import UnsupportedAsm, evaluate

    a = np.array([1.0, -2.5, 3e-3, 1e30], dtype=np.float32)
    log2e = np.array(0x3FB8AA3B, dtype=np.uint32).view(np.float32)
    got = evaluate("mul.rn.f32 $0, $1, 0f3FB8AA3B;", [_H(a)], (4,))
    assert got.dtype == np.float32 and np.array_equal(got, a * log2e)
    assert np.array_equal(evaluate("mul.f32 $0, $1, 2.0;", [_H(a)], (4,)), a * np.float32(2))
    assert np.array_equal(evaluate("fma.rn.f32 $0, $1, -1e-1, 0f3F800000;", [_H(a)], (4,)),
                          (a.astype(np.float64) * np.float64(np.float32(-0.1)) + 1.0).astype(np.float32))
    got = evaluate("add.rn.f64 $0, $1, 0d3FF0000000000000;", [_H(a.astype(np.float64))], (4,))
    assert np.array_equal(got, a.astype(np.float64) + 1.0)
    assert np.array_equal(evaluate("mov.b32 $0, 0f3F800000;", [], (2, 2)).view(np.float32), np.ones((2, 2)))
    with pytest.raises(UnsupportedAsm, match="64-bit for a 32-bit"):
        evaluate("add.rn.f32 $0, $1, 0d3FF0000000000000;", [_H(a)], (4,))
    for bad in ("add.rn.f32 $0, $1, %r7;", "add.rn.f32 $0, $1, 0f3F80;", "add.rn.f32 $0, $1, two;"):
        with pytest.raises(UnsupportedAsm, match="operand"):
            evaluate(bad, [_H(a)], (4,))



def test_a_quantising_kernel_runs_under_interpret_and_its_ptx_compiles(cli_env):
    """fp8 through a .b16 register, four fp8 per register (pack=4), bf16 pairs (pack=2): bit-exact against torch's
    conversions; ptxas takes the same snippets (the GPU's F2FP instructions)."""
    out = run_cli(["interpret", f"{CASES}::quant"], env=cli_env)
    assert out.returncode == 0 and "PASS quant" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    assert out.stdout.count("max abs err 0,") == 3, out.stdout[-2000:]
    out = run_cli(["ir", f"{CASES}::quant", "--arch", "sm_90", "--stage", "sass"], env=cli_env)
    assert out.returncode == 0 and "F2FP" in out.stdout, out.stderr[-2000:]


def test_several_outputs_take_their_registers_in_turn():
    """``dtype=(a, b)``: each output's registers in turn, then the inputs' (a bf16x2 word split in two halves)."""
    from tritondbg.interp.inline_asm import evaluate

    words = np.array([0x3F80C000, 0x12345678], dtype=np.uint32)
    lo, hi = evaluate("mov.b32 {$0, $1}, $2;", [_H(words)], (2,), out_dtype=[np.uint16, np.uint16])
    assert list(lo) == [0xC000, 0x5678] and list(hi) == [0x3F80, 0x1234]
    s, d = evaluate("{ add.rn.f32 $0, $2, $3; sub.rn.f32 $1, $2, $3; }",
                    [_H(np.float32([1, 2])), _H(np.float32([0.5, 4]))], (2,), out_dtype=[np.float32, np.float32])
    assert list(s) == [1.5, 6.0] and list(d) == [0.5, -2.0]


def test_e8m0_scales_round_to_zero_or_up_as_mx_kernels_ask():
    """helper-119: torchao's MX kernels compute a block scale's exponent with ``cvt.rp.ue8m0x2.f32 $0, 0.0, $1``
    (sm_100's "rceil"): "inline asm the interpreter cannot run". An E8M0 code is 127 + log2 of the scale, rounded
    to zero (.rz) or up (.rp); 0xFF is NaN (and overflow without .satfinite, which keeps 0xFE)."""
    import math

    from tritondbg.interp.inline_asm import evaluate

    x = np.array([1.0, 1.5, 0.75, 448.0, 3.0e-3, 2.0 ** -127, 0.0, np.nan, np.inf, 3.0e38], dtype=np.float32)
    finite = [float(v) for v in x[:6]]
    up = evaluate("cvt.rp.ue8m0x2.f32 $0, 0.0, $1;", [_H(x)], (10,), out_dtype=np.uint16)
    assert list(up[:6]) == [127 + math.ceil(math.log2(v)) for v in finite], up  # (the high byte: 0.0's code, 0)
    assert list(up[6:]) == [0, 255, 255, 255], up
    down = evaluate("cvt.rz.satfinite.ue8m0x2.f32 $0, $1, $1;", [_H(x)], (10,), out_dtype=np.uint16)
    low = down & 0xFF
    assert list(low[:6]) == [127 + math.floor(math.log2(v)) for v in finite], low
    assert list(low[6:]) == [0, 255, 254, 254] and np.array_equal(down >> 8, low), down
    with pytest.raises(Exception, match="without .rz or .rp"):
        evaluate("cvt.rn.ue8m0x2.f32 $0, $1, $1;", [_H(x)], (10,), out_dtype=np.uint16)
