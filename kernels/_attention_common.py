"""What the attention kernels share (kernels/attention.py prefill, kernels/_attention_decode.py decode): the
supported dtypes and head dims, the exp2 constant, the argument checks, the TMA tests."""
import torch
import triton
import triton.language as tl

from ._autotune import interpreting as _interpreting

try:  # Triton >= 3.4
    from triton.tools.tensor_descriptor import TensorDescriptor
except ImportError:  # pragma: no cover - older Triton: pointer path only
    TensorDescriptor = None

LOG2E = 1.4426950408889634  # log2(e): exp(x) == exp2(x * LOG2E)

_SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
_SUPPORTED_HEAD_DIMS = (16, 32, 64, 128)
_SMEM_LIMIT = 232448  # bytes of shared memory one program may use on H100/H200 (227 KB)


def _check_common(name, t, ndim):
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dims, got shape {tuple(t.shape)}")
    if t.dtype not in _SUPPORTED_DTYPES:
        raise ValueError(f"{name} dtype {t.dtype} not supported (float16, bfloat16, float32)")
    if t.stride(-1) != 1:
        raise ValueError(f"{name} must be contiguous in its last (head) dim, got strides {t.stride()}")


def check_prefill_args(q, k, v):
    """Validate prefill arguments (shapes, GQA heads, dtypes, devices, head dim); returns (B, H, N_Q, D, H_KV,
    N_KV)."""
    _check_common("q", q, 4)
    _check_common("k", k, 4)
    _check_common("v", v, 4)
    B, H, N_Q, D = q.shape
    Bk, H_KV, N_KV, Dk = k.shape
    if k.shape != v.shape:
        raise ValueError(f"k and v shapes differ: {tuple(k.shape)} vs {tuple(v.shape)}")
    if Bk != B or Dk != D:
        raise ValueError(f"k/v shape {tuple(k.shape)} does not match q shape {tuple(q.shape)} (batch, head dim)")
    if H_KV == 0 or H % H_KV != 0:
        raise ValueError(f"query heads H={H} must be a multiple of kv heads H_KV={H_KV}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k, v dtypes differ: {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k, v devices differ: {q.device}, {k.device}, {v.device}")
    if D not in _SUPPORTED_HEAD_DIMS:
        raise ValueError(f"head dim {D} not supported; use one of {_SUPPORTED_HEAD_DIMS}")
    return B, H, N_Q, D, H_KV, N_KV


def _tma_target() -> bool:
    """Whether the launch target has TMA: Hopper or newer NVIDIA (also under `tritondbg ir`, whose stub
    driver reports the requested arch); the interpreter emulates descriptors."""
    if TensorDescriptor is None or not hasattr(tl, "make_tensor_descriptor"):
        return False
    if _interpreting():
        return True
    try:
        target = triton.runtime.driver.active.get_current_target()
    except Exception:  # noqa: BLE001 - no driver: no TMA
        return False
    return target.backend == "cuda" and isinstance(target.arch, int) and target.arch >= 90


def _tma_ok(t: torch.Tensor) -> bool:
    """TMA needs a 16-byte aligned base and 16-byte multiples for every stride but the last."""
    es = t.element_size()
    return t.data_ptr() % 16 == 0 and all((s * es) % 16 == 0 for s in t.stride()[:-1])
