#!/usr/bin/env bash
# Session 50's GPU calls (issue 18): the Gluon decode-attention kernel's first run (numerics, then timing beside
# attention_decode and SDPA default).
set -u
OUT=${OUT:-/tmp/s50}; mkdir -p "$OUT"
export PYTHONPATH=$PWD
tag=${1:-first}; tag=${tag#--}
python -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" | tee "$OUT/s50_env.txt"
shift || true
timeout 420 python tests/bench/gluon_attn_decode.py --out "$OUT/s50_gluon_attn_decode_$tag.json" "$@" 2>&1 | tee "$OUT/s50_gluon_attn_decode_$tag.txt"
echo "bench rc=$?"
