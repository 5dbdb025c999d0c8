"""flash-linear-attention's row softmax forward (``fla.ops.utils.softmax.softmax_fwd``), from ``fla-core``.

Source: fla/ops/utils/softmax.py (pip install fla-core; it needs only einops besides torch and triton);
license: MIT (Songlin Yang, Yu Zhang, Zhiyuan Li and contributors). Autotuned over num_warps 1..32 (6 configs):
`--all-configs` runs each. The output is fp32 whatever the input dtype (softmax_fwd's default).
Run: tritondbg interpret tests/third_party/fla_softmax.py --case all
"""
import torch
from _common import ALL, randn

from tritondbg import Case, Scenario
from fla.ops.utils.softmax import softmax_fwd, softmax_fwd_kernel


def make_inputs(case, dtype, device, generator):
    return dict(x=randn(generator, *case.params["shape"], dtype=dtype, device=device, scale=2.0))


def launch(x):
    return softmax_fwd(x)


def reference(x):
    return torch.softmax(x.float(), dim=-1)


softmax = Scenario(name="fla_softmax", description="fla softmax_fwd (autotuned num_warps)", make_inputs=make_inputs,
                   launch=launch, reference=reference, kernels=[softmax_fwd_kernel],
                   cases=[Case("tiny", params=dict(shape=(2, 3, 37)), dtypes=ALL),
                          Case("rows", params=dict(shape=(9, 5)), dtypes=ALL)])
