"""Small programs test_program.py runs under tritondbg: `python programs.py crash|sigint PIDFILE`."""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "program"))
from user_kernels import scale_shift  # noqa: E402

scale_shift(torch.arange(100, dtype=torch.float32), 2.0, 1.0)
if sys.argv[1] == "crash":
    raise RuntimeError("the program failed after one launch")
if sys.argv[1] == "sigint":
    with open(sys.argv[2], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)
