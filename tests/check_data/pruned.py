"""check_data (resources gate): an autotuned kernel whose prune_configs_by removes one of its three configs for
every case (BLOCK wider than the row). The gate lists that config as not applicable without compiling it."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


def _prune(configs, named_args, **kwargs):
    return [c for c in configs if c.kwargs["BLOCK"] <= 256]


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=1) for b in (64, 128, 1024)], key=["N"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def scale_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < N) * 2.0, mask=offs < N)


def launch(x):
    out = torch.empty_like(x)
    scale_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
    return out


def make_inputs(case, dtype, device, generator):
    return dict(x=torch.randn(case.params["N"], generator=generator).to(device=device, dtype=dtype))


def reference(x):
    return x.float() * 2.0


pruned = Scenario("pruned", make_inputs, launch, reference, [Case("n200", params=dict(N=200))], kernels=[scale_kernel])
