"""bf16/fp16/fp8 arithmetic under the interpreter computes in fp32 and rounds to the storage type, as the GPU
does (lowp.py); plain Triton works on the raw bf16 bit patterns."""
from pathlib import Path

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.interpreter

CASES = Path(__file__).resolve().parent / "interp_data" / "lowp_cases.py"


def _ulps(dtype):
    return torch.finfo(dtype).eps


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_every_op_matches_fp32_rounded_to_the_storage_type(dtype):
    import importlib.util

    spec = importlib.util.spec_from_file_location("lowp_cases_t", CASES)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(37, generator=g) * 3).to(dtype)
    y = (torch.randn(37, generator=g) * 3).to(dtype)
    y[y == 0] = 1.0
    out, ref = mod.run_ops(x, y), mod.ops_reference(x, y)
    ew, ew_ref = out["ew"].float(), ref["ew"].to(dtype).float()
    exact = [0, 1, 2, 3, 4, 5, 6, 7, 12]  # + - * / max min neg where, compare/cast: one rounding, bit for bit
    assert torch.equal(ew[exact], ew_ref[exact]), (ew[exact] - ew_ref[exact]).abs().max()
    scale = ew_ref.abs().clamp_min(1.0)
    assert ((ew - ew_ref).abs() / scale).max() <= 2 * _ulps(dtype)  # exp/sigmoid/tanh casts, fma
    red, red_ref = out["red"].float(), ref["red"].to(dtype).float()
    assert torch.equal(red[1:], red_ref[1:])  # max, min, argmax
    assert abs(red[0] - red_ref[0]) <= 2 * _ulps(dtype) * max(1.0, abs(float(red_ref[0])))  # sum
    tol = 8 * _ulps(dtype) * x.float().abs().sum()  # the scan and the atomic round at every step (as on the GPU)
    assert (out["scan"].float() - ref["scan"]).abs().max() <= tol
    assert (out["acc"].float() - ref["acc"]).abs().max() <= tol


@pytest.mark.parametrize("name", ["vector_add", "swiglu", "ops"])
def test_bf16_kernels_pass_with_no_finding(name):
    if name == "swiglu":
        pytest.importorskip("liger_kernel")
    from tritondbg import runner
    from tritondbg.interp.attribution import KernelReport
    from tritondbg.interp.sanitize import Sanitizer

    rec = runner.run(f"{CASES}::{name}", dtype="bfloat16", instruments=[KernelReport(), Sanitizer()])
    assert rec.passed, [(r.status, r.message, [f["message"] for f in r.findings]) for r in rec.results]
    assert not any(r.findings for r in rec.results)


@pytest.mark.parametrize("tl_name, torch_dtype", [("float8e4nv", "float8_e4m3fn"), ("float8e5", "float8_e5m2")])
def test_fp8_codecs_match_torch(tl_name, torch_dtype):
    import triton.language as tl

    from tritondbg.interp import lowp

    ty, tt = getattr(tl, tl_name), getattr(torch, torch_dtype)
    codes = np.arange(256, dtype=np.uint8)
    ref = torch.from_numpy(codes).view(tt).float().numpy()
    assert np.array_equal(lowp.decode(codes, ty), ref, equal_nan=True)
    finite = np.sort(ref[np.isfinite(ref)])
    f = np.concatenate([finite, (finite[1:] + finite[:-1]) / 2,  # exact values and ties (round to even)
                        np.random.default_rng(0).standard_normal(5000) * 20]).astype(np.float32)
    f = f[np.abs(f) <= finite[-1]]
    assert np.array_equal(lowp.encode(f, ty), torch.from_numpy(f).to(tt).view(torch.uint8).numpy())


def test_bf16_rounds_to_nearest_even_and_keeps_nan_payloads():
    from tritondbg.interp import lowp

    f = np.random.default_rng(1).standard_normal(100000).astype(np.float32) * 1e3
    ref = torch.from_numpy(f).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    assert np.array_equal(lowp.encode_bf16(f), ref)
    nan = np.array([0x7FC50000], dtype=np.uint32).view(np.float32)
    assert int(lowp.encode_bf16(nan)[0]) == 0x7FC5


def test_fp8_elementwise_add_rounds_in_fp32():
    import triton
    import triton.language as tl

    @triton.jit
    def add8(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(o_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))

    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, generator=g).to(torch.float8_e4m3fn)
    y = torch.randn(16, generator=g).to(torch.float8_e4m3fn)
    o = torch.zeros(16, dtype=torch.float8_e4m3fn)
    add8[(1,)](x, y, o, N=16)
    assert torch.equal(o.view(torch.uint8), (x.float() + y.float()).to(torch.float8_e4m3fn).view(torch.uint8))



@pytest.mark.parametrize("torch_dtype", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_fp8_dot_keeps_a_nan_operand_and_matches_torch(torch_dtype):
    """helper-154: tl.dot on e4m3fn operands went through the interpreter's own fp8 -> fp16 conversion, which has no
    NaN for e4m3fn: 0x7F multiplied as 480 (DeepSeek-V3's fp8_gemm over a block its act_quant made NaN returned
    finite values); e5m2 was right. Both formats decode exactly, NaN kept."""
    import triton
    import triton.language as tl

    @triton.jit
    def dot8(a_ptr, b_ptr, c_ptr):
        r = tl.arange(0, 16)
        k = tl.arange(0, 32)
        a = tl.load(a_ptr + r[:, None] * 32 + k[None, :])
        b = tl.load(b_ptr + k[:, None] * 16 + r[None, :])
        tl.store(c_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b))

    g = torch.Generator().manual_seed(0)
    a = (torch.randn(16, 32, generator=g) * 4).to(torch_dtype)
    b = (torch.randn(32, 16, generator=g) * 4).to(torch_dtype)
    a[0, 0] = float("nan")
    c = torch.empty(16, 16)
    dot8[(1,)](a, b, c)
    ref = a.float() @ b.float()
    assert torch.isnan(c[0]).all() and not torch.isnan(c[1:]).any(), c[:2]
    torch.testing.assert_close(c[1:], ref[1:], rtol=1e-6, atol=1e-5)

def test_shadow_decodes_signalling_nan_patterns_quietly():
    import warnings

    import triton.language as tl
    from triton.runtime import interpreter as I

    from tritondbg.interp import shadow

    bf16 = I.TensorHandle(np.array([0x7F81, 0xFF81, 0x3F80], dtype=np.uint16), tl.bfloat16)
    fp32 = I.TensorHandle(np.array([0x7F800001], dtype=np.uint32).view(np.float32), tl.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "invalid value encountered in cast" would raise here
        got = shadow.as_float(bf16)
        assert np.isnan(got[:2]).all() and got[2] == 1.0
        assert np.isnan(shadow.as_float(fp32)).all()


def test_bf16_run_prints_no_runtime_warning(cli_env):
    pytest.importorskip("liger_kernel")
    from conftest import run_cli

    p = run_cli(["interpret", f"{CASES}::swiglu", "--dtype", "bfloat16"], cli_env)
    assert p.returncode == 0, p.stdout[-2000:]
    assert "Warning" not in p.stderr, p.stderr[-2000:]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduction_along_a_strided_axis_accumulates_in_fp32(dtype):
    import triton
    import triton.language as tl

    @triton.jit
    def colsum(x_ptr, s_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr):
        rows, cols = tl.arange(0, M), tl.arange(0, N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
        tl.store(s_ptr + cols, tl.sum(x, axis=0))
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], tl.cumsum(x, axis=0))

    x = torch.ones(4096, 2, dtype=dtype)
    s, c = torch.zeros(2, dtype=dtype), torch.zeros(4096, 2, dtype=dtype)
    colsum[(1,)](x, s, c, M=4096, N=2)
    assert s.tolist() == [4096.0, 4096.0]  # one fp16 rounding after another stalls at 2048
    assert c[-1].tolist() == [4096.0, 4096.0]


def test_float32_atomic_exchange_runs_bit_exact():
    """``tl.atomic_xchg`` on fp32: the plain interpreter's C++ atomics refuse it ("Unsupported data type")."""
    from tritondbg import runner

    rec = runner.run(f"{CASES}::xchg", dtype="float32")
    assert rec.passed, [(r.status, r.message) for r in rec.results]
