"""gemm's small-M path (kernels/gemm.py ``gemm_splitk``: fp8_gemm's one-launch split-K decode kernel on fp16/bf16
operands), run under the interpreter: several K splits, the last-arriving one sums the partials."""
import pytest
import torch

from tritondbg.kernels import fp8_gemm as F8
from tritondbg.kernels import gemm as G


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("m, b_transposed", [(1, True), (5, False)])
def test_splitk_matches_the_reference(dtype, m, b_transposed):
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(m, 300, generator=gen).to(dtype)
    b = torch.randn(40, 300, generator=gen).to(dtype).t() if b_transposed else torch.randn(300, 40, generator=gen).to(dtype)
    c = G.gemm_splitk(a, b)
    assert c.dtype == dtype and c.shape == (m, 40)
    torch.testing.assert_close(c.float(), G.reference(a, b), atol=2e-2, rtol=2e-2)
    config = F8.fp8_gemm_decode_kernel.best_config.kwargs
    assert config["SPLIT_K"] > 1 and config["SPLIT_K"] * config["DEC_BLOCK_K"] <= 300  # really split along K
    ws, cnt = F8._buffers_for(m, 40, a.device)
    assert not bool(cnt.any())  # every arrival counter reset for the next launch
