"""A stand-in for a compiled kernel whose launcher is Triton 3.6's ``CudaLauncher`` (no scratch), as
kernels/_launch.py ``_direct_entry`` recognises it: its C entry ``launch(*args)`` and ``CompiledKernel[grid]``
(the path taken while a launch hook is installed) call the given recorders."""


def fake_compiled(on_direct, on_runner):
    """``on_direct(args)``: every argument the C entry gets (grid, stream, function, the head, the kernel's own);
    ``on_runner(grid, args)``: a launch through ``CompiledKernel[grid](*args)``."""

    class CudaLauncher:
        global_scratch_size = profile_scratch_size = 0
        launch_cooperative_grid, launch_pdl = False, False

        def __call__(self, gridX, gridY, gridZ, stream, function, *args):
            raise AssertionError("not the direct entry")

        def launch(self, *args):
            on_direct(args)

    class Compiled:
        run = CudaLauncher()
        packed_metadata = (4, 1, 0)
        function = 1234

        def __getitem__(self, grid):
            return lambda *args: on_runner(grid, args)

    return Compiled()
