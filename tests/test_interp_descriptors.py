"""Device-side tensor descriptors under ``interpret`` (tritondbg/interp/descriptors.py): one TMA cannot take is
refused at its line with its numbers (which stride, in elements and bytes, and the fix), where the bare
interpreter says "stride must be 16-byte aligned"; a descriptor that fits runs and computes as the GPU does."""
import pytest
from conftest import run_cli

pytestmark = pytest.mark.interpreter

PROG = '''
import sys, torch, triton, triton.language as tl


@triton.jit
def triple_kernel(x_ptr, y_ptr, M, N, COL0: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, EXTRA: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[M + EXTRA, N], strides=[N, 1], block_shape=[BM, BN])  # SRC
    dst = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pm, pn = tl.program_id(0), tl.program_id(1)
    tile = src.load([pm * BM, COL0 + pn * BN])
    dst.store([pm * BM, COL0 + pn * BN], tile * 3)


triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8))
M, N, col0 = (int(v) for v in sys.argv[1:4])
extra = int(sys.argv[4]) if len(sys.argv) > 4 else 0
x = torch.randn(M, N)
y = torch.zeros_like(x)
triple_kernel[(triton.cdiv(M, 32), triton.cdiv(N - col0, 32))](x, y, M, N, COL0=col0, BM=32, BN=32, EXTRA=extra)
print("RIGHT", bool(torch.equal(y[:, col0:], x[:, col0:] * 3)))
'''


@pytest.fixture
def prog(tmp_path):
    path = tmp_path / "desc_prog.py"
    path.write_text(PROG)
    return path


def test_a_descriptor_that_fits_runs(prog, cli_env):
    p = run_cli(["interpret", "--", "python", str(prog), "100", "72", "0"], cli_env)  # 72 float32 = 288 bytes
    assert p.returncode == 0 and "RIGHT True" in p.stdout, (p.stdout[-2000:], p.stderr[-2000:])
    assert "finding" in p.stderr and "kernel_error" not in p.stderr, p.stderr[-2000:]


def test_an_unaligned_row_stride_is_named_with_its_bytes(prog, cli_env):
    p = run_cli(["interpret", "--", "python", str(prog), "100", "70", "0"], cli_env)  # 70 float32 = 280 bytes
    line = next(i for i, ln in enumerate(PROG.splitlines(), 1) if "src = tl.make_tensor_descriptor" in ln)
    assert p.returncode != 0, p.stdout[-2000:]
    finding = next(ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: kernel_error"))
    assert f"desc_prog.py:{line}" in finding, finding
    assert "strides[0] = 70 elements = 280 bytes, not a multiple of 16" in finding, finding
    assert "pad each row to a multiple of 4 elements" in finding, finding


def test_a_load_off_a_16_byte_column_is_named(prog, cli_env):
    p = run_cli(["interpret", "--", "python", str(prog), "64", "96", "2"], cli_env)  # column 2: 8 bytes in
    line = next(i for i, ln in enumerate(PROG.splitlines(), 1) if "tile = src.load" in ln)
    finding = next(ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: kernel_error"))
    assert f"desc_prog.py:{line}" in finding, finding
    assert "the last offset is 2 elements = 8 bytes, not a multiple of 16" in finding, finding
    assert p.returncode != 0


def test_a_descriptor_whose_shape_runs_past_its_tensor_names_both(prog, cli_env):
    """helper-45 (tutorial 09 with `shape=[M + 1, K]`): found at the right load, but the message said "point into
    no argument tensor ... Its mask lets them through" (a descriptor load has no mask). Now it names the tensor,
    how far past its end, and the descriptor's shape as what let the lanes through."""
    p = run_cli(["interpret", "--", "python", str(prog), "100", "64", "0", "1"], cli_env)
    line = next(ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: out_of_bounds"))
    assert "outside x_ptr (float32[100, 64])" in line and "element(s) past the end" in line, line
    assert "The tensor descriptor (shape [101, 64], strides [64, 1]) lets them through" in line, line
    assert "no argument tensor" not in line and "Its mask" not in line, line
