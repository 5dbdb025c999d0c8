"""A script written for a GPU, as most are: every tensor on "cuda" by name. Under `tritondbg interpret --` on a
machine without one they are made on the CPU. `python cuda_by_name.py tensors|triton_first|rng|thread|amp|alias|queries|timing|fallbacks [DIR]|host [bug]`."""
import sys
import warnings

if sys.argv[1] == "triton_first":   # triton imported before torch: the stand-in is in place all the same
    import triton  # noqa: F401

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (a * x.to(tl.float32) + y.to(tl.float32)).to(out_ptr.dtype.element_ty), mask=mask)


def axpy(a, x, y):
    out = torch.empty_like(x)
    n = x.numel()
    axpy_kernel[(triton.cdiv(n, 128),)](x, y, out, a, n, BLOCK=128)
    return out


def main(mode):
    if mode == "rng":                          # a CUDA-only part of torch: still an error, with tritondbg's line
        torch.cuda.CUDAGraph()
    if mode == "fallbacks":                    # the CUDA path's torch calls a CPU build lacks (helper-79)
        import os
        folder = sys.argv[2]
        w = torch.zeros(4, 4, device="cuda")
        a = torch.randn(4, 4, device="cuda", dtype=torch.bfloat16)
        torch.addmm(w, a, a, out_dtype=torch.float32, out=w)  # Liger's FLCE under autocast: CUDA only in torch
        err = float((w - a.float() @ a.float()).abs().max())
        torch.save({"w": torch.ones(3, device="cuda")}, os.path.join(folder, "mine.pt"))
        on_cuda = torch.load(os.path.join(folder, "mine.pt"), map_location="cuda")["w"]
        on_host = torch.load(os.path.join(folder, "mine.pt"), map_location="cpu")["w"]
        from_gpu = torch.load(os.path.join(folder, "gpu.pt"))["w"]  # saved on a GPU: its storages name cuda:0
        back = torch.load(os.path.join(folder, "mine.pt"))["w"]      # as on a GPU: back on cuda (helper-136)

        class Twice(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2

            @staticmethod
            def backward(ctx, g):
                assert g.is_cuda, "the incoming gradient of a cuda tensor said cpu"
                return g * 2

        p = torch.randn(3, device="cuda", requires_grad=True)
        Twice.apply(p).sum().backward()
        axpy_kernel[(1,)](on_cuda, on_cuda, on_cuda, 1.0, 3, BLOCK=128)
        axpy_kernel[(1,)](back, on_cuda, back, 1.0, 3, BLOCK=128)  # (a host tensor there: refused, exit 1)
        ids = torch.tensor([0, 1, 1, 3, 7, 7, 7], device="cuda")  # CUDA counts integers; the CPU refuses (h146)
        counts = torch.histc(ids, bins=8, min=0, max=7)
        print("fallbacks", err, str(w.device), str(on_cuda.device), str(on_host.device), str(from_gpu.device),
              str(back.device), str(p.grad.device), torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated(),
              ",".join(map(str, counts.tolist())), str(counts.dtype), str(counts.device))
        return
    if mode == "host":                         # a host tensor handed to a launch beside "cuda" ones
        x = torch.randn(300, device="cuda")
        out = torch.empty_like(x)
        pinned = torch.ones(300).pin_memory()  # a GPU reads pinned memory
        axpy_kernel[(3,)](x, pinned, out, 1.0, 300, BLOCK=128)
        axpy_kernel[(1,)](torch.empty(0), torch.empty(0), out, 1.0, 0, BLOCK=128)  # null pointers pass too
        y = torch.ones(300) if sys.argv[2:] == ["bug"] else torch.ones(300).cuda()  # forgot device="cuda"
        axpy_kernel[(3,)](x, y, out, 1.0, 300, BLOCK=128)
        print("host", float((out - x - 1).abs().max()))
        return
    if mode == "timing":                       # a benchmark's streams, events and memory figures
        x = torch.ones(300, device="cuda")
        side = torch.cuda.Stream()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.reset_peak_memory_stats()
        with torch.cuda.stream(side):
            start.record()
            axpy_kernel[(3,)](x, x, x, 1.0, 300, BLOCK=128)
            end.record()
        torch.cuda.current_stream().wait_stream(side)
        x.record_stream(side)
        end.synchronize()
        gen = torch.Generator(device="cuda").manual_seed(0)     # a test's seeded inputs
        seeded = torch.randn(3, generator=gen, device=x.device)
        torch.cuda.nvtx.range_push("step")                      # a model's profiling marks
        torch.cuda.nvtx.range_pop()
        print("timing", start.elapsed_time(end), end.elapsed_time(start), torch.cuda.max_memory_allocated(),
              x[:2].tolist(), torch.cuda.current_stream().cuda_stream, isinstance(gen, torch.Generator),
              str(seeded.device), "no GPU memory" in torch.cuda.memory_summary())
        return
    if mode == "thread":                       # function modes are per thread: each thread enters one
        import threading
        errors = []
        t = threading.Thread(target=lambda: errors.append(_try(lambda: torch.zeros(3, device="cuda"))))
        t.start()
        t.join()
        print(f"thread: {errors[0]}")
        return
    if mode == "amp":                          # mixed precision named for CUDA: half precision on the CPU too
        x, w = torch.randn(64, 64, device="cuda"), torch.randn(64, 64, device="cuda")
        with torch.autocast("cuda"):
            h = x @ w                          # float16 on a GPU (CUDA autocast's default dtype)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            b = x @ w
            # the state libraries ask for (attorch, torch.amp.custom_fwd): CUDA's, as on a GPU
            state = (torch.is_autocast_enabled("cuda"), torch.is_autocast_enabled(), torch.get_autocast_dtype("cuda"))
        with torch.autocast("cuda", dtype=torch.float32):  # no CPU counterpart: off there, one note
            f = x @ w
        out = axpy(1.0, h, h)                  # the kernel gets what the GPU run gives it
        # CUDA autocast's op lists, not the CPU's (helper-82: attorch's fp16 tests compared a float16 reference
        # with float32 kernels): float32 for layer_norm / softmax / sum / exp / pow, float16 for mv / einsum; an
        # explicit dtype kept; autocast("cpu") inside keeps the CPU's lists
        hh, v = h.detach(), torch.randn(64, device="cuda")
        with torch.autocast("cuda"):
            lists = [torch.nn.functional.layer_norm(hh, (64,)).dtype, torch.log_softmax(hh, -1).dtype,
                     torch.softmax(hh, -1).dtype, hh.sum().dtype, hh.exp().dtype, (hh ** 2).dtype,
                     torch.mv(x, v).dtype, torch.einsum("ij,jk->ik", x, w).dtype, hh.sum(dtype=torch.float16).dtype]
            with torch.autocast("cpu", dtype=torch.bfloat16):
                lists.append(torch.softmax(hh, -1).dtype)
        print("lists", *[str(d).replace("torch.", "") for d in lists])
        scaler = torch.amp.GradScaler("cuda")
        print("amp", h.dtype, b.dtype, out.dtype, "scaler enabled", scaler.is_enabled(), "state", *state, f.dtype,
              torch.is_autocast_enabled("cuda"))
        return
    if mode == "alias":                        # moves between the host and "cuda" copy, as on a GPU
        n = 300
        host = torch.randn(n)
        dev = host.cuda()
        axpy_kernel[(3,)](dev, dev, dev, 1.0, n, BLOCK=128)  # in place: dev = 2 * dev
        moved = torch.randn(n).to("cuda")
        c = torch.randn(n, device="cuda")
        snap = c.cpu()
        c.mul_(2)
        print("alias", dev.data_ptr() != host.data_ptr(), torch.equal(dev, 2 * host), moved.cuda() is moved,
              c.cuda() is c, c.to(c.device) is c, torch.equal(snap * 2, c), (c + 1).cuda().data_ptr() != c.data_ptr())
        return
    if mode == "queries":                      # what a "cuda" tensor says of its device to the program's code
        x = torch.randn(300, device="cuda")
        lin = torch.nn.Linear(4, 4, device="cuda")
        moved = torch.nn.Linear(4, 4).cuda()
        host = torch.randn(3)
        dev = triton.runtime.driver.active.get_active_torch_device()  # cuda:0 here too (the tutorials' DEVICE)
        mine = torch.empty(3, device=dev)
        back = x.to(torch.device("cpu"))
        back.add_(1000.0)                      # a copy on the host: x is left alone
        assert x.is_cuda, "expected a CUDA tensor"
        axpy_kernel[(3,)](x, x, x, 1.0, 300, BLOCK=128)
        print("queries", x.is_cuda, x.is_cpu, str(x.device), x.device.type, x.get_device(), str((x[:2] + 1).device),
              lin.weight.is_cuda, str(moved.bias.device), str(torch.empty(2, device=x.device).device),
              host.is_cuda, str(back.device), bool((x < 500).all()), mine.device == dev,
              torch.allclose(x, x.clone()))
        import io
        buf = io.BytesIO()
        torch.save(torch.randn(3), buf)
        buf.seek(0)
        loaded = torch.load(buf, map_location="cpu")   # a host tensor, on a GPU too
        moved.cpu()                                    # its parameters back on the host
        opt = torch.optim.AdamW(lin.parameters())
        lin(x[:8].reshape(2, 4)).sum().backward()
        opt.step()                                     # the optimizer's state follows its parameters
        compiled = torch.compile(lambda a: a * 2 + 1)(torch.randn(4))  # dynamo traces the modes: no failure
        print("more", str(loaded.device), str(moved.weight.device), moved.weight.is_cpu,
              str(opt.state[lin.weight]["exp_avg"].device), compiled.shape[0])
        return
    g = torch.ones(2, requires_grad=True).sum()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        float(g)                               # torch warns from C: which line does the warning name?
    print("warned at", [f"{w.filename.rsplit('/', 1)[-1]}:{w.lineno}" for w in seen])
    n = 1000
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, dtype=torch.bfloat16).cuda()
    z = torch.linspace(-1, 1, n).to("cuda:0").to(torch.bfloat16)
    w = torch.ones(n, dtype=torch.bfloat16, pin_memory=True).to(torch.device("cuda"), non_blocking=True)
    v = torch.zeros(n, dtype=torch.bfloat16).pin_memory().to(0)
    torch.set_default_device("cuda")
    u = torch.full((n,), 2.0, dtype=torch.bfloat16)
    torch.set_default_device("cpu")
    out = axpy(2.0, x, axpy(1.0, y, axpy(0.5, z, axpy(1.0, w, axpy(1.0, v, u)))))
    ref = 2.0 * x.float() + (y.float() + (0.5 * z.float() + (w.float() + (v.float() + u.float()))))
    torch.cuda.synchronize()
    print("devices", sorted({str(t.device) for t in (x, y, z, w, v, u, out)}))
    print("max error", float((out.float() - ref).abs().max()))


def _try(fn):
    try:
        fn()
        return "made"
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {str(exc)[:60]}"


if __name__ == "__main__":
    main(sys.argv[1])
