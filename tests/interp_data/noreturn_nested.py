"""A helper whose value another helper returns in a tuple forgot its `return` (helper-62: triton_kernels' topk,
`key_to_indx` inside `streaming_topk`): the kernel fails at the line that uses the tuple's None."""
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def _keys(x):
    y = x * 2  # forgot: return y


@triton.jit
def _both(x):
    return x + 1, _keys(x)


@triton.jit
def twice(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    a, b = _both(tl.load(x_ptr + o))
    tl.store(y_ptr + o, a + b)


def launch(x):
    y = torch.empty_like(x)
    twice[(1,)](x, y, BLOCK=16)
    return y


s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.rand(16, generator=generator)), launch,
             lambda x: 3 * x + 1, [Case("tiny", dtypes=("float32",))], kernels=[twice])
