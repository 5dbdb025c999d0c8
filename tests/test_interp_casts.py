"""Casts to an integer type whose lanes lose their value (interp/casts.py): a float out of the integer's range or
NaN (undefined: LLVM makes it poison; a quantiser missing its clamp), and a store's implicit narrowing of an integer
that changes it (helper-126: int64 -381 stored into int8 as -125). Both ran silent before."""
from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = textwrap.dedent('''
import sys, torch, triton, triton.language as tl

@triton.jit
def quant(x_ptr, q_ptr, inv_scale, n, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("nan")).to(tl.float32) * inv_scale
    if CLAMP:
        x = tl.clamp(x, -128.0, 127.0)
    tl.store(q_ptr + offs, x.to(tl.int8), mask=offs < n)  # CAST

@triton.jit
def quant_wide(x_ptr, q_ptr, inv_scale, n, CLAMP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    q = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32) * inv_scale
    q = q.to(tl.int64)  # in range: no finding here
    if CLAMP:
        q = tl.minimum(tl.maximum(q, -128), 127)
    tl.store(q_ptr + offs, q, mask=offs < n)  # NARROW

x = torch.linspace(-3, 3, 100, device="cuda").to(torch.bfloat16)
q = torch.empty(100, dtype=torch.int8, device="cuda")
inv_scale, clamp = float(sys.argv[1]), sys.argv[2] == "clamp"
quant[(1,)](x, q, inv_scale, 100, CLAMP=clamp, BLOCK=128)
print("quant", q[:3].tolist())
quant_wide[(1,)](x, q, inv_scale, 100, CLAMP=clamp, BLOCK=128)
print("wide", q[:3].tolist())
''')


def _line(tag):
    return next(i for i, ln in enumerate(PROG.splitlines(), 1) if ln.rstrip().endswith("# " + tag))


@pytest.mark.parametrize("inv_scale, clamp, told", [("127", "clamp", False), ("40", "no", False),
                                                   ("127", "no", True)])
def test_an_integer_cast_that_loses_the_value_is_a_warning_at_its_line(tmp_path, cli_env, inv_scale, clamp, told):
    (tmp_path / "prog.py").write_text(PROG)
    p = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py", inv_scale, clamp], cli_env, cwd=tmp_path)
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: cast in")]
    assert "quant [" in p.stdout and "wide [" in p.stdout, p.stderr[-3000:]
    if not told:  # in range (clamped, or a scale that keeps |x| * 40 <= 120); the NaN padding lanes are not told
        assert p.returncode == 0 and not warn, p.stderr[-3000:]
        return
    assert p.returncode != 0, p.stderr[-3000:]  # --strict fails on a warning
    assert len(warn) == 2, p.stderr[-3000:]
    cast, narrow = warn
    assert f"cast in quant at prog.py:{_line('CAST')}" in cast, cast
    assert "the cast from fp32 to int8 of -381 (lane (0,); 66 lane(s) NaN or outside -128..127" in cast, cast
    assert f"stored at line {_line('CAST')} into q_ptr[0]" in cast and "Clamp to -128..127 before" in cast, cast
    assert f"cast in quant_wide at prog.py:{_line('NARROW')}" in narrow, narrow
    assert "the store's implicit cast from int64 to int8 changed -381 to -125 (lane (0,); " in narrow, narrow
    # (-128..255 keep their byte, read signed or unsigned: helper-130's int4 packer stores 178 as -78 on purpose)
    assert "lane(s) outside -128..255" in narrow and " 66 lane(s)" not in narrow, narrow
    assert "stored into q_ptr[0]" in narrow, narrow


DROPPED = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def kept_out(x_ptr, o_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=float("inf"))  # the padding lanes: inf
    big = x * 1e6
    i = big.to(tl.int32)  # out of range where |x| > 2147, not stored
    tl.store(o_ptr + offs, tl.where(tl.abs(big) < 1e9, i, -1), mask=offs < n)
    w = (offs.to(tl.int64) * 2654435761).to(tl.uint32)  # a hash truncates on purpose: an explicit cast
    tl.store(h_ptr + offs, w.to(tl.int32, bitcast=True), mask=offs < n)

x = torch.tensor([0.5, -1.25, 3000.0, float("nan")] * 8, device="cuda")
o = torch.empty(32, dtype=torch.int32, device="cuda")
h = torch.empty(32, dtype=torch.int32, device="cuda")
kept_out[(1,)](x, o, h, 32, BLOCK=64)
print("ok", o[:4].tolist())
''')


def test_lanes_a_where_drops_padding_and_explicit_integer_casts_are_not_told(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(DROPPED)
    p = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "cast" not in p.stderr, p.stderr[-3000:]
    assert "ok [500000, -1250000, -1, -1]" in p.stdout, p.stdout


NAN = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def index_of(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs).to(tl.int32))  # NAN

x = torch.tensor([1.0, 2.0, float("nan"), 4.0], dtype=torch.bfloat16, device="cuda")
o = torch.empty(4, dtype=torch.int32, device="cuda")
index_of[(1,)](x, o, BLOCK=4)
print("ok", o[:2].tolist())
''')


def test_a_bf16_nan_cast_to_an_integer_is_told_as_nan(tmp_path, cli_env):
    """(Triton casts bf16 to an integer through fp32: the type told is the kernel's own, helper-127.)"""
    (tmp_path / "prog.py").write_text(NAN)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    line = next(i for i, ln in enumerate(NAN.splitlines(), 1) if ln.rstrip().endswith("# NAN"))
    warn = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: warning: cast in index_of")]
    assert p.returncode == 0 and "ok [1, 2]" in p.stdout, p.stderr[-3000:]
    assert len(warn) == 1 and f"prog.py:{line}" in warn[0], p.stderr[-3000:]
    assert "the cast from bf16 to int32 of NaN (lane (2,); 1 lane(s) NaN or outside" in warn[0], warn[0]


ATOMIC_NAN = textwrap.dedent('''
import torch, triton, triton.language as tl
from triton.language.extra import libdevice

@triton.jit
def count(c_ptr, v_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(c_ptr + offs, tl.load(v_ptr + offs))  # ATOMIC

@triton.jit
def rowwise(x_ptr, q_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    amax = tl.max(tl.abs(x), 0)
    q = libdevice.llrint(127.0 * (x / amax))  # an all-zero row: 0 / 0
    tl.store(q_ptr + row * N + tl.arange(0, N), q)  # LLRINT

c = torch.zeros(4, dtype=torch.int32, device="cuda")
count[(1,)](c, torch.tensor([1, 2, 3 << 32, 4], dtype=torch.int64, device="cuda"), BLOCK=4)
x = torch.randn(2, 8, device="cuda")
x[1] = 0
q = torch.empty(2, 8, dtype=torch.int8, device="cuda")
rowwise[(2,)](x, q, N=8)
print("ok", c.tolist())
''')


def test_an_atomic_narrowing_and_a_nan_through_llrint_say_what_they_are(tmp_path, cli_env):
    """helper-127: an int64 operand of an int32 atomic read "the store's ... stored"; an all-zero row's 0 / 0 through
    llrint (INT64_MIN here) stored into int8 advised a clamp, which would store -128."""
    (tmp_path / "prog.py").write_text(ATOMIC_NAN)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "ok [1, 2, 0, 4]" in p.stdout, p.stderr[-3000:]
    warn = {ln.split(" in ")[1].split(" at ")[0]: ln for ln in p.stderr.splitlines()
            if ln.startswith("tritondbg: warning: cast in")}
    assert set(warn) == {"count", "rowwise"}, p.stderr[-3000:]
    assert "the atomic's implicit cast from int64 to int32 changed 12884901888 to 0" in warn["count"], warn["count"]
    assert "reached through the atomic into c_ptr[2]" in warn["count"] and "a store" not in warn["count"]
    assert "changed -9223372036854775808 to 0" in warn["rowwise"] and "a NaN upstream" in warn["rowwise"], \
        warn["rowwise"]
    assert "Clamp" not in warn["rowwise"], warn["rowwise"]


def test_float_to_int_conversions_past_the_range_store_what_the_gpu_stored(cli_env):
    """tests/bench/cvt_probe.py's kernel (``.to(int8 .. int64)``, ``.to(uint16 .. uint64)``, libdevice ``llrint`` /
    ``float2int_rn`` of 381, 40000, 3e9, 1e30, NaN, inf, ...) under the interpreter against the H100's table recorded
    in tests/bench/runs/s58_cvt_probe.txt (Triton 3.6): numpy's values differed in 23 cells of the signed columns
    (40000 -> int8: 64, the GPU -1; NaN -> int32: -2**31, the GPU 0; float2int_rn(3e9): -2**31, the GPU 2**31 - 1;
    session 57) and 16 of the unsigned ones (-381 -> uint32: 4294966915, the GPU 0; 1e30 -> uint16: 0, the GPU 65535;
    NaN -> uint64: 0, the GPU 2**63; session 58)."""
    import ast
    import os

    from conftest import REPO

    rows = [ln.split(" | ") for ln in (REPO / "tests/bench/runs/s58_cvt_probe.txt").read_text().splitlines()
            if ln.count(" | ") >= 7 and not ln.startswith("value")]
    gpu = [[int(cell.split(" / ")[0]) for cell in row[1:]] for row in rows]
    env = dict(cli_env, CVT_PROBE_CHILD="1")
    p = run_cli(["interpret", "--no-sanitize", "--", sys.executable, str(REPO / "tests/bench/cvt_probe.py")], env,
                cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    here = ast.literal_eval(p.stdout.strip().splitlines()[-1])
    assert len(gpu) == len(here) == 11 and os.path.exists(REPO / "tests/bench/cvt_probe.py")
    assert len(gpu[0]) == len(here[0]) == 10
    assert here == gpu, [(i, j, here[i][j], gpu[i][j]) for i in range(11) for j in range(10) if here[i][j] != gpu[i][j]]


PACK = textwrap.dedent('''
import torch, triton, triton.language as tl

@triton.jit
def pack_int4(v_ptr, o_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    lo = tl.load(v_ptr + 2 * i)
    hi = tl.load(v_ptr + 2 * i + 1)
    tl.store(o_ptr + i, (hi << 4) | lo)  # int32 into int8: the byte is the point

v = torch.randint(0, 16, (64,), dtype=torch.int32, device="cuda")
o = torch.empty(32, dtype=torch.int8, device="cuda")
pack_int4[(1,)](v, o, BLOCK=32)
u = o.to(torch.int32) & 0xFF
print("roundtrip", torch.equal(torch.stack([u & 0xF, u >> 4], 1).reshape(-1), v))
''')


def test_a_packer_storing_bytes_is_not_told(tmp_path, cli_env):
    """helper-130: an int4 packer's (hi << 4) | lo stored into int8 (178 kept as -78, its byte) was told as a
    narrowing that changed it, with a clamp advised that would corrupt the packing."""
    (tmp_path / "prog.py").write_text(PACK)
    p = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert p.returncode == 0 and "cast" not in p.stderr and "roundtrip True" in p.stdout, p.stdout + p.stderr[-3000:]


def test_the_lanes_of_several_programs_are_said_as_such():
    """helper-143: "128 lane(s)" under the finding's one pid were the lanes of two programs."""
    from tritondbg.interp.casts import message

    e = dict(example=((0,), -381.0, -125), lanes=128, programs={(0, 0, 0), (1, 0, 0)}, op="cast", src="fp32",
             dst="int8", lo=-128, hi=127)
    assert "(lane (0,); 128 lane(s) of 2 programs NaN or outside -128..127" in message(e), message(e)
    e["programs"] = {(0, 0, 0)}
    assert "(lane (0,); 128 lane(s) NaN or outside" in message(e), message(e)
