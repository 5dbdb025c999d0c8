#!/usr/bin/env bash
# Session 41's GPU call (run from the repo root; the wheels travel in build/wheels, `carry`): the GPU tests that
# skipped for want of liger_kernel / nvtx on the H200 machine, and program mode after this session's changes.
# The wheels (build/ is ignored by git; the GPU machine reaches no package index), fetched on the dev machine:
#   pip download --no-deps -d build/wheels liger-kernel==0.8.5
#   pip download --no-deps -d build/wheels --python-version 3.12 --only-binary=:all: nvtx
# then run this script through the device tool with carry=["build/wheels"].
set -u
export PYTHONPATH=$PWD
OUT=${OUT:-/tmp/s41}; mkdir -p "$OUT"
SITE=/tmp/s41_site
python -m pip install -q --no-deps --target "$SITE" build/wheels/*.whl > "$OUT/s41_pip.txt" 2>&1; echo "pip rc=$?" >> "$OUT/s41_pip.txt"
export PYTHONPATH=$PWD:$SITE
python -c "import liger_kernel, nvtx; print('liger', liger_kernel.__file__, 'nvtx', nvtx.__file__)" >> "$OUT/s41_pip.txt" 2>&1
cat > /tmp/s41_empty.py <<'PY'
import torch, triton, triton.language as tl

@triton.jit
def short_store(x, y, n_rows, n_cols, B: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, B)
    tl.store(y + r * n_cols + c, tl.load(x + r * n_cols + c, mask=c < n_cols) * 2, mask=c < n_cols - 1)

x = torch.randn(8, 100, device="cuda"); y = torch.zeros_like(x)
short_store[(8,)](x, y, 8, 100, B=128)
torch.cuda.synchronize()
print("nan in y", int(torch.isnan(y).sum()), "zeros in last column", int((y[:, -1] == 0).sum()))
PY
{
echo "== capture compiled on the GPU: the program's memory is not marked there (no NaN in y)"
rm -rf /tmp/s41_cap
python -m tritondbg capture --out /tmp/s41_cap -- python /tmp/s41_empty.py; echo "rc=$?"
python -m tritondbg run /tmp/s41_cap/short_store_0.py; echo "run rc=$?"
} > "$OUT/s41_capture.txt" 2>&1
timeout 420 python -m pytest -q -p no:cacheprovider tests/gpu/test_program_gpu.py tests/gpu/test_profile_gpu.py -rs \
  > "$OUT/s41_gpu_tests.txt" 2>&1; echo "pytest rc=$?" >> "$OUT/s41_gpu_tests.txt"
tail -5 "$OUT/s41_gpu_tests.txt"
