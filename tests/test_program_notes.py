"""What a launch's arguments say about the kernel (tritondbg/interp/kernel_stores.py, unstored.unnamed_entries)."""
from __future__ import annotations

import sys

import pytest

from conftest import run_cli

pytestmark = pytest.mark.interpreter


UNUSED = '''
import torch, triton, triton.language as tl

@triton.jit
def indices(indptr, batch_ptr, positions_ptr, bias_ptr, HAS_BIAS: tl.constexpr):
    b = tl.program_id(0)
    start, end = tl.load(indptr + b), tl.load(indptr + b + 1)
    offs = start + tl.arange(0, 16)
    val = b
    if HAS_BIAS:
        val += tl.load(bias_ptr)
    tl.store(batch_ptr + offs, val, mask=offs < end)  # positions' store was deleted

indptr = torch.tensor([0, 5, 12], dtype=torch.int32, device="cuda")
batch = torch.zeros(12, dtype=torch.int32, device="cuda")
positions = torch.zeros(12, dtype=torch.int32, device="cuda")
indices[(2,)](indptr, batch, positions, batch, HAS_BIAS=False)
'''


ALIASED = '''
import sys, torch, triton, triton.language as tl

@triton.jit
def copy_kernel(x_ptr, out_buf_ptr, n, out_ptr, SPILL: tl.constexpr, BLOCK: tl.constexpr):  # out_buf_ptr: unused
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n + SPILL)  # STORE

x = torch.randn(100, device="cuda")
out = torch.empty(108, device="cuda")[:100]
copy_kernel[(2,)](x, out, 100, out, SPILL=int(sys.argv[1]), BLOCK=64)
'''


@pytest.mark.parametrize("form", ["program", "reproducer"])
def test_an_unnamed_argument_that_is_the_same_tensor_as_a_named_one_is_not_told(tmp_path, cli_env, form):
    """helper-107: TransformerEngine's permutation kernels take their output twice, once in a slot the code never
    names (kept for JAX's aliasing); it was told as a tensor the launch "neither reads nor writes", and `check
    --strict` failed the correct kernel. And a finding at an address of both named the slot, not the output."""
    (tmp_path / "prog.py").write_text(ALIASED)
    line = next(i for i, ln in enumerate(ALIASED.splitlines(), 1) if ln.rstrip().endswith("# STORE"))
    for spill in ("0", "8"):
        if form == "program":
            p = run_cli(["interpret", "--", sys.executable, "prog.py", spill], cli_env, cwd=tmp_path)
        else:
            run_cli(["capture", "--out", f"cap{spill}", "--", sys.executable, "prog.py", spill], cli_env, cwd=tmp_path)
            p = run_cli(["check", f"cap{spill}", "--strict", "--gates", "sanitize", "--json", "c.json"], cli_env,
                        cwd=tmp_path)
        text = p.stdout + p.stderr
        if form == "reproducer":  # the findings' own words (the table wraps them)
            import json

            doc = json.loads((tmp_path / "c.json").read_text())
            text = "\n".join(f"{f['kind']} {f['file']}:{f['line']} {f['message']}" for r in doc["results"]
                              for f in r["findings"])
        assert "never names" not in text and "out_buf_ptr" not in text, text[-3000:]
        if spill == "0":
            assert p.returncode == 0, text[-3000:]
        else:  # 8 lanes past the view, inside its storage: told through out_ptr
            assert p.returncode == 1 and "outside_view" in text and f"prog.py:{line}" in text, text[-3000:]
            assert "store through out_ptr" in text, text[-3000:]


@pytest.mark.parametrize("form", ["program", "reproducer"])
def test_a_tensor_argument_the_kernels_code_never_names_is_a_warning(tmp_path, cli_env, form):
    """helper-97: FlashInfer's get_batch_indices_positions_kernel with its positions store deleted (a torch.zeros
    output: no mark to find) gave program mode nothing to say; then a note, and helper-101 found applied-ai's quant
    without its scale store (its scales returned unread) exit 0 with the note, and its reproducer's replay passed
    every gate with nothing said. A tensor argument the code never names is one warning at the kernel, in program
    mode and in the replay alike; one named in a branch a constexpr turns off (bias_ptr) is not."""
    (tmp_path / "prog.py").write_text(UNUSED)
    if form == "program":
        p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
        text = p.stderr
    else:
        run_cli(["capture", "--out", "cap", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
        p = run_cli(["interpret", str(tmp_path / "cap" / "indices_0.py")], cli_env, cwd=tmp_path)
        text = p.stdout + p.stderr
    told = [ln for ln in text.splitlines() if "is a tensor argument indices's code never names" in ln]
    assert p.returncode == 0 and len(told) == 1, text[-3000:]
    assert "positions_ptr (int32[12])" in told[0] and "bias_ptr (int32" not in text, told
    line = UNUSED.splitlines().index("def indices(indptr, batch_ptr, positions_ptr, bias_ptr, HAS_BIAS: tl.constexpr):")
    assert f"prog.py:{line + 1}" in text and "uninit" in text, text[-3000:]
    if form == "reproducer":  # `check`: the warning in the sanitize gate's reason; what correctness compared
        import json

        run_cli(["check", "cap", "--gates", "correctness,sanitize", "--json", "rec.json"], cli_env, cwd=tmp_path)
        gates = {g["gate"]: g["reason"] for g in json.loads((tmp_path / "rec.json").read_text())["extra"]["gates"]}
        assert "1 warning(s); first: uninit" in gates["sanitize"], gates
        assert "runs match the captured outputs (what the program got" in gates["correctness"], gates


WARNS = '''
import warnings, torch, triton, triton.language as tl

@triton.jit
def k(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(Y + tl.arange(0, BLOCK), x * 2)

x = torch.randn(16, device="cuda"); y = torch.empty(16, device="cuda")
for _ in range(6):
    k[(1,)](x, y, BLOCK=16)
    warnings.warn("the program's own deprecation", UserWarning)  # once per place, as Python shows it
print("done")
'''


def test_a_warning_of_the_program_comes_once_per_place_as_without_tritondbg(tmp_path, cli_env):
    """helper-104: a kernel's deprecation UserWarning (triton_kernels' tl.softmax keep_dims) came once per launch,
    10 times, burying the findings: each launch's catch_warnings reset Python's "once per place" memory."""
    (tmp_path / "prog.py").write_text(WARNS)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    assert "done" in p.stdout and p.returncode == 0, p.stderr[-2000:]
    assert p.stderr.count("UserWarning: the program's own deprecation") == 1, p.stderr[-3000:]


LEFTOVER = '''
import torch, triton, triton.language as tl

@triton.jit
def scale_kernel(x_ptr, unused_ptr, out_ptr, scale_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

x = torch.randn(100, device="cuda")
out = torch.empty(100, device="cuda")
# inputs it no longer reads: 100 values, and a one-element scale (one value, not zeros: data too, helper-110)
scale_kernel[(2,)](x, torch.randn(100, device="cuda"), out, torch.tensor([0.125], device="cuda"), 100, BLOCK=64)
# a few integers, all 0: an index of one block (helper-115: stk's row_indices [0, 0]), no output waiting for a store
scale_kernel[(2,)](x, torch.zeros(2, dtype=torch.int16, device="cuda"), out, torch.tensor([0.125], device="cuda"),
                   100, BLOCK=64)
'''


@pytest.mark.parametrize("form", ["program", "reproducer"])
def test_an_unnamed_argument_that_holds_data_is_an_input_left_over_and_not_told(tmp_path, cli_env, form):
    """helper-109: mlstm's backward kernels are handed matQ, matK and vecA they no longer read; each was an
    `uninit` warning ("an output whose tl.store is missing?") and `check --strict` failed the correct kernels.
    A tensor that holds data is an input; zeros, a fill or torch.empty's memory (an output's) are still told."""
    (tmp_path / "prog.py").write_text(LEFTOVER)
    if form == "program":
        p = run_cli(["interpret", "--strict", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    else:
        run_cli(["capture", "--out", "cap", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
        p = run_cli(["check", "cap", "--strict", "--gates", "sanitize"], cli_env, cwd=tmp_path)
    text = p.stdout + p.stderr
    assert p.returncode == 0 and "never names" not in text, text[-3000:]


ALIASED_SCENARIO = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario

@triton.jit
def copy_k(slot_ptr, x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < N - 4  # the last 4 elements are never written
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)

def launch(x):
    out = torch.empty_like(x)
    copy_k[(2,)](out, x, out, x.numel(), BLOCK=32)  # out handed twice: first to a slot the code never names
    return out

s = Scenario(name="alias_copy", make_inputs=lambda case, dtype, device, generator: dict(
                 x=torch.randn(64, generator=generator).to(device=device, dtype=dtype)),
             launch=launch, reference=lambda x: x.clone(), kernels=[copy_k],
             cases=[Case("tiny", params={}, dtypes=("float32",))])
'''


def test_an_unwritten_band_of_an_aliased_output_is_told_through_the_argument_the_kernel_names(tmp_path, cli_env):
    """helper-110: once the named arguments came first, the unwritten band's "was handed it as" took the last
    argument holding the address: the slot the code never names."""
    (tmp_path / "cases.py").write_text(ALIASED_SCENARIO)
    p = run_cli(["interpret", str(tmp_path / "cases.py")], cli_env, cwd=tmp_path)
    assert "was handed it as out_ptr" in p.stdout and "as slot_ptr" not in p.stdout, p.stdout[-3000:]
