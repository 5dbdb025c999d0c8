"""A kernel that takes a host-side TensorDescriptor (test_program.py captures and replays it)."""
import torch, triton, triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

@triton.jit
def td_copy_kernel(in_desc, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    x = in_desc.load([pid * BM, 0])
    offs = (pid * BM + tl.arange(0, BM))[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + offs, x * 2)

if __name__ == "__main__":
    x = torch.arange(32 * 16, dtype=torch.float32).reshape(32, 16)
    y = torch.empty_like(x)
    desc = TensorDescriptor.from_tensor(x, [8, 16])
    td_copy_kernel[(4,)](desc, y, BM=8, BN=16)
    assert torch.equal(y, 2 * x), "wrong"
    print("ok")
