"""A library's padded buffer (helper-62: triton_kernels' bitmatrix): ``torch.zeros(cdiv(n, 128) * 128)[:n]``, a
kernel that adds into whole 128-element blocks of it without a mask (the padding is its own), and a plain slice of
a larger tensor read one block past its end (``slice``: a missing mask, an error). Prints the padded sums."""
import sys

import torch
import triton
import triton.language as tl

BLOCK = 128


@triton.jit
def block_add(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + o, mask=o < n, other=0.0)
    tl.atomic_add(acc_ptr + o, x)  # whole blocks of acc: its padding past n gets zeros


def main(mode: str) -> None:
    n = 19
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    rows = triton.cdiv(n, BLOCK) * BLOCK
    base = torch.zeros(rows if mode == "padded" else rows + 300, device="cuda")
    acc = base[:n] if mode == "padded" else base[5:5 + n]
    block_add[(triton.cdiv(n, BLOCK),)](x, acc, n, BLOCK=BLOCK)
    assert torch.equal(acc.cpu(), x.cpu()), acc
    print("OK", float(acc.sum()))


if __name__ == "__main__":
    main(sys.argv[1])
