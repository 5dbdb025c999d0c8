"""check_data: an in-place fp16 kernel (x <- x * 1.004 + 1, like Liger's rope writing q and k in place) that
is 0.4% off: inside fp16's rtol, but far worse than torch's own fp16 error. The three-way check catches it only
if torch's baseline gets the inputs as they were before the launch."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def scale_in_place(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    tl.store(x_ptr + offs, (x * 1.004 + 1.0).to(tl.float16), mask=mask)  # BUG: 1.004, not 1.0


def launch(x):
    scale_in_place[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
    return x


def make_inputs(case, dtype, device, generator):
    return dict(x=(torch.rand(case.params["n"], generator=generator) * 4 + 4).to(device=device, dtype=dtype))


def reference(x):
    return x.float() + 1.0


def baseline(x):
    return x + 1.0  # torch at the same dtype


in_place = Scenario("in_place", make_inputs, launch, reference, [Case("tiny", params=dict(n=256),
                                                                       dtypes=("float16",))],
                    kernels=[scale_in_place], baseline=baseline)
