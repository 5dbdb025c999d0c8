"""Program mode's notes on what a launch's arguments say about the kernel (tritondbg/interp/kernel_stores.py)."""
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


def test_a_tensor_argument_the_kernels_code_never_names_is_a_note(tmp_path, cli_env):
    """helper-97: FlashInfer's get_batch_indices_positions_kernel with its positions store deleted (a torch.zeros
    output: no mark to find) gave program mode nothing to say. A tensor argument the code never names is one note;
    one named in a branch a constexpr turns off (bias_ptr) is not."""
    (tmp_path / "prog.py").write_text(UNUSED)
    p = run_cli(["interpret", "--", sys.executable, "prog.py"], cli_env, cwd=tmp_path)
    notes = [ln for ln in p.stderr.splitlines() if "never named by its kernel's code" in ln]
    assert p.returncode == 0 and len(notes) == 1, p.stderr[-3000:]
    assert notes[0].strip().startswith("note: positions_ptr of indices is a tensor"), notes
