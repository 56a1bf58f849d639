"""PyTorch side of `make bench`: nmt's model written the way a PyTorch user would write it.

This is the baseline nmt is measured against (issue #3), so it is meant to be a good,
idiomatic and efficient PyTorch program, not the deliberately spelled-out
scripts/reference.py: nn.Embedding, nn.GRU over a packed sequence, nn.GRUCell,
nn.Linear, F.cross_entropy, clip_grad_norm_, torch.optim.Adam, PyTorch's default
initialisation (which is also nmt's scheme). The model is exactly nmt's (src/model.h):

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

Data come from `nmt train CONFIG --export-batches FILE` (format: scripts/fixture.py;
records: src/train.h), so both programs see the very same batches in the same order
and the same held-out source sentences as token ids.

    --mode train    trains on the exported batches in order; reports target tokens/s
                    (non-pad tgt_out entries) over the batches after --warmup, timing
                    only the training steps (every batch is a tensor before the clock
                    starts). --save FILE keeps the trained weights for --mode greedy.
    --mode greedy   decodes test.src with --load FILE (or freshly initialised weights),
                    --batch consecutive sentences at a time, exactly as `nmt translate`
                    does: every sentence runs until its <eos>, the batch until all have
                    ended or the longest limit (2 * source length + 10) is reached, and
                    <pad> and <sos> are never predicted (src/decode.c). --ignore-eos
                    instead runs every batch for its full limit (equal work whatever the
                    weights). Reports sentences/s and decoder steps per sentence.

Prints one JSON line. Run with Debian's interpreter, where python3-torch lives:

    /usr/bin/python3 scripts/bench_torch.py --mode train --data batches.bin --threads 2
    /usr/bin/python3 scripts/bench_torch.py --mode greedy --data batches.bin --batch 64

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
    ap.add_argument("--mode", choices=["train", "greedy"], required=True)
    ap.add_argument("--data", required=True, help="file from nmt train --export-batches")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--embed", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--clip", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=10, help="train: untimed first batches")
    ap.add_argument("--batches", type=int, default=0, help="train: use only the first N (0: all)")
    ap.add_argument("--save", help="train: write the trained weights (torch.save state_dict)")
    ap.add_argument("--load", help="greedy: weights from --save (default: fresh initialisation)")
    ap.add_argument("--batch", type=int, default=1, help="greedy: sentences decoded together")
    ap.add_argument("--sentences", type=int, default=0, help="greedy: only the first N (0: all)")
    ap.add_argument("--ignore-eos", action="store_true",
                    help="greedy: run every batch to its step limit regardless of <eos>")
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture import read_fixture  # noqa: E402

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


def run_train(model, data):
    batches = load_batches(data, ARGS.batches)
    if len(batches) <= ARGS.warmup:
        sys.exit(f"bench_torch.py: {len(batches)} batches, need more than --warmup {ARGS.warmup}")
    opt = torch.optim.Adam(model.parameters(), lr=ARGS.lr)
    params = list(model.parameters())
    losses, times = [], []
    for src, src_len, tgt_in, tgt_out, _ in batches:
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(src, src_len, tgt_in)
        loss = F.cross_entropy(logits.view(-1, logits.shape[2]), tgt_out.view(-1), ignore_index=PAD)
        loss.backward()
        nn.utils.clip_grad_norm_(params, ARGS.clip)
        opt.step()
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
    """Greedy decoding as src/decode.c does it. Returns the ids (steps, B) and the
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


def run_greedy(model, data):
    src_all, len_all = data["test.src"], data["test.len"]
    n = len(len_all) if ARGS.sentences <= 0 else min(ARGS.sentences, len(len_all))
    # Inputs as tensors before the clock starts (nmt's time includes tokenising the text,
    # which is small next to the model).
    jobs = []
    for start in range(0, n, ARGS.batch):
        lens = len_all[start:start + ARGS.batch]
        S = int(lens.max())
        src = torch.from_numpy(src_all[start:start + ARGS.batch, :S].T.astype(np.int64).copy())
        jobs.append((src, torch.from_numpy(lens.astype(np.int64)), torch.from_numpy(2 * lens + 10)))
    model.eval()
    results = []
    t0 = time.perf_counter()
    for src, lens, limits in jobs:
        results.append(decode_batch(model, src, lens, limits))
    seconds = time.perf_counter() - t0
    # Steps each sentence needed: up to and including its <eos>, or its own limit.
    needed, row_steps = [], 0
    for (ids, steps), (_, _, limits) in zip(results, jobs):
        row_steps += steps * ids.shape[1]
        ids = ids.numpy()
        for b in range(ids.shape[1]):
            limit = int(limits[b])
            eos = np.nonzero(ids[:limit, b] == EOS)[0]
            needed.append(int(eos[0]) + 1 if len(eos) and not ARGS.ignore_eos else limit)
    return {"sentences": n, "batch": ARGS.batch, "ignore_eos": ARGS.ignore_eos,
            "seconds": round(seconds, 4), "sentences_per_s": round(n / seconds, 2),
            "steps_per_sentence": round(float(np.mean(needed)), 3),
            "row_steps_per_sentence": round(row_steps / n, 3),
            "weights": ARGS.load or "fresh initialisation"}


def main():
    torch.set_num_threads(ARGS.threads)
    torch.manual_seed(ARGS.seed)
    data = read_fixture(ARGS.data)
    src_vocab, tgt_vocab = int(data["dims"][0]), int(data["dims"][1])
    model = Seq2Seq(src_vocab, tgt_vocab, ARGS.embed, ARGS.hidden)
    if ARGS.mode == "greedy" and ARGS.load:
        model.load_state_dict(torch.load(ARGS.load))
    result = {"program": "pytorch", "mode": ARGS.mode, "torch": torch.__version__,
              "threads": ARGS.threads, "openblas_kernel": openblas_kernel(),
              "aten_cpu_capability": aten_capability(),
              "parameters": sum(p.numel() for p in model.parameters())}
    result.update(run_train(model, data) if ARGS.mode == "train" else run_greedy(model, data))
    result["peak_rss_kib"] = peak_rss_kib()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
