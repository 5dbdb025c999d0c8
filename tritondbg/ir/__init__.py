"""`tritondbg ir` and `tritondbg cache`: every compile stage of a scenario's kernels, for any GPU target,
compiled on the CPU (Triton's compiler and the ptxas/cuobjdump/nvdisasm in its wheel need no GPU).

Pipeline, one module each:
  targets    --arch -> Arch (GPUTarget); the default arch (the local GPU via nvidia-smi, else sm_90)
  request    one `ir` request -> IRItems: the index first (no torch import), else capture, then store
  capture    run the scenario's launch wrapper on CPU tensors with Triton's driver stubbed: every launch is
             compiled for the target by JITFunction.run(warmup=True), specialised on the real arguments
  decision   which autotune config: --config, the only one left, Triton's autotune record, a run record,
             the case's, the first left after pruning (always printed with the reason)
  item       IRItem: one compiled kernel of a request (what every output reads)
  index      request -> Triton cache entries, validated by file hashes, env and versions
  stages     a stage's text from a cache entry (SASS disassembled once with nvdisasm, kept in the entry)
  sourcemap  IR lines -> kernel source lines (MLIR loc, LLVM !dbg, .loc, nvdisasm line info)
  stats      registers, spills, shared memory, warps/stages, static instruction mix
  diff       normalised diff of one stage between two requests
  cache      the Triton cache browser (ls / show / clear, never outside the cache directory)
  render     terminal output (rich Syntax on a terminal, plain when piped); lexers: MLIR and SASS colours
"""
