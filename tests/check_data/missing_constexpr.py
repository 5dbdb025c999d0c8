"""check_data: a launch that forgets a constexpr argument, in a wrapper module the scenario imports."""
from _tiny import make_inputs, reference
from _wrappers import launch_without_block, needs_block

from tritondbg import Case, Scenario

missing = Scenario("missing", make_inputs, launch_without_block, reference, [Case("tiny", params=dict(n=100))],
                   kernels=[needs_block])
