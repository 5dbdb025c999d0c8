"""Helpers shared by the third-party corpus scenarios (this project's code, not third-party)."""
import torch

ALL = ("float32", "float16", "bfloat16")


def randn(generator, *shape, dtype, device, scale=1.0, shift=0.0):
    """Normal values made in fp32 on the CPU (same numbers for every dtype), then cast."""
    return (shift + scale * torch.randn(*shape, generator=generator)).to(device=device, dtype=dtype)


def no_grad(fn):
    """Run an autograd Function's forward only (the corpus checks forward ops)."""
    def wrapped(*args, **kwargs):
        with torch.no_grad():
            return fn(*args, **kwargs)
    wrapped.__name__ = getattr(fn, "__name__", "launch")
    return wrapped
