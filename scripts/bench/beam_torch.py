"""beam_torch.py — nmt's beam search (beam_search in src/decode/decode.c) in PyTorch, for the
PyTorch sides of the benchmarks (scripts/bench/bench_torch.py, the recurrent model;
scripts/bench/bench_torch_transformer.py, the Transformer), which differ only in the model
they step. Imported after torch (the importers set the thread environment first).

The N sentences' N*K beams decode as one batch of rows (sentence n's beams are rows
n*K .. n*K+K-1). Per step t (0-based) and sentence: each live beam is extended by every
word but <pad> and <sos> (log-softmax over the whole vocabulary, added to the beam's
total); the 2K best candidates are walked best first while fewer than K beams continue
and fewer than K hypotheses (over all steps) have finished: an <eos> finishes a
hypothesis of t words, normalised score total / lp(t + 1), the best kept; any other
word continues as a live beam of the next step. A sentence stops when K hypotheses
have finished, no beam continues, or t + 1 reaches its limit (if none finished: the
best live beam, t + 1 words). Dead beams hold score -inf (at t = 0 all but beam 0), so
their candidates never rank.
"""

import torch

PAD, SOS, EOS = 0, 2, 3


def length_penalty(n, alpha):
    """GNMT's lp(n) = ((5 + n) / 6)^alpha; n counts the <eos>."""
    return 1.0 if alpha == 0 else ((5.0 + n) / 6.0) ** alpha


@torch.inference_mode()
def beam_search(step, reorder, N, K, V, limits, alpha):
    """step(t, y) -> the logits (N*K, V) of the rows fed the words y (N*K); reorder(t,
    parent_rows): the model's row states follow their beams (row r becomes parent_rows[r]).
    limits (N) the sentences' word limits. Returns the outputs (N lists of ids) and the
    steps each sentence ran (N)."""
    R, max_steps = N * K, int(limits.max())
    score = torch.full((N, K), float("-inf"))
    score[:, 0] = 0.0                                  # at t = 0 only beam 0 is live
    y = torch.full((R,), SOS, dtype=torch.int64)
    hist = torch.zeros((R, max_steps), dtype=torch.int64)  # each live beam's words so far
    best = torch.full((N,), float("-inf"))             # best normalised finished score
    out = torch.zeros((N, max_steps), dtype=torch.int64)
    out_len = torch.zeros(N, dtype=torch.int64)
    finished = torch.zeros(N, dtype=torch.int64)
    done = torch.zeros(N, dtype=torch.bool)
    steps = torch.zeros(N, dtype=torch.int64)
    first_row = torch.arange(N) * K                    # (N)
    own_slot = torch.arange(K).expand(N, K)            # a slot nobody fills keeps its row
    never = torch.tensor([PAD, SOS])
    for t in range(max_steps):
        logp = torch.log_softmax(step(t, y), dim=1)    # (R, V)
        logp[:, never] = float("-inf")
        top, idx = (score.reshape(R, 1) + logp).view(N, K * V).topk(2 * K, dim=1)  # (N, 2K) best first
        beam, word = idx // V, idx % V
        eos = word == EOS
        cont = ~eos
        cont_before = cont.cumsum(1) - cont.long()     # continuing candidates ranked above
        eos_before = eos.cumsum(1) - eos.long()
        taken = (cont_before < K) & (finished.unsqueeze(1) + eos_before < K) & ~done.unsqueeze(1)
        # Finished hypotheses: keep the best normalised one (the first of equals).
        fin = taken & eos
        norm = torch.where(fin, top / length_penalty(t + 1, alpha), float("-inf"))
        new_best, c = norm.max(dim=1)
        better = new_best > best
        rows = first_row + beam.gather(1, c.unsqueeze(1)).squeeze(1)
        out = torch.where(better.unsqueeze(1), hist[rows], out)
        out_len = torch.where(better, t, out_len)
        best = torch.where(better, new_best, best)
        finished += fin.sum(1)
        # Continuing candidates become the next beams, in order; the rest go to slot K.
        cont = taken & cont
        slot = torch.where(cont, cont_before, K)
        score = torch.full((N, K + 1), float("-inf")).scatter_(1, slot, top)[:, :K]
        parent = torch.cat([own_slot, own_slot[:, :1]], 1).scatter_(1, slot, beam)[:, :K]
        y_next = torch.full((N, K + 1), EOS, dtype=torch.int64).scatter_(1, slot, word)[:, :K]
        parent_rows = (first_row.unsqueeze(1) + parent).view(R)
        reorder(t, parent_rows)                        # the model's states follow their beams
        hist = hist.index_select(0, parent_rows)
        y = y_next.reshape(R)
        hist[:, t] = y
        live = cont.sum(1)
        stop = ~done & ((finished >= K) | (live == 0) | (t + 1 >= limits))
        cut = stop & (best == float("-inf")) & (live > 0)   # nothing finished: the best live beam
        out = torch.where(cut.unsqueeze(1), hist[first_row], out)
        out_len = torch.where(cut, t + 1, out_len)
        steps = torch.where(stop, t + 1, steps)
        done |= stop
        if bool(done.all()):
            break
    return [out[n, :int(out_len[n])].tolist() for n in range(N)], steps
