"""Sanitizer data: a row copy whose mask is one column too wide (``cols <= n``, no other=): the last row's extra
lane reads past the end of x, an out_of_bounds error. Its value (masked off by the sanitizer) is no lane "the mask
leaves undefined": a poison finding advising other= beside it pointed the user at the wrong fix (helper-75,
megablocks' padded_gather)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def reverse_rows(x_ptr, y_ptr, n_rows, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols <= n)  # MARK: oob
    tl.store(y_ptr + (n_rows - 1 - row) * n + cols, x, mask=cols <= n)  # (the extra lane: the next row's first)


def launch(x):
    y = torch.zeros_like(x)
    reverse_rows[(x.shape[0],)](x, y, x.shape[0], x.shape[1], BLOCK=64)
    return y


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(5, 50, generator=generator).to(device=device, dtype=dtype))


le_mask = Scenario("le_mask", make_inputs, launch, lambda x: x.flip(0), [Case("tiny", params={})],
                   kernels=[reverse_rows])
