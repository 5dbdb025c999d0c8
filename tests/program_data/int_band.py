"""An int32 torch.empty output whose last columns the launch leaves unwritten on purpose (helper-64:
TransformerEngine's row_id_map, "r means useless values"): the program reads only the columns written, around the
band (program mode: left by design, no warning); the reproducer's replay failed it as never written (its captured
output holds the same mark) at a line of click, the CLI's framework, where it is a warning at the store now."""
import torch
import triton
import triton.language as tl


@triton.jit
def fill_ids(out_ptr, cols, used, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    tl.store(out_ptr + r * cols + c, r * 100 + c, mask=c < used)


out = torch.empty((5, 8), dtype=torch.int32, device="cuda")
fill_ids[(5,)](out, 8, 5, BLOCK=8)
print("OK", int(out[:, :5].sum()))
