"""check_data: two scenarios of one kernel with different cases (`check FILE --case odd` runs the one that has it)."""
from _tiny import add_one, launch, make_inputs, reference

from tritondbg import Case, Scenario

both = Scenario("both", make_inputs, launch, reference, [Case("tiny", params=dict(n=100)),
                                                         Case("odd", params=dict(n=37))], kernels=[add_one])
tiny_only = Scenario("tiny_only", make_inputs, launch, reference, [Case("tiny", params=dict(n=100))],
                     kernels=[add_one])
