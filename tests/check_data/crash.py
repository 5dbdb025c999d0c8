"""check_data: launches that kill their own process (a segfault, the OOM killer's SIGKILL), and a fine twin.
The gate item that runs them must end as an error naming the signal, never vanish."""
import ctypes
import os
import signal

from _tiny import add_one, launch, make_inputs, reference

from tritondbg import Case, Scenario


def _dies(sig):
    def launch_and_die(x):
        os.kill(os.getpid(), sig)  # the worker running this item dies here
        return launch(x)
    return launch_and_die


_CASES = [Case("tiny", params=dict(n=100))]
segv = Scenario("segv", make_inputs, _dies(signal.SIGSEGV), reference, _CASES, kernels=[add_one])
killed = Scenario("killed", make_inputs, _dies(signal.SIGKILL), reference, _CASES, kernels=[add_one])
fine = Scenario("fine", make_inputs, launch, reference, _CASES, kernels=[add_one])


def launch_reads_address_zero(x):
    if x.numel() == 7:
        ctypes.string_at(0)  # CRASH: a segfault inside Python's own library (ctypes), called from here
    return launch(x)


# its second case dies: the reason named ctypes' frame and no case
segv_in_c = Scenario("segv_in_c", make_inputs, launch_reads_address_zero, reference,
                          [Case("tiny", params=dict(n=100)), Case("second", params=dict(n=7))], kernels=[add_one])
