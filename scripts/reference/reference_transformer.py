"""PyTorch reference for nmt's Transformer (issue 17); writes tests/fixtures/transformer_<name>.bin.

This script is the specification of the Transformer the C code must reproduce. Like
scripts/reference/reference.py it uses plain tensor ops only (no nn.Transformer, nn.MultiheadAttention,
F.layer_norm, F.softmax or F.cross_entropy in the model itself), so each formula can be
read next to its C counterpart; autograd supplies the gradients. The torch modules appear
only in the self-checks.

    /usr/bin/python3 scripts/reference/reference_transformer.py              # writes all four fixtures
    /usr/bin/python3 scripts/reference/reference_transformer.py --only pre1 --no-gradcheck

The model. Tensors are time-major, (T, B, d), row t*B + b. PAD = 0, UNK = 1, SOS = 2,
EOS = 3 (src/text/vocab.h). d = d_model (nmt's model.embed), h heads, dk = d / h, ff the
inner width of the feed-forward block, N_enc / N_dec layers, activation relu or gelu,
norm "pre" or "post", no dropout.

    embedding   x[t,b] = emb[ids[t,b]] * sqrt(d) + PE[t]
                PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)),
                pos = 0, 1, ... (the exponent 2i/d uses the even column index 2i for both
                columns of a pair). Padded positions are embedded like any other (emb[PAD]).
    linear      y = x W^T + b, W of shape (out, in) as in nn.Linear.
    LN(x)       (x - mean) / sqrt(var + 1e-5) * g + b over the last axis, var biased (/d).
    act         relu(x) = max(x, 0); gelu(x) = 0.5 x (1 + erf(x / sqrt 2)) (exact, F.gelu's default).
    FFN(x)      act(x W1^T + b1) W2^T + b2, W1 (ff, d), W2 (d, ff).
    MHA(q_in, kv_in; key_len, causal)
                Q = q_in Wq^T + bq, K = kv_in Wk^T + bk, V = kv_in Wv^T + bv;
                head j uses columns j*dk .. (j+1)*dk - 1 of Q, K, V;
                scores_j[i, k] = Q_j[i] . K_j[k] / sqrt(dk);
                key k masked (score -inf, probability exactly 0) when k >= key_len[b],
                and, causal, when k > i;
                P_j = softmax over k (max subtracted first); ctx_j = P_j V_j;
                ctx = concat of the heads in head order; out = ctx Wo^T + bo.
                No row is ever fully masked: every length is >= 1 and key 0 is always real.
    encoder     pre-norm, per layer:  x = x + MHA(LN1(x), LN1(x); src_len)
                                      x = x + FFN(LN2(x))
                then memory = LN_enc(x) (enc.ln).
                post-norm, per layer: x = LN1(x + MHA(x, x; src_len))
                                      x = LN2(x + FFN(x))
                memory = x (no final LN, no enc.ln parameters).
    decoder     pre-norm, per layer:  y = y + MHA(LN1(y), LN1(y); tgt_len, causal)
                                      y = y + MHA(LN2(y), memory; src_len)     (cross)
                                      y = y + FFN(LN3(y))
                then y = LN_dec(y) (dec.ln).
                post-norm, per layer: y = LN1(y + MHA(y, y; tgt_len, causal))
                                      y = LN2(y + MHA(y, memory; src_len))
                                      y = LN3(y + FFN(y))
                no final LN.
                src_len[b] = number of non-PAD ids in src[:, b]; tgt_len[b] likewise for
                tgt_in (its SOS counts). Padded query rows are computed like real ones
                (they attend to the real keys); nothing downstream uses them.
    output      logits = y out_w^T + out_b; tie_embeddings: out_w IS tgt_emb (one tensor,
                its gradient is the sum of the embedding and the output uses; no out_w
                record). The embedding scale sqrt(d) is not applied on the output side.
    loss        mean over the positions with tgt_out != PAD of -log softmax(logits)[tgt_out]
                (one mean over all real tokens of the batch, = F.cross_entropy(ignore_index=0)).
    batch       as scripts/reference/reference.py: tgt_in = SOS w1 .. w_{n-1} PAD..,
                tgt_out = w1 .. w_{n-1} EOS PAD.., n = the target length; src = n random
                real ids then PAD.

Parameter order (the C memory order; one fixture record each, in this order):

    src_emb (Vs,d), tgt_emb (Vt,d)
    per encoder layer l:  enc.l.ln1.g, enc.l.ln1.b,
                          enc.l.self.{wq,bq,wk,bk,wv,bv,wo,bo}   (w* (d,d), b* (d))
                          enc.l.ln2.g, enc.l.ln2.b,
                          enc.l.ff.w1 (ff,d), enc.l.ff.b1 (ff), enc.l.ff.w2 (d,ff), enc.l.ff.b2 (d)
    enc.ln.g, enc.ln.b                                          (pre-norm only)
    per decoder layer l:  dec.l.ln1.{g,b}, dec.l.self.{wq,...,bo}, dec.l.ln2.{g,b},
                          dec.l.cross.{wq,...,bo}, dec.l.ln3.{g,b}, dec.l.ff.{w1,b1,w2,b2}
    dec.ln.g, dec.ln.b                                          (pre-norm only)
    out_w (Vt,d)                                                (unless tied)
    out_b (Vt)

In the cross attention, wq/bq act on the decoder stream and wk, bk, wv, bv on the memory.
Fixture initial values (fixed seed): weights xavier-uniform, embeddings N(0, 1/d),
biases U(-0.1, 0.1), LN gains 1 + U(-0.1, 0.1), LN biases U(-0.1, 0.1).

Checks, all of which must pass before anything is written: PE against its exp/log form;
the model against
nn.Transformer (pre-norm) / nn.TransformerEncoder+Decoder with norm=None (post-norm)
with the same weights and masks (memory and decoder output before the output layer,
and in float64 every gradient backpropagated through those modules);
the attention against nn.MultiheadAttention; LN, gelu and the loss against their torch
functions; the structural zeros (cross attention at padded sources, grad of emb[PAD]);
float32 against float64; autograd against finite differences (gradcheck, float64);
causality of the greedy decoding (below).

Activations, loss and gradients in the fixtures are the float64 run's values rounded to
float32 (both runs start from the same float32 initial values), as in
scripts/reference/reference_variants.py.

Records of a fixture (format: scripts/reference/fixture.py), in this order:

    dims        int32 [B, S, T, d, h, ff, Vs, Vt, N_enc, N_dec, norm (0 pre, 1 post),
                       act (0 relu, 1 gelu), tied (0/1)]
    src, tgt_in, tgt_out  int32 (S,B), (T,B), (T,B)
    <param>     float32 initial values, in the order above
    enc_in      (S,B,d) src embedding * sqrt(d) + PE
    dec_in      (T,B,d) tgt embedding * sqrt(d) + PE
    memory      (S,B,d) encoder output (after enc.ln when pre-norm); padded rows included
    dec_out     (T,B,d) decoder output before the output layer (after dec.ln when pre-norm)
    cross_attn  (T,B,S) the last decoder layer's cross-attention probabilities averaged
                over the heads; exactly 0 at padded sources
    logits      (T,B,Vt)
    loss        (1)
    grad.<param>  gradient of loss for every parameter (tied: tgt_emb's is the sum).
                grad.*.bk (every attention's key bias) is 0 in exact arithmetic: q_i . bk
                is the same for all keys of query i and softmax ignores a per-row constant.
                The records hold the float64 run's rounding noise (|x| < 1e-15); compare
                them with an absolute tolerance (float32 gives ~1e-8), never relatively.
  pre1 only, greedy decoding of the same sources for 3 steps (a reference for a KV-cache
  decoder): step 0 feeds SOS; step s feeds SOS and the argmax tokens of steps 0..s-1
  (argmax over the whole vocabulary, specials included, no stop at EOS; target
  lengths = s + 1, i.e. no target padding); the step's logits are those of its last position.
    incremental.tokens  int32 (3,B) argmax of each step
    incremental.logits  (3,B,Vt)

Compare tensors relative to each tensor's largest entry, as the C tests of the recurrent
model do; float32 reaches about 1e-6 of it here (the float32 vs float64 check prints it).
"""

import argparse
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture import read_fixture, write_fixture  # noqa: E402

# ---------------------------------------------------------------- sizes and data

# Batch, source steps, target steps, d_model, heads, ff width, vocabularies: all different
# where possible so a transposed or mis-strided buffer cannot pass.
B, S, T, D, NH, FF, VS, VT = 3, 5, 4, 8, 2, 16, 11, 13
PAD, UNK, SOS, EOS = 0, 1, 2, 3       # src/text/vocab.h; real tokens are >= 4
SRC_LENGTHS = [5, 1, 3]               # real tokens before PAD; one of length 1
TGT_LENGTHS = [4, 2, 1]               # tgt_in = SOS + (len-1) tokens; tgt_len 1 = just SOS -> EOS
SEED = 1717
INCREMENTAL_STEPS = 3

CONFIGS = {
    # name: (norm, act, N_enc, N_dec, tied)
    "pre1": ("pre", "relu", 1, 1, False),
    "post1": ("post", "relu", 1, 1, False),
    "pre2_gelu": ("pre", "gelu", 2, 2, False),
    "tied": ("pre", "relu", 1, 1, True),
}


class Config:
    def __init__(self, norm, act, n_enc, n_dec, tied, d=D, nh=NH, ff=FF, vs=VS, vt=VT):
        self.norm, self.act, self.n_enc, self.n_dec, self.tied = norm, act, n_enc, n_dec, tied
        self.d, self.nh, self.ff, self.vs, self.vt = d, nh, ff, vs, vt
        assert d % nh == 0
        self.dk = d // nh

    def dims(self, b, s, t):
        return [b, s, t, self.d, self.nh, self.ff, self.vs, self.vt, self.n_enc, self.n_dec,
                0 if self.norm == "pre" else 1, 0 if self.act == "relu" else 1, int(self.tied)]


ATTN_NAMES = ["wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo"]


def param_shapes(c):
    """[(name, shape)] in the C memory order."""
    d, ff = c.d, c.ff
    out = [("src_emb", (c.vs, d)), ("tgt_emb", (c.vt, d))]

    def ln(pre):
        return [(pre + ".g", (d,)), (pre + ".b", (d,))]

    def attn(pre):
        return [(f"{pre}.{n}", (d, d) if n[0] == "w" else (d,)) for n in ATTN_NAMES]

    def ffn(pre):
        return [(pre + ".w1", (ff, d)), (pre + ".b1", (ff,)), (pre + ".w2", (d, ff)),
                (pre + ".b2", (d,))]

    for l in range(c.n_enc):
        p = f"enc.{l}"
        out += ln(p + ".ln1") + attn(p + ".self") + ln(p + ".ln2") + ffn(p + ".ff")
    if c.norm == "pre":
        out += ln("enc.ln")
    for l in range(c.n_dec):
        p = f"dec.{l}"
        out += (ln(p + ".ln1") + attn(p + ".self") + ln(p + ".ln2") + attn(p + ".cross")
                + ln(p + ".ln3") + ffn(p + ".ff"))
    if c.norm == "pre":
        out += ln("dec.ln")
    if not c.tied:
        out.append(("out_w", (c.vt, d)))
    out.append(("out_b", (c.vt,)))
    return out


def make_batch(gen, b_lens_src=SRC_LENGTHS, b_lens_tgt=TGT_LENGTHS, s=S, t=T, vs=VS, vt=VT):
    """src (S,B), tgt_in (T,B), tgt_out (T,B), int64, exactly as scripts/reference/reference.py."""
    b = len(b_lens_src)
    src = torch.full((s, b), PAD, dtype=torch.int64)
    tgt_in = torch.full((t, b), PAD, dtype=torch.int64)
    tgt_out = torch.full((t, b), PAD, dtype=torch.int64)
    for i in range(b):
        n = b_lens_src[i]
        src[:n, i] = torch.randint(4, vs, (n,), generator=gen)
        n = b_lens_tgt[i]
        words = torch.randint(4, vt, (n - 1,), generator=gen)
        tgt_in[0, i] = SOS
        tgt_in[1:n, i] = words
        tgt_out[:n - 1, i] = words
        tgt_out[n - 1, i] = EOS
    return src, tgt_in, tgt_out


def init_params(c, gen):
    """Fixed-seed float32 initial values of sensible scale (see the docstring)."""
    p = {}
    for name, shape in param_shapes(c):
        last = name.rsplit(".", 1)[-1]
        if name in ("src_emb", "tgt_emb"):
            v = torch.randn(shape, generator=gen) / math.sqrt(c.d)
        elif name == "out_w" or last.startswith("w"):
            fan_out, fan_in = shape
            a = math.sqrt(6.0 / (fan_in + fan_out))
            v = (torch.rand(shape, generator=gen) * 2 - 1) * a
        elif last == "g":
            v = 1 + (torch.rand(shape, generator=gen) * 2 - 1) * 0.1
        else:  # biases: b*, LN .b, out_b
            v = (torch.rand(shape, generator=gen) * 2 - 1) * 0.1
        p[name] = v.to(torch.float32)
    return p


# ---------------------------------------------------------------- the model

def positional_encoding(n, d, dtype):
    """PE (n, d): PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same angle)."""
    pos = torch.arange(n, dtype=torch.float64).unsqueeze(1)           # (n,1)
    two_i = torch.arange(0, d, 2, dtype=torch.float64)                  # (d/2)
    angle = pos / torch.pow(10000.0, two_i / d)                         # (n,d/2)
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.to(dtype)


def embed(emb, ids, d):
    """ids (L,B) -> (L,B,d) = emb[ids] * sqrt(d) + PE[pos]."""
    return emb[ids] * math.sqrt(d) + positional_encoding(ids.shape[0], d, emb.dtype).unsqueeze(1)


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)                 # biased
    return (x - mean) / torch.sqrt(var + eps) * g + b


def activation(x, act):
    if act == "relu":
        return torch.clamp(x, min=0)
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2.0)))


def ffn(p, pre, x, act):
    return activation(x @ p[pre + ".w1"].T + p[pre + ".b1"], act) @ p[pre + ".w2"].T + p[pre + ".b2"]


def softmax_last(x):
    m = x.max(dim=-1, keepdim=True).values
    e = torch.exp(x - m)                                                # exactly 0 at -inf
    return e / e.sum(dim=-1, keepdim=True)


def mha(p, pre, q_in, kv_in, key_len, causal, nh):
    """Multi-head attention. q_in (Lq,B,d), kv_in (Lk,B,d), key_len list of B ints.

    Returns out (Lq,B,d) and the probabilities (B,h,Lq,Lk).
    """
    lq, b, d = q_in.shape
    lk = kv_in.shape[0]
    dk = d // nh
    q = q_in @ p[pre + ".wq"].T + p[pre + ".bq"]                        # (Lq,B,d)
    k = kv_in @ p[pre + ".wk"].T + p[pre + ".bk"]                       # (Lk,B,d)
    v = kv_in @ p[pre + ".wv"].T + p[pre + ".bv"]
    q = q.reshape(lq, b, nh, dk).permute(1, 2, 0, 3)                    # (B,h,Lq,dk)
    k = k.reshape(lk, b, nh, dk).permute(1, 2, 0, 3)                    # (B,h,Lk,dk)
    v = v.reshape(lk, b, nh, dk).permute(1, 2, 0, 3)
    scores = q @ k.transpose(-1, -2) / math.sqrt(dk)                    # (B,h,Lq,Lk)
    kpos = torch.arange(lk)
    mask = kpos.unsqueeze(0) >= torch.tensor(key_len).unsqueeze(1)      # (B,Lk) True = padded
    mask = mask[:, None, None, :]
    if causal:
        mask = mask | (kpos.unsqueeze(0) > torch.arange(lq).unsqueeze(1))  # (Lq,Lk)
    scores = scores.masked_fill(mask, float("-inf"))
    probs = softmax_last(scores)
    ctx = (probs @ v).permute(2, 0, 1, 3).reshape(lq, b, d)             # heads concatenated
    return ctx @ p[pre + ".wo"].T + p[pre + ".bo"], probs


def encoder_forward(p, c, x, src_len):
    for l in range(c.n_enc):
        pre = f"enc.{l}"
        if c.norm == "pre":
            h = layer_norm(x, p[pre + ".ln1.g"], p[pre + ".ln1.b"])
            x = x + mha(p, pre + ".self", h, h, src_len, False, c.nh)[0]
            x = x + ffn(p, pre + ".ff", layer_norm(x, p[pre + ".ln2.g"], p[pre + ".ln2.b"]), c.act)
        else:
            x = layer_norm(x + mha(p, pre + ".self", x, x, src_len, False, c.nh)[0],
                           p[pre + ".ln1.g"], p[pre + ".ln1.b"])
            x = layer_norm(x + ffn(p, pre + ".ff", x, c.act), p[pre + ".ln2.g"], p[pre + ".ln2.b"])
    if c.norm == "pre":
        x = layer_norm(x, p["enc.ln.g"], p["enc.ln.b"])
    return x


def decoder_forward(p, c, y, memory, tgt_len, src_len):
    """Returns the decoder output (T,B,d) and the last layer's cross probabilities (B,h,T,S)."""
    cross = None
    for l in range(c.n_dec):
        pre = f"dec.{l}"
        if c.norm == "pre":
            h = layer_norm(y, p[pre + ".ln1.g"], p[pre + ".ln1.b"])
            y = y + mha(p, pre + ".self", h, h, tgt_len, True, c.nh)[0]
            h = layer_norm(y, p[pre + ".ln2.g"], p[pre + ".ln2.b"])
            a, cross = mha(p, pre + ".cross", h, memory, src_len, False, c.nh)
            y = y + a
            y = y + ffn(p, pre + ".ff", layer_norm(y, p[pre + ".ln3.g"], p[pre + ".ln3.b"]), c.act)
        else:
            y = layer_norm(y + mha(p, pre + ".self", y, y, tgt_len, True, c.nh)[0],
                           p[pre + ".ln1.g"], p[pre + ".ln1.b"])
            a, cross = mha(p, pre + ".cross", y, memory, src_len, False, c.nh)
            y = layer_norm(y + a, p[pre + ".ln2.g"], p[pre + ".ln2.b"])
            y = layer_norm(y + ffn(p, pre + ".ff", y, c.act), p[pre + ".ln3.g"], p[pre + ".ln3.b"])
    if c.norm == "pre":
        y = layer_norm(y, p["dec.ln.g"], p["dec.ln.b"])
    return y, cross


def lengths(ids):
    return [int(n) for n in (ids != PAD).sum(dim=0)]


def model_forward(p, c, src, tgt_in):
    """Returns a dict of activations: enc_in, dec_in, memory, dec_out, cross_attn, logits."""
    src_len, tgt_len = lengths(src), lengths(tgt_in)
    enc_in = embed(p["src_emb"], src, c.d)
    dec_in = embed(p["tgt_emb"], tgt_in, c.d)
    memory = encoder_forward(p, c, enc_in, src_len)
    dec_out, cross = decoder_forward(p, c, dec_in, memory, tgt_len, src_len)
    out_w = p["tgt_emb"] if c.tied else p["out_w"]
    logits = dec_out @ out_w.T + p["out_b"]
    return {"enc_in": enc_in, "dec_in": dec_in, "memory": memory, "dec_out": dec_out,
            "cross_attn": cross.mean(dim=1).permute(1, 0, 2),          # (T,B,S)
            "logits": logits}


def cross_entropy_loss(logits, tgt_out):
    m = logits.max(dim=2, keepdim=True).values
    log_z = m + torch.log(torch.exp(logits - m).sum(dim=2, keepdim=True))
    nll = -(logits - log_z).gather(2, tgt_out.unsqueeze(2)).squeeze(2)
    mask = (tgt_out != PAD).to(logits.dtype)
    return (nll * mask).sum() / mask.sum()


ACT_NAMES = ["enc_in", "dec_in", "memory", "dec_out", "cross_attn", "logits", "loss"]


def forward_backward(c, params, src, tgt_in, tgt_out):
    p = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    acts = model_forward(p, c, src, tgt_in)
    loss = cross_entropy_loss(acts["logits"], tgt_out)
    loss.backward()
    acts["loss"] = loss
    acts = {k: v.detach() for k, v in acts.items()}
    grads = {k: v.grad.detach().clone() for k, v in p.items()}
    return acts, grads


def greedy(c, params, src, steps):
    """Greedy decoding by re-running the decoder over the whole prefix at every step.

    Returns tokens (steps,B) int64 and logits (steps,B,Vt).
    """
    with torch.no_grad():
        b = src.shape[1]
        prefix = torch.full((1, b), SOS, dtype=torch.int64)
        toks, logits = [], []
        for _ in range(steps):
            lg = model_forward(params, c, src, prefix)["logits"][-1]    # (B,Vt)
            nxt = lg.argmax(dim=1)
            toks.append(nxt)
            logits.append(lg)
            prefix = torch.cat([prefix, nxt.unsqueeze(0)], dim=0)
        return torch.stack(toks), torch.stack(logits), prefix


# ---------------------------------------------------------------- checks

def max_diff(a, b):
    return (a.double() - b.double()).abs().max().item()


def check(ok, label, detail):
    print(f"  {'ok  ' if ok else 'FAIL'} {label:<50} {detail}")
    return ok


def copy_mha(m, p, pre):
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.cat([p[pre + ".wq"], p[pre + ".wk"], p[pre + ".wv"]]))
        m.in_proj_bias.copy_(torch.cat([p[pre + ".bq"], p[pre + ".bk"], p[pre + ".bv"]]))
        m.out_proj.weight.copy_(p[pre + ".wo"])
        m.out_proj.bias.copy_(p[pre + ".bo"])


def copy_ln(m, p, pre):
    with torch.no_grad():
        m.weight.copy_(p[pre + ".g"])
        m.bias.copy_(p[pre + ".b"])


def copy_ff(layer, p, pre):
    with torch.no_grad():
        layer.linear1.weight.copy_(p[pre + ".w1"])
        layer.linear1.bias.copy_(p[pre + ".b1"])
        layer.linear2.weight.copy_(p[pre + ".w2"])
        layer.linear2.bias.copy_(p[pre + ".b2"])


def check_against_nn_transformer(c, params, src, tgt_in, tgt_out, acts, grads, dtype):
    """nn.Transformer (pre) / nn.TransformerEncoder+Decoder with norm=None (post).

    Compares memory and the decoder output; in float64 also every gradient: the same
    loss is built on the modules' output (embeddings, PE, output layer as ours) and
    backpropagated through the modules (in_proj_weight.grad = cat of our wq, wk, wv grads).
    """
    nn = torch.nn
    kw = dict(dropout=0.0, activation=c.act, norm_first=(c.norm == "pre"), batch_first=False)
    if c.norm == "pre":
        tr = nn.Transformer(c.d, c.nh, c.n_enc, c.n_dec, c.ff, **kw)
        enc, dec = tr.encoder, tr.decoder
        copy_ln(enc.norm, params, "enc.ln")
        copy_ln(dec.norm, params, "dec.ln")
    else:
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(c.d, c.nh, c.ff, **kw),
                                    c.n_enc, norm=None, enable_nested_tensor=False)
        dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(c.d, c.nh, c.ff, **kw),
                                    c.n_dec, norm=None)
    for l, layer in enumerate(enc.layers):
        pre = f"enc.{l}"
        copy_mha(layer.self_attn, params, pre + ".self")
        copy_ln(layer.norm1, params, pre + ".ln1")
        copy_ln(layer.norm2, params, pre + ".ln2")
        copy_ff(layer, params, pre + ".ff")
    for l, layer in enumerate(dec.layers):
        pre = f"dec.{l}"
        copy_mha(layer.self_attn, params, pre + ".self")
        copy_mha(layer.multihead_attn, params, pre + ".cross")
        copy_ln(layer.norm1, params, pre + ".ln1")
        copy_ln(layer.norm2, params, pre + ".ln2")
        copy_ln(layer.norm3, params, pre + ".ln3")
        copy_ff(layer, params, pre + ".ff")
    enc.to(dtype).train()      # train mode (dropout 0): keeps torch off its fast path,
    dec.to(dtype).train()      # which would zero the padded rows of the encoder output
    src_pad = (src == PAD).T                                            # (B,S) True = pad
    tgt_pad = (tgt_in == PAD).T
    causal = torch.triu(torch.ones(tgt_in.shape[0], tgt_in.shape[0], dtype=torch.bool), 1)
    leaf = {n: params[n].to(dtype).clone().requires_grad_(True)
            for n in ("src_emb", "tgt_emb", "out_w", "out_b") if n in params}
    memory = enc(embed(leaf["src_emb"], src, c.d), src_key_padding_mask=src_pad)
    out = dec(embed(leaf["tgt_emb"], tgt_in, c.d), memory, tgt_mask=causal,
              tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
    which = "nn.Transformer" if c.norm == "pre" else "nn.TransformerEnc/Dec"
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    ok = True
    d1 = max_diff(memory.detach(), acts["memory"])
    ok &= check(d1 < tol, f"memory vs {which} ({str(dtype)[6:]})", f"max |diff| {d1:.2e}")
    d2 = max_diff(out.detach(), acts["dec_out"])
    ok &= check(d2 < tol, f"dec_out vs {which} ({str(dtype)[6:]})", f"max |diff| {d2:.2e}")
    if dtype != torch.float64:
        return ok
    out_w = leaf["tgt_emb"] if c.tied else leaf["out_w"]
    cross_entropy_loss(out @ out_w.T + leaf["out_b"], tgt_out).backward()
    theirs = {n: t.grad for n, t in leaf.items()}

    def take_mha(m, pre):
        for i, w in enumerate("qkv"):
            theirs[f"{pre}.w{w}"] = m.in_proj_weight.grad[i * c.d:(i + 1) * c.d]
            theirs[f"{pre}.b{w}"] = m.in_proj_bias.grad[i * c.d:(i + 1) * c.d]
        theirs[pre + ".wo"] = m.out_proj.weight.grad
        theirs[pre + ".bo"] = m.out_proj.bias.grad

    def take_ln(m, pre):
        theirs[pre + ".g"], theirs[pre + ".b"] = m.weight.grad, m.bias.grad

    def take_ff(layer, pre):
        theirs[pre + ".w1"], theirs[pre + ".b1"] = layer.linear1.weight.grad, layer.linear1.bias.grad
        theirs[pre + ".w2"], theirs[pre + ".b2"] = layer.linear2.weight.grad, layer.linear2.bias.grad

    for l, layer in enumerate(enc.layers):
        take_mha(layer.self_attn, f"enc.{l}.self")
        take_ln(layer.norm1, f"enc.{l}.ln1")
        take_ln(layer.norm2, f"enc.{l}.ln2")
        take_ff(layer, f"enc.{l}.ff")
    for l, layer in enumerate(dec.layers):
        take_mha(layer.self_attn, f"dec.{l}.self")
        take_mha(layer.multihead_attn, f"dec.{l}.cross")
        take_ln(layer.norm1, f"dec.{l}.ln1")
        take_ln(layer.norm2, f"dec.{l}.ln2")
        take_ln(layer.norm3, f"dec.{l}.ln3")
        take_ff(layer, f"dec.{l}.ff")
    if c.norm == "pre":
        take_ln(enc.norm, "enc.ln")
        take_ln(dec.norm, "dec.ln")
    same_names = sorted(theirs) == sorted(grads)
    d3 = max(max_diff(theirs[n], grads[n]) for n in grads) if same_names else float("inf")
    ok &= check(same_names and d3 < 1e-12, f"grad.* vs {which} (float64)",
                f"max |diff| {d3:.2e} over {len(grads)} tensors")
    return ok


def check_mha_against_torch(c, params, pre, dtype):
    """Our mha against nn.MultiheadAttention: self with padding + causal, cross with padding."""
    gen = torch.Generator().manual_seed(99)
    m = torch.nn.MultiheadAttention(c.d, c.nh, dropout=0.0, batch_first=False)
    copy_mha(m, params, pre)
    m.to(dtype).train()
    p = {k: v.to(dtype) for k, v in params.items()}
    xq = torch.randn(T, B, c.d, generator=gen).to(dtype)
    xk = torch.randn(S, B, c.d, generator=gen).to(dtype)
    ok = True
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    with torch.no_grad():
        for label, q_in, kv_in, lens, causal in [
                ("cross", xq, xk, SRC_LENGTHS, False), ("self causal", xq, xq, TGT_LENGTHS, True)]:
            lk = kv_in.shape[0]
            kpm = torch.arange(lk).unsqueeze(0) >= torch.tensor(lens).unsqueeze(1)
            am = torch.triu(torch.ones(q_in.shape[0], lk, dtype=torch.bool), 1) if causal else None
            ref, ref_w = m(q_in, kv_in, kv_in, key_padding_mask=kpm, attn_mask=am,
                           need_weights=True, average_attn_weights=True)
            ours, probs = mha(p, pre, q_in, kv_in, lens, causal, c.nh)
            d = max(max_diff(ref, ours), max_diff(ref_w, probs.mean(dim=1)))
            ok &= check(d < tol, f"mha {label} vs nn.MultiheadAttention ({str(dtype)[6:]})",
                        f"max |diff| {d:.2e}")
    return ok


def check_pieces():
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(4, 3, D, generator=gen, dtype=torch.float64) * 3
    g = torch.rand(D, generator=gen, dtype=torch.float64) + 0.5
    b = torch.rand(D, generator=gen, dtype=torch.float64) - 0.5
    ok = True
    d = max_diff(layer_norm(x, g, b), torch.nn.functional.layer_norm(x, (D,), g, b, 1e-5))
    ok &= check(d < 1e-12, "layer_norm vs F.layer_norm", f"max |diff| {d:.2e}")
    d = max_diff(activation(x, "gelu"), torch.nn.functional.gelu(x))
    ok &= check(d < 1e-12, "gelu vs F.gelu", f"max |diff| {d:.2e}")
    d = max_diff(activation(x, "relu"), torch.relu(x))
    ok &= check(d == 0, "relu vs torch.relu", f"max |diff| {d:.2e}")
    # PE written the other common way (the PyTorch tutorial's exp/log form).
    n = 50
    div = torch.exp(torch.arange(0, D, 2, dtype=torch.float64) * (-math.log(10000.0) / D))
    pe = torch.zeros(n, D, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(torch.arange(n, dtype=torch.float64).unsqueeze(1) * div)
    pe[:, 1::2] = torch.cos(torch.arange(n, dtype=torch.float64).unsqueeze(1) * div)
    d = max_diff(positional_encoding(n, D, torch.float64), pe)
    ok &= check(d < 1e-12, "PE vs exp/log form (50 positions)", f"max |diff| {d:.2e}")
    return ok


def check_loss_against_torch(acts, tgt_out, vt):
    ref = torch.nn.functional.cross_entropy(acts["logits"].reshape(-1, vt), tgt_out.reshape(-1),
                                            ignore_index=PAD)
    d = abs(ref.item() - acts["loss"].item())
    return check(d < 1e-12, "loss vs F.cross_entropy", f"|diff| {d:.2e}")


def check_masking(c, acts, grads, src):
    ok = True
    ca = acts["cross_attn"]                                             # (T,B,S)
    pad = ca.permute(2, 1, 0)[src == PAD]
    ok &= check(bool((pad == 0).all()), "cross_attn exactly 0 at PAD sources",
                f"{pad.numel()} entries")
    sums = ca.sum(dim=2)
    ok &= check(max_diff(sums, torch.ones_like(sums)) < 1e-12, "cross_attn rows sum to 1", "")
    ok &= check(bool((grads["src_emb"][PAD] == 0).all()), "grad.src_emb[PAD] == 0", "")
    if not c.tied:
        ok &= check(bool((grads["tgt_emb"][PAD] == 0).all()), "grad.tgt_emb[PAD] == 0", "")
    return ok


def check_float64(c, params, src, tgt_in, tgt_out, acts32, grads32, acts64, grads64):
    print("  float32 vs float64 (max |diff| / max |value|):")
    tol = 1e-5
    ok = True
    worst, wname = 0.0, ""
    for name in ACT_NAMES:
        rel = max_diff(acts32[name], acts64[name]) / acts64[name].abs().max().item()
        if rel > worst:
            worst, wname = rel, name
    ok &= check(worst < tol, "  activations and loss (worst)", f"{worst:.2e} ({wname})")
    worst, wname = 0.0, ""
    for name in grads64:
        if name.endswith(".bk"):
            continue
        rel = max_diff(grads32[name], grads64[name]) / grads64[name].abs().max().item()
        if rel > worst:
            worst, wname = rel, name
    ok &= check(worst < tol, "  grad.* but .bk (worst)", f"{worst:.2e} ({wname})")
    # Key biases: q_i . bk is the same for every key of query i, and softmax ignores a
    # per-row constant, so d loss / d bk = 0 exactly; both runs hold rounding noise only.
    scale = max(g.abs().max().item() for g in grads64.values())
    bk = [n for n in grads64 if n.endswith(".bk")]
    w64 = max(grads64[n].abs().max().item() for n in bk) / scale
    w32 = max(grads32[n].abs().max().item() for n in bk) / scale
    ok &= check(w64 < 1e-14 and w32 < 1e-6, "  grad.*.bk ~ 0 (max / max |grad|)",
                f"float64 {w64:.1e}, float32 {w32:.1e}")
    return ok


def check_gradcheck(c, params, src, tgt_in, tgt_out):
    names = list(params)
    inputs = tuple(params[n].double().clone().requires_grad_(True) for n in names)

    def loss_of(*tensors):
        acts = model_forward(dict(zip(names, tensors)), c, src, tgt_in)
        return cross_entropy_loss(acts["logits"], tgt_out)

    n = sum(t.numel() for t in inputs)
    ok = torch.autograd.gradcheck(loss_of, inputs, eps=1e-6, atol=1e-7, rtol=1e-5,
                                  raise_exception=False)
    return check(ok, "gradcheck (float64)", f"{n} parameters")


def check_incremental(c, params64, src, toks, logits, prefix):
    """One teacher-forced pass over the greedy prefix gives every step's logits (causality)."""
    with torch.no_grad():
        full = model_forward(params64, c, src, prefix[:-1])["logits"]
    d = max_diff(full, logits)
    return check(d < 1e-12, "greedy steps vs one causal pass", f"max |diff| {d:.2e}")


# ---------------------------------------------------------------- main

def to_np32(t):
    return t.detach().to(torch.float32).numpy().astype(np.float32)


def to_np_i32(t):
    return t.numpy().astype(np.int32)


def build(name, index, gradcheck):
    """Run the checks for one config; returns (ok, records)."""
    norm, act, n_enc, n_dec, tied = CONFIGS[name]
    c = Config(norm, act, n_enc, n_dec, tied)
    src, tgt_in, tgt_out = make_batch(torch.Generator().manual_seed(SEED))
    params = init_params(c, torch.Generator().manual_seed(SEED + 1 + index))
    params64 = {k: v.double() for k, v in params.items()}
    acts32, grads32 = forward_backward(c, params, src, tgt_in, tgt_out)
    acts64, grads64 = forward_backward(c, params64, src, tgt_in, tgt_out)
    print(f"{name}: norm={norm} act={act} layers={n_enc}+{n_dec} tied={int(tied)}  "
          f"loss {acts64['loss'].item():.6f}")
    ok = True
    for dtype in (torch.float32, torch.float64):
        f64 = dtype == torch.float64
        ok &= check_against_nn_transformer(c, params, src, tgt_in, tgt_out,
                                           acts64 if f64 else acts32,
                                           grads64 if f64 else grads32, dtype)
    ok &= check_mha_against_torch(c, params, "dec.0.cross", torch.float32)
    ok &= check_mha_against_torch(c, params, "dec.0.self", torch.float64)
    ok &= check_loss_against_torch(acts64, tgt_out, c.vt)
    ok &= check_masking(c, acts64, grads64, src)
    ok &= check_float64(c, params, src, tgt_in, tgt_out, acts32, grads32, acts64, grads64)
    if gradcheck:
        ok &= check_gradcheck(c, params, src, tgt_in, tgt_out)

    records = [("dims", np.array(c.dims(B, S, T), dtype=np.int32)),
               ("src", to_np_i32(src)), ("tgt_in", to_np_i32(tgt_in)),
               ("tgt_out", to_np_i32(tgt_out))]
    records += [(n, to_np32(params[n])) for n, _ in param_shapes(c)]
    records += [(n, to_np32(acts64[n]).reshape(-1) if n == "loss" else to_np32(acts64[n]))
                for n in ACT_NAMES]
    records += [("grad." + n, to_np32(grads64[n])) for n, _ in param_shapes(c)]
    if name == "pre1":
        toks, logits, prefix = greedy(c, params64, src, INCREMENTAL_STEPS)
        ok &= check_incremental(c, params64, src, toks, logits, prefix)
        toks32, logits32, _ = greedy(c, params, src, INCREMENTAL_STEPS)
        rel = max_diff(logits32, logits) / logits.abs().max().item()
        ok &= check(torch.equal(toks32, toks) and rel < 1e-5, "greedy float32 vs float64",
                    f"same tokens, logits {rel:.2e}")
        records += [("incremental.tokens", to_np_i32(toks)),
                    ("incremental.logits", to_np32(logits))]
    return ok, records


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_dir = os.path.normpath(os.path.join(here, "..", "..", "tests", "fixtures"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=default_dir, help="fixture directory")
    ap.add_argument("--only", choices=list(CONFIGS), help="one config only")
    ap.add_argument("--no-gradcheck", action="store_true", help="skip gradcheck")
    args = ap.parse_args()

    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    print(f"nmt transformer reference: B={B} S={S} T={T} d={D} h={NH} ff={FF} "
          f"Vs={VS} Vt={VT} seed={SEED}")
    ok = check_pieces()
    built = {}
    for index, name in enumerate(CONFIGS):
        if args.only and name != args.only:
            continue
        good, records = build(name, index, not args.no_gradcheck)
        ok &= good
        built[name] = records
    if not ok:
        print("reference_transformer.py: a check failed; no fixture written", file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    for name, records in built.items():
        path = os.path.join(args.out_dir, f"transformer_{name}.bin")
        size = write_fixture(path, records)
        back = read_fixture(path)
        same = list(back) == [n for n, _ in records] and all(
            np.array_equal(back[n], a) for n, a in records)
        if not check(same, f"{os.path.basename(path)} reads back", f"{len(records)} records"):
            return 1
        print(f"wrote {path} ({size} bytes, {len(records)} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
