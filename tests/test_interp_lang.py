"""Language features third-party kernels use, under tritondbg's interpreter, against torch: block-scaled dots
(``tl.dot_scaled``, Triton's tutorial 10: mxfp8 e4m3 and mxfp4 e2m1 with e8m0 scales), ``tl.associative_scan``
with a tuple combine (a linear recurrence, as in state-space and linear-attention kernels) on bf16 input,
``tl.cumsum(reverse=True)``, a tuple ``tl.reduce`` (argmax with the lowest index on ties) and ``tl.flip``."""
import pytest
import torch
import triton
import triton.language as tl

pytestmark = pytest.mark.interpreter


@triton.jit
def _mx_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               FMT: tl.constexpr):
    PACK: tl.constexpr = 2 if FMT == "e2m1" else 1  # two e2m1 values per byte, along K
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K // BK):
        rk = k * BK // PACK + tl.arange(0, BK // PACK)
        a = tl.load(a_ptr + rm[:, None] * (K // PACK) + rk[None, :], mask=rm[:, None] < M)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=rn[None, :] < N)
        rs = k * (BK // 32) + tl.arange(0, BK // 32)
        sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + rs[None, :], mask=rm[:, None] < M, other=127)
        sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + rs[None, :], mask=rn[:, None] < N, other=127)
        acc = tl.dot_scaled(a, sa, FMT, b, sb, FMT, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


_E2M1 = torch.tensor([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])


def _unpack_e2m1(p, dim):
    """Two e2m1 values per byte, the even element in the low nibble, packed along ``dim``."""
    return torch.stack([_E2M1[(p & 15).long()], _E2M1[(p >> 4).long()]], dim=dim + 1).flatten(dim, dim + 1)


@pytest.mark.parametrize("fmt", ["e4m3", "e2m1"])
def test_dot_scaled_matches_a_torch_decode(fmt):
    g = torch.Generator().manual_seed(0)
    M, N, K = 40, 24, 128  # odd M and N: masked rows and columns
    if fmt == "e4m3":
        a = (torch.randn(M, K, generator=g) / 2).to(torch.float8_e4m3fn)
        b = (torch.randn(K, N, generator=g) / 2).to(torch.float8_e4m3fn)
        fa, fb = a.float(), b.float()
    else:
        a = torch.randint(0, 256, (M, K // 2), dtype=torch.uint8, generator=g)
        b = torch.randint(0, 256, (K // 2, N), dtype=torch.uint8, generator=g)
        fa, fb = _unpack_e2m1(a, 1), _unpack_e2m1(b, 0)
    sa = torch.randint(124, 130, (M, K // 32), dtype=torch.uint8, generator=g)
    sb = torch.randint(124, 130, (N, K // 32), dtype=torch.uint8, generator=g)
    c = torch.empty(M, N)
    _mx_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, sa, b, sb, c, M, N, K, BM=16, BN=16, BK=64, FMT=fmt)
    ref = (fa * torch.pow(2.0, sa.float() - 127).repeat_interleave(32, 1)) @ \
        (fb * torch.pow(2.0, sb.float() - 127).repeat_interleave(32, 1).T)
    assert (c - ref).abs().max() <= 1e-5 * ref.abs().max(), (c - ref).abs().max()


@triton.jit
def _nvfp4_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rkp, rs = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K // 2), tl.arange(0, K // 16)
    a = tl.load(a_ptr + rm[:, None] * (K // 2) + rkp[None, :])  # packed e2m1, along K
    b = tl.load(b_ptr + rn[:, None] * (K // 2) + rkp[None, :])  # b K-major: [N, K / 2]
    sa = tl.load(sa_ptr + rm[:, None] * (K // 16) + rs[None, :])  # float8_e4m3fn scales, one per 16 elements
    sb = tl.load(sb_ptr + rn[:, None] * (K // 16) + rs[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot_scaled(a, sa, "e2m1", b.T, sb, "e2m1"))


def test_dot_scaled_nvfp4_decodes_float8_scales_over_groups_of_16():
    """nvfp4 (tutorial 10's default format on sm_100): e4m3 scales, not e8m0 exponents. Triton 3.9's interpreter
    read their bits as e8m0 (outputs ~1e-39 for ~386) and tritondbg's 3.6 stand-in did too (helper-124)."""
    g = torch.Generator().manual_seed(0)
    M, N, K = 16, 32, 64
    a = torch.randint(0, 256, (M, K // 2), dtype=torch.uint8, generator=g)
    b = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, generator=g)
    sa = (torch.rand(M, K // 16, generator=g) + 0.5).to(torch.float8_e4m3fn)
    sb = (torch.rand(N, K // 16, generator=g) * 4 + 0.1).to(torch.float8_e4m3fn)
    c = torch.empty(M, N)
    _nvfp4_kernel[(1,)](a, sa, b, sb, c, M=M, N=N, K=K)
    ref = (_unpack_e2m1(a, 1) * sa.float().repeat_interleave(16, 1)) @ \
        (_unpack_e2m1(b, 1) * sb.float().repeat_interleave(16, 1)).T
    assert ref.abs().max() > 10 and (c - ref).abs().max() <= 1e-5 * ref.abs().max(), (c - ref).abs().max()


@triton.jit
def _linear(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@triton.jit
def _argmax(v1, i1, v2, i2):
    first = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(first, v1, v2), tl.where(first, i1, i2)


@triton.jit
def _scan_kernel(x_ptr, a_ptr, h_ptr, rev_ptr, amax_ptr, flip_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    a = tl.load(a_ptr + offs, mask=m, other=1.0).to(tl.float32)
    _, h = tl.associative_scan((a, x), 0, _linear)  # h[t] = a[t] * h[t - 1] + x[t]
    tl.store(h_ptr + offs, h.to(h_ptr.dtype.element_ty), mask=m)
    tl.store(rev_ptr + offs, tl.cumsum(x, 0, reverse=True), mask=m)
    _, i = tl.reduce((tl.where(m, x, -float("inf")), offs), 0, _argmax)
    tl.store(amax_ptr, i)
    tl.store(flip_ptr + offs, tl.flip(x, 0))


def test_scan_reduce_and_flip_on_bf16_rows_of_odd_length():
    g = torch.Generator().manual_seed(0)
    n, B = 100, 128
    x = torch.randn(n, generator=g).to(torch.bfloat16)
    x[71] = x.float().max() + 1  # a unique maximum, then a tie with a lower index
    x[90] = x[71]
    a = (torch.rand(n, generator=g) * 0.5 + 0.5).to(torch.bfloat16)
    h, rev, flip = torch.empty(n, dtype=torch.bfloat16), torch.empty(n), torch.empty(B)
    amax = torch.empty(1, dtype=torch.int32)
    _scan_kernel[(1,)](x, a, h, rev, amax, flip, n, BLOCK=B)
    ref, state = [], torch.zeros((), dtype=torch.float64)
    for t in range(n):
        state = state * a[t].double() + x[t].double()
        ref.append(state.item())
    assert (h.double() - torch.tensor(ref, dtype=torch.float64)).abs().max() <= 2 ** -7 * max(map(abs, ref))
    assert torch.allclose(rev, x.float().flip(0).cumsum(0).flip(0), atol=1e-5)
    assert amax.item() == 71
    padded = torch.zeros(B)
    padded[:n] = x.float()
    assert torch.equal(flip, padded.flip(0))


@triton.jit
def _mixed_kernel(a_ptr, b_ptr, sb_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot_scaled(a, None, "bf16", b, sb, "e5m2"))


def test_dot_scaled_mixes_an_unscaled_bf16_operand_with_scaled_e5m2():
    g = torch.Generator().manual_seed(0)
    M, N, K = 16, 32, 64
    a = torch.randn(M, K, generator=g).to(torch.bfloat16)
    b = torch.randn(K, N, generator=g).to(torch.float8_e5m2)
    sb = torch.randint(125, 130, (N, K // 32), dtype=torch.uint8, generator=g)
    c = torch.empty(M, N)
    _mixed_kernel[(1,)](a, b, sb, c, M=M, N=N, K=K)
    ref = a.float() @ (b.float() * torch.pow(2.0, sb.float() - 127).repeat_interleave(32, 1).T)
    assert (c - ref).abs().max() <= 1e-5 * ref.abs().max(), (c - ref).abs().max()


_ALPHA = tl.constexpr(0.5)


@triton.jit
def _constexpr_left_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, tl.exp(_ALPHA * x) + (_ALPHA - x), mask=m)  # a constexpr global on the left
    tl.store(z_ptr + offs, (_ALPHA < x).to(tl.float32), mask=m)


def test_a_constexpr_global_on_the_left_of_a_tensor_operator():
    """helper-126 (xformers' gelu with ``_kAlpha = tl.constexpr(...)``): ``ALPHA * x`` wrapped the tensor in a
    constexpr under the interpreter and the next op failed ("cannot convert ... of type tensor to tensor"); the
    compiler takes it."""
    x = torch.randn(40, generator=torch.Generator().manual_seed(0))
    y, z = torch.empty(40), torch.empty(40)
    _constexpr_left_kernel[(1,)](x, y, z, 40, BLOCK=64)
    assert torch.allclose(y, torch.exp(0.5 * x) + (0.5 - x), atol=1e-6), (y - torch.exp(0.5 * x) - (0.5 - x))
    assert torch.equal(z, (0.5 < x).float())
