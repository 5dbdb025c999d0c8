"""An autotuned kernel none of whose configs passes its own tl.static_assert (helper-67: tritonbench's jagged_sum,
"Unsupported platform" off CUDA and ROCm): program mode's summary named a config for it all the same."""
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 8}), triton.Config({"BLOCK": 16})], key=["n"])
@triton.jit
def never(x_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK > 100, "Unsupported platform")
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.float32))


x = torch.zeros(16, device="cuda")
never[(1,)](x, 16)
