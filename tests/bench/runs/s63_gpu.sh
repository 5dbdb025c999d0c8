#!/usr/bin/env bash
# Session 63's GPU calls (device tool): issue 18's sweep parts on the current kernels, on an H200 if one is lent
# (the last H200 table is sessions 34/35's; sessions 58-61 ran parts on H100s only).
# Not run yet: no GPU was lent in sessions 63 (16 tries), 64 (13 tries, 19:40-20:50, the last "no new device machine is lent at present") and 65 (5 tries, 22:39-23:51, H200 and H100: "no device machine could be started right now"); the attention step's limit is 420 s
# (prefill and decode in one call).
# Usage: bash tests/bench/runs/s63_gpu.sh STEP...   steps: attn (prefill, decode), fp8, gemm_bf16, gemm_fp16, gemm_nk
set -u
OUT=${OUT:-/tmp/s63}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
for s in "$@"; do echo "=== $s $(date +%T)"; case $s in
attn) PYTHONPATH=$PWD timeout 420 python tests/bench/sweep_h200.py --only prefill,decode --out "$OUT/s63_sweep_attn.md" 2>&1 | tail -30 ;;
fp8) PYTHONPATH=$PWD timeout 150 python tests/bench/sweep_h200.py --only fp8 --out "$OUT/s63_sweep_fp8.md" 2>&1 | tail -20 ;;
gemm_bf16|gemm_fp16) d=bfloat16; [ $s = gemm_fp16 ] && d=float16
  PYTHONPATH=$PWD timeout 330 python tests/bench/sweep_h200.py --only gemm --dtypes $d --out "$OUT/s63_sweep_$s.md" 2>&1 | tail -20 ;;
gemm_nk) PYTHONPATH=$PWD timeout 200 python tests/bench/sweep_h200.py --only gemm --b-layout nk --dtypes bfloat16 --out "$OUT/s63_sweep_gemm_nk.md" 2>&1 | tail -20 ;;
esac; done
echo "=== end $(date +%T)"
