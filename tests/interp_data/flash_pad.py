"""An online-softmax (flash) attention loop over a padded last k/v block and padded query rows (50 keys and
queries in blocks of 32 keys and 64 queries: two iterations). The key tail is masked out of the scores by adding
-inf (``additive``, SGLang's prefill attention), by a where (``where``), or not at all (``unmasked``: the padded
keys' exp(0 - m) enter the softmax's sum, a real bug). other=0.0 on every load. ``causal``: SGLang's causal
prefill, one program per 32-query block, the causal and key masks added as -inf in one 2-D term (which varies
along both axes, so it made the padded query rows real). ``expdot``: exp of a padded
tile (exp(0) = 1 in its padding) times a weight whose rows past K are real: a dot that takes the padding."""
import torch
import triton
import triton.language as tl

from tritondbg import Case, Scenario


@triton.jit
def flash(q_ptr, k_ptr, v_ptr, o_ptr, n, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
          MASK: tl.constexpr):
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < n, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    for start_n in range(0, n, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_ptr + cols[None, :] * D + offs_d[:, None], mask=cols[None, :] < n, other=0.0)
        qk = tl.dot(q, k, input_precision="ieee")
        if MASK == 1:
            qk += tl.where(cols[None, :] < n, 0, float("-inf"))
        elif MASK == 2:
            qk = tl.where(cols[None, :] < n, qk, float("-inf"))
        m_ij = tl.max(qk, 1)
        p = tl.exp(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)  # MARK: sum
        m_i_new = tl.maximum(m_i, m_ij)
        alpha = tl.exp(m_i - m_i_new)
        beta = tl.exp(m_ij - m_i_new)
        l_i_new = alpha * l_i + beta * l_ij
        p = p * (beta / l_i_new)[:, None]
        acc = acc * (l_i / l_i_new * alpha)[:, None]
        v = tl.load(v_ptr + cols[:, None] * D + offs_d[None, :], mask=cols[:, None] < n, other=0.0)
        acc += tl.dot(p, v, input_precision="ieee")  # MARK: dot
        l_i = l_i_new
        m_i = m_i_new
    tl.store(o_ptr + offs_m[:, None] * D + offs_d[None, :], acc, mask=offs_m[:, None] < n)


@triton.jit
def causal_flash(q_ptr, k_ptr, v_ptr, o_ptr, n, D: tl.constexpr, BLOCK: tl.constexpr):
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK + tl.arange(0, BLOCK)
    offs_n = tl.arange(0, BLOCK)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + offs_m[:, None] * D + offs_d[None, :], mask=offs_m[:, None] < n, other=0.0)
    m_i = tl.zeros([BLOCK], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK], dtype=tl.float32)
    acc = tl.zeros([BLOCK, D], dtype=tl.float32)
    for start_n in range(0, (start_m + 1) * BLOCK, BLOCK):
        cols = start_n + offs_n
        k = tl.load(k_ptr + cols[None, :] * D + offs_d[:, None], mask=cols[None, :] < n, other=0.0)
        qk = tl.dot(q, k, input_precision="ieee")
        qk += tl.where((cols[None, :] < n) & (offs_m[:, None] >= cols[None, :]), 0, float("-inf"))
        m_ij = tl.max(qk, 1)
        p = tl.exp(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        m_i_new = tl.maximum(m_i, m_ij)
        alpha = tl.exp(m_i - m_i_new)
        beta = tl.exp(m_ij - m_i_new)
        l_i_new = alpha * l_i + beta * l_ij
        p = p * (beta / l_i_new)[:, None]
        acc = acc * (l_i / l_i_new * alpha)[:, None]
        v = tl.load(v_ptr + cols[:, None] * D + offs_d[None, :], mask=cols[:, None] < n, other=0.0)
        acc += tl.dot(p, v, input_precision="ieee")  # MARK: causaldot
        l_i = l_i_new
        m_i = m_i_new
    tl.store(o_ptr + offs_m[:, None] * D + offs_d[None, :], acc, mask=offs_m[:, None] < n)


def _launch_causal(q, k, v):
    o = torch.empty_like(q)
    causal_flash[(triton.cdiv(q.shape[0], 32),)](q, k, v, o, q.shape[0], D=16, BLOCK=32)
    return o


def _causal_reference(q, k, v):
    s = q @ k.T
    s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


@triton.jit
def exp_dot(x_ptr, w_ptr, y_ptr, K, M: tl.constexpr, BLOCK_K: tl.constexpr, N: tl.constexpr):
    m, kk, nn = tl.arange(0, M), tl.arange(0, BLOCK_K), tl.arange(0, N)
    x = tl.load(x_ptr + m[:, None] * K + kk[None, :], mask=kk[None, :] < K, other=0.0)
    w = tl.load(w_ptr + kk[:, None] * N + nn[None, :])  # BLOCK_K rows, all real
    y = tl.dot(tl.exp(x), w, input_precision="ieee")  # MARK: expdot
    tl.store(y_ptr + m[:, None] * N + nn[None, :], y)


def _launch_exp_dot(x, w):
    y = torch.empty(x.shape[0], w.shape[1])
    exp_dot[(1,)](x, w, y, x.shape[1], M=16, BLOCK_K=32, N=16)
    return y


def _launch(mask):
    def launch(q, k, v):
        o = torch.empty_like(q)
        flash[(1,)](q, k, v, o, q.shape[0], D=16, BLOCK_M=64, BLOCK_N=32, MASK=mask)
        return o
    return launch


def _inputs(case, dtype, device, generator):
    return {name: torch.randn(50, 16, generator=generator) for name in ("q", "k", "v")}


def _reference(q, k, v):
    return torch.softmax(q @ k.T, -1) @ v


_CASES = [Case("tiny", dtypes=("float32",))]
unmasked = Scenario("unmasked", _inputs, _launch(0), _reference, _CASES, kernels=[flash])
additive = Scenario("additive", _inputs, _launch(1), _reference, _CASES, kernels=[flash])
where = Scenario("where", _inputs, _launch(2), _reference, _CASES, kernels=[flash])
causal = Scenario("causal", _inputs, _launch_causal, _causal_reference, _CASES, kernels=[causal_flash])
expdot = Scenario("expdot", lambda case, dtype, device, generator: dict(
    x=torch.randn(16, 20, generator=generator), w=torch.randn(32, 16, generator=generator)), _launch_exp_dot,
    lambda x, w: torch.exp(x) @ w[:20], _CASES, kernels=[exp_dot])
