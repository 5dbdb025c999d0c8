#!/usr/bin/env bash
# Session 58's GPU calls (device tool; results beside this file as s58_*). Usage: bash tests/bench/runs/s58_gpu.sh STEP...
# steps: cvt (cvt_probe.py with the unsigned columns), streams (the autotune stream-hazard GPU test through pytest),
# prefill (the sweep's prefill rows, not re-measured since session 55's config change), steady (steady_state.py alone),
# decode (the sweep's decode rows).
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
