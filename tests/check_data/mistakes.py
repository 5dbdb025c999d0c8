"""check_data: the common scenario mistakes; each must be a FAIL (or an error) that names the callable."""
import torch
from _tiny import add_one, launch, make_inputs, reference

from tritondbg import Case, Scenario


def launch_no_return(x):
    launch(x)  # the forgotten `return`


def reference_str(x):
    return "not a tensor"


def make_inputs_raises(case, dtype, device, generator):
    raise ValueError("bad shape parameter")


def reference_in_place(x):
    return x.add_(1.0).float()  # changes x: the launch must still see the original


_CASES = [Case("tiny", params=dict(n=100))]
no_return = Scenario("no_return", make_inputs, launch_no_return, reference, _CASES, kernels=[add_one])
ref_str = Scenario("ref_str", make_inputs, launch, reference_str, _CASES, kernels=[add_one])
bad_inputs = Scenario("bad_inputs", make_inputs_raises, launch, reference, _CASES, kernels=[add_one])
ref_in_place = Scenario("ref_in_place", make_inputs, launch, reference_in_place, _CASES, kernels=[add_one])
