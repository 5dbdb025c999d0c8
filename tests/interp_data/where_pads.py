"""Sanitizer data: a select whose condition is computed from a masked load's padding. A running max written
``acc = tl.where(x > acc, x, acc)`` over ``other=-inf`` keeps each lane's own data where the padding loses the
comparison, as designed: no finding (helper-77: FlagGems' argmax pattern got a masked_reduction advising the
other=-inf it had). ``tl.where(x > 0, x, 1.0)`` puts a constant in the padding lanes, which a sum then adds: still
a masked_reduction."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def running_max(x_ptr, out_ptr, n, TILE: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.full([TILE], float("-inf"), tl.float32)
    for start in range(0, n, TILE):
        offs = start + tl.arange(0, TILE)
        x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=float("-inf"))
        acc = tl.where(x > acc, x, acc)
    tl.store(out_ptr + row, tl.max(acc, 0))


@triton.jit
def positive_or_one_sum(x_ptr, out_ptr, n, TILE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, TILE)
    x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + row, tl.sum(tl.where(x > 0, x, 1.0), 0))  # MARK: ones


def _launch(kernel, tile):
    def launch(x):
        out = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
        kernel[(x.shape[0],)](x, out, x.shape[1], TILE=tile)
        return out
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(3, 100, generator=generator).to(device=device, dtype=dtype))


_CASES = [Case("tiny", params={})]
kept = Scenario("kept", make_inputs, _launch(running_max, 64), lambda x: x.float().max(1).values, _CASES,
                kernels=[running_max])
ones = Scenario("ones", make_inputs, _launch(positive_or_one_sum, 128),
                lambda x: torch.where(x > 0, x.float(), 1.0).sum(1), _CASES, kernels=[positive_or_one_sum])
