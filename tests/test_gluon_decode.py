"""The Gluon decode kernel (kernels/_gluon_decode.py; fp8, and bf16 / fp16 for gemm) on the CPU: its candidates per shape, and that each one
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


def test_16bit_candidates_take_k_steps_of_the_same_bytes_and_split_few_tiles_for_one_cta_an_sm():
    """gemm (bf16 / fp16, M <= 64): K steps half as deep as fp8's (the same bytes a stage), rings within SMEM_BYTES
    at 2 bytes an element, and an "auto" split sized for as many CTAs an SM as the rings let share one: a 64-token
    ring of 6 stages (192 KiB) is one CTA an SM, so N = 4096 (64 tiles) splits K in 2 (one wave), where 8 tokens'
    (108 KiB) share an SM two by two (4 splits)."""
    assert GD.candidates(1) == GD.CANDIDATES and GD.candidates(2) == GD.CANDIDATES_16
    assert {bk for bk, _, _ in GD.CANDIDATES_16} == {bk // 2 for bk, _, _ in GD.CANDIDATES}
    big = GD.expand(64, 4096, 4096, 132, GD.CANDIDATES_16, 2)
    assert all((GD.BLOCK_W + bt) * bk * 2 * stages <= GD.SMEM_BYTES and stages >= GD.MIN_STAGES
               for bt, bk, stages, _ in big)
    assert (64, 128, 6, 2) in big and (64, 256, 3, 1) in big and (64, 128, 8, 1) not in big
    assert (8, 128, 6, 4) in GD.expand(1, 4096, 4096, 132, GD.CANDIDATES_16, 2)
    assert not any(c[3] != 1 for c in GD.expand(17, 14336, 4096, 132, GD.CANDIDATES_16, 2))  # 224 tiles: no split


@pytest.mark.parametrize("fp8,split", [(True, 1), (True, 2), (False, 1), (False, 2)])
def test_build_passes_scales_or_none_and_the_streams_scratch_in_the_kernels_order(monkeypatch, fp8, split):
    """The launcher's argument order after the descriptors is the kernel's: c, scale_a, scale_b, ws, cnt, then the
    sizes and constexprs. fp8 passes its scales per call; 16-bit passes None (the kernel is specialised on None),
    per call before a split's scratch (the launcher inserts the stream's workspace after the call's tensors), in the
    launcher's tail otherwise. A plan's call hands the same arguments as the first launch."""
    import torch

    launched, made = [], []

    class Kernel:
        def __getitem__(self, grid):
            return lambda *args, **kw: launched.append(args) or "compiled"

    class Launcher:
        def __init__(self, compiled, grid, tail, kernel, scratch):
            self.tail, self.scratch = tail, scratch
            made.append(self)

        def with_templates(self, tensors, templates, bases, trailing):
            self.call = (*trailing, *(("ws", "cnt") if self.scratch else ()), *self.tail)

    monkeypatch.setattr(GD, "gluon_decode_kernel", Kernel())
    monkeypatch.setattr(GD._launch, "Launcher", Launcher)
    monkeypatch.setattr(GD._launch, "descriptor_template", lambda d: d)
    monkeypatch.setattr(GD, "descriptors", lambda a, b, bt, bk, kmajor: (f"w{kmajor}", "a"))
    monkeypatch.setattr(GD, "_scratch_for", lambda *args: (lambda: ("ws", "cnt")))
    import tritondbg.kernels._gemm_gluon as GG
    monkeypatch.setattr(GG, "_num_sms", lambda device: 132)
    dt = torch.float8_e4m3fn if fp8 else torch.bfloat16
    a, b = torch.empty(3, 256, dtype=dt), torch.empty(256, 640, dtype=dt)
    c = torch.empty(3, 640, dtype=torch.bfloat16)
    scales = ("sa", "sb") if fp8 else ()
    plan = GD.build((8, 128, 4, split), a, b, c, *scales, w_kmajor=fp8)
    first = launched[0]
    assert first[:2] == (f"w{fp8}", "a") and first[2] is c
    assert first[3:7] == ((*scales, "ws", "cnt") if split > 1 else (*scales, None, None)) if fp8 else \
        ((None, None, "ws", "cnt") if split > 1 else (None, None, None, None))
    assert first[-1] is fp8  # W_KMAJOR, last before num_warps (a launch option here)
    plan(a, b, c, *scales)
    assert made[0].call == first[2:] + (4,)  # ... and num_warps, the kernel's last (constexpr) parameter
    if fp8:
        with pytest.raises(ValueError, match="scales"):  # fp8 without its scales: one clear error, no launch
            GD.build((8, 128, 4, 1), a, b, c)
        assert len(launched) == 1


def test_16bit_candidates_compile_for_sm90_both_b_layouts(cli_env, tmp_path):
    """bf16 with a row-major b (the weight read through a transposed, M-major view: wgmma's 16-bit A operand) and
    fp16 with b = w.t(): every candidate compiles for sm_90 with 16-bit wgmma, TMA, no spill."""
    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    import json
    import subprocess
    import sys

    rows = []
    for dtype, layout, shape in (("bfloat16", "kn", "17x4096x4096"), ("float16", "nk", "64x4096x1000")):
        out = tmp_path / f"{dtype}.json"
        p = subprocess.run([sys.executable, str(REPO / "tests/bench/gluon_decode.py"), "--compile-only", "--dtype",
                            dtype, "--b-layout", layout, "--shapes", shape, "--out", str(out)], env=cli_env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
        got = json.loads(out.read_text())
        M, N, K = map(int, shape.split("x"))
        assert len(got) == len(GD.expand(M, N, K, 132, GD.CANDIDATES_16, 2)) >= 3
        short = "bf16" if dtype == "bfloat16" else "f16"
        for r in got:
            assert r["spill_bytes"] == 0 and r["shared"] <= 227 * 1024, r
            assert r["wgmma"] == [f"m64n{GD._token_tile(M)}k16.f32.{short}.{short}"] and r["tma"] >= 2, r
            assert r["kmajor"] is (layout == "nk")
        rows += got
    assert {r["merged"] for r in rows} == {True, False}
