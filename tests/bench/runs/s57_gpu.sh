#!/usr/bin/env bash
# Session 57's GPU calls (2026-12-06; device tool, torch 2.11.0+cu130, Triton 3.6.0; ~10 refused starts):
#   call 1 (NVIDIA H100 80GB HBM3): `python tests/bench/cvt_probe.py` (what a GPU stores for float-to-int conversions
#     past the range / of NaN, beside the interpreter: s57_cvt_probe.txt, the table values.gpu_int follows), then
#     `python tests/bench/bnhd_load.py --hogs 0 --rounds 2 --variants forced,nocache` and `... --hogs 3 --rounds 2
#     --variants plain,forced,nocache,sync,contig` (s57_bnhd.txt): under load, BAD in round 1 of plain, sync and
#     contig (calls 1-3, the same error each: the inputs or the reference, not the kernel), never with one config
#     (no autotune benchmark), never on call 4 (new tensors, reference computed after the autotune). Cause:
#     do_bench_cudagraph's new stream does not wait for the caller's; the benchmark's first call wrote the output
#     torch.empty had just handed out, whose memory the reference's queued work still used.
#   call 2 (NVIDIA H200): `python tests/bench/runs/s57_stream_hazard.py` (the GPU test's hazard made certain by a GPU
#     sleep: before the fix 1 of 3 rounds overwrote the queued read, after 0 of 3), then `python
#     tests/bench/bnhd_load.py --hogs 3 --rounds 3 --variants plain,contig` after the fix: 24 of 24 ok
#     (s57_stream_hazard.txt, s57_bnhd_after.txt).
#   call 3 (same H200): `python tests/bench/runs/s56_steady_load.py 3 3` (3 copies of steady_state.py beside 3 matmul
#     hogs; session 56 on an H100: each FAILED 1 of 87, NaN): OK 87 x 3 (s57_steady_load.txt).
set -u
python tests/bench/cvt_probe.py
python tests/bench/runs/s57_stream_hazard.py
python tests/bench/bnhd_load.py --hogs 3 --rounds 3 --variants plain,contig
python tests/bench/runs/s56_steady_load.py 3 3
