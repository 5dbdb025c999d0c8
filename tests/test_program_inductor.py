"""torch.compile's Triton kernels in program mode (tritondbg/program/inductor.py), on the CPU: Inductor's kernels
run under the interpreter when the program asks for its Triton CPU backend, a program whose graphs became C++
says so instead of reading as a program without kernels, a generated module becomes a standalone kernel file,
and compile workers are not attached. (Compiled capture and profile: tests/gpu/test_program_gpu.py.)"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROGRAM = REPO / "tests" / "program_data" / "compiled_program.py"

GENERATED = '''
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={'x': 64}, filename=__file__,
    triton_meta={'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}},
    min_elem_per_thread=0
)
@triton.jit
def triton_poi_fused_relu_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + (xindex), xmask)
    tmp1 = triton_helpers.maximum(tmp0, 0.0)
    tl.store(out_ptr0 + (xindex), tmp1, xmask)
'''


def run(args, env=None, timeout=600):
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "tritondbg", *args], capture_output=True, text=True, env=full,
                          cwd=REPO, timeout=timeout)


def test_a_generated_module_becomes_a_kernel_file_that_imports_without_a_gpu(tmp_path):
    import torch

    from tritondbg.program.inductor import standalone_source

    path = tmp_path / "torchinductor_me" / "ab" / "cabc.py"
    path.parent.mkdir(parents=True)
    path.write_text(GENERATED)
    text = standalone_source(str(path), "triton_poi_fused_relu_0")
    assert "set_driver_to_gpu" not in text and "triton_heuristics.pointwise" not in text and "@triton.jit" in text
    out = tmp_path / "standalone.py"
    out.write_text(text)
    spec = importlib.util.spec_from_file_location("standalone_relu", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # the generated module itself raises here: no GPU driver
    x = torch.randn(50)
    y = torch.empty_like(x)
    mod.triton_poi_fused_relu_0[(1,)](x, y, 50, XBLOCK=64)
    assert torch.equal(y, torch.relu(x))
    assert standalone_source(str(path), "no_such_kernel") is None
    from tritondbg.program.inductor import is_generated

    assert is_generated(str(path)) and not is_generated(str(out))


def test_compile_workers_are_not_attached(monkeypatch):
    from tritondbg.program import child

    monkeypatch.setattr(sys, "argv", [os.path.join("x", "torch", "_inductor", "compile_worker", "__main__.py")])
    assert child._compile_worker()
    monkeypatch.setattr(sys, "argv", [str(PROGRAM)])
    assert not child._compile_worker()


@pytest.mark.interpreter
def test_torch_compile_triton_kernels_run_under_the_sanitizers():
    """cpu_backend = "triton": Inductor's kernels launch through the interpreter, each one checked, the launch
    site the user's compiled function (not Inductor's generated wrapper)."""
    # row_stats left out: Inductor's CPU Triton backend takes minutes over its reduction (not the interpreter)
    p = run(["interpret", "--", "python", str(PROGRAM)], env={"COMPILE_TRITON": "1", "COMPILE_ONLY": "norm_gelu,mm_relu"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert "compiled max err" in p.stdout
    head = next(line for line in p.stderr.splitlines() if line.startswith("tritondbg interpret:"))
    assert head.endswith(", 0 finding(s)") and int(head.split()[2]) >= 4, p.stderr[-3000:]  # 2 functions x 2 calls
    rows = [line.split() for line in p.stderr.splitlines() if line.strip().startswith("triton_")]
    assert len(rows) >= 2 and all(int(r[1]) == int(r[2]) >= 2 for r in rows), rows  # every launch checked


@pytest.mark.interpreter
def test_a_program_whose_compiled_graphs_ran_as_cpp_says_so():
    p = run(["interpret", "--", "python", str(PROGRAM)], env={"COMPILE_ONLY": "row_stats"})  # C++ builds are slow
    assert p.returncode == 1, p.stderr[-3000:]  # no Triton launch: nothing checked, no pass (the note says why)
    assert "0 launch(es)" in p.stderr
    assert "torch.compile compiled 1 graph(s) and none launched a Triton kernel" in p.stderr, p.stderr[-2000:]
    assert 'cpu_backend = "triton"' in p.stderr


HEUR = """
import {trigger}
class CachingAutotuner:
    def run(self, *args, stream, benchmark_run=False, **kwargs):
        return "ran"
"""


@pytest.mark.parametrize("when", ["while it loads", "before it is imported"])
def test_the_wrapper_is_installed_however_the_runtime_module_and_triton_interleave(tmp_path, when):
    """Inductor's runtime module imports triton, and tritondbg attaches inside triton's import: the module is in
    sys.modules without its class yet. The wrap used to wait for an import that had already begun (the H200 run
    captured 0 of a compiled model's launches); it now happens when that import ends."""
    pkg = tmp_path / "fakeind" / "runtime"
    pkg.mkdir(parents=True)
    (tmp_path / "fakeind" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "heur.py").write_text(HEUR.format(trigger="fake_trigger" if when == "while it loads" else "os"))
    (tmp_path / "fake_trigger.py").write_text("from tritondbg.program import inductor\n"
                                              "inductor.install('fakeind.runtime.heur')\n")
    code = f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
from tritondbg.program import inductor
if {when == "before it is imported"}:
    inductor.install('fakeind.runtime.heur')
import fakeind.runtime.heur as h
assert getattr(h.CachingAutotuner.run, "_tritondbg", False), "not wrapped"
assert type(sys.modules['fakeind.runtime']).__name__ == 'module'
inductor.uninstall()
assert not getattr(h.CachingAutotuner.run, "_tritondbg", False)
print("ok")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.stdout.strip() == "ok", p.stderr[-2000:]


DYNAMO_ASKS = """
import torch, triton, triton.language as tl

@triton.jit
def k(x):
    tl.store(x, 1.0)

@torch.compile
def f(a):
    return a * 2 + 1

x = torch.zeros(1, device="cuda")
k[(1,)](x)
print(f(torch.ones(4, device="cuda")))
"""


@pytest.mark.interpreter
def test_torch_compiles_own_is_available_ask_is_not_told_as_the_programs(tmp_path):
    """helper-100: the note "the program asked torch.cuda.is_available() at X" named the line that called a
    torch.compile'd function (dynamo asked it); a program that never asks gets no such note."""
    (tmp_path / "prog.py").write_text(DYNAMO_ASKS)
    p = subprocess.run([sys.executable, "-m", "tritondbg", "interpret", "--", sys.executable, "prog.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert p.returncode == 0 and "tensor([3., 3., 3., 3.])" in p.stdout, p.stderr[-3000:]
    assert "is_available" not in p.stderr, p.stderr[-3000:]


USER_KERNEL_IN_COMPILE = '''
import torch, triton, triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

@torch.compile(fullgraph=True)
def f(x):
    out = torch.empty_like(x)
    double[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
    return out + 1

x = torch.randn(40, device="cuda")
print("max err", (f(x) - (2 * x + 1)).abs().max().item())
'''


@pytest.mark.interpreter
def test_torch_compile_around_a_users_kernel_says_how_to_run_it_eagerly(tmp_path):
    """helper-112: modded-nanogpt's polar_express (@torch.compile(fullgraph=True) around its Triton kernels) ended in
    torch's InternalTorchDynamoError ('function' object has no attribute 'fn') with no word from tritondbg. A line
    says why (a kernel under the interpreter is no JITFunction dynamo can trace) and that TORCHDYNAMO_DISABLE=1 runs
    the function eagerly; so run, the kernel is checked."""
    (tmp_path / "prog.py").write_text(USER_KERNEL_IN_COMPILE)
    p = run(["interpret", "--", "python", str(tmp_path / "prog.py")])
    assert p.returncode == 1, p.stderr[-3000:]
    assert "tritondbg: torch.compile traced a Triton kernel above" in p.stderr, p.stderr[-3000:]
    assert "Rerun with TORCHDYNAMO_DISABLE=1" in p.stderr, p.stderr[-3000:]
    p = run(["interpret", "--", "python", str(tmp_path / "prog.py")], env={"TORCHDYNAMO_DISABLE": "1"})
    assert p.returncode == 0 and "max err 0.0" in p.stdout, p.stderr[-3000:]
    assert "tritondbg interpret: 1 launch(es), 0 finding(s)" in p.stderr, p.stderr[-3000:]


SYMFLOAT = '''
import torch

@torch.compile(fullgraph=True, dynamic=True, backend="eager")
def softcapping(logits, softcap: float):
    return torch.tanh(logits / softcap) * softcap

x = torch.randn(10, device="cuda")
print("ran", softcapping(x, 20.0).shape, softcapping(x, 30.0).shape)
'''


def test_a_compiled_function_given_a_float_under_dynamic_shapes_is_traced(tmp_path):
    """helper-140: Cut Cross-Entropy's softcapping, torch.compile(dynamic=True) given a Python float, failed under
    tritondbg: dynamo traced the CPU stand-in's mode, whose device checks asked hasattr of the float's SymFloat
    ("Unsupported hasattr call ... SymNodeVariable, _tdbg_on_cuda"); they look at tensors only now."""
    (tmp_path / "prog.py").write_text(SYMFLOAT)
    p = subprocess.run([sys.executable, "-m", "tritondbg", "interpret", "--", sys.executable, "prog.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert "ran torch.Size([10]) torch.Size([10])" in p.stdout, p.stderr[-3000:]
    assert "Unsupported" not in p.stderr and "Traceback" not in p.stderr, p.stderr[-3000:]


INDUCTOR_HOST = '''
import torch, triton, triton.language as tl
from torch._C import _cuda_getCurrentRawStream as get_raw_stream

empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda


@triton.jit
def triton_poi_fused_mul_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    tl.store(out_ptr0 + xindex, tl.load(in_ptr0 + xindex, xindex < xnumel) * 2, xindex < xnumel)


def call(arg0_1):
    with torch.cuda._DeviceGuard(0):
        torch.cuda.set_device(0)
        buf0 = empty_strided_cuda((100, ), (1, ), torch.float32)
        stream0 = get_raw_stream(0)
        triton_poi_fused_mul_0[(2,)](arg0_1, buf0, 100, XBLOCK=64)
    return buf0


x = torch.randn(100, device="cuda")
out = call(x)
print("device", out.device, torch.equal(out, x * 2))
'''


def test_inductor_style_host_code_runs_on_the_cpu(tmp_path):
    """helper-141: TritonBench's Inductor-output files (a TORCH_COMPILE_DEBUG dump's shape) failed at
    torch.cuda._DeviceGuard(0) ("compiled without CUDA support", with advice about graph capture) and at
    torch._C._dynamo.guards._empty_strided_cuda (no tritondbg line at all)."""
    (tmp_path / "prog.py").write_text(INDUCTOR_HOST)
    p = subprocess.run([sys.executable, "-m", "tritondbg", "interpret", "--", sys.executable, "prog.py"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert p.returncode == 0 and "device cuda:0 True" in p.stdout, p.stderr[-3000:]
