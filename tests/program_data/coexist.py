"""The example model with tritonparse and Proton active in the same program (tests/gpu/test_program_gpu.py
runs it under `tritondbg capture --compiled`): each tool writes its own output, and tritondbg detaching
leaves the hooks the others installed.

    python coexist.py TRITONPARSE_DIR PROTON_NAME
"""
import os
import sys

import triton
import triton.profiler as proton
import tritonparse.structured_logging as tritonparse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "program"))

proton.start(sys.argv[2])                                   # CUPTI; no launch hooks (hook=None)
tritonparse.init(sys.argv[1], enable_trace_launch=True)     # assigns jit_post_compile_hook and launch_enter_hook
rt = triton.knobs.runtime
found = {name: getattr(rt, name) for name in ("jit_post_compile_hook", "launch_enter_hook", "launch_exit_hook")}

import model  # noqa: E402

model.main()
proton.finalize()

from tritondbg.program import attach  # noqa: E402  (already attached by tritondbg capture)

assert attach.installed(), "tritondbg is not attached"
attach.uninstall()                                          # tritondbg detaches
kept = all(getattr(rt, name) is hook for name, hook in found.items())
print("hooks kept" if kept else f"hooks changed: {found} -> {[getattr(rt, n) for n in found]}")
