"""Scenario: masked vector add (kernels/add.py), the smallest bundled example."""
import torch

from tritondbg import Case, Scenario
from tritondbg.kernels import add as K


def make_inputs(case, dtype, device, generator):
    n = case.params["n"]
    x = torch.randn(n, generator=generator, device="cpu")
    y = torch.randn(n, generator=generator, device="cpu")
    return dict(x=x.to(device=device, dtype=dtype), y=y.to(device=device, dtype=dtype))


def baseline(x, y):
    """torch x + y"""
    return x + y


SCENARIO = Scenario(
    name="add",
    description="masked element-wise vector add out = x + y (1-D grid, one program per BLOCK elements)",
    make_inputs=make_inputs,
    launch=K.add,
    reference=K.reference,
    baseline=baseline,
    kernels=[K.add_kernel],
    flops=lambda case, dtype: K.flops(**case.params),
    bytes=lambda case, dtype: K.bytes_moved(**case.params, dtype=dtype),
    cases=[
        # 4099 = 4 * 1024 + 3: five programs at BLOCK=1024, the last one with 3 live lanes.
        Case("tiny", params=dict(n=4099), dtypes=("float32", "float16", "bfloat16"), config=dict(BLOCK=1024),
             description="odd length, several programs and a 3-element tail"),
        # shorter than any BLOCK: one program, most lanes masked.
        Case("tiny_one_block", params=dict(n=1000), dtypes=("float32", "float16", "bfloat16"),
             config=dict(BLOCK=1024), description="one partial program"),
        # 64M elements: 768 MiB of fp32 traffic, far beyond L2 (50 MiB): a pure HBM bandwidth test.
        Case("h200_64M", params=dict(n=64 * 1024 * 1024), dtypes=("float32", "bfloat16"), interpret=False,
             description="64M elements, HBM bandwidth bound"),
    ],
)
