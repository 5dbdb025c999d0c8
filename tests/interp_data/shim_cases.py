"""Scenarios for the interpreter shims' tests: prints, device_assert, a kernel exception, a wild pointer,
scalar arguments used as tensors, a libdevice call, loop induction variables used as tensors, a block mask and-ed with
a scalar comparison, a builtin bound to a name of this module, device functions of tl and of another module
(shim_helpers.py), tensors reached through a table of data pointers, and
programmatic dependent launch's gdc_wait / gdc_launch_dependents, and libdevice.asin on fp16 (which the GPU
compiler refuses) and on fp32. Lines the tests look for carry a ``# MARK: name``."""
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import gdc_launch_dependents  # a name of this module bound to it
from triton.language.extra.cuda import libdevice as cuda_libdevice  # the backend's module, as tutorial 07 uses it

from tritondbg import Case, Scenario

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tests also run this file with runpy
from shim_helpers import scaled_rsqrt  # noqa: E402 - a device function of another module


@triton.jit
def print_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.static_print("BLOCK =", BLOCK)  # MARK: static_print
    tl.device_print("first", offs)  # MARK: device_print
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def assert_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_assert(offs < 6, "offs out of range")  # MARK: device_assert
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def error_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = x + tl.arange(0, 2 * BLOCK)  # MARK: kernel_error
    tl.store(y_ptr + offs, y, mask=offs < n)


@triton.jit
def wild_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs + 1_000_000_000, mask=offs < n, other=0.0)  # MARK: wild_load
    tl.store(y_ptr + offs - 1_000_000_000, x, mask=offs < n)  # MARK: wild_store


@triton.jit
def scalar_kernel(x_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    e = eps.to(tl.float32)  # MARK: scalar_to
    tl.store(y_ptr + offs, libdevice.rsqrt(x * x + e), mask=offs < n)  # MARK: libdevice


@triton.jit
def backend_libdevice_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    a = tl.extra.cuda.libdevice.asin(tl.sin(x))  # MARK: cuda_attr
    b = cuda_libdevice.atan2(x, 1.0 + x * x)  # MARK: cuda_module
    tl.store(y_ptr + offs, (a + b).to(y_ptr.dtype.element_ty), mask=offs < n)


def _backend_libdevice_launch(x):
    y = torch.empty_like(x)
    backend_libdevice_kernel[(triton.cdiv(x.numel(), 32),)](x, y, x.numel(), BLOCK=32)
    return y


def _backend_libdevice_reference(x):
    x = x.float()
    return torch.asin(torch.sin(x)) + torch.atan2(x, 1.0 + x * x)


@triton.jit
def loop_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(tl.cdiv(n, BLOCK)):
        offs = i.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # MARK: loop_var_to
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    for j in tl.range(0, 2):
        acc += j.to(tl.float32)  # MARK: tl_range_var_to
    for s in tl.static_range(2):  # an int, as compiled code's constexpr: it sizes a tl.arange
        acc += tl.sum(tl.arange(0, 2 * (s + 1)).to(tl.float32), 0)
    tl.store(y_ptr + tl.arange(0, BLOCK), acc)


maximum = tl.maximum  # a builtin under a module-level name, as fla.ops.utils.op binds ``gather = tl.gather``


@triton.jit(do_not_specialize=["T"])
def masks_kernel(x_ptr, y_ptr, T, D: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr):
    o_d = tl.arange(0, BD)
    mask = o_d < D
    for i in range(0, BT):
        mask_t = mask & (i < T)  # MARK: scalar_comparison_mask
        x = tl.load(x_ptr + i * D + o_d, mask=mask_t, other=0.0)
        tl.store(y_ptr + i * D + o_d, maximum(x, 0.0), mask=mask_t)  # MARK: builtin_alias


@triton.jit
def table_kernel(ptrs, sizes, out_ptrs, BLOCK: tl.constexpr, SPILL: tl.constexpr, OVER: tl.constexpr):
    g = tl.program_id(0)  # group g: a tensor reached through the pointer tables (grouped GEMM, MoE), not an argument
    n = tl.load(sizes + g)
    src = tl.load(ptrs + g).to(tl.pointer_type(tl.float32))
    dst = tl.load(out_ptrs + g).to(tl.pointer_type(tl.float32))
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(src + offs, mask=offs < n + OVER)  # MARK: table_load
        tl.store(dst + offs, x * 2.0, mask=offs < n + SPILL)  # MARK: table_store


@triton.jit
def asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, UPCAST: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if UPCAST:
        y = libdevice.asin(x.to(tl.float32))
    else:
        y = libdevice.asin(x)  # MARK: asin_fp16
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=offs < n)


def _asin_launch(upcast):
    def launch(x):
        y = torch.empty_like(x)
        asin_kernel[(triton.cdiv(x.numel(), 4),)](x, y, x.numel(), BLOCK=4, UPCAST=upcast)
        return y
    return launch


@triton.jit
def pdl_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """Triton's tutorial 11 style: wait for the previous grid, signal the next (programmatic dependent launch)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.extra.cuda.gdc_wait()
    x = tl.load(x_ptr + offs, mask=mask)
    gdc_launch_dependents()
    tl.store(y_ptr + offs, x, mask=mask)


def _pdl_launch(x):
    y = torch.empty_like(x)
    pdl_kernel[(triton.cdiv(x.numel(), 4),)](x, y, x.numel(), BLOCK=4, launch_pdl=True)
    return y


@triton.jit
def device_calls_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    s = tl.sum(x * x, axis=0)  # tl.sum and tl.sigmoid are device functions of triton.language.standard
    tl.store(y_ptr + offs, scaled_rsqrt(x, s) + tl.sigmoid(x), mask=offs < n)


def _device_calls_reference(x):
    x = x.float()
    blocks = torch.nn.functional.pad(x, (0, (-x.numel()) % 4)).reshape(-1, 4)
    s = (blocks * blocks).sum(dim=1, keepdim=True).expand(-1, 4).reshape(-1)[: x.numel()]
    return x * torch.rsqrt(s + 1.0) + torch.sigmoid(x)


def _copy_launch(kernel):
    def launch(x):
        y = torch.empty_like(x)
        kernel[(triton.cdiv(x.numel(), 4),)](x, y, x.numel(), BLOCK=4)
        return y
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def _copy(x):
    return x.float()


def _scalar_launch(x):
    y = torch.empty_like(x)
    scalar_kernel[(triton.cdiv(x.numel(), 4),)](x, y, x.numel(), 1e-3, BLOCK=4)
    return y


def _loop_launch(x):
    y = torch.empty(4, dtype=torch.float32, device=x.device)
    loop_kernel[(1,)](x, y, x.numel(), BLOCK=4)
    return y


def _loop_reference(x):
    padded = torch.zeros(-(-x.numel() // 4) * 4)
    padded[:x.numel()] = x.float()
    return padded.reshape(-1, 4).sum(0) + 1.0 + 7.0  # j = 0, 1; static s: 0+1, then 0+1+2+3


def _masks_launch(x):
    y = torch.full_like(x, -1.0)
    masks_kernel[(1,)](x, y, x.numel() // 24, D=24, BT=4, BD=32)  # 4 time steps, the last one past T
    return y


def _masks_reference(x):
    y = x.float().clamp(min=0.0)
    y[(x.numel() // 24) * 24:] = -1.0
    return y


def _table_launch(x, spill=0, over=0):
    # over: the groups are views of one buffer, and group 0's load runs ``over`` elements into group 1
    xs = [x[:5].clone(), x[5:75].clone(), x[75:].clone()] if not over else list(torch.split(x.clone(), [5, 70, x.numel() - 75]))
    outs = [torch.empty_like(t) for t in xs]
    ptrs = torch.tensor([t.data_ptr() for t in xs], dtype=torch.int64)
    out_ptrs = torch.tensor([t.data_ptr() for t in outs], dtype=torch.int64)
    sizes = torch.tensor([t.numel() for t in xs], dtype=torch.int32)
    table_kernel[(3,)](ptrs, sizes, out_ptrs, BLOCK=32, SPILL=spill, OVER=over)
    return torch.cat(outs)


_CASES = [Case("tiny", params=dict(n=10))]
prints = Scenario("prints", make_inputs, _copy_launch(print_kernel), _copy, _CASES, kernels=[print_kernel])
device_assert = Scenario("device_assert", make_inputs, _copy_launch(assert_kernel), _copy, _CASES,
                         kernels=[assert_kernel])
kernel_error = Scenario("kernel_error", make_inputs, _copy_launch(error_kernel), _copy, _CASES, kernels=[error_kernel])
wild = Scenario("wild", make_inputs, _copy_launch(wild_kernel), _copy, _CASES, kernels=[wild_kernel])
scalar_args = Scenario("scalar_args", make_inputs, _scalar_launch, lambda x: torch.rsqrt(x.float() ** 2 + 1e-3),
                       _CASES, kernels=[scalar_kernel])
backend_libdevice = Scenario("backend_libdevice", make_inputs, _backend_libdevice_launch,
                             _backend_libdevice_reference, [Case("tiny", params=dict(n=50), dtypes=("float32", "bfloat16"))],
                             kernels=[backend_libdevice_kernel])
loop_vars = Scenario("loop_vars", make_inputs, _loop_launch, _loop_reference, [Case("tiny", params=dict(n=10),
                                                                                    dtypes=("float32",))],
                     kernels=[loop_kernel])
masks = Scenario("masks", make_inputs, _masks_launch, _masks_reference, [Case("tiny", params=dict(n=72),
                                                                              dtypes=("float32",))],
                 kernels=[masks_kernel])
pointer_table = Scenario("pointer_table", make_inputs, _table_launch, lambda x: 2.0 * x.float(),
                         [Case("tiny", params=dict(n=108), dtypes=("float32",))], kernels=[table_kernel])
pointer_table_spill = Scenario("pointer_table_spill", make_inputs, lambda x: _table_launch(x, spill=1 << 20),
                               lambda x: 2.0 * x.float(), [Case("tiny", params=dict(n=108), dtypes=("float32",))],
                               kernels=[table_kernel])
pointer_table_overread = Scenario("pointer_table_overread", make_inputs, lambda x: _table_launch(x, over=3),
                                  lambda x: 2.0 * x.float(), [Case("tiny", params=dict(n=108), dtypes=("float32",))],
                                  kernels=[table_kernel])
pdl = Scenario("pdl", make_inputs, _pdl_launch, _copy, _CASES, kernels=[pdl_kernel])
_HALF = [Case("tiny", params=dict(n=10), dtypes=("float16",), atol=2e-3, rtol=2e-3)]
def _unit_inputs(case, dtype, device, generator):
    return dict(x=(torch.rand(case.params["n"], generator=generator) * 1.8 - 0.9).to(device=device, dtype=dtype))


asin_fp16 = Scenario("asin_fp16", _unit_inputs, _asin_launch(False), lambda x: torch.asin(x.float()), _HALF,
                     kernels=[asin_kernel])
asin_upcast = Scenario("asin_upcast", _unit_inputs, _asin_launch(True), lambda x: torch.asin(x.float()), _HALF,
                       kernels=[asin_kernel])


@triton.jit
def hash_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    h = offs * 1640531535  # int32 wraps on purpose (a multiplicative hash): two's complement on the GPU
    tl.store(out_ptr + offs, h, mask=offs < n)


def _hash_launch(n):
    out = torch.empty(n, dtype=torch.int32)
    hash_kernel[(triton.cdiv(n, 64),)](out, n, BLOCK=64)
    return out


int_wrap = Scenario("int_wrap", lambda case, dtype, device, generator: dict(n=100), _hash_launch,
                    lambda n: ((torch.arange(n, dtype=torch.int64) * 1640531535 + 2**31) % 2**32 - 2**31).int(),
                    [Case("tiny", params={}, dtypes=("float32",), atol=0, rtol=0)], kernels=[hash_kernel])


@triton.jit
def small_dot_kernel(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))  # MARK: small_dot


def _dot_inputs(case, dtype, device, generator):
    k = case.params["k"]
    return dict(a=torch.randn(16, k, generator=generator).to(device=device, dtype=dtype),
                b=torch.randn(k, 16, generator=generator).to(device=device, dtype=dtype))


def _small_dot(a, b):
    c = torch.empty(16, 16, device=a.device)
    small_dot_kernel[(1,)](a, b, c, BM=16, BN=16, BK=a.shape[1])
    return c


small_dot = Scenario("small_dot", _dot_inputs, _small_dot, lambda a, b: a.float() @ b.float(),
                     [Case("k8", params=dict(k=8), dtypes=("float16",), atol=1e-2, rtol=1e-2),
                      Case("k16", params=dict(k=16), dtypes=("float16",), atol=1e-2, rtol=1e-2)],
                     kernels=[small_dot_kernel])


@triton.jit
def _max_nan(a, b):  # Inductor's triton_helpers.maximum: NaN wins
    return tl.where((a > b) | (a != a), a, b)


@triton.jit
def _argmax_combine(a, ia, b, ib):
    take = (a > b) | ((a == b) & (ia < ib))
    return tl.where(take, a, b), tl.where(take, ia, ib)


@triton.jit
def custom_reduce_kernel(x_ptr, mx_ptr, am_ptr, cm_ptr, N: tl.constexpr, M: tl.constexpr):
    r = tl.arange(0, M)[:, None]
    c = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + r * N + c)
    tl.store(mx_ptr + tl.arange(0, M), tl.reduce(x, 1, _max_nan))
    _, i = tl.reduce((x, tl.broadcast_to(c, (M, N))), 1, _argmax_combine)
    tl.store(am_ptr + tl.arange(0, M), i)
    tl.store(cm_ptr + r * N + c, tl.associative_scan(x, 1, _max_nan))


def _custom_reduce(x):
    M, N = x.shape
    mx, am, cm = torch.empty(M), torch.empty(M, dtype=torch.int32), torch.empty(M, N)
    custom_reduce_kernel[(1,)](x, mx, am, cm, N=N, M=M)
    return dict(mx=mx, am=am, cm=cm)


def _custom_reduce_ref(x):
    return dict(mx=x.max(1).values, am=x.argmax(1).to(torch.int32), cm=torch.cummax(x, 1).values)


custom_reduce = Scenario("custom_reduce", lambda case, dtype, device, generator: dict(
    x=torch.randn(8, 64, generator=generator).to(device=device, dtype=dtype)), _custom_reduce,
    _custom_reduce_ref, [Case("tiny", dtypes=("float32",))], kernels=[custom_reduce_kernel])


@triton.jit
def _pick_larger(a, b):  # a Python `if` on the values: scalars only (the block path would take `if block` as True)
    if a > b:
        return a
    else:
        return b


@triton.jit
def if_reduce_kernel(x_ptr, o_ptr, N: tl.constexpr):
    tl.store(o_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, N)), 0, _pick_larger))


def _if_reduce(x):
    o = torch.empty(1)
    if_reduce_kernel[(1,)](x, o, N=x.numel())
    return o


if_reduce = Scenario("if_reduce", lambda case, dtype, device, generator: dict(
    x=torch.randn(16, generator=generator).to(device=device, dtype=dtype)), _if_reduce,
    lambda x: x.max().reshape(1), [Case("tiny", dtypes=("float32",))], kernels=[if_reduce_kernel])
device_calls = Scenario("device_calls", make_inputs, _copy_launch(device_calls_kernel), _device_calls_reference,
                        [Case("tiny", params=dict(n=40), dtypes=("float32",))], kernels=[device_calls_kernel])
