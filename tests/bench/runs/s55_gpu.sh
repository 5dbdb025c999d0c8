#!/usr/bin/env bash
# Session 55's first GPU call: session 53's open question (the bundled attention's wrong outputs under load),
# then the two GPU scripts that failed under 8 pytest workers, alone.
# Usage (device tool): bash tests/bench/runs/s55_gpu.sh [hog seconds]
set -u
OUT=${OUT:-/tmp/s55}; mkdir -p "$OUT"
export PYTHONPATH=$PWD
python -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" | tee "$OUT/s55_env.txt"
timeout 400 python tests/bench/contended_attention.py --seconds "${1:-180}" 2>&1 | tee "$OUT/s55_contended.txt" | tail -40
echo "contended rc=${PIPESTATUS[0]}" | tee -a "$OUT/s55_contended.txt"
for s in steady_state prefill_configs; do
  timeout 90 python tests/gpu/$s.py > "$OUT/s55_$s.txt" 2>&1; echo "$s rc=$?" | tee -a "$OUT/s55_$s.txt"; tail -5 "$OUT/s55_$s.txt"
done
# What ran (2026-12-06, device tool, NVIDIA H100 80GB HBM3, torch 2.11.0+cu130, Triton 3.6.0; 8 earlier tries got no machine):
#   call 1 (`bash tests/bench/runs/s55_gpu.sh 120`): s55_contended.txt: 6 hogs, 1 round (compiles), 6 entries wrong:
#     the WARP_SPEC 128x64 s3 / s4 configs at B1 H4 N512 and B4 H32 N4096, 128x128 s2 and the autotuned attention()
#     at B4 H32 N4096; alone, 20 rounds: 128x64 s3 / s4 wrong 20 of 20 at B4 H32 N4096 D128 (right at B1 H4 N512).
#     s55_steady_state.txt: every line ok, cut at its 90 s; s55_prefill_configs.txt: OK 55.
#   Then the three 4-warp WARP_SPEC configs were taken out of _PREFILL_CONFIGS (kernels/attention.py) and:
#   call 2 (`python tests/bench/contended_attention.py --hogs 6 --seconds 80 --rounds 6`): 0 wrong (1 round loaded,
#     6 alone; s55_contended_after.txt); call 3 (`--seconds 130 --rounds 20`): 0 wrong in 20 rounds loaded and 20
#     alone, 45 entries each (s55_contended_after2.txt); call 4: attention() B4 H32 N4096 D128 bf16 1.840 ms = 1.71x
#     SDPA flash (causal 0.992 ms, 1.76x), the Gluon kernel's pick; the tl path alone 2.248 / 1.217 ms
#     (s55_attention_after.txt).
#   call 5 (`timeout 140 python -m tritondbg run attention --case all`, s55_run_attention_all.txt, its last 25
#     lines): 26 of 36 cases passed before the 140 s timeout ended the run (none failed), the B4 H32 N4096 D128 case
#     with the autotuned 128x128 w8 s3 (no WARP_SPEC) and the Gluon kernel raced, max abs err 0.000717.
