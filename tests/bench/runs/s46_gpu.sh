#!/usr/bin/env bash
# Session 46's GPU call (from the repo root through the device tool, carry=["build/wheels"]; the wheels as in
# s41_gpu.sh, plus `pip download --no-deps -d build/wheels tritonparse` and, for tritonparse,
# `pip download --no-deps -d build/wheels --python-version 3.12 --only-binary=:all: zstandard`): the GPU tests of program mode after
# session 45's changes (uint64 pointer tables in tests/program_data/grouped.py, the CPU stand-in's tagging) with
# liger-kernel and tritonparse there, and the gate zoo (the agreement gate's dump subprocess now starts `python -P`).
set -u
OUT=${OUT:-/tmp/s46}; mkdir -p "$OUT"
SITE=/tmp/s46_site
python -m pip install -q --no-deps --target "$SITE" build/wheels/*.whl > "$OUT/s46_pip.txt" 2>&1; echo "pip rc=$?" >> "$OUT/s46_pip.txt"
export PYTHONPATH=$PWD:$SITE
python -c "import torch, triton, liger_kernel, tritonparse; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" >> "$OUT/s46_pip.txt" 2>&1
tail -2 "$OUT/s46_pip.txt"
timeout ${PROG_S:-380} python -m pytest -q -p no:cacheprovider -n 4 tests/gpu/test_program_gpu.py -rs \
  > "$OUT/s46_program_gpu.txt" 2>&1; echo "pytest rc=$?" >> "$OUT/s46_program_gpu.txt"
tail -8 "$OUT/s46_program_gpu.txt"
timeout ${ZOO_S:-150} python -m pytest -q -p no:cacheprovider -n 4 tests/gpu/test_check_gpu.py -k "zoo or tf32" -rs \
  > "$OUT/s46_check_gpu.txt" 2>&1; echo "pytest rc=$?" >> "$OUT/s46_check_gpu.txt"
tail -6 "$OUT/s46_check_gpu.txt"
