"""`tritondbg profile`: time kernels, trace them, capture the autotuner's decisions, export for TensorBoard.

The pipeline, one module each:
  pipeline.py     loops kernels x cases x dtypes through the runner and fills the run record
  session.py      the run folder (written under a hidden name, renamed when complete) and torch.profiler
  nvtx_ranges.py  the NVTX range (domain "tritondbg") + record_function around every launch
  autotune.py     every autotune decision: each config's p50/p20/p80, winner, pruned configs, cache hit
  timing.py       median kernel time (do_bench on a GPU, wall clock under the interpreter)
  peaks.py        GPU peak figures (measured once per machine and cached, or the spec sheet)
  summary.py      throughput, % of peak, ratio to torch: computed into the record, rendered for the console
  roofline.py     the roofline PNG (Pillow, which TensorBoard already depends on)
  tensorboard.py  HParams (one trial per config), best-time scalars, the roofline image

The run record (tritondbg.record.RunRecord, ``CaseResult.extra["profile"]``) is the data; the trace
metadata, TensorBoard summaries, console table and JSON are exporters of it.
"""
