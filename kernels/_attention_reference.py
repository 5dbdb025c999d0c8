"""attention's references (fp32, masked softmax written out) and cost model (flops, minimal DRAM bytes), for
prefill and decode; re-exported by kernels/attention.py."""
import math

import torch


def _masked_softmax(s):
    """Softmax over the last dim; rows that are all -inf give 0 (not NaN), as the kernels do."""
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isinf(m) & (m < 0), torch.zeros_like(m), m)
    e = torch.exp(s - m)
    l = e.sum(dim=-1, keepdim=True)
    return e / torch.where(l == 0, torch.ones_like(l), l)


def reference(q, k, v, causal=False, sm_scale=None, **_):
    """Prefill reference: manual softmax(q k^T * scale + mask) v in fp32 (one batch at a time to bound memory)."""
    B, H, N_Q, D = q.shape
    H_KV, N_KV = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    out = torch.empty((B, H, N_Q, D), device=q.device, dtype=torch.float32)
    if causal:
        i = torch.arange(N_Q, device=q.device)[:, None]
        j = torch.arange(N_KV, device=q.device)[None, :]
        visible = j <= i + (N_KV - N_Q)
    for b in range(B):
        qf = q[b].float()
        kf = k[b].float().repeat_interleave(H // H_KV, dim=0)
        vf = v[b].float().repeat_interleave(H // H_KV, dim=0)
        s = torch.matmul(qf, kf.transpose(-1, -2)) * scale
        if causal:
            s = s.masked_fill(~visible, float("-inf"))
        out[b] = torch.matmul(_masked_softmax(s), vf)
    return out


def reference_decode(q, k_cache, v_cache, seq_lens=None, sm_scale=None, **_):
    """Decode reference: per sequence, manual softmax over cache positions [0, seq_lens[b]) in fp32."""
    B, H, D = q.shape
    H_KV, S_MAX = k_cache.shape[1], k_cache.shape[2]
    scale = 1.0 / math.sqrt(D) if sm_scale is None else sm_scale
    kf = k_cache.float().repeat_interleave(H // H_KV, dim=1)
    vf = v_cache.float().repeat_interleave(H // H_KV, dim=1)
    s = torch.einsum("bhd,bhsd->bhs", q.float(), kf) * scale
    if seq_lens is not None:
        lens = torch.as_tensor(seq_lens, device=q.device).to(torch.int64).clamp(0, S_MAX)
        pos = torch.arange(S_MAX, device=q.device)[None, None, :]
        unused = pos >= lens[:, None, None]  # a cache's slots past a sequence's length may hold anything (NaN)
        s = s.masked_fill(unused, float("-inf"))
        vf = vf.masked_fill(unused[..., None], 0.0)
    return torch.einsum("bhs,bhsd->bhd", _masked_softmax(s), vf)


def _decode_tokens(B, S, seq_lens):
    """KV tokens attended per head, summed over the batch."""
    if seq_lens is None:
        return B * S
    return sum(min(max(int(x), 0), S) for x in seq_lens)


def flops(B, H, D, N=None, N_KV=None, causal=False, S=None, seq_lens=None, **_):
    """Prefill: 4*B*H*N_Q*N_KV*D (QK^T and PV, 2 flops per MAC), halved for causal (the usual convention;
    for N_Q != N_KV the exact count of visible pairs). Decode (S given): 4*H*D*sum(seq_lens)."""
    if S is not None:
        return 4.0 * H * D * _decode_tokens(B, S, seq_lens)
    n_kv = N if N_KV is None else N_KV
    pairs = N * n_kv
    if causal:
        if n_kv == N:
            pairs = N * N / 2
        else:
            off = n_kv - N
            pairs = sum(min(max(i + off + 1, 0), n_kv) for i in range(N))
    return 4.0 * B * H * pairs * D


def bytes_moved(B, H, D, dtype, N=None, N_KV=None, S=None, seq_lens=None, H_KV=None, **_):
    """Minimal DRAM traffic: read q, k, v once and write o (decode: only the first seq_lens[b] cache rows
    are read; the split workspace, B*H*splits*(D+1)*4*2 bytes, is not counted)."""
    es = torch.empty((), dtype=dtype).element_size()
    h_kv = H if H_KV is None else H_KV
    if S is not None:
        return float(es * (2 * B * H * D + 2 * h_kv * D * _decode_tokens(B, S, seq_lens)))
    n_kv = N if N_KV is None else N_KV
    return float(es * B * D * (2 * H * N + 2 * h_kv * n_kv))
