"""What compiled Triton accepts and the plain interpreter did not, found testing FlagGems (interp/compat.py):
``dtype.value`` in a jit helper handed a dtype (``flag_gems/utils/limits.py``), launch arguments that only look like
tensors (``data_ptr()`` + ``dtype``: FlagGems' ``StridedBuffer``, ``TypedPtr``), and torch / tl dtypes in
``Case(dtypes=...)``."""
import ctypes
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from tritondbg.scenario import Case

CASES = Path(__file__).resolve().parent / "interp_data" / "compat_cases.py"

pytestmark = pytest.mark.interpreter


# --- dtype.value ---------------------------------------------------------------------------------------------------

def _load_cases():
    import importlib.util

    spec = importlib.util.spec_from_file_location("compat_cases_kernels", CASES)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_CASES = _load_cases()  # FlagGems' get_dtype_min and a row max that pads with it, as the scenarios run them
_get_dtype_min, _rowmax = _CASES.get_dtype_min, _CASES.rowmax_kernel


@triton.jit
def _store_min(x_ptr, out_ptr):
    tl.store(out_ptr, _get_dtype_min(x_ptr.type.element_ty))


def test_a_jit_helper_reads_dtype_value_as_compiled_triton_does():
    """fp32 rows: the masked lanes hold -inf and the row max matches torch; int32: the helper's integer branch is
    taken (the type's minimum, not -inf), with all-negative rows whose max a 0 padding would spoil."""
    x = torch.randn(3, 100)
    out = torch.empty(3)
    _rowmax[(3,)](x, out, 100, BLOCK=128)
    assert torch.equal(out, x.max(1).values)

    xi = torch.randint(-1000, -1, (3, 100), dtype=torch.int32)
    outi = torch.empty(3, dtype=torch.int32)
    _rowmax[(3,)](xi, outi, 100, BLOCK=128)
    assert torch.equal(outi, xi.max(1).values)

    lowest = torch.zeros(1, dtype=torch.int32)
    _store_min[(1,)](xi, lowest)
    assert lowest.item() == -2**31
    lowest_f = torch.zeros(1)
    _store_min[(1,)](x, lowest_f)
    assert lowest_f.item() == -math.inf


def test_dtype_value_is_the_dtype_only_while_the_shims_are_installed():
    from tritondbg.interp import compat

    assert tl.float32.value is tl.float32 and tl.pointer_type(tl.int8).value.element_ty is tl.int8
    undo = compat.dtype_value()  # installed already: a second install leaves it, and its undo is a no-op
    undo()
    assert tl.float32.value is tl.float32


# --- tensor-like launch arguments ----------------------------------------------------------------------------------

class StridedBuffer:
    """FlagGems' ``StridedBuffer`` (flag_gems/utils/tensor_wrapper.py), reduced: a reinterpretation of a base
    tensor with its own shape, strides (negative ones too: flip), dtype and element offset."""

    def __init__(self, base, shape=None, strides=None, dtype=None, offset=0):
        self._base = base
        self.dtype = dtype or base.dtype
        self.offset = offset
        self._data_ptr = base.data_ptr() + self.dtype.itemsize * offset
        self.shape = tuple(shape if shape is not None else base.shape)
        self._strides = tuple(strides if strides is not None else base.stride())
        self.device = base.device
        self.ndim = len(self.shape)

    def stride(self):
        return self._strides

    def size(self):
        return self.shape

    def element_size(self):
        return self.dtype.itemsize

    def numel(self):
        return math.prod(self.shape)

    def data_ptr(self):
        return self._data_ptr


class RawBuffer:
    """A typed pointer with a length and nothing else (no base tensor): FlagGems' ``TypedPtr`` plus ``numel``."""

    def __init__(self, ptr, dtype, n):
        self.ptr, self.dtype, self.n = ptr, dtype, n

    def data_ptr(self):
        return self.ptr

    def numel(self):
        return self.n


@triton.jit
def _scale2d(x_ptr, out_ptr, sx0, sx1, so0, so1, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.arange(0, BM)[:, None]
    rn = tl.arange(0, BN)[None, :]
    mask = (rm < M) & (rn < N)
    x = tl.load(x_ptr + rm * sx0 + rn * sx1, mask=mask)
    tl.store(out_ptr + rm * so0 + rn * so1, x * 2, mask=mask)


@triton.jit
def _copy_bits(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)


def _launch_scale(x, out):
    _scale2d[(1,)](x, out, *x.stride(), *out.stride(), x.shape[0], x.shape[1], BM=8, BN=8)


def test_strided_buffer_arguments_read_and_write_their_base_memory():
    """A transposed read view at an element offset and an output view with strides of its own, both
    StridedBuffers: the kernel reads the right elements and its stores land in the output's base tensor (the
    interpreter's host copy called ``untyped_storage`` / ``new_empty`` on them: AttributeError)."""
    base = torch.randn(64)
    x = StridedBuffer(base, shape=(5, 6), strides=(1, 7), offset=3)   # base[3 + i + 7 j]
    out_base = torch.zeros(80)
    out = StridedBuffer(out_base, shape=(5, 6), strides=(12, 2), offset=4)  # every other element, rows of 12
    _launch_scale(x, out)
    expect = torch.as_strided(base, (5, 6), (1, 7), 3) * 2
    assert torch.equal(torch.as_strided(out_base, (5, 6), (12, 2), 4), expect)
    untouched = torch.ones(80, dtype=torch.bool)
    torch.as_strided(untouched, (5, 6), (12, 2), 4).fill_(False)
    assert (out_base[untouched] == 0).all()  # nothing else written


def test_negative_strides_and_reinterpreted_dtypes():
    """FlagGems' flip hands a StridedBuffer with a negative stride (torch has no such view: the host copy goes
    through a span of the base with the argument's own strides), and a buffer may reinterpret its base's dtype."""
    base = torch.randn(4, 7)
    flipped = StridedBuffer(base, shape=(4, 7), strides=(7, -1), offset=6)  # base.flip(1)
    out = torch.empty(4, 7)
    _launch_scale(flipped, out)
    assert torch.equal(out, base.flip(1) * 2)

    out_base = torch.zeros(4, 7)
    out_flipped = StridedBuffer(out_base, shape=(4, 7), strides=(-7, 1), offset=21)  # writes out_base.flip(0)
    _launch_scale(base, out_flipped)
    assert torch.equal(out_base, base.flip(0) * 2)

    bits = StridedBuffer(base, shape=(28,), strides=(1,), dtype=torch.int32)
    got = torch.empty(28, dtype=torch.int32)
    _copy_bits[(1,)](bits, got, 28, BLOCK=32)
    assert torch.equal(got, base.reshape(-1).view(torch.int32))


def test_an_address_only_buffer_is_read_and_written_in_place():
    """No base tensor, only ``data_ptr()``, ``dtype`` and ``numel()``: the host copy covers its bytes at that
    address, and the kernel's stores land there."""
    src = torch.arange(10, dtype=torch.float32)
    dst = torch.zeros(10)
    _copy_bits[(1,)](RawBuffer(src.data_ptr(), torch.float32, 10), RawBuffer(dst.data_ptr(), torch.float32, 10),
                     10, BLOCK=16)
    assert torch.equal(dst, src)


def test_as_tensor_views_the_same_memory():
    from tritondbg.interp import compat

    base = torch.arange(12, dtype=torch.float32)
    t = compat.as_tensor(StridedBuffer(base, shape=(3, 3), strides=(4, 1), offset=1))
    assert isinstance(t, torch.Tensor) and t.data_ptr() == base.data_ptr() + 4
    assert t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    assert torch.equal(t, base[1:].as_strided((3, 3), (4, 1)))

    v = compat.as_tensor(StridedBuffer(base, shape=(3,), strides=(-2,), offset=5))
    assert isinstance(v, compat.HostView) and v.data_ptr() == base.data_ptr() + 20 and v.stride() == (-2,)
    assert v.span.data_ptr() == base.data_ptr() + 4 and v.span.numel() == 5

    raw = (ctypes.c_float * 4)(1, 2, 3, 4)
    r = compat.as_tensor(RawBuffer(ctypes.addressof(raw), torch.float32, 4))
    r[2] = 9
    assert raw[2] == 9 and r.data_ptr() == ctypes.addressof(raw)


# --- Case(dtypes=...) ----------------------------------------------------------------------------------------------

def test_case_takes_torch_and_triton_dtypes_as_their_names():
    case = Case("tiny", dtypes=[torch.float32, torch.bfloat16, tl.float16, tl.int32, "int8", torch.float8_e4m3fn])
    assert case.dtypes == ("float32", "bfloat16", "float16", "int32", "int8", "float8_e4m3fn")
    assert Case("one", dtypes=torch.float16).dtypes == ("float16",)
    assert Case("names", dtypes=["float32"]).dtypes == ["float32"]  # names are kept as given
    with pytest.raises(ValueError, match="unknown dtype"):
        Case("bad", dtypes=[torch.complex64])


# --- the same under `tritondbg interpret`, sanitizers on ----------------------------------------------------------

@pytest.mark.parametrize("scenario", ["rowmax", "add_flip"])
def test_flaggems_patterns_pass_with_the_sanitizers_on(scenario):
    """A scenario whose cases list torch dtypes, a helper reading ``dtype.value`` (fp32 and int32), StridedBuffer
    operands (one flipped): every run matches torch, and no sanitizer reports anything (the memory guard bounds a
    StridedBuffer by its own view, the flipped one below its data pointer too)."""
    from conftest import run_sanitized

    rec = run_sanitized(f"{CASES}::{scenario}")
    assert len(rec.results) == 2, [(r.case, r.dtype) for r in rec.results]
    assert rec.passed, [(r.case, r.dtype, r.message, r.findings) for r in rec.results if not r.passed]
    assert not [f for r in rec.results for f in r.findings]


# --- globals the compiler refuses ------------------------------------------------------------------------------------

def test_a_global_the_compiler_refuses_fails_where_the_kernel_reads_it(monkeypatch):
    """helper-53 (kernl's linear layer): a jit helper reading `sqrt2 = math.sqrt(2.0)` passed `interpret` 3/3 while
    the compiler refuses it ("Cannot access global variable"). It fails at that line now, and only where the read
    happens: the branch a constexpr does not take compiles, so the `approx` case passes (as `ir` compiles it)."""
    from conftest import run_sanitized

    target = CASES.parent / "refused_globals.py"
    line = next(i + 1 for i, text in enumerate(target.read_text().splitlines()) if "x / SQRT2" in text)
    by_case = {r.case: r for r in run_sanitized(f"{target}::gelus", case="exact,approx").results}
    exact, approx = by_case["exact"], by_case["approx"]
    assert exact.status == "error" and "Cannot access global variable SQRT2" in exact.message, exact.message
    (f,) = exact.findings
    assert f["kind"] == "kernel_error" and f["line"] == line, f
    assert approx.status == "pass", approx.message
    # a kernel's own body too (helper-54: the globals it was given hid triton.language from the interpreter);
    # the globals of its decorators and its parameters' defaults are no kernel's reads (autotune configs, pruners)
    (own,) = run_sanitized(f"{target}::own").results
    assert own.status == "error" and "Cannot access global variable SCALE" in own.message, own.message
    (decorated,) = run_sanitized(f"{target}::decorated").results
    assert decorated.status == "pass", decorated.message
    (helper,) = run_sanitized(f"{target}::tanh_helper").results  # a libdevice name the interpreter swapped in
    assert helper.status == "pass", helper.message
    from triton import knobs

    monkeypatch.setattr(knobs.compilation, "allow_non_constexpr_globals", True)  # the compiler's own way out
    (again,) = run_sanitized(f"{target}::gelus", case="exact").results
    assert again.status == "pass", again.message


def test_what_the_compiler_lets_a_kernel_read_is_not_refused():
    """The compiler's own list: constexpr values, modules, jit functions (constexpr_function's too), dtypes,
    Triton's builtins, named tuples; a plain float or a Python function is refused."""
    import collections

    from tritondbg.interp.globals_check import _allowed

    allowed = [tl.constexpr(2), math, _rowmax, tl.float16, tl.maximum, collections.namedtuple("P", "a b")(1, 2)]
    if hasattr(triton, "constexpr_function"):
        def double(n):
            return n * 2
        allowed.append(triton.constexpr_function(double))
    assert all(_allowed(v) for v in allowed), [v for v in allowed if not _allowed(v)]
    assert not any(_allowed(v) for v in (1.4142, 3, "text", len, lambda x: x)), "refused values were let through"


# --- a kernel that uses what this Triton removed --------------------------------------------------------------------

BLOCK_PTR_PROG = '''
import torch, triton, triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    p = tl.make_block_ptr(x_ptr, (n,), (1,), (tl.program_id(0) * BLOCK,), (BLOCK,), (0,))
    x = tl.load(p, boundary_check=(0,))
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, x, mask=offs < n)


x = torch.randn(100, device="cuda")
y = torch.empty_like(x)
copy_kernel[(2,)](x, y, 100, BLOCK=64)
print("SAME", bool(torch.equal(x, y)))
'''


def test_a_block_pointer_kernel_under_a_triton_without_them_says_which_triton_runs_it(tmp_path, cli_env):
    """helper-94: native-sparse-attention under Triton 3.9 said only "Block pointers have been removed in favor of
    the tensor descriptor API"; the finding now says to run it with Triton 3.8 or older (or port it)."""
    from conftest import run_cli

    (tmp_path / "prog.py").write_text(BLOCK_PTR_PROG)
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    out = p.stdout + p.stderr
    if hasattr(tl, "make_block_ptr") and "Block pointers have been removed" not in out:
        assert p.returncode == 0 and "SAME True" in out, out  # a Triton that still has them runs it
        return
    assert p.returncode != 0, out
    assert "run the kernel with Triton 3.8 or older" in out and "copy_kernel" in out, out


def test_numpys_all_nan_warning_from_the_interpreter_is_quiet_while_the_shims_are_installed():
    """helper-94: the sanitizers' NaN filling a whole slice (SageAttention's scale a forgotten store left as
    torch.empty's mark, read by the attention kernel's tl.max) made the interpreter's nanmax print "RuntimeWarning:
    All-NaN slice encountered" (two lines naming triton's interpreter.py) among the findings. Checked on that
    program by hand; here: the filter catches that warning raised from the interpreter's module only, until undone."""
    import warnings

    from tritondbg.interp import compat, shims

    assert shims._SHIMS["quiet_all_nan"] is compat.quiet_all_nan  # installed with the others

    def warned(module: str) -> bool:
        scope = {"__name__": module, "np": np}
        exec("def reduce():\n    return np.nanmax(np.full(3, np.nan))\n", scope)  # a function of that module
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            undo = compat.quiet_all_nan()
            try:
                scope["reduce"]()
            finally:
                undo()
            scope["reduce"]()  # after: as before
        return [str(w.message) for w in caught]

    assert warned("triton.runtime.interpreter") == ["All-NaN slice encountered"]
    assert warned("user_code") == ["All-NaN slice encountered"] * 2


# --- a kernel made in a factory ------------------------------------------------------------------------------------

FACTORY_PROG = '''
import torch, triton, triton.language as tl


@triton.jit
def gelu(x):
    return 0.5 * x * (1 + tl.erf(x * 0.7071067811865476))


def make_kernel(act, scale):
    @triton.jit
    def twice(x):  # a device function made in the factory too, reading the factory's act
        return act(x) * 2.0

    @triton.jit
    def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        tl.store(y_ptr + offs, twice(x) * scale, mask=m)
    return kernel


x = torch.randn(1000, device="cuda")
y = torch.empty_like(x)
make_kernel(gelu, SCALE)[(4,)](x, y, 1000, BLOCK=256)
err = (y - torch.nn.functional.gelu(x) * 2.0 * 3.0).abs().max().item()
print("ERR", err < 1e-5)
'''


@pytest.mark.parametrize("scale", ["tl.constexpr(3.0)", "3.0"])
def test_a_kernel_made_in_a_factory_reads_what_it_captured(tmp_path, cli_env, scale):
    """helper-116: a kernel built in a factory, calling a jit helper captured from the enclosing function, failed
    under plain TRITON_INTERPRET=1 and tritondbg alike ("name 'act' is not defined": the interpreter runs the
    kernel's source at module level), while the compiler takes it (its capture scope holds the closure). It runs
    now; a captured float the compiler refuses is refused at its line, naming the factory."""
    from conftest import run_cli

    (tmp_path / "prog.py").write_text(FACTORY_PROG.replace("SCALE", scale))
    p = run_cli(["interpret", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    out = p.stdout + p.stderr
    if scale.startswith("tl."):
        assert p.returncode == 0 and "ERR True" in out and "0 finding(s)" in out, out
        return
    assert p.returncode != 0 and "not defined" not in out, out
    line = FACTORY_PROG.splitlines().index("        tl.store(y_ptr + offs, twice(x) * scale, mask=m)") + 1
    assert f"kernel_error: prog.py:{line} in kernel" in out, out
    assert "`scale` is a value the kernel captures from make_kernel()" in out, out


FACTORY_KERNEL = '''
import torch, triton, triton.language as tl

scale = tl.constexpr(100.0)  # a module global of the same name as the closure's


@triton.jit
def twice(x):
    return x * 2.0


def make(act, scale):
    @triton.jit
    def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        z = act(tl.load(x_ptr + offs, mask=m)) * scale
        tl.store(y_ptr + offs, z, mask=m)
    return k


K = make(twice, tl.constexpr(3.0))


def launch(x):
    y = torch.empty_like(x)
    K[(1,)](x, y, x.numel(), BLOCK=16)
    return y
'''

FACTORY_CASES = '''
import torch
from tritondbg import Case, Scenario
from fk import launch, K

SCENARIO = Scenario(name="fk", launch=launch, reference=lambda x: x * 6.0,
                    make_inputs=lambda case, dtype, device, generator: dict(x=torch.randn(16).to(device)),
                    cases=[Case("tiny", dtypes=("float32",))], kernels=[K])
'''


def test_watch_expressions_see_a_factory_kernels_closure(tmp_path, cli_env):
    """helper-121: `--watch scale` showed the module global of that name (100.0), not the closure's 3.0 the kernel
    multiplies by, and `--watch act` said the name was never defined."""
    from conftest import run_cli

    (tmp_path / "fk.py").write_text(FACTORY_KERNEL)
    (tmp_path / "cases.py").write_text(FACTORY_CASES)
    p = run_cli(["interpret", "cases.py", "--watch", "scale", "--watch", "act"], cli_env, cwd=tmp_path)
    out = p.stdout + p.stderr
    assert p.returncode == 0 and "watch scale = 3.0" in out, out[-3000:]  # (in twice's frame: the global's 100)
    assert "watch act = " in out and "never defined" not in out, out[-3000:]


NAN_NUMBER = '''
import torch, triton, triton.language as tl


@triton.jit
def k(x_ptr, o_ptr):
    offs = tl.arange(0, 4)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.maximum(x, 0.0) + tl.minimum(x, 0.0) + tl.clamp(x, -1.0, 1.0))
    tl.store(o_ptr + 4 + offs, tl.clamp(x, -1.0, 1.0, propagate_nan=tl.PropagateNan.ALL))


x = torch.tensor([float("nan"), 2.0, -3.0, 0.5], device="cuda")
o = torch.empty(8, device="cuda")
k[(1,)](x, o)
print("OUT", o.tolist())
'''


def test_max_min_and_clamp_return_the_number_beside_a_nan_as_the_gpu_does(tmp_path, cli_env):
    """PTX max.f32 / min.f32 (propagate_nan's default) return the other operand where one is NaN; Triton 3.6's
    interpreter returned the NaN (np.maximum, np.clip): a clamp storing its bound on the GPU stored NaN there."""
    from conftest import run_cli

    (tmp_path / "prog.py").write_text(NAN_NUMBER)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    out = p.stdout + p.stderr
    # nan: max 0 + min 0 + clamp -1 (fmax(nan, -1) = -1, then min with 1); 2: 2 + 0 + 1; -3: 0 - 3 - 1; 0.5: 1.0
    assert "OUT [-1.0, 3.0, -4.0, 1.0, nan, 1.0, -1.0, 0.5]" in out, out[-3000:]


def test_a_plain_python_helper_called_from_a_kernel_is_named_as_one(tmp_path, cli_env):
    """helper-148: lecture 14's `print_if` (a plain Python debug helper) was refused with "print_if =
    tl.constexpr(...)", nonsense for a function; the error says what it is and the ways to look at values."""
    from conftest import run_cli

    (tmp_path / "prog.py").write_text(
        "import torch, triton, triton.language as tl\n"
        "def print_if(txt):\n"
        "    print(txt)\n"
        "@triton.jit\n"
        "def copy_k(X, Z, n, B: tl.constexpr):\n"
        "    offs = tl.arange(0, B)\n"
        "    x = tl.load(X + offs, mask=offs < n)\n"
        "    print_if(x)\n"
        "    tl.store(Z + offs, x, mask=offs < n)\n"
        "x = torch.randn(6, device='cuda'); z = torch.empty_like(x)\n"
        "copy_k[(1,)](x, z, 6, B=8)\n")
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    (said,) = [ln for ln in p.stderr.splitlines() if ln.startswith("tritondbg: kernel_error in copy_k at prog.py:8 ")]
    assert "`print_if` is a plain Python function, not a @triton.jit one" in said and "tl.constexpr(...)" not in said
    assert "tl.device_print" in said and p.returncode == 1, said


def test_ir_on_a_block_pointer_kernel_under_a_triton_without_them_says_which_triton_compiles_it(tmp_path, cli_env):
    """helper-155: `ir` on segment-anything-fast's flash attention (make_block_ptr) under Triton 3.9 said only
    "compiling ... failed: NotImplementedError: Block pointers have been removed ..."; interpret named the way out."""
    from conftest import run_cli

    (tmp_path / "prog.py").write_text(BLOCK_PTR_PROG)
    run_cli(["capture", "--out", "cap", "--", "python", "prog.py"], cli_env, cwd=tmp_path)
    (repro,) = (tmp_path / "cap").glob("copy_kernel_*.py")
    p = run_cli(["ir", str(repro), "--arch", "sm_90", "--stage", "ttir"], cli_env, cwd=tmp_path)
    out = p.stdout + p.stderr
    if hasattr(tl, "make_block_ptr") and "Block pointers have been removed" not in out:
        assert p.returncode == 0 and "tt.func" in out, out[-2000:]  # a Triton that still has them compiles it
        return
    assert p.returncode != 0 and "Block pointers have been removed" in out, out[-2000:]
    assert "run the kernel with Triton 3.8 or older" in out, out[-2000:]
