"""Triton tutorial 01, vector addition: the kernel and host wrapper of python/tutorials/01-vector-add.py.

Copyright 2018-2020 Philippe Tillet, 2020-2022 OpenAI; MIT license (full notice: TRITON_LICENSE beside this
file). Written after the upstream tutorial (not a byte-for-byte copy: README here), with the import-time ``DEVICE = ...get_active_torch_device()`` that
tritondbg's CPU stand-in answers with ``cpu``; only the module-level demo and benchmark are left out.
Run: tritondbg interpret tests/third_party/tutorial_01_vector_add.py --case all
"""
import torch

import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


@triton.jit
def add_kernel(x_ptr,  # *Pointer* to first input vector.
               y_ptr,  # *Pointer* to second input vector.
               output_ptr,  # *Pointer* to output vector.
               n_elements,  # Size of the vector.
               BLOCK_SIZE: tl.constexpr,  # Number of elements each program should process.
               # NOTE: `constexpr` so it can be used as a shape value.
               ):
    # There are multiple 'programs' processing different data. We identify which program
    # we are here:
    pid = tl.program_id(axis=0)  # We use a 1D launch grid so axis is 0.
    # This program will process inputs that are offset from the initial data.
    # For instance, if you had a vector of length 256 and block_size of 64, the programs
    # would each access the elements [0:64, 64:128, 128:192, 192:256].
    # Note that offsets is a list of pointers:
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # Create a mask to guard memory operations against out-of-bounds accesses.
    mask = offsets < n_elements
    # Load x and y from DRAM, masking out any extra elements in case the input is not a
    # multiple of the block size.
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    # Write x + y back to DRAM.
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor):
    # We need to preallocate the output.
    output = torch.empty_like(x)
    assert x.device == DEVICE and y.device == DEVICE and output.device == DEVICE
    n_elements = output.numel()
    # The SPMD launch grid denotes the number of kernel instances that run in parallel.
    # It is analogous to CUDA launch grids. It can be either Tuple[int], or Callable(metaparameters) -> Tuple[int].
    # In this case, we use a 1D grid where the size is the number of blocks:
    grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']), )
    # NOTE:
    #  - Each torch.tensor object is implicitly converted into a pointer to its first element.
    #  - `triton.jit`'ed functions can be indexed with a launch grid to obtain a callable GPU kernel.
    #  - Don't forget to pass meta-parameters as keywords arguments.
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    # We return a handle to z but, since `torch.cuda.synchronize()` hasn't been called, the kernel is still
    # running asynchronously at this point.
    return output


# ---- tritondbg scenario (this project's code) ----
from tritondbg import Case, Scenario  # noqa: E402


def make_inputs(case, dtype, device, generator):
    n = case.params["n"]
    return dict(x=torch.rand(n, generator=generator).to(device=device, dtype=dtype),
                y=torch.rand(n, generator=generator).to(device=device, dtype=dtype))


def reference(x, y):
    return x.float() + y.float()


vector_add = Scenario(name="tutorial_01_vector_add", description="Triton tutorial 01: vector add",
                      make_inputs=make_inputs, launch=add, reference=reference, kernels=[add_kernel],
                      cases=[Case("tiny", params=dict(n=1000), dtypes=("float32", "float16", "bfloat16")),
                             Case("two_blocks", params=dict(n=2049), dtypes=("float32", "float16", "bfloat16"))])
