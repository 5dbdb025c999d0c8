"""What a GPU stores for float-to-integer conversions out of range or of NaN (``.to(tl.int8)``, ``libdevice.llrint``,
``float2int_rn``), beside what Triton's interpreter gives: the facts behind interp/casts.py's wording (LLVM makes an
out-of-range ``fptosi`` poison; libdevice's conversions are PTX ``cvt``, defined). Usage: python tests/bench/cvt_probe.py
(on a GPU it runs itself once more under ``tritondbg interpret --no-sanitize`` -- Triton's interpreter with
tritondbg's libdevice -- and prints both columns)."""
import os
import subprocess
import sys

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

VALUES = [381.0, -381.0, 40000.0, -40000.0, 3e9, -3e9, 1e30, float("nan"), float("inf"), -0.5, 127.9]
OPS = ["to_int8", "to_uint8", "to_int16", "to_int32", "to_int64", "llrint", "float2int_rn", "to_uint16", "to_uint32",
       "to_uint64"]  # the unsigned 16-64-bit ones stored widened (uint64: its bits as int64), torch lacking those stores


@triton.jit
def probe(x_ptr, o8, ou8, o16, o32, o64, ollr, of2i, ou16, ou32, ou64, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(o8 + offs, x.to(tl.int8))
    tl.store(ou8 + offs, x.to(tl.uint8))
    tl.store(o16 + offs, x.to(tl.int16))
    tl.store(o32 + offs, x.to(tl.int32))
    tl.store(o64 + offs, x.to(tl.int64))
    tl.store(ollr + offs, libdevice.llrint(x))
    tl.store(of2i + offs, libdevice.float2int_rn(x))
    tl.store(ou16 + offs, x.to(tl.uint16).to(tl.int32))
    tl.store(ou32 + offs, x.to(tl.uint32).to(tl.int64))
    tl.store(ou64 + offs, x.to(tl.uint64).to(tl.int64, bitcast=True))


def run(device):
    n = 16
    x = torch.zeros(n, device=device)
    x[:len(VALUES)] = torch.tensor(VALUES)
    outs = [torch.zeros(n, dtype=dt, device=device) for dt in (torch.int8, torch.uint8, torch.int16, torch.int32,
                                                                torch.int64, torch.int64, torch.int32, torch.int32,
                                                                torch.int64, torch.int64)]
    probe[(1,)](x, *outs, BLOCK=n)
    return [[int(o[i]) for o in outs] for i in range(len(VALUES))]


if __name__ == "__main__":
    if os.environ.get("CVT_PROBE_CHILD") == "1":
        print(run("cuda"))  # (served on the CPU by tritondbg's program mode)
        sys.exit(0)
    gpu = run("cuda")
    p = subprocess.run([sys.executable, "-m", "tritondbg", "interpret", "--no-sanitize", "--", sys.executable, __file__],
                       env=dict(os.environ, CVT_PROBE_CHILD="1"), capture_output=True, text=True)
    interp = eval(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else None
    print(f"{torch.cuda.get_device_name()}, Triton {triton.__version__}; each cell GPU / interpreter")
    print("value | " + " | ".join(OPS))
    for i, v in enumerate(VALUES):
        cells = [f"{g}" + (f" / {interp[i][j]}" if interp else "") for j, g in enumerate(gpu[i])]
        print(f"{v:g} | " + " | ".join(cells))
    if interp is None:
        print("interpreter run failed:", p.stderr[-800:])
