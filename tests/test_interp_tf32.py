"""tl.dot on fp32 operands at the default input precision runs in TF32 on NVIDIA GPUs (each operand's low 13
mantissa bits ignored); tritondbg's interpreter computes it the same way (interp/dots.py ``tf32_dot``), where
the bare interpreter multiplies in full fp32 and passes kernels whose fp32 tolerance the GPU then misses.
"ieee" and "tf32x3" stay fp32; 16-bit operands are untouched."""
import pytest
import torch
import triton
import triton.language as tl
from conftest import REPO, run_cli

pytestmark = pytest.mark.interpreter


@triton.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, PREC: tl.constexpr, N: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    if PREC == "default":
        c = tl.dot(a, b)
    else:
        c = tl.dot(a, b, input_precision=PREC)
    tl.store(c_ptr + r[:, None] * N + r[None, :], c.to(c_ptr.dtype.element_ty))


def _dot(a, b, prec):
    c = torch.empty(16, 16, dtype=torch.float32)
    _dot_kernel[(1,)](a, b, c, PREC=prec, N=16)
    return c


def _tf32(x):
    """What a tensor core reads of fp32 ``x``: the low 13 mantissa bits cleared (toward zero)."""
    return (x.view(torch.int32) & ~0x1FFF).view(torch.float32)


def test_default_precision_truncates_each_operand_to_tf32():
    from tritondbg.interp import shims

    assert "tf32_dot" in shims.installed()  # tests/conftest.py's runner.set_mode("interpret") installed them
    a = torch.full((16, 16), 1 + 2 ** -12)  # not a tf32 value: reads as 1.0 on a tensor core
    a[0] = -(1 + 2 ** -12)                   # truncation toward zero: -1.0
    b = torch.eye(16) * (3 + 2 ** -11)       # reads as 3.0
    got = _dot(a, b, "default")
    assert torch.equal(got[1:], torch.full((15, 16), 3.0)), got[1]
    assert torch.equal(got[0], torch.full((16,), -3.0)), got[0]
    assert torch.equal(_dot(a, b, "tf32"), got)


def test_random_operands_match_a_tf32_reference_not_the_fp32_one():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(16, 16, generator=g), torch.randn(16, 16, generator=g)
    got = _dot(a, b, "default").double()
    tf32 = _tf32(a).double() @ _tf32(b).double()
    exact = a.double() @ b.double()
    assert (got - tf32).abs().max() < 1e-5, (got - tf32).abs().max()
    assert (got - exact).abs().max() > 1e-3  # what the bare interpreter would not show


@pytest.mark.parametrize("prec", ["ieee", "tf32x3"])
def test_ieee_and_tf32x3_stay_fp32(prec):
    a = torch.full((16, 16), 1 + 2 ** -12)
    got = _dot(a, torch.eye(16), prec)
    assert torch.equal(got, a), got[0, :3]


@pytest.mark.filterwarnings("ignore:invalid value encountered in matmul")
def test_nan_and_inf_stay_what_they_are():
    a = torch.eye(16)
    a[0, 0], a[1, 1] = float("inf"), float("nan")
    got = _dot(a, torch.eye(16), "default")
    assert got[0, 0] == float("inf") and torch.isnan(got[1, 1]) and got[2, 2] == 1.0


def test_16_bit_operands_are_untouched():
    g = torch.Generator().manual_seed(1)
    a = torch.randn(16, 16, generator=g).to(torch.bfloat16)
    b = torch.randn(16, 16, generator=g).to(torch.bfloat16)
    got = _dot(a, b, "default").double()
    assert (got - a.double() @ b.double()).abs().max() < 1e-5


def test_a_program_hears_which_dot_ran_in_tf32(tmp_path, cli_env):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import torch\nimport sys\nsys.path.insert(0, %r)\n" % str(REPO / "tests")
        + "from test_interp_tf32 import _dot\n"
        "a = torch.randn(16, 16); b = torch.randn(16, 16)\n"
        "print('ERR', (_dot(a, b, 'default').double() - a.double() @ b.double()).abs().max().item())\n")
    p = run_cli(["interpret", "--", "python", str(prog)], cli_env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert float(p.stdout.split("ERR ")[1].split()[0]) > 1e-3, p.stdout
    line = next(i for i, ln in enumerate(open(__file__).read().splitlines(), 1) if "c = tl.dot(a, b)" in ln)
    assert f"note: tl.dot at test_interp_tf32.py:{line} computed in TF32 as on NVIDIA GPUs" in p.stderr, p.stderr


def test_the_fma_zoo_compiles_to_one_fma_and_its_twin_to_two_roundings(cli_env):
    """tests/zoo/fma_contract.py, the agreement gate's planted bug: the premise it rests on, checked on the CPU by
    compiling both for sm_90 (the interpreter computes 0 for both)."""
    zoo = REPO / "tests" / "zoo" / "fma_contract.py"
    ptx = {v: run_cli(["ir", f"{zoo}::{v}", "--stage", "ptx", "--arch", "sm90"], cli_env) for v in ("buggy", "twin")}
    assert all(p.returncode == 0 for p in ptx.values()), {v: p.stderr[-500:] for v, p in ptx.items()}
    assert "fma.rn.f32" in ptx["buggy"].stdout and "sub.rn.f32" not in ptx["buggy"].stdout
    assert "fma.rn.f32" not in ptx["twin"].stdout and "sub.rn.f32" in ptx["twin"].stdout


def test_an_amd_target_keeps_fp32(tmp_path, cli_env):
    """On AMD targets Triton's default precision for fp32 dots is "ieee": `interpret --arch gfx942` keeps fp32. (That
    run also failed before at its first `tl.zeros`, "Cannot call @triton.jit'd outside of the scope of a kernel":
    checking the AMD target imported triton before TRITON_INTERPRET was set; commands/execute.py.)"""
    zoo = REPO / "tests" / "zoo" / "tf32_dot.py"
    amd = run_cli(["interpret", f"{zoo}::buggy", "--arch", "gfx942"], cli_env, cwd=tmp_path)
    assert amd.returncode == 0 and "TF32" not in amd.stdout + amd.stderr, amd.stdout[-2000:]
    nv = run_cli(["interpret", f"{zoo}::buggy", "--arch", "sm_80"], cli_env, cwd=tmp_path)
    assert nv.returncode == 1 and "computed in TF32" in nv.stdout, nv.stdout[-2000:]


def test_the_tf32_note_only_where_tf32_could_explain_the_error():
    """helper-53 (lightning-attn with a reference that drops the decay): the TF32 note was added to a mismatch off by
    27.7, which no rounding explains. It is given only where the error is a small share of the output's scale."""
    import torch

    from tritondbg.compare import compare
    from tritondbg.interp.dots import tf32_could_explain

    ref = torch.linspace(-30, 30, 101)
    assert tf32_could_explain(compare(ref + 0.01, ref, 1e-4, 1e-4))           # 0.03% of the scale: TF32-sized
    assert not tf32_could_explain(compare(ref * 2, ref, 1e-4, 1e-4))          # off by 30: a wrong result
    assert not tf32_could_explain(compare(ref.clone().fill_(float("nan")), ref, 1e-4, 1e-4))
    assert not tf32_could_explain(compare(ref, ref, 1e-4, 1e-4))              # nothing failed: nothing to explain
