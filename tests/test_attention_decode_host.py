"""attention_decode's host path (kernels/_attention_decode.py): a plan per call signature, the direct launcher of the
compiled kernel (``_runner``) and when a call may use it instead of the autotuner.

No GPU here, so the launches are stand-ins: the autotuned kernel is replaced by a recorder that returns a
fake compiled kernel, whose ``[grid](*args)`` records what the direct launcher passes; tensors live on the
``meta`` device (shapes, strides and dtypes, no data). ``_pristine()`` (nothing patched the launch path) is
set by the test; its real answer under tritondbg's config pinning is checked on its own below."""
import inspect

import pytest
import torch

from tritondbg.kernels import _attention_decode as K  # the decode host path (re-exported by attention)

_REAL_KERNEL = K._attn_decode_kernel  # the autotuner (the fixture stands a recorder in for it)


class _Compiled:
    def __init__(self):
        self.direct = []  # (grid, args) of every launch through the direct launcher

    def __getitem__(self, grid):
        return lambda *args: self.direct.append((grid, args))


class _Kernel:
    """Stands in for the autotuned ``_attn_decode_kernel``: ``kernel[grid](*args, **kwargs)`` is one trip through
    the autotuner and JITFunction.run; ``best_config`` is the config that ran."""

    def __init__(self, real, config):
        self.fn = real.fn  # the real parameter names, read by _runner
        self.best_config = config
        self.compiled = _Compiled()
        self.tuned = []  # (grid, args, kwargs) of every call through the autotuner

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.tuned.append((grid, args, kwargs))
            return self.compiled
        return launch


@pytest.fixture
def fake(monkeypatch):
    config = K._DECODE_CONFIGS[0]
    kernel = _Kernel(K._attn_decode_kernel, config)
    state = {"pristine": True}
    monkeypatch.setattr(K, "_attn_decode_kernel", kernel)
    monkeypatch.setattr(K, "_pristine", lambda: state["pristine"])
    monkeypatch.setattr(K, "_PLANS", {})
    monkeypatch.setattr(K._scratch, "_BUFFERS", {})
    monkeypatch.setattr(K._launch, "_VERIFY", [True])  # tritondbg run/check: a new launcher's check launch
    return kernel, state


def _inputs(B=2, H=8, H_KV=2, S=4096, D=128):
    q = torch.empty(B, H, D, device="meta", dtype=torch.bfloat16)
    k = torch.empty(B, H_KV, S, D, device="meta", dtype=torch.bfloat16)
    v = torch.empty(B, H_KV, S, D, device="meta", dtype=torch.bfloat16)
    return q, k, v


def _same(a, b):
    return a is b if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor) else a == b


def test_direct_launcher_passes_what_jitfunction_run_would_bind(fake):
    kernel, _ = fake
    q, k, v = _inputs()
    seq_lens = torch.empty(2, device="meta", dtype=torch.int32)
    o = K.attention_decode(q, k, v, seq_lens, num_splits=4)
    (grid, args, kwargs), = kernel.tuned
    (dgrid, dargs), = kernel.compiled.direct  # first call of a plan: one check launch through the launcher
    assert dgrid == grid + (1,) == (4, 4, 1)  # (B * H_KV, splits)
    bound = inspect.signature(K._attn_decode_kernel.fn.fn).bind(*args, **kwargs, **kernel.best_config.kwargs)
    want = list(bound.arguments.values())
    assert len(dargs) == len(want) and all(_same(a, b) for a, b in zip(dargs, want)), (dargs, want)
    assert dargs[4] is o and dargs[3] is seq_lens


def test_runner_kept_after_a_first_call_under_a_patched_launch_path(fake):
    """tritondbg run/check pin configs (launch path patched) on the first call of a plan; the next unpatched call
    with the same config must keep the direct launcher, so that later calls skip the autotuner."""
    kernel, state = fake
    q, k, v = _inputs()
    state["pristine"] = False
    K.attention_decode(q, k, v)  # e.g. the correctness check before a benchmark
    plan, = K._PLANS.values()
    assert len(kernel.tuned) == 1 and len(kernel.compiled.direct) == 1 and plan.runner is None
    state["pristine"] = True
    K.attention_decode(q, k, v)  # autotuner again (config already checked): now keeps the launcher
    assert len(kernel.tuned) == 2 and len(kernel.compiled.direct) == 1 and plan.runner is not None
    for n in range(3):  # steady state: the direct launcher only
        o = K.attention_decode(q, k, v)
        assert len(kernel.tuned) == 2 and len(kernel.compiled.direct) == 2 + n
        assert kernel.compiled.direct[-1][1][4] is o
    state["pristine"] = False  # a tool patched the launch path again: through the autotuner, configs honoured
    K.attention_decode(q, k, v)
    assert len(kernel.tuned) == 3 and len(kernel.compiled.direct) == 4


def test_first_pristine_call_keeps_the_runner_and_converted_seq_lens_never_skip(fake):
    kernel, _ = fake
    q, k, v = _inputs()
    K.attention_decode(q, k, v)
    K.attention_decode(q, k, v)
    assert len(kernel.tuned) == 1 and len(kernel.compiled.direct) == 2
    lens64 = torch.empty(2, device="meta", dtype=torch.int64)  # converted to int32 per call: never cached
    for _ in range(2):
        K.attention_decode(q, k, v, lens64)
    assert len(kernel.tuned) == 3 and len(kernel.compiled.direct) == 2


def test_outside_run_check_each_call_launches_exactly_once(fake, monkeypatch):
    """A user's program or a profiler (Proton counts launches): no check launch; the second call of a signature
    goes through the cached launcher alone."""
    kernel, _ = fake
    monkeypatch.setattr(K._launch, "_VERIFY", [False])
    q, k, v = _inputs()
    o1 = K.attention_decode(q, k, v)
    assert len(kernel.tuned) == 1 and kernel.compiled.direct == []
    o2 = K.attention_decode(q, k, v)
    assert len(kernel.tuned) == 1 and len(kernel.compiled.direct) == 1
    assert kernel.compiled.direct[0][1][4] is o2 and o2 is not o1


def test_pristine_is_false_while_tritondbg_pins_configs():
    from tritondbg.pinning import Pinning

    assert K._pristine()
    with Pinning({}, pin_all=False).active():
        assert not K._pristine()
    assert K._pristine()


@pytest.mark.parametrize("tiles, s_max, expected", [
    (32, 8192, 4),      # B=1, H_KV=32, KV 8k on 132 SMs: 4 splits measured best on the H200 (35.8 us vs 40.9 at 16)
    (32, 32768, 4),     # B=1, KV 32k
    (64, 32768, 2),     # GQA B=8, H_KV=8
    (256, 32768, 1),    # B=8, H_KV=32: the tiles alone fill the GPU
    (1024, 4096, 1),    # B=32
    (1, 1000, 1),       # a 1000-token cache: chunks of >= 512 tokens allow 1 split
    (1, 4096, 8),       # 132 wanted, 4096 // 512 = 8 allowed
    (1, 10 ** 6, 64),   # never more than 64 splits
    (0, 8192, 1), (32, 0, 1),
])
def test_decode_split_rule_about_one_program_per_sm(tiles, s_max, expected):
    assert K._decode_num_splits(tiles, s_max, 132) == expected


def test_the_autotuner_key_tells_batch_sizes_apart(fake):
    """B8 and B32 at one cache length used to share the decode autotuner's key (cache length, head dim, group,
    splits, element size), so the config tuned at B8 served B32 untuned (session 28: 0.96x SDPA). The key now
    carries the grid's programs per SM (LOAD), bucketed; B31 and B32 share a bucket (one tuning for near grids)."""
    kernel, _ = fake
    assert _REAL_KERNEL.keys == ["S_MAX", "HEAD_DIM", "GP", "NUM_SPLITS", "ELEM_BYTES", "LOAD"]
    names = list(kernel.fn.arg_names)

    def tuned_key(B):
        kernel.tuned.clear()
        K.attention_decode(*_inputs(B=B, H=32, H_KV=32, S=1024))
        (grid, args, kwargs), = kernel.tuned
        bound = dict(zip(names, args)) | kwargs
        return tuple(bound[n] for n in _REAL_KERNEL.keys)

    b1, b8, b32, b31 = (tuned_key(B) for B in (1, 8, 32, 31))
    assert b8[:5] == b32[:5]  # what the old key saw: the same
    assert len({b1, b8, b32}) == 3 and b32 == b31


@pytest.mark.parametrize("programs, bucket", [(0, 0), (64, 0), (131, 0), (132, 1), (263, 1), (264, 2),
                                              (1024, 3), (1056, 4)])
def test_load_bucket(programs, bucket):
    assert K._load_bucket(programs, 132) == bucket
