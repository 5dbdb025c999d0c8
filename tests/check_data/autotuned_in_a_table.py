import torch
import triton
import triton.language as tl
from tritondbg import Case, Scenario


def _make():
    @triton.jit
    def inner(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        scale = 2.0 if BLOCK == 64 else 3.0
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * scale, mask=offs < n)
    return triton.autotune([triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 32})], key=["n"])(inner)

_KERNELS = {torch.float32: _make()}


def launch(x):
    y = torch.empty_like(x)
    _KERNELS[x.dtype][lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),)](x, y, x.numel())
    return y


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(100, generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float() * 2


bad = Scenario("bad", make_inputs, launch, reference, [Case("tiny")])
