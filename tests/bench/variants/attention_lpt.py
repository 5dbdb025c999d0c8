"""attention_lpt: the bundled prefill kernel with a causal launch order over groups of heads (trial, 2026-11-30).

Same kernel, configs and numerics as ``attention`` (``kernels/attention.py``); one change, causal only: the
kernel's ``HEAD_GROUP`` order is 8 instead of 0. Order 0 (bundled) runs head after head, each head's query
tiles longest first; order 8 runs, for each group of 8 heads, the longest tile of every head of the group,
then the next longest, and so on. Non-causal programs all do the same work, so their order is unchanged.

Why: at B4 H32 N4096 with 128-row tiles, 4096 programs of 1..32 KV blocks run about one per SM (smem and
registers). Head after head, the last head's 32-block tile starts when ~95% of the work is done and finishes
alone; a list-scheduling simulation (132 SMs, one program each, cost = blocks + 1) gives a makespan 3.3% over
the ideal for order 0 and 0.2% for groups of 4-32 heads (64-row tiles: 1.4% and 0.1%). Eight heads keep 16 MB of
K/V in flight (the 50 MB L2 still holds it).

PREDICTION (H200, B4 H32 N4096 D128 bf16 causal; bundled in the same run ~1170-1220 us, 1.45x SDPA flash): with
the same config 3% faster, 1.49-1.51x flash; the non-causal row unchanged (same code path), within 1%.
"""
from __future__ import annotations

import dataclasses

from tritondbg.kernels import attention as _bundled
from tritondbg.scenario import Case
from tritondbg.scenarios.attention import SCENARIO as _BASE


def attention_lpt(q, k, v, causal=False, sm_scale=None):
    return _bundled._attention(q, k, v, causal, sm_scale, use_tma=None, head_group=8)


SCENARIO = dataclasses.replace(
    _BASE,
    name="attention_lpt",
    description="flash-attention prefill, causal programs longest-first over groups of 8 heads (trial)",
    launch=attention_lpt,
    kernels=[_bundled._attn_fwd_kernel],
    cases=[c for c in _BASE.cases if c.name in ("tiny_causal", "tiny_cross_gqa", "prefill_b4_h32_n4k_d128",
                                                "prefill_b4_h32_n4k_d128_causal")]
    + [Case("tiny_causal_9heads", params=dict(B=3, H=3, N=77, D=64, causal=True), dtypes=("float16",),
            config=dict(BLOCK_M=16, BLOCK_N=16),
            description="9 (batch, head) pairs: a full group of 8 heads and a group of 1")],
    source="",
)
