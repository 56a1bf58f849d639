"""PyTorch side of `make bench-transformer`: nmt's Transformer written the way a PyTorch user would write it.

This is the baseline nmt's Transformer is measured against (issue 17), so it is meant
to be an idiomatic and efficient PyTorch program, not the deliberately spelled-out
scripts/reference/reference_transformer.py (which is the specification both follow). The model
is built from the library's own modules: nn.Embedding, nn.TransformerEncoderLayer /
nn.TransformerDecoderLayer (norm_first=True for pre-norm, batch_first=True) stacked by
nn.TransformerEncoder / nn.TransformerDecoder, a final nn.LayerNorm for pre-norm,
nn.Linear for the output, F.cross_entropy(ignore_index=0), clip_grad_norm_, Adam. It
is exactly nmt's architecture (src/models/transformer.h), with the same parameters in number
and meaning:

    embedding   x = emb[ids] * sqrt(d) + PE[pos], pos = 0, 1, ...;
                PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(the same)
                (src/layers/posenc.c; computed in double, rounded to float, as there)
    encoder     pre:  x = x + SelfAttn(LN1(x)); x = x + FFN(LN2(x)); memory = LN(x)
                post: x = LN1(x + SelfAttn(x)); x = LN2(x + FFN(x)); memory = x
    decoder     pre:  y = y + CausalSelf(LN1(y)); y = y + Cross(LN2(y), memory);
                      y = y + FFN(LN3(y)); out = LN(y)
                post: the same with the norms after each residual sum, no final LN
    masks       source padding (src == <pad>) for the encoder's and the cross
                attention's keys, target padding (tgt_in == <pad>) and the causal mask
                for the decoder's self-attention
    output      logits = out W^T + b; --tie-embeddings: W is tgt_emb (no sqrt(d))
    loss        F.cross_entropy(ignore_index=<pad>): the mean over real target tokens
    update      clip_grad_norm_(--clip), Adam(--lr, betas 0.9/0.999, eps 1e-8), the
                learning rate ramped linearly over --warmup-steps (nmt's warmup_steps:
                step n uses lr * min(n / W, 1))

Initialisation: nmt's scheme for the Transformer (model_init_weights in src/models/model.c),
which is nn.Transformer's reset_parameters and fairseq's: Xavier-uniform for every
matrix, U(-sqrt(6 / (fan_in + fan_out)), +...), the attention's in_proj (Wq, Wk, Wv) as
the one (3d, d) matrix it is (nmt holds three (d, d) matrices drawn within that bound),
every layer drawn independently; zero biases; embeddings N(0, 1/d); LayerNorm 1 and 0.
(nn.TransformerEncoder deep-copies one layer, so that all its layers would start identical.)

--dropout P is nn.TransformerEncoderLayer / DecoderLayer's dropout (attention
probabilities, each sub-layer's output, the feed-forward block's inner activation)
plus dropout on the embeddings + PE, as Vaswani et al.; training only. nmt has no
Transformer dropout yet, so the benchmark runs with 0.

Data come from `nmt train CONFIG --export-batches FILE` (format: scripts/reference/fixture.py;
records: src/train/dataset.c's dataset_export): the very batches nmt trains on, in its
order, and 2,000 held-out sources as token ids.

    --mode train    trains on the exported batches in order; reports target tokens/s
                    (non-pad tgt_out entries) over the batches after --warmup, timing
                    only the training steps (every batch a tensor before the clock
                    starts). --save FILE keeps the trained weights for decoding.
    --mode greedy   decodes test.src with --load FILE (or --nmt-weights, or fresh
                    weights), --batch consecutive sentences at a time, by nmt's rules
                    (src/decode/decode.c, greedy_search): every sentence runs until its <eos>
                    or its limit of 2 * source length + 10 words, the batch until all
                    have ended, and <pad> and <sos> are never predicted.
    --mode beam     beam search with --beam K and --length-penalty alpha by nmt's rules
                    (beam_search in src/decode/decode.c; see beam_batch): the N sentences'
                    N*K beams decode as one batch of rows.
    --mode check    the two decoders against each other (below), on the first
                    --sentences test sources in batches of --batch: the largest
                    difference between their logits at every step of the same greedy
                    prefixes, and whether greedy and beam search give the same words.

Decoders (--decoder, for greedy and beam):

    cached      what a PyTorch user writes for fast inference (fairseq's incremental
                state, the Annotated Transformer's KV cache): the decoder run one
                position per step, each layer keeping its self-attention keys and
                values of the earlier positions (preallocated, (rows, heads, steps,
                dk)), the cross-attention keys and values projected once per batch;
                with the layers' own weights (in_proj_weight / in_proj_bias slices,
                out_proj, norm1..3, linear1/2) through plain tensor operations.
                Beam search reorders the caches with index_select.
    recompute   the PyTorch tutorial's decoder ("Language Translation with
                nn.Transformer"): each step runs the whole nn.TransformerDecoder on the
                prefix so far (causal mask) and projects its last position. Reported,
                but not the bar: it does O(t) work per step.

Checks (outside the timing): --output FILE writes each output's token ids, one
sentence a line; --nmt-weights MODEL.bin decodes with the weights of an nmt
Transformer model file (its WGTS section, in scripts/reference/reference_transformer.py's
order), so that the outputs can be compared with `nmt translate` word for word.

Prints one JSON line, with the parameter count (nmt's, from --nmt-weights, beside it),
the OpenBLAS kernel and the peak RSS. Run with Debian's interpreter (python3-torch):

    /usr/bin/python3 scripts/bench/bench_torch_transformer.py --mode train --data batches.bin --save t.pt
    /usr/bin/python3 scripts/bench/bench_torch_transformer.py --mode greedy --data batches.bin --load t.pt \
        --batch 64 --decoder cached
    /usr/bin/python3 scripts/bench/bench_torch_transformer.py --mode beam --data batches.bin --load t.pt \
        --batch 64 --beam 5 --decoder recompute
    /usr/bin/python3 scripts/bench/bench_torch_transformer.py --mode check --data batches.bin \
        --nmt-weights model.bin --sentences 200 --batch 64

Threads: as scripts/bench/bench_torch.py. OMP_WAIT_POLICY=PASSIVE is set before torch is
imported (idle OpenMP workers would spin and steal the two cores from OpenBLAS), and
OMP_NUM_THREADS and OPENBLAS_NUM_THREADS are set to --threads, since
torch.set_num_threads does not reach OpenBLAS's own pool. Debian's torch does its
matrix products in OpenBLAS (BLAS_INFO=generic -> libblas.so.3 -> openblas-pthread), so
OPENBLAS_CORETYPE chooses its kernel as it does nmt's; the JSON reports the kernel.
"""

import argparse
import os
import sys


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["train", "greedy", "beam", "check"], required=True)
    ap.add_argument("--data", required=True, help="file from nmt train --export-batches")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--d-model", type=int, default=256, help="nmt's model.embed")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ff", type=int, default=1024)
    ap.add_argument("--encoder-layers", type=int, default=3)
    ap.add_argument("--decoder-layers", type=int, default=3)
    ap.add_argument("--norm", choices=["pre", "post"], default="pre")
    ap.add_argument("--activation", choices=["relu", "gelu"], default="relu")
    ap.add_argument("--tie-embeddings", action="store_true", help="the output layer's weight is tgt_emb")
    ap.add_argument("--dropout", type=float, default=0.0, help="train: dropout (see above; nmt: none yet)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup-steps", type=int, default=0,
                    help="train: linear learning-rate warmup over this many updates (nmt's warmup_steps)")
    ap.add_argument("--clip", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=10, help="train: untimed first batches")
    ap.add_argument("--batches", type=int, default=0, help="train: use only the first N (0: all)")
    ap.add_argument("--save", help="train: write the trained weights (torch.save state_dict)")
    ap.add_argument("--load", help="decoding: weights from --save (default: fresh initialisation)")
    ap.add_argument("--nmt-weights", help="decoding: the weights of an nmt Transformer model file instead")
    ap.add_argument("--decoder", choices=["cached", "recompute"], default="cached")
    ap.add_argument("--batch", type=int, default=1, help="decoding: sentences decoded together")
    ap.add_argument("--sentences", type=int, default=0, help="decoding: only the first N (0: all)")
    ap.add_argument("--beam", type=int, default=5, help="beam: beams per sentence")
    ap.add_argument("--length-penalty", type=float, default=0.6,
                    help="beam: alpha of lp(n) = ((5 + n) / 6)^alpha (0: none)")
    ap.add_argument("--output", help="greedy, beam: write the output ids, one sentence a line")
    return ap.parse_args()


ARGS = parse_args()
# Before torch is imported: OpenMP and OpenBLAS read these when they load.
os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)

import ctypes  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)                                                # beam_torch.py
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reference"))   # fixture.py, the batches' format
from fixture import read_fixture  # noqa: E402
from beam_torch import beam_search  # noqa: E402

PAD, UNK, SOS, EOS = 0, 1, 2, 3       # src/text/vocab.h
# nn.TransformerEncoder's inference fast path (post-norm) says so on every call.
warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors is in prototype stage")


# ---------------------------------------------------------------- the model

def positional_encoding(n, d):
    """PE (n, d) as src/layers/posenc.c: each value in double, rounded to float."""
    pos = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    angle = pos / torch.pow(10000.0, torch.arange(0, d, 2, dtype=torch.float64) / d)   # (n, d/2)
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.float()


class TransformerNMT(nn.Module):
    """nmt's Transformer. Tensors are batch-major: src (B, S), tgt (B, T) of token ids."""

    def __init__(self, src_vocab, tgt_vocab, d, heads, ff, enc_layers, dec_layers, norm="pre",
                 activation="relu", dropout=0.0, tie_embeddings=False):
        super().__init__()
        pre = norm == "pre"
        self.d = d
        self.src_emb = nn.Embedding(src_vocab, d)
        self.tgt_emb = nn.Embedding(tgt_vocab, d)
        self.register_buffer("pe", positional_encoding(256, d), persistent=False)
        self.emb_dropout = nn.Dropout(dropout)
        layer = dict(d_model=d, nhead=heads, dim_feedforward=ff, dropout=dropout, activation=activation,
                     batch_first=True, norm_first=pre)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(**layer), enc_layers,
                                             norm=nn.LayerNorm(d) if pre else None)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(**layer), dec_layers,
                                             norm=nn.LayerNorm(d) if pre else None)
        self.out = nn.Linear(d, tgt_vocab)
        if tie_embeddings:
            self.out.weight = self.tgt_emb.weight
        self.init_like_nmt()

    @torch.no_grad()
    def init_like_nmt(self):
        """nmt's initialisation scheme (see the module docstring)."""
        def xavier(w):
            bound = math.sqrt(6.0 / (w.shape[0] + w.shape[1]))
            w.uniform_(-bound, bound)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                xavier(module.weight)
                module.bias.zero_()
            elif isinstance(module, nn.MultiheadAttention):
                xavier(module.in_proj_weight)
                module.in_proj_bias.zero_()
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
        # (MultiheadAttention's out_proj is an nn.Linear, drawn above.) The embeddings
        # last: with tied embeddings out.weight is tgt_emb, N(0, 1/d) as in nmt.
        d = self.src_emb.weight.shape[1]
        self.src_emb.weight.normal_(0.0, 1.0 / math.sqrt(d))
        self.tgt_emb.weight.normal_(0.0, 1.0 / math.sqrt(d))

    def embed(self, emb, ids, pos0=0):
        """ids (B, L) -> (B, L, d) = emb[ids] * sqrt(d) + PE[pos0 ..]."""
        L = ids.shape[1]
        if pos0 + L > self.pe.shape[0]:
            self.pe = positional_encoding(2 * (pos0 + L), self.d)
        return self.emb_dropout(emb(ids) * math.sqrt(self.d) + self.pe[pos0:pos0 + L])

    def encode(self, src):
        """src (B, S) -> memory (B, S, d), source padding mask (B, S) True at <pad>."""
        src_pad = src == PAD
        return self.encoder(self.embed(self.src_emb, src), src_key_padding_mask=src_pad), src_pad

    def forward(self, src, tgt_in):
        """Teacher-forced logits (B, T, Vt)."""
        memory, src_pad = self.encode(src)
        T = tgt_in.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        y = self.decoder(self.embed(self.tgt_emb, tgt_in), memory, tgt_mask=causal,
                         tgt_key_padding_mask=tgt_in == PAD, memory_key_padding_mask=src_pad)
        return self.out(y)


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())      # a tied tensor counts once


# ---------------------------------------------------------------- decoders
#
# Both decoders serve the searches through one interface, as nmt's Decoder does
# (src/decode/decode.h): made for a batch of N sources and K rows per source (rows n*K ..
# n*K+K-1 are source n's), step(t, y) takes the words fed at position t (R = N*K ids;
# <sos> at t = 0) and returns the logits (R, Vt) for position t + 1's word, and
# reorder(t, rows) makes row r's state after step t a copy of row rows[r]'s (beam search).

class CachedDecoder:
    """Incremental decoding with per-layer key/value caches (see the module docstring)."""

    def __init__(self, model, memory, src_pad, K, max_steps):
        self.model, self.pre = model, model.decoder.layers[0].norm_first
        layers = model.decoder.layers
        att = layers[0].self_attn
        self.H, self.d = att.num_heads, att.embed_dim
        self.dk = self.d // self.H
        N, S, _ = memory.shape
        R = N * K
        # Cross-attention keys and values: once per source, then shared by its K rows.
        self.cross = []
        for layer in layers:
            w, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
            k = F.linear(memory, w[self.d:2 * self.d], b[self.d:2 * self.d])
            v = F.linear(memory, w[2 * self.d:], b[2 * self.d:])
            self.cross.append((self.heads(k).repeat_interleave(K, 0), self.heads(v).repeat_interleave(K, 0)))
        # 0 at real sources, -inf at padding: added to the cross-attention scores.
        mask = torch.zeros(N, S).masked_fill(src_pad, float("-inf"))
        self.cross_mask = mask.repeat_interleave(K, 0).view(R, 1, 1, S)
        shape = (len(layers), R, self.H, max_steps, self.dk)
        self.k_cache, self.v_cache = torch.empty(shape), torch.empty(shape)

    def heads(self, x):
        """(R, L, d) -> (R, H, L, dk)."""
        return x.view(x.shape[0], x.shape[1], self.H, self.dk).transpose(1, 2)

    def attend(self, q, k, v, out_proj, mask=None):
        """q (R, d) one query per row over k, v (R, H, L, dk) -> (R, d)."""
        R = q.shape[0]
        scores = torch.matmul(q.view(R, self.H, 1, self.dk), k.transpose(2, 3)) / math.sqrt(self.dk)
        if mask is not None:
            scores = scores + mask
        ctx = torch.matmul(torch.softmax(scores, dim=3), v)                  # (R, H, 1, dk)
        return out_proj(ctx.view(R, self.d))

    def self_attention(self, layer, l, x, t):
        """x (R, d) at position t: appends its key and value to layer l's cache."""
        att = layer.self_attn
        q, k, v = F.linear(x, att.in_proj_weight, att.in_proj_bias).chunk(3, dim=1)
        R = x.shape[0]
        self.k_cache[l, :, :, t] = k.view(R, self.H, self.dk)
        self.v_cache[l, :, :, t] = v.view(R, self.H, self.dk)
        return self.attend(q, self.k_cache[l, :, :, :t + 1], self.v_cache[l, :, :, :t + 1], att.out_proj)

    def cross_attention(self, layer, l, x):
        att = layer.multihead_attn
        q = F.linear(x, att.in_proj_weight[:self.d], att.in_proj_bias[:self.d])
        k, v = self.cross[l]
        return self.attend(q, k, v, att.out_proj, self.cross_mask)

    def step(self, t, y):
        m = self.model
        x = m.embed(m.tgt_emb, y.unsqueeze(1), pos0=t).squeeze(1)           # (R, d)
        for l, layer in enumerate(m.decoder.layers):
            ff = lambda h: layer.linear2(layer.activation(layer.linear1(h)))  # noqa: E731
            if self.pre:
                x = x + self.self_attention(layer, l, layer.norm1(x), t)
                x = x + self.cross_attention(layer, l, layer.norm2(x))
                x = x + ff(layer.norm3(x))
            else:
                x = layer.norm1(x + self.self_attention(layer, l, x, t))
                x = layer.norm2(x + self.cross_attention(layer, l, x))
                x = layer.norm3(x + ff(x))
        if m.decoder.norm is not None:
            x = m.decoder.norm(x)
        return m.out(x)

    def reorder(self, t, rows):
        self.k_cache[:, :, :, :t + 1] = self.k_cache[:, :, :, :t + 1].index_select(1, rows)
        self.v_cache[:, :, :, :t + 1] = self.v_cache[:, :, :, :t + 1].index_select(1, rows)


class RecomputeDecoder:
    """The tutorial's decoder: the whole nn.TransformerDecoder over the prefix, every step."""

    def __init__(self, model, memory, src_pad, K, max_steps):
        self.model = model
        self.memory = memory.repeat_interleave(K, 0)
        self.src_pad = src_pad.repeat_interleave(K, 0)
        self.ys = torch.empty((self.memory.shape[0], max_steps), dtype=torch.int64)
        self.causal = torch.triu(torch.ones(max_steps, max_steps, dtype=torch.bool), diagonal=1)

    def step(self, t, y):
        m = self.model
        self.ys[:, t] = y
        out = m.decoder(m.embed(m.tgt_emb, self.ys[:, :t + 1]), self.memory, tgt_mask=self.causal[:t + 1, :t + 1],
                        memory_key_padding_mask=self.src_pad)
        return m.out(out[:, -1])

    def reorder(self, t, rows):
        self.ys[:, :t + 1] = self.ys[:, :t + 1].index_select(0, rows)


DECODERS = {"cached": CachedDecoder, "recompute": RecomputeDecoder}


# ---------------------------------------------------------------- searches

NEVER = torch.tensor([PAD, SOS])       # never predicted (src/decode/decode.c)


@torch.inference_mode()
def greedy_batch(model, kind, src, limits):
    """Greedy decoding as src/decode/decode.c's greedy_search. Returns the outputs (N lists of
    ids, <eos> excluded) and the steps the batch ran."""
    memory, src_pad = model.encode(src)
    N, max_steps = src.shape[0], int(limits.max())
    dec = DECODERS[kind](model, memory, src_pad, 1, max_steps)
    y = torch.full((N,), SOS, dtype=torch.int64)
    done = torch.zeros(N, dtype=torch.bool)
    out = []
    for t in range(max_steps):
        logits = dec.step(t, y)
        logits[:, NEVER] = float("-inf")
        y = logits.argmax(dim=1)
        out.append(y)
        done |= (y == EOS) | (t + 1 >= limits)
        if bool(done.all()):
            break
    ids = torch.stack(out, dim=1).tolist()
    outputs = []
    for n in range(N):
        row = ids[n][:int(limits[n])]
        outputs.append(row[:row.index(EOS)] if EOS in row else row)
    return outputs, len(out)


@torch.inference_mode()
def beam_batch(model, kind, src, limits, K, alpha):
    """Beam search for the N sentences of src (N, S) by nmt's rules (beam_search in
    src/decode/decode.c; scripts/bench/beam_torch.py, the search scripts/bench/bench_torch.py runs for the
    recurrent model), all N*K beams as one batch of rows, stepping the `kind` decoder.
    Returns the outputs (N lists of ids) and the steps each sentence ran (N)."""
    memory, src_pad = model.encode(src)
    N = src.shape[0]
    dec = DECODERS[kind](model, memory, src_pad, K, int(limits.max()))
    return beam_search(dec.step, dec.reorder, N, K, model.out.out_features, limits, alpha)


# ---------------------------------------------------------------- data

def load_batches(data, limit):
    """The exported batches, batch-major: (src (B, S), tgt_in (B, T), tgt_out (B, T), target tokens)."""
    n = int(data["dims"][2]) if limit <= 0 else min(limit, int(data["dims"][2]))
    batches = []
    for k in range(n):
        src, tgt_in, tgt_out = (torch.from_numpy(data[f"batch.{k}.{x}"].T.astype(np.int64).copy())
                                for x in ("src", "tgt_in", "tgt_out"))
        batches.append((src, tgt_in, tgt_out, int((tgt_out != PAD).sum())))
    return batches


def decode_jobs(data):
    """The first --sentences test sources in groups of --batch: (src (B, S), limits
    2 * length + 10 (B))."""
    src_all, len_all = data["test.src"], data["test.len"].astype(np.int64)
    n = len(len_all) if ARGS.sentences <= 0 else min(ARGS.sentences, len(len_all))
    jobs = []
    for start in range(0, n, ARGS.batch):
        lens = len_all[start:min(n, start + ARGS.batch)]
        src = torch.from_numpy(src_all[start:start + len(lens), :int(lens.max())].astype(np.int64).copy())
        jobs.append((src, torch.from_numpy(2 * lens + 10)))
    return n, jobs


# ---------------------------------------------------------------- modes

def run_train(model, data):
    batches = load_batches(data, ARGS.batches)
    if len(batches) <= ARGS.warmup:
        sys.exit(f"bench_torch_transformer.py: {len(batches)} batches, need more than --warmup {ARGS.warmup}")
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=ARGS.lr)
    W = ARGS.warmup_steps
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: min((k + 1) / W, 1.0) if W > 0 else 1.0)
    model.train()
    losses, times = [], []
    for src, tgt_in, tgt_out, _ in batches:
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[2]), tgt_out.reshape(-1), ignore_index=PAD)
        loss.backward()
        nn.utils.clip_grad_norm_(params, ARGS.clip)
        opt.step()
        sched.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    timed = range(ARGS.warmup, len(batches))
    tokens = sum(batches[k][3] for k in timed)
    seconds = sum(times[k] for k in timed)
    if ARGS.save:
        torch.save(model.state_dict(), ARGS.save)
    return {"batches": len(batches), "warmup": ARGS.warmup, "timed_tokens": tokens,
            "timed_seconds": round(seconds, 4), "tokens_per_s": round(tokens / seconds, 1),
            "step_seconds": [round(t, 5) for t in times], "loss_first": round(losses[0], 4),
            "loss_last10": round(float(np.mean(losses[-10:])), 4)}


def run_decode(model, data):
    """--mode greedy or beam, timed: the decoding loop only (inputs are tensors first)."""
    n, jobs = decode_jobs(data)
    model.eval()
    beam = ARGS.mode == "beam"
    t0 = time.perf_counter()
    results = [beam_batch(model, ARGS.decoder, src, limits, ARGS.beam, ARGS.length_penalty) if beam
               else greedy_batch(model, ARGS.decoder, src, limits) for src, limits in jobs]
    seconds = time.perf_counter() - t0
    outputs, needed, search, row_steps = [], [], [], 0
    for (outs, steps), (_, limits) in zip(results, jobs):
        if beam:
            search += steps.tolist()
            row_steps += int(steps.max()) * len(outs)
        else:
            row_steps += steps * len(outs)
        for o, limit in zip(outs, limits.tolist()):
            outputs.append(o)
            needed.append(len(o) + 1 if len(o) < limit else limit)   # words + <eos>, or the limit
    result = {"decoder": ARGS.decoder, "sentences": n, "batch": ARGS.batch,
              "seconds": round(seconds, 4), "sentences_per_s": round(n / seconds, 2),
              "steps_per_sentence": round(float(np.mean(needed)), 3),
              "row_steps_per_sentence": round(row_steps / n, 3)}
    if beam:
        result.update({"beam": ARGS.beam, "length_penalty": ARGS.length_penalty,
                       "search_steps_per_sentence": round(float(np.mean(search)), 3)})
    return result, outputs


@torch.inference_mode()
def run_check(model, data):
    """The cached decoder against the recompute decoder: the same greedy prefixes (the
    cached decoder's choices fed to both), their logits compared at every step, and
    greedy and beam search with each compared word for word."""
    n, jobs = decode_jobs(data)
    model.eval()
    worst, scale = 0.0, 0.0
    for src, limits in jobs:
        memory, src_pad = model.encode(src)
        steps = int(limits.max())
        a, b = (DECODERS[k](model, memory, src_pad, 1, steps) for k in ("cached", "recompute"))
        y = torch.full((src.shape[0],), SOS, dtype=torch.int64)
        for t in range(steps):
            la, lb = a.step(t, y), b.step(t, y)
            worst = max(worst, float((la - lb).abs().max()))
            scale = max(scale, float(lb.abs().max()))
            la[:, NEVER] = float("-inf")
            y = la.argmax(dim=1)
    same = {}
    for search in ("greedy", "beam"):
        outs = {}
        for kind in ("cached", "recompute"):
            outs[kind] = []
            for src, limits in jobs:
                o, _ = (beam_batch(model, kind, src, limits, ARGS.beam, ARGS.length_penalty) if search == "beam"
                        else greedy_batch(model, kind, src, limits))
                outs[kind] += o
        same[search] = sum(x == y for x, y in zip(outs["cached"], outs["recompute"]))
    return {"sentences": n, "batch": ARGS.batch, "beam": ARGS.beam,
            "max_logit_difference": worst, "max_logit": scale, "relative": worst / scale,
            "greedy_same": same["greedy"], "beam_same": same["beam"]}


# ---------------------------------------------------------------- nmt's weights

def nmt_model_file(path):
    """An nmt model file (src/files/modelfile.h): its dimensions and weights (float32 array)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"NMTMODEL":
        sys.exit(f"bench_torch_transformer.py: {path}: not an nmt model file")
    count, pos, sections = int(np.frombuffer(raw, "<u4", 1, 16)[0]), 20, {}
    for _ in range(count):
        tag, size = raw[pos:pos + 4].decode(), int(np.frombuffer(raw, "<u8", 1, pos + 4)[0])
        sections[tag] = raw[pos + 16:pos + 16 + size]
        pos += 16 + size
    if "TRFM" not in sections:
        sys.exit(f"bench_torch_transformer.py: {path} holds a recurrent model (no TRFM section); "
                 "scripts/bench/bench_torch.py decodes those")
    dims = np.frombuffer(sections["DIMS"], "<i8")        # src_vocab, tgt_vocab, embed, ..., n_params
    arch = np.frombuffer(sections["ARCH"], "<i8")        # ..., tie_embeddings last
    trfm = np.frombuffer(sections["TRFM"], "<i8")        # type, heads, ff, activation, norm, enc, dec
    info = {"src_vocab": int(dims[0]), "tgt_vocab": int(dims[1]), "d": int(dims[2]), "n_params": int(dims[9]),
            "tie_embeddings": bool(arch[7]), "heads": int(trfm[1]), "ff": int(trfm[2]),
            "activation": ["relu", "gelu"][int(trfm[3])], "norm": ["pre", "post"][int(trfm[4])],
            "enc_layers": int(trfm[5]), "dec_layers": int(trfm[6])}
    return info, np.frombuffer(sections["WGTS"], "<f4")


def load_nmt_weights(model, info, w):
    """Copies an nmt Transformer's weights (scripts/reference/reference_transformer.py's order,
    src/models/model.c's transformer_layout) into the modules."""
    at = 0

    def take(*shape):
        nonlocal at
        n = int(np.prod(shape))
        t = torch.from_numpy(w[at:at + n].reshape(shape).copy())
        at += n
        return t

    def ln(m):
        m.weight.copy_(take(d)), m.bias.copy_(take(d))

    def att(m):
        wq, bq, wk, bk, wv, bv, wo, bo = (take(d, d) if i % 2 == 0 else take(d) for i in range(8))
        m.in_proj_weight.copy_(torch.cat([wq, wk, wv])), m.in_proj_bias.copy_(torch.cat([bq, bk, bv]))
        m.out_proj.weight.copy_(wo), m.out_proj.bias.copy_(bo)

    def ffn(layer):
        layer.linear1.weight.copy_(take(ff, d)), layer.linear1.bias.copy_(take(ff))
        layer.linear2.weight.copy_(take(d, ff)), layer.linear2.bias.copy_(take(d))

    d, ff = info["d"], info["ff"]
    with torch.no_grad():
        model.src_emb.weight.copy_(take(info["src_vocab"], d))
        model.tgt_emb.weight.copy_(take(info["tgt_vocab"], d))
        for layer in model.encoder.layers:
            ln(layer.norm1), att(layer.self_attn), ln(layer.norm2), ffn(layer)
        if model.encoder.norm is not None:
            ln(model.encoder.norm)
        for layer in model.decoder.layers:
            ln(layer.norm1), att(layer.self_attn), ln(layer.norm2), att(layer.multihead_attn)
            ln(layer.norm3), ffn(layer)
        if model.decoder.norm is not None:
            ln(model.decoder.norm)
        if not info["tie_embeddings"]:
            model.out.weight.copy_(take(info["tgt_vocab"], d))
        model.out.bias.copy_(take(info["tgt_vocab"]))
    if at != len(w):
        sys.exit(f"bench_torch_transformer.py: {ARGS.nmt_weights}: read {at} of {len(w)} weights")


# ---------------------------------------------------------------- main

def openblas_kernel():
    """The OpenBLAS kernel torch's libblas.so.3 runs on (None if it is not OpenBLAS)."""
    try:
        lib = ctypes.CDLL("libblas.so.3")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return None


def aten_capability():
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage" in line:
            return line.split(":", 1)[1].strip()
    return None


def main():
    torch.set_num_threads(ARGS.threads)
    torch.manual_seed(ARGS.seed)
    data = read_fixture(ARGS.data)
    vocab = (int(data["dims"][0]), int(data["dims"][1]))
    shape = dict(d=ARGS.d_model, heads=ARGS.heads, ff=ARGS.ff, enc_layers=ARGS.encoder_layers,
                 dec_layers=ARGS.decoder_layers, norm=ARGS.norm, activation=ARGS.activation,
                 tie_embeddings=ARGS.tie_embeddings)
    info = weights = None
    if ARGS.nmt_weights and ARGS.mode != "train":
        info, weights = nmt_model_file(ARGS.nmt_weights)
        if (info["src_vocab"], info["tgt_vocab"]) != vocab:
            sys.exit(f"bench_torch_transformer.py: {ARGS.nmt_weights} has vocabularies "
                     f"{info['src_vocab']}/{info['tgt_vocab']}, {ARGS.data} {vocab[0]}/{vocab[1]}")
        shape = {k: info[k] for k in shape}              # the file's architecture
    model = TransformerNMT(*vocab, dropout=ARGS.dropout if ARGS.mode == "train" else 0.0, **shape)
    if weights is not None:
        load_nmt_weights(model, info, weights)
    elif ARGS.mode != "train" and ARGS.load:
        model.load_state_dict(torch.load(ARGS.load))
    result = {"program": "pytorch", "mode": ARGS.mode, "torch": torch.__version__, "threads": ARGS.threads,
              "openblas_kernel": openblas_kernel(), "aten_cpu_capability": aten_capability(),
              "model": shape, "parameters": parameter_count(model),
              "weights": ARGS.nmt_weights or ARGS.load or "fresh initialisation"}
    if info:
        result["nmt_parameters"] = info["n_params"]
    if ARGS.mode == "train":
        result.update({"lr": ARGS.lr, "warmup_steps": ARGS.warmup_steps, "clip": ARGS.clip,
                       "dropout": ARGS.dropout})
        result.update(run_train(model, data))
    elif ARGS.mode == "check":
        result.update(run_check(model, data))
    else:
        decoded, outputs = run_decode(model, data)
        result.update(decoded)
        result["peak_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        if ARGS.output:
            with open(ARGS.output, "w") as f:
                f.writelines(" ".join(map(str, o)) + "\n" for o in outputs)
    result.setdefault("peak_rss_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
