"""A kernel that fails to trace (a non-power-of-two shape) from a script and a pytest test, one whose device_assert
fails (``assert``): the tracebacks the program prints hold its own frames and Triton's, not tritondbg's."""
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


@triton.jit
def checked_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.device_assert(x < 5, "x must stay below 5")  # fails on lanes 5..9 (tritondbg's shim raises it)
    tl.store(x_ptr + offs, x, mask=offs < n)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["assert"]:
        checked_kernel[(1,)](torch.arange(10.0), 10, BLOCK=16)
    elif sys.argv[1:] == ["fallback"]:  # a program that catches the error and takes another path
        try:
            launch()
        except Exception:
            print("fell back to torch")
    else:
        launch()
