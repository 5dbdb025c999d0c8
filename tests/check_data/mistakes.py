"""check_data: the common scenario mistakes; each must be a FAIL (or an error) that names the callable."""
import torch
import triton
import triton.language as tl
from _tiny import add_one, launch, make_inputs, reference

from tritondbg import Case, Scenario


def launch_no_return(x):
    launch(x)  # the forgotten `return`


def reference_str(x):
    return "not a tensor"


def launch_exits(x):
    y = launch(x)
    import os
    os._exit(3)  # a launch ending its process (helper-85)
    return y


def reference_no_return(x):
    reference(x)  # the forgotten `return`, in the reference this time (helper-82)


def make_inputs_raises(case, dtype, device, generator):
    raise ValueError("bad shape parameter")


def make_inputs_list(case, dtype, device, generator):
    return [torch.ones(case.params["n"], dtype=dtype, device=device)]  # a list: the arguments need their names


def reference_asserts(x):
    assert x.numel() % 64 == 0  # a bare assert (mamba's chunk-scan reference): no message of its own
    return reference(x)


def reference_in_place(x):
    return x.add_(1.0).float()  # changes x: the launch must still see the original


@triton.autotune(configs=[triton.Config({"B": 16}), triton.Config({"B": 32})], key=["n"])
@triton.jit
def refuses_every_config(x_ptr, y_ptr, n, B: tl.constexpr):
    tl.static_assert(B > 1000, "B must exceed 1000")  # every listed config refuses itself
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


def launch_refused(x):
    y = torch.empty_like(x)
    refuses_every_config[lambda meta: (triton.cdiv(x.numel(), meta["B"]),)](x, y, x.numel())
    return y


@triton.jit
def listed_but_never_launched(x_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)


_CASES = [Case("tiny", params=dict(n=100))]
no_return = Scenario("no_return", make_inputs, launch_no_return, reference, _CASES, kernels=[add_one])
# a launch returning (out, helper()) where the helper forgot its `return`
tuple_none = Scenario("tuple_none", make_inputs, lambda x: (launch(x), None), lambda x: (reference(x), reference(x)),
                      _CASES, kernels=[add_one])
ref_str = Scenario("ref_str", make_inputs, launch, reference_str, _CASES, kernels=[add_one])
ref_no_return = Scenario("ref_no_return", make_inputs, launch, reference_no_return, _CASES, kernels=[add_one])
ref_assert = Scenario("ref_assert", make_inputs, launch, reference_asserts, _CASES, kernels=[add_one])
bad_inputs = Scenario("bad_inputs", make_inputs_raises, launch, reference, _CASES, kernels=[add_one])
inputs_list = Scenario("inputs_list", make_inputs_list, launch, reference, _CASES, kernels=[add_one])
# a kernel the scenario lists that no case launches: the resources gate checked nothing of it (helper-84)
exits = Scenario("exits", make_inputs, launch_exits, reference, _CASES, kernels=[add_one])
unlaunched = Scenario("unlaunched", make_inputs, launch, reference, _CASES, kernels=[add_one, listed_but_never_launched])
ref_in_place = Scenario("ref_in_place", make_inputs, launch, reference_in_place, _CASES, kernels=[add_one])
no_cases = Scenario("no_cases", make_inputs, launch, reference, [], kernels=[add_one])  # an empty case list
all_refused = Scenario("all_refused", make_inputs, launch_refused, reference, _CASES, kernels=[refuses_every_config])


# outputs as dicts: matched by key (they were compared by position: a right kernel whose dict lists its outputs in
# another order failed, one whose outputs are swapped passed)
def _pair(x):
    y = launch(x)
    return y, y * 2


def reference_dict(x):
    return {"y": reference(x), "y2": reference(x) * 2}


dict_reordered = Scenario("dict_reordered", make_inputs, lambda x: dict(zip(("y2", "y"), _pair(x)[::-1])),
                          reference_dict, _CASES, kernels=[add_one])
dict_swapped = Scenario("dict_swapped", make_inputs, lambda x: dict(zip(("y", "y2"), _pair(x)[::-1])),
                        reference_dict, _CASES, kernels=[add_one])
dict_keys = Scenario("dict_keys", make_inputs, lambda x: {"out": _pair(x)[0], "y2": _pair(x)[1]},
                     reference_dict, _CASES, kernels=[add_one])
# (loss, None) on both sides, as Liger's ops return an optional output: the None is not compared
none_both = Scenario("none_both", make_inputs, lambda x: (launch(x), None), lambda x: (reference(x), None),
                     _CASES, kernels=[add_one])

_calls = {"n": 0}


def launch_jitter_bf16(x):
    """Deterministic in float32, not in bfloat16 (a per-call perturbation on that dtype's path only)."""
    y = launch(x)
    if x.dtype == torch.bfloat16:
        _calls["n"] += 1
        y = y + _calls["n"] * 0.5
    return y


# the determinism gate compared each case's first dtype only: this passed with float32 listed first
jitter_bf16 = Scenario("jitter_bf16", make_inputs, launch_jitter_bf16, reference,
                       [Case("tiny", params=dict(n=100), dtypes=("float32", "bfloat16"), atol=100, rtol=0)],
                       kernels=[add_one])
