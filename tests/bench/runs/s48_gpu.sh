#!/usr/bin/env bash
# Session 48's GPU calls (issue 18). Call 1 (--before, at 6873861): the fp8 decode race at M = 1 / 16 x 4096x4096
# in four fresh processes, then the perf gate on the row that flipped in session 44, twice.
# Call 2 (no argument): the same after the race's near-tie second timing (kernels/_race.py step 4), with bf16 rows
# and the gate three times; then the GPU tests of the races.
set -u
OUT=${OUT:-/tmp/s48}; mkdir -p "$OUT"
export PYTHONPATH=$PWD
tag=${1:-after}; tag=${tag#--}
python -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" | tee "$OUT/s48_env.txt"
if [ "$tag" != forced ]; then
shapes=fp8:1x4096x4096,fp8:16x4096x4096
[ "$tag" = after ] && shapes=$shapes,bf16:1x4096x4096,bf16:16x4096x4096
timeout 300 python tests/bench/fp8_decode_race.py --procs 4 --modes race --shapes $shapes 2>&1 | tee "$OUT/s48_fp8_race_$tag.txt"
echo "race rc=$?"
for i in 1 2 3; do
  [ "$tag" = before ] && [ $i = 3 ] && break
  timeout 120 python -m tritondbg check tests/bench/sweep_scenarios.py::fp8_gemm_sweep --case m1_n4096_k4096 \
    --gates perf --device cuda --baseline tests/bench/baseline_sweep_h200.json 2>&1 | tee "$OUT/s48_gate_${tag}_$i.txt" | tail -4
done
if [ "$tag" = after ]; then
  timeout 200 python -m pytest -q -p no:cacheprovider tests/gpu/test_kernels_gpu.py -k "race" 2>&1 | tee "$OUT/s48_gpu_tests.txt" | tail -4
fi
fi
# Call 3 (--forced): every race's margin at 10% (TRITONDBG_RACE_MARGIN), so every fp8 decode lead is a near-tie and
# the warm timing decides; then the gate on the flipping row under the same margin.
if [ "$tag" = forced ]; then
  TRITONDBG_RACE_MARGIN=0.1 timeout 200 python tests/bench/fp8_decode_race.py --procs 2 --modes race --shapes fp8:1x4096x4096,bf16:16x4096x4096 2>&1 | tee "$OUT/s48_forced_race.txt"
  TRITONDBG_RACE_MARGIN=0.1 timeout 120 python -m tritondbg check tests/bench/sweep_scenarios.py::fp8_gemm_sweep --case m1_n4096_k4096 \
    --gates perf --device cuda --baseline tests/bench/baseline_sweep_h200.json 2>&1 | tee "$OUT/s48_forced_gate.txt" | tail -4
fi
