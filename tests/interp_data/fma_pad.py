"""tl.fma(a, b, c) over padding: the product of two padded halves (exactly 0) added to real data is that data
(unsloth's RMSNorm sums fma(a_hi, b_hi, a_lo * b_lo) in its bit-exact row order), but padding that holds 1
(other=1.0) adds 1 per lane: a masked_reduction."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def fma_sum(x_ptr, out_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    hi = tl.load(x_ptr + BLOCK + offs, mask=BLOCK + offs < n, other=OTHER)  # mostly padding
    lo = tl.load(x_ptr + offs, mask=offs < n, other=0.0)                   # all data
    acc = tl.fma(hi, hi, lo * lo)
    tl.store(out_ptr, tl.sum(acc, 0))  # MARK: sum


def _launch(other):
    def launch(x):
        out = torch.empty(1, dtype=x.dtype)
        fma_sum[(1,)](x, out, x.numel(), OTHER=other, BLOCK=64)
        return out
    return launch


def _inputs(case, dtype, device, generator):
    return dict(x=torch.rand(77, generator=generator))


_CASES = [Case("tiny", dtypes=("float32",))]
zero = Scenario("zero", _inputs, _launch(0.0), lambda x: (x ** 2).sum().reshape(1), _CASES, kernels=[fma_sum])
one = Scenario("one", _inputs, _launch(1.0), lambda x: (x ** 2).sum().reshape(1), _CASES, kernels=[fma_sum])
