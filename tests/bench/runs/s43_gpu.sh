#!/usr/bin/env bash
# Session 43's GPU call (run from the repo root through the device tool with carry=["build/wheels"]):
# 1. the upstream findings of sessions 41-42 on the H200 (tests/bench/upstream_confirm.py: torchao's K-tail and
#    fp16 scales, gemlite's scales loads, the latter under compute-sanitizer with torch's caching allocator off);
# 2. what a masked load without other= reads on the GPU (tests/zoo/undefined_lanes.py::buggy: PTX and a run);
# 3. the GPU tests of the paths session 42 changed (program mode, profile's run folder, pins past the autotuner).
# The wheels (build/ is ignored by git; the GPU machine reaches no package index):
#   pip download --no-deps -d build/wheels torchao==0.18.0 tqdm liger-kernel==0.8.5
#   pip download --no-deps -d build/wheels --python-version 3.12 --only-binary=:all: nvtx
#   gemlite's source tree as build/wheels/src/gemlite
set -u
OUT=${OUT:-/tmp/s43}; mkdir -p "$OUT"
SITE=/tmp/s43_site
python -m pip install -q --no-deps --target "$SITE" build/wheels/*.whl > "$OUT/s43_pip.txt" 2>&1; echo "pip rc=$?" >> "$OUT/s43_pip.txt"
export PYTHONPATH=$PWD:$SITE:$PWD/build/wheels/src
python -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" >> "$OUT/s43_pip.txt" 2>&1
{
echo "== upstream_confirm.py (values)"; timeout 200 python tests/bench/upstream_confirm.py; echo "rc=$?"
echo "== compute-sanitizer memcheck, gemlite, caching allocator off"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 200 $CS --tool memcheck --print-limit 6 python tests/bench/upstream_confirm.py --only gemlite 2>&1 | grep -vE "^========= +(Host Frame|in )" | head -80; echo "rc=${PIPESTATUS[0]}"
echo "== compute-sanitizer memcheck, torchao K-tail, caching allocator off"
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 $CS --tool memcheck --print-limit 4 python tests/bench/upstream_confirm.py --only torchao 2>&1 | grep -vE "^========= +(Host Frame|in )" | head -60; echo "rc=${PIPESTATUS[0]}"
} > "$OUT/s43_upstream.txt" 2>&1
{
echo "== a masked load without other= on the H200 (Triton 3.6): what the compiled code puts in the masked lanes"
timeout 120 python -m tritondbg ir tests/zoo/undefined_lanes.py::buggy --stage ptx 2>&1 | grep -B2 "ld.global" | head -12
timeout 120 python -m tritondbg run tests/zoo/undefined_lanes.py::buggy --case tiny 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"
} > "$OUT/s43_undefined.txt" 2>&1
timeout 330 python -m pytest -q -p no:cacheprovider tests/gpu/test_program_gpu.py tests/gpu/test_profile_gpu.py -rs \
  > "$OUT/s43_gpu_tests.txt" 2>&1; echo "pytest rc=$?" >> "$OUT/s43_gpu_tests.txt"
tail -5 "$OUT/s43_gpu_tests.txt"
