"""PyTorch reference implementation of nmt's model; writes tests/fixtures/reference.bin.

The C code (src/layers/gru.c, src/layers/attention.c, src/models/model.c, src/layers/adam.c) is tested against
the numbers this script dumps: every activation, the loss, every gradient, and the
parameters after one clipped Adam step. So this file is the specification of the
model in executable form. It deliberately does not use nn.GRU, pack_padded_sequence
or F.cross_entropy: every step is written out with plain tensor ops so each formula
can be read next to its C counterpart. Autograd supplies the gradients.

The model (all tensors time-major, PAD id = 0, attention dim = H):

    encoder  x_t = src_emb[src[t]]; h_t = GRU_enc(x_t, h_{t-1}), h_0 = 0;
             at padded positions the state is carried through unchanged.
    decoder  s_0 = h_{S-1}; for each target step t:
               Bahdanau attention over the encoder states with query s_{t-1},
               s_t = GRU_dec([tgt_emb[tgt_in[t]], c_t], s_{t-1}),
               logits_t = out_w s_t + out_b.
    loss     token-mean cross-entropy over positions where tgt_out != 0.
    update   clip the total gradient norm to `clip`, then one Adam step.

Run it with the interpreter that has torch (Debian's python3-torch):

    /usr/bin/python3 scripts/reference/reference.py            # writes tests/fixtures/reference.bin

It is deterministic: the same file comes out every time. Before writing, it checks
the float32 results against a float64 run of the same model, the autograd gradients
against finite differences (torch.autograd.gradcheck, float64), and the Adam step
against a hand-written one, and refuses to write the fixture if any check fails.

Records in the fixture (see scripts/reference/fixture.py for the file format), in this order:

    dims                int32 [B, S, T, E, H, Vs, Vt]
    src, tgt_in, tgt_out  int32 (S,B), (T,B), (T,B)
    <param>             float32, initial values, one record per name in PARAM_SHAPES
    enc_states          (S,B,H)
    attn                (T,B,S) attention weights, exactly 0 at padded sources
    logits              (T,B,Vt)
    loss                (1)
    grad.<param>        unclipped gradient of loss
    grad_norm, clip, lr (1) each; clip = 0.5 * grad_norm so clipping engages
    adam.<param>        parameters after clip_grad_norm_(clip) and one Adam step
    adam_m.<param>      Adam's first moment after that step  = 0.1   * clipped grad
    adam_v.<param>      Adam's second moment after that step = 0.001 * clipped grad^2

Compare tensors relative to their largest entry: the attention gradients are small
(|grad.att_w_query| <= 6e-5), so an absolute tolerance like 1e-5 would test nothing.
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

# Batch, source steps, target steps, embedding, hidden, source vocab, target vocab.
# Small, and all different, so a transposed or mis-strided buffer cannot pass.
B, S, T, E, H, VS, VT = 3, 5, 6, 7, 8, 11, 13
PAD, UNK, SOS, EOS = 0, 1, 2, 3       # ids 0..3 are specials; real tokens are >= 4
SRC_LENGTHS = [5, 3, 2]               # per batch entry, real tokens before PAD
TGT_LENGTHS = [6, 4, 2]               # per batch entry, tgt_in = SOS + (len-1) tokens
SEED = 1234
LR = 0.01
CLIP_FRACTION = 0.5                   # clip = this * the gradient norm, so clipping engages
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8

# Parameter names and shapes, in the order they are written to the fixture.
# Weights are (out, in) like nn.Linear; the GRU's 3H rows are the gates [r | z | n].
PARAM_SHAPES = [
    ("src_emb", (VS, E)),
    ("enc_w_ih", (3 * H, E)),
    ("enc_w_hh", (3 * H, H)),
    ("enc_b_ih", (3 * H,)),
    ("enc_b_hh", (3 * H,)),
    ("tgt_emb", (VT, E)),
    ("att_w_key", (H, H)),
    ("att_v", (H,)),
    ("dec_w_ih", (3 * H, E + H)),
    ("dec_w_hh", (3 * H, H)),
    ("att_w_query", (H, H)),
    ("dec_b_ih", (3 * H,)),
    ("dec_b_hh", (3 * H,)),
    ("att_b_query", (H,)),
    ("out_w", (VT, H)),
    ("out_b", (VT,)),
]
PARAM_NAMES = [name for name, _ in PARAM_SHAPES]


def make_batch(gen):
    """Random token ids with the lengths above, PAD after the end.

    Returns src (S,B), tgt_in (T,B), tgt_out (T,B) as int64 tensors.
    tgt_out is tgt_in shifted left by one with EOS as its last real token.
    """
    src = torch.full((S, B), PAD, dtype=torch.int64)
    tgt_in = torch.full((T, B), PAD, dtype=torch.int64)
    tgt_out = torch.full((T, B), PAD, dtype=torch.int64)
    for b in range(B):
        n = SRC_LENGTHS[b]
        src[:n, b] = torch.randint(4, VS, (n,), generator=gen)
        n = TGT_LENGTHS[b]
        words = torch.randint(4, VT, (n - 1,), generator=gen)
        tgt_in[0, b] = SOS
        tgt_in[1:n, b] = words
        tgt_out[:n - 1, b] = words
        tgt_out[n - 1, b] = EOS
    return src, tgt_in, tgt_out


def init_params(gen):
    """Every parameter uniform in [-0.5, 0.5), float32.

    Not PyTorch's default init: a wide uniform range keeps every gradient well
    above float32 rounding noise, which is what a fixture needs.
    """
    return {name: torch.rand(shape, generator=gen, dtype=torch.float32) - 0.5
            for name, shape in PARAM_SHAPES}


# ---------------------------------------------------------------- the model

def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """One GRU step, PyTorch's formulation. x (B,in), h (B,H) -> h' (B,H).

    Note r multiplies gh_n *after* its bias b_hh_n is added (as in cuDNN/PyTorch,
    not the original paper's r * h inside the matmul).
    """
    gi = x @ w_ih.T + b_ih                  # (B,3H)
    gh = h @ w_hh.T + b_hh                  # (B,3H)
    gi_r, gi_z, gi_n = gi.chunk(3, dim=1)   # each (B,H)
    gh_r, gh_z, gh_n = gh.chunk(3, dim=1)
    r = torch.sigmoid(gi_r + gh_r)
    z = torch.sigmoid(gi_z + gh_z)
    n = torch.tanh(gi_n + r * gh_n)
    return (1 - z) * n + z * h


def encoder_forward(p, src):
    """src (S,B) -> enc_states (S,B,H). Padded steps carry the previous state."""
    dtype = p["src_emb"].dtype
    h = torch.zeros(B, H, dtype=dtype)
    states = []
    for t in range(S):
        x = p["src_emb"][src[t]]                           # (B,E)
        h_new = gru_cell(x, h, p["enc_w_ih"], p["enc_w_hh"], p["enc_b_ih"], p["enc_b_hh"])
        m = (src[t] != PAD).to(dtype).unsqueeze(1)         # (B,1) 1 = real token
        h = m * h_new + (1 - m) * h
        states.append(h)
    return torch.stack(states)                             # (S,B,H)


def attention_forward(p, keys, enc_states, src_mask, s):
    """Bahdanau (additive) attention.

    keys (S,B,H) = att_w_key @ enc_states (precomputed once per batch),
    enc_states (S,B,H), src_mask (S,B) bool True at real tokens, s (B,H) the query state.
    Returns context (B,H) and weights (S,B), exactly 0 at padded positions.
    """
    q = s @ p["att_w_query"].T + p["att_b_query"]                  # (B,H)
    e = torch.tanh(keys + q.unsqueeze(0)) @ p["att_v"]            # (S,B)
    e = e.masked_fill(~src_mask, float("-inf"))
    e_max = e.max(dim=0, keepdim=True).values                     # (1,B)
    w = torch.exp(e - e_max)                                      # (S,B), 0 at PAD
    a = w / w.sum(dim=0, keepdim=True)
    context = (a.unsqueeze(2) * enc_states).sum(dim=0)            # (B,H)
    return context, a


def model_forward(p, src, tgt_in):
    """Encoder, attention decoder, output layer.

    Returns enc_states (S,B,H), attn (T,B,S), logits (T,B,VT).
    The decoder runs over padded target steps too; the loss masks them.
    """
    enc_states = encoder_forward(p, src)
    src_mask = src != PAD                                          # (S,B)
    keys = enc_states @ p["att_w_key"].T                           # (S,B,H), no bias
    s = enc_states[S - 1]                                          # (B,H) final state
    attn, logits = [], []
    for t in range(T):
        context, a = attention_forward(p, keys, enc_states, src_mask, s)
        x = torch.cat([p["tgt_emb"][tgt_in[t]], context], dim=1)  # (B,E+H) embedding first
        s = gru_cell(x, s, p["dec_w_ih"], p["dec_w_hh"], p["dec_b_ih"], p["dec_b_hh"])
        logits.append(s @ p["out_w"].T + p["out_b"])               # (B,VT)
        attn.append(a.T)                                           # (B,S)
    return enc_states, torch.stack(attn), torch.stack(logits)


def cross_entropy_loss(logits, tgt_out):
    """Mean over non-PAD target tokens of -log softmax(logits)[target].

    logits (T,B,VT), tgt_out (T,B). Equals F.cross_entropy(ignore_index=0),
    i.e. one mean over all real tokens of the batch, not a mean of per-sentence means.
    """
    m = logits.max(dim=2, keepdim=True).values
    log_z = m + torch.log(torch.exp(logits - m).sum(dim=2, keepdim=True))   # (T,B,1)
    log_probs = logits - log_z                                              # (T,B,VT)
    nll = -log_probs.gather(2, tgt_out.unsqueeze(2)).squeeze(2)             # (T,B)
    mask = (tgt_out != PAD).to(logits.dtype)
    return (nll * mask).sum() / mask.sum()


def forward_backward(params, src, tgt_in, tgt_out):
    """Run the model and backprop. params: dict of tensors (copied, not modified).

    Returns (leaf params with .grad set, dict of activations and loss).
    """
    p = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    enc_states, attn, logits = model_forward(p, src, tgt_in)
    loss = cross_entropy_loss(logits, tgt_out)
    loss.backward()
    acts = {"enc_states": enc_states.detach(), "attn": attn.detach(),
            "logits": logits.detach(), "loss": loss.detach()}
    return p, acts


def clip_and_adam_step(p, clip):
    """clip_grad_norm_ then one torch.optim.Adam step, in place on the leaves p.

    Returns the unclipped total norm and the optimizer (for its moment buffers).
    """
    leaves = [p[name] for name in PARAM_NAMES]
    norm = torch.nn.utils.clip_grad_norm_(leaves, max_norm=clip)
    opt = torch.optim.Adam(leaves, lr=LR, betas=ADAM_BETAS, eps=ADAM_EPS, weight_decay=0)
    opt.step()
    return norm, opt


# ---------------------------------------------------------------- checks

def max_diff(a, b):
    return (a.double() - b.double()).abs().max().item()


def check(ok, label, detail):
    print(f"  {'ok  ' if ok else 'FAIL'} {label:<34} {detail}")
    return ok


def check_float64_agreement(params, src, tgt_in, tgt_out, acts32, grads32, norm32, clip,
                            after32):
    """Re-run everything in float64 from the same (float32-rounded) initial values.

    The float32 fixture is only trustworthy if it agrees with exact-ish arithmetic:
    errors relative to each tensor's largest entry of 1e-7..2e-6 are expected (the
    small attention gradients are the worst); the tolerance is 5e-6.
    """
    print("float32 vs float64 (max |diff| / max |value|):")
    params64 = {k: v.double() for k, v in params.items()}
    p64, acts64 = forward_backward(params64, src, tgt_in, tgt_out)
    ok = True
    tol = 5e-6
    for name in ["enc_states", "attn", "logits", "loss"]:
        rel = max_diff(acts32[name], acts64[name]) / acts64[name].abs().max().item()
        ok &= check(rel < tol, name, f"{rel:.2e}")
    worst, worst_name = 0.0, ""
    for name in PARAM_NAMES:
        scale = p64[name].grad.abs().max().item()
        rel = max_diff(grads32[name], p64[name].grad) / scale
        if rel > worst:
            worst, worst_name = rel, name
    ok &= check(worst < tol, "grad.* (worst)", f"{worst:.2e} ({worst_name})")
    norm64, _ = clip_and_adam_step(p64, clip)
    rel = abs(norm32.item() - norm64.item()) / norm64.item()
    ok &= check(rel < tol, "grad_norm", f"{rel:.2e}")
    # The Adam update is ~lr*sign(g): measure its error relative to lr, not the weights.
    worst = max(max_diff(after32[n] - params[n], p64[n].detach() - params64[n])
                for n in PARAM_NAMES) / LR
    ok &= check(worst < 1e-4, "adam.* update (relative to lr)", f"{worst:.2e}")
    return ok


def check_gradcheck(params, src, tgt_in, tgt_out):
    """torch.autograd.gradcheck on the loss as a function of all parameters, float64."""
    names = PARAM_NAMES
    inputs = tuple(params[n].double().clone().requires_grad_(True) for n in names)

    def loss_of(*tensors):
        _, _, logits = model_forward(dict(zip(names, tensors)), src, tgt_in)
        return cross_entropy_loss(logits, tgt_out)

    n = sum(t.numel() for t in inputs)
    ok = torch.autograd.gradcheck(loss_of, inputs, eps=1e-6, atol=1e-7, rtol=1e-5,
                                  raise_exception=False)
    return check(ok, "gradcheck (float64)", f"{n} parameters, finite differences vs autograd")


def check_adam_by_hand(params, grads, clip, norm, p_after):
    """The clipped Adam step written out, compared with torch's result.

    grads: unclipped float32 gradients. First step (t = 1) from zero moments:
      g  = grad * min(1, clip / (norm + 1e-6))
      m  = (1 - b1) g ;  v = (1 - b2) g^2
      p' = p - (lr / (1 - b1)) * m / (sqrt(v) / sqrt(1 - b2) + eps)
    """
    b1, b2 = ADAM_BETAS
    scale = min(1.0, clip / (norm + 1e-6))
    worst = 0.0
    for name in PARAM_NAMES:
        g = grads[name].double() * scale
        m = (1 - b1) * g
        v = (1 - b2) * g * g
        expect = params[name].double() - (LR / (1 - b1)) * m / (v.sqrt() / math.sqrt(1 - b2) + ADAM_EPS)
        worst = max(worst, max_diff(expect, p_after[name]))
    return check(worst < 1e-7, "adam step by hand vs torch", f"max |diff| {worst:.2e}")


def check_loss_against_torch(acts, tgt_out):
    """Our hand-written loss equals F.cross_entropy(ignore_index=PAD)."""
    ref = torch.nn.functional.cross_entropy(
        acts["logits"].reshape(-1, VT), tgt_out.reshape(-1), ignore_index=PAD)
    d = abs(ref.item() - acts["loss"].item())
    return check(d < 1e-6, "loss vs F.cross_entropy", f"|diff| {d:.2e}")


def check_gru_against_torch(params):
    """Our gru_cell equals nn.GRUCell with the same weights (gate order, r placement)."""
    cell = torch.nn.GRUCell(E, H)
    with torch.no_grad():
        cell.weight_ih.copy_(params["enc_w_ih"])
        cell.weight_hh.copy_(params["enc_w_hh"])
        cell.bias_ih.copy_(params["enc_b_ih"])
        cell.bias_hh.copy_(params["enc_b_hh"])
        gen = torch.Generator().manual_seed(7)
        x = torch.rand(B, E, generator=gen) - 0.5
        h = torch.rand(B, H, generator=gen) - 0.5
        d = max_diff(cell(x, h), gru_cell(x, h, params["enc_w_ih"], params["enc_w_hh"],
                                          params["enc_b_ih"], params["enc_b_hh"]))
    return check(d < 1e-6, "gru_cell vs nn.GRUCell", f"max |diff| {d:.2e}")


def check_masking(acts, p32, src):
    """Structural zeros the C code must reproduce exactly."""
    ok = True
    attn = acts["attn"]                                        # (T,B,S)
    pad_weights = attn.permute(2, 1, 0)[src == PAD]            # every (padded j, b) over t
    ok &= check(bool((pad_weights == 0).all()), "attn exactly 0 at PAD sources",
                f"{pad_weights.numel()} entries")
    sums = attn.sum(dim=2)
    ok &= check(max_diff(sums, torch.ones_like(sums)) < 1e-6, "attn rows sum to 1", "")
    es = acts["enc_states"]
    carried = all(torch.equal(es[t, b], es[SRC_LENGTHS[b] - 1, b])
                  for b in range(B) for t in range(SRC_LENGTHS[b], S))
    ok &= check(carried, "enc state carried through PAD", "")
    ok &= check(bool((p32["src_emb"].grad[PAD] == 0).all()), "grad.src_emb[PAD] == 0", "")
    ok &= check(bool((p32["tgt_emb"].grad[PAD] == 0).all()), "grad.tgt_emb[PAD] == 0",
                "(PAD inputs only feed masked steps)")
    return ok


# ---------------------------------------------------------------- main

def to_np32(t):
    return t.detach().numpy().astype(np.float32)


def to_np_i32(t):
    return t.numpy().astype(np.int32)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.join(here, "..", "..", "tests", "fixtures", "reference.bin")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.normpath(default_out), help="fixture path")
    ap.add_argument("--no-gradcheck", action="store_true", help="skip the slow-ish gradcheck")
    args = ap.parse_args()

    torch.manual_seed(SEED)
    torch.set_num_threads(1)        # same reduction order every run
    gen = torch.Generator().manual_seed(SEED)
    src, tgt_in, tgt_out = make_batch(gen)
    params = init_params(gen)

    p32, acts = forward_backward(params, src, tgt_in, tgt_out)
    grads = {name: p32[name].grad.clone() for name in PARAM_NAMES}
    norm_exact = torch.sqrt(sum((g.double() ** 2).sum() for g in grads.values())).item()
    clip = torch.tensor([CLIP_FRACTION * norm_exact], dtype=torch.float32)
    norm, opt = clip_and_adam_step(p32, clip.item())

    print(f"nmt reference: B={B} S={S} T={T} E={E} H={H} Vs={VS} Vt={VT} seed={SEED}")
    print(f"  loss {acts['loss'].item():.6f}  grad_norm {norm.item():.6f}  "
          f"clip {clip.item():.6f}  lr {LR}")
    print("checks:")
    ok = True
    ok &= check_gru_against_torch(params)
    ok &= check_loss_against_torch(acts, tgt_out)
    ok &= check_masking(acts, p32, src)
    ok &= check(clip.item() < norm.item(), "clipping engages", f"clip/norm {clip.item() / norm.item():.3f}")
    after = {name: p32[name].detach() for name in PARAM_NAMES}
    ok &= check_adam_by_hand(params, grads, clip.item(), norm.item(), after)
    ok &= check_float64_agreement(params, src, tgt_in, tgt_out, acts, grads, norm,
                                  clip.item(), after)
    if not args.no_gradcheck:
        ok &= check_gradcheck(params, src, tgt_in, tgt_out)
    if not ok:
        print("reference.py: a check failed; fixture NOT written", file=sys.stderr)
        return 1

    records = [("dims", np.array([B, S, T, E, H, VS, VT], dtype=np.int32)),
               ("src", to_np_i32(src)), ("tgt_in", to_np_i32(tgt_in)),
               ("tgt_out", to_np_i32(tgt_out))]
    records += [(name, to_np32(params[name])) for name in PARAM_NAMES]
    records += [("enc_states", to_np32(acts["enc_states"])), ("attn", to_np32(acts["attn"])),
                ("logits", to_np32(acts["logits"])), ("loss", to_np32(acts["loss"]).reshape(1))]
    records += [("grad." + name, to_np32(grads[name])) for name in PARAM_NAMES]
    records += [("grad_norm", to_np32(norm).reshape(1)), ("clip", to_np32(clip)),
                ("lr", np.array([LR], dtype=np.float32))]
    records += [("adam." + name, to_np32(after[name])) for name in PARAM_NAMES]
    # Adam's first step is nearly invariant to the gradient's scale (update ~ lr*sign(g)),
    # so adam.* alone barely shows whether clipping happened. The moment buffers do:
    # m = (1-b1)*g_clipped, v = (1-b2)*g_clipped^2.
    state = opt.state
    records += [("adam_m." + name, to_np32(state[p32[name]]["exp_avg"])) for name in PARAM_NAMES]
    records += [("adam_v." + name, to_np32(state[p32[name]]["exp_avg_sq"])) for name in PARAM_NAMES]

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    size = write_fixture(args.out, records)
    back = read_fixture(args.out)
    same = list(back) == [n for n, _ in records] and all(
        np.array_equal(back[n], a) for n, a in records)
    if not check(same, "fixture reads back identically", f"{len(records)} records"):
        return 1
    print(f"wrote {args.out} ({size} bytes, {len(records)} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
