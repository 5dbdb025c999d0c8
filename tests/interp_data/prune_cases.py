"""An autotuned copy kernel whose autotuner prunes: ``early_config_prune`` drops BLOCK > 2 * n, ``perf_model`` +
``top_k=2`` keeps the two smallest of the rest, and BLOCK=16 fails its own ``tl.static_assert``. The sweep must
run exactly the configs the autotuner would try and list the others (tests/test_third_party.py)."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario

CONFIGS = [triton.Config({"BLOCK": b}) for b in (16, 32, 64, 128, 512)]


def early_prune(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= 2 * named_args["n"]]


def perf_model(BLOCK, **kwargs):
    return BLOCK   # smaller is "faster": top_k keeps the smallest


@triton.autotune(configs=CONFIGS, key=["n"],
                 prune_configs_by={"early_config_prune": early_prune, "perf_model": perf_model, "top_k": 2})
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK >= 32, "BLOCK below 32 is not supported")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch(x):
    y = torch.empty_like(x)
    copy_kernel[lambda m: (triton.cdiv(x.numel(), m["BLOCK"]),)](x, y, x.numel())
    return y


pruned = Scenario(name="pruned", make_inputs=lambda case, dtype, device, g: dict(
                      x=torch.randn(case.params["n"], generator=g).to(device=device, dtype=dtype)),
                  launch=launch, reference=lambda x: x.float(), kernels=[copy_kernel],
                  cases=[Case("tiny", params=dict(n=100))])
