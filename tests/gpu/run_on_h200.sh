#!/usr/bin/env bash
# GPU evidence in one go, on a CUDA machine with torch and triton installed (the H200 of the device tool).
# Run records and traces go to /tmp; the JSON results worth keeping go to $OUT (default ./gpu-out). Each step is time-boxed so one slow step cannot eat the others.
# Usage: bash tests/gpu/run_on_h200.sh [step ...]   steps: install kernels ir profile ncu overhead zoo check check_some recheck variants bench sweep tests
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITONDBG_OUT=/tmp/tdbg-traces; W=/tmp/tdbg-work; mkdir -p $W
steps=${*:-install kernels ir profile ncu overhead check bench}
log() { echo "=== $1 ($(date +%T))"; }
for s in $steps; do case $s in
install) log install
  if ls .whl/*.whl >/dev/null 2>&1; then python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
      --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site; fi
  python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . 2>&1 | tail -2
  python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" ;;
kernels) log kernels   # issue 2: every bundled kernel, every case, compiled on the GPU vs its reference
  for k in add layernorm softmax attention gemm fp8_gemm; do
    # attention autotunes five GPU cases (B=8 KV=32k among them): 100 s was not enough on 2026-11-29
    t=100; [ $k = attention ] && t=300
    timeout $t python3 -m tritondbg run $k --case all --json > "$W/run_$k.json" 2> "$W/run_$k.err"
    python3 -c "import json,sys; r=json.load(open('$W/run_$k.json')); print('$k', sum(x['status']=='pass' for x in r['results']), '/', len(r['results']), [(x['case'],x['dtype'],x['message']) for x in r['results'] if x['status']!='pass'])" || tail -3 "$W/run_$k.err"
  done ;;
ir) log ir   # issue 4: default arch picks the local GPU on Triton 3.6
  timeout 120 python3 -m tritondbg ir gemm --stage sass --stats 2>&1 | head -40
  timeout 60 python3 -m tritondbg ir gemm --stage ptx --stats --json > "$W/ir_gemm.json" 2>&1; head -c 600 "$W/ir_gemm.json" ;;
profile) log profile   # issue 5
  timeout 180 python3 -m tritondbg profile --all --json > "$OUT/profile.json" 2> "$W/profile.err"; tail -5 "$W/profile.err"
  python3 - "$OUT/profile.json" <<'PY'
import json, sys, glob
d = json.load(open(sys.argv[1])); print(json.dumps(d.get("summary", d), indent=0)[:3000])
PY
  f=$(ls /tmp/tdbg-traces/*/add-*.pt.trace.json 2>/dev/null | head -1)
  [ -n "$f" ] && python3 -c "import json; t=json.load(open('$f')); k=[e for e in t['traceEvents'] if e.get('cat')=='kernel']; print(len(k), 'kernel events; first args:', k[0]['args'] if k else None)" ;;
ncu) log ncu
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  timeout 100 $NCU --nvtx --nvtx-include "regex:tritondbg@add:h200_64M.*/" \
    python3 -m tritondbg profile add --case h200_64M --dtype float32 --config BLOCK=4096 --iters 2 --warmup 0 --peak spec 2>&1 | grep -E "add_kernel|==PROF==|No kernels" | head -12 ;;
overhead) log overhead
  # part 2 (per-launch cost) is quick; part 1 runs four `tritondbg profile` subprocesses that autotune (>55 s)
  timeout 120 python3 tests/bench/profile_overhead.py --part 2 2>&1 | tail -20
  timeout ${OVERHEAD1_TIMEOUT:-300} python3 tests/bench/profile_overhead.py --part 1 --repeats 3 2>&1 | tail -20 ;;
check_some) log "check ${CHECK_KERNELS:-}"   # issue 6: the GPU gates on some kernels (one line per finished item)
  timeout ${CHECK_TIMEOUT:-250} python3 -m tritondbg check ${CHECK_KERNELS:-layernorm softmax} --gates correctness,perf,agreement,determinism --device cuda --baseline "$OUT/baseline.json" --update-baseline --json "$OUT/check_some.json" > "$OUT/check_some.txt" 2>&1; echo "exit $?"; grep -vE "^\s*$" "$OUT/check_some.txt" | cut -c1-120 | tail -45; python3 tests/gpu/perf_rows.py "$OUT/check_some.json" ;;
zoo|check) log zoo   # issue 6: the GPU gates' planted bugs must fail them, their twins pass
  timeout 120 python3 -m tritondbg check tests/zoo/slow_copy.py::buggy tests/zoo/slow_copy.py::twin tests/zoo/tf32_dot.py::buggy tests/zoo/tf32_dot.py::twin --gates perf,agreement --device cuda > "$OUT/check_zoo.txt" 2>&1; echo "exit $?"; grep -E "FAIL|pass" "$OUT/check_zoo.txt" | cut -c1-110
  [ $s = zoo ] && continue; log check
  # every bundled kernel, every GPU gate: autotuning every GPU-size case (attention decode B=32 KV=32k among
  # them) took more than 180 s on 2026-11-29
  timeout 420 python3 -m tritondbg check --all --gates correctness,perf,agreement,determinism --device cuda --baseline "$OUT/baseline.json" --update-baseline --json "$OUT/check_gpu.json" --junit "$OUT/check_gpu.xml" > "$OUT/check_all.txt" 2>&1; echo "exit $?"; tail -40 "$OUT/check_all.txt" | cut -c1-120 ;;
recheck) log "recheck ${CHECK_KERNELS:-}"   # issue 6: perf gate again, against the baseline check_some just recorded
  timeout ${RECHECK_TIMEOUT:-150} python3 -m tritondbg check ${CHECK_KERNELS:-layernorm softmax} --gates perf --device cuda --baseline "$OUT/baseline.json" --json "$OUT/recheck.json" > "$OUT/recheck.txt" 2>&1; echo "exit $?"; grep -vE "^\s*$" "$OUT/recheck.txt" | cut -c1-160 | tail -20; python3 tests/gpu/perf_rows.py "$OUT/recheck.json" ;;
variants) log variants   # issue 7: candidate kernels beside the ones they would replace, same run, do_bench + graph
  # VARIANTS_ONLY=gemm,path/to/variant.py::name VARIANTS_CASES=square_4096,... (the 2026-11-29 variants were
  # merged into kernels/ or dropped: tests/bench/kernels_h200.md, session 3)
  [ -n "${VARIANTS_ONLY:-}" ] || { echo "variants: set VARIANTS_ONLY (and VARIANTS_CASES)"; continue; }
  timeout ${VARIANTS_TIMEOUT:-540} python3 tests/bench/kernels_h200.py --only "$VARIANTS_ONLY" \
    ${VARIANTS_CASES:+--cases "$VARIANTS_CASES"} --json "$OUT/variants.json" 2>&1 | tee "$OUT/variants.log" | grep -v '^{' | tail -40 ;;  # rows stay in the log if cut short
sweep) log "sweep ${SWEEP_ARGS:---only norm}"   # issue 18: SWEEP_ARGS="--only gemm --dtypes bfloat16" etc. (one part per call)
  # each call's table + JSON land in $OUT; join the parts' JSONs with `sweep_h200.py --render a.json b.json`
  timeout ${SWEEP_TIMEOUT:-570} python3 tests/bench/sweep_h200.py ${SWEEP_ARGS:---only norm} --out "$OUT/sweep_h200.md" 2>&1 | tee "$OUT/sweep.log" | grep -E "^#|FAIL|ERROR|Traceback|Error" | tail -40 ;;
tests) log "pytest -m gpu ${GPU_TESTS:-tests/gpu}"   # the GPU tests, verbose, into $OUT (kept when the box cuts them)
  # the whole suite takes more than one 10-minute call (cold caches: ~12 tests in 570 s on 2026-12-03): name some
  # with GPU_TESTS="tests/gpu/test_launch_gpu.py ..." (tests/conftest.py puts this tree on the subprocesses' path)
  timeout ${TESTS_TIMEOUT:-540} python3 -m pytest -m gpu -p no:cacheprovider -v -rfEs --tb=short ${GPU_TESTS:-tests/gpu} \
    > "$OUT/gpu_tests.txt" 2>&1; echo "exit $?"; grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed" "$OUT/gpu_tests.txt" | tail -60 ;;
bench) log bench   # issue 7
  timeout ${BENCH_TIMEOUT:-540} python3 tests/bench/kernels_h200.py --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log" | grep -v '^{' | tail -60 ;;
esac; done
log done
