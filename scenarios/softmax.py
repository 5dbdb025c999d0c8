"""Scenario: fused row softmax (kernels/softmax.py), single-block and online (long-row) paths."""
import torch

from tritondbg import Case, Scenario
from tritondbg.kernels import softmax as K


def make_inputs(case, dtype, device, generator):
    p = case.params
    # scale 50: |x| up to ~250, exp(250) overflows fp32, so a missing max subtraction gives inf/NaN
    x = torch.randn(p["M"], p["N"], generator=generator, device="cpu") * p.get("scale", 1.0)
    inputs = dict(x=x.to(device=device, dtype=dtype))
    if "row_config" in p:  # forces a config of the rule's (kernels/_rows.py)
        inputs["config"] = p["row_config"]
    if "max_block_n" in p:  # forces the looped (online) kernel on a short row
        inputs["max_block_n"] = p["max_block_n"]
    return inputs


def baseline(x, **_):
    """torch.softmax"""
    return torch.softmax(x, dim=-1)


_ALL = ("float32", "float16", "bfloat16")

SCENARIO = Scenario(
    name="softmax",
    description="fused row softmax over the last dim (max-subtracted, fp32 math); online softmax for long rows",
    make_inputs=make_inputs,
    launch=K.softmax,
    reference=K.reference,
    baseline=baseline,
    kernels=[K.softmax_kernel, K.softmax_looped_kernel, K.softmax_split_kernel, K.softmax_coop_kernel],
    flops=lambda case, dtype: K.flops(**case.params),
    bytes=lambda case, dtype: K.bytes_moved(**case.params, dtype=dtype),
    cases=[
        # 333 columns in a 512 block: padded lanes load -inf.
        Case("tiny", params=dict(M=9, N=333), dtypes=_ALL, description="single-block path"),
        Case("tiny_large", params=dict(M=9, N=333, scale=50.0), dtypes=_ALL,
             description="|x| ~ 250: needs the max subtraction"),
        # 4 rows per program (the rule's tile for short rows of a large input): 9 rows = 2 full tiles + 1 row
        Case("tiny_rows", params=dict(M=9, N=333, row_config=("single", 512, 4, 4)), dtypes=_ALL,
             description="several rows per program, the last tile partial"),
        # max_block_n=64: 333 = 5 * 64 + 13, five full chunks and a 13-column tail.
        Case("tiny_looped", params=dict(M=9, N=333, max_block_n=64), dtypes=_ALL,
             description="online-softmax path (forced by max_block_n), tail chunk"),
        # 333 = 256 + 77 of a 128-column tail: the split kernel (the rule uses it for 4097..6144 columns)
        Case("tiny_split", params=dict(M=4, N=333, row_config=("split", 256, 1, 4), scale=50.0), dtypes=_ALL,
             description="row as two power-of-two blocks (head unmasked, tail masked), |x| ~ 250"),
        # each row over several programs (the rule's pick on a GPU for few long rows, e.g. a vocabulary's logits):
        # 333 = 2 x 128 + 77 columns in slices of 2 x 64, |x| ~ 250 (the slices' maxima far apart); a GPU runs it as
        # one cooperative launch, the interpreter as statistics then output
        Case("tiny_coop", params=dict(M=3, N=333, row_config=("coop", 64, 1, 4, 1, 2), scale=50.0), dtypes=_ALL,
             description="rows cut over programs, statistics combined (barrier on a GPU)"),
        # large values: the running max jumps between chunks, so the rescaling of the sum matters.
        Case("tiny_looped_large", params=dict(M=5, N=1000, max_block_n=128, scale=50.0), dtypes=_ALL,
             description="online path with |x| ~ 250"),
        Case("h200_8192x8192", params=dict(M=8192, N=8192), dtypes=("float16",), interpret=False),
        Case("h200_16384x4096", params=dict(M=16384, N=4096), dtypes=("float16",), interpret=False),
        Case("h200_4096x1024", params=dict(M=4096, N=1024), dtypes=("float16",), interpret=False,
             # launch-bound: 8 MiB moves in a few us of GPU time, while a Triton launch costs 24-50 us of Python
             # on the H200 VMs against ~15 us for torch's C++ op (do_bench: 0.27-0.64x on 2026-11-29, varying
             # with the VM): the perf gate compares GPU times (CUDA graph)
             perf_timing="graph"),
        # Short and non-power-of-two rows (issue 18; every length: tests/bench/sweep_h200.py --only softmax):
        # 256 columns (32 rows per program), 5000 (16-byte vectors through the VEC hint).
        Case("h200_131072x256", params=dict(M=131072, N=256), dtypes=("float16",), interpret=False),
        Case("h200_6710x5000", params=dict(M=6710, N=5000), dtypes=("bfloat16",), interpret=False),
        # 65536 columns > 16384: the online kernel at full size (4 chunks per row, pass 2 from L2).
        # a decode step's logits over a 128K vocabulary: 8 rows, each over 63 programs (the coop kernel)
        Case("h200_vocab", params=dict(M=8, N=128256), dtypes=("bfloat16",), interpret=False,
             description="few rows of a vocabulary: each row over many programs"),
        Case("h200_long_rows", params=dict(M=2048, N=65536), dtypes=("float16",), interpret=False,
             description="online path at H200 scale"),
    ],
)
