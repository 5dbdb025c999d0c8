"""Lanes of one store that hit one element: a histogram bumped by load + 1 + store (the repeats are lost: a
warning, each lane wrote the same count), a block stored through a scalar pointer (tl.sum forgotten: an error),
a scalar stored through a block of one address (every lane the same element and value: nothing), and a 2-D tile
stored without its column mask into rows shorter than the tile (columns past a row's end land on the next row's first
elements: two lanes of the tile meet there)."""
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
