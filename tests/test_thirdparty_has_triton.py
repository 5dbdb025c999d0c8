"""The CPU stand-in answers ``torch.utils._triton.has_triton()`` as True (torchao's Triton kernels need it).

torchao gates its Triton kernels on torch's ``has_triton()``, which is False on a machine without a GPU:
``torchao.kernel.blockwise_quantization.fp8_blockwise_act_quant`` raised "unsupported without triton" under
``tritondbg interpret -- CMD`` before any launch, and ``torchao.prototype.mx_formats`` / ``quantized_training``
define their kernels only ``if has_triton():``. The pattern is vendored below (no torchao needed).
"""
import sys
import textwrap

from conftest import REPO, run_cli

PROGRAM = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl
    from torch.utils._triton import has_triton

    if has_triton():                       # torchao.prototype.mx_formats.kernels defines its kernels so
        @triton.jit
        def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


    def double(x):
        if not has_triton():               # torchao.kernel.blockwise_quantization checks so at each call
            raise AssertionError("unsupported without triton")
        out = torch.empty_like(x)
        double_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
        return out


    if __name__ == "__main__":
        x = torch.randn(1000)
        assert torch.equal(double(x), 2 * x)
        print("double ok")
''')


def test_has_triton_answers_true_under_the_stand_in_and_is_put_back():
    import torch.utils._triton as torch_triton

    from tritondbg import standin

    import torch

    assert standin.current() is not None          # installed by runner.set_mode("interpret") in conftest
    assert torch_triton.has_triton() is True
    standin.uninstall()
    try:
        assert torch_triton.has_triton is not standin._has_triton   # torch's own function is back
        if not torch.cuda.is_available():
            assert torch_triton.has_triton() is False  # torch's own answer on a machine without a GPU
    finally:
        standin.install("sm_90")
    assert torch_triton.has_triton() is True


def test_program_gated_on_has_triton_runs_under_interpret(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(PROGRAM)
    p = run_cli(["interpret", "--", sys.executable, str(tmp_path / "prog.py")], cli_env, cwd=str(REPO))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "double ok" in p.stdout
    assert "unsupported without triton" not in p.stderr
    assert "1 launch(es), 0 finding(s)" in p.stderr, p.stderr[-2000:]


def test_has_triton_taken_from_torch_before_triton_is_imported_answers_true(tmp_path, cli_env):
    """helper-119: a module that takes ``has_triton`` from torch and asks it before anything imports Triton (a copy
    of torchao's mx kernels) got False and took its no-Triton path: the answer is set at torch's import now."""
    early = PROGRAM.replace("import torch\nimport triton\nimport triton.language as tl\n"
                            "from torch.utils._triton import has_triton\n",
                            "import torch\nfrom torch.utils._triton import has_triton\nprint('early', has_triton())\n"
                            "import triton\nimport triton.language as tl\n")
    assert "print('early'" in early
    (tmp_path / "prog.py").write_text(early)
    p = run_cli(["interpret", "--", sys.executable, str(tmp_path / "prog.py")], cli_env, cwd=str(REPO))
    assert p.returncode == 0 and "early True" in p.stdout and "double ok" in p.stdout, p.stdout + p.stderr[-3000:]
