"""Liger-Kernel's RMSNorm forward (a third-party kernel from PyPI) as a scenario.

    tritondbg interpret tests/interp_data/liger_rms_norm.py

Plain TRITON_INTERPRET=1 cannot run it: the kernel does ``eps.to(tl.float32)`` on a scalar argument (a
Python float under the interpreter) and calls ``rsqrt`` from ``triton.language.extra.libdevice`` (an empty
stub outside the compiler). tritondbg's shims make both work. Needs ``pip install liger-kernel``.
"""
import torch

from tritondbg import Case, Scenario

from liger_kernel.ops.rms_norm import _rms_norm_forward_kernel, rms_norm_forward  # noqa: E402


def make_inputs(case, dtype, device, generator):
    p = case.params
    x = torch.randn(p["M"], p["N"], generator=generator).to(device=device, dtype=dtype)
    w = (1.0 + 0.1 * torch.randn(p["N"], generator=generator)).to(device=device, dtype=dtype)
    return dict(x=x, w=w, eps=1e-6, mode=p["mode"])


def launch(x, w, eps, mode):
    return rms_norm_forward(x, w, eps, 0.0, mode, False)[0]


def reference(x, w, eps, mode):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()


rms_norm = Scenario(
    name="rms_norm",
    description="Liger-Kernel rms_norm forward (llama casting: rstd in fp32)",
    make_inputs=make_inputs,
    launch=launch,
    reference=reference,
    kernels=[_rms_norm_forward_kernel],
    cases=[
        Case("tiny", params=dict(M=5, N=100, mode="llama"), dtypes=("float32", "float16"),
             description="100 columns in a 128 block: masked tail"),
        Case("tiny_gemma", params=dict(M=3, N=64, mode="gemma"), dtypes=("float32",)),
    ],
)
