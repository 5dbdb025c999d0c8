"""Device-side parts of kernels/gemm.py's two kernels: the activation epilogue, the grouped tile order, the TMA
kernel's operand loads and its split tail (``_split_tail``: data-parallel rounds + split-K over the idle
programs of a partial last round). Kept apart so gemm.py stays readable; no host code here."""
from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _sigmoid(z):
    """sigmoid(z) = 1 / (1 + exp(-z)) evaluated via exp(-|z|) <= 1, so exp never overflows (no inf, and no
    overflow warning under the numpy interpreter); costs one select over the naive form."""
    e = tl.exp(-tl.abs(z))
    r = 1.0 / (1.0 + e)
    return tl.where(z >= 0, r, e * r)


@triton.jit
def _apply_activation(x, ACTIVATION: tl.constexpr):
    """Activation on an fp32 tile (only exp is used, so GPU and interpreter agree)."""
    if ACTIVATION == "gelu":
        # gelu_tanh(x) = 0.5 x (1 + tanh(u)) = x * sigmoid(2u),  u = sqrt(2/pi) (x + 0.044715 x^3).
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        x = x * _sigmoid(2.0 * u)
    elif ACTIVATION == "silu":
        x = x * _sigmoid(x)
    return x


@triton.jit
def _tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """Grouped ordering: tile index -> (pid_m, pid_n), GROUP_M tile-rows swept column by column (L2 reuse)."""
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)  # the last group may have fewer tile-rows
    pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def _tile_loads(a_desc, b_desc, offs_m, offs_n, offs_k, A_TRANS: tl.constexpr, B_TRANS: tl.constexpr):
    """One K step's operand boxes of the TMA kernel: (BLOCK_M, BLOCK_K) of a and (BLOCK_K, BLOCK_N) of b."""
    if A_TRANS:
        a = a_desc.load([offs_k, offs_m]).T  # (BLOCK_K, BLOCK_M) box: wgmma reads it M-major
    else:
        a = a_desc.load([offs_m, offs_k])
    if B_TRANS:
        b = b_desc.load([offs_n, offs_k]).T  # (BLOCK_N, BLOCK_K) box: wgmma reads it K-major
    else:
        b = b_desc.load([offs_k, offs_n])
    return a, b


@triton.jit
def _split_tail(a_desc, b_desc, c_ptr, ws_ptr, cnt_ptr, M, N, k_tiles, num_pid_m, num_pid_n, num_dp, n_split,
                A_TRANS: tl.constexpr, B_TRANS: tl.constexpr, ACTIVATION: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """The split-K tail of gemm_tma_kernel: program p computes K slice (p % n_split) of tail tile (p // n_split)
    (tiles num_dp, num_dp + 1, ...), stores its fp32 partial in ws and counts arrivals; the last split of a
    tile sums the n_split partials in the order 0..n_split-1 (deterministic bits), applies the activation once
    and writes c. The protocol (barrier, acq_rel atomic, .cg re-reads, counter reset) is kernels/_splitk.py's."""
    unit = tl.program_id(0)
    t = unit // n_split   # tail tile (0-based), counter index
    s = unit % n_split    # K split of that tile
    pid_m, pid_n = _tile_coords(num_dp + t, num_pid_m, num_pid_n, GROUP_M)
    k_per = tl.cdiv(k_tiles, n_split)  # K steps per split; a split past K's end adds a zero partial
    k_lo = s * k_per
    k_hi = tl.minimum(k_lo + k_per, k_tiles)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in range(k_lo, k_hi):
        a, b = _tile_loads(a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, ki * BLOCK_K, A_TRANS, B_TRANS)
        acc = tl.dot(a, b, acc)
    # partial s of tail tile t at ws[(t * n_split + s) * BLOCK_M * BLOCK_N ...], row-major BLOCK_M x BLOCK_N
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    ws_tile = ws_ptr + t * n_split * (BLOCK_M * BLOCK_N)
    tl.store(ws_tile + s * (BLOCK_M * BLOCK_N) + rows[:, None] * BLOCK_N + cols[None, :], acc)
    tl.debug_barrier()  # every thread's partial stores before the one thread's release (kernels/_splitk.py)
    arrived = tl.atomic_add(cnt_ptr + t, 1, sem="acq_rel", scope="gpu")
    if arrived == n_split - 1:
        # Last arrival: sum the partials column half by column half (a whole 128x256 fp32 sum plus one loaded
        # partial would not fit the registers beside each other), in the fixed order 0..n_split-1, from L2.
        offs_m = pid_m * BLOCK_M + rows
        for h in tl.static_range(2):
            hcols = h * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)
            part_ptrs = ws_tile + rows[:, None] * BLOCK_N + hcols[None, :]
            total = tl.zeros((BLOCK_M, BLOCK_N // 2), dtype=tl.float32)
            for j in range(n_split):
                total += tl.load(part_ptrs + j * (BLOCK_M * BLOCK_N), cache_modifier=".cg")
            offs_n = pid_n * BLOCK_N + hcols
            c_ptrs = c_ptr + offs_m[:, None] * N + offs_n[None, :]
            tl.store(c_ptrs, _apply_activation(total, ACTIVATION).to(c_ptr.dtype.element_ty),
                     mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
        tl.store(cnt_ptr + t, 0)  # every split of this tile has arrived: reset for the next launch
