"""What a bench script writes beside its rows: the run's meta (date, GPU, Triton and torch versions, seconds, command)
and the JSON file ``{"meta": ..., "rows": [...]}`` that tests/bench/runs/ keeps."""
from __future__ import annotations

import json
import os
import sys
import time


def meta(t_start: float, script: str, argv=None, **extra) -> dict:
    """The run's meta; ``script`` is the path the command line names (tests/bench/NAME.py), ``argv`` its arguments
    (default: this process's)."""
    import torch
    import triton

    args = sys.argv[1:] if argv is None else list(argv)
    return dict(date=time.strftime("%Y-%m-%d %H:%M"), gpu=torch.cuda.get_device_name(), triton=triton.__version__,
                torch=torch.__version__, seconds=round(time.time() - t_start, 1),
                command=" ".join(["python", script, *args]), **extra)


def save(path: str, run_meta: dict, rows: list) -> None:
    """Write ``{"meta", "rows"}`` to ``path`` (its folder made if missing) and print the meta as one JSON line."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(dict(meta=run_meta, rows=rows), f, indent=1)
    print(json.dumps(run_meta))


def rotated_rounds(calls: dict, rounds: int, warmup: int = 10, rep: int = 60) -> dict:
    """name -> the do_bench medians (us, L2 flushed) of ``calls[name]`` over ``rounds`` rounds, each round starting one
    name later (the GPU's clock drifts under load: whoever always ran last would run on a hotter GPU)."""
    from triton.testing import do_bench

    names = list(calls)
    times = {k: [] for k in names}
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            times[k].append(do_bench(calls[k], warmup=warmup, rep=rep) * 1e3)
    return times
