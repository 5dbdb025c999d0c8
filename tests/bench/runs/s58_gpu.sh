#!/usr/bin/env bash
# Session 58's GPU calls (device tool; results beside this file as s58_*). Usage: bash tests/bench/runs/s58_gpu.sh STEP...
# steps: cvt (cvt_probe.py with the unsigned columns), streams (the autotune stream-hazard GPU test through pytest),
# prefill (the sweep's prefill rows, not re-measured since session 55's config change), steady (steady_state.py alone),
# decode (the sweep's decode rows).
# What ran (device tool, NVIDIA H100 80GB HBM3 -- no H200 came --, torch 2.11.0+cu130, Triton 3.6.0):
#   call 1 `bash tests/bench/runs/s58_gpu.sh cvt streams prefill` (189 s): s58_cvt_probe.txt (uint16 / uint32 /
#     uint64 saturate, negatives to 0, NaN 0, uint64's NaN 2**63: values.gpu_int follows), s58_streams_test.txt
#     (tests/gpu/test_autotune_streams_gpu.py through pytest -m gpu: 1 passed), s58_sweep_prefill.* (10 rows 1.53-1.98x
#     SDPA flash, median 1.79x, wrong 0).
#   call 2 `bash tests/bench/runs/s58_gpu.sh decode steady` (315 s): s58_sweep_decode.* (16 rows 0.99-1.14x SDPA
#     default, median 1.01x), s58_steady_alone.txt (steady_state.py alone: OK 87).
set -u
OUT=${OUT:-/tmp/s58}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
python -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
for s in "$@"; do echo "=== $s $(date +%T)"; case $s in
cvt) timeout 150 python tests/bench/cvt_probe.py 2>&1 | tee "$OUT/s58_cvt_probe.txt" ;;
streams) timeout 200 python -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_autotune_streams_gpu.py 2>&1 \
  | tail -8 | tee "$OUT/s58_streams_test.txt" ;;
prefill) timeout 330 python tests/bench/sweep_h200.py --only prefill --out "$OUT/s58_sweep_prefill.md" 2>&1 | tail -30 ;;
decode) timeout 330 python tests/bench/sweep_h200.py --only decode --out "$OUT/s58_sweep_decode.md" 2>&1 | tail -30 ;;
steady) timeout 300 python tests/gpu/steady_state.py 2>&1 | tail -5 | tee "$OUT/s58_steady_alone.txt" ;;
esac; done
