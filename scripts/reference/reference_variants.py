"""PyTorch reference for the issue-4 model family; writes tests/fixtures/variant_<name>.bin.

scripts/reference/reference.py specifies the base model (GRU, one layer, Bahdanau attention).
This script specifies the whole family of /work/notes/issue4.md ("the contract"):
GRU or LSTM cells, L stacked layers, a bidirectional encoder with a bridge, and six
attention kinds (Bahdanau; Luong dot, general, concat; Luong local-m and local-p),
with optional input feeding, scaled scores and tied output embeddings. Like
reference.py it uses only plain tensor ops (no nn.GRU, nn.LSTM, pack_padded_sequence
or F.cross_entropy), so every formula can be read next to its C counterpart, and
autograd supplies the gradients.

    /usr/bin/python3 scripts/reference/reference_variants.py        # writes all variant fixtures
    /usr/bin/python3 scripts/reference/reference_variants.py --only lstm --no-gradcheck

The output is deterministic. Before writing anything it checks, for every variant:
the cells against nn.GRUCell / nn.LSTMCell; the encoder (outputs at real positions
and final states) against nn.GRU / nn.LSTM over pack_padded_sequence; the loss
against F.cross_entropy; the structural zeros (padding, local windows); float32
against a float64 run; and autograd against finite differences (gradcheck, float64).
It also checks that the base architecture reproduces tests/fixtures/reference.bin.
If any check fails, no fixture is written.

Activations, loss and gradients in the fixtures are the float64 run's values rounded
to float32 (both runs start from the same float32 initial values), so a float32
C implementation is compared with the exact values, not with PyTorch's own float32
rounding; the float32-vs-float64 check bounds what float32 arithmetic can reach
(at most 2e-6 of each tensor's largest entry here).

Records of a variant fixture (format: scripts/reference/fixture.py), in this order:

    dims        int32 [B, S, T, E, H, Vs, Vt]
    arch        int32 [cell (0 gru, 1 lstm), layers, bidirectional (0/1),
                       attention (0 bahdanau, 1 luong_dot, 2 luong_general, 3 luong_concat,
                              4 local_monotonic, 5 local_predictive),
                       input_feed (0/1), window D (0 when attention is not local),
                       scaled (0/1), tie_embeddings (0/1)]
    src, tgt_in, tgt_out  int32 (S,B), (T,B), (T,B); PAD = 0, padding only at the end
    <param>     float32 initial values, one record per tensor in the contract's order
                (tie_embeddings: no out_w record; tgt_emb is the output matrix too)
    enc_states  (S,B,H) top encoder layer output. At padded positions: the forward
                direction's carried state (the state after the last real token) and,
                bidirectional, 0 for the reverse half (its zero start state carried
                through the trailing pads). Real positions are what a test must compare.
    attn        (T,B,S) attention weights of decoder step t (Bahdanau: computed from
                s_{t-1}; Luong kinds: from s_t). Exactly 0 at padded sources and,
                local kinds, outside the window. Local rows do NOT sum to 1.
    logits      (T,B,Vt) every step, padded target steps included (the decoder runs
                over them, feeding tgt_in = PAD; the loss masks them)
    loss        (1)
    grad.<param>  gradient of loss for every tensor (tied: tgt_emb's is the sum of both uses)

Compare gradients relative to each tensor's largest entry, as test_model.c does.
"""

import argparse
import collections
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture import read_fixture, write_fixtures  # noqa: E402
from reference import PAD, SOS, EOS, cross_entropy_loss, gru_cell  # noqa: E402

# ---------------------------------------------------------------- the family

CELLS = ["gru", "lstm"]
ATTENTIONS = ["bahdanau", "luong_dot", "luong_general", "luong_concat",
              "local_monotonic", "local_predictive"]          # enum order of the contract
LOCAL = ("local_monotonic", "local_predictive")
GATES = {"gru": 3, "lstm": 4}    # GRU rows [r | z | n], LSTM rows [i | f | g | o] (PyTorch)

Arch = collections.namedtuple(
    "Arch", "cell layers bidirectional attention input_feed window scaled tie")
Dims = collections.namedtuple("Dims", "B S T E H VS VT")


def arch(cell="gru", layers=1, bidirectional=False, attention="bahdanau", input_feed=False,
         window=0, scaled=False, tie=False):
    return Arch(cell, layers, bidirectional, attention, input_feed, window, scaled, tie)


# Batch, source steps, target steps, embedding, hidden, source vocab, target vocab:
# small and all different, so a transposed or mis-strided buffer cannot pass.
# Tied embeddings need E == H. H is even so a bidirectional encoder has He = H/2 = 4.
DIMS = Dims(B=3, S=6, T=5, E=7, H=8, VS=13, VT=11)
DIMS_TIED = DIMS._replace(E=DIMS.H)
# Real tokens per row. Not sorted by length (nothing in the contract needs sorted
# batches), every row's source and target lengths differ, and each of S and T is
# reached by exactly one row so the others have padding.
SRC_LENGTHS = [4, 6, 2]
TGT_LENGTHS = [5, 2, 4]

# name, architecture, seed (data and initial values): 1234 + index. With these,
# local_predictive's p_t all stay >= 0.015 away from a window edge (checked below).
VARIANTS = [
    ("luong_general_feed", arch(attention="luong_general", input_feed=True), 1234),
    ("bidirectional", arch(bidirectional=True), 1235),
    ("layers2", arch(layers=2), 1236),
    ("lstm", arch(cell="lstm"), 1237),
    ("lstm_bi2_concat", arch(cell="lstm", layers=2, bidirectional=True,
                             attention="luong_concat", input_feed=True), 1238),
    ("luong_dot_scaled", arch(attention="luong_dot", scaled=True), 1239),
    ("local_monotonic", arch(attention="local_monotonic", window=2, input_feed=True), 1240),
    ("local_predictive", arch(attention="local_predictive", window=2, scaled=True, tie=True),
     1241),
]
MARGIN = 1e-3     # min distance of a predictive p_t from an integer (a window edge |j-p| = D)


def validate(a, d):
    """The contract's configuration rules (the C config code reports these as errors)."""
    assert a.cell in CELLS and a.attention in ATTENTIONS and a.layers >= 1
    assert not (a.input_feed and a.attention == "bahdanau"), "input_feed needs a Luong kind"
    assert not a.bidirectional or d.H % 2 == 0, "bidirectional needs an even H"
    assert not a.tie or d.E == d.H, "tie_embeddings needs E == H"
    assert (a.window >= 1) == (a.attention in LOCAL), "window D >= 1 exactly for local kinds"
    # "scaled" is defined only for the dot-product scores (dot, general, local).
    assert not a.scaled or a.attention in ("luong_dot", "luong_general") + LOCAL


# ---------------------------------------------------------------- parameters

def sfx(l, rev):
    return (f"_l{l}" if l > 0 else "") + ("_reverse" if rev else "")


def lsfx(l):
    return f"_l{l}" if l > 0 else ""


def param_shapes(a, d):
    """[(name, shape)] in the contract's memory order (one flat float array in C)."""
    G, H, E = GATES[a.cell], d.H, d.E
    He = H // 2 if a.bidirectional else H
    dirs = (False, True) if a.bidirectional else (False,)
    query = a.attention in ("bahdanau", "luong_concat")
    shapes = [("src_emb", (d.VS, E))]
    for l in range(a.layers):
        for rev in dirs:
            shapes += [(f"enc_w_ih{sfx(l, rev)}", (G * He, E if l == 0 else H)),
                       (f"enc_w_hh{sfx(l, rev)}", (G * He, He)),
                       (f"enc_b_ih{sfx(l, rev)}", (G * He,)),
                       (f"enc_b_hh{sfx(l, rev)}", (G * He,))]
    if a.bidirectional:
        for l in range(a.layers):
            shapes += [(f"bridge_w{lsfx(l)}", (H, H)), (f"bridge_b{lsfx(l)}", (H,))]
    shapes.append(("tgt_emb", (d.VT, E)))
    if a.attention in ("bahdanau", "luong_concat"):
        shapes += [("att_w_key", (H, H)), ("att_v", (H,))]
    if a.attention in ("luong_general",) + LOCAL:
        shapes.append(("att_w", (H, H)))
    if a.attention == "local_predictive":
        shapes += [("att_w_pos", (H, H)), ("att_v_pos", (H,))]
    if a.attention != "bahdanau":
        shapes.append(("att_w_out", (H, 2 * H)))
    for l in range(a.layers):
        top = l == a.layers - 1
        dec_in = (E + H if (a.attention == "bahdanau" or a.input_feed) else E) if l == 0 else H
        shapes += [(f"dec_w_ih{lsfx(l)}", (G * H, dec_in)), (f"dec_w_hh{lsfx(l)}", (G * H, H))]
        if top and query:
            shapes.append(("att_w_query", (H, H)))
        shapes += [(f"dec_b_ih{lsfx(l)}", (G * H,)), (f"dec_b_hh{lsfx(l)}", (G * H,))]
        if top and query:
            shapes.append(("att_b_query", (H,)))
    if not a.tie:
        shapes.append(("out_w", (d.VT, H)))
    shapes.append(("out_b", (d.VT,)))
    return shapes


def init_params(a, d, gen):
    """Every tensor uniform in [-1, 1), float32, drawn in memory order.

    Not the contract's training initialisation (embeddings N(0,1), U(+-1/sqrt(He))
    encoder, U(+-1/sqrt(H)) elsewhere): the fixture supplies its values, so that
    initialisation is not under test here, and with it the attention keys are so
    small that tanh(k_j + q) is nearly linear in q, which makes the query gradients
    nearly cancel (grad.att_w_query ~ 3e-7 against ~1e-2 elsewhere, with float32
    noise of 5e-6 of that). The wider range keeps every gradient well above
    float32 rounding noise, as reference.py's does.
    """
    return {name: torch.rand(shape, generator=gen, dtype=torch.float32) * 2 - 1
            for name, shape in param_shapes(a, d)}


def make_batch(d, gen):
    """reference.py's data scheme: random real tokens (ids >= 4), PAD after the end;
    tgt_in = SOS + words, tgt_out = words + EOS. int64 (S,B), (T,B), (T,B)."""
    src = torch.full((d.S, d.B), PAD, dtype=torch.int64)
    tgt_in = torch.full((d.T, d.B), PAD, dtype=torch.int64)
    tgt_out = torch.full((d.T, d.B), PAD, dtype=torch.int64)
    for b in range(d.B):
        n = SRC_LENGTHS[b]
        src[:n, b] = torch.randint(4, d.VS, (n,), generator=gen)
        n = TGT_LENGTHS[b]
        words = torch.randint(4, d.VT, (n - 1,), generator=gen)
        tgt_in[0, b] = SOS
        tgt_in[1:n, b] = words
        tgt_out[:n - 1, b] = words
        tgt_out[n - 1, b] = EOS
    return src, tgt_in, tgt_out


# ---------------------------------------------------------------- cells

def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """One LSTM step, PyTorch's formulation. x (B,in), h, c (B,n) -> h', c' (B,n)."""
    g = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh              # (B,4n)
    g_i, g_f, g_g, g_o = g.chunk(4, dim=1)                 # gate rows [i | f | g | o]
    c_new = torch.sigmoid(g_f) * c + torch.sigmoid(g_i) * torch.tanh(g_g)
    h_new = torch.sigmoid(g_o) * torch.tanh(c_new)
    return h_new, c_new


def cell_step(a, p, prefix, suffix, x, state):
    """One step of the RNN whose tensors are <prefix>_w_ih<suffix> etc.

    state is a tuple: (h,) for GRU, (h, c) for LSTM. Returns the new tuple.
    """
    w = [p[f"{prefix}_{k}{suffix}"] for k in ("w_ih", "w_hh", "b_ih", "b_hh")]
    if a.cell == "gru":
        return (gru_cell(x, state[0], *w),)
    return lstm_cell(x, state[0], state[1], *w)


def zero_state(a, batch, units, dtype):
    return tuple(torch.zeros(batch, units, dtype=dtype) for _ in range(GATES[a.cell] - 2))


# ---------------------------------------------------------------- encoder

def run_direction(a, p, suffix, xs, src, reverse):
    """One encoder direction over a layer's inputs xs (list of S tensors (B,in)).

    Starts from the zero state; forward runs t = 0..S-1, reverse t = S-1..0. At a
    padded position the state (h and c) is carried unchanged, so the forward final
    state is the one after the last real token, and the reverse direction stays 0
    through trailing pads and effectively starts at the last real token.
    Returns outputs (list of S tensors (B,n): h after position t) and the final state.
    """
    S, B = src.shape
    units = p[f"enc_w_hh{suffix}"].shape[1]
    state = zero_state(a, B, units, xs[0].dtype)
    outs = [None] * S
    for t in (reversed(range(S)) if reverse else range(S)):
        new = cell_step(a, p, "enc", suffix, xs[t], state)
        m = (src[t] != PAD).to(xs[0].dtype).unsqueeze(1)             # (B,1) 1 = real token
        state = tuple(m * n + (1 - m) * o for n, o in zip(new, state))
        outs[t] = state[0]
    return outs, state


def encoder_forward(a, p, src):
    """src (S,B) -> memory (S,B,H) = top layer outputs, and per layer the final
    state: (h,) / (h, c) unidirectional, (forward final, reverse final) bidirectional."""
    xs = [p["src_emb"][src[t]] for t in range(src.shape[0])]          # layer-0 input, (B,E)
    finals = []
    for l in range(a.layers):
        fwd, f_final = run_direction(a, p, sfx(l, False), xs, src, reverse=False)
        if a.bidirectional:
            rev, r_final = run_direction(a, p, sfx(l, True), xs, src, reverse=True)
            xs = [torch.cat([f, r], dim=1) for f, r in zip(fwd, rev)]  # (B,H) = [fwd ; rev]
            finals.append((f_final, r_final))
        else:
            xs = fwd
            finals.append(f_final)
    return torch.stack(xs), finals


def decoder_init(a, p, finals):
    """Initial decoder state per layer (a tuple like cell_step's).

    Unidirectional: the encoder layer's final (h, c). Bidirectional:
    h = tanh(bridge_w [h_fwd ; h_rev] + bridge_b), LSTM c = [c_fwd ; c_rev].
    """
    if not a.bidirectional:
        return list(finals)
    states = []
    for l, (f, r) in enumerate(finals):
        h = torch.tanh(torch.cat([f[0], r[0]], dim=1) @ p[f"bridge_w{lsfx(l)}"].T
                       + p[f"bridge_b{lsfx(l)}"])
        states.append((h,) if a.cell == "gru" else (h, torch.cat([f[1], r[1]], dim=1)))
    return states


# ---------------------------------------------------------------- attention

def softmax_over(e, allowed):
    """Softmax over dim 0 (source positions) restricted to allowed (S,B) bool;
    exactly 0 elsewhere."""
    e = e.masked_fill(~allowed, float("-inf"))
    w = torch.exp(e - e.max(dim=0, keepdim=True).values)
    return w / w.sum(dim=0, keepdim=True)


def attention_weights(a, p, mem, lengths, s, t):
    """Weights a (S,B) over the memory mem (S,B,H) for decoder step t with state s (B,H).

    Bahdanau: s is the previous top state s_{t-1}; every other kind: the new one s_t.
    Also returns p_t (B,) for local kinds (None otherwise).
    """
    S, B, H = mem.shape
    src_mask = torch.arange(S).unsqueeze(1) < lengths.unsqueeze(0)    # (S,B)
    scale = 1 / math.sqrt(H) if a.scaled else 1.0
    if a.attention in ("bahdanau", "luong_concat"):
        q = s @ p["att_w_query"].T + p["att_b_query"]                 # (B,H)
        e = torch.tanh(mem @ p["att_w_key"].T + q.unsqueeze(0)) @ p["att_v"]   # (S,B)
        return softmax_over(e, src_mask), None
    if a.attention == "luong_dot":
        e = (mem * s.unsqueeze(0)).sum(dim=2) * scale                 # s . h_j
        return softmax_over(e, src_mask), None
    e = ((mem @ p["att_w"].T) * s.unsqueeze(0)).sum(dim=2) * scale    # s . (att_w h_j)
    if a.attention == "luong_general":
        return softmax_over(e, src_mask), None
    # Local attention: a window of half-width D around p_t, Gaussian sigma = D/2.
    dtype = mem.dtype
    if a.attention == "local_monotonic":
        pos = torch.clamp(torch.full((B,), t, dtype=torch.int64), max=lengths - 1).to(dtype)
    else:
        pos = lengths.to(dtype) * torch.sigmoid(torch.tanh(s @ p["att_w_pos"].T) @ p["att_v_pos"])
    dist = torch.arange(S, dtype=dtype).unsqueeze(1) - pos.unsqueeze(0)        # (S,B) j - p_t
    window = src_mask & (dist.detach().abs() <= a.window)     # membership: no gradient
    sigma = a.window / 2
    weights = softmax_over(e, window) * torch.exp(-dist * dist / (2 * sigma * sigma))
    return weights, pos


# ---------------------------------------------------------------- the model

def model_forward(a, p, src, tgt_in):
    """Encoder, attention decoder, output layer. Returns a dict with
    enc_states (S,B,H), attn (T,B,S), logits (T,B,Vt), pos (T,B) local p_t or None.
    The decoder runs over padded target steps too; the loss masks them."""
    mem, finals = encoder_forward(a, p, src)
    lengths = (src != PAD).sum(dim=0)                                  # (B,) real tokens
    states = decoder_init(a, p, finals)
    out_w = p["tgt_emb"] if a.tie else p["out_w"]
    H = mem.shape[2]
    feed = torch.zeros(src.shape[1], H, dtype=mem.dtype)              # ht_{-1} = 0
    attn, logits, positions = [], [], []
    for t in range(tgt_in.shape[0]):
        emb = p["tgt_emb"][tgt_in[t]]                                  # (B,E)
        if a.attention == "bahdanau":
            weights, pos = attention_weights(a, p, mem, lengths, states[-1][0], t)
            context = (weights.unsqueeze(2) * mem).sum(dim=0)          # (B,H)
            x = torch.cat([emb, context], dim=1)                       # (B,E+H)
        else:
            x = torch.cat([emb, feed], dim=1) if a.input_feed else emb
        for l in range(a.layers):
            states[l] = cell_step(a, p, "dec", lsfx(l), x, states[l])
            x = states[l][0]                                           # input of layer l+1
        if a.attention == "bahdanau":
            out = x                                                    # o_t = s^{L-1}_t
        else:
            weights, pos = attention_weights(a, p, mem, lengths, x, t)
            context = (weights.unsqueeze(2) * mem).sum(dim=0)
            out = torch.tanh(torch.cat([context, x], dim=1) @ p["att_w_out"].T)   # ht_t
            feed = out
        logits.append(out @ out_w.T + p["out_b"])                      # (B,Vt)
        attn.append(weights.T)                                         # (B,S)
        positions.append(pos)
    return {"enc_states": mem, "attn": torch.stack(attn), "logits": torch.stack(logits),
            "pos": None if positions[0] is None else torch.stack(positions)}


def forward_backward(a, params, src, tgt_in, tgt_out):
    """Run the model and backprop on copies of params. Returns (leaves with .grad, outputs)."""
    p = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    out = model_forward(a, p, src, tgt_in)
    out["loss"] = cross_entropy_loss(out["logits"], tgt_out)
    out["loss"].backward()
    return p, {k: (None if v is None else v.detach()) for k, v in out.items()}


# ---------------------------------------------------------------- checks

def max_diff(x, y):
    return (x.double() - y.double()).abs().max().item()


def check(ok, label, detail=""):
    print(f"  {'ok  ' if ok else 'FAIL'} {label:<40} {detail}")
    return bool(ok)


def check_cells():
    """gru_cell and lstm_cell equal torch's cells with the same weights."""
    gen = torch.Generator().manual_seed(7)
    ok = True
    for name, cell in (("gru", torch.nn.GRUCell(5, 4)), ("lstm", torch.nn.LSTMCell(5, 4))):
        x, h, c = (torch.rand(3, n, generator=gen) - 0.5 for n in (5, 4, 4))
        w = (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)
        with torch.no_grad():
            if name == "gru":
                d = max_diff(cell(x, h), gru_cell(x, h, *w))
            else:
                d = max(max_diff(u, v) for u, v in zip(cell(x, (h, c)), lstm_cell(x, h, c, *w)))
        ok &= check(d < 1e-6, f"{name}_cell vs nn.{name.upper()}Cell", f"max |diff| {d:.2e}")
    return ok


def check_encoder_against_torch(a, params, src, out):
    """Outputs at real positions and final states equal nn.GRU/nn.LSTM over
    pack_padded_sequence: the contract's carry semantics are exactly packing."""
    S, B = src.shape
    H = out["enc_states"].shape[2]
    He = H // 2 if a.bidirectional else H
    E = params["src_emb"].shape[1]
    rnn = (torch.nn.GRU if a.cell == "gru" else torch.nn.LSTM)(
        E, He, num_layers=a.layers, bidirectional=a.bidirectional)
    dirs = (False, True) if a.bidirectional else (False,)
    with torch.no_grad():
        for l in range(a.layers):
            for rev in dirs:
                for k in ("w_ih", "w_hh", "b_ih", "b_hh"):
                    torch_name = ("weight_" if k[0] == "w" else "bias_") + k[2:] + f"_l{l}" + \
                        ("_reverse" if rev else "")
                    getattr(rnn, torch_name).copy_(params[f"enc_{k}{sfx(l, rev)}"])
        lengths = (src != PAD).sum(dim=0)
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            params["src_emb"][src], lengths, enforce_sorted=False)
        y, h_n = rnn(packed)
        y, _ = torch.nn.utils.rnn.pad_packed_sequence(y, total_length=S)       # 0 at pads
        mask = (src != PAD).unsqueeze(2).float()
        d_out = max_diff(y * mask, out["enc_states"] * mask)
        # Our final states, in nn.RNN's h_n order (layer-major, then direction).
        _, finals = encoder_forward(a, params, src)
        flat = [f for pair in finals for f in (pair if a.bidirectional else (pair,))]
        h_n = h_n if a.cell == "lstm" else (h_n,)
        d_fin = max(max_diff(h_n[k][i], flat[i][k]) for k in range(len(h_n))
                    for i in range(len(flat)))
    return check(max(d_out, d_fin) < 1e-5, "encoder vs nn.RNN over packed sequence",
                 f"outputs {d_out:.2e}, final states {d_fin:.2e}")


def check_structure(a, p, out, src, tgt_out):
    """Structural facts the C code must reproduce exactly."""
    ok = True
    S, B = src.shape
    lengths = (src != PAD).sum(dim=0)
    attn = out["attn"]                                                 # (T,B,S)
    pad = attn.permute(2, 1, 0)[src == PAD]
    ok &= check(bool((pad == 0).all()), "attn exactly 0 at PAD sources", f"{pad.numel()} entries")
    if a.attention in LOCAL:
        j = torch.arange(S, dtype=attn.dtype).view(1, 1, S)
        outside = (j - out["pos"].unsqueeze(2)).abs() > a.window       # (T,B,S)
        ok &= check(bool((attn[outside] == 0).all()) and bool((attn[~outside & (j < lengths.view(1, B, 1))] > 0).all()),
                    "local attn: > 0 inside window, 0 outside", f"{int(outside.sum())} outside")
        # The window is never empty: floor(p_t) or p_t itself is in it.
        ok &= check(bool((((~outside) & (j < lengths.view(1, B, 1))).sum(dim=2) > 0).all()),
                    "local window never empty")
    else:
        sums = attn.sum(dim=2)
        ok &= check(max_diff(sums, torch.ones_like(sums)) < 1e-6, "attn rows sum to 1")
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
    if not a.tie:       # tied: tgt_emb[PAD] is also out_w's PAD row, which gets a gradient
        ok &= check(bool((p["tgt_emb"].grad[PAD] == 0).all()), "grad.tgt_emb[PAD] == 0")
    dead = [n for n, t in p.items() if not bool((t.grad != 0).any())]
    ok &= check(not dead, "every parameter tensor has a gradient", ", ".join(dead))
    ref = torch.nn.functional.cross_entropy(out["logits"].reshape(-1, out["logits"].shape[2]),
                                            tgt_out.reshape(-1), ignore_index=PAD)
    d = abs(ref.item() - out["loss"].item())
    ok &= check(d < 1e-6, "loss vs F.cross_entropy", f"|diff| {d:.2e}")
    return ok


def check_window_margin(a, out, label):
    """Local-p: window membership jumps where |j - p_t| = D, i.e. at integer p_t.
    Finite differences (and float32 vs float64) are only valid away from those."""
    if a.attention != "local_predictive":
        return True
    pos = out["pos"].double()
    margin = (pos - pos.round()).abs().min().item()
    return check(margin > MARGIN, f"p_t away from window edges ({label})",
                 f"min distance to an integer {margin:.2e} (> {MARGIN})")


def check_float64(a, out32, p32, out64, p64):
    """float32 and float64 runs of the same model from the same initial values agree.

    The C code computes in float32; this bounds how far an exact float32
    implementation can be from the (float64) fixture values, relative to each
    tensor's largest entry. Expected: 1e-7..2e-6; the tolerance is 5e-6.
    """
    ok = check_window_margin(a, out64, "float64")
    tol = 5e-6
    worst = max((max_diff(out32[n], out64[n]) / out64[n].abs().max().item(), n)
                for n in ("enc_states", "attn", "logits", "loss"))
    ok &= check(worst[0] < tol, "float32 vs float64: activations (worst)", f"{worst[0]:.2e} ({worst[1]})")
    worst = max((max_diff(p32[n].grad, p64[n].grad) / p64[n].grad.abs().max().item(), n)
                for n in p32)
    ok &= check(worst[0] < tol, "float32 vs float64: grad.* (worst)", f"{worst[0]:.2e} ({worst[1]})")
    return ok


def check_gradcheck(a, params, src, tgt_in, tgt_out):
    names = list(params)
    inputs = tuple(params[n].double().clone().requires_grad_(True) for n in names)

    def loss_of(*tensors):
        out = model_forward(a, dict(zip(names, tensors)), src, tgt_in)
        return cross_entropy_loss(out["logits"], tgt_out)

    n = sum(t.numel() for t in inputs)
    ok = torch.autograd.gradcheck(loss_of, inputs, eps=1e-6, atol=1e-7, rtol=1e-5,
                                  raise_exception=False)
    return check(ok, "gradcheck (float64)", f"{n} parameters")


def check_reproduces_reference(path):
    """The base architecture (GRU, 1 layer, Bahdanau) with reference.bin's data and
    weights gives reference.bin's activations, loss and gradients: the family
    contains today's model unchanged (same tensors, same order)."""
    f = read_fixture(path)
    B, S, T, E, H, VS, VT = (int(x) for x in f["dims"])
    a, d = arch(), Dims(B, S, T, E, H, VS, VT)
    shapes = param_shapes(a, d)
    names = [n for n in f if n.startswith("grad.")]
    ok = check([("grad." + n) for n, _ in shapes] == names and
               all(f[n].shape == tuple(s) for n, s in shapes), "base arch: reference.bin's 16 tensors")
    params = {n: torch.from_numpy(f[n]) for n, _ in shapes}
    src, tgt_in, tgt_out = (torch.from_numpy(f[n]).long() for n in ("src", "tgt_in", "tgt_out"))
    p, out = forward_backward(a, params, src, tgt_in, tgt_out)
    worst = max(max_diff(out[n], torch.from_numpy(f[n]).reshape(out[n].shape))
                for n in ("enc_states", "attn", "logits", "loss"))
    worst_g = max(max_diff(p[n].grad, torch.from_numpy(f["grad." + n])) /
                  np.abs(f["grad." + n]).max() for n, _ in shapes)
    ok &= check(worst < 1e-6 and worst_g < 1e-5, "base arch reproduces reference.bin",
                f"activations {worst:.2e}, grads (rel) {worst_g:.2e}")
    return ok


# ---------------------------------------------------------------- main

def build(name, a, seed, gradcheck):
    """Run and check one variant. Returns (ok, records)."""
    d = DIMS_TIED if a.tie else DIMS
    validate(a, d)
    print(f"{name}: {a.cell} L={a.layers} bi={int(a.bidirectional)} {a.attention} "
          f"feed={int(a.input_feed)} D={a.window} scaled={int(a.scaled)} tie={int(a.tie)}  "
          f"dims {tuple(d)} seed {seed}")
    gen = torch.Generator().manual_seed(seed)
    src, tgt_in, tgt_out = make_batch(d, gen)
    params = init_params(a, d, gen)
    # The fixture gets the float64 run's values rounded to float32 (the initial
    # values are float32 already, so both runs start from the same point); the
    # float32 run is there to show float32 arithmetic can reproduce them.
    p32, out32 = forward_backward(a, params, src, tgt_in, tgt_out)
    p64, out = forward_backward(a, {k: v.double() for k, v in params.items()},
                                src, tgt_in, tgt_out)
    print(f"  loss {out['loss'].item():.6f}, {sum(t.numel() for t in params.values())} parameters "
          f"in {len(params)} tensors")
    ok = check_window_margin(a, out32, "float32")
    ok &= check_float64(a, out32, p32, out, p64)
    ok &= check_structure(a, p64, out, src, tgt_out)
    ok &= check_encoder_against_torch(a, params, src, out32)
    if gradcheck:
        ok &= check_gradcheck(a, params, src, tgt_in, tgt_out)

    def f32(t):
        return t.detach().numpy().astype(np.float32)

    def i32(t):
        return t.numpy().astype(np.int32)

    records = [("dims", np.array(list(d), dtype=np.int32)),
               ("arch", np.array([CELLS.index(a.cell), a.layers, int(a.bidirectional),
                                  ATTENTIONS.index(a.attention), int(a.input_feed), a.window,
                                  int(a.scaled), int(a.tie)], dtype=np.int32)),
               ("src", i32(src)), ("tgt_in", i32(tgt_in)), ("tgt_out", i32(tgt_out))]
    records += [(n, f32(params[n])) for n in params]
    records += [(n, f32(out[n])) for n in ("enc_states", "attn", "logits")]
    records += [("loss", f32(out["loss"]).reshape(1))]
    records += [("grad." + n, f32(p64[n].grad)) for n in params]
    return ok, records


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    fixtures = os.path.normpath(os.path.join(here, "..", "..", "tests", "fixtures"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", default=fixtures, help="directory for variant_<name>.bin")
    ap.add_argument("--only", action="append", choices=[v[0] for v in VARIANTS],
                    help="write only this variant (repeatable)")
    ap.add_argument("--no-gradcheck", action="store_true", help="skip the slow-ish gradcheck")
    args = ap.parse_args()

    torch.set_num_threads(1)        # same reduction order every run
    print("shared checks:")
    ok = check_cells()
    ok &= check_reproduces_reference(os.path.join(fixtures, "reference.bin"))
    built = []
    for name, a, seed in VARIANTS:
        if args.only and name not in args.only:
            continue
        v_ok, records = build(name, a, seed, not args.no_gradcheck)
        ok &= v_ok
        built.append((name, records))
    if not ok:
        print("reference_variants.py: a check failed; no fixture written", file=sys.stderr)
        return 1
    if not write_fixtures(args.out_dir, "variant", built):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
