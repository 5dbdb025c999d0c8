"""An autotuner whose early_config_prune returns configs of its own (gemlite's kernel_config_pruner: a key added,
blocks clamped to the shape), beside a second autotuned kernel the case never launches and whose configs the
all-configs sweep must not blame for the first kernel's findings."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


def own_configs(configs, named_args, **kwargs):
    n = named_args["n"]
    return [triton.Config({"BLOCK": min(c.kwargs["BLOCK"], triton.next_power_of_2(n)), "EXTRA": 1},
                          num_warps=c.num_warps) for c in configs]


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (64, 128)], key=["n"],
                 prune_configs_by={"early_config_prune": own_configs})
@triton.jit
def own_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EXTRA: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2 + EXTRA - 1, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32)], key=["n"])
@triton.jit
def other_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)


def _launch(x):
    y = torch.empty_like(x)
    own_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, x.numel())
    return y


own = Scenario("own", lambda case, dtype, device, generator: dict(x=torch.randn(40, generator=generator)),
               _launch, lambda x: x * 2, [Case("tiny", dtypes=("float32",))], kernels=[own_kernel, other_kernel])
