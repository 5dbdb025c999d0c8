"""tl.extra.cuda.num_threads() / num_warps() under the interpreter: the launch's num_warps (helper-62: triton_kernels' swiglu)."""
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def threads(out_ptr):
    tl.store(out_ptr, tl.extra.cuda.num_threads())
    tl.store(out_ptr + 1, tl.extra.cuda.num_warps())


def launch(w):
    out = torch.zeros(2, dtype=torch.int32)
    threads[(1,)](out, num_warps=w)
    return out


s = Scenario("s", lambda case, dtype, device, generator: dict(w=case.params["w"]), launch,
             lambda w: torch.tensor([32 * w, w], dtype=torch.int32),
             [Case("two", params=dict(w=2), dtypes=("int32",)), Case("eight", params=dict(w=8), dtypes=("int32",))],
             kernels=[threads])
