"""A small model under torch.compile (TorchInductor writes its Triton kernels): layernorm + GELU, a reduction,
a matmul with a ReLU epilogue; each called twice. On a CPU machine: Inductor's C++ backend unless
COMPILE_TRITON=1 (cpu_backend = "triton"). COMPILE_ONLY=a,b compiles those functions alone. Prints the max error
against eager."""
import os

import torch
import torch.nn.functional as F

if os.environ.get("COMPILE_TRITON"):
    import torch._inductor.config as inductor_config

    inductor_config.cpu_backend = "triton"


def norm_gelu(x, w, b):
    return F.gelu(F.layer_norm(x, (x.shape[-1],), w, b))


def row_stats(x):
    return x.sum(-1) * 0.5 + x.amax(-1)


def mm_relu(a, b, bias):
    return torch.relu(a @ b + bias)


def main():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(33, 1000, generator=g).to(dev)
    w, b = torch.randn(1000, generator=g).to(dev), torch.randn(1000, generator=g).to(dev)
    a, m, bias = torch.randn(48, 64, generator=g).to(dev), torch.randn(64, 40, generator=g).to(dev), torch.randn(40, generator=g).to(dev)
    err = 0.0
    only = [n for n in os.environ.get("COMPILE_ONLY", "").split(",") if n]
    for fn, args in ((norm_gelu, (x, w, b)), (row_stats, (x,)), (mm_relu, (a, m, bias))):
        if only and fn.__name__ not in only:
            continue
        compiled = torch.compile(fn)
        for _ in range(2):
            out = compiled(*args)
        err = max(err, (out - fn(*args)).abs().max().item())
    print(f"compiled max err {err:.2e} on {dev}")


if __name__ == "__main__":
    main()
