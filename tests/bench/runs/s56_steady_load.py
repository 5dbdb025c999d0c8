"""Session 56: steady_state.py's one failure under load (attention B2 H8/4 N333 D128 causal bf16 bnhd, sessions 53 and
56: 4 pytest workers on an H100) reproduced or not: N copies of steady_state.py at once beside M hog processes,
each printing its BAD lines and the prefill autotuner's picks. Usage: python s56_steady_load.py [copies] [hogs]"""
import os
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CHILD = r'''
import sys, runpy
sys.argv = ["steady_state.py"]
import tests.gpu.steady_state as S
rc = S.main()
from tritondbg.kernels import attention as A
for key, cfg in getattr(A._attn_fwd_kernel, "cache", {}).items():
    print("pick", key, cfg, flush=True)
sys.exit(rc)
'''
HOG = r'''
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.empty_like(a)
end = time.time() + float(__import__("sys").argv[1])
while time.time() < end:
    for i in range(20):
        b = a @ a.T if i % 2 else b.copy_(a)
    torch.cuda.synchronize()
'''


def main():
    copies, hogs = (int(a) for a in (sys.argv[1:] + ["3", "3"])[:2])
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    hp = [subprocess.Popen([sys.executable, "-c", HOG, "200"], env=env) for _ in range(hogs)]
    time.sleep(5)
    ps = [subprocess.Popen([sys.executable, "-c", CHILD], env=env, cwd=REPO, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True) for _ in range(copies)]
    for i, p in enumerate(ps):
        out, _ = p.communicate(timeout=600)
        lines = out.splitlines()
        keep = [ln for ln in lines if not ln.startswith("ok ")]
        print(f"--- copy {i}: rc={p.returncode}, {len(lines) - len(keep)} ok lines")
        print("\n".join(keep[-30:]), flush=True)
    for h in hp:
        h.kill()


if __name__ == "__main__":
    main()
