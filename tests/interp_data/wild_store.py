"""Stores far outside their tensor, for the memory guard's tests: under plain TRITON_INTERPRET=1 these
write into the process's own memory (``far``: an unmapped address, a segfault; ``heap``: a few pages past
the end of ``y``, heap corruption). The guard masks those lanes off in every interpreter run, so the
valid lanes' result is compared as usual (both cases PASS with --no-sanitize; the sanitizer reports them)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def store_far(x_ptr, y_ptr, n, SKIP, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tail = (offs >= n).to(tl.int64)
    tl.store(y_ptr + offs + tail * SKIP, x + 1.0)  # BUG: out_of_bounds (the tail lanes land SKIP elements away)


def _launch(skip):
    def launch(x):
        y = torch.empty_like(x)
        store_far[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), skip, BLOCK=128)
        return y
    return launch


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float() + 1.0


_CASES = [Case("tiny", params=dict(n=300), dtypes=("float32",))]
far = Scenario("far", make_inputs, _launch(1 << 40), reference, _CASES, kernels=[store_far])
heap = Scenario("heap", make_inputs, _launch(-20000), reference, _CASES, kernels=[store_far])
