"""A library's own autotuner subclass, as flash-linear-attention's ``CachedAutotuner``: its ``run`` sits between
the program's call and Triton's launch (programs.py ``subclass``)."""
import triton
from triton.runtime.autotuner import Autotuner


class LibAutotuner(Autotuner):
    def run(self, *args, **kwargs):
        return super().run(*args, **kwargs)


def lib_autotune(configs, key):
    def deco(fn):
        tuner = triton.autotune(configs=configs, key=key)(fn)
        tuner.__class__ = LibAutotuner
        return tuner
    return deco
