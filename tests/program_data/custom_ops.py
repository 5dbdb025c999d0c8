"""Kernels behind torch custom ops (flash-attn's triton_op, serving libraries' device_types="cuda" ops): the op's
Python kernel runs with no torch function mode of the program on the stack. argv[1]: plain | op | cuda_op."""
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def partial_kernel(X, P, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + pid * N + cols, mask=cols < N, other=0.0)
    tl.store(P + pid * N + cols, x, mask=(cols < N) & (pid < 2))  # STORE (only programs 0 and 1 store their row)


def partial(x):
    M, N = x.shape
    p = torch.empty((M, N), device="cuda", dtype=torch.float32)  # (device="cuda" inside the op's kernel)
    partial_kernel[(M,)](x, p, N, BLOCK=triton.next_power_of_2(N))
    return p.sum(0)


mode = sys.argv[1]
x = torch.randn(6, 10, device="cuda")
if mode == "plain":
    dw = partial(x)
else:
    @torch.library.custom_op("tdbg_test::partial", mutates_args=(),
                             device_types="cuda" if mode == "cuda_op" else None)
    def partial_op(x: torch.Tensor) -> torch.Tensor:
        return partial(x)
    dw = partial_op(x)
print("max", dw.max().item())  # USE
