"""A kernel defined inside a function (torchao builds its blockwise fp8 kernels in ``_build_triton_impls``): its
reproducer cannot import it by name, so a capture saves it lifted to a module of its own (program/nested.py) with
the file's imports, module-level jit helpers and constants, and its closure's plain values; the reproducer replays."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import run_cli

pytestmark = [pytest.mark.interpreter]

PROG = '''
from typing import Optional
import torch
import triton
import triton.language as tl

SHIFT = tl.constexpr(1)
_built: Optional["Impls"] = None


@triton.jit
def _twice(x):
    return x * 2


def build():
    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
    @triton.jit
    def affine_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, _twice(tl.load(x_ptr + offs, mask=mask)) * 3.0 + SHIFT, mask=mask)
    return affine_kernel


if __name__ == "__main__":
    kernel = build()
    x = torch.randn(1000)
    out = torch.empty_like(x)
    kernel[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, out, 1000)
    assert torch.allclose(out, x * 6 + 1)
'''


def test_a_kernel_defined_in_a_function_is_captured_and_replays(tmp_path, cli_env):
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROG))
    cap = run_cli(["capture", "--out", "cap", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert cap.returncode == 0, cap.stderr[-2000:]
    [entry] = json.loads((tmp_path / "cap" / "captures.json").read_text())["captures"]
    src = next((tmp_path / "cap" / "src").glob("*.py")).read_text()
    assert "def affine_kernel(" in src and "def _twice(" in src and "SHIFT = tl.constexpr(1)" in src, src
    assert "@triton.autotune(" in src and "Impls" not in src, src   # its autotuner kept; annotation dropped
    rep = run_cli(["interpret", str(tmp_path / "cap" / entry["reproducer"]), "--json"], cli_env, cwd=tmp_path)
    r = json.loads(rep.stdout)["results"][0]
    assert rep.returncode == 0 and r["status"] == "pass", (rep.stdout[-1500:], rep.stderr[-1500:])


def test_the_closures_plain_values_become_module_constants(tmp_path):
    from tritondbg.program import nested

    path = tmp_path / "lib.py"
    path.write_text(textwrap.dedent('''
        import triton

        def build(scale, name):
            @triton.jit
            def k(x_ptr):
                x_ptr + scale
            return k
    '''))
    ns = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)

    def fake(scale, name):  # the same closure shape as the kernel's Python function
        def k(x_ptr):
            return x_ptr + scale, name
        return k

    src = nested.standalone_source(str(path), "build.<locals>.k", fake(2.5, "q"))
    assert "scale = 2.5" in src and "name = 'q'" in src and src.index("scale = 2.5") < src.index("def k(")
    assert nested.standalone_source(str(path), "other.<locals>.k") is None
