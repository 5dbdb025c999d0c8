"""Zoo: a row sum over a masked load without ``other=``: the masked-off lanes are undefined on the GPU.
Plain TRITON_INTERPRET reads them as 0 and passes; tritondbg fills them with poison (NaN)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def rowsum_buggy(x_ptr,  # *fp32 (M, N), read
                 s_ptr,  # *fp32 (M,), written (x may be bf16: summed in fp32)
                 N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N)  # BUG: poison
    tl.store(s_ptr + row, tl.sum(x.to(tl.float32), axis=0))


@triton.jit
def rowsum_twin(x_ptr, s_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
    tl.store(s_ptr + row, tl.sum(x.to(tl.float32), axis=0))


def _launch(kernel):
    def launch(x):
        s = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
        kernel[(x.shape[0],)](x, s, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]))
        return s
    return launch


def make_inputs(case, dtype, device, generator):
    p = case.params
    return dict(x=torch.randn(p["M"], p["N"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float().sum(dim=-1)


_CASES = [Case("tiny", params=dict(M=3, N=100), dtypes=("float32", "bfloat16"), atol=0.3)]
buggy = Scenario("buggy", make_inputs, _launch(rowsum_buggy), reference, _CASES, kernels=[rowsum_buggy])
twin = Scenario("twin", make_inputs, _launch(rowsum_twin), reference, _CASES, kernels=[rowsum_twin])


# The same undefined lanes after an op that drops the interpreter's NaN poison: ``tl.maximum(x, 0.0)`` and
# ``tl.where(x > 0, x, 0.0)`` turn it into 0, and an integer's poison (its smallest value) never wins a max. On the
# GPU the lanes hold garbage, which may be positive or win the max: still poison.
@triton.jit
def laundered(x_ptr,  # *fp32 or *int32 (M, N), read
              s_ptr,  # *fp32 (M,), written
              N, BLOCK_N: tl.constexpr, MODE: tl.constexpr, OTHER: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    if OTHER:
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=-1)
    else:
        x = tl.load(x_ptr + row * N + cols, mask=cols < N)  # undefined lanes, laundered below
    if MODE == 0:
        r = tl.sum(tl.maximum(x.to(tl.float32), 0.0), axis=0)
    elif MODE == 1:
        r = tl.sum(tl.where(x > 0, x, 0).to(tl.float32), axis=0)
    else:
        r = tl.max(x, axis=0).to(tl.float32)
    tl.store(s_ptr + row, r)


def _launch_laundered(mode, other):
    def launch(x):
        s = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
        laundered[(x.shape[0],)](x, s, x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]), MODE=mode, OTHER=other)
        return s
    return launch


def _labels(case, dtype, device, generator):
    p = case.params
    return dict(x=torch.randint(0, 50, (p["M"], p["N"]), generator=generator, dtype=torch.int32).to(device))


def _relu_ref(x):
    return x.float().clamp(min=0).sum(dim=-1)


_INT = [Case("tiny", params=dict(M=3, N=100), dtypes=("float32",))]  # int32 labels whatever the dtype
relu_buggy = Scenario("relu_buggy", make_inputs, _launch_laundered(0, False), _relu_ref, _CASES)
relu_twin = Scenario("relu_twin", make_inputs, _launch_laundered(0, True), _relu_ref, _CASES)
where_buggy = Scenario("where_buggy", make_inputs, _launch_laundered(1, False), _relu_ref, _CASES)
where_twin = Scenario("where_twin", make_inputs, _launch_laundered(1, True), _relu_ref, _CASES)
max_buggy = Scenario("max_buggy", _labels, _launch_laundered(2, False), lambda x: x.max(dim=-1).values.float(), _INT)
max_twin = Scenario("max_twin", _labels, _launch_laundered(2, True), lambda x: x.max(dim=-1).values.float(), _INT)
