"""PyTorch reference for the Transformer layer kernels (issue 17); writes
tests/fixtures/transformer_layers.bin, which tests/test_transformer_layers.c compares
src/layers/mha.c, src/layers/layernorm.c and src/layers/ffn.c against (to ~1e-5).

    /usr/bin/python3 scripts/reference/reference_layers.py

Uses PyTorch's own modules, so the fixture pins nmt's conventions to theirs:
torch.nn.MultiheadAttention (time-major (T, B, d) inputs, in_proj_weight (3d, d) =
Wq; Wk; Wv, y = x W^T + b, key_padding_mask, a boolean causal attn_mask,
per-head weights with average_attn_weights=False), nn.LayerNorm (eps 1e-5) and a
feed-forward layer of two nn.Linear with F.gelu (exact erf form).

The objective is L = sum(w * y) with y's rows at padding queries zeroed, as nmt's
mha_forward does (PyTorch computes something there; nmt writes 0 and gives those
rows no gradient). Everything runs in float64 from float32 initial values and is
rounded to float32 when written. The output is deterministic (seed 17).

Records (format: scripts/reference/fixture.py), for the attention cases PREFIX cross_ (Tq 4,
Tk 5) and self_ (causal self-attention, T 5; no kv_in / dkv_in records, q_in is both):
    dims                       int32 [Tq, Tk, B, d, heads, causal]
    len_q, len_k               int32 (B)
    q_in, kv_in                (Tq, B, d), (Tk, B, d)
    in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias
    w                          (Tq, B, d) the objective's weights
    y                          (Tq, B, d) zero at padding query rows
    P                          (B, heads, Tq, Tk)
    dq_in, dkv_in, d_in_proj_weight, d_in_proj_bias, d_out_proj_weight, d_out_proj_bias
and ln_{dims [N, d], x, gamma, beta, w, y, dx, dgamma, dbeta},
    ffn_{dims [N, d, ff], x, W1, b1, W2, b2, w, y, dx, dW1, db1, dW2, db2}.
"""

import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture import write_fixture  # noqa: E402

D, HEADS, B = 8, 2, 3
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures",
                   "transformer_layers.bin")


def f32(t):
    return t.detach().to(torch.float32).numpy().copy()


def uniform(gen, shape, a):
    """float32 values in [-a, a), returned as float64 tensors."""
    return ((torch.rand(shape, generator=gen, dtype=torch.float32) * 2 - 1) * a).double()


def attention_case(gen, prefix, Tq, Tk, len_q, len_k, causal):
    self_attn = causal  # the causal case is self-attention
    mha = torch.nn.MultiheadAttention(D, HEADS, dropout=0.0).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(uniform(gen, (3 * D, D), 0.6))
        mha.in_proj_bias.copy_(uniform(gen, (3 * D,), 0.3))
        mha.out_proj.weight.copy_(uniform(gen, (D, D), 0.6))
        mha.out_proj.bias.copy_(uniform(gen, (D,), 0.3))
    q_in = uniform(gen, (Tq, B, D), 1.0).requires_grad_()
    kv_in = q_in if self_attn else uniform(gen, (Tk, B, D), 1.0).requires_grad_()
    w = uniform(gen, (Tq, B, D), 1.0)
    len_q_t, len_k_t = torch.tensor(len_q), torch.tensor(len_k)
    key_padding_mask = torch.arange(Tk)[None, :] >= len_k_t[:, None]          # (B, Tk), True = ignore
    attn_mask = torch.triu(torch.ones(Tq, Tk, dtype=torch.bool), 1) if causal else None
    y, P = mha(q_in, kv_in, kv_in, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
               need_weights=True, average_attn_weights=False)
    qmask = (torch.arange(Tq)[:, None] < len_q_t[None, :]).double()[:, :, None]  # (Tq, B, 1)
    y = y * qmask
    (w * y).sum().backward()
    rec = [
        ("dims", np.array([Tq, Tk, B, D, HEADS, int(causal)], np.int32)),
        ("len_q", np.array(len_q, np.int32)),
        ("len_k", np.array(len_k, np.int32)),
        ("q_in", f32(q_in)),
    ]
    if not self_attn:
        rec.append(("kv_in", f32(kv_in)))
    rec += [
        ("in_proj_weight", f32(mha.in_proj_weight)),
        ("in_proj_bias", f32(mha.in_proj_bias)),
        ("out_proj_weight", f32(mha.out_proj.weight)),
        ("out_proj_bias", f32(mha.out_proj.bias)),
        ("w", f32(w)),
        ("y", f32(y)),
        ("P", f32(P)),
        ("dq_in", f32(q_in.grad)),
    ]
    if not self_attn:
        rec.append(("dkv_in", f32(kv_in.grad)))
    rec += [
        ("d_in_proj_weight", f32(mha.in_proj_weight.grad)),
        ("d_in_proj_bias", f32(mha.in_proj_bias.grad)),
        ("d_out_proj_weight", f32(mha.out_proj.weight.grad)),
        ("d_out_proj_bias", f32(mha.out_proj.bias.grad)),
    ]
    return [(prefix + name, a) for name, a in rec]


def layernorm_case(gen, N=6):
    ln = torch.nn.LayerNorm(D).double()
    with torch.no_grad():
        ln.weight.copy_(1 + uniform(gen, (D,), 0.5))
        ln.bias.copy_(uniform(gen, (D,), 0.5))
    x = (uniform(gen, (N, D), 2.0) + 3).requires_grad_()
    w = uniform(gen, (N, D), 1.0)
    y = ln(x)
    (w * y).sum().backward()
    return [("ln_dims", np.array([N, D], np.int32)), ("ln_x", f32(x)), ("ln_gamma", f32(ln.weight)),
            ("ln_beta", f32(ln.bias)), ("ln_w", f32(w)), ("ln_y", f32(y)), ("ln_dx", f32(x.grad)),
            ("ln_dgamma", f32(ln.weight.grad)), ("ln_dbeta", f32(ln.bias.grad))]


def ffn_case(gen, N=6, ff=16):
    l1, l2 = torch.nn.Linear(D, ff).double(), torch.nn.Linear(ff, D).double()
    with torch.no_grad():
        for p, a in ((l1.weight, 0.5), (l1.bias, 0.5), (l2.weight, 0.5), (l2.bias, 0.5)):
            p.copy_(uniform(gen, tuple(p.shape), a))
    x = uniform(gen, (N, D), 1.0).requires_grad_()
    w = uniform(gen, (N, D), 1.0)
    y = l2(F.gelu(l1(x)))
    (w * y).sum().backward()
    return [("ffn_dims", np.array([N, D, ff], np.int32)), ("ffn_x", f32(x)), ("ffn_W1", f32(l1.weight)),
            ("ffn_b1", f32(l1.bias)), ("ffn_W2", f32(l2.weight)), ("ffn_b2", f32(l2.bias)), ("ffn_w", f32(w)),
            ("ffn_y", f32(y)), ("ffn_dx", f32(x.grad)), ("ffn_dW1", f32(l1.weight.grad)),
            ("ffn_db1", f32(l1.bias.grad)), ("ffn_dW2", f32(l2.weight.grad)), ("ffn_db2", f32(l2.bias.grad))]


def main():
    torch.manual_seed(17)
    gen = torch.Generator().manual_seed(17)
    records = []
    records += attention_case(gen, "cross_", 4, 5, [4, 2, 3], [5, 3, 2], causal=False)
    records += attention_case(gen, "self_", 5, 5, [5, 3, 4], [5, 3, 4], causal=True)
    records += layernorm_case(gen)
    records += ffn_case(gen)
    n = write_fixture(OUT, records)
    print(f"wrote {os.path.normpath(OUT)}: {len(records)} records, {n} bytes")


if __name__ == "__main__":
    main()
