"""The Gluon fp8 decode kernel (kernels/_gluon_decode.py) on the CPU: its candidates per shape, and that each one
the race can field compiles for sm_90 (TMA, wgmma, mbarriers, no spill, within shared memory). It runs on the H200 in
tests/gpu/test_gemm_ws_gpu.py (every candidate and split against the fp32 product, its cached launcher's bits, the
race); fp8_gemm's race over it: tests/test_fp8_race.py."""
import re

import pytest
import torch

GD = pytest.importorskip("tritondbg.kernels._gluon_decode", exc_type=ImportError)


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


def _compile(cfg):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    from tritondbg.ir.stages import cubin_usage

    bt, bk, stages, split = cfg
    f8 = torch.float8_e4m3fn
    a, b = torch.empty(64, 1024, dtype=f8), torch.empty(512, 1024, dtype=f8).t()
    descs = GD.descriptors(a, b, bt, bk)
    types = dict(w_desc=mangle_type(descs[0]), a_desc=mangle_type(descs[1]), c_ptr="*bf16", scale_a_ptr="*fp32",
                 scale_b_ptr="*fp32", M="i32", N="i32", K="i32", stride_cm="i32")
    _, split_k, slots, stream_k = GD.walk(64, 512, 1024, bt, bk, split, 132)
    const = dict(STAGES=stages, SPLIT_K=split_k, SLOTS=slots, STREAM_K=stream_k, num_warps=4)
    if slots > 1:
        types.update(ws_ptr="*fp32", cnt_ptr="*i32")
    else:
        const.update(ws_ptr=None, cnt_ptr=None)
    sig = {n: types.get(n, "constexpr") for n in GD.gluon_decode_kernel.arg_names}
    k = triton.compile(GluonASTSource(GD.gluon_decode_kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                       options=dict(num_warps=4, maxnreg=GD.maxnreg(4)))
    return k, cubin_usage(k.asm["cubin"])


@pytest.mark.parametrize("M", [1, 64])
def test_every_race_candidate_compiles_for_sm90_with_tma_wgmma_and_no_spill(M):
    """What the race fields at 8 and 64 tokens, a split and a stream-K walk (the bench's): the merged ones with one
    acq_rel atomic and .cg re-reads, the others without."""
    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    cands = GD.expand(M, 8192, 8192, 132) + GD.expand(M, 1000, 3008, 132, ((256, 4, "auto"), (512, 4, GD.STREAM)))
    assert any(c[3] == GD.STREAM for c in cands) and any(isinstance(c[3], int) and c[3] > 1 for c in cands)
    for cfg in cands:
        k, usage = _compile(cfg)
        ptx = k.asm["ptx"]
        merged = cfg[3] == GD.STREAM or cfg[3] > 1
        assert usage["STACK"] == 0, (cfg, usage)
        assert k.metadata.shared <= 227 * 1024, (cfg, k.metadata.shared)
        assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n%dk32\.f32\.e4m3\.e4m3" % cfg[0], ptx), cfg
        assert "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait" in ptx
        assert bool(re.search(r"atom\.global\.gpu\.acq_rel", ptx)) == merged, cfg
        assert bool(re.search(r"ld\.global\.cg", ptx)) == merged, cfg
