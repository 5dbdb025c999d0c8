"""What the attention kernels share (kernels/attention.py prefill, kernels/_attention_decode.py decode): the
supported dtypes and head dims, the exp2 constant, the argument check of one tensor."""
import torch

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
