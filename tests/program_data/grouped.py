"""Kernels that reach their tensors through tables of addresses (grouped GEMM, MoE), and one whose int64 input
holds large values that are not addresses. `python grouped.py` (test_program.py captures and replays it)."""
import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def grouped_scale_kernel(in_ptrs, out_ptrs, sizes, scale, DT: tl.constexpr, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    n = tl.load(sizes + g)
    src = tl.load(in_ptrs + g).to(tl.pointer_type(DT))
    dst = tl.load(out_ptrs + g).to(tl.pointer_type(DT))
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * scale, mask=offs < n)


@triton.jit
def mix_kernel(h_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    h = tl.load(h_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, (h ^ (h >> 17)) & 0xFFFF, mask=offs < n)


if __name__ == "__main__":
    sizes = [37, 100, 5]
    xs = [torch.randn(n, device=DEVICE) for n in sizes]
    outs = [torch.zeros(n, device=DEVICE) for n in sizes]
    base = torch.randn(300, device=DEVICE)
    xs.append(base[50:90])            # a view into a larger tensor: the entry's offset is kept
    outs.append(torch.zeros(40, device=DEVICE))
    sizes.append(40)
    in_ptrs = torch.tensor([x.data_ptr() for x in xs], device=DEVICE)
    out_ptrs = torch.tensor([o.data_ptr() for o in outs], device=DEVICE, dtype=torch.uint64)  # (vLLM's LoRA: uint64)
    grouped_scale_kernel[(len(xs),)](in_ptrs, out_ptrs, torch.tensor(sizes, device=DEVICE, dtype=torch.int32),
                                     2.0, DT=tl.float32, BLOCK=32)
    assert all(torch.equal(o, 2 * x) for o, x in zip(outs, xs))
    # large int64 values that are not addresses: left as they are
    h = torch.randint(1 << 40, 1 << 62, (50,), device=DEVICE)
    out = torch.empty_like(h)
    mix_kernel[(1,)](h, out, 50, BLOCK=64)
    assert torch.equal(out, (h ^ (h >> 17)) & 0xFFFF)
    d = torch.randn(70, device=DEVICE, dtype=torch.float64)   # an fp64 launch: replayed as fp64, fp64's tolerance
    d0 = d.clone()
    grouped_scale_kernel[(1,)](torch.tensor([d.data_ptr()], device=DEVICE), torch.tensor([d.data_ptr()], device=DEVICE),
                               torch.tensor([70], device=DEVICE, dtype=torch.int32), 3.0, DT=tl.float64, BLOCK=32)
    assert torch.equal(d, d0 * 3)
    # a launch that changes no byte (scale 1, in place): its replay compares every tensor but the tables
    same = torch.tensor([d.data_ptr()], device=DEVICE)
    grouped_scale_kernel[(1,)](same, same, torch.tensor([70], device=DEVICE, dtype=torch.int32), 1.0, DT=tl.float64,
                               BLOCK=16)  # (another signature than the launch above: captured too)
    print("grouped OK")
