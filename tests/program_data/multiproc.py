"""Programs tests/test_program_multiproc.py runs under tritondbg: `python multiproc.py spawn|once BUG`.

- ``spawn``: two processes of a spawn-method multiprocessing context (fresh interpreters, attached through the
  environment as a Pool's workers are) each launch ``inc_kernel`` for n = 16, 17, 18 (the same three signatures
  in both) and one n of their own (19, 20): 8 launches, 5 distinct signatures, in 2 processes. The main process
  imports neither torch nor triton (two interpreter start-ups with torch, not three: the test stays short).
- ``once BUG``: one launch of ``copy_kernel``; BUG=1 reads past the end of x (an out_of_bounds finding).
"""
import multiprocessing as mp
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def inc(n: int) -> float:
    import torch
    import triton
    from multiproc_kernels import inc_kernel

    x = torch.arange(n, dtype=torch.float32)
    y = torch.empty_like(x)
    inc_kernel[(triton.cdiv(n, 16),)](x, y, n, BLOCK=16)
    return float(y.sum())


def worker(own: int) -> None:
    for n in (16, 17, 18, own):
        assert inc(n) == n * (n + 1) / 2


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "spawn":
        ctx = mp.get_context("spawn")
        procs = [ctx.Process(target=worker, args=(own,)) for own in (19, 20)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        sys.exit(max(p.exitcode for p in procs))
    elif what == "once":
        import torch
        from multiproc_kernels import copy_kernel

        x = torch.arange(20, dtype=torch.float32)
        y = torch.empty_like(x)
        copy_kernel[(2,)](x, y, 20, BLOCK=16, MASKED=sys.argv[2] != "1")
        assert torch.equal(y, x)
