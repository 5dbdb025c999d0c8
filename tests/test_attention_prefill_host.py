"""attention's prefill host path (kernels/attention.py ``_record`` / ``_PrefillPlan``): after an autotuned
launch, a call with the same signature skips the autotuner, Triton's binder and the descriptors' validation, and
launches the compiled kernel with the same arguments JITFunction.run would bind, the four host TMA
descriptors rebuilt on the call's tensors with the chosen config's block shapes.

No GPU here, so the launches are stand-ins (as in test_attention_decode_host.py): the autotuned kernel is a
recorder returning a fake compiled kernel whose ``[grid](*args)`` records what the cached launcher passes;
tensors live on the ``meta`` device (shapes, strides and dtypes, no data)."""
import inspect

import pytest
import torch

from tritondbg.kernels import attention as A

_REAL_KERNEL = A._attn_fwd_kernel  # the autotuner (the fixture stands a recorder in for it)


class _Compiled:
    def __init__(self):
        self.direct = []  # (grid, args) of every launch through the cached launcher

    def __getitem__(self, grid):
        return lambda *args: self.direct.append((grid, args))


class _Kernel:
    """Stands in for the autotuned ``_attn_fwd_kernel``: ``kernel[grid](*args)`` is one trip through the
    autotuner (its pre-hook sets the descriptors' block shapes, as the real one does)."""

    def __init__(self, real, config):
        self.fn = real.fn  # the heuristics over the JIT function: the real parameter names
        self.best_config = config
        self.compiled = _Compiled()
        self.tuned = []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.tuned.append((grid, args, kwargs))
            names = list(self.fn.fn.arg_names)
            A._set_block_shapes(dict(zip(names, args), **self.best_config.kwargs))
            return self.compiled
        return launch


@pytest.fixture
def fake(monkeypatch):
    config = next(c for c in A._PREFILL_CONFIGS if (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps) ==
                  (128, 128, 8))  # 128x128, 8 warps
    kernel = _Kernel(A._attn_fwd_kernel, config)
    state = {"pristine": True, "tma": True}
    monkeypatch.setattr(A, "_attn_fwd_kernel", kernel)
    monkeypatch.setattr(A._launch, "pristine", lambda k: state["pristine"])
    monkeypatch.setattr(A, "_tma_target", lambda: state["tma"])
    monkeypatch.setattr(A, "_PREFILL_PLANS", {})
    monkeypatch.setattr(A, "_PREFILL_CHECKED", set())
    monkeypatch.setattr(A._launch, "_VERIFY", [False])
    return kernel, state


def _inputs(B=2, H=8, H_KV=2, N=1000, D=128):
    q = torch.empty(B, H, N, D, device="meta", dtype=torch.bfloat16)
    k = torch.empty(B, H_KV, N, D, device="meta", dtype=torch.bfloat16)
    v = torch.empty(B, H_KV, N, D, device="meta", dtype=torch.bfloat16)
    return q, k, v


def _same(a, b):
    if isinstance(a, A.TensorDescriptor) and isinstance(b, A.TensorDescriptor):
        return (a.base is b.base and list(a.shape) == list(b.shape) and list(a.strides) == list(b.strides)
                and list(a.block_shape) == list(b.block_shape))
    return a is b if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor) else a == b


def test_steady_state_passes_what_jitfunction_run_would_bind(fake):
    kernel, _ = fake
    q, k, v = _inputs()
    A.attention(q, k, v, causal=True)
    (grid, args, kwargs), = kernel.tuned
    assert kernel.compiled.direct == []  # outside tritondbg run/check: one launch per call
    q2, k2, v2 = _inputs()
    o2 = A.attention(q2, k2, v2, causal=True)
    assert len(kernel.tuned) == 1  # the autotuner did not run again
    (dgrid, dargs), = kernel.compiled.direct
    assert dgrid == (8, 16, 1)  # (cdiv(1000, BLOCK_M = 128), B * H)
    bound = inspect.signature(A._attn_fwd_kernel.fn.fn.fn).bind(*args, **kwargs, **kernel.best_config.kwargs,
                                                                EVEN_KV=1000 % 128 == 0)
    want = list(bound.arguments.values())
    want[:8] = [q2, k2, v2, o2] + [A.TensorDescriptor(t, t.shape, t.stride(), [1, 1, 128, 128])
                                   for t in (q2, k2, v2, o2)]
    assert len(dargs) == len(want) and all(_same(a, b) for a, b in zip(dargs, want)), (dargs, want)
    assert o2.shape == q2.shape and o2.is_contiguous()
    kept = A._PREFILL_PLANS[next(iter(A._PREFILL_PLANS))].descs
    assert not any(isinstance(v, torch.Tensor) for _, d in kept for v in d.values())  # the plan keeps no tensor alive


def test_descriptor_block_shapes_follow_the_config(fake, monkeypatch):
    kernel, _ = fake
    kernel.best_config = A._prefill_cfg(64, 128, 4, 3)
    q, k, v = _inputs(D=64)
    A.attention(q, k, v)
    A.attention(q, k, v)
    (_, dargs), = kernel.compiled.direct
    assert [list(d.block_shape) for d in dargs[4:8]] == [[1, 1, 64, 64], [1, 1, 128, 64], [1, 1, 128, 64],
                                                         [1, 1, 64, 64]]
    assert dargs[-1] is (1000 % 128 == 0)  # EVEN_KV, the heuristic's value for this config


def test_descriptors_built_through_the_constructor_when_not_a_plain_dataclass(fake, monkeypatch):
    """A later Triton whose TensorDescriptor has slots (no __dict__ to copy): the steady state builds each
    descriptor with the constructor instead, same fields."""
    kernel, _ = fake
    monkeypatch.setattr(A._launch, "_plain_dataclass", lambda cls: False)
    q, k, v = _inputs()
    A.attention(q, k, v)
    o = A.attention(q, k, v)
    (_, dargs), = kernel.compiled.direct
    assert [d.base for d in dargs[4:8]] == [q, k, v, o]
    assert [list(d.block_shape) for d in dargs[4:8]] == [[1, 1, 128, 128]] * 4


def test_pointer_path_passes_the_tensors_as_descriptor_arguments(fake):
    kernel, state = fake
    state["tma"] = False
    q, k, v = _inputs()
    A.attention(q, k, v)
    o = A.attention(q, k, v)
    (_, dargs), = kernel.compiled.direct
    assert list(dargs[:8]) == [q, k, v, o, q, k, v, o] and dargs[:8][3] is o


def test_a_patched_launch_path_or_a_new_signature_goes_through_the_autotuner(fake):
    kernel, state = fake
    q, k, v = _inputs()
    A.attention(q, k, v)
    state["pristine"] = False  # tritondbg's config pinning, the ir capture, an autotune watcher
    A.attention(q, k, v)
    state["pristine"] = True
    A.attention(q, k, v, causal=True)  # another signature
    A.attention(q, k, v, sm_scale=0.1)
    assert len(kernel.tuned) == 4 and kernel.compiled.direct == []
    A.attention(q, k, v, sm_scale=0.1)
    assert len(kernel.tuned) == 4 and len(kernel.compiled.direct) == 1


def test_under_tritondbg_run_the_new_launcher_writes_the_returned_output(fake, monkeypatch):
    kernel, _ = fake
    monkeypatch.setattr(A._launch, "_VERIFY", [True])
    q, k, v = _inputs()
    o = A.attention(q, k, v)
    (_, dargs), = kernel.compiled.direct  # the check launch, into the output the call returns
    assert dargs[3] is o and dargs[7].base is o
    A.attention(q, k, v)
    assert len(kernel.compiled.direct) == 2 and len(kernel.tuned) == 1  # checked once per (signature, config)


def test_the_autotuner_key_tells_batch_sizes_apart(fake):
    """One sequence length at B1 and at B32 used to share the prefill autotuner's key (lengths, head dim, causal,
    TMA, launch order): the tile tuned on a grid of a few programs served a full one. The key carries the grid's
    load (LOAD: 128-row tiles per SM, bucketed as decode's); B24 and B32 share a bucket (one tuning for near grids)."""
    kernel, _ = fake
    assert _REAL_KERNEL.keys[-1] == "LOAD"
    names = list(kernel.fn.fn.arg_names)

    def tuned_key(B):
        kernel.tuned.clear()
        A._PREFILL_PLANS.clear()
        A.attention(*_inputs(B=B, H=8, H_KV=8, N=1000))
        (_, args, kwargs), = kernel.tuned
        bound = dict(zip(names, args)) | kwargs
        return tuple(bound[n] for n in _REAL_KERNEL.keys)

    b1, b4, b24, b32 = (tuned_key(B) for B in (1, 4, 24, 32))
    assert b1[:-1] == b32[:-1]  # what the old key saw: the same
    assert len({b1, b4, b32}) == 3 and b24 == b32
