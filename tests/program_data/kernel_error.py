"""A kernel that fails to trace (a non-power-of-two shape), launched by a script and by a pytest test: the
tracebacks the program prints hold its own frames and Triton's, not tritondbg's."""
import torch
import triton
import triton.language as tl


@triton.jit
def bad_reshape_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = tl.reshape(x, (3, BLOCK))  # BUG: 3 is not a power of two
    tl.store(x_ptr + offs, tl.sum(y, axis=0), mask=offs < n)


def launch():
    x = torch.zeros(10)
    bad_reshape_kernel[(1,)](x, 10, BLOCK=16)


def test_launch():
    launch()


def test_launch_refused():  # a negative test: the error is what it expects (select with -k refused)
    import pytest

    with pytest.raises(Exception, match="power of 2"):
        launch()


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["fallback"]:  # a program that catches the error and takes another path
        try:
            launch()
        except Exception:
            print("fell back to torch")
    else:
        launch()
