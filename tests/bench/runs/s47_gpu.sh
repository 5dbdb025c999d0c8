#!/usr/bin/env bash
# Session 47's GPU calls. Call 1 (no argument): the fp8 decode race at M = 1 / 16 in four fresh processes each
# (why the gate's 1x4096x4096 row flips). Call 2 (--timers): the decode race timed after a dirty (do_bench's) or a
# clean (read-only) flush, against the tl kernel alone, served kernels timed three ways (fp8_decode_race.py).
set -u
OUT=${OUT:-/tmp/s47}; mkdir -p "$OUT"
export PYTHONPATH=$PWD
python -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" | tee "$OUT/s47_env.txt"
if [ "${1:-}" = "--timers" ]; then
  timeout 570 python tests/bench/fp8_decode_race.py --procs 2 2>&1 | tee "$OUT/s47_timers.txt"
  echo "timers rc=$?"
  exit 0
fi
timeout 420 python tests/bench/fp8_decode_race.py --procs 4 --modes race \
  --shapes fp8:1x4096x4096,fp8:16x4096x4096,fp8:1x8192x8192 2>&1 | tee "$OUT/s47_fp8_race.txt"
echo "race rc=$?"
