"""Prefill attention's config rules (kernels/attention.py): which configs the autotuner may time for a shape, and a
config pinned past the autotuner (``_attention(..., config=)``, used by the GPU config check and the benchmarks)."""
import pytest
import torch
import triton

from tritondbg.kernels import attention as A


def _kept(n, d, causal, elt=2):
    q = torch.empty(1, 1, 1, d, dtype=torch.bfloat16 if elt == 2 else torch.float32, device="meta")
    kept = A._prune_prefill_configs(A._PREFILL_CONFIGS, dict(N_Q=n, N_KV=n, HEAD_DIM=d, TMA=True, CAUSAL=causal, Q=q))
    return {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages, c.kwargs["WARP_SPEC"]) for c in kept}


def test_no_four_warp_warp_specialised_config_is_offered():
    """At D = 64 four warp-specialised configs gave NaN on the H200 (Triton 3.6); at D = 128, unmasked, 128x64 s3 / s4
    gave wrong outputs at B4 H32 N4096 in 20 of 20 runs on an H100 and 128x128 s2 under load (session 55,
    tests/bench/runs/s55_contended.txt): the autotuner is offered none, at any shape (the Gluon kernel is Hopper's
    warp-specialised path)."""
    for n, d, causal in ((4096, 64, False), (4096, 128, False), (4096, 128, True), (1000, 128, False)):
        assert not any(ws and w == 4 for _, _, w, _, ws in _kept(n, d, causal)), (n, d, causal)
    assert not any(c.kwargs["WARP_SPEC"] and c.num_warps == 4 for c in A._PREFILL_CONFIGS)


def test_four_warp_128_row_tiles_only_where_they_do_not_spill():
    d64 = _kept(4096, 64, True)
    assert (128, 128, 4, 3, False) in d64 and (64, 128, 4, 3, False) in d64
    assert not any(max(bm, bn) >= 128 and w == 4 and not ws for bm, bn, w, _, ws in _kept(4096, 128, True))


@pytest.mark.interpreter
@pytest.mark.parametrize("ws", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_a_pinned_config_runs_past_the_autotuner_and_is_right(causal, ws):
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 40, 64) for _ in range(3))
    cfg = triton.Config(dict(BLOCK_M=16, BLOCK_N=16, WARP_SPEC=ws), num_warps=2, num_stages=2)
    out = A._attention(q, k, v, causal, None, None, config=cfg)
    torch.testing.assert_close(out, A.reference(q, k, v, causal=causal), atol=2e-4, rtol=2e-4)
