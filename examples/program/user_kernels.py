"""A user's own Triton kernel with a planted out-of-bounds bug (the example program's third kernel).

``scale_shift`` computes ``y = x * scale + shift`` over a 1-D tensor. With ``EXAMPLE_BUG=1`` in the
environment its load drops the mask (``BUGGY=True``): the last program reads past the end of ``x`` when
``n`` is not a multiple of ``BLOCK``. The store stays masked, so on the CPU the result can still look right.
"""
import os

import torch
import triton
import triton.language as tl


@triton.jit
def scale_shift_kernel(x_ptr, y_ptr, n, scale, shift, BLOCK: tl.constexpr, BUGGY: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if BUGGY:
        x = tl.load(x_ptr + offs)  # planted bug: no mask
    else:
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * scale + shift, mask=mask)


def scale_shift(x: torch.Tensor, scale: float, shift: float) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 64
    scale_shift_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, scale, shift, BLOCK=BLOCK,
                                                 BUGGY=os.environ.get("EXAMPLE_BUG", "0") == "1")
    return y
