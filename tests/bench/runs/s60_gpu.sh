#!/usr/bin/env bash
# Session 60's GPU calls (device tool, carry=["build/wheels"]). Usage: bash tests/bench/runs/s60_gpu.sh STEP...
# steps: prefill / decode / fp8 (issue 18's sweep parts on the current kernels: the H200 table's attention rows
# were last run there in session 34, before session 55 took three prefill configs off the list), gemm (M = 64 and
# 127, the squares and GELU rows, bf16 and fp16: the gemm misses), tests (the GPU test files of what changed since
# session 56: profile / program / autotune streams, one worker: no timing under load).
# What ran (device tool; every start failed from 06:10 to 07:37, then the 08:08 call got an NVIDIA H100 80GB HBM3, torch
# 2.11.0+cu130, Triton 3.6.0):
#   `bash tests/bench/runs/s60_gpu.sh prefill decode` (262 s): s60_sweep_prefill.* (10 rows 1.52-1.96x SDPA flash,
#     median 1.78x, wrong 0; cuDNN 0.97-1.00x), s60_sweep_decode.* (16 rows 0.99-1.11x SDPA default, median 1.00x,
#     worst B1 H32/8 KV32768 0.99x, wrong 0): session 58's H100 figures again on this session's code.
#   Not run (385 s of device time left): fp8, gemm, tests.
set -u
OUT=${OUT:-/tmp/s60}; mkdir -p "$OUT"
SITE=/tmp/s60_site
export PYTHONUNBUFFERED=1
python -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())"
for s in "$@"; do echo "=== $s $(date +%T)"; case $s in
prefill|decode|fp8) PYTHONPATH=$PWD timeout 330 python tests/bench/sweep_h200.py --only $s --out "$OUT/s60_sweep_$s.md" 2>&1 | tail -25 ;;
gemm) PYTHONPATH=$PWD timeout 400 python tests/bench/sweep_h200.py --only gemm --gemm-m 64,127 --out "$OUT/s60_sweep_gemm.md" 2>&1 | tail -40 ;;
tests) python -m pip install -q --no-deps --target "$SITE" build/wheels/*.whl > /dev/null 2>&1
  PYTHONPATH=$PWD:$SITE:$PWD/tests/bench/runs timeout 420 python -m pytest -q -p no:cacheprovider -rs --durations=8 \
    -m gpu --timeout=300 tests/gpu/test_profile_gpu.py tests/gpu/test_program_gpu.py tests/gpu/test_autotune_streams_gpu.py \
    2>&1 | tail -40 | tee "$OUT/s60_gpu_tests.txt" ;;
esac; done
echo "=== end $(date +%T)"
