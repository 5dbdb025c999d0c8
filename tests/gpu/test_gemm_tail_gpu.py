"""gemm_tma_kernel's split tail compiled on the GPU (issue 18, mid M): 1024 x 5120 tiles of 128x256 = 160 tiles,
on an H200's 132 SMs a 28-tile last round split 4 ways along K; at small M (127 x 4096: 16 tiles, fewer than the
SMs) every tile is split (plain split-K, 8 ways). Correct (with GELU applied once), the same bits
twice, every arrival counter back at 0, and gemm's own pick agrees. A subprocess: compiled mode needs a process
without TRITON_INTERPRET. Skipped without CUDA; run on the GPU machine with `pytest -m gpu`.
"""
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

CODE = r'''
import torch, triton
from tritondbg.kernels import gemm as G
dev = torch.device("cuda", torch.cuda.current_device())
sms = G._num_sms(dev)
M, N, K = {shape}
g = torch.Generator(device=dev).manual_seed(0)
a = torch.randn(M, K, device=dev, generator=g).to(torch.bfloat16)
b = (torch.randn(K, N, device=dev, generator=g) / K ** 0.5).to(torch.bfloat16)
cfg = G.TMA_CONFIGS[0]
bm, bn = cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"]
tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
tail = tiles % sms
ways = min(sms // max(tail, 1), G.TAIL_SPLIT_MAX, triton.cdiv(K, cfg.kwargs["BLOCK_K"]))
split = tail > 0 and ways > 1
G._ensure_allocator()
ws, cnt = G._tail_buffers(dev, sms)
for act in (None, "gelu"):
    ref = G.reference(a, b, act)
    ws.fill_(float("nan"))
    outs = []
    for _ in range(2):
        c = torch.empty(M, N, device=dev, dtype=torch.bfloat16)
        G.gemm_tma_kernel.fn[(G.tma_programs(M, N, K, cfg.kwargs, sms, G.TAIL_SPLIT_MAX),)](a, b, c, ws, cnt, M, N, K, a.stride(0), b.stride(0),
            A_TRANS=False, B_TRANS=False, ACTIVATION=act, NUM_SMS=sms, TAIL_SPLIT=G.TAIL_SPLIT_MAX,
            num_warps=cfg.num_warps, num_stages=cfg.num_stages, **cfg.kwargs)
        outs.append(c)
    torch.cuda.synchronize()
    err = ((outs[0].float() - ref).abs().max() / ref.abs().max()).item()
    assert err < 1e-2, (act, err)
    assert torch.equal(outs[0], outs[1]), act
    assert not bool(cnt.any()), act
    used = int((~ws.isnan()).sum())
    assert used == (tail * ways * bm * bn if split else 0), (used, tail, ways)
    mine = G.gemm_tiled(a, b, act)
    assert ((mine.float() - ref).abs().max() / ref.abs().max()).item() < 1e-2, act
print("OK", dict(sms=sms, tiles=tiles, tail=tail, ways=ways if split else 1))
'''


@pytest.mark.parametrize("shape", ["1024, 5120, 2048", "127, 4096, 4096", "200, 1024, 3000"])
def test_split_tail_on_the_gpu(cli_env, shape):
    p = subprocess.run([sys.executable, "-c", CODE.replace("{shape}", shape)], env=cli_env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0 and "OK" in p.stdout, p.stdout[-2000:] + p.stderr[-3000:]
