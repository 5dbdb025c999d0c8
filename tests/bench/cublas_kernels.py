import torch
from torch.profiler import profile, ProfilerActivity
dev = "cuda"
cases = []
for (M, N, K, nk) in ((127, 4096, 4096, False), (127, 4096, 4096, True), (127, 11008, 4096, True), (1024, 5120, 13824, False),
                      (1024, 11008, 4096, True), (4096, 4096, 4096, False)):
    a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
    b = torch.randn(N, K, device=dev, dtype=torch.bfloat16).t() if nk else torch.randn(K, N, device=dev, dtype=torch.bfloat16)
    cases.append((f"bf16 {M}x{N}x{K} {'nk' if nk else 'kn'}", lambda a=a, b=b: a @ b))
for (M, N, K) in ((127, 11008, 4096), (8192, 8192, 8192)):
    a = torch.randn(M, K, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(N, K, device=dev).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=dev)
    cases.append((f"fp8 {M}x{N}x{K}", lambda a=a, b=b, one=one: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)))
for name, fn in cases:
    for _ in range(3): fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn(); torch.cuda.synchronize()
    ks = [(e.name, e.device_time) for e in p.events() if e.device_type.name == "CUDA"]
    print(name, "|", " ; ".join(f"{n[:150]} ({t:.1f} us)" for n, t in ks))
