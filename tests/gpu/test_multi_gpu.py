"""The bundled wrappers on tensors of another GPU than the current one (kernels/_launch.py ``device_guard``).

Triton launches on the current device; torch ops, and the bundled wrappers, on their tensors' device. Here GPU 0
stays current while every tensor lives on GPU 1: each wrapper is called three times (its full path, then its
cached launcher twice), then once more with GPU 1 current. Every result must have the bits of the others, match
the torch reference, land on GPU 1, leave GPU 0 current, and every kernel the profiler sees must have run on
GPU 1. Then the same calls on GPU 0's tensors (a second plan beside the first). Needs two GPUs (the device tool's
nvidia-h200-x2); skipped otherwise. ``MGPU_ONLY=softmax,gemm`` runs a subset (the comparison run on the old
kernels, one process per wrapper: a launch on the wrong device may kill the process).
"""
import pytest
from _gpu_code import run_gpu_code

pytestmark = pytest.mark.gpu

CODE = r'''
import os
import torch
from torch.autograd import DeviceType
if torch.cuda.device_count() < 2:
    print("SKIP: needs two GPUs")
    raise SystemExit(0)
from tritondbg.kernels import add as ADD, attention as A, fp8_gemm as F8, gemm as G, layernorm as LN, softmax as SM

only = [s for s in os.environ.get("MGPU_ONLY", "").split(",") if s]
bad, ran = [], []
bf, h, f8 = torch.bfloat16, torch.float16, torch.float8_e4m3fn


def case(name, fn, ref, make, tol=2e-2):
    if only and name.split()[0] not in only:
        return
    ran.append(name)
    for dev in (1, 0):
        torch.cuda.set_device(0)
        torch.manual_seed(0)
        args = make(torch.device("cuda", dev))
        try:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                outs = [fn(*args) for _ in range(3)]
                torch.cuda.synchronize(dev)
            on = sorted({e.device_index for e in prof.events() if e.device_type == DeviceType.CUDA})
            current = torch.cuda.current_device()
            with torch.cuda.device(dev):
                outs.append(fn(*args))
            torch.cuda.synchronize(dev)
            want = ref(*args).float()
            err = max((o.float() - want).abs().max().item() for o in outs) / max(want.abs().max().item(), 1e-6)
            same = all(torch.equal(o, outs[0]) for o in outs)
            where = sorted({str(o.device) for o in outs})
        except Exception as e:  # noqa: BLE001 - a failure is a row
            print(f"{name} on cuda:{dev}: {type(e).__name__}: {str(e)[:200]}")
            bad.append(name)
            continue
        ok = same and err < tol and where == [f"cuda:{dev}"] and current == 0 and on == [dev]
        print(f"{name} on cuda:{dev} (cuda:0 current): {'ok' if ok else 'WRONG'}: rel err {err:.2g}, "
              f"same bits {same}, outputs on {where}, current after {current}, kernels ran on GPUs {on}")
        if not ok:
            bad.append(f"{name} cuda:{dev}")


def randn(*shape, dtype=bf, scale=1.0):
    return lambda d: (torch.randn(*shape, device=d) * scale).to(dtype)


def mk(*makers):
    return lambda d: tuple(m(d) for m in makers)


case("add", ADD.add, lambda x, y: x.float() + y.float(), mk(randn(100000), randn(100000)))
case("softmax 64x1000", SM.softmax, lambda x: torch.softmax(x.float(), -1), mk(randn(64, 1000, dtype=h)))
case("softmax 8x32768", SM.softmax, lambda x: torch.softmax(x.float(), -1), mk(randn(8, 32768)))
for n in (1000, 11008):
    case(f"layernorm 64x{n}", lambda x, w, b: LN.layernorm(x, w, b, 1e-5),
         lambda x, w, b: torch.nn.functional.layer_norm(x.float(), (x.shape[1],), w.float(), b.float(), 1e-5),
         mk(randn(64, n), randn(n), randn(n)))
for M, N, K in ((1, 4096, 4096), (17, 4096, 11008), (127, 4096, 4096), (1000, 1000, 1000)):
    case(f"gemm {M}x{N}x{K}", G.gemm, lambda a, b: a.float() @ b.float(),
         mk(randn(M, K), randn(K, N, scale=K ** -0.5)))
case("gemm 300x256x512 gelu", lambda a, b: G.gemm(a, b, "gelu"),
     lambda a, b: torch.nn.functional.gelu(a.float() @ b.float(), approximate="tanh"),
     mk(randn(300, 512, dtype=h), randn(512, 256, dtype=h, scale=512 ** -0.5)))
for M, N, K in ((1, 8192, 8192), (2048, 4096, 4096)):
    case(f"fp8_gemm {M}x{N}x{K}", lambda a, b, sa, sb: F8.fp8_gemm(a, b, sa, sb),
         lambda a, b, sa, sb: (a.float() @ b.float()) * sa * sb,
         lambda d: (randn(M, K, dtype=f8, scale=0.25)(d), randn(N, K, dtype=f8, scale=0.25)(d).t(),
                    torch.tensor(0.5, device=d), torch.tensor(0.25, device=d)))
case("attention B1 H8 N1000 D64 causal", lambda q, k, v: A.attention(q, k, v, causal=True),
     lambda q, k, v: A.reference(q, k, v, causal=True), mk(*(randn(1, 8, 1000, 64),) * 3))
case("attention_decode B2 H32/8 KV4096", A.attention_decode, A.reference_decode,
     mk(randn(2, 32, 128), randn(2, 8, 4096, 128), randn(2, 8, 4096, 128)))
if not ran:  # MGPU_ONLY named no wrapper: nothing was checked, which is not a pass
    bad.append(f"no case ran (MGPU_ONLY={os.environ.get('MGPU_ONLY')!r})")
print("\n".join(bad) if bad else "ALL OK")
'''


def test_wrappers_launch_on_their_tensors_gpu():
    run_gpu_code(CODE, timeout=900)
