"""Lanes of one store that hit one element: a histogram bumped by load + 1 + store (the repeats are lost: a
warning, each lane wrote the same count), a block stored through a scalar pointer (tl.sum forgotten: an error),
a scalar stored through a block of one address (every lane the same element and value: nothing), and a 2-D tile
stored without its column mask into rows shorter than the tile (columns past a row's end land on the next row's first
elements: two lanes of the tile meet there); a GEMM tile whose columns wrap with % N (vLLM's fused_moe), whose
repeated columns the interpreter's tl.dot rounds apart (a warning, as for equal values)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def hist_rmw(x_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    b = tl.load(x_ptr + offs, mask=offs < n, other=0)
    c = tl.load(h_ptr + b, mask=offs < n, other=0)
    tl.store(h_ptr + b, c + 1, mask=offs < n)  # MARK: hist


@triton.jit
def block_to_scalar(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs * 0, x * 2, mask=offs < n)  # MARK: scalar


@triton.jit
def scalar_through_block(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs * 0, tl.zeros_like(x) + tl.sum(x, axis=0))


@triton.jit
def tile_copy_no_col_mask(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    x = tl.load(x_ptr + rows * N + cols, mask=(rows < M) & (cols < N), other=0)
    tl.store(out_ptr + rows * N + cols, x, mask=rows < M)  # MARK: wrap


def _bins(case, dtype, device, generator):
    return dict(x=torch.randint(0, 4, (12,), generator=generator, dtype=torch.int32).to(device))


def _hist(x):
    h = torch.zeros(4, dtype=torch.int32, device=x.device)
    hist_rmw[(1,)](x, h, x.numel(), BLOCK=16)
    return h


def _one(kernel):
    def launch(x):
        out = torch.zeros(1, dtype=torch.int32, device=x.device)
        kernel[(1,)](x, out, x.numel(), BLOCK=16)
        return out
    return launch


_CASES = [Case("tiny", params={}, dtypes=("int32",))]
hist = Scenario("hist", _bins, _hist, lambda x: torch.bincount(x.long(), minlength=4).to(torch.int32), _CASES,
                kernels=[hist_rmw])
scalar = Scenario("scalar", _bins, _one(block_to_scalar), lambda x: (x[-1:] * 2), _CASES, kernels=[block_to_scalar])
broadcast = Scenario("broadcast", _bins, _one(scalar_through_block), lambda x: x.sum().reshape(1).to(torch.int32),
                     _CASES, kernels=[scalar_through_block])


def _tile(x):
    out = torch.zeros(3, 5, dtype=x.dtype, device=x.device)
    tile_copy_no_col_mask[(1,)](x, out, 3, 5, BM=4, BN=8)
    return out


tile = Scenario("tile", lambda case, dtype, device, generator: dict(
    x=torch.randint(1, 100, (3, 5), generator=generator, dtype=torch.int32).to(device)),
    _tile, lambda x: x.clone(), _CASES, kernels=[tile_copy_no_col_mask])


@triton.jit
def wrap_cols_gemm(a_ptr, b_ptr, c_ptr, M, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN) % N
    offs_k = tl.arange(0, 32)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // 32):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k * 32 + offs_k)[None, :], mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptr + (k * 32 + offs_k)[:, None] * N + offs_n[None, :])
        acc = tl.dot(a, b, acc=acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16), mask=offs_m[:, None] < M)  # MARK: dot


def _wrap_dot(a, b):
    c = torch.empty(a.shape[0], b.shape[1], dtype=torch.float16, device=a.device)
    wrap_cols_gemm[(triton.cdiv(a.shape[0], 64),)](a, b, c, a.shape[0], b.shape[1], a.shape[1], BM=64, BN=256)
    return c


wrapdot = Scenario("wrapdot", lambda case, dtype, device, generator: dict(
    a=torch.randn(100, 128, generator=generator).to(device=device, dtype=torch.float16),
    b=(torch.randn(128, 192, generator=generator) / 10).to(device=device, dtype=torch.float16)),
    _wrap_dot, lambda a, b: (a.float() @ b.float()).half(),
    [Case("tiny", params={}, dtypes=("float16",), atol=1e-2, rtol=1e-2)], kernels=[wrap_cols_gemm])
