"""Out-of-bounds messages a helper found misleading (session 36): a broadcast (expand()ed) view was described by its
shape while the offsets run over its storage ("[37, 131] ... offsets 131..4846 past the end"), and an offset
wrapped by an int32 overflow (around -2**31) gave no hint of the cause."""
from __future__ import annotations

import pytest

from conftest import run_sanitized

pytestmark = pytest.mark.interpreter

KERNELS = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def add_bias(x_ptr, b_ptr, y_ptr, N, sbm, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < N
    b = tl.load(b_ptr + row * sbm + offs, mask=m, other=0.0)
    tl.store(y_ptr + row * N + offs, tl.load(x_ptr + row * N + offs, mask=m) + b, mask=m)


def bias_launch(x, b):
    y = torch.empty_like(x)
    add_bias[(x.shape[0],)](x, b, y, x.shape[1], x.shape[1], BLOCK=64)  # BUG: b's row stride is 0
    return y


bias = Scenario("bias", lambda case, dtype, device, generator: dict(
    x=torch.randn(5, 37, generator=generator), b=torch.randn(1, 37, generator=generator).expand(5, 37)),
    bias_launch, lambda x, b: x + b, [Case("tiny", dtypes=("float32",))], kernels=[add_bias])


@triton.jit
def row_head(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + row * BLOCK + offs, tl.load(x_ptr + row * stride + offs))  # int32: row * stride wraps


def head_launch(x):
    y = torch.empty(3 * 16)
    row_head[(3,)](x, y, 1 << 30, BLOCK=16)
    return y


head = Scenario("head", lambda case, dtype, device, generator: dict(x=torch.randn(64, generator=generator)),
                head_launch, lambda x: x[:16].repeat(3), [Case("tiny", dtypes=("float32",))], kernels=[row_head])
'''


@pytest.fixture
def cases(tmp_path):
    p = tmp_path / "cases.py"
    p.write_text(KERNELS)
    return p


def test_a_broadcast_view_is_described_by_its_storage(cases):
    (r,) = run_sanitized(f"{cases}::bias").results
    f = next(f for f in r.findings if f["kind"] == "out_of_bounds")
    assert "b_ptr (float32[5, 37], a broadcast view with strides (0, 1): 37 element(s) of storage)" in f["message"], \
        f["message"]


def test_an_offset_wrapped_by_an_int32_overflow_says_so(cases):
    (r,) = run_sanitized(f"{cases}::head").results
    f = next(f for f in r.findings if f["kind"] == "out_of_bounds")
    assert "int32 index that overflowed" in f["message"] and "tl.int64" in f["message"], f["message"]
    (r,) = run_sanitized(f"{cases}::bias").results  # small offsets: no such hint
    assert not any("overflowed" in f["message"] for f in r.findings)


ALIASED = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def root(x_ptr, n, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    m = o < n
    tl.store(x_ptr + o, tl.sqrt(tl.load(x_ptr + o, mask=m)), mask=m)  # in place: NaN where x < 0


def launch(x):
    root[(1,)](x, x.numel(), BLOCK=64)
    return x, x  # the same tensor under two names (dX written into dY)


s = Scenario("s", lambda case, dtype, device, generator: dict(x=-torch.rand(50, generator=generator) - 1),
             launch, lambda x: (x.abs().sqrt(), x.abs().sqrt()), [Case("tiny", dtypes=("float32",))], kernels=[root])
'''


def test_an_output_returned_twice_is_counted_once(tmp_path):
    """Liger's RMSNorm backward writes dX into dY and returns both: the nan_inf count added each NaN twice."""
    (tmp_path / "aliased.py").write_text(ALIASED)
    (r,) = run_sanitized(f"{tmp_path / 'aliased.py'}::s").results
    f = next(f for f in r.findings if f["kind"] == "nan_inf")
    assert "50 element(s) of the outputs are NaN/Inf" in f["message"], f["message"]


VIEWS = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def pick(src_ptr, idx_ptr, out_ptr, s_row, s_col, s_pick, n_cols, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    j = tl.load(idx_ptr + o, mask=m, other=0)
    # src comes as a view whose picked dim has stride 0: the kernel steps through the storage by j * s_pick
    v = tl.load(src_ptr + (o // n_cols) * s_row + (o % n_cols) * s_col + j * s_pick, mask=m, other=0.0)
    tl.store(out_ptr + o, v, mask=m)


def pick_launch(src, idx):
    view = src.as_strided(idx.shape, (src.stride(0), 0))  # the storage holds more than this view's elements
    out = torch.empty(idx.shape, dtype=src.dtype)
    pick[(triton.cdiv(idx.numel(), 32),)](view, idx, out, view.stride(0), view.stride(1), src.stride(1),
                                          idx.shape[1], idx.numel(), BLOCK=32)
    return out


def pick_inputs(case, dtype, device, generator):
    return dict(src=torch.randn(5, 31, generator=generator), idx=torch.randint(0, 31, (5, 9), generator=generator))


picks = Scenario("picks", pick_inputs, pick_launch, lambda src, idx: torch.gather(src, 1, idx),
                 [Case("tiny", dtypes=("float32",))], kernels=[pick])


@triton.jit
def row_sum(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + tl.program_id(0) * stride + o), 0))  # BUG: no mask


def sum_launch(x, width):
    view = x[:, :width]  # a slice of a wider tensor: the unmasked tail reads the columns past it
    y = torch.empty(x.shape[0])
    row_sum[(x.shape[0],)](view, y, width, x.stride(0), BLOCK=32)
    return y


slices = Scenario("slices", lambda case, dtype, device, generator: dict(x=torch.rand(4, case.params["cols"],
                                                                                   generator=generator),
                                                                        width=20),
                  sum_launch, lambda x, width: x[:, :width].sum(1),
                  [Case("storage", params=dict(cols=40), dtypes=("float32",)),
                   Case("past", params=dict(cols=24), dtypes=("float32",))], kernels=[row_sum])


@triton.jit
def copy_rows(x_ptr, y_ptr, stride_x, stride_y, D: tl.constexpr):
    d = tl.arange(0, D)
    tl.store(y_ptr + tl.program_id(0) * stride_y + d, tl.load(x_ptr + tl.program_id(0) * stride_x + d))


def copy_launch(qkv):
    x = qkv[:, 0]  # rows 96 elements apart in the storage
    y = torch.empty(x.shape)
    copy_rows[(x.shape[0],)](x, y, y.stride(0), y.stride(0), D=32)  # BUG: x.stride(0) meant
    return y


@triton.jit
def copy_rows_own(x_ptr, y_ptr, n, D: tl.constexpr, BLOCK: tl.constexpr):
    d = tl.arange(0, BLOCK)
    row = tl.program_id(0)  # the row stride built in the kernel (3 * D, right); the mask is the bug
    tl.store(y_ptr + row * n + d, tl.load(x_ptr + row * 3 * D + d, mask=d <= n), mask=d < n)


def own_launch(qkv):
    x = qkv[:, 0, :24]
    y = torch.empty(x.shape)
    copy_rows_own[(x.shape[0],)](x, y, 24, D=32, BLOCK=32)
    return y


own = Scenario("own", lambda case, dtype, device, generator: dict(qkv=torch.rand(4, 3, 32, generator=generator)),
               own_launch, lambda qkv: qkv[:, 0, :24].clone(), [Case("qkv", dtypes=("float32",))],
               kernels=[copy_rows_own])


strides = Scenario("strides", lambda case, dtype, device, generator: dict(qkv=torch.rand(6, 3, 32,
                                                                                        generator=generator)),
                   copy_launch, lambda qkv: qkv[:, 0].clone(), [Case("qkv", dtypes=("float32",))], kernels=[copy_rows])


@triton.jit
def copy_row_block(x_ptr, y_ptr, stride_x, stride_y, ROWS: tl.constexpr, D: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    d = tl.arange(0, D)
    tl.store(y_ptr + r[:, None] * stride_y + d[None, :], tl.load(x_ptr + r[:, None] * stride_x + d[None, :]))


def block_launch(qkv):
    x = qkv[:, 0]
    y = torch.empty(x.shape)
    copy_row_block[(1,)](x, y, y.stride(0), y.stride(0), ROWS=4, D=32)  # BUG: x.stride(0) meant
    return y


row_blocks = Scenario("row_blocks", lambda case, dtype, device, generator: dict(qkv=torch.rand(4, 3, 32,
                                                                                              generator=generator)),
                      block_launch, lambda qkv: qkv[:, 0].clone(), [Case("qkv", dtypes=("float32",))],
                      kernels=[copy_row_block])
'''


def test_lanes_outside_a_view_but_inside_its_storage_are_read_as_the_gpu_reads_them(tmp_path):
    """helper-50 (FlagGems' gather): a stride-0 view of the input, the kernel adding index * stride of its own,
    reads elements of the storage outside the view's span. That is legal on a GPU; tritondbg called it
    out_of_bounds, masked the lanes and so failed a right kernel (44/45 mismatched; plain TRITON_INTERPRET=1 and
    the GPU get it right). Now: a warning, the lanes read the storage, the output matches."""
    (tmp_path / "views.py").write_text(VIEWS)
    (r,) = run_sanitized(f"{tmp_path / 'views.py'}::picks").results
    assert r.status == "pass", (r.status, r.message, r.findings)
    (f,) = r.findings
    assert f["kind"] == "outside_view" and f["severity"] == "warning" and f["tensor"] == "src_ptr", f
    assert "inside its storage (155 elements)" in f["message"] and "spanning 125 element(s)" in f["message"], f
    # a plain slice (no stride 0, no overlap) missing its mask: the tail reads the next columns, in the storage:
    # an error (helper-56: in program mode, where no reference tells, a warning passed SGLang's kv_indices slice
    # read one past its end); past the storage's end it stays an out_of_bounds error
    by_case = {r.case: r for r in run_sanitized(f"{tmp_path / 'views.py'}::slices", case="storage,past").results}
    r = by_case["storage"]
    assert r.status == "fail" and [f["kind"] for f in r.findings] == ["outside_view"], (r.message, r.findings)
    assert r.findings[0]["severity"] == "error" and "a slice of a larger tensor" in r.findings[0]["message"], \
        r.findings
    assert "A stride, maybe" not in r.findings[0]["message"]  # (it was handed the slice's row stride)
    r = by_case["past"]
    kinds = {f["kind"]: f for f in r.findings}
    assert r.status == "fail" and "out_of_bounds" in kinds and kinds["out_of_bounds"]["severity"] == "error", \
        r.findings


def test_a_finding_on_a_call_over_several_lines_shows_all_of_it(tmp_path):
    """helper-51 (vLLM's fused_moe): a load whose mask= is two lines below its `a = tl.load(` showed only that
    first line, not the mask that lets the lanes through."""
    from tritondbg.interp import frames

    src = tmp_path / "k.py"
    src.write_text("def f():\n    a = tl.load(\n        ptrs,\n        mask=m,  # the mask\n    )\n    b = 1\n"
                   "    c = (1 +\n")  # a statement that never closes: its line alone
    assert frames.source_statement(str(src), 2) == "a = tl.load(\n    ptrs,\n    mask=m,  # the mask\n)"
    assert frames.source_statement(str(src), 6) == "b = 1"
    assert frames.source_statement(str(src), 7) == "c = (1 +"
    assert frames.source_statement(str(src), 99) == ""
    long = tmp_path / "long.py"
    long.write_text("x = f(\n" + "".join(f"    {i},\n" for i in range(20)) + ")\n")
    shown = frames.source_statement(str(long), 1).splitlines()
    assert len(shown) == frames.STATEMENT_LINES + 1 and shown[-1] == "...", shown


def test_a_slice_read_between_its_rows_by_a_stride_it_was_not_handed_names_the_stride(tmp_path):
    """helper-123 (flash-attn's rotary handed out.stride(-3) for x = qkv[:, :, 0]): the finding said only "a mask
    missing or off by one"; the launch was handed no integer equal to the slice's row stride, and the
    stride-named integer it was handed is another tensor's."""
    (tmp_path / "views.py").write_text(VIEWS)
    (r,) = run_sanitized(f"{tmp_path / 'views.py'}::strides").results
    f = next(f for f in r.findings if f["kind"] == "outside_view")
    assert f["severity"] == "error" and f["tensor"] == "x_ptr", f
    assert ("A stride, maybe: x_ptr's dim 0 steps 96 elements, with storage between its rows, and no integer the "
            "launch was handed is 96 (it was handed stride_x = 32, as y_ptr.stride(0))") in f["message"], f["message"]


def test_a_mask_past_a_row_s_end_built_with_the_right_stride_gets_no_stride_hint(tmp_path):
    """helper-125: a kernel that builds the slice's row stride itself (row * 3 * D) and reads one column past each
    row (mask d <= n) was told "A stride, maybe": its blocks start at the rows' starts, a mask's sign."""
    (tmp_path / "views.py").write_text(VIEWS)
    (r,) = run_sanitized(f"{tmp_path / 'views.py'}::own").results
    f = next(f for f in r.findings if f["kind"] == "outside_view")
    assert "A stride, maybe" not in f["message"] and "A mask missing or off by one" in f["message"], f["message"]


def test_a_block_of_rows_read_by_another_tensors_stride_names_the_stride(tmp_path):
    """helper-137 (flash-attn's rotary on a 4-D x = qkv[:, :, 0], stride_x_seqlen handed as out.stride(-3)): each
    program's block of rows starts at a row's start, so the hint was left out as a mask's; the launch was handed
    a stride named for x (stride_x) that none of x's dims has (here one program reads every row)."""
    (tmp_path / "views.py").write_text(VIEWS)
    (r,) = run_sanitized(f"{tmp_path / 'views.py'}::row_blocks").results
    f = next(f for f in r.findings if f["kind"] == "outside_view")
    assert ("A stride, maybe: x_ptr's dim 0 steps 96 elements, with storage between its rows, and no integer the "
            "launch was handed is 96 (it was handed stride_x = 32, as y_ptr.stride(0))") in f["message"], f["message"]
