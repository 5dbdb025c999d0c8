"""Scenario file for my_kernels.axpy: `tritondbg interpret tests/data/user_kernels/my_cases.py::axpy`."""
import torch

from tritondbg import Case, Scenario

from my_kernels import axpy, axpy_kernel  # the folder of this file is on sys.path when tritondbg loads it


def make_inputs(case, dtype, device, generator):
    n = case.params["n"]
    x = torch.randn(n, generator=generator).to(device=device, dtype=dtype)
    y = torch.randn(n, generator=generator).to(device=device, dtype=dtype)
    return dict(x=x, y=y, alpha=0.5)


def reference(x, y, alpha):
    return alpha * x.float() + y.float()


axpy_scenario = Scenario(
    name="axpy",
    description="out = alpha * x + y",
    make_inputs=make_inputs,
    launch=axpy,
    reference=reference,
    kernels=[axpy_kernel],
    flops=lambda case, dtype: 2 * case.params["n"],
    bytes=lambda case, dtype: 3 * case.params["n"] * dtype.itemsize,
    cases=[
        Case("tiny", params=dict(n=1000), dtypes=("float32", "float16"), config=dict(BLOCK=128)),
        Case("big", params=dict(n=1 << 26), dtypes=("float16",), interpret=False),
    ],
)
