"""bf16/fp16 kernels that compute in their storage type, for the low-precision arithmetic shim (lowp.py).

    tritondbg interpret tests/interp_data/lowp_cases.py::vector_add --dtype bfloat16
    tritondbg interpret tests/interp_data/lowp_cases.py::swiglu --dtype bfloat16
    tritondbg interpret tests/interp_data/lowp_cases.py::ops --dtype bfloat16

Plain TRITON_INTERPRET=1 adds, multiplies, compares and sums the raw uint16 patterns of bf16 values, so
all three fail there (``ops`` also dies in ``tl.atomic_add``: "Unsupported data type"). ``vector_add`` is
the kernel of Triton's tutorial 01 (``output = x + y`` in the inputs' type); ``swiglu`` is Liger-Kernel's
forward kernel from the installed package (``silu(a).cast(b.dtype) * b``, BSD-2-Clause, not copied here).
"""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from tritondbg import Case, Scenario


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x, y):
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


def _two(case, dtype, device, generator):
    shape = case.params["shape"]
    return dict(x=torch.randn(*shape, generator=generator).to(device=device, dtype=dtype),
                y=torch.randn(*shape, generator=generator).to(device=device, dtype=dtype))


vector_add = Scenario("vector_add", _two, add, lambda x, y: x.float() + y.float(),
                      [Case("tiny", params=dict(shape=(98432 // 31,)), dtypes=("float32", "float16", "bfloat16"))],
                      kernels=[add_kernel], description="Triton tutorial 01's add kernel, in the inputs' dtype")


def _swiglu_launch(x, y):
    from liger_kernel.ops.swiglu import swiglu_forward

    return swiglu_forward(x, y)[2]


def _swiglu_kernels():
    try:
        from liger_kernel.ops.swiglu import _swiglu_forward_kernel
    except ImportError:  # pip install liger-kernel
        return []
    return [_swiglu_forward_kernel]


swiglu = Scenario("swiglu", _two, _swiglu_launch,
                  lambda x, y: torch.nn.functional.silu(x.float()) * y.float(),
                  [Case("tiny", params=dict(shape=(3, 7, 333)), dtypes=("float32", "float16", "bfloat16"))],
                  kernels=_swiglu_kernels(), description="Liger-Kernel swiglu forward (installed package)")


@triton.jit
def ops_kernel(x_ptr, y_ptr, ew_ptr, red_ptr, scan_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    """Every kind of op in the storage type: elementwise (ew[k, :]), reductions (red[k]), a scan, an atomic."""
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=1.0)
    dt = x.dtype
    tl.store(ew_ptr + 0 * BLOCK + offs, x + y, mask=mask)
    tl.store(ew_ptr + 1 * BLOCK + offs, x - y, mask=mask)
    tl.store(ew_ptr + 2 * BLOCK + offs, x * y, mask=mask)
    tl.store(ew_ptr + 3 * BLOCK + offs, (x / y).to(dt), mask=mask)
    tl.store(ew_ptr + 4 * BLOCK + offs, tl.maximum(x, y), mask=mask)
    tl.store(ew_ptr + 5 * BLOCK + offs, tl.minimum(x, y), mask=mask)
    tl.store(ew_ptr + 6 * BLOCK + offs, -x, mask=mask)
    tl.store(ew_ptr + 7 * BLOCK + offs, tl.where(x < y, x, y), mask=mask)
    tl.store(ew_ptr + 8 * BLOCK + offs, tl.exp(x.to(tl.float32)).to(dt) * y, mask=mask)
    tl.store(ew_ptr + 9 * BLOCK + offs, tl.sigmoid(x.to(tl.float32)).to(dt) * y, mask=mask)
    tl.store(ew_ptr + 10 * BLOCK + offs, tl.fma(x, y, x), mask=mask)
    tl.store(ew_ptr + 11 * BLOCK + offs, libdevice.tanh(x.to(tl.float32)).to(dt) + x, mask=mask)
    tl.store(ew_ptr + 12 * BLOCK + offs, (x >= 0).to(dt) + (x * 2).to(tl.int32).to(dt), mask=mask)
    tl.store(red_ptr + 0, tl.sum(tl.where(mask, x, 0.0), axis=0))
    tl.store(red_ptr + 1, tl.max(tl.where(mask, x, -float("inf")), axis=0))
    tl.store(red_ptr + 2, tl.min(tl.where(mask, x, float("inf")), axis=0))
    tl.store(red_ptr + 3, tl.argmax(tl.where(mask, x, -float("inf")), axis=0).to(dt))
    tl.store(scan_ptr + offs, tl.cumsum(tl.where(mask, x, 0.0), axis=0), mask=mask)
    tl.atomic_add(acc_ptr + offs % 4, tl.where(mask, x, 0.0))


N_EW = 13


def run_ops(x, y):
    n = x.numel()
    block = triton.next_power_of_2(n)
    ew = torch.zeros(N_EW, block, dtype=x.dtype, device=x.device)
    red = torch.zeros(4, dtype=x.dtype, device=x.device)
    scan = torch.zeros(n, dtype=x.dtype, device=x.device)
    acc = torch.zeros(4, dtype=x.dtype, device=x.device)
    ops_kernel[(1,)](x, y, ew, red, scan, acc, n, BLOCK=block)
    return dict(ew=ew[:, :n], red=red, scan=scan, acc=acc)


def ops_reference(x, y):
    """The same ops in fp32, each result rounded to the storage type (what the GPU computes)."""
    dt = x.dtype
    xf, yf = x.float(), y.float()
    r = lambda t: t.to(dt).float()  # noqa: E731
    ew = torch.stack([xf + yf, xf - yf, xf * yf, xf / yf, torch.maximum(xf, yf), torch.minimum(xf, yf), -xf,
                      torch.where(xf < yf, xf, yf), r(torch.exp(xf)) * yf, r(torch.sigmoid(xf)) * yf,
                      xf * yf + xf, r(torch.tanh(xf)) + xf,
                      (xf >= 0).float() + (xf * 2).to(dt).float().trunc()])
    red = torch.stack([xf.sum(), xf.max(), xf.min(), xf.argmax().float()])
    acc = torch.nn.functional.pad(xf, (0, (-x.numel()) % 4)).view(-1, 4).sum(0)
    return dict(ew=ew, red=red, scan=xf.cumsum(0), acc=acc)


ops = Scenario("ops", _two, run_ops, ops_reference,
               [Case("tiny", params=dict(shape=(37,)), dtypes=("float32", "float16", "bfloat16"))],
               kernels=[ops_kernel], description="elementwise, reduction, scan and atomic ops in the storage type")


@triton.jit
def xchg_kernel(x_ptr, y_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    old = tl.atomic_xchg(y_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)
    tl.store(old_ptr + offs, old, mask=m)


def run_xchg(x, y):
    y, old = y.clone(), torch.empty_like(y)
    xchg_kernel[(1,)](x, y, old, x.numel(), BLOCK=triton.next_power_of_2(x.numel()))
    return dict(y=y, old=old)


xchg = Scenario("xchg", _two, run_xchg, lambda x, y: dict(y=x, old=y),
                [Case("tiny", params=dict(shape=(37,)), dtypes=("float32",))], kernels=[xchg_kernel],
                description="tl.atomic_xchg on fp32 (atom.exch.b32 on the GPU; the C++ atomics take ints; Triton "
                            "refuses fp16 / bf16 exchanges, compiled or not)")
