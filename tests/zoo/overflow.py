"""Zoo: softmax without subtracting the row max: exp overflows to inf for |x| ~ 100, inf / inf = NaN."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def softmax_buggy(x_ptr,  # *fp32/bf16 (M, N), read
                  y_ptr,  # *fp32/bf16 (M, N), written
                  N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    e = tl.exp(x.to(tl.float32))  # BUG: nan_inf
    tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)


@triton.jit
def softmax_twin(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-float("inf"))
    e = tl.exp((x - tl.max(x, axis=0)).to(tl.float32))  # max and difference in the storage type
    tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)


def _launch(kernel):
    def launch(x):
        y = torch.empty_like(x)
        kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]))
        return y
    return launch


def make_inputs(case, dtype, device, generator):
    p = case.params
    return dict(x=(torch.randn(p["M"], p["N"], generator=generator) * 60.0).to(device=device, dtype=dtype))


def reference(x):
    return torch.softmax(x.float(), dim=-1)


# |x| up to ~200: exp(x) > 3.4e38 = inf in fp32 (bf16 in and out: tl.exp takes fp32, as on the GPU)
_CASES = [Case("tiny", params=dict(M=4, N=50), dtypes=("float32", "bfloat16"))]
buggy = Scenario("buggy", make_inputs, _launch(softmax_buggy), reference, _CASES, kernels=[softmax_buggy])
twin = Scenario("twin", make_inputs, _launch(softmax_twin), reference, _CASES, kernels=[softmax_twin])


# An fp16 sum of squares overflows (65504 is fp16's largest), rsqrt(inf) = 0: the outputs are finite and wrong, the
# Inf never reaches them (Liger's poly_norm at N = 4097 in fp16). The twin sums in fp32.
@triton.jit
def rms_scale(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr, FP32_SUM: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    sq = x.to(tl.float32) * x.to(tl.float32) if FP32_SUM else x * x
    ms = tl.sum(sq, axis=0) / N  # fp16: the sum overflows
    tl.store(y_ptr + row * N + cols, x * tl.rsqrt(ms.to(tl.float32) + 1e-6), mask=cols < N)


def _launch_rms(fp32_sum):
    def launch(x):
        y = torch.empty_like(x)
        rms_scale[(x.shape[0],)](x, y, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]), FP32_SUM=fp32_sum)
        return y
    return launch


def _big(case, dtype, device, generator):
    p = case.params
    return dict(x=(torch.randn(p["M"], p["N"], generator=generator) * 20.0).to(device=device, dtype=dtype))


def _rms_ref(x):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)


_FP16 = [Case("tiny", params=dict(M=3, N=1000), dtypes=("float16",))]
sum_overflow = Scenario("sum_overflow", _big, _launch_rms(False), _rms_ref, _FP16)
sum_fp32 = Scenario("sum_fp32", _big, _launch_rms(True), _rms_ref, _FP16)
