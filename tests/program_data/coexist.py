"""The example model with tritonparse and/or Proton active in the same program (tests/gpu/test_program_gpu.py
runs it under `tritondbg capture --compiled`): each tool writes its own output, and tritondbg detaching
leaves the hooks the others installed.

    python coexist.py MODE OUTDIR       MODE: tritonparse | proton | both

Known clash that is NOT tritondbg's (Triton 3.6, tritonparse 0.6.0): `tritonparse.init(enable_trace_launch=True)`
assigns a plain `LaunchHookImpl` object to `knobs.runtime.launch_enter_hook`, replacing Triton's HookChain, and
Proton's `finalize()` (HookManager.unregister) calls `launch_enter_hook.remove(...)` on it: AttributeError, with
or without tritondbg (tritondbg chains only `jit_post_compile_hook` and the autotuner listener, never
`launch_enter_hook`). So `both` runs tritonparse with launch tracing off (compilation tracing only).
"""
import os
import sys

import triton

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "program"))

mode, out = sys.argv[1], sys.argv[2]
use_tp, use_proton = mode in ("tritonparse", "both"), mode in ("proton", "both")
if use_proton:
    import triton.profiler as proton
    proton.start(os.path.join(out, "proton"))                # CUPTI; no launch hooks (hook=None)
if use_tp:
    import tritonparse.structured_logging as tritonparse
    # launch tracing replaces launch_enter_hook's HookChain, which Proton's finalize cannot cope with (see above)
    tritonparse.init(os.path.join(out, "tritonparse"), enable_trace_launch=(mode == "tritonparse"))
rt, tuning = triton.knobs.runtime, getattr(triton.knobs, "autotuning", None)
names = ("jit_post_compile_hook", "launch_enter_hook", "launch_exit_hook")
from tritondbg.program import attach  # noqa: E402  (already attached by tritondbg capture)


def theirs(hook):
    """What a hook slot holds without tritondbg: its own chain stands for the hook it wrapped."""
    return hook.previous if isinstance(hook, attach._Chained) else hook


found = {name: theirs(getattr(rt, name)) for name in names}
found_listener = theirs(getattr(triton.knobs.compilation, "listener", None))

import model  # noqa: E402

model.main()
if use_proton:
    proton.finalize()

assert attach.installed(), "tritondbg is not attached"
attach.uninstall()                                          # tritondbg detaches
kept = all(getattr(rt, name) is hook for name, hook in found.items())
kept = kept and getattr(triton.knobs.compilation, "listener", None) is found_listener
print("hooks kept" if kept else f"hooks changed: {found} -> {[getattr(rt, n) for n in names]}")
