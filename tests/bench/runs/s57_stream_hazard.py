"""Session 57: tests/gpu/test_autotune_streams_gpu.py's code, run with the prefill autotuner's timer as it was
(``do_bench_cudagraph`` straight, no synchronisation first: "before") and as it is ("after")."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "gpu"))
from test_autotune_streams_gpu import CODE  # noqa: E402

BEFORE = '''
from tritondbg.kernels import attention as _A
from triton.testing import do_bench_cudagraph as _raw
_A._attn_fwd_kernel.do_bench = lambda call, quantiles=None: _raw(call, rep=50, quantiles=quantiles)
'''
for name, prefix in (("before", BEFORE), ("after", "")):
    code = CODE.replace("from tritondbg.kernels import attention as A\n",
                        "from tritondbg.kernels import attention as A\n" + prefix, 1)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=280,
                       env={**os.environ, "TRITON_INTERPRET": "0"})
    print(f"--- {name} (exit {p.returncode})\n{p.stdout}{p.stderr[-1500:] if p.returncode else ''}", flush=True)
