"""Out-of-bounds messages a helper found misleading (session 36): a broadcast (expand()ed) view was described by its
shape while the offsets run over its storage ("[37, 131] ... offsets 131..4846 past the end"), and an offset
wrapped by an int32 overflow (around -2**31) gave no hint of the cause."""
from __future__ import annotations

import pytest

from conftest import run_sanitized

pytestmark = pytest.mark.interpreter

KERNELS = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def add_bias(x_ptr, b_ptr, y_ptr, N, sbm, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    b = tl.load(b_ptr + row * sbm + offs, mask=m, other=0.0)
    tl.store(y_ptr + row * N + offs, tl.load(x_ptr + row * N + offs, mask=m) + b, mask=m)


def bias_launch(x, b):
    y = torch.empty_like(x)
    add_bias[(x.shape[0],)](x, b, y, x.shape[1], x.shape[1], BLOCK=64)  # BUG: b's row stride is 0
    return y


bias = Scenario("bias", lambda case, dtype, device, generator: dict(
    x=torch.randn(5, 37, generator=generator), b=torch.randn(1, 37, generator=generator).expand(5, 37)),
    bias_launch, lambda x, b: x + b, [Case("tiny", dtypes=("float32",))], kernels=[add_bias])


@triton.jit
def row_head(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + row * BLOCK + offs, tl.load(x_ptr + row * stride + offs))  # int32: row * stride wraps


def head_launch(x):
    y = torch.empty(3 * 16)
    row_head[(3,)](x, y, 1 << 30, BLOCK=16)
    return y


head = Scenario("head", lambda case, dtype, device, generator: dict(x=torch.randn(64, generator=generator)),
                head_launch, lambda x: x[:16].repeat(3), [Case("tiny", dtypes=("float32",))], kernels=[row_head])
'''


@pytest.fixture
def cases(tmp_path):
    p = tmp_path / "cases.py"
    p.write_text(KERNELS)
    return p


def test_a_broadcast_view_is_described_by_its_storage(cases):
    (r,) = run_sanitized(f"{cases}::bias").results
    f = next(f for f in r.findings if f["kind"] == "out_of_bounds")
    assert "b_ptr (float32[5, 37], a broadcast view with strides (0, 1): 37 element(s) of storage)" in f["message"], \
        f["message"]


def test_an_offset_wrapped_by_an_int32_overflow_says_so(cases):
    (r,) = run_sanitized(f"{cases}::head").results
    f = next(f for f in r.findings if f["kind"] == "out_of_bounds")
    assert "int32 index that overflowed" in f["message"] and "tl.int64" in f["message"], f["message"]
    (r,) = run_sanitized(f"{cases}::bias").results  # small offsets: no such hint
    assert not any("overflowed" in f["message"] for f in r.findings)


ALIASED = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def root(x_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    tl.store(x_ptr + o, tl.sqrt(tl.load(x_ptr + o, mask=m)), mask=m)  # in place: NaN where x < 0


def launch(x):
    root[(1,)](x, x.numel(), BLOCK=64)
    return x, x  # the same tensor under two names (dX written into dY)


s = Scenario("s", lambda case, dtype, device, generator: dict(x=-torch.rand(50, generator=generator) - 1),
             launch, lambda x: (x.abs().sqrt(), x.abs().sqrt()), [Case("tiny", dtypes=("float32",))], kernels=[root])
'''


def test_an_output_returned_twice_is_counted_once(tmp_path):
    """Liger's RMSNorm backward writes dX into dY and returns both: the nan_inf count added each NaN twice."""
    (tmp_path / "aliased.py").write_text(ALIASED)
    (r,) = run_sanitized(f"{tmp_path / 'aliased.py'}::s").results
    f = next(f for f in r.findings if f["kind"] == "nan_inf")
    assert "50 element(s) of the outputs are NaN/Inf" in f["message"], f["message"]
