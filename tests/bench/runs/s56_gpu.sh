#!/usr/bin/env bash
# Session 56's GPU calls (2026-12-06; device tool, NVIDIA H100 80GB HBM3, torch 2.11.0+cu130, Triton 3.6.0; the
# machine came after ~10 failed starts over 75 minutes, and ~10 minutes of the 30 went to them):
#   call 1: `bash tests/bench/runs/s53_gpu.sh 4` (carry build/wheels): the GPU test files on 4 xdist workers, cut at
#     its 560 s: 23 passed, 7 failed, 1 skipped before the cut (s56_gpu_outcomes.txt, s56_gpu_failures.txt,
#     s56_gpu_tests.txt). The perf gates of softmax / gemm / layernorm / fp8_gemm (recorded with --update-baseline a
#     moment before, then 28-122% slower beside 3 other workers; fp8_gemm square_8192_kn picked a 4-warp config
#     under that load and ran 0.11x torch), check attention past pytest-timeout's 400 s, profile_all's bandwidth:
#     timing under load, as in session 53. Not timing: steady_state.py's `attention B2 H8/4 N333 D128 causal bf16
#     bnhd` (max abs err nan), as in session 53.
#   call 2: `python tests/gpu/prefill_configs.py --bnhd` (every prefill config pinned on that shape, causal and not,
#     q/k/v handed as transposed (B, N, H, D) tensors): 16 of 16 right; `python tests/gpu/steady_state.py` alone:
#     OK 87 (s56_bnhd_configs.txt, s56_steady_alone.txt).
#   call 3: `python tests/bench/runs/s56_steady_load.py 3 3` (3 copies of steady_state.py beside 3 matmul hogs):
#     each copy FAILED 1 of 87, that same case, NaN; the autotuner's pick there 64x64 w4 s3 in all three
#     (s56_steady_load.txt). The fourth call ("new tensors", same cached launcher) was right in all three.
#   Not run (no device time left): tests/bench/bnhd_load.py, which checks each call of that signature under load
#     with a sync after each call, without the cached launcher, with contiguous q/k/v and with the config pinned.
set -u
python tests/bench/bnhd_load.py --hogs 3 --rounds 3
