"""triton.reinterpret of a "cuda" tensor (FBGEMM's fp8 GEMMs view uint8 storage as fp8 and check the view's device):
the view's device is the tensor's, cuda:0, and a kernel reads it through the view."""
import torch
import triton
import triton.language as tl


@triton.jit
def widen(x_ptr, y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, tl.load(x_ptr + o).to(tl.float32))


raw = torch.tensor([0x38, 0x40, 0xB8, 0x00] * 4, dtype=torch.uint8, device="cuda")  # e4m3: 1, 2, -1, 0
view = triton.reinterpret(raw, tl.float8e4nv)
assert view.device.type == "cuda", f"not supported on {view.device}"
y = torch.empty(16, device="cuda")
widen[(1,)](view, y, BLOCK=16)
print("device", view.device, "values", y[:4].tolist())
