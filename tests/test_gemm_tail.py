"""gemm_tma_kernel's split tail (kernels/gemm.py ``_split_tail_sum``), under the interpreter (4 persistent
programs): when the last round holds at most half the programs' worth of tiles, its tiles' K is split over the
idle programs, fp32 partials in the cached workspace, the last arrival sums them in a fixed order and applies
the activation once."""
import pytest
import torch

from tritondbg.kernels import gemm as G

_TINY = [c for c in G.TMA_CONFIGS if c.kwargs["BLOCK_M"] == 16][0]  # 16x16x32, GROUP_M 4, subtiled


@pytest.fixture
def tiny_config(monkeypatch):
    monkeypatch.setattr(G.gemm_tma_kernel, "configs", [_TINY])
    ws, cnt = G._tail_buffers(torch.device("cpu"), G._INTERP_NUM_SMS)
    ws.fill_(float("nan"))  # the tail's partials overwrite NaN: the number of finite floats says who ran
    return ws, cnt


def _inputs(M, N, K, b_transposed=False, seed=0):
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(M, K, generator=gen).to(torch.float16)
    b = (torch.randn(N, K, generator=gen).to(torch.float16).t() if b_transposed
         else torch.randn(K, N, generator=gen).to(torch.float16))
    return a, b


@pytest.mark.parametrize("M, N, K, act, bt, splits", [
    (48, 32, 160, "gelu", False, 2),  # 6 tiles on 4 programs: 4 + a 2-tile tail, 5 K steps split 3 + 2
    (48, 32, 96, "silu", True, 2),    # b as an (N, K) weight's .t() view (B_TRANS)
    (16, 80, 128, None, False, 4),    # 5 tiles: 4 + a 1-tile tail split 4 ways (one K step each)
    (16, 32, 160, "gelu", False, 2),  # 2 tiles, fewer than the 4 programs: plain split-K, 2 ways (3 + 2 steps)
    (16, 16, 96, None, True, 3),      # 1 tile split over 3 programs (3 K steps: the split stops at K's steps)
])
def test_split_tail_sums_right_and_activates_once(tiny_config, M, N, K, act, bt, splits):
    ws, cnt = tiny_config
    a, b = _inputs(M, N, K, bt)
    c = G.gemm(a, b, act)
    torch.testing.assert_close(c.float(), G.reference(a, b, act), atol=2e-2, rtol=2e-2)
    tiles = (M // 16) * (N // 16)
    tail = tiles % G._INTERP_NUM_SMS
    programs = G.tma_programs(M, N, K, _TINY.kwargs, G._INTERP_NUM_SMS, G.TAIL_SPLIT_MAX)
    assert programs == (G._INTERP_NUM_SMS if tiles >= G._INTERP_NUM_SMS else tiles * splits)
    assert int((~ws.isnan()).sum()) == tail * splits * 16 * 16  # really split: every partial written once
    assert not bool(cnt.any())  # every arrival counter reset for the next launch
    assert torch.equal(G.gemm(a, b, act), c)  # fixed summation order: the same bits again


@pytest.mark.parametrize("M, N, K", [(67, 40, 88),  # 15 tiles: the last round's 3 tiles fill 3 of 4 programs
                                     (32, 32, 64),  # 4 tiles: one round, no tail
                                     (48, 16, 64)])  # 3 tiles on 4 programs: more than half full, no split
def test_no_split_when_the_last_round_is_more_than_half_full(tiny_config, M, N, K):
    ws, _ = tiny_config
    a, b = _inputs(M, N, K)
    torch.testing.assert_close(G.gemm(a, b).float(), G.reference(a, b), atol=2e-2, rtol=2e-2)
    assert bool(ws.isnan().all())


def test_tail_split_off(tiny_config, monkeypatch):
    ws, _ = tiny_config
    monkeypatch.setattr(G, "TAIL_SPLIT_MAX", 1)
    a, b = _inputs(48, 32, 160, seed=1)
    torch.testing.assert_close(G.gemm(a, b, "gelu").float(), G.reference(a, b, "gelu"), atol=2e-2, rtol=2e-2)
    assert bool(ws.isnan().all())


def test_explore_mid_m_script_runs_its_rows_on_the_interpreter(tiny_config, monkeypatch, tmp_path):
    """tests/bench/explore_gemm_mid_m.py end to end on the CPU (do_bench stubbed): every row checked correct,
    the tail-on rows of a shape with a partial last round report its split."""
    import json
    import sys

    import triton.testing

    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent / "bench"))
    monkeypatch.setattr(triton.testing, "do_bench", lambda fn, warmup=0, rep=0: (fn(), 0.1)[1])
    sys.modules.pop("explore_gemm_mid_m", None)
    import explore_gemm_mid_m as E

    out = tmp_path / "r" / "mid.json"
    assert E.main(["--device", "cpu", "--dtype", "float16", "--m", "48", "--nk", "32:160", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert {r["name"] for r in rows} >= {"torch.matmul", "gemm tail<=1", f"gemm tail<={G.TAIL_SPLIT_MAX}"}
    assert all(r["us"] is not None and r["rel_err"] < 1e-2 for r in rows)
    assert E.tail_split(160, 132, 216, 8) == 4 and E.tail_split(128, 132, 64, 8) == 1  # 1024x5120x13824, 4096^2


def test_transposed_operands_compile_for_sm90_with_the_tail(cli_env):
    """Compile-only for sm_90 (the tail compiled in): a and b as transposed views with a 16x16x32 tile, so each
    operand box's two layouts have different shapes (a branch Triton type-checks even when constexpr-dead)."""
    from conftest import run_cli

    p = run_cli(["ir", "gemm", "--case", "tiny_tma_at", "--arch", "sm_90", "--stage", "ttgir"], cli_env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "TAIL_SPLIT=8" in p.stderr and "tt.atomic_rmw" in p.stdout  # the split tail and its counter
