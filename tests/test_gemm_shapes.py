"""gemm on the activations torch.matmul takes against a weight: a (..., K) @ b (K, N) -> (..., N), under the
interpreter; ranks it cannot take get one ValueError (a 0-D a used to raise an IndexError from the split-K
check)."""
import pytest
import torch

from tritondbg.kernels import gemm as G

pytestmark = pytest.mark.interpreter


@pytest.mark.parametrize("shape", [(2, 5, 40), (40,), (3, 2, 7, 40), (0, 3, 40)])
@pytest.mark.parametrize("activation", [None, "gelu"])
def test_leading_dims_as_matmul_takes_them(shape, activation):
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(*shape, generator=gen).half()
    b = torch.randn(40, 24, generator=gen).half()
    c = G.gemm(a, b, activation)
    assert c.shape == (*shape[:-1], 24) and c.dtype == a.dtype
    want = G.reference(a.reshape(-1, 40), b, activation).view(*shape[:-1], 24)
    torch.testing.assert_close(c.float(), want, atol=1e-2, rtol=1e-2)


def test_leading_dims_of_a_strided_activation():
    a = torch.randn(4, 6, 40).half().transpose(0, 1)  # (6, 4, 40), not contiguous: reshape copies
    b = torch.randn(40, 8).half()
    c = G.gemm(a, b)
    assert c.shape == (6, 4, 8)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("a, b", [((3, 40), (2, 40, 8)), ((), (40, 8)), ((2, 3, 40), (40,))])
def test_ranks_it_cannot_take_are_one_value_error(a, b):
    with pytest.raises(ValueError, match=r"a must be \(\.\.\., K\) and b 2-D"):
        G.gemm(torch.randn(a).half(), torch.randn(b).half())
