"""The resources gate compiles every case x dtype it is given (helper-131): it compiled the first dtype of the first
case of each launch wrapper, so `check --gates resources --arch sm_80 --case fp8` passed a case of ("float16",
"float8_e4m3fn") that cannot compile for sm_80 (its dtypes swapped, it failed), and `--case 'tiny,fp8'` passed
"compiled case(s) tiny, not fp8". A case too large to build on the CPU is left out only unless named, and said."""
from __future__ import annotations

import textwrap

import pytest

from tritondbg import loader
from tritondbg.check.gates import GateContext, run_gate
from tritondbg.check.outcome import FAIL, PASS

CASES = textwrap.dedent('''
    import torch, triton, triton.language as tl
    from tritondbg import Case, Scenario

    @triton.jit
    def twice_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
        tl.store(y_ptr + offs, (x * 2).to(y_ptr.dtype.element_ty), mask=m)

    def twice(x):
        y = torch.empty_like(x)
        twice_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
        return y

    def make(case, dtype, device, generator):
        return dict(x=torch.randn(case.params["n"], generator=generator).to(device=device, dtype=dtype))

    # the "huge" case claims 3 GiB (its inputs are small: the gate goes by Scenario.bytes)
    twice_s = Scenario(name="twice", make_inputs=make, launch=twice, reference=lambda x: x.float() * 2,
                       kernels=[twice_kernel], bytes=lambda case, dtype: 3 << 30 if case.name == "huge" else 0,
                       cases=[Case("tiny", params=dict(n=100), dtypes=("float16", "float32")),
                              Case("fp8", params=dict(n=64), dtypes=("float16", "float8_e4m3fn")),
                              Case("huge", params=dict(n=32), dtypes=("float32",), interpret=False)])
''')


def _gate(tmp_path, case, arch):
    (tmp_path / "cases.py").write_text(CASES)
    target = str(tmp_path / "cases.py") + "::twice"
    return run_gate("resources", loader.load(target), GateContext(device="cpu", target=target, case=case, arch=arch))


@pytest.mark.interpreter
@pytest.mark.parametrize("case", ["fp8", "tiny,fp8", "f*", "all"])
def test_every_dtype_of_every_selected_case_is_compiled_for_the_target(tmp_path, case):
    """fp8's second dtype does not compile for sm_80: a FAIL whichever way --case selects it."""
    out = _gate(tmp_path, case, "sm_80")
    assert out.status == FAIL, out.reason
    assert out.reason.startswith("could not compile case fp8 (float8_e4m3fn): compiling twice_kernel for sm_80"), \
        out.reason
    assert "not supported in this architecture" in out.reason and "\n" not in out.reason, out.reason


@pytest.mark.interpreter
def test_a_pass_names_what_it_compiled_and_the_case_too_large_to_build(tmp_path):
    """On sm_90 every case x dtype compiles; the huge one (3 GiB by Scenario.bytes) is left out, said with how to
    ask for it, and `--case huge` builds it. Without --case the gate compiles the GPU-size cases and the first case
    of each wrapper, every dtype, and names the small cases it left out."""
    out = _gate(tmp_path, "all", "sm_90")
    assert out.status == PASS, out.reason
    assert out.details["compiled"] == ["tiny/float16", "tiny/float32", "fp8/float16", "fp8/float8_e4m3fn"]
    assert "(4 case x dtype)" in out.reason and "B shared" in out.reason, out.reason
    assert ("not compiled: huge/float32 (inputs of 3.0 GiB, over the 2 GiB the gate builds on the CPU; --case huge "
            "builds it)") in out.reason, out.reason
    out = _gate(tmp_path, None, "sm_80")
    assert out.status == PASS and out.details["compiled"] == ["tiny/float16", "tiny/float32"], out.reason
    assert ("1 small case(s) not compiled without --case: fp8 (--case all compiles every case x dtype, --case NAME "
            "one); not compiled: huge/float32") in out.reason, out.reason
    out = _gate(tmp_path, "huge", "sm_90")
    assert out.status == PASS and out.details["compiled"] == ["huge/float32"], out.reason
    assert "not compiled" not in out.reason, out.reason
    out = _gate(tmp_path, "hu*", "sm_90")  # a glob takes what can be built here: nothing, and that is no pass
    assert out.status == FAIL and out.reason.startswith("nothing was compiled: huge/float32"), out.reason


def test_a_size_under_a_kib_is_said_in_bytes():
    """ "max 0 KiB shared" where `ir --stats` said 512 B."""
    from tritondbg.check.resources import judge, size_text

    assert [size_text(n) for n in (0, 512, 1024, 1536, 98304)] == ["0 B", "512 B", "1 KiB", "1.5 KiB", "96 KiB"]
    row = dict(kernel="k", case="tiny", dtype="float16", arch="sm_90", config={}, n_regs=20, n_spills=0, shared=512,
               shared_limit=232448, config_source="")
    out = judge("k", [row], {"max_spills": 0}, pairs=1)
    assert out.status == PASS and "max 512 B shared" in out.reason and "(1 case x dtype)" in out.reason, out.reason
