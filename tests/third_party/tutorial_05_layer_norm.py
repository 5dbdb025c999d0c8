"""Triton tutorial 05, layer norm forward: the forward kernel and the forward of the host wrapper of
python/tutorials/05-layer-norm.py.

Copyright 2018-2020 Philippe Tillet, 2020-2022 OpenAI; MIT license (full notice: TRITON_LICENSE beside this
file). The forward kernel ``_layer_norm_fwd_fused`` and ``LayerNorm.forward`` as the tutorial wrote them; the
backward kernels, the backward of the autograd function, the test and the benchmark are left out (the corpus
checks forward ops).
Run: tritondbg interpret tests/third_party/tutorial_05_layer_norm.py --case all
"""
import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def _layer_norm_fwd_fused(
    X,  # pointer to the input
    Y,  # pointer to the output
    W,  # pointer to the weights
    B,  # pointer to the biases
    Mean,  # pointer to the mean
    Rstd,  # pointer to the 1/std
    stride,  # how much to increase the pointer when moving by 1 row
    N,  # number of columns in X
    eps,  # epsilon to avoid division by zero
    BLOCK_SIZE: tl.constexpr,
):
    # Map the program id to the row of X and Y it should compute.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # Compute mean
    mean = 0
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # Compute variance
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    # Write mean / rstd
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    # Normalize and apply linear transformation
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        # Write output
        tl.store(Y + cols, y, mask=mask)


class LayerNorm(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps):
        # allocate output
        y = torch.empty_like(x)
        # reshape input data into 2D tensor
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        mean = torch.empty((M, ), dtype=torch.float32, device=x.device)
        rstd = torch.empty((M, ), dtype=torch.float32, device=x.device)
        # Less than 64KB per feature: enqueue fused kernel
        MAX_FUSED_SIZE = 65536 // x.element_size()
        BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
        if N > BLOCK_SIZE:
            raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
        # heuristics for number of warps
        num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
        # enqueue kernel
        _layer_norm_fwd_fused[(M, )](  #
            x_arg, y, weight, bias, mean, rstd,  #
            x_arg.stride(0), N, eps,  #
            BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps, num_ctas=1)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        ctx.BLOCK_SIZE = BLOCK_SIZE
        ctx.num_warps = num_warps
        ctx.eps = eps
        return y


layer_norm = LayerNorm.apply


# ---- tritondbg scenario (this project's code) ----
from tritondbg import Case, Scenario  # noqa: E402

_ALL = ("float32", "float16", "bfloat16")


def make_inputs(case, dtype, device, generator):
    M, N = case.params["M"], case.params["N"]
    return dict(x=(-2.3 + 0.5 * torch.randn(M, N, generator=generator)).to(device=device, dtype=dtype),
                w=torch.rand(N, generator=generator).to(device=device, dtype=dtype),
                b=torch.rand(N, generator=generator).to(device=device, dtype=dtype), eps=1e-5)


def launch(x, w, b, eps):
    with torch.no_grad():
        return layer_norm(x, (x.shape[-1], ), w, b, eps)


def reference(x, w, b, eps):
    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1], ), w.float(), b.float(), eps)


layer_norm_scenario = Scenario(
    name="tutorial_05_layer_norm", description="Triton tutorial 05: layer norm forward", make_inputs=make_inputs,
    launch=launch, reference=reference, kernels=[_layer_norm_fwd_fused],
    cases=[Case("tiny", params=dict(M=7, N=155), dtypes=_ALL), Case("rows", params=dict(M=19, N=40), dtypes=_ALL)])
