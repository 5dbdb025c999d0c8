"""The Gluon decode-attention kernel (kernels/_gluon_attn_decode.py) on the CPU: which calls it takes, its ring
depth and register budget per programs an SM, and that its candidates compile for sm_90 with TMA loads, both wgmma
shapes, no spill, and the split merge's acq_rel atomic only where there is a merge. It runs on a GPU only
(``python tests/bench/gluon_attn_decode.py``); it is not wired into attention_decode until measured there."""
from __future__ import annotations

from pathlib import Path

import pytest

G = pytest.importorskip("tritondbg.kernels._gluon_attn_decode", exc_type=ImportError)
REPO = Path(__file__).resolve().parents[1]


def test_ring_depth_and_registers_follow_the_programs_an_sm_holds():
    # 64 x 128 bf16 K and V blocks: 32 KiB a stage; 220 KiB for one program, half for two
    assert G.stages_for(64, 128, 1) == 6 and G.stages_for(64, 128, 2) == 3
    assert G.stages_for(128, 128, 2) == 2  # never fewer than two (one in flight while one is read)
    assert G.maxnreg_for(1) is None
    assert G.maxnreg_for(2) * 2 * 5 * 32 <= 65536 and G.maxnreg_for(2) % 8 == 0


def test_it_takes_only_gqa_16_bit_contiguous_calls_on_sm90_without_seq_lens():
    import torch

    q = torch.empty(1, 32, 128, dtype=torch.bfloat16)
    k = torch.empty(1, 8, 64, 128, dtype=torch.bfloat16)
    assert not G.supported(q, k, k, None)  # a CPU tensor: no sm_90 here
    assert not G.supported(q, k, k, torch.tensor([3], dtype=torch.int32))


def test_its_candidates_compile_for_sm90(cli_env, tmp_path):
    """In a subprocess: Triton 3.6's interpreter, which the test process runs kernels under, leaves triton.language
    patched for a later compile."""
    pytest.importorskip("triton.experimental.gluon.language.nvidia.hopper")
    import json
    import subprocess
    import sys

    out = tmp_path / "compiled.json"
    p = subprocess.run([sys.executable, str(REPO / "tests/bench/gluon_attn_decode.py"), "--compile-only", "--cands",
                        "16:6,32:3,1:4", "--out", str(out)], env=cli_env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    rows = json.loads(out.read_text())
    assert [(r["splits"], r["stages"]) for r in rows] == [(16, 6), (32, 3), (1, 4)]
    for r in rows:
        assert r["spill_bytes"] == 0 and r["shared"] <= 227 * 1024, r
        assert r["wgmma"] == ["m64n128k16.f32.bf16.bf16", "m64n64k16.f32.bf16.bf16"] and r["tma"] >= 2, r
        assert (r["acq_rel"] > 0) == (r["splits"] > 1), r
    assert rows[1]["maxnreg"] == G.maxnreg_for(2) and rows[1]["regs"] <= rows[1]["maxnreg"]
