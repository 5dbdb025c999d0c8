"""Zoo: programs serialise their updates of a shared row through a spin lock (``tl.atomic_cas``, as Triton's
layer-norm backward tutorial does), but the lock comes from ``torch.empty``: a lock that does not start free. On a
CPU fresh memory is often 0 (free) and a plain TRITON_INTERPRET=1 passes; on the GPU it can hang. tritondbg
reports the compare of unwritten memory and stops the spin."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def locked_colsum(x_ptr,     # *fp32/bf16 (M, N), read
                  out_ptr,   # *fp32 (N,), zeroed, accumulated into under the lock
                  lock_ptr,  # *int32 (1,): 0 free, 1 held
                  N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:  # BUG: uninit
        pass
    acc = tl.load(out_ptr + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + cols, acc + x, mask=cols < N)
    tl.atomic_xchg(lock_ptr, 0)


def _launch(zeroed):
    def launch(x):
        M, N = x.shape
        out = torch.zeros(N, dtype=torch.float32, device=x.device)
        lock = (torch.zeros if zeroed else torch.empty)(1, dtype=torch.int32, device=x.device)
        locked_colsum[(M,)](x, out, lock, N, BLOCK=triton.next_power_of_2(N))
        return out
    return launch


def make_inputs(case, dtype, device, generator):
    p = case.params
    return dict(x=torch.randn(p["M"], p["N"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float().sum(dim=0)


_CASES = [Case("tiny", params=dict(M=4, N=30), dtypes=("float32",), atol=1e-4)]
buggy = Scenario("buggy", make_inputs, _launch(False), reference, _CASES, kernels=[locked_colsum])
twin = Scenario("twin", make_inputs, _launch(True), reference, _CASES, kernels=[locked_colsum])
