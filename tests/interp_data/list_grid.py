"""A grid that is a list, or a grid function returning one (helper-67: tritonbench's layer_norm backward): compiled Triton\ntakes it; the interpreter failed ("can only concatenate list (not \"tuple\") to list")."""
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)


def launch(x, how):
    y = torch.empty_like(x)
    grid = (lambda meta: [triton.cdiv(x.numel(), meta["BLOCK"])]) if how == "fn" else [triton.cdiv(x.numel(), 16)]
    twice[grid](x, y, x.numel(), BLOCK=16)
    return y


s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.rand(100, generator=generator),
             how=case.params["how"]), launch, lambda x, how: x * 2,
             [Case("fn", params=dict(how="fn"), dtypes=("float32",)), Case("list", params=dict(how="list"),
              dtypes=("float32",))], kernels=[twice])
