"""PyTorch side of `make bench`: nmt's model written the way a PyTorch user would write it.

This is the baseline nmt is measured against (issue #3), so it is meant to be a good,
idiomatic and efficient PyTorch program, not the deliberately spelled-out
scripts/reference/reference.py: nn.Embedding, nn.GRU over a packed sequence, nn.GRUCell,
nn.Linear, F.cross_entropy, clip_grad_norm_, torch.optim.Adam, PyTorch's default
initialisation (which is also nmt's scheme). The model is exactly nmt's (src/models/model.h):

    encoder   h_t = GRU(E, H)(src_emb[x_t], h_{t-1}) over pack_padded_sequence, so the
              final state is each sentence's last real state (nmt carries the state
              through padding, which gives the same final state)
    keys      k_j = W_key h_j                  Linear(H, H, bias=False), once per batch
    decoder   s_0 = final encoder state; per step t:
              q = W_query s_{t-1} + b          Linear(H, H)
              e_j = v . tanh(k_j + q)          v = Linear(H, 1, bias=False)
              a = softmax over real source positions, c_t = sum_j a_j h_j
              s_t = GRUCell(E + H, H)([tgt_emb[y_{t-1}]; c_t], s_{t-1})
    output    logits = Linear(H, Vt) of all s_t at once after the loop
    loss      cross-entropy, mean over non-pad targets (ignore_index = 0)
    update    clip_grad_norm_(5), Adam(lr 1e-3)

Data come from `nmt train CONFIG --export-batches FILE` (format: scripts/reference/fixture.py;
records: src/train/train.h), so both programs see the very same batches in the same order
and the same held-out source sentences as token ids.

    --mode train    trains on the exported batches in order; reports target tokens/s
                    (non-pad tgt_out entries) over the batches after --warmup, timing
                    only the training steps (every batch is a tensor before the clock
                    starts). --save FILE keeps the trained weights for --mode greedy.
    --mode greedy   decodes test.src with --load FILE (or freshly initialised weights),
                    --batch consecutive sentences at a time, exactly as `nmt translate`
                    does: every sentence runs until its <eos>, the batch until all have
                    ended or the longest limit (2 * source length + 10) is reached, and
                    <pad> and <sos> are never predicted (src/decode/decode.c). --ignore-eos
                    instead runs every batch for its full limit (equal work whatever the
                    weights). Reports sentences/s and decoder steps per sentence.
    --mode beam     beam search with --beam K beams and --length-penalty alpha, by
                    exactly nmt's rules (decode_beam in src/decode/decode.c; see beam_batch):
                    the --batch sentences' N*K beams decode as one batch of rows.
                    Reports sentences/s and decoder steps per sentence.

    --mode epochs   time-to-quality (scripts/bench/time_to_quality.py): trains on the exported
                    batches as --epochs equal epochs, in order, and after each epoch, with
                    the clock stopped, validates on --valid VALID.bin (below): the loss,
                    teacher-forced, per target token over every held-out pair (nmt's
                    validate_loss), and the greedy translations of the pairs nmt's
                    validation scores by BLEU (decoded as --mode greedy decodes, in
                    batches of 64 in the file's order), whose token ids go to
                    --output-prefix PREFIX as PREFIX.K.ids for epoch K (BLEU is scored by
                    the caller with nmt's own code). Prints one JSON line per epoch:
                    training seconds (the epoch's wall-clock, every batch a tensor before
                    it starts), validation loss, validation seconds.
    --mode validate the same validation once, for the weights of --nmt-weights or --load
                    (--data is VALID.bin): checks the validation path against nmt's own
                    figures for an nmt model.

VALID.bin (fixture format) holds the held-out pairs as nmt's token ids: "dims" [src_vocab,
tgt_vocab, pairs, BLEU pairs], "valid.src" (N, S_max) and "valid.tgt" (N, T_max) padded
with 0, words only (no <sos>/<eos>), "valid.src_len" and "valid.tgt_len" (N), and
"bleu.index" (n): the pairs to translate for BLEU, in the order nmt's validation decodes
them.

Checking the decoders (not part of the timing): --output FILE writes each output's
token ids, one sentence a line; --score adds the mean length-normalised
log-probability of the outputs, log P(y <eos> | x) / ((5 + |y| + 1) / 6)^alpha, by a
teacher-forced pass; --nmt-weights MODEL.bin decodes with the weights of an nmt model
file instead (its WGTS section), so that the outputs can be compared with `nmt
translate` word for word.

Prints one JSON line. Run with Debian's interpreter, where python3-torch lives:

    /usr/bin/python3 scripts/bench/bench_torch.py --mode train --data batches.bin --threads 2
    /usr/bin/python3 scripts/bench/bench_torch.py --mode greedy --data batches.bin --batch 64
    /usr/bin/python3 scripts/bench/bench_torch.py --mode beam --data batches.bin --batch 64 --beam 5
    /usr/bin/python3 scripts/bench/bench_torch.py --mode epochs --data batches.bin --epochs 5 \
        --valid valid.bin --output-prefix hyp
    /usr/bin/python3 scripts/bench/bench_torch.py --mode validate --data valid.bin --nmt-weights model.bin \
        --output-prefix check

Threads: OMP_WAIT_POLICY=PASSIVE is set before torch is imported (otherwise torch's idle
OpenMP workers spin and steal the two cores from OpenBLAS), and OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS are set to --threads, since torch.set_num_threads does not reach
OpenBLAS's own thread pool. Debian's torch does its matrix products in OpenBLAS
(BLAS_INFO=generic -> libblas.so.3 -> openblas-pthread), so OPENBLAS_CORETYPE in the
environment chooses its kernel, as it does for nmt; the JSON reports the kernel in use.
"""

import argparse
import os
import sys


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["train", "greedy", "beam", "epochs", "validate"], required=True)
    ap.add_argument("--data", required=True,
                    help="file from nmt train --export-batches (validate: VALID.bin)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--embed", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--clip", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=10, help="train: untimed first batches")
    ap.add_argument("--batches", type=int, default=0, help="train: use only the first N (0: all)")
    ap.add_argument("--save", help="train: write the trained weights (torch.save state_dict)")
    ap.add_argument("--load", help="greedy, beam: weights from --save (default: fresh initialisation)")
    ap.add_argument("--nmt-weights", help="greedy, beam: the weights of an nmt model file instead")
    ap.add_argument("--batch", type=int, default=1, help="greedy, beam: sentences decoded together")
    ap.add_argument("--sentences", type=int, default=0, help="greedy, beam: only the first N (0: all)")
    ap.add_argument("--ignore-eos", action="store_true",
                    help="greedy: run every batch to its step limit regardless of <eos>")
    ap.add_argument("--beam", type=int, default=5, help="beam: beams per sentence")
    ap.add_argument("--length-penalty", type=float, default=0.6,
                    help="beam: alpha of lp(n) = ((5 + n) / 6)^alpha (0: none)")
    ap.add_argument("--output", help="greedy, beam: write the output ids, one sentence a line")
    ap.add_argument("--score", action="store_true",
                    help="greedy, beam: report the outputs' mean length-normalised log-probability")
    ap.add_argument("--epochs", type=int, default=1,
                    help="epochs: the exported batches are this many equal epochs")
    ap.add_argument("--valid", help="epochs: VALID.bin, the held-out pairs as token ids")
    ap.add_argument("--output-prefix",
                    help="epochs, validate: write the BLEU pairs' greedy output ids to PREFIX.K.ids")
    return ap.parse_args()


ARGS = parse_args()
# Before torch is imported: OpenMP and OpenBLAS read these when they load.
os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)

import ctypes  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)                                                # beam_torch.py
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reference"))   # fixture.py, the batches' format
from fixture import read_fixture  # noqa: E402
from beam_torch import beam_search, length_penalty  # noqa: E402

PAD, UNK, SOS, EOS = 0, 1, 2, 3


class Seq2Seq(nn.Module):
    """nmt's attention encoder-decoder. Tensors are time-major: src (S, B), tgt (T, B)."""

    def __init__(self, src_vocab, tgt_vocab, embed, hidden):
        super().__init__()
        self.src_emb = nn.Embedding(src_vocab, embed)
        self.encoder = nn.GRU(embed, hidden)
        self.tgt_emb = nn.Embedding(tgt_vocab, embed)
        self.att_key = nn.Linear(hidden, hidden, bias=False)
        self.att_query = nn.Linear(hidden, hidden)
        self.att_v = nn.Linear(hidden, 1, bias=False)
        self.decoder = nn.GRUCell(embed + hidden, hidden)
        self.out = nn.Linear(hidden, tgt_vocab)

    def encode(self, src, src_len):
        """src (S, B), src_len (B) on the CPU -> states (B, S, H), keys (B, S, H),
        pad mask (B, S) True at padding, final state (B, H)."""
        x = self.src_emb(src)                                        # (S, B, E)
        if bool((src_len == src.shape[0]).all()):
            states, h_n = self.encoder(x)                            # no padding to skip
        else:
            packed = pack_padded_sequence(x, src_len, enforce_sorted=False)
            states, h_n = self.encoder(packed)
            states, _ = pad_packed_sequence(states, total_length=src.shape[0])
        states = states.transpose(0, 1)                              # (B, S, H) for bmm
        return states, self.att_key(states), (src == PAD).T, h_n[0]

    def step(self, y_prev, s, states, keys, pad_mask):
        """One decoder step: y_prev (B) ids, s (B, H) -> s_t (B, H)."""
        q = self.att_query(s)                                        # (B, H)
        e = self.att_v(torch.tanh(keys + q.unsqueeze(1))).squeeze(2)  # (B, S)
        a = torch.softmax(e.masked_fill(pad_mask, float("-inf")), dim=1)
        context = torch.bmm(a.unsqueeze(1), states).squeeze(1)       # (B, H)
        return self.decoder(torch.cat([self.tgt_emb(y_prev), context], dim=1), s)

    def forward(self, src, src_len, tgt_in):
        """Teacher-forced logits (T, B, Vt)."""
        states, keys, pad_mask, s = self.encode(src, src_len)
        outputs = []
        for t in range(tgt_in.shape[0]):
            s = self.step(tgt_in[t], s, states, keys, pad_mask)
            outputs.append(s)
        return self.out(torch.stack(outputs))                        # one product for all steps


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


def peak_rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def load_batches(data, limit):
    dims = data["dims"]
    n = int(dims[2]) if limit <= 0 else min(limit, int(dims[2]))
    batches = []
    for k in range(n):
        src = torch.from_numpy(data[f"batch.{k}.src"].astype(np.int64))
        tgt_in = torch.from_numpy(data[f"batch.{k}.tgt_in"].astype(np.int64))
        tgt_out = torch.from_numpy(data[f"batch.{k}.tgt_out"].astype(np.int64))
        batches.append((src, (src != PAD).sum(0), tgt_in, tgt_out, int((tgt_out != PAD).sum())))
    return batches


def train_step(model, opt, params, batch):
    """One update on one exported batch, the tutorials' way; returns the batch's loss
    (mean over its non-pad targets) as a tensor."""
    src, src_len, tgt_in, tgt_out, _ = batch
    opt.zero_grad(set_to_none=True)
    logits = model(src, src_len, tgt_in)
    loss = F.cross_entropy(logits.view(-1, logits.shape[2]), tgt_out.view(-1), ignore_index=PAD)
    loss.backward()
    nn.utils.clip_grad_norm_(params, ARGS.clip)
    opt.step()
    return loss.detach()


def run_train(model, data):
    batches = load_batches(data, ARGS.batches)
    if len(batches) <= ARGS.warmup:
        sys.exit(f"bench_torch.py: {len(batches)} batches, need more than --warmup {ARGS.warmup}")
    opt = torch.optim.Adam(model.parameters(), lr=ARGS.lr)
    params = list(model.parameters())
    losses, times = [], []
    for batch in batches:
        t0 = time.perf_counter()
        loss = train_step(model, opt, params, batch)
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    timed = range(ARGS.warmup, len(batches))
    tokens = sum(batches[k][4] for k in timed)
    seconds = sum(times[k] for k in timed)
    if ARGS.save:
        torch.save(model.state_dict(), ARGS.save)
    return {"batches": len(batches), "warmup": ARGS.warmup, "timed_tokens": tokens,
            "timed_seconds": round(seconds, 4), "tokens_per_s": round(tokens / seconds, 1),
            "step_seconds": [round(t, 5) for t in times],
            "loss_first": round(losses[0], 4), "loss_last10": round(float(np.mean(losses[-10:])), 4)}


@torch.inference_mode()
def decode_batch(model, src, src_len, limits):
    """Greedy decoding as src/decode/decode.c does it. Returns the ids (steps, B) and the
    number of steps run; a sentence's output is what precedes its first <eos>."""
    states, keys, pad_mask, s = model.encode(src, src_len)
    B = src.shape[1]
    max_steps = int(limits.max())
    y = torch.full((B,), SOS, dtype=torch.int64)
    done = torch.zeros(B, dtype=torch.bool)
    never = torch.tensor([PAD, SOS])                   # never predicted
    out = []
    for _ in range(max_steps):
        s = model.step(y, s, states, keys, pad_mask)
        logits = model.out(s)                          # (B, Vt)
        logits[:, never] = float("-inf")
        y = logits.argmax(dim=1)
        out.append(y)
        if not ARGS.ignore_eos:
            done |= y == EOS
            if bool(done.all()):
                break
    return torch.stack(out), len(out)


def decode_jobs(data):
    """The first --sentences test sources in groups of --batch, as tensors: (src (S, B),
    lengths (B), limits 2 * length + 10 (B))."""
    src_all, len_all = data["test.src"], data["test.len"]
    n = len(len_all) if ARGS.sentences <= 0 else min(ARGS.sentences, len(len_all))
    jobs = []
    for start in range(0, n, ARGS.batch):
        lens = len_all[start:min(n, start + ARGS.batch)]
        S = int(lens.max())
        src = torch.from_numpy(src_all[start:start + len(lens), :S].T.astype(np.int64).copy())
        jobs.append((src, torch.from_numpy(lens.astype(np.int64)), torch.from_numpy(2 * lens.astype(np.int64) + 10)))
    return n, jobs


def run_greedy(model, data):
    # Inputs as tensors before the clock starts (nmt's time includes tokenising the text,
    # which is small next to the model).
    n, jobs = decode_jobs(data)
    model.eval()
    results = []
    t0 = time.perf_counter()
    for src, lens, limits in jobs:
        results.append(decode_batch(model, src, lens, limits))
    seconds = time.perf_counter() - t0
    # Steps each sentence needed: up to and including its <eos>, or its own limit.
    needed, row_steps, outputs = [], 0, []
    for (ids, steps), (_, _, limits) in zip(results, jobs):
        row_steps += steps * ids.shape[1]
        ids = ids.numpy()
        for b in range(ids.shape[1]):
            limit = int(limits[b])
            eos = np.nonzero(ids[:limit, b] == EOS)[0]
            needed.append(int(eos[0]) + 1 if len(eos) and not ARGS.ignore_eos else limit)
            outputs.append(ids[:int(eos[0]) if len(eos) else limit, b].tolist())
    result = {"sentences": n, "batch": ARGS.batch, "ignore_eos": ARGS.ignore_eos,
              "seconds": round(seconds, 4), "sentences_per_s": round(n / seconds, 2),
              "steps_per_sentence": round(float(np.mean(needed)), 3),
              "row_steps_per_sentence": round(row_steps / n, 3)}
    return result, jobs, outputs


@torch.inference_mode()
def beam_batch(model, src, src_len, limits, K, alpha):
    """Beam search for the N sentences of src (S, N) by nmt's rules (decode_beam in
    src/decode/decode.c; scripts/bench/beam_torch.py), all N*K beams as one batch of rows. Returns
    the outputs (N lists of ids) and the steps each sentence ran (N)."""
    N = src.shape[1]
    states, keys, pad_mask, s = model.encode(src.repeat_interleave(K, dim=1), src_len.repeat_interleave(K))
    state = {"s": s}

    def step(t, y):
        state["s"] = model.step(y, state["s"], states, keys, pad_mask)
        return model.out(state["s"])

    def reorder(t, parent_rows):
        state["s"] = state["s"].index_select(0, parent_rows)   # decoder states follow their beams

    return beam_search(step, reorder, N, K, model.out.out_features, limits, alpha)


def run_beam(model, data):
    n, jobs = decode_jobs(data)
    model.eval()
    results = []
    t0 = time.perf_counter()
    for src, lens, limits in jobs:
        results.append(beam_batch(model, src, lens, limits, ARGS.beam, ARGS.length_penalty))
    seconds = time.perf_counter() - t0
    outputs, needed, search, row_steps = [], [], [], 0
    for (outs, steps), (_, _, limits) in zip(results, jobs):
        row_steps += int(steps.max()) * len(outs)
        search += steps.tolist()
        for o, limit in zip(outs, limits.tolist()):
            outputs.append(o)
            needed.append(len(o) + 1 if len(o) < limit else limit)
    result = {"sentences": n, "batch": ARGS.batch, "beam": ARGS.beam, "length_penalty": ARGS.length_penalty,
              "seconds": round(seconds, 4), "sentences_per_s": round(n / seconds, 2),
              "steps_per_sentence": round(float(np.mean(needed)), 3),
              "search_steps_per_sentence": round(float(np.mean(search)), 3),
              "row_steps_per_sentence": round(row_steps / n, 3)}
    return result, jobs, outputs


@torch.inference_mode()
def mean_score(model, jobs, outputs, alpha):
    """Mean over sentences of log P(y <eos> | x) / lp(|y| + 1), teacher-forced."""
    scores, k = [], 0
    for src, lens, _ in jobs:
        ys = outputs[k:k + len(lens)]
        k += len(lens)
        T = max(len(y) for y in ys) + 1
        tgt_in = torch.full((T, len(ys)), PAD, dtype=torch.int64)
        tgt_out = torch.full((T, len(ys)), PAD, dtype=torch.int64)
        for b, y in enumerate(ys):
            tgt_in[:len(y) + 1, b] = torch.tensor([SOS] + y)
            tgt_out[:len(y) + 1, b] = torch.tensor(y + [EOS])
        logp = torch.log_softmax(model(src, lens, tgt_in), dim=2).gather(2, tgt_out.unsqueeze(2)).squeeze(2)
        total = logp.masked_fill(tgt_out == PAD, 0.0).sum(0)
        scores += [float(total[b]) / length_penalty(len(y) + 1, alpha) for b, y in enumerate(ys)]
    return float(np.mean(scores))


# ---------------------------------------------------------------- time-to-quality

VALID_BATCH = 64    # nmt validates the loss in batches of train.batch_size (64 here) and
                    # decodes the BLEU pairs 64 at a time (src/train/validate.c)


@torch.inference_mode()
def valid_loss(model, valid):
    """Cross-entropy per target token (every word of every held-out reference and its
    <eos>), teacher-forced, summed in double over batches of 64 sorted by (target,
    source) length, as nmt's validate_loss: the sum does not depend on the batches."""
    src_all, src_len = valid["valid.src"], valid["valid.src_len"].astype(np.int64)
    tgt_all, tgt_len = valid["valid.tgt"], valid["valid.tgt_len"].astype(np.int64)
    order = sorted(range(len(src_len)), key=lambda i: (tgt_len[i], src_len[i]))
    total, tokens = 0.0, 0
    for start in range(0, len(order), VALID_BATCH):
        idx = order[start:start + VALID_BATCH]
        S, T = int(src_len[idx].max()), int(tgt_len[idx].max()) + 1
        src = torch.from_numpy(src_all[idx, :S].T.astype(np.int64).copy())
        tgt_in = torch.full((T, len(idx)), PAD, dtype=torch.int64)
        tgt_out = torch.full((T, len(idx)), PAD, dtype=torch.int64)
        for b, i in enumerate(idx):
            n, y = int(tgt_len[i]), torch.from_numpy(tgt_all[i, :tgt_len[i]].astype(np.int64))
            tgt_in[0, b], tgt_in[1:n + 1, b] = SOS, y
            tgt_out[:n, b], tgt_out[n, b] = y, EOS
        logits = model(src, torch.from_numpy(src_len[idx]), tgt_in)
        nll = F.cross_entropy(logits.view(-1, logits.shape[2]), tgt_out.view(-1), ignore_index=PAD,
                              reduction="none")
        total += float(nll.double().sum())
        tokens += int((tgt_out != PAD).sum())
    return total / tokens


def bleu_outputs(model, valid):
    """Greedy translations (token ids, <eos> not included) of the pairs VALID.bin's
    bleu.index names, decoded 64 at a time in that order as nmt's validation decodes
    them (--mode greedy's rules: until <eos> or 2 * source length + 10 words)."""
    src_all, src_len = valid["valid.src"], valid["valid.src_len"].astype(np.int64)
    index = valid["bleu.index"].astype(np.int64)
    outputs = []
    for start in range(0, len(index), VALID_BATCH):
        rows = index[start:start + VALID_BATCH]
        lens = src_len[rows]
        src = torch.from_numpy(src_all[rows, :int(lens.max())].T.astype(np.int64).copy())
        limits = 2 * lens + 10
        ids, _ = decode_batch(model, src, torch.from_numpy(lens), torch.from_numpy(limits))
        ids = ids.numpy()
        for b in range(ids.shape[1]):
            limit = int(limits[b])
            eos = np.nonzero(ids[:limit, b] == EOS)[0]
            outputs.append(ids[:int(eos[0]) if len(eos) else limit, b].tolist())
    return outputs


def validate(model, valid, tag):
    """The held-out measures of the model as it stands: the loss, and the BLEU pairs'
    greedy outputs written to PREFIX.TAG.ids (one sentence's ids a line)."""
    model.eval()
    t0 = time.perf_counter()
    loss = valid_loss(model, valid)
    outputs = bleu_outputs(model, valid)
    seconds = time.perf_counter() - t0
    model.train()
    result = {"valid_loss": round(loss, 6), "valid_seconds": round(seconds, 3), "bleu_sentences": len(outputs)}
    if ARGS.output_prefix:
        path = f"{ARGS.output_prefix}.{tag}.ids"
        with open(path, "w") as f:
            f.writelines(" ".join(map(str, o)) + "\n" for o in outputs)
        result["output"] = path
    return result


def read_valid(path, src_vocab, tgt_vocab):
    valid = read_fixture(path)
    if (int(valid["dims"][0]), int(valid["dims"][1])) != (src_vocab, tgt_vocab):
        sys.exit(f"bench_torch.py: {path} has vocabularies {valid['dims'][0]}/{valid['dims'][1]}, "
                 f"the model {src_vocab}/{tgt_vocab}")
    return valid


def run_epochs(model, data):
    """--epochs equal epochs of the exported batches, each followed (clock stopped) by a
    validation; one JSON line per epoch as it ends."""
    if not ARGS.valid:
        sys.exit("bench_torch.py: --mode epochs needs --valid VALID.bin")
    valid = read_valid(ARGS.valid, int(data["dims"][0]), int(data["dims"][1]))
    batches = load_batches(data, 0)
    if ARGS.epochs < 1 or len(batches) % ARGS.epochs:
        sys.exit(f"bench_torch.py: {len(batches)} batches do not make {ARGS.epochs} equal epochs")
    per_epoch = len(batches) // ARGS.epochs
    opt = torch.optim.Adam(model.parameters(), lr=ARGS.lr)
    params = list(model.parameters())
    epochs, clock = [], 0.0
    for e in range(ARGS.epochs):
        mine = batches[e * per_epoch:(e + 1) * per_epoch]
        t0 = time.perf_counter()
        losses = [train_step(model, opt, params, batch).item() for batch in mine]
        seconds = time.perf_counter() - t0
        clock += seconds
        record = {"epoch": e + 1, "train_seconds": round(seconds, 3), "clock": round(clock, 3),
                  "batches": len(mine), "target_tokens": sum(b[4] for b in mine),
                  "train_loss": round(float(np.mean(losses)), 6)}
        record.update(validate(model, valid, e + 1))
        print(json.dumps(record), flush=True)
        epochs.append(record)
    return {"batches_per_epoch": per_epoch, "epochs": epochs}


def nmt_weights(path):
    """The parameters of an nmt model file (src/files/modelfile.h): (DIMS, {name: array})."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"NMTMODEL":
        sys.exit(f"bench_torch.py: {path}: not an nmt model file")
    count, pos, sections = int(np.frombuffer(raw, "<u4", 1, 16)[0]), 20, {}
    for _ in range(count):
        tag, size = raw[pos:pos + 4].decode(), int(np.frombuffer(raw, "<u8", 1, pos + 4)[0])
        sections[tag] = raw[pos + 16:pos + 16 + size]
        pos += 16 + size
    dims = np.frombuffer(sections["DIMS"], "<i8")
    Vs, Vt, E_, H_ = (int(x) for x in dims[:4])
    shapes = [("src_emb", Vs, E_), ("enc_w_ih", 3 * H_, E_), ("enc_w_hh", 3 * H_, H_), ("enc_b_ih", 3 * H_, 1),
              ("enc_b_hh", 3 * H_, 1), ("tgt_emb", Vt, E_), ("att_w_key", H_, H_), ("att_v", H_, 1),
              ("dec_w_ih", 3 * H_, E_ + H_), ("dec_w_hh", 3 * H_, H_), ("att_w_query", H_, H_),
              ("dec_b_ih", 3 * H_, 1), ("dec_b_hh", 3 * H_, 1), ("att_b_query", H_, 1), ("out_w", Vt, H_),
              ("out_b", Vt, 1)]                          # params_shapes() order (src/models/model.c)
    w, at = np.frombuffer(sections["WGTS"], "<f4"), 0
    params = {}
    for name, rows, cols in shapes:
        params[name] = torch.from_numpy(w[at:at + rows * cols].reshape(rows, cols).copy())
        at += rows * cols
    return dims, params


def load_nmt_weights(model, params):
    names = {"src_emb.weight": "src_emb", "encoder.weight_ih_l0": "enc_w_ih", "encoder.weight_hh_l0": "enc_w_hh",
             "encoder.bias_ih_l0": "enc_b_ih", "encoder.bias_hh_l0": "enc_b_hh", "tgt_emb.weight": "tgt_emb",
             "att_key.weight": "att_w_key", "att_query.weight": "att_w_query", "att_query.bias": "att_b_query",
             "att_v.weight": "att_v", "decoder.weight_ih": "dec_w_ih", "decoder.weight_hh": "dec_w_hh",
             "decoder.bias_ih": "dec_b_ih", "decoder.bias_hh": "dec_b_hh", "out.weight": "out_w",
             "out.bias": "out_b"}
    state = model.state_dict()
    model.load_state_dict({k: params[v].reshape(state[k].shape) for k, v in names.items()})


def main():
    torch.set_num_threads(ARGS.threads)
    torch.manual_seed(ARGS.seed)
    data = read_fixture(ARGS.data)
    src_vocab, tgt_vocab = int(data["dims"][0]), int(data["dims"][1])
    embed, hidden, params = ARGS.embed, ARGS.hidden, None
    trains = ARGS.mode in ("train", "epochs")
    if not trains and ARGS.nmt_weights:
        dims, params = nmt_weights(ARGS.nmt_weights)
        if (int(dims[0]), int(dims[1])) != (src_vocab, tgt_vocab):
            sys.exit(f"bench_torch.py: {ARGS.nmt_weights} has vocabularies {dims[0]}/{dims[1]}, "
                     f"{ARGS.data} {src_vocab}/{tgt_vocab}")
        embed, hidden = int(dims[2]), int(dims[3])
    model = Seq2Seq(src_vocab, tgt_vocab, embed, hidden)
    if params is not None:
        load_nmt_weights(model, params)
    elif not trains and ARGS.load:
        model.load_state_dict(torch.load(ARGS.load))
    result = {"program": "pytorch", "mode": ARGS.mode, "torch": torch.__version__,
              "threads": ARGS.threads, "openblas_kernel": openblas_kernel(),
              "aten_cpu_capability": aten_capability(),
              "parameters": sum(p.numel() for p in model.parameters())}
    if ARGS.mode == "train":
        result.update(run_train(model, data))
    elif ARGS.mode == "epochs":
        result.update(run_epochs(model, data))
    elif ARGS.mode == "validate":
        result.update(validate(model, data, "validate"))
        result["weights"] = ARGS.nmt_weights or ARGS.load or "fresh initialisation"
    else:
        decoded, jobs, outputs = (run_greedy if ARGS.mode == "greedy" else run_beam)(model, data)
        result.update(decoded)
        result["weights"] = ARGS.nmt_weights or ARGS.load or "fresh initialisation"
        result["peak_rss_kib"] = peak_rss_kib()       # before the checks' extras
        if ARGS.output:
            with open(ARGS.output, "w") as f:
                f.writelines(" ".join(map(str, o)) + "\n" for o in outputs)
        if ARGS.score:
            result["mean_normalised_logprob"] = round(mean_score(model, jobs, outputs, ARGS.length_penalty), 5)
    result.setdefault("peak_rss_kib", peak_rss_kib())
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
