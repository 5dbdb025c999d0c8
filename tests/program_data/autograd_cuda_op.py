"""A custom op registered for CUDA and AutogradCUDA only (FBGEMM's sll ops): under interpret -- CMD both serve the
CPU, where the program's "cuda" tensors are, so torch does not warn that no autograd kernel was registered."""
import warnings
import torch

lib = torch.library.Library("tdbg_ag", "DEF")
lib.define("twice(Tensor x) -> Tensor")


def twice_cuda(x):
    return x * 2


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch._C._AutoDispatchBelowAutograd():
            return torch.ops.tdbg_ag.twice(x)

    @staticmethod
    def backward(ctx, g):
        return g * 2


lib.impl("twice", twice_cuda, "CUDA")
lib.impl("twice", Twice.apply, "AutogradCUDA")

x = torch.ones(4, device="cuda", requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y = torch.ops.tdbg_ag.twice(x)
    y.sum().backward()
print("grad", x.grad.tolist(), "warned", any("autograd kernel was not registered" in str(w.message) for w in caught))
