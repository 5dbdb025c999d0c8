"""The row kernels' config rule (kernels/_rows.py) and the paths it picks, run under the interpreter: rows per
program for short rows, the looped kernels for long rows, persistent programs walking several tiles, and the
16-byte vector hint for row lengths that are not multiples of 16."""
import pytest
import torch
import triton

from tritondbg.kernels import _launch, _rows
from tritondbg.kernels import layernorm as LN
from tritondbg.kernels import softmax as SM
from tritondbg.kernels._rows import RowConfig, row_config


def test_rule_rows_per_program_warps_and_paths():
    # short rows: ~8 KiB of input per program (several rows), ~32 tile elements per thread
    assert row_config(128, 2, 16384) == RowConfig("single", 128, 32, 4)
    assert row_config(1000, 2, 16384) == RowConfig("single", 1024, 4, 4)
    assert row_config(1000, 4, 16384) == RowConfig("single", 1024, 2, 4)  # fp32: half the rows
    # small inputs: tiles shrink towards 2 KiB for MIN_PROGRAMS programs, one row each (more warps) when that is
    # still fewer than FEW_PROGRAMS; big M keeps the 8 KiB tiles
    assert row_config(128, 2, 16384, M=3) == RowConfig("single", 128, 1, 4)
    assert row_config(128, 2, 16384, M=2048) == RowConfig("single", 128, 8, 4)  # 256 programs, not 64
    assert row_config(512, 2, 16384, M=512) == RowConfig("single", 512, 2, 4)
    assert row_config(1000, 2, 16384, M=262) == RowConfig("single", 1024, 1, 4)
    assert row_config(3000, 2, 16384, M=87) == RowConfig("single", 4096, 1, 8)
    assert row_config(256, 2, 16384, M=4096) == RowConfig("single", 256, 4, 4)  # 1M elements: 1024 programs
    assert row_config(128, 2, 16384, M=262144) == row_config(128, 2, 16384, M=32768) == RowConfig("single", 128, 32, 4)
    for M in (1, 5, 255, 256, 257, 1000, 4095, 8191, 8192, 10 ** 6):
        cfg = row_config(128, 2, 16384, M=M)
        assert triton.cdiv(M, cfg.rows) >= min(M, _rows.FEW_PROGRAMS), (M, cfg)
        assert cfg.rows == 32 or M < 32 * _rows.MIN_PROGRAMS, (M, cfg)
    assert row_config(8192, 2, 16384) == RowConfig("single", 8192, 1, 8)
    assert row_config(7000, 2, 16384) == RowConfig("single", 8192, 1, 8)  # 15% padding: one block
    # 4097..6144 columns: 4096 + a power-of-two tail instead of an 8192 block with >= 25% padding
    assert row_config(5000, 2, 16384) == row_config(6144, 4, 16384) == RowConfig("split", 4096, 1, 8)
    # 8193..32768 columns, few rows: the whole row in one 32-warp program
    assert row_config(11008, 2, 32768, M=24) == RowConfig("single", 16384, 1, 32)
    assert row_config(32768, 2, 32768, M=8) == RowConfig("single", 32768, 1, 32)
    # many rows of <= 16384 columns: one 16-warp program per row, head + tail when the block would be >= 25% pad
    assert row_config(11008, 2, 32768, M=3048) == RowConfig("split", 8192, 1, 16)
    assert row_config(14336, 2, 32768, M=2341) == RowConfig("single", 16384, 1, 16)
    # many rows of > 16384 columns loop, in the wrapper's chunk; past WIDE_MAX_BLOCK always
    assert row_config(32768, 2, 32768, M=1024) == RowConfig("looped", 4096, 1, 8, 1)
    assert row_config(24576, 2, 32768, M=1365, loop_chunk=8192) == RowConfig("looped", 8192, 1, 16, 1)
    assert SM.config_for(32768, 2, M=1024) == RowConfig("looped", 8192, 1, 16, 1)
    assert LN.config_for(32768, 2, M=1024) == RowConfig("looped", 4096, 1, 8, 1)
    assert row_config(65536, 2, 32768, M=2).kind == "looped"
    assert row_config(11008, 2, 16384, M=3048) == RowConfig("split", 8192, 1, 16)
    assert row_config(20000, 2, 16384, M=2).kind == "looped"  # capped by max_block_n
    assert row_config(777, 4, 128) == RowConfig("looped", 128, 1, 4, 1)  # forced by max_block_n (tests)


def test_vec_is_the_largest_power_of_two_dividing_the_row_and_its_strides():
    assert _rows.vec(1000, 1000, 1000, elem_size=2) == 8  # 1000 = 8 * 125: 16-byte vectors
    assert _rows.vec(5000, 5000, 5000, elem_size=4) == 4
    assert _rows.vec(1000, 1002, 1000, elem_size=2) == 2  # a padded row stride limits it
    assert _rows.vec(777, 777, 777, elem_size=2) == 1


@pytest.mark.parametrize("bad, match", [(("pair", 128, 1, 4), "kind"), (("single", 64, 1, 4), "block_n 64 < N"),
                                        (("single", 128, 3, 4), "rows"), (("looped", 64, 2, 4), "rows must be 1"),
                                        (("single", 128, 1, 4, 8), "stages")])
def test_a_given_config_is_checked(bad, match):
    x = torch.randn(4, 100)
    with pytest.raises(ValueError, match=match):
        SM.softmax(x, config=bad)


@pytest.mark.parametrize("kind", ["layernorm", "softmax"])
def test_persistent_programs_walk_several_tiles(kind, monkeypatch):
    """stages >= 2: fewer programs than tiles, each walks tiles pid, pid + programs, ... (the last one partial)."""
    monkeypatch.setattr(_launch, "launchable", lambda t: True)
    monkeypatch.setattr(_launch, "pristine", lambda k: True)
    monkeypatch.setattr(_rows, "_persistent_programs", lambda *a: 3)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(37, 300, generator=gen) * 3 + 1
    cfg = ("single", 512, 4, 4, 2)  # 10 tiles of 4 rows (the last one 1 row) over 3 programs
    if kind == "layernorm":
        w, b = torch.randn(300, generator=gen), torch.randn(300, generator=gen)
        out, ref = LN.layernorm(x, w, b, config=cfg), LN.reference(x, w, b)
    else:
        out, ref = SM.softmax(x, config=cfg), SM.reference(x)
    torch.testing.assert_close(out, ref, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("kind", ["layernorm", "softmax"])
def test_looped_kernels_with_pipelined_chunks(kind):
    gen = torch.Generator().manual_seed(1)
    x = (torch.randn(3, 1000, generator=gen) * 4 + 20).to(torch.float16)  # 1000 = 7 chunks of 128 + 104
    cfg = ("looped", 128, 1, 4, 3)
    if kind == "layernorm":
        w, b = torch.randn(1000, generator=gen).half(), torch.randn(1000, generator=gen).half()
        out, ref = LN.layernorm(x, w, b, config=cfg), LN.reference(x, w, b)
    else:
        out, ref = SM.softmax(x, config=cfg), SM.reference(x)
    torch.testing.assert_close(out.float(), ref, atol=1e-2, rtol=1e-2)


def test_persistent_programs_fill_the_gpu_once(monkeypatch):
    """Programs per SM from the compiled kernel: the scarcest of registers, threads and shared memory."""
    import types

    class Compiled:
        n_regs = 64
        metadata = types.SimpleNamespace(shared=49184)

        def _init_handles(self):
            pass

    calls = []

    class Kernel:
        def warmup(self, *args, grid, **kwargs):
            calls.append((grid, kwargs))
            return Compiled()

    props = {"max_num_regs": 65536, "max_shared_mem": 232448, "multiprocessor_count": 132}
    monkeypatch.setattr(_rows, "_device_properties", lambda index: props)
    monkeypatch.setattr(_rows, "_PROGRAMS", {})
    x = torch.empty(8, 8)
    cfg = RowConfig("single", 8192, 1, 8, 2)
    # 256 threads x 64 registers: 4 per SM by registers, 8 by threads, 4 by shared memory (4 x 49184 bytes)
    k = Kernel()
    assert _rows._persistent_programs(k, (x,), {"N": 8}, {"BLOCK_N": 8192}, cfg) == 4 * 132
    assert _rows._persistent_programs(k, (x,), {"N": 8}, {"BLOCK_N": 8192}, cfg) == 4 * 132
    assert len(calls) == 1 and calls[0][1]["num_warps"] == 8  # compiled once per kernel and constexprs


@pytest.mark.parametrize("kind", ["layernorm", "softmax"])
@pytest.mark.parametrize("M, cfg", [(2, None), (2, ("split", 8192, 1, 16))])
def test_long_rows_held_whole(kind, M, cfg):
    """Rows of 8193.. columns without the loop: few rows as one 16384 block (the rule's pick at M = 2, checked
    here), many rows as 8192 + a tail block (forced: the interpreter would take long over 265 rows)."""
    gen = torch.Generator().manual_seed(2)
    N = 9001  # odd: no vector hint, a ragged tail
    x = (torch.randn(M, N, generator=gen) * 3 + 5).to(torch.bfloat16)
    mod = LN if kind == "layernorm" else SM
    if cfg is None:
        assert mod.config_for(N, 2, M=M) == RowConfig("single", 16384, 1, 32)
    if kind == "layernorm":
        w, b = torch.randn(N, generator=gen).bfloat16(), torch.randn(N, generator=gen).bfloat16()
        out, ref = LN.layernorm(x, w, b, config=cfg), LN.reference(x, w, b)
    else:
        out, ref = SM.softmax(x, config=cfg), SM.reference(x)
    torch.testing.assert_close(out.float(), ref.float(), atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("kind", ["layernorm", "softmax"])
@pytest.mark.parametrize("shape", [(3, 5, 300), (1000,), (2, 3, 4, 1000), (2, 0, 64)])
def test_leading_dims_as_torch_takes_them(kind, shape):
    """x of shape (..., N), as F.layer_norm(x, (N,)) and torch.softmax(x, -1) take it (layernorm took only 2-D x
    until session 18): rows of N, the output in x's shape; every path (single, split, looped) sees (M, N)."""
    gen = torch.Generator().manual_seed(2)
    x = (torch.randn(*shape, generator=gen) * 3 + 1).to(torch.bfloat16)
    N = shape[-1]
    for cfg in (None, ("looped", 128, 1, 4, 2)):
        if kind == "layernorm":
            w, b = torch.randn(N, generator=gen).bfloat16(), torch.randn(N, generator=gen).bfloat16()
            out, ref = LN.layernorm(x, w, b, 1e-3, config=cfg), LN.reference(x, w, b, 1e-3)
        else:
            out, ref = SM.softmax(x, config=cfg), SM.reference(x)
        assert out.shape == x.shape and out.dtype == x.dtype and out.is_contiguous()
        torch.testing.assert_close(out.float(), ref.float(), atol=4e-2, rtol=2e-2)


def test_layernorm_names_what_it_cannot_take():
    w = torch.randn(10)
    with pytest.raises(ValueError, match="at least 1 dim"):
        LN.layernorm(torch.tensor(1.0), w, None)
    with pytest.raises(ValueError, match="must be contiguous"):
        LN.layernorm(torch.randn(4, 6, 10).transpose(0, 1), w, None)
    with pytest.raises(ValueError, match=r"weight must have shape \(10,\)"):
        LN.layernorm(torch.randn(2, 3, 10), torch.randn(3), None)


def test_coop_rule_cuts_few_long_rows_over_the_sms():
    """Few long rows on a GPU: each row over several programs, the smallest slice (>= 2048 columns) giving at most
    four programs per SM; rows of 48 KiB or more up to half the SMs, of 96 KiB or more up to one row per SM; none
    for shorter rows, for more rows than SMs, or without an SM count (CPU)."""
    sms = 132
    first = lambda M, N, e=2: (_rows.coop_configs(M, N, e, sms, 32768) or [None])[0]  # noqa: E731
    assert first(1, 128256) == RowConfig("coop", 2048, 1, 4, 1, 1)  # 63 programs
    assert first(8, 128256) == RowConfig("coop", 2048, 1, 4, 1, 1)  # 504 programs
    assert first(64, 32001) == RowConfig("coop", 4096, 1, 8, 1, 1)  # 512 programs (2048 columns: 1024)
    assert first(32, 151936) == RowConfig("coop", 8192, 1, 8, 1, 2)  # 16384-column slices, two steps each
    assert first(100, 128256) == RowConfig("coop", 8192, 1, 8, 1, 4)  # 400 programs (3 per SM: 65536 columns)
    assert first(128, 50257) == RowConfig("coop", 8192, 1, 8, 1, 2)  # more rows than half the SMs, 100 KB rows
    assert first(8, 32768) == RowConfig("coop", 2048, 1, 4, 1, 1)
    assert first(4, 24576, 4) == RowConfig("coop", 2048, 1, 4, 1, 1)  # fp32: 96 KiB rows
    for M, N, e in ((1, 20000, 2), (16, 16384, 2), (67, 32001, 2), (133, 128256, 2), (1, 2048, 4)):
        assert _rows.coop_configs(M, N, e, sms, 32768) == [], (M, N, e)  # < 48 / 96 KiB rows, or > sms rows
    assert _rows.coop_configs(1, 128256, 2, None, 32768) == []
    for M, N in ((1, 24576), (3, 50257), (7, 128256), (66, 256000), (67, 49153), (132, 256000), (1, 10 ** 6)):
        cands = _rows.coop_configs(M, N, 2, sms, 32768)
        assert cands, (M, N)
        for c in cands:  # >= 2 slices a row, programs within four per SM, steps of at most 8192 columns
            chunks = triton.cdiv(N, c.block_n * c.per)
            assert 2 <= chunks and M * chunks <= 4 * sms and c.block_n <= 8192, (M, N, c)
        assert [c.block_n * c.per for c in cands] == sorted(c.block_n * c.per for c in cands)


@pytest.mark.parametrize("M, N, cfg", [
    (3, 333, ("coop", 64, 1, 4, 1, 2)),     # 3 slices of 2 x 64 (the last one 77 columns)
    (2, 1000, ("coop", 128, 1, 4, 1, 1)),   # 8 slices (VEC 8: 1000 = 8 x 125)
    (5, 777, ("coop", 256, 1, 4, 1, 4)),    # one slice of 4 steps: statistics over the steps, then the output
    (1, 4100, ("coop", 512, 1, 4, 1, 2)),   # 5 slices, the last one 4 columns
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_coop_softmax_combines_the_slices_statistics(M, N, cfg, dtype):
    """Under the interpreter the coop kernel runs as two launches (statistics, output): slices whose maxima are far
    apart (|x| ~ 250) combine to torch's softmax; a row of -inf gives NaN as torch does."""
    gen = torch.Generator().manual_seed(M * N)
    x = (torch.randn(M, N, generator=gen) * 50).to(dtype)
    x[:, N // 3] = 300.0  # one slice holds the row's max, far above the others
    if M > 2:
        x[1] = -float("inf")
    out, ref = SM.softmax(x, config=cfg), SM.reference(x)
    assert out.dtype == dtype and out.shape == x.shape
    if M > 2:
        assert torch.isnan(out[1]).all() and torch.isnan(torch.softmax(x[1].float(), -1)).all()
        out, ref = out[[0, *range(2, M)]], ref[[0, *range(2, M)]]
    torch.testing.assert_close(out.float(), ref, atol=2e-2 if dtype == torch.bfloat16 else 1e-5, rtol=1e-2)


def test_coop_config_is_checked():
    x = torch.randn(2, 300)
    with pytest.raises(ValueError, match="rows must be 1"):
        SM.softmax(x, config=("coop", 64, 2, 4, 1, 1))
    with pytest.raises(ValueError, match="per must be"):
        SM.softmax(x, config=("coop", 64, 1, 4, 1, 0))
    with pytest.raises(ValueError, match="more than"):  # more programs than the scratch holds
        SM.softmax(torch.randn(5000, 300), config=("coop", 64, 1, 4, 1, 1))


def test_a_refused_cooperative_launch_falls_back_to_one_program_per_row(monkeypatch):
    """CUDA refuses a cooperative launch whose programs cannot all be resident (an MPS client's share of the SMs
    is smaller than the device's count): the wrapper then runs the rule's own pick, on that device from then on;
    a coop config the caller gave fails instead."""
    calls = []

    def refused(*args):
        calls.append(args)
        raise RuntimeError("Triton Error [CUDA]: too many blocks in cooperative launch")

    monkeypatch.setattr(_launch, "launchable", lambda t: True)
    monkeypatch.setattr(SM, "_fused", lambda: True)
    monkeypatch.setattr(SM, "_coop_pick", lambda *a: RowConfig("coop", 256, 1, 4, 1, 1))
    monkeypatch.setattr(SM, "_coop", refused)
    monkeypatch.setattr(SM, "COOP_REFUSED", set())
    x = torch.randn(3, 1000) * 5
    torch.testing.assert_close(SM.softmax(x), SM.reference(x), atol=1e-5, rtol=1e-5)
    assert len(calls) == 1 and SM.COOP_REFUSED == {x.device}
    SM.softmax(torch.randn(2, 1000))
    assert len(calls) == 1  # not tried again on that device
    with pytest.raises(RuntimeError, match="cooperative"):
        SM.softmax(x, config=("coop", 256, 1, 4, 1, 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_coop_softmax_on_rows_off_16_byte_boundaries(dtype):
    """Odd row lengths (each row starts elsewhere within a 16-byte vector): slices cut from the row's aligned base,
    whole vectors in the body and the ragged ends as edge lanes; and a strided x (rows of 400 of which 333 are
    used: x and y strides differ, so the plain path)."""
    gen = torch.Generator().manual_seed(7)
    for x in ((torch.randn(6, 1001, generator=gen) * 40).to(dtype),
              (torch.randn(5, 400, generator=gen) * 40).to(dtype)[:, :333]):
        v = SM.vec(x.shape[1], x.stride(0), x.shape[1], elem_size=x.element_size())
        va = SM.va(x, torch.empty(x.shape), v, 64)
        assert va == (16 // x.element_size() if x.is_contiguous() else 1)
        x[:, 0] = 250.0  # the max in a head lane for some rows
        for cfg in (("coop", 64, 1, 4, 1, 2), ("coop", 256, 1, 4, 1, 1), ("coop", 32, 1, 4, 1, 1)):
            torch.testing.assert_close(SM.softmax(x, config=cfg).float(), SM.reference(x),
                                       atol=2e-2 if dtype == torch.bfloat16 else 1e-5, rtol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_every_softmax_kernel_on_rows_off_16_byte_boundaries(dtype):
    """Rows whose length is not a multiple of 16 bytes start at every offset within a vector: the single-pass,
    split and looped kernels read them from each row's aligned base in whole vectors, the ragged ends in edge lanes.
    Checked at every lead (M >= 16 consecutive rows), with the row's max in a head lane, in a tail lane or in the
    body, a row of -inf (NaN, as torch), rows shorter than one vector, tiles of several rows with M not a multiple,
    a split tail shorter than a vector (N = 4097 style), and blocks narrower than a vector (the plain path)."""
    gen = torch.Generator().manual_seed(3)
    atol = 2e-2 if dtype == torch.bfloat16 else 1e-5
    va = 16 // torch.empty((), dtype=dtype).element_size()
    for M, N in ((17, 1001), (19, 333), (16, 1002), (16, 129), (17, 135), (9, 3), (11, 1)):
        x = (torch.randn(M, N, generator=gen) * 40).to(dtype)
        x[1, 0], x[2, -1], x[3, N // 2] = 300.0, 300.0, 300.0
        x[4] = -float("inf")
        v = SM.vec(N, N, N, elem_size=x.element_size())
        block = triton.next_power_of_2(N)
        assert SM.va(x, torch.empty_like(x), v, block) == (va if block >= va else 1)
        assert SM.va(x, torch.empty_like(x), v, va // 2) == 1  # a step narrower than a vector: plain path
        cfgs = [None, ("single", block, 1, 4), ("single", block, 4, 4), ("single", block, 2, 4, 2),
                ("single", block, 1, 4, 2),  # persistent programs, one row each (the aligned path)
                ("looped", 64, 1, 4), ("looped", 256, 1, 4)]
        if N < 200:  # steps narrower than a vector (the plain path; slow under the interpreter on long rows)
            cfgs.append(("looped", max(1, va // 2), 1, 4))
        if N > 2 and N & (N - 1):
            cfgs.append(("split", block // 2, 1, 4))  # head block_n = the power of two below N, a tail
        for cfg in cfgs:
            y = SM.softmax(x, config=cfg).float()
            assert y[4].isnan().all(), (M, N, cfg)
            torch.testing.assert_close(y, SM.reference(x), atol=atol, rtol=1e-2, equal_nan=True,
                                       msg=lambda m: f"{(M, N, cfg)}: {m}")
    # x's first row off the alignment of y's (a view at an odd storage offset): the same element offsets, right
    buf = (torch.randn(7 * 1001 + 3, generator=gen) * 40).to(dtype)
    x = buf[3:].view(7, 1001)
    torch.testing.assert_close(SM.softmax(x).float(), SM.reference(x), atol=atol, rtol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_every_layernorm_kernel_on_rows_off_16_byte_boundaries(dtype):
    """layernorm on rows off 16-byte boundaries: the looped kernel's aligned path (as softmax's above) and the
    single-pass and split kernels' scalar one: every lead within a vector, a large row mean (the centred variance),
    an outlier in a head lane, in a tail lane and in the body, rows shorter than a vector, bias and no bias, and the
    looped kernel's per-lane Welford with the first chunk's head lanes left out (steps of 64..256 columns)."""
    gen = torch.Generator().manual_seed(5)
    atol = 3e-2 if dtype == torch.bfloat16 else 1e-4
    va = 16 // torch.empty((), dtype=dtype).element_size()
    for M, N in ((17, 1001), (19, 333), (16, 1002), (17, 135), (9, 3), (11, 1)):
        x = (torch.randn(M, N, generator=gen) * 3 + 100).to(dtype)
        if N > 3:
            x[1, 0], x[2, -1], x[3, N // 2] = 160.0, 40.0, 190.0
        w = (1 + 0.3 * torch.randn(N, generator=gen)).to(dtype)
        b = (0.5 * torch.randn(N, generator=gen)).to(dtype)
        v = LN.vec(N, N, N, elem_size=x.element_size())
        block = triton.next_power_of_2(N)
        assert LN.va(x, torch.empty_like(x), v, block) == (va if block >= va else 1)
        cfgs = [None, ("single", block, 1, 4), ("single", block, 4, 4), ("single", block, 1, 4, 2),
                ("looped", 64, 1, 4), ("looped", 256, 1, 4)]
        if N < 200:
            cfgs.append(("looped", max(1, va // 2), 1, 4))  # steps narrower than a vector: the plain path
        if N > 2 and N & (N - 1):
            cfgs.append(("split", block // 2, 1, 4))
        for bias in (b, None):
            ref = LN.reference(x, w, bias)
            for cfg in cfgs:
                torch.testing.assert_close(LN.layernorm(x, w, bias, config=cfg).float(), ref, atol=atol, rtol=1e-2,
                                           msg=lambda m: f"{(M, N, cfg, bias is None)}: {m}")
    buf = (torch.randn(7 * 1001 + 3, generator=gen) * 3).to(dtype)  # a view at an odd storage offset
    x = buf[3:].view(7, 1001)
    w, b = torch.ones(1001, dtype=dtype), torch.zeros(1001, dtype=dtype)
    torch.testing.assert_close(LN.layernorm(x, w, b).float(), LN.reference(x, w, b), atol=atol, rtol=1e-2)


@pytest.mark.parametrize("op", ["softmax", "layernorm"])
def test_odd_rows_compile_to_16_byte_vectors_for_sm90(op, cli_env, tmp_path):
    """The property the aligned path is for, checked without a GPU: softmax over GPT-2's 50257-column logits
    (looped kernel), 32001 columns held whole, 1001-column rows (one per program) and 5001-column rows as two blocks
    (split kernel), and layernorm over the 50257 columns (looped), compile for sm_90 to 16-byte loads and stores of
    x and y, scalar accesses only for the edge lanes (before: every access scalar, and the H200 ran softmax
    4096x50257 bf16 at 0.84x torch.softmax, layernorm 603 against 433 us). layernorm's weight and bias are read at
    the row's columns, off their vectors: scalar loads."""
    from conftest import run_cli

    sc = tmp_path / "odd_rows.py"
    names = dict(softmax=("softmax_kernel", "softmax_looped_kernel", "softmax_split_kernel"),
                 layernorm=("layernorm_fwd_kernel", "layernorm_fwd_looped_kernel", "layernorm_fwd_split_kernel"))[op]
    sc.write_text(
        f"from tritondbg import Case, Scenario\nfrom tritondbg.kernels import {op} as K\nimport torch\n\n"
        "def make_inputs(case, dtype, device, generator):\n"
        "    p = case.params\n"
        "    t = lambda *s: torch.randn(*s, generator=generator).to(device=device, dtype=dtype)\n"
        "    x = t(p['M'], p['N'])\n"
        + ("    return dict(x=x)\n\n" if op == "softmax" else
           "    return dict(x=x, weight=t(p['N']), bias=t(p['N']))\n\n")
        + f"SCENARIO = Scenario(name='odd_rows', description='odd rows', make_inputs=make_inputs, launch=K.{op},\n"
        f"    reference=K.reference, kernels=[{', '.join('K.' + n for n in names)}],\n"
        "    cases=[Case('vocab', params=dict(M=4, N=50257), dtypes=('bfloat16',)),\n"
        "           Case('wide', params=dict(M=8, N=32001), dtypes=('bfloat16',)),\n"
        "           Case('rows', params=dict(M=4096, N=1001), dtypes=('bfloat16',)),\n"
        "           Case('split', params=dict(M=4096, N=5001), dtypes=('bfloat16',))])\n")
    import re

    single, looped, split = names
    cases = (("vocab", looped), ("wide", single), ("rows", single), ("split", split))
    if op == "layernorm":  # the aligned path in the looped kernel only (kernels/layernorm.py: measured slower else)
        cases = cases[:1]
    for case, kernel in cases:
        p = run_cli(["ir", str(sc), "--case", case, "--arch", "sm_90", "--stage", "ptx"], cli_env, timeout=300)
        assert p.returncode == 0 and kernel in p.stderr, (case, p.stderr[-2000:])
        loads = re.findall(r"ld\.global[\w.:]*", p.stdout)
        stores = re.findall(r"st\.global[\w.:]*", p.stdout)
        assert any(".v4.b32" in s for s in loads) and any(".v4.b32" in s for s in stores), (case, loads, stores)
        # scalar accesses (not .v2 / .v4): the edge lanes' only, one or a few per thread's share
        scalar_loads = [s for s in loads if not re.search(r"\.v[24]\.", s)]
        scalar_stores = [s for s in stores if not re.search(r"\.v[24]\.", s)]
        assert len(scalar_stores) <= 1, (case, stores)
        assert op == "layernorm" or len(scalar_loads) <= 9, (case, loads)


@pytest.mark.parametrize("K", [SM, LN], ids=["softmax", "layernorm"])
def test_rule_for_odd_rows_held_whole(K):
    """Odd rows held whole (session 26, H200): softmax's rows of >= 2 KB one per program (the aligned path, ~16
    elements a thread); shorter rows (both kernels) in ~2 KB tiles with a warp per 1024 elements (scalar accesses);
    even rows keep the rule's tiles; rows that loop or go over the SMs are not this rule's."""
    c = K.config_for
    if K is SM:  # rows of >= 2 KB held whole through the aligned path
        assert c(1001, 2, M=32768) == RowConfig("single", 1024, 1, 2)
    else:  # layernorm has no aligned single-pass path: the rule's tiles
        assert c(1001, 2, M=32768) == row_config(1001, 2, K.MAX_FUSED_BLOCK_N, 32768) == RowConfig("single", 1024, 4, 4)
    assert c(3001, 2, M=11000) == RowConfig("single", 4096, 1, 4)  # already one row a program: the rule's
    assert c(77, 2, M=262144) == RowConfig("single", 128, 8, 1)  # CLIP's 77 tokens
    assert c(197, 2, M=151296) == RowConfig("single", 256, 4, 1)  # ViT's 197 patches
    assert c(77, 4, M=262144) == RowConfig("single", 128, 4, 1)  # fp32: 512-byte rows
    # small inputs (the rule's tiles shrunk to fill the GPU): two rows a program, a warp per 256 elements
    assert c(197, 2, M=1331) == c(197, 2, M=5323) == RowConfig("single", 256, 2, 2)
    assert c(197, 2, M=16384) == RowConfig("single", 256, 4, 1)  # 8 KiB tiles already fill the GPU
    assert c(1000, 2, M=32768) == row_config(1000, 2, K.MAX_FUSED_BLOCK_N, 32768)  # even: unchanged
    assert c(50257, 2, M=4096).kind == "looped"
    for N, es in ((1001, 2), (77, 2), (197, 4), (333, 2), (5, 2)):
        for M in (1, 7, 300, 100000):
            cfg = c(N, es, M=M)
            whole = K is LN and cfg.block_n * es >= _rows.ODD_ROW_BYTES  # layernorm: the rule's tiles
            assert whole or cfg.rows == 1 or cfg.rows * cfg.block_n * es <= _rows.ODD_ROW_BYTES, (N, es, M, cfg)
            assert cfg.rows * cfg.block_n >= 32 * cfg.num_warps or cfg.num_warps == 1, (N, es, M, cfg)
