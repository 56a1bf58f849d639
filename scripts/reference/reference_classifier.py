"""PyTorch reference for nmt's sentence classifier (model.type "classifier");
writes tests/fixtures/classifier_<name>.bin.

The classifier is the translation family's encoder (scripts/reference/reference_variants.py:
GRU or LSTM cells, L stacked layers, optionally bidirectional, same tensors, same
names, same padding semantics) followed by a pooling over the real positions and one
output layer. The encoder is not re-implemented here: encoder_forward, the cells and
the encoder's check against nn.GRU / nn.LSTM are imported from reference_variants.py.
Everything else is plain tensor ops (no F.cross_entropy, nn.GRU etc. in the model),
and autograd supplies the gradients.

    /usr/bin/python3 scripts/reference/reference_classifier.py          # writes all eight fixtures
    /usr/bin/python3 scripts/reference/reference_classifier.py --only lstm_max --no-gradcheck

The model (shapes row-major, time-major sources, PAD = 0 only at the end of a column,
every sentence has at least one real token; len_b = real tokens of column b):

    x_t      = src_emb[src[t]]                                        (B,E)
    h_t      = top-layer output of the encoder                        (S,B,H)
               unidirectional: H units; bidirectional: H/2 units per direction,
               h_t = [forward ; reverse]; zero initial states; the reverse direction
               starts at each sentence's last real token; no bridge, no decoder.
    pooled_b (B,H), over the real positions t < len_b only; pooling kind code:
      0 attention  e_t = tanh(pool_w . h_t + pool_b), a = softmax of e over the real
                   positions (exactly 0 on padding), pooled = sum_t a_t h_t
      1 last       unidirectional: h_{len_b-1}; bidirectional: [forward half of
                   h_{len_b-1} ; reverse half of h_0] (each direction's final state)
      2 mean       (1/len_b) sum_t h_t
      3 max        elementwise max_t h_t
    logits   = pooled @ out_w^T + out_b                               (B,C)
               with the bag of words (model.bag_of_words), plus for each sentence
               the sum of bow_w[v] over the distinct ids v among its real tokens
               (a word twice in a sentence counts once)
    loss     = (1/B) sum_b class_weights[y_b] * -log softmax(logits_b)[y_b]
               (the mean over examples, not divided by the sum of the weights:
               Keras class_weight / scikit-learn sample weights; equals
               F.cross_entropy(weight=w, reduction='none').mean())
    No dropout, no label smoothing.

Parameter tensors, in memory order (one flat float array in C):

    src_emb (Vs,E)
    for each layer l, for each direction (forward, then reverse if bidirectional):
        enc_w_ih<sfx> (G*U, in), enc_w_hh<sfx> (G*U, U), enc_b_ih<sfx> (G*U), enc_b_hh<sfx> (G*U)
        sfx = "" | "_reverse" | "_l1" | "_l1_reverse" | ... (reference_variants.sfx);
        G = 3 (GRU rows [r|z|n]) or 4 (LSTM rows [i|f|g|o]); U = H or H/2
        (bidirectional); in = E for layer 0, H above
    pool_w (H), pool_b (1)           attention pooling only
    out_w (C,H), out_b (C)
    bow_w (Vs,C)                     bag of words only

Before writing anything it checks, for every variant: the cells against nn.GRUCell /
nn.LSTMCell and the encoder against nn.GRU / nn.LSTM over pack_padded_sequence (both
reference_variants.py's checks); the encoder's tensor names and order against the
translation family's; the pooling against an independent per-sentence formulation
(attention also against masked_fill(-inf) + torch.softmax; last also against the
encoder's final states, which the nn.RNN check covers); the structural zeros; the loss
against F.cross_entropy(weight=..., reduction='none').mean(); max pooling free of
near-ties; float32 against a float64 run; and autograd against finite differences
(gradcheck, float64). If any check fails, no fixture is written and it exits 1.

Activations, loss and gradients in the fixtures are the float64 run's values rounded
to float32 (both runs start from the same float32 initial values), as in
reference_variants.py; the float32-vs-float64 check bounds what float32 arithmetic
can reach (tolerance 5e-6 of each tensor's largest entry).

Records of a classifier fixture (format: scripts/reference/fixture.py), in this order:

    dims           int32 [B, S, E, H, Vs, C]
    arch           int32 [cell (0 gru, 1 lstm), layers, bidirectional (0/1),
                          pooling (0 attention, 1 last, 2 mean, 3 max), bag_of_words (0/1)]
    src            int32 (S,B)
    labels         int32 (B)
    class_weights  float32 (C)
    <param>        float32 initial values, one record per tensor in the order above
    enc_states     (S,B,H) top encoder layer output. At padded positions (t >= len_b):
                   the forward direction's carried state (the output at len_b-1) and,
                   bidirectional, 0 for the reverse half (its zero start state carried
                   through the trailing pads). Only real positions need comparing.
    attn           (B,S) pooling weights, attention pooling only; exactly 0 on padding
    pooled         (B,H)
    logits         (B,C)
    loss           (1)
    grad.<param>   gradient of loss for every parameter tensor, same shapes

Compare gradients relative to each tensor's largest entry, as test_model.c does.
"""

import argparse
import collections
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture import write_fixtures  # noqa: E402
import reference_variants as rv  # noqa: E402
from reference_variants import GATES, PAD, check, max_diff, sfx  # noqa: E402

# ---------------------------------------------------------------- the classifier

CELLS = ["gru", "lstm"]
POOLINGS = ["attention", "last", "mean", "max"]      # enum order of the contract

Arch = collections.namedtuple("Arch", "cell layers bidirectional pooling bag_of_words", defaults=(False,))
Dims = collections.namedtuple("Dims", "B S E H VS C")

# Batch, source steps, embedding, hidden, source vocab, classes: small and all
# different, so a transposed or mis-strided buffer cannot pass. H is even so a
# bidirectional encoder has U = H/2 = 3 units per direction.
DIMS = Dims(B=4, S=7, E=5, H=6, VS=13, C=3)
# Real tokens per column: not sorted, S reached by one column, one sentence of a
# single token (its attention weight is exactly 1; last/mean/max are its h_0).
SRC_LENGTHS = [3, 7, 1, 5]
LABELS = [2, 0, 1, 2]                 # every class, one twice
INIT_RANGE = 1.0                      # non-embedding tensors ~ U(-1, 1): see init_params
MAX_MARGIN = 1e-3                     # max pooling: top value beats the runner-up by this

# name, architecture, class weights, seed (data and initial values): 4336 + index.
# With these, every tensor's float32-vs-float64 difference is <= 5e-7 of its largest
# entry (the smallest gradient, grad.pool_b, included) and max pooling's smallest
# gap between a maximum and its runner-up is 1.5e-2.
VARIANTS = [
    ("gru_attention", Arch("gru", 1, False, "attention"), [1.0, 1.0, 1.0], 4336),
    ("lstm_bi2_attention", Arch("lstm", 2, True, "attention"), [1.0, 1.0, 1.0], 4337),
    ("lstm_last", Arch("lstm", 1, False, "last"), [1.0, 1.0, 1.0], 4338),
    ("gru_bi_last", Arch("gru", 1, True, "last"), [1.0, 1.0, 1.0], 4339),
    ("gru_mean", Arch("gru", 1, True, "mean"), [1.0, 1.0, 1.0], 4340),
    ("lstm_max", Arch("lstm", 1, False, "max"), [1.0, 1.0, 1.0], 4341),
    ("weighted", Arch("gru", 1, False, "attention"), [0.5, 2.0, 1.25], 4342),
    ("bag_of_words", Arch("gru", 1, True, "mean", True), [1.0, 1.0, 1.0], 4343),
]


def validate(a, d):
    """The contract's configuration rules (the C config code reports these as errors)."""
    assert a.cell in CELLS and a.pooling in POOLINGS and a.layers >= 1
    assert not a.bidirectional or d.H % 2 == 0, "bidirectional needs an even H"
    assert len(SRC_LENGTHS) == d.B and min(SRC_LENGTHS) >= 1 and max(SRC_LENGTHS) <= d.S
    assert all(0 <= y < d.C for y in LABELS)


def encoder_arch(a):
    """The translation family's Arch for this classifier's encoder (what
    reference_variants' encoder functions read: cell, layers, bidirectional)."""
    return rv.arch(cell=a.cell, layers=a.layers, bidirectional=a.bidirectional)


# ---------------------------------------------------------------- parameters

def param_shapes(a, d):
    """[(name, shape)] in the contract's memory order."""
    G, H, E = GATES[a.cell], d.H, d.E
    U = H // 2 if a.bidirectional else H
    dirs = (False, True) if a.bidirectional else (False,)
    shapes = [("src_emb", (d.VS, E))]
    for l in range(a.layers):
        for rev in dirs:
            shapes += [(f"enc_w_ih{sfx(l, rev)}", (G * U, E if l == 0 else H)),
                       (f"enc_w_hh{sfx(l, rev)}", (G * U, U)),
                       (f"enc_b_ih{sfx(l, rev)}", (G * U,)),
                       (f"enc_b_hh{sfx(l, rev)}", (G * U,))]
    if a.pooling == "attention":
        shapes += [("pool_w", (H,)), ("pool_b", (1,))]
    shapes += [("out_w", (d.C, H)), ("out_b", (d.C,))]
    if a.bag_of_words:
        shapes += [("bow_w", (d.VS, d.C))]
    return shapes


def init_params(a, d, gen):
    """float32, drawn in memory order: embeddings N(0,1), every other tensor U(-1, 1)
    (nonzero biases, pool_b and out_b included, so their gradients are tested).

    Not the training initialisation's U(+-1/sqrt(H)) for the non-embedding tensors
    (the fixture supplies its values, so that is not under test), for the reason
    reference_variants.init_params gives: grad.pool_b only sees how tanh's slope
    varies over the positions (a common shift of the scores leaves the softmax
    unchanged), and with U(+-1/sqrt(H)) it is ~1e-5, so float32 noise is 1e-5..2e-4
    of it; with U(-1, 1) it is ~1e-3 and float32 stays below 1e-6 of it."""
    params = {}
    for name, shape in param_shapes(a, d):
        if name == "src_emb":
            params[name] = torch.randn(shape, generator=gen, dtype=torch.float32)
        else:
            params[name] = (torch.rand(shape, generator=gen, dtype=torch.float32) * 2 - 1) \
                * INIT_RANGE
    return params


def make_batch(d, gen):
    """Random real tokens (ids >= 4, as in the translation fixtures), PAD after the
    end of each column. Returns src int64 (S,B), labels int64 (B)."""
    src = torch.full((d.S, d.B), PAD, dtype=torch.int64)
    for b, n in enumerate(SRC_LENGTHS):
        src[:n, b] = torch.randint(4, d.VS, (n,), generator=gen)
    return src, torch.tensor(LABELS, dtype=torch.int64)


# ---------------------------------------------------------------- the model

def pool(a, p, h, src):
    """h (S,B,H) top encoder outputs -> pooled (B,H) and the weights (S,B) of
    attention pooling (None for the other kinds)."""
    S, B, H = h.shape
    lengths = (src != PAD).sum(dim=0)                                  # (B,)
    real = src != PAD                                                  # (S,B)
    if a.pooling == "attention":
        e = torch.tanh(h @ p["pool_w"] + p["pool_b"])                   # (S,B)
        weights = rv.softmax_over(e, real)                             # exactly 0 on PAD
        return (weights.unsqueeze(2) * h).sum(dim=0), weights
    if a.pooling == "last":
        last = h[lengths - 1, torch.arange(B)]                         # (B,H) at len_b-1
        if not a.bidirectional:
            return last, None
        return torch.cat([last[:, :H // 2], h[0, :, H // 2:]], dim=1), None
    m = real.unsqueeze(2).to(h.dtype)                                  # (S,B,1)
    if a.pooling == "mean":
        return (h * m).sum(dim=0) / lengths.to(h.dtype).unsqueeze(1), None
    return h.masked_fill(~real.unsqueeze(2), float("-inf")).max(dim=0).values, None


def bag(src, vs, dtype):
    """(B,Vs): 1 where id v occurs among sentence b's real tokens, else 0."""
    S, B = src.shape
    out = torch.zeros(B, vs, dtype=dtype)
    out.scatter_(1, src.T, 1.0)
    out[:, PAD] = 0
    return out


def model_forward(a, p, src):
    """Encoder, pooling, output layer (and bag of words). Returns a dict with
    enc_states (S,B,H), attn (S,B) or None, pooled (B,H), logits (B,C)."""
    mem, _ = rv.encoder_forward(encoder_arch(a), p, src)
    pooled, weights = pool(a, p, mem, src)
    logits = pooled @ p["out_w"].T + p["out_b"]
    if a.bag_of_words:
        logits = logits + bag(src, p["bow_w"].shape[0], logits.dtype) @ p["bow_w"]
    return {"enc_states": mem, "attn": weights, "pooled": pooled, "logits": logits}


def weighted_loss(logits, labels, class_weights):
    """Mean over the B examples of class_weights[y] * -log softmax(logits)[y]."""
    m = logits.max(dim=1, keepdim=True).values
    log_z = m + torch.log(torch.exp(logits - m).sum(dim=1, keepdim=True))   # (B,1)
    nll = -(logits - log_z).gather(1, labels.unsqueeze(1)).squeeze(1)       # (B,)
    return (class_weights.to(logits.dtype)[labels] * nll).mean()


def forward_backward(a, params, src, labels, class_weights):
    """Run the model and backprop on copies of params. Returns (leaves with .grad, outputs)."""
    p = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    out = model_forward(a, p, src)
    out["loss"] = weighted_loss(out["logits"], labels, class_weights)
    out["loss"].backward()
    return p, {k: (None if v is None else v.detach()) for k, v in out.items()}


# ---------------------------------------------------------------- checks

def check_names(a, d):
    """The encoder's tensors are the translation family's: same names, shapes, order."""
    family = [(n, tuple(s)) for n, s in rv.param_shapes(
        encoder_arch(a), rv.Dims(B=d.B, S=d.S, T=1, E=d.E, H=d.H, VS=d.VS, VT=d.C))
        if n == "src_emb" or n.startswith("enc_")]
    ours = [(n, tuple(s)) for n, s in param_shapes(a, d)][:len(family)]
    return check(ours == family, "encoder tensors == translation family's",
                 f"{len(family)} tensors")


def check_pooling(a, out, src):
    """Pooling against a per-sentence formulation over h[:len_b, b]."""
    h, pooled = out["enc_states"], out["pooled"]
    S, B, H = h.shape
    lengths = (src != PAD).sum(dim=0)
    ref, ref_w = [], torch.zeros(S, B, dtype=h.dtype)
    for b in range(B):
        hb = h[:lengths[b], b]                                         # (len_b,H)
        if a.pooling == "attention":
            w = torch.softmax(torch.tanh(hb @ out["pool_w"] + out["pool_b"]), dim=0)
            ref_w[:lengths[b], b] = w
            ref.append((w.unsqueeze(1) * hb).sum(dim=0))
        elif a.pooling == "last":
            ref.append(torch.cat([hb[-1, :H // 2], hb[0, H // 2:]]) if a.bidirectional
                       else hb[-1])
        elif a.pooling == "mean":
            ref.append(hb.mean(dim=0))
        else:
            ref.append(hb.max(dim=0).values)
    d = max_diff(torch.stack(ref), pooled)
    ok = check(d < 1e-12, f"{a.pooling} pooling vs per-sentence", f"max |diff| {d:.2e}")
    if a.pooling == "attention":
        e = torch.tanh(h @ out["pool_w"] + out["pool_b"]).masked_fill(src == PAD, float("-inf"))
        w = torch.softmax(e, dim=0)
        d = max(max_diff(w, out["attn"]), max_diff(ref_w, out["attn"]))
        ok &= check(d < 1e-12, "attn vs masked_fill + torch.softmax", f"max |diff| {d:.2e}")
        ok &= check(bool((out["attn"][src == PAD] == 0).all()), "attn exactly 0 on PAD",
                    f"{int((src == PAD).sum())} entries")
        sums = out["attn"].sum(dim=0)
        ok &= check(max_diff(sums, torch.ones_like(sums)) < 1e-12, "attn columns sum to 1")
    return ok


def check_bag(a, p, out, src):
    """The bag-of-words term against a per-sentence sum over the set of its ids, and
    the batch holds a sentence with an id twice (so that counting once is tested)."""
    if not a.bag_of_words:
        return True
    lengths = (src != PAD).sum(dim=0)
    base = out["pooled"] @ p["out_w"].T + p["out_b"]
    ref = torch.stack([base[b] + sum(p["bow_w"][v] for v in set(src[:lengths[b], b].tolist()))
                       for b in range(src.shape[1])])
    d = max_diff(ref, out["logits"])
    ok = check(d < 1e-12, "bag of words vs per-sentence set sum", f"max |diff| {d:.2e}")
    repeats = sum(len(src[:n, b].tolist()) - len(set(src[:n, b].tolist())) for b, n in enumerate(lengths))
    return ok & check(repeats > 0, "a sentence repeats an id", f"{repeats} repeats")


def check_last_vs_finals(a, params, out, src):
    """Last pooling = the top layer's final states, which check_encoder_against_torch
    compares with nn.RNN's h_n."""
    if a.pooling != "last":
        return True
    _, finals = rv.encoder_forward(encoder_arch(a), params, src)
    top = finals[-1]
    final = torch.cat([top[0][0], top[1][0]], dim=1) if a.bidirectional else top[0]
    d = max_diff(final, out["pooled"])
    return check(d < 1e-12, "last pooling == encoder final states", f"max |diff| {d:.2e}")


def check_max_margin(a, out, src, label):
    """Max pooling: the maximum is unique by MAX_MARGIN in every (b, j), so the
    gradient's target position is unambiguous (float32, finite differences)."""
    if a.pooling != "max":
        return True
    h = out["enc_states"]
    lengths = (src != PAD).sum(dim=0)
    margin = float("inf")
    for b in range(h.shape[1]):
        if lengths[b] >= 2:
            top2 = h[:lengths[b], b].topk(2, dim=0).values              # (2,H)
            margin = min(margin, (top2[0] - top2[1]).min().item())
    return check(margin > MAX_MARGIN, f"max pooling without near-ties ({label})",
                 f"min gap {margin:.2e} (> {MAX_MARGIN})")


def check_structure(a, p, out, src, labels, class_weights):
    """Structural facts the C code must reproduce exactly, and the loss."""
    ok = True
    S, B = src.shape
    lengths = (src != PAD).sum(dim=0)
    es = out["enc_states"]
    H = es.shape[2]
    Hf = H // 2 if a.bidirectional else H
    carried = all(torch.equal(es[t, b, :Hf], es[lengths[b] - 1, b, :Hf])
                  for b in range(B) for t in range(lengths[b], S))
    ok &= check(carried, "forward enc state carried through PAD")
    if a.bidirectional:
        zero = all(bool((es[t, b, Hf:] == 0).all()) for b in range(B) for t in range(lengths[b], S))
        ok &= check(zero, "reverse enc state 0 at trailing PAD")
    ok &= check(bool((p["src_emb"].grad[PAD] == 0).all()), "grad.src_emb[PAD] == 0")
    dead = [n for n, t in p.items() if not bool((t.grad != 0).any())]
    ok &= check(not dead, "every parameter tensor has a gradient", ", ".join(dead))
    ref = torch.nn.functional.cross_entropy(
        out["logits"], labels, weight=class_weights.to(out["logits"].dtype),
        reduction="none").mean()
    d = abs(ref.item() - out["loss"].item())
    ok &= check(d < 1e-12, "loss vs F.cross_entropy(weight, none).mean", f"|diff| {d:.2e}")
    return ok


OUTPUTS = ("enc_states", "attn", "pooled", "logits", "loss")


def float64_diffs(out32, p32, out64, p64):
    """Worst float32-vs-float64 difference, absolute and relative to each tensor's
    largest entry: (abs, rel, name) for the activations and for the gradients."""
    acts = [(max_diff(out32[n], out64[n]), n, out64[n].abs().max().item())
            for n in OUTPUTS if out64[n] is not None]
    grads = [(max_diff(p32[n].grad, p64[n].grad), n, p64[n].grad.abs().max().item())
             for n in p32]
    return ((max(d for d, _, _ in acts), *max((d / s, n) for d, n, s in acts)),
            (max(d for d, _, _ in grads), *max((d / s, n) for d, n, s in grads)))


def check_float64(diffs):
    """The C code computes in float32; this bounds how far an exact float32
    implementation can be from the (float64) fixture values. Tolerance 5e-6."""
    tol = 5e-6
    ok = True
    for label, (d_abs, d_rel, name) in zip(("activations", "grad.*"), diffs):
        ok &= check(d_rel < tol, f"float32 vs float64: {label} (worst)",
                    f"rel {d_rel:.2e} ({name}), abs {d_abs:.2e}")
    return ok


def check_gradcheck(a, params, src, labels, class_weights):
    names = list(params)
    inputs = tuple(params[n].double().clone().requires_grad_(True) for n in names)

    def loss_of(*tensors):
        out = model_forward(a, dict(zip(names, tensors)), src)
        return weighted_loss(out["logits"], labels, class_weights)

    n = sum(t.numel() for t in inputs)
    ok = torch.autograd.gradcheck(loss_of, inputs, eps=1e-6, atol=1e-7, rtol=1e-5,
                                  raise_exception=False)
    return check(ok, "gradcheck (float64)", f"{n} parameters")


# ---------------------------------------------------------------- main

def build(name, a, weights, seed, gradcheck):
    """Run and check one variant. Returns (ok, records, float64 diffs)."""
    d = DIMS._replace(C=len(weights))
    validate(a, d)
    print(f"{name}: {a.cell} L={a.layers} bi={int(a.bidirectional)} pooling={a.pooling} bow={int(a.bag_of_words)} "
          f"weights={weights}  dims {tuple(d)} seed {seed}")
    gen = torch.Generator().manual_seed(seed)
    src, labels = make_batch(d, gen)
    params = init_params(a, d, gen)
    class_weights = torch.tensor(weights, dtype=torch.float32)
    # The fixture gets the float64 run's values rounded to float32 (the initial
    # values are float32 already, so both runs start from the same point).
    p32, out32 = forward_backward(a, params, src, labels, class_weights)
    p64, out = forward_backward(a, {k: v.double() for k, v in params.items()},
                                src, labels, class_weights)
    print(f"  loss {out['loss'].item():.6f}, {sum(t.numel() for t in params.values())} parameters "
          f"in {len(params)} tensors")
    ok = check_names(a, d)
    ok &= check_max_margin(a, out32, src, "float32")
    ok &= check_max_margin(a, out, src, "float64")
    diffs = float64_diffs(out32, p32, out, p64)
    ok &= check_float64(diffs)
    ok &= check_pooling(a, dict(out, **{k: p64[k].detach() for k in ("pool_w", "pool_b")
                                        if k in p64}), src)
    ok &= check_last_vs_finals(a, {k: v.double() for k, v in params.items()}, out, src)
    ok &= check_bag(a, {k: v.double() for k, v in params.items()}, out, src)
    ok &= check_structure(a, p64, out, src, labels, class_weights)
    ok &= rv.check_encoder_against_torch(encoder_arch(a), params, src, out32)
    if gradcheck:
        ok &= check_gradcheck(a, params, src, labels, class_weights)

    def f32(t):
        return t.detach().numpy().astype(np.float32)

    def i32(t):
        return t.numpy().astype(np.int32)

    records = [("dims", np.array(list(d), dtype=np.int32)),
               ("arch", np.array([CELLS.index(a.cell), a.layers, int(a.bidirectional),
                                  POOLINGS.index(a.pooling), int(a.bag_of_words)], dtype=np.int32)),
               ("src", i32(src)), ("labels", i32(labels)),
               ("class_weights", f32(class_weights))]
    records += [(n, f32(params[n])) for n in params]
    records += [("enc_states", f32(out["enc_states"]))]
    if out["attn"] is not None:
        records += [("attn", f32(out["attn"].T))]                      # (B,S)
    records += [(n, f32(out[n])) for n in ("pooled", "logits")]
    records += [("loss", f32(out["loss"]).reshape(1))]
    records += [("grad." + n, f32(p64[n].grad)) for n in params]
    return ok, records, diffs


def main():
    start = time.time()
    here = os.path.dirname(os.path.abspath(__file__))
    fixtures = os.path.normpath(os.path.join(here, "..", "..", "tests", "fixtures"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=fixtures, help="directory for classifier_<name>.bin")
    ap.add_argument("--only", action="append", choices=[v[0] for v in VARIANTS],
                    help="write only this variant (repeatable)")
    ap.add_argument("--no-gradcheck", action="store_true", help="skip the gradcheck")
    args = ap.parse_args()

    torch.set_num_threads(1)        # same reduction order every run
    print("shared checks:")
    ok = rv.check_cells()
    built, summary = [], []
    for name, a, weights, seed in VARIANTS:
        if args.only and name not in args.only:
            continue
        v_ok, records, diffs = build(name, a, weights, seed, not args.no_gradcheck)
        ok &= v_ok
        built.append((name, records))
        summary.append((name, diffs))
    print("float32 vs float64, worst per variant (relative to the tensor's largest entry):")
    for name, ((a_abs, a_rel, a_n), (g_abs, g_rel, g_n)) in summary:
        print(f"  {name:<20} activations {a_rel:.2e} ({a_n}; abs {a_abs:.2e})   "
              f"grads {g_rel:.2e} ({g_n}; abs {g_abs:.2e})")
    if not ok:
        print("reference_classifier.py: a check failed; no fixture written", file=sys.stderr)
        return 1
    if not write_fixtures(args.out, "classifier", built):
        return 1
    print(f"done in {time.time() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
