"""gemm's small-M path (kernels/gemm.py ``gemm_splitk``: fp8_gemm's one-launch split-K decode kernel on fp16/bf16
operands), run under the interpreter: several K splits, the last-arriving one sums the partials."""
import pytest
import torch

from tritondbg.kernels import fp8_gemm as F8
from tritondbg.kernels import _splitk as SK
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


def test_wide_prune_offers_the_token_tile_that_suits_m():
    """16-bit operands: 16 / 32 / 64-token tiles for M up to 16 / 32 / 64, 64-token tiles for M = 65..128 (the
    128-token tiles lost on the H200 at M = 127: not listed, only pinnable)."""
    configs = F8.fp8_gemm_decode_kernel.configs
    a16 = torch.empty(1, dtype=torch.bfloat16)
    for m, want in ((127, {64}), (65, {64}), (64, {64}), (17, {32}), (1, {16})):
        kept = SK._prune_decode_configs(configs, dict(M=m, N=4096, K=4096, a_ptr=a16))
        assert {c.kwargs["DEC_BLOCK_M"] for c in kept} == want, m
    for m, k in ((1, 4096), (127, 1000)):
        kept = SK._prune_decode_configs(configs, dict(M=m, N=4096, K=k, a_ptr=a16))
        assert kept and all(c.kwargs["SPLIT_K"] == 1 or c.kwargs["SPLIT_K"] * c.kwargs["DEC_BLOCK_K"] <= k for c in kept)


def test_splitk_128_token_tile_sums_right():
    """A pinned 128-token config (2 splits, the loop-summed partials) on M = 100 under the interpreter."""
    gen = torch.Generator().manual_seed(1)
    a = torch.randn(100, 256, generator=gen).to(torch.float16)
    b = torch.randn(256, 64, generator=gen).to(torch.float16)
    one = torch.ones((), dtype=torch.float32)
    c = torch.empty(100, 64, dtype=torch.float16)
    ws = torch.empty(2 * 100 * 64, dtype=torch.float32)
    cnt = torch.zeros(1, dtype=torch.int32)
    F8.fp8_gemm_decode_kernel.fn[(1, 2)](a, b, c, one, one, ws, cnt, 100, 64, 256, a.stride(0), a.stride(1),
                                          b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                          SCALE_A_ROWS=False, SCALE_B_COLS=False, DEC_BLOCK_M=128,
                                          DEC_BLOCK_N=64, DEC_BLOCK_K=64, SPLIT_K=2, USE_DOT=True)
    torch.testing.assert_close(c.float(), G.reference(a, b), atol=2e-2, rtol=2e-2)
    assert not bool(cnt.any())
