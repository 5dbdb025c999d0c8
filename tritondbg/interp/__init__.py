"""Everything that runs kernels under Triton's CPU interpreter: shims, (later) stepper and sanitizers."""
