"""Zoo (correctness gate, CPU; agreement on the GPU): an fp32 matmul whose tl.dot uses the default input precision,
TF32 on NVIDIA GPUs (operands truncated to 10 mantissa bits): its error against the fp32 reference exceeds the
case tolerance. The bare interpreter multiplies in full fp32 and passes it; tritondbg's interpreter computes TF32
as the GPU does (interp/dots.py ``tf32_dot``), so the correctness gate fails it on the CPU with a note naming the
dot, and on the GPU interpreter and GPU agree. The twin asks for input_precision="ieee"."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def matmul_kernel(a_ptr,  # *fp32 (M, K), read
                  b_ptr,  # *fp32 (K, N), read
                  c_ptr,  # *fp32 (M, N), written
                  M, N, K, IEEE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        if IEEE:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)  # BUG: correctness (TF32: 10 mantissa bits, on the GPU and here)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _launch(ieee):
    def launch(a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty(M, N, dtype=torch.float32, device=a.device)
        matmul_kernel[(triton.cdiv(M, 32), triton.cdiv(N, 32))](a, b, c, M, N, K, IEEE=ieee, BM=32, BN=32, BK=32)
        return c
    return launch


def make_inputs(case, dtype, device, generator):
    p = case.params
    a = torch.randn(p["M"], p["K"], generator=generator).to(device=device, dtype=dtype)
    b = torch.randn(p["K"], p["N"], generator=generator).to(device=device, dtype=dtype)
    return dict(a=a, b=b)


def reference(a, b):
    return a.double().matmul(b.double()).float()


_CASES = [Case("tiny", params=dict(M=40, N=33, K=256))]
buggy = Scenario("buggy", make_inputs, _launch(False), reference, _CASES, kernels=[matmul_kernel])
twin = Scenario("twin", make_inputs, _launch(True), reference, _CASES, kernels=[matmul_kernel])
