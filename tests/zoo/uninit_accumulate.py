"""Zoo: split-K matmul whose programs ``tl.atomic_add`` their partial products into an output allocated with
``torch.empty``: the sum starts from whatever that memory held. On a CPU fresh memory is often zeros, so a plain
TRITON_INTERPRET=1 passes; on the GPU the caching allocator hands back the last tensor's bytes."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def splitk_kernel(a_ptr, b_ptr,  # *fp32/bf16 (M, K), (K, N), read
                  c_ptr,         # *fp32 (M, N), accumulated into by SPLIT programs per tile
                  M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr):
    pm, pn, pk = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(pk * BK, K, BK * SPLIT):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a.to(tl.float32), b.to(tl.float32))
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))  # BUG: uninit


def _launch(zeroed):
    def launch(a, b):
        (M, K), N = a.shape, b.shape[1]
        c = (torch.zeros if zeroed else torch.empty)((M, N), dtype=torch.float32, device=a.device)
        splitk_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16), 2)](a, b, c, M, N, K, BM=16, BN=16, BK=16, SPLIT=2)
        return c
    return launch


def make_inputs(case, dtype, device, generator):
    p = case.params
    return dict(a=torch.randn(p["M"], p["K"], generator=generator).to(device=device, dtype=dtype),
                b=torch.randn(p["K"], p["N"], generator=generator).to(device=device, dtype=dtype))


def reference(a, b):
    return a.float() @ b.float()


# 1e-2: the fp32 inputs go through TF32 dots (tl.dot's default precision: 10 mantissa bits, on the GPU and, under
# tritondbg, on the CPU)
_CASES = [Case("tiny", params=dict(M=33, N=20, K=40), dtypes=("float32", "bfloat16"), atol=1e-2, rtol=1e-2)]
buggy = Scenario("buggy", make_inputs, _launch(False), reference, _CASES, kernels=[splitk_kernel])
twin = Scenario("twin", make_inputs, _launch(True), reference, _CASES, kernels=[splitk_kernel])
