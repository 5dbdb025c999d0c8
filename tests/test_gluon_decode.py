"""The Gluon fp8 decode kernel (kernels/_gluon_decode.py) on the CPU: its candidates per shape, and that each one
the race can field compiles for sm_90 (TMA, wgmma, mbarriers, no spill, within shared memory). It runs on the H200 in
tests/gpu/test_gemm_ws_gpu.py (every candidate and split against the fp32 product, its cached launcher's bits, the
race); fp8_gemm's race over it: tests/test_fp8_race.py."""
from pathlib import Path

import pytest

GD = pytest.importorskip("tritondbg.kernels._gluon_decode", exc_type=ImportError)
REPO = Path(__file__).resolve().parents[1]


def _owners(M, N, K, bt, bk, progs):
    """Per tile, (slot, count, first unit, end unit) of each program whose share of the walk touches it: the
    kernel's own arithmetic (``_units``, ``_contributors``), in Python."""
    tiles, k_tiles = GD._tiles(M, N, bt), -(-K // bk)
    units = tiles * k_tiles
    progs = min(progs, units)
    out = {}
    for p in range(progs):
        lo, hi = p * units // progs, (p + 1) * units // progs
        for t in range(lo // k_tiles, (hi - 1) // k_tiles + 1):
            first = ((t * k_tiles + 1) * progs + units - 1) // units - 1
            last = ((t + 1) * k_tiles * progs + units - 1) // units - 1
            out.setdefault(t, []).append((p - first, last - first + 1, max(lo, t * k_tiles),
                                          min(hi, (t + 1) * k_tiles)))
    return out, tiles, k_tiles


@pytest.mark.parametrize("M,N,K,bk,progs", [(1, 14336, 4096, 512, 132), (16, 8192, 8192, 256, 132),
                                            (3, 1000, 3008, 256, 132), (64, 4096, 14336, 512, 264),
                                            (1, 640, 256, 256, 132), (5, 4160, 4096, 256, 7)])
def test_stream_k_shares_cover_every_tile_once_and_count_its_contributors(M, N, K, bk, progs):
    """Every tile's K steps are covered once, by adjacent programs whose slots are 0..count-1 and who agree on
    count (the last arrival sums exactly the partials written), and the workspace holds the most of them."""
    bt = GD._token_tile(M)
    owners, tiles, k_tiles = _owners(M, N, K, bt, bk, progs)
    assert sorted(owners) == list(range(tiles))
    for t, segs in owners.items():
        segs.sort()
        assert [s[0] for s in segs] == list(range(len(segs))) and {s[1] for s in segs} == {len(segs)}, (t, segs)
        assert segs[0][2] == t * k_tiles and segs[-1][3] == (t + 1) * k_tiles
        assert all(a[3] == b[2] and a[3] > a[2] for a, b in zip(segs, segs[1:]))
    assert GD.walk(M, N, K, bt, bk, GD.STREAM, progs)[2] == max(len(s) for s in owners.values())


def test_token_tile_stages_and_splits_per_shape():
    cands = GD.expand(1, 8192, 8192, 132)
    assert [c[0] for c in cands] == [8] * len(cands) and {c[3] for c in cands} == {1}  # the race's: unsplit
    assert {GD.expand(M, 8192, 8192, 132)[0][0] for M in (9, 16)} == {16} and GD.expand(33, 64, 256, 132)[0][0] == 64
    # 64 tokens: (64 + 64) x 256 bytes a stage, at most SMEM_BYTES of ring: 8 stages become 6, a duplicate of (256, 6)
    big = GD.expand(64, 8192, 8192, 132)
    assert len(big) == len(set(big)) and (64, 256, 6, 1) in big and (64, 256, 8, 1) not in big
    assert all((GD.BLOCK_W + bt) * bk * stages <= GD.SMEM_BYTES and stages >= GD.MIN_STAGES
               for bt, bk, stages, _ in big)
    # a ring that cannot hold MIN_STAGES is dropped, not launched (a 1-stage ring deadlocks the promoted loop)
    assert GD.expand(64, 8192, 8192, 132, ((1024, 2, 1),)) == ()
    # "auto" splits: tiles x splits near two programs per SM, none empty; 1 (its unsplit twin) dropped
    assert GD.expand(3, 1000, 3008, 132, ((256, 6, "auto"),)) == ((8, 256, 6, 6),)
    assert GD.expand(1, 8192, 8192, 132, ((256, 6, "auto"),)) == ((8, 256, 6, 2),)
    assert GD.expand(1, 32768, 8192, 132, ((256, 6, "auto"),)) == ()
    # stream-K: min(SMs, units) programs; SLOTS the most programs sharing a tile; dropped where every program would
    # take whole tiles (132 tiles of 64 weight rows on 132 SMs: the unsplit walk)
    assert GD.walk(16, 14336, 4096, 16, 512, GD.STREAM, 132) == ((132,), 1, 2, True)
    assert GD.walk(1, 640, 256, 8, 256, GD.STREAM, 132) == ((10,), 1, 1, True)
    sk = ((512, 4, GD.STREAM),)
    assert GD.expand(1, 132 * 64, 4096, 132, sk) == () and GD.expand(1, 133 * 64, 4096, 132, sk) == ((8, 512, 4, sk[0][2]),)
    for M, N, K in ((1, 1000, 3008), (7, 4096, 300), (64, 640, 16)):
        for _, bk, _, split in GD.expand(M, N, K, 132, ((128, 4, "auto"), (256, 4, "auto"))):
            k_tiles = -(-K // bk)
            assert (split - 1) * -(-k_tiles // split) < k_tiles  # the last split has K steps


@pytest.mark.parametrize("M", [1, 64])
def test_every_race_candidate_compiles_for_sm90_with_tma_wgmma_and_no_spill(M, cli_env, tmp_path):
    """What the race fields at 8 and 64 tokens, a split and a stream-K walk (the bench's): the merged ones with one
    acq_rel atomic and .cg re-reads, the others without. In a subprocess (``gluon_decode.py --compile-only``): Triton
    3.6's interpreter, which the test process runs kernels under, leaves triton.language patched for a later compile."""
    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    import json
    import subprocess
    import sys

    out = tmp_path / "compiled.json"
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/gluon_decode.py"), "--compile-only", "--shapes",
                        f"{M}x8192x8192", "--out", str(out)], env=cli_env, capture_output=True, text=True, timeout=600)
    extra = subprocess.run([sys.executable, str(REPO / "tests/bench/gluon_decode.py"), "--compile-only", "--shapes",
                            f"{M}x1000x3008", "--cands", "256:4:auto,512:4:sk", "--out", str(tmp_path / "x.json")],
                           env=cli_env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and extra.returncode == 0, (p.stdout + p.stderr + extra.stdout + extra.stderr)[-3000:]
    rows = json.loads(out.read_text()) + json.loads((tmp_path / "x.json").read_text())
    bt = GD._token_tile(M)
    assert len(rows) == len(GD.expand(M, 8192, 8192, 132)) + 2
    assert any("stream-K" in r["name"] for r in rows) and any("split-K" in r["name"] for r in rows)
    for r in rows:
        assert r["spill_bytes"] == 0 and r["shared"] <= 227 * 1024, r
        assert r["wgmma"] == [f"m64n{bt}k32.f32.e4m3.e4m3"] and r["tma"] >= 2 and r["mbarrier_wait"] >= 1, r
        assert (r["atom_acq_rel"] > 0) == r["merged"] and (r["ld_cg"] > 0) == r["merged"], r
    assert {r["merged"] for r in rows} == {True, False}
