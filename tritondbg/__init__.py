"""tritondbg: debug and profile Triton kernels (interpreter with sanitizers, IR for any target, profiles, CI gates).

Importing this package does not import torch or triton; scenario files use ``from tritondbg import Scenario, Case``.
"""
from tritondbg import _checkout
from tritondbg.scenario import Case, Scenario

_checkout.install()  # a source checkout: tritondbg.kernels / .scenarios from the repo's folders (see the module)

__version__ = "0.1.0"
__all__ = ["Case", "Scenario", "__version__"]
