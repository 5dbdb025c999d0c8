"""`interpret -- CMD`: a library that picks its path by ``torch.cuda.is_available()`` (False without a GPU) and has no
CPU branch fails with its own error (Liger-Kernel's DyT backward: ``UnboundLocalError: NUM_SMS``); tritondbg's line
after the traceback names where it asked (a helper found no hint at all)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import cuda_available

# the CPU stand-in answers for a missing GPU: on a GPU machine the program takes its CUDA path instead
pytestmark = pytest.mark.skipif(cuda_available(), reason="the CPU stand-in's behaviour: only without a GPU")


def _interpret(tmp_path: Path, prog="prog.py", site_packages: bool = False) -> subprocess.CompletedProcess:
    """``tritondbg interpret -- python PROG`` in ``tmp_path`` (compiled mode not forced; ``site_packages``: the
    test's ``tmp_path/site-packages`` on the program's path)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if site_packages:
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site-packages"), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "tritondbg", "interpret", "--", sys.executable, str(prog)],
                          capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)

LIBRARY = textwrap.dedent('''
    import torch
    import triton  # a kernel library: tritondbg attaches when triton is imported

    def infer_device():
        if torch.cuda.is_available():
            return "cuda"
        return "cpu"

    def op(x):
        if infer_device() == "cuda":
            sms = torch.cuda.get_device_properties(0).multi_processor_count
        return x * sms  # no CPU branch: UnboundLocalError
''')


@pytest.mark.interpreter
def test_an_error_in_a_librarys_cpu_branch_names_where_it_asked(tmp_path):
    lib = tmp_path / "site-packages" / "gpulib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(LIBRARY)
    (tmp_path / "prog.py").write_text("import torch, gpulib\ngpulib.op(torch.ones(2, device='cuda'))\n")
    out = _interpret(tmp_path, site_packages=True)
    assert out.returncode == 1, out.stderr[-3000:]
    assert "UnboundLocalError" in out.stderr, out.stderr[-3000:]
    assert ("tritondbg: the code above asked torch.cuda.is_available() at gpulib/__init__.py:6 (infer_device) and "
            "heard False") in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
@pytest.mark.parametrize("call, hint", [
    ("gpulib.check('relu')", None),  # the library refusing the program's input: not a branch taken
    ("torch.cuda.CUDAGraph()", "tritondbg: the program used a CUDA-only part of torch"),
    # helper-79: an op only CUDA has, reached on the CUDA path of tensors that say cuda:0 (not "make them on cuda")
    ("x = torch.ones(4, 4, device='cuda')\n"
     "torch.cudnn_convolution(x[None, None], x[None, None], [0, 0], [1, 1], [1, 1], 1, False, False, False)",
     "tritondbg: the torch op above has no CPU kernel: under the interpreter the program's \"cuda\" tensors"),
])
def test_errors_that_are_not_a_cpu_branchs_get_no_branch_hint(tmp_path, call, hint):
    """helper-46: LigerSwiGLUMLP's `ValueError: Activation function relu not supported` (and an ImportError of a
    missing package) was followed by "asked torch.cuda.is_available() ... so it took its CPU branch"; an error raised
    inside torch.cuda (a Stream, reset_peak_memory_stats) by "code that insists on CUDA tensors refuses them"."""
    lib = tmp_path / "site-packages" / "gpulib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(LIBRARY + textwrap.dedent('''
        def check(act):
            infer_device()
            if act != "silu":
                raise ValueError(f"Activation function {act} not supported.")
    '''))
    (tmp_path / "prog.py").write_text(f"import torch, triton, gpulib\n{call}\n")
    out = _interpret(tmp_path, site_packages=True)
    assert out.returncode == 1, out.stderr[-3000:]
    assert "its CPU branch" not in out.stderr and "insists on CUDA tensors" not in out.stderr, out.stderr[-3000:]
    if hint:
        assert hint in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
def test_an_ask_at_import_explains_no_later_error(tmp_path):
    """helper-50: FlagGems asks torch.cuda.is_available() while it is imported (get_arch); every later error of
    the package (its LibEntry's AttributeError, a default_generators IndexError) was followed by "the code above
    asked torch.cuda.is_available() at .../backend/__init__.py (get_arch)", which had nothing to do with it. The
    hint needs the error to run through a function that was on the stack when it asked."""
    lib = tmp_path / "site-packages" / "gpulib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(LIBRARY + textwrap.dedent('''
        ARCH = infer_device()   # asked at import

        def broken(x):
            return x.fn        # an error of its own, on any machine
    '''))
    (tmp_path / "prog.py").write_text("import torch, gpulib\ngpulib.broken(torch.ones(2))\n")
    out = _interpret(tmp_path, site_packages=True)
    assert out.returncode == 1 and "AttributeError" in out.stderr, out.stderr[-3000:]
    # no hint tying the error to the ask; the run's end note (nothing launched) may say where it asked
    assert "the code above asked torch.cuda.is_available()" not in out.stderr, out.stderr[-3000:]


def test_a_kernel_file_in_an_installed_package_is_named_by_its_path_in_it():
    """fla has dozens of files called chunk.py: "tl.dot at chunk.py:130" named none of them."""
    from tritondbg.interp.frames import site_name

    assert site_name("/v/lib/python3.11/site-packages/fla/ops/gla/chunk.py") == "fla/ops/gla/chunk.py"
    assert site_name("/usr/lib/python3/dist-packages/liger_kernel/ops/dyt.py") == "liger_kernel/ops/dyt.py"
    assert site_name("/home/me/proj/kernels.py") == "kernels.py"


@pytest.mark.interpreter
def test_a_librarys_own_cuda_device_check_gets_a_hint(tmp_path):
    """fla's FusedCrossEntropyLoss asserts "Only support CUDA/NPU/XPU tensors" on the tensors' device: the program
    ended with that alone, no word that its "cuda" tensors are made on the CPU here. A tensor made on "cuda" now
    passes such a check (it says cuda:0 to the program's code); one made without a device still fails it, with a
    line saying which tensors say cuda."""
    (tmp_path / "prog.py").write_text("import torch, triton\nx = torch.randn(4, device='cuda')\n"
                                      "assert x.device.type in ('cuda', 'xpu'), 'x: Only support CUDA/NPU/XPU'\n"
                                      "h = torch.randn(4)\n"
                                      "assert h.device.type in ('cuda', 'xpu'), 'Only support CUDA/NPU/XPU tensors'\n")
    out = _interpret(tmp_path)
    assert out.returncode == 1 and "AssertionError: Only support CUDA/NPU/XPU tensors" in out.stderr, out.stderr
    assert "x: Only support" not in out.stderr, out.stderr[-3000:]
    assert "tritondbg: the error above names CUDA: under the interpreter every tensor is on the CPU; those the " \
           "program makes on \"cuda\" (or on Triton's get_active_torch_device(), or moves there) say cuda:0 to its " \
           "code, the others (made without a device, or on \"cpu\") cpu" in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
@pytest.mark.parametrize("command, imports", [("interpret", "triton"), ("capture", "triton"),
                                              ("interpret", "torch"), ("interpret", "gpulib"), ("interpret", "srclib")])
def test_a_test_suite_that_skips_without_cuda_launched_nothing_and_is_no_pass(tmp_path, command, imports):
    """skipif(not torch.cuda.is_available()) on every test (most GPU suites): `interpret -- pytest` exited 0 with
    "no Triton launch", reading as a clean run; capture said "nothing captured" and exited 0 too. The note on
    where the program asked was missing when the tests never imported Triton ("torch"), and named the library
    that asked first rather than the test's skipif ("gpulib", installed: it asks at its import; "srclib", a source
    tree on PYTHONPATH, not installed: helper-149, torchtitan's tools/utils.py was named, not the test's
    skipUnless)."""
    (tmp_path / "test_k.py").write_text(textwrap.dedent(f'''
        import pytest, torch, {imports}

        @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
        def test_kernel():
            raise AssertionError("not reached")
    '''))
    for folder, name in (("site-packages", "gpulib"), ("src", "srclib")):
        lib = tmp_path / folder / name
        lib.mkdir(parents=True)
        (lib / "__init__.py").write_text("import torch\nDEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET" and not k.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path / "site-packages"), str(tmp_path / "src"),
                                                      env.get("PYTHONPATH")]))
    extra = ["--interpret", "--out", str(tmp_path / "cap")] if command == "capture" else []
    out = subprocess.run([sys.executable, "-m", "tritondbg", command, *extra, "--", sys.executable, "-m", "pytest",
                          "-q", "-p", "no:cacheprovider", "test_k.py"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert out.returncode == 1 and "1 skipped" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
    assert "asked torch.cuda.is_available() (at " in out.stderr and "test_k.py:4)" in out.stderr, out.stderr


@pytest.mark.interpreter
def test_a_library_that_asks_tritons_driver_is_named_not_the_driver(tmp_path):
    """helper-64 (DeepSpeed turns its Triton ops off on ``driver.is_active()``): the note named the line of
    Triton's CUDA driver that asked torch, not the library's call."""
    (tmp_path / "prog.py").write_text("import triton\nfrom triton.backends.nvidia.driver import CudaDriver\n"
                                      "HAS_TRITON = CudaDriver.is_active()\n"
                                      "OPS = object() if HAS_TRITON else None\nOPS.forward()\n")
    # (the program then fails on the None its Triton switch left: the note was said only after a clean exit)
    out = _interpret(tmp_path)
    assert out.returncode == 1 and "AttributeError" in out.stderr, out.stderr[-3000:]
    assert "asked torch.cuda.is_available() (at " in out.stderr and "prog.py:3)" in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
def test_a_torch_op_the_cpu_build_lacks_for_a_dtype_gets_a_line_saying_why(tmp_path):
    prog = Path(__file__).resolve().parent / "program_data" / "cpu_op_missing.py"
    out = _interpret(tmp_path, prog)
    assert out.returncode == 1 and "not implemented for 'Bool'" in out.stderr, out.stderr[-2000:]
    assert "tritondbg: the torch op above has no CPU kernel for that dtype" in out.stderr, out.stderr[-2000:]


@pytest.mark.interpreter
def test_the_raw_stream_a_launch_asks_for_is_there_on_a_cpu_build(tmp_path):
    """helper-67 (tritonbench's welford: ``from torch._C import _cuda_getCurrentRawStream``, as Inductor's code
    has it): an ImportError on torch's CPU build before the first launch; under the stand-in the stream is 0."""
    (tmp_path / "prog.py").write_text("import torch, triton\nfrom torch._C import _cuda_getCurrentRawStream as s\n"
                                      "print('stream', s(0))\n")
    out = _interpret(tmp_path)
    assert out.stdout.strip() == "stream 0", out.stdout + out.stderr[-2000:]


@pytest.mark.interpreter
def test_a_cuda_only_object_in_a_program_that_never_imports_triton_gets_the_hint(tmp_path):
    """helper-78: the one tritondbg line after torch's error on a CUDA-only object was installed with the Triton
    stand-in, at Triton's import: a program that never imported Triton ended with torch's error alone."""
    (tmp_path / "prog.py").write_text("import torch\nx = torch.randn(4, device='cuda')\n"
                                      "graph = torch.cuda.CUDAGraph()\n")
    out = _interpret(tmp_path)
    assert out.returncode == 1 and "dummy base class CUDAGraph" in out.stderr, out.stderr[-3000:]
    hint = [ln for ln in out.stderr.splitlines() if ln.startswith("tritondbg: the program used a CUDA-only part")]
    assert len(hint) == 1, out.stderr[-3000:]


@pytest.mark.interpreter
def test_torch_cudas_queries_answer_before_triton_is_imported(tmp_path):
    """helper-80: the program's "cuda" tensors said cuda:0 from torch's import, but ``torch.cuda.set_device(0)`` and
    ``get_device_properties`` died ("Torch not compiled with CUDA enabled") until Triton was imported: a training
    script that sets its device before importing its kernel library stopped there. ``mem_get_info`` says what the
    host has free, not the target's 80 GB."""
    (tmp_path / "prog.py").write_text(
        "import torch\nx = torch.randn(2, device='cuda')\ntorch.cuda.set_device(0)\n"
        "free, total = torch.cuda.mem_get_info()\n"
        "print('early', torch.cuda.get_device_properties(x.device).multi_processor_count,\n"
        "      torch.cuda.get_device_capability(), torch.cuda.is_bf16_supported(), free <= total)\n")
    out = _interpret(tmp_path)
    assert "early 132 (9, 0) True True" in out.stdout, out.stdout + out.stderr[-3000:]
    assert "Traceback" not in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
def test_cuda_seeding_rng_state_and_a_worker_threads_cuda_tensors_work_on_the_cpu(tmp_path):
    """``torch.cuda.manual_seed`` / ``get_rng_state`` / ``fork_rng`` are the CPU generator's (they were a silent
    no-op and "Torch not compiled with CUDA enabled"), and a thread the program starts makes its "cuda" tensors on
    the CPU too (function modes are per thread: it died there)."""
    (tmp_path / "prog.py").write_text(textwrap.dedent('''
        import threading
        import torch
        import triton
        import triton.language as tl

        @triton.jit
        def dbl(x, y, n, B: tl.constexpr):
            o = tl.arange(0, B)
            tl.store(y + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)

        torch.cuda.manual_seed(1)
        a = torch.randn(5, device="cuda")
        torch.cuda.manual_seed(1)
        assert torch.equal(a, torch.randn(5, device="cuda")), "seeded twice, different numbers"
        st = torch.cuda.get_rng_state()
        c = torch.randn(5, device="cuda")
        torch.cuda.set_rng_state(st)
        assert torch.equal(c, torch.randn(5, device="cuda")), "state put back, different numbers"
        with torch.random.fork_rng():
            torch.randn(3, device="cuda")
        out = {}

        def work():
            x = torch.arange(5.0, device="cuda")
            y = torch.empty_like(x)
            dbl[(1,)](x, y, 5, B=8)
            out.update(y=y.tolist(), dev=str(y.device))

        t = threading.Thread(target=work)
        t.start()
        t.join()
        print("RESULT", out)
    '''))
    out = _interpret(tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert "RESULT {'y': [0.0, 2.0, 4.0, 6.0, 8.0], 'dev': 'cuda:0'}" in out.stdout, out.stdout + out.stderr[-3000:]
    assert "1 launch(es), 0 finding(s)" in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
@pytest.mark.parametrize("imports", ["", "import triton\n"])
def test_an_error_of_the_programs_own_torch_op_shows_no_tritondbg_frame(tmp_path, imports):
    """helper-88: an IndexError of the program's own indexing went up through tritondbg's torch function modes
    (readwatch.py, cpu_device.py), shown as if tritondbg had raised it (and with no Triton import, every error)."""
    (tmp_path / "prog.py").write_text(imports + "import torch\nt = torch.zeros(3, 4, device='cuda')\n"
                                      "t[torch.tensor(3), :2] = 1\n")
    out = _interpret(tmp_path)
    assert out.returncode == 1 and "IndexError: index 3 is out of bounds" in out.stderr, out.stderr[-3000:]
    assert "tritondbg/program" not in out.stderr and 'prog.py", line ' in out.stderr, out.stderr[-3000:]


SKIPPING_SUITE = textwrap.dedent('''
    import pytest, torch, triton, triton.language as tl

    @triton.jit
    def twice(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    def test_runs_here():
        x = torch.ones(8, device="cuda")
        twice[(1,)](x, 8, BLOCK=8)
        assert x.sum().item() == 16

    def test_skips_here():
        if not torch.cuda.is_available():
            pytest.skip("needs CUDA")
        twice[(1,)](torch.ones(8, device="cuda"), 8, BLOCK=8)
''')


@pytest.mark.interpreter
def test_a_suite_that_launched_but_skipped_tests_on_is_available_is_told_where(tmp_path):
    """helper-94: under `interpret -- python -m pytest`, 4 of SageAttention's 5 tests skipped on
    torch.cuda.is_available() (False here) while one launched: nothing said those 4 were never checked (the note
    came only when nothing launched at all). A library's own ask (site-packages) stays unsaid: it is not a skip."""
    (tmp_path / "test_suite.py").write_text(SKIPPING_SUITE)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-m", "tritondbg", "interpret", "--", sys.executable, "-m", "pytest", "-q",
                          "-p", "no:cacheprovider", "test_suite.py"], capture_output=True, text=True, env=env,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0 and "1 passed, 1 skipped" in out.stdout, (out.stdout[-2000:], out.stderr[-3000:])
    line = [ln for ln in out.stderr.splitlines() if "asked torch.cuda.is_available()" in ln]
    assert len(line) == 1 and "test_suite.py:15 and heard False" in line[0] and "were skipped" in line[0], line
    lib = tmp_path / "site-packages" / "gpulib"  # the library's ask, in a run that launched: no line
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(LIBRARY)
    (tmp_path / "prog.py").write_text("import torch, gpulib\ngpulib.infer_device()\n" + "\n".join(
        SKIPPING_SUITE.splitlines()[:7]) + "\nx = torch.ones(8, device='cuda')\ntwice[(1,)](x, 8, BLOCK=8)\n")
    out = _interpret(tmp_path, site_packages=True)
    assert out.returncode == 0 and "asked torch.cuda.is_available()" not in out.stderr, out.stderr[-3000:]


@pytest.mark.interpreter
def test_torch_device_made_with_the_device_keyword_stays_cuda(tmp_path):
    """helper-97: ``torch.device(device="cuda")`` (24 of FlashInfer's test files) came back as cpu under the
    interpreter (the keyword was taken for a factory's device=), so FlashInfer's own check raised "device must be a
    cuda device"; torch.device("cuda") was cuda. Tensors made on either are served on the CPU alike."""
    (tmp_path / "prog.py").write_text(textwrap.dedent('''
        import torch, triton
        for d in (torch.device(device="cuda"), torch.device("cuda"), torch.device(type="cuda", index=0)):
            t = torch.ones(2, device=d)
            print("DEV", d.type, t.device.type, t.is_cuda)
    '''))
    out = _interpret(tmp_path)
    assert out.returncode in (0, 1), out.stderr[-3000:]  # (no kernel launched: exit 1, said so)
    assert out.stdout.count("DEV cuda cuda True") == 3, (out.stdout, out.stderr[-2000:])
