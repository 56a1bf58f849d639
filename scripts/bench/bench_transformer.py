"""make bench-transformer: nmt's Transformer against PyTorch on the same CPU, same model, same data (issue 17).

    /usr/bin/python3 scripts/bench/bench_transformer.py            # the full run; writes docs/bench/transformer.json
                                                                   # and docs/bench-transformer.md's section rendered from it
    /usr/bin/python3 scripts/bench/bench_transformer.py --quick    # a smoke run of every step (prints its rendering)
    python3 scripts/bench/bench_transformer.py --render docs/bench/transformer.json
                                                                   # measures nothing: the section's Markdown

The issue's targets, against PyTorch on the same machine, the same OpenBLAS kernel, the
same batches and the same model (d_model 256, 3 + 3 layers, 4 heads, ff 1024, batch 64,
2 threads each):

    training        target tokens/s at least 2x PyTorch's (nn.Transformer modules)
    decoding        greedy and beam 5, line by line and in batches of 64, sentences/s at
                    least 2x a PyTorch decoder that caches keys and values; the
                    tutorials' decoder, which recomputes the prefix every step, is
                    reported beside it but is not the bar
    memory          peak resident set at most 0.6x PyTorch's, for training and for each
                    decoding setting (against the cached decoder)
    roofline        reported: nmt's training FLOP/s as a fraction of OpenBLAS's sgemm
                    rate at the model's own matrix shapes

The PyTorch side is scripts/bench/bench_torch_transformer.py. This driver is scripts/bench/bench.py's
method applied to the Transformer, and reuses its machinery (imported, not copied): the
Runner that records every command with its wall time and peak RSS (wait4), the waits for
a quiet machine and the repetition of runs that shared it, the batch export, nmt's
training figures from train.log (log_every 1), nmt translate's time minus its start-up,
the agreement check, the sgemm measurement (scripts/bench/sgemm_rate.c) and the provenance
(commit, CPU model and its vector flags, load). In order:

 1. Export. `nmt train CONFIG --export-batches FILE` writes the first --batches training
    batches and 2,000 held-out sources as token ids (../shared/data/mar.txt, else
    data/mar.txt; max_len 20, valid_fraction 0.06, batch 64, Adam 1e-3 constant, clip 5,
    seed 1, 2 threads, dropout 0.1 on both sides).
 2. Rounds (--rounds, default 3), the two programs alternating for each figure, the
    order flipped every round; medians of the rounds, ratios of the medians:
      training   `nmt train` with max_steps = the exported count and log_every 1, and
                 bench_torch_transformer.py --mode train: target tokens/s over the
                 batches after --warmup, step times only
      decoding   each program decodes with the model it has just trained: greedy and
                 beam 5 (length penalty 0.6), line by line and in batches of 64, on the
                 2,000 sources (beam line by line: the first --beam-sentences); PyTorch
                 twice, --decoder cached and --decoder recompute; sentences/s and the
                 decoder steps per sentence each ran
      agreement  (round 1) PyTorch with nmt's weights (--nmt-weights, cached decoder,
                 batches of 64) against nmt translate's output for that model, word for
                 word; and the cached decoder against the recompute decoder on nmt's
                 weights (--mode check: their logits at every step, and their words)
      memory     peak resident set of every process
 3. The sgemm limit: scripts/bench/sgemm_rate.c at the shapes of nmt's Transformer products
    for a batch of mean lengths (gemm_shapes below), nmt's kernel, 2 threads, measured
    after round 1 and at the end (the better rate of each shape); the FLOP-weighted
    mean rate is the limit.
 4. The roofline: matrix-product FLOPs per target token of a training step, counted
    from the exported batches as nmt computes them, on packed rows (the real positions
    only; attention per sentence over its own lengths; the forward products, times 3
    for forward and backward), times the tokens/s, over the limit. PyTorch computes
    the padded batches, so it does more work for the same tokens than is counted here.

PyTorch gets nmt's kernel: OPENBLAS_CORETYPE is set, for every process after the first
nmt run, to the kernel nmt reported, and torch's matrix products go through the same
OpenBLAS (bench_torch_transformer.py reports the kernel it sees).

A full run takes 30 to 45 minutes on 2 cores (more on a busy machine; --help gives the sizes);
--quick two or three minutes.
"""

import argparse
import datetime
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import bench
from bench import BATCH, DECODE_BATCH, BEAM, ALPHA, MAX_LEN, THREADS, NMT, PYTHON, HERE, ROOT, median

D_MODEL, HEADS, FF, LAYERS = 256, 4, 1024, 3     # 3 encoder and 3 decoder layers
LR, WARMUP_STEPS, CLIP = 1e-3, 0, 5.0            # Adam, constant rate (see docs/bench-transformer.md)
DROPOUT = 0.1                                       # both programs, training only
TORCH = os.path.join(HERE, "bench_torch_transformer.py")
RAW = os.path.join(ROOT, "docs", "bench", "transformer.json")
BENCHMARKS = os.path.join(ROOT, "docs", "bench-transformer.md")   # where the section is
BLOCK = "transformer"
TARGET_SPEED, TARGET_MEMORY = 2.0, 0.6
DECODINGS = [("greedy", 1, 1), ("greedy", 1, DECODE_BATCH), ("beam", BEAM, 1), ("beam", BEAM, DECODE_BATCH)]
PROGRAMS = (("nmt", "nmt"), ("cached", "PyTorch, cached K/V"), ("recompute", "PyTorch, recompute (tutorial)"))


# ---------------------------------------------------------------- counting work

def gemm_shapes(S, T, B, V, Ns, Nt, d=D_MODEL, heads=HEADS, ff=FF, enc=LAYERS, dec=LAYERS):
    """nmt's Transformer's matrix products for one batch (src/models/transformer.c, src/layers/mha.c,
    src/layers/ffn.c), as (name, TA, TB, M, N, K, calls) in cblas_sgemm's row-major
    conventions, C (M, N): the forward pass, then the backward pass (each forward product
    has two of the same size there: 3x the forward FLOPs in all). nmt computes on packed
    rows: the position-wise products over the Ns real source and Nt real target
    positions, attention one product per sentence and head over its own lengths, here
    S and T, the batch's mean lengths (the causal square whole, as nmt computes it)."""
    S, T, Ns, Nt = max(1, round(S)), max(1, round(T)), round(Ns), round(Nt)
    dk, bh = d // heads, B * heads
    forward = [
        ("enc projections Q, K, V, out", "N", "T", Ns, d, d, 4 * enc),
        ("enc scores (per sentence, head)", "N", "T", S, S, dk, enc * bh),
        ("enc context (per sentence, head)", "N", "N", S, dk, S, enc * bh),
        ("enc feed-forward in", "N", "T", Ns, ff, d, enc),
        ("enc feed-forward out", "N", "T", Ns, d, ff, enc),
        ("dec projections: self Q, K, V, out; cross Q, out", "N", "T", Nt, d, d, 6 * dec),
        ("dec cross K, V projections (memory)", "N", "T", Ns, d, d, 2 * dec),
        ("dec self scores (per sentence, head)", "N", "T", T, T, dk, dec * bh),
        ("dec self context (per sentence, head)", "N", "N", T, dk, T, dec * bh),
        ("dec cross scores (per sentence, head)", "N", "T", T, S, dk, dec * bh),
        ("dec cross context (per sentence, head)", "N", "N", T, dk, S, dec * bh),
        ("dec feed-forward in", "N", "T", Nt, ff, d, dec),
        ("dec feed-forward out", "N", "T", Nt, d, ff, dec),
        ("output layer", "N", "T", Nt, V, d, 1),
    ]
    backward = [
        ("output layer dX", "N", "N", Nt, d, V, 1),
        ("output layer dW", "T", "N", V, d, Nt, 1),
        ("dec feed-forward dW2", "T", "N", d, ff, Nt, dec),
        ("dec feed-forward dh", "N", "N", Nt, ff, d, dec),
        ("dec feed-forward dW1", "T", "N", ff, d, Nt, dec),
        ("dec feed-forward dX", "N", "N", Nt, d, ff, dec),
        ("dec projections dX (self 4, cross Q, out)", "N", "N", Nt, d, d, 6 * dec),
        ("dec projections dW (self 4, cross Q, out)", "T", "N", d, d, Nt, 6 * dec),
        ("dec cross K, V dmemory", "N", "N", Ns, d, d, 2 * dec),
        ("dec cross K, V dW", "T", "N", d, d, Ns, 2 * dec),
        ("dec self dV, dK (per sentence, head)", "T", "N", T, dk, T, 2 * dec * bh),
        ("dec self dA (per sentence, head)", "N", "T", T, T, dk, dec * bh),
        ("dec self dQ (per sentence, head)", "N", "N", T, dk, T, dec * bh),
        ("dec cross dV, dK (per sentence, head)", "T", "N", S, dk, T, 2 * dec * bh),
        ("dec cross dA (per sentence, head)", "N", "T", T, S, dk, dec * bh),
        ("dec cross dQ (per sentence, head)", "N", "N", T, dk, S, dec * bh),
        ("enc feed-forward dW2", "T", "N", d, ff, Ns, enc),
        ("enc feed-forward dh", "N", "N", Ns, ff, d, enc),
        ("enc feed-forward dW1", "T", "N", ff, d, Ns, enc),
        ("enc feed-forward dX", "N", "N", Ns, d, ff, enc),
        ("enc projections dX", "N", "N", Ns, d, d, 4 * enc),
        ("enc projections dW", "T", "N", d, d, Ns, 4 * enc),
        ("enc dV, dK (per sentence, head)", "T", "N", S, dk, S, 2 * enc * bh),
        ("enc dA (per sentence, head)", "N", "T", S, S, dk, enc * bh),
        ("enc dQ (per sentence, head)", "N", "N", S, dk, S, enc * bh),
    ]
    assert abs(flops(backward) - 2 * flops(forward)) < 1e-6 * flops(forward)
    return forward + backward


def flops(shapes):
    return sum(2.0 * M * N * K * calls for _, _, _, M, N, K, calls in shapes)


# ---------------------------------------------------------------- the benchmark

class TransformerBench(bench.Bench):
    """scripts/bench/bench.py's Bench with the Transformer's config, shapes, PyTorch script
    and rounds."""

    def __init__(self, args):
        super().__init__(args)
        for d in (os.path.join(ROOT, "..", "shared", "data"), os.path.join(ROOT, "..", "..", "shared", "data")):
            if os.path.isfile(os.path.join(d, "mar.txt")):      # a worktree sits one level deeper
                self.data = os.path.normpath(os.path.join(d, "mar.txt"))
                break

    def config(self, name, steps, threads=THREADS):
        cfg = {"data": {"train": self.data, "max_len": MAX_LEN, "valid_fraction": 0.06},
               "model": {"type": "transformer", "embed": D_MODEL, "encoder_layers": LAYERS,
                         "decoder_layers": LAYERS, "heads": HEADS, "ff": FF, "dropout": DROPOUT},
               "train": {"batch_size": BATCH, "epochs": 1, "max_steps": steps, "log_every": 1,
                         "threads": threads, "checkpoint_every": 0, "learning_rate": LR,
                         "warmup_steps": WARMUP_STEPS, "clip_norm": CLIP, "seed": 1,
                         "valid_bleu_max": 0},
               "output": {"dir": os.path.join(self.tmp, name)}}
        path = os.path.join(self.tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path, cfg["output"]["dir"]

    def gemm_shapes(self, S, T):
        """At the exported batches' mean real lengths and rows (nmt packs; S and T,
        bench.py's mean padded lengths, are not what it computes on)."""
        n = len(self.stats)
        Ns = sum(x["src_tokens"] for x in self.stats) / n
        Nt = sum(x["tokens"] for x in self.stats) / n
        return gemm_shapes(Ns / BATCH, Nt / BATCH, BATCH, self.vocab[1], Ns, Nt)

    def nmt_train(self, name, steps, threads=THREADS, kernel=None):
        r = super().nmt_train(name, steps, threads, kernel)
        _, _, text = self.run.run([NMT, "info", r["model"]], label="nmt info")
        m = re.search(r"(\d+) parameters", text)
        r["parameters"] = int(m.group(1)) if m else None
        return r

    def torch_train(self, name, batches, kernel=None, warmup=None):
        name = f"{name}.{next(self.ids)}"
        save = os.path.join(self.tmp, name + ".pt")
        argv = [PYTHON, TORCH, "--mode", "train", "--data", self.batches_file, "--threads", str(THREADS),
                "--batches", str(batches), "--warmup", str(self.args.warmup if warmup is None else warmup),
                "--lr", str(LR), "--warmup-steps", str(WARMUP_STEPS), "--clip", str(CLIP), "--dropout", str(DROPOUT),
                "--save", save]
        wall, rss, out = self.run.run(argv, env=self.env(kernel), label="bench_torch_transformer.py train")
        r = json.loads(out.strip().splitlines()[-1])
        return {"tokens_per_s": r["tokens_per_s"], "wall_s": wall, "rss_kib": rss, "others": self.run.others,
                "loss_last10": r["loss_last10"], "kernel": r["openblas_kernel"],
                "aten": r["aten_cpu_capability"], "parameters": r["parameters"], "model": save}

    def nmt_translate(self, model, batch, beam=1):
        """bench.py's: --threads THREADS (nmt translate's default is one)."""
        argv = [NMT, "translate", model, "--threads", str(THREADS)] + \
            (["--batch", str(batch)] if batch > 1 else []) + \
            (["--beam", str(beam), "--length-penalty", str(ALPHA)] if beam > 1 else [])
        startup, _, _ = self.run.run(argv, stdin=self.empty, env=self.env(), label="nmt translate")
        n = self.sentences(beam, batch)
        out = os.path.join(self.tmp, f"translation.beam{beam}.batch{batch}.txt")
        wall, rss, _ = self.run.run(argv, stdin=self.sources_file(n), stdout=out, env=self.env(),
                                    label="nmt translate")
        others = self.run.others
        steps, row_steps = bench.nmt_decode_steps(out, self.test_len[:n], batch)
        return {"sentences_per_s": n / (wall - startup), "wall_s": wall, "startup_s": startup,
                "sentences": n, "steps_per_sentence": steps,
                "row_steps_per_sentence": row_steps if beam == 1 else None, "rss_kib": rss,
                "others": others, "output": out}

    def torch_decode(self, model, batch, beam=1, extra=(), decoder="cached"):
        """bench_torch_transformer.py --mode greedy/beam; the signature of bench.py's, so
        that Bench.agreement runs it (with the cached decoder)."""
        n = self.sentences(beam, batch)
        mode = ["--mode", "greedy"] if beam == 1 else ["--mode", "beam", "--beam", str(beam),
                                                         "--length-penalty", str(ALPHA)]
        argv = [PYTHON, TORCH] + mode + ["--decoder", decoder, "--data", self.batches_file,
                                         "--threads", str(THREADS), "--batch", str(batch),
                                         "--sentences", str(n)] + \
            (["--load", model] if model else []) + list(extra)
        wall, rss, out = self.run.run(argv, env=self.env(), label=f"bench_torch_transformer.py {mode[1]}")
        r = json.loads(out.strip().splitlines()[-1])
        self.last_decode = r         # Bench.agreement keeps only the words: its speed is wanted too
        return {"sentences_per_s": r["sentences_per_s"], "steps_per_sentence": r["steps_per_sentence"],
                "row_steps_per_sentence": r["row_steps_per_sentence"] if beam == 1 else None,
                "search_steps_per_sentence": r.get("search_steps_per_sentence"),
                "sentences": n, "rss_kib": rss, "wall_s": wall, "others": self.run.others}

    def decoders_check(self, model):
        """The cached decoder against the recompute decoder, with nmt's weights."""
        n = min(len(self.test_len), 200)
        argv = [PYTHON, TORCH, "--mode", "check", "--data", self.batches_file, "--threads", str(THREADS),
                "--nmt-weights", model, "--sentences", str(n), "--batch", str(DECODE_BATCH),
                "--beam", str(BEAM), "--length-penalty", str(ALPHA)]
        _, _, out = self.run.run(argv, env=self.env(), label="bench_torch_transformer.py check")
        r = json.loads(out.strip().splitlines()[-1])
        return {k: r[k] for k in ("sentences", "relative", "max_logit_difference", "greedy_same", "beam_same",
                                  "parameters", "nmt_parameters")}

    def train_decode_model(self):
        """The model both programs decode with: nmt trained for --decode-steps on the same
        data (and so the same vocabularies as the exported batches), or None (0: each
        program decodes with the model it has just trained)."""
        self.decode_model = None
        if self.args.decode_steps <= 0:
            return
        self.say(f"training the decoding model: {self.args.decode_steps} steps")
        path, out = self.config("decode", self.args.decode_steps)
        self.run.run([NMT, "train", path], env=self.env(), label="nmt train (the decoding model)")
        self.decode_model = os.path.join(out, "model.bin")
        _, _, text = self.run.run([NMT, "eval", self.decode_model, os.path.join(out, "valid.tsv"), "--json"],
                                  env=self.env(), label="nmt eval (the decoding model)")
        self.results["decode_model"] = {"steps": self.args.decode_steps, "eval": json.loads(text)}

    def rounds(self):
        a = self.args
        n = len(self.stats)
        for r in range(a.rounds):
            order = ["nmt", "torch"] if r % 2 == 0 or self.kernel is None else ["torch", "nmt"]
            self.say(f"round {r + 1}/{a.rounds} ({' then '.join(order)})")
            self.run.recording = r == 0
            res = {}
            for who in order:
                if who == "nmt":
                    res["nmt_train"] = self.measured(self.nmt_train, f"nmt{r}", n)
                else:
                    res["torch_train"] = self.measured(self.torch_train, f"torch{r}", n)
            self.say(f"  training tok/s: nmt {res['nmt_train']['tokens_per_s']:.0f}, "
                     f"PyTorch {res['torch_train']['tokens_per_s']:.0f}")
            # Decoding: both programs with the weights of one model nmt trained for
            # --decode-steps (the same words, so the same work), unless there are none.
            model = self.decode_model
            for kind, beam, batch in DECODINGS:
                key = f"{kind}{batch}"
                for who in order:
                    if who == "nmt":
                        res[f"nmt_{key}"] = self.measured(self.nmt_translate, model or res["nmt_train"]["model"],
                                                          batch, beam)
                    else:
                        for decoder in ("cached", "recompute"):
                            res[f"{decoder}_{key}"] = self.measured(
                                self.torch_decode, None if model else res["torch_train"]["model"], batch, beam,
                                extra=["--nmt-weights", model] if model else [], decoder=decoder)
                self.say(f"  {kind} {'line by line' if batch == 1 else f'in batches of {batch}'}, sent/s: " +
                         ", ".join(f"{label} {res[f'{who}_{key}']['sentences_per_s']:.1f}"
                                   for who, label in PROGRAMS))
            if r == 0:
                self.say("  agreement: PyTorch decoding with nmt's weights against nmt translate")
                model = model or res["nmt_train"]["model"]
                agreement = {}
                for kind, beam in (("greedy", 1), ("beam", BEAM)):
                    agreement[kind] = self.agreement(model, beam, res[f"nmt_{kind}{DECODE_BATCH}"]["output"])
                    # The same outputs from the same weights: equal work for both programs.
                    agreement[kind]["pytorch_sentences_per_s"] = self.last_decode["sentences_per_s"]
                    agreement[kind]["nmt_sentences_per_s"] = res[f"nmt_{kind}{DECODE_BATCH}"]["sentences_per_s"]
                self.results["agreement"] = agreement
                self.say("  " + "; ".join(f"{k}: {x['same']}/{x['sentences']} identical"
                                          for k, x in self.results["agreement"].items()))
                self.results["decoders"] = self.decoders_check(model)
                c = self.results["decoders"]
                self.say(f"  cached against recompute decoder (nmt's weights, {c['sentences']} sentences): "
                         f"logits differ by at most {c['relative']:.1e} of the largest; greedy "
                         f"{c['greedy_same']}, beam {c['beam_same']} identical")
            for key in ("nmt_train", "torch_train"):
                os.remove(res[key]["model"])
            self.results["rounds"].append(res)
            if r == 0:
                self.sgemm(self.kernel)
        self.run.recording = True

    def raw_results(self, started, load_before):
        """Everything the section shows, as one JSON-able dict (docs/bench/transformer.json);
        render() makes the Markdown from this alone."""
        a = self.args
        commit, dirty, machine = bench.provenance(["src"], load_before)
        tokens = sum(x["tokens"] for x in self.stats)
        slots = sum(x["T"] * x["B"] for x in self.stats)
        src_slots = sum(x["S"] * x["B"] for x in self.stats)

        def public(x):
            if isinstance(x, dict):
                return {k: public(v) for k, v in x.items() if k not in ("model", "output")}
            if isinstance(x, (list, tuple)):
                return [public(v) for v in x]
            return x

        return {
            "script": "scripts/bench/bench_transformer.py" + (" --quick" if a.quick else ""),
            "provenance": "measured",
            "date": f"{started:%Y-%m-%d %H:%M} UTC",
            "commit": commit,
            "src_modified": dirty,
            "machine": machine,
            "settings": {"rounds": a.rounds, "batches": a.batches, "sentences": a.sentences,
                         "beam_sentences": a.beam_sentences, "warmup": a.warmup, "decode_steps": a.decode_steps,
                         "retry_budget": a.retry_budget, "quick": a.quick, "d_model": D_MODEL, "heads": HEADS,
                         "ff": FF, "encoder_layers": LAYERS, "decoder_layers": LAYERS, "norm": "pre",
                         "activation": "relu", "dropout": DROPOUT, "batch": BATCH, "max_len": MAX_LEN,
                         "threads": THREADS, "lr": LR, "warmup_steps": WARMUP_STEPS, "clip": CLIP,
                         "decode_batch": DECODE_BATCH, "beam": BEAM, "alpha": ALPHA, "quiet": bench.QUIET,
                         "sgemm_trials": 3 if a.quick else 5},
            "data": {"path": os.path.relpath(self.data, ROOT), "batches": len(self.stats),
                     "target_tokens": tokens, "vocab": list(self.vocab),
                     "test_sentences": len(self.test_len),
                     "gemm_flops_per_token": sum(flops(gemm_shapes(x["src_tokens"] / x["B"], x["tokens"] / x["B"],
                                                                   x["B"], self.vocab[1], x["src_tokens"],
                                                                   x["tokens"]))
                                                 for x in self.stats) / tokens,
                     "tgt_fill": tokens / slots,
                     "src_fill": sum(x["src_tokens"] for x in self.stats) / src_slots},
            "kernel": self.kernel,
            "rounds": public(self.results["rounds"]),
            "agreement": self.results.get("agreement"),
            "decoders": self.results.get("decoders"),
            "decode_model": self.results.get("decode_model"),
            "sgemm": self.results["sgemm"],
            "repeats": self.repeats,
            "commands": self.run.commands,
        }


# ---------------------------------------------------------------- the report

def summary(raw):
    """Medians of the rounds: {(program, figure): value} with program nmt, cached,
    recompute or torch (training), and the derived figures."""
    R = raw["rounds"]
    s = {}
    for key in R[0]:
        who, what = key.split("_", 1)
        for field in ("tokens_per_s", "sentences_per_s", "rss_kib", "steps_per_sentence", "loss_last10",
                      "startup_s"):
            xs = [r[key][field] for r in R if key in r and r[key].get(field) is not None]
            if xs:
                s[(who, what, field)] = median(xs)
    s["limit"] = raw["sgemm"]["by_kernel"][raw["kernel"]]["limit_gflops"]
    s["flops"] = raw["data"]["gemm_flops_per_token"]
    for who in ("nmt", "torch"):
        s[(who, "roofline")] = s[(who, "train", "tokens_per_s")] * s["flops"] / (s["limit"] * 1e9)
    return s


def decoding_label(kind, batch):
    name = "greedy" if kind == "greedy" else f"beam {BEAM}"
    return f"{name}, {'line by line' if batch == 1 else f'batches of {batch}'}"


def target_rows(raw, s):
    """The headline: each of the issue's targets with its figures and whether it is met.
    Returns (rows, met, total)."""
    mib = 1 / 1024
    rows = ["| figure | nmt | PyTorch | nmt / PyTorch | target | met |",
            "| --- | ---: | ---: | ---: | --- | --- |"]
    met = total = 0

    def row(label, a, b, fmt, want, higher):
        nonlocal met, total
        q = a / b if b else float("nan")
        ok = q >= want if higher else q <= want
        met, total = met + ok, total + 1
        rows.append(f"| {label} | {a:{fmt}} | {b:{fmt}} | {q:.2f} | {'≥' if higher else '≤'} {want:g} | "
                    f"{'yes' if ok else '**no**'} |")

    row("training, target tokens/s", s[("nmt", "train", "tokens_per_s")], s[("torch", "train", "tokens_per_s")],
        ",.0f", TARGET_SPEED, True)
    for kind, _, batch in DECODINGS:
        key = f"{kind}{batch}"
        n = raw["rounds"][0][f"nmt_{key}"]["sentences"]
        row(f"{decoding_label(kind, batch)}, sentences/s ({n:,} sentences; PyTorch cached K/V)",
            s[("nmt", key, "sentences_per_s")], s[("cached", key, "sentences_per_s")],
            ",.1f", TARGET_SPEED, True)
    row("peak RSS, training, MiB", s[("nmt", "train", "rss_kib")] * mib, s[("torch", "train", "rss_kib")] * mib,
        ",.0f", TARGET_MEMORY, False)
    for kind, _, batch in DECODINGS:
        key = f"{kind}{batch}"
        row(f"peak RSS, {decoding_label(kind, batch)}, MiB (cached)", s[("nmt", key, "rss_kib")] * mib,
            s[("cached", key, "rss_kib")] * mib, ",.0f", TARGET_MEMORY, False)
    rows.append(f"| training, fraction of the sgemm limit ({s['limit']:.0f} GFLOP/s) | "
                f"{100 * s[('nmt', 'roofline')]:.0f}% | {100 * s[('torch', 'roofline')]:.0f}% | | reported | |")
    return rows, met, total


def machine_line(raw):
    m = raw["machine"]
    flags = ", ".join(m.get("flags") or []) or "none of avx2, fma, avx512f"
    return f"{m['cpu']}, {m['cores']} cores ({flags})"


def render_readme(raw):
    """README's summary: the targets table, the machine and where the rest is."""
    s = summary(raw)
    rows, met, total = target_rows(raw, s)
    L = [f"Measured {raw['date']} (commit {raw['commit']}; {machine_line(raw)}; 2 threads each; medians of "
         f"{raw['settings']['rounds']} alternated rounds); every figure and command in "
         "[docs/bench-transformer.md](bench-transformer.md#the-transformer-against-pytorch-issue-17). "
         f"{met} of {total} targets met:", ""]
    return "\n".join(L + rows)


def render(raw):
    """docs/bench-transformer.md's section (without the generated-block markers) from a raw result."""
    s, R, d, st = summary(raw), raw["rounds"], raw["data"], raw["settings"]
    mib = 1 / 1024
    L = []
    w = L.append
    w("## The Transformer against PyTorch (issue 17)")
    w("")
    w(f"Written by `{raw['script']}` on {raw['date']}; nmt at commit {raw['commit']}"
      f"{' (src/ has uncommitted changes)' if raw['src_modified'] else ''}. Rendered from the raw "
      "results in `docs/bench/transformer.json` (`python3 scripts/bench/bench_transformer.py --render "
      "docs/bench/transformer.json`).")
    if st["quick"]:
        w("")
        w("**A --quick smoke run: tiny slices, one round. Its figures show that the machinery works, "
          "not how fast anything is.**")
    w("")
    t0 = R[0]["torch_train"]
    w(f"- Machine: {machine_line(raw)}; load average {raw['machine']['load_before']:.2f} before the run and "
      f"{raw['machine']['load_after']:.2f} after (a shared machine: medians of alternated runs).")
    w(f"- BLAS: both on OpenBLAS with `OPENBLAS_CORETYPE={raw['kernel']}` (the kernel nmt chose; PyTorch "
      f"reported {t0['kernel']!r}; torch's own kernels: {t0.get('aten', '?')}). PyTorch: Debian "
      "python3-torch, `OMP_WAIT_POLICY=PASSIVE`, `torch.set_num_threads(2)`, "
      "`OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=2`.")
    w(f"- Data: `{d['path']}`, the first {d['batches']} training batches of nmt's own order (batch {BATCH}, "
      f"max_len {MAX_LEN}; {d['target_tokens']:,} target tokens; vocabularies {d['vocab'][0]:,} source / "
      f"{d['vocab'][1]:,} target words), exported with `nmt train --export-batches`; "
      f"{d['test_sentences']:,} held-out sentences for decoding.")
    same = R[0]["nmt_train"].get("parameters") == t0.get("parameters")
    schedule = "constant" if not st["warmup_steps"] else f"{st['warmup_steps']} warmup steps"
    w(f"- Model: Transformer, d_model {st['d_model']}, {st['encoder_layers']} + {st['decoder_layers']} layers, "
      f"{st['heads']} heads, feed-forward {st['ff']}, {st['activation']}, {st['norm']}-norm, dropout {st['dropout']:g} "
      f"(embeddings, sub-layer outputs, attention, feed-forward); parameters: nmt {R[0]['nmt_train'].get('parameters') or 0:,} (`nmt info`), "
      f"PyTorch {t0.get('parameters') or 0:,}{'' if same else ' — NOT THE SAME'}. Adam {st['lr']:g}, "
      f"{schedule}, clip "
      f"{st['clip']:g}; {st['threads']} threads each. PyTorch: scripts/bench/bench_torch_transformer.py "
      "(nn.TransformerEncoderLayer / DecoderLayer, norm_first, final LayerNorm, nn.Linear, "
      "F.cross_entropy, clip_grad_norm_, Adam; nmt's initialisation scheme).")
    w(f"- {st['rounds']} round{'s' if st['rounds'] > 1 else ''}; training figures exclude the first "
      f"{st['warmup']} batches and count step time only; decoding " +
      (f"uses one model, trained by nmt for {st['decode_steps']} updates on the same data (validation "
       f"loss {raw['decode_model']['eval']['loss']:.3f}, BLEU {raw['decode_model']['eval']['bleu']:.2f}), in both "
       "programs (PyTorch loads its weights), so that both decode the same words: the same work"
       if st.get("decode_steps") else "uses the model each program has just trained on the same batches") +
      f". nmt translate's time is its wall time minus its start-up (the same "
      f"command on empty input: {s[('nmt', 'greedy1', 'startup_s')]:.2f} s); PyTorch's is its decoding loop.")
    w("")
    rows, met, total = target_rows(raw, s)
    w(f"### The issue's targets: {met} of {total} met (medians)")
    w("")
    L.extend(rows)
    w("")
    w(f"Losses after the same batches (mean of the last 10): nmt {s[('nmt', 'train', 'loss_last10')]:.3f}, "
      f"PyTorch {s[('torch', 'train', 'loss_last10')]:.3f} (the same model and data, different random "
      "initial weights).")
    w("")
    w("### Decoding: nmt against both PyTorch decoders (medians, sentences/s)")
    w("")
    w("| decoding | nmt | PyTorch cached K/V | PyTorch recompute | nmt / cached | nmt / recompute | "
      "decoder steps per sentence (nmt, cached, recompute) |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for kind, _, batch in DECODINGS:
        key = f"{kind}{batch}"
        v = [s[(who, key, "sentences_per_s")] for who, _ in PROGRAMS]
        steps = ", ".join(f"{s[(who, key, 'steps_per_sentence')]:.2f}" for who, _ in PROGRAMS)
        w(f"| {decoding_label(kind, batch)} | {v[0]:,.1f} | {v[1]:,.1f} | {v[2]:,.1f} | {v[0] / v[1]:.2f} | "
          f"{v[0] / v[2]:.2f} | {steps} |")
    w("")
    w("The cached decoder runs one position per step with every layer's self-attention keys and values "
      "kept (and reordered by index_select in beam search) and the cross-attention keys and values "
      "projected once per batch, through the layers' own weights; the recompute decoder is the PyTorch "
      "tutorial's: the whole nn.TransformerDecoder over the prefix at every step, its last position "
      "projected. Greedy: until <eos> or 2 * source length + 10 words, never <pad> or <sos>; beam search: "
      f"{BEAM} beams, length penalty ((5 + n) / 6)^{ALPHA}, nmt's rules (src/decode/decode.c), all beams of the "
      "sentences decoded together as one batch of rows. Decoder steps per sentence: words + 1 for <eos> "
      "(or the limit) of the output; nmt's counted by re-tokenising its output.")
    ag, dc = raw.get("agreement"), raw.get("decoders")
    if ag:
        w("")
        w("Same model, same search, checked (round 1): PyTorch decoding with the weights of nmt's model "
          "(`--nmt-weights`, cached decoder, batches of 64) against `nmt translate` with that model, word for "
          f"word: {bench.agreement_sentence(ag)}. Decoding the same outputs with the same weights, "
          f"in batches of {DECODE_BATCH} (round 1, one run each): greedy nmt "
          f"{ag['greedy']['nmt_sentences_per_s']:,.1f} and PyTorch cached "
          f"{ag['greedy']['pytorch_sentences_per_s']:,.1f} sentences/s, beam {BEAM} nmt "
          f"{ag['beam']['nmt_sentences_per_s']:,.1f} and PyTorch cached {ag['beam']['pytorch_sentences_per_s']:,.1f}.")
    if dc:
        w(f"The two PyTorch decoders on nmt's weights ({dc['sentences']} sentences, batches of "
          f"{DECODE_BATCH}): their logits at every step of the same prefixes differ by at most "
          f"{dc['relative']:.1e} of the largest logit; greedy outputs identical for {dc['greedy_same']}, "
          f"beam {BEAM} for {dc['beam_same']} of {dc['sentences']} sentences.")
    w("")
    w("### Per round")
    w("")
    cols = ["train tok/s", "train RSS MiB"] + [f"{decoding_label(k, b)} sent/s (RSS MiB)" for k, _, b in DECODINGS]
    w("| round | program | " + " | ".join(cols) + " | others' CPU, training |")
    w("| --- | --- |" + " ---: |" * (len(cols) + 1))
    for i, r in enumerate(R):
        for who, label in PROGRAMS:
            tr = r.get("nmt_train" if who == "nmt" else "torch_train")
            cells = ([f"{tr['tokens_per_s']:.0f}", f"{tr['rss_kib'] * mib:.0f}"] if who != "recompute"
                     else ["(as cached)", ""])
            for kind, _, batch in DECODINGS:
                x = r[f"{who}_{kind}{batch}"]
                cells.append(f"{x['sentences_per_s']:.1f} ({x['rss_kib'] * mib:.0f})")
            cells.append(f"{tr['others']:.2f}" if who != "recompute" else "")
            w(f"| {i + 1} | {label} | " + " | ".join(cells) + " |")
    w("")
    w("Every run waited for a quiet second first, and a run during which other processes kept "
      f"{st['quiet']} cores or more busy was repeated (at most 3 attempts, {st['retry_budget']:.0f} s of "
      f"waiting and repeating in all; the quietest attempt kept). Repeated runs: {raw['repeats']}.")
    w("")
    w("### Roofline")
    w("")
    sg = raw["sgemm"]
    w(f"Matrix-product work of a training step, counted from the exported batches as nmt computes it, on "
      f"packed rows (the real positions only; the forward products, and twice as much in the backward pass; "
      f"attention one product per sentence and head over its own lengths, the causal square whole): "
      f"**{s['flops'] / 1e6:.1f} MFLOP per target token**. Only {100 * d['tgt_fill']:.0f}% of target and "
      f"{100 * d['src_fill']:.0f}% of source slots of the padded batches hold real tokens: PyTorch computes "
      "the padding too, so the same tokens cost it more work than counted here. OpenBLAS sgemm at nmt's "
      f"shapes (the batches' mean rows and lengths), {THREADS} threads, best of {st['sgemm_trials']} trials "
      "of 0.05 s or more in each of two passes:")
    w("")
    w(f"| product | op | M | N | K | calls | GFLOP/s ({raw['kernel']}) |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    entry = sg["by_kernel"][raw["kernel"]]
    for (name, ta, tb, M, N, K, c), x in zip(sg["shapes"], entry["rates"]):
        w(f"| {name} | {ta}{tb} | {M} | {N} | {K} | {c} | {x:.0f} |")
    w("")
    w(f"FLOP-weighted mean, **the sgemm limit: {s['limit']:.0f} GFLOP/s** (the passes alone: " +
      ", ".join(f"{x:.0f} (others' CPU {o:.2f})" for x, o in zip(entry["passes"], entry["others"])) +
      f"): the products alone would allow {s['limit'] * 1e9 / s['flops']:,.0f} target tokens/s. nmt trains "
      f"at {s[('nmt', 'train', 'tokens_per_s')]:,.0f} tokens/s x {s['flops'] / 1e6:.1f} MFLOP = "
      f"{s[('nmt', 'train', 'tokens_per_s')] * s['flops'] / 1e9:.0f} GFLOP/s: "
      f"**{100 * s[('nmt', 'roofline')]:.0f}% of the sgemm limit**; PyTorch "
      f"{100 * s[('torch', 'roofline')]:.0f}% (counting the same work; its fused and batched products "
      "have other shapes).")
    w("")
    w("### Commands")
    w("")
    w("`$TMP` is a fresh temporary directory; its configs are `scripts/bench/bench_transformer.py`'s "
      "(`config()`): the data and model above, `valid_fraction` 0.06, `epochs` 1, `max_steps` the number "
      "of batches, `log_every` 1, `checkpoint_every` 0, `valid_bleu_max` 0, seed 1. Rounds 2 and later "
      "repeat round 1's commands (with their own file names) except the checks with nmt's weights, "
      "PyTorch first in even rounds.")
    w("")
    w("```")
    L.extend(raw["commands"])
    w("```")
    return "\n".join(L)


def splice_into_benchmarks():
    """docs/bench-transformer.md gets the section as a generated block (scripts/docs/docs.py) at
    its end, if it has none yet; then the block is regenerated from docs/bench/transformer.json."""
    with open(BENCHMARKS, encoding="utf-8") as f:
        text = f.read()
    if f"<!-- generated block {BLOCK}:" not in text:
        block = (f"<!-- generated block {BLOCK}: python3 scripts/bench/bench_transformer.py --render "
                 f"docs/bench/transformer.json -->\n<!-- end of generated block {BLOCK} -->\n")
        with open(BENCHMARKS, "w", encoding="utf-8") as f:
            f.write(text.rstrip("\n") + "\n\n" + block)
    subprocess.run(["sh", os.path.join(ROOT, "scripts", "docs", "regenerate.sh"), BLOCK], cwd=ROOT, check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run of every step (a few minutes)")
    ap.add_argument("--rounds", type=int, help="alternated rounds (default 3; quick 1)")
    ap.add_argument("--batches", type=int, help="training batches (default 100; quick 16)")
    ap.add_argument("--sentences", type=int, help="test sentences to decode (default 2000; quick 64)")
    ap.add_argument("--beam-sentences", type=int,
                    help="of those, for beam search line by line (default 500; quick 16)")
    ap.add_argument("--warmup", type=int, help="untimed first batches (default 10; quick 4)")
    ap.add_argument("--decode-steps", type=int,
                    help="updates of the model both programs decode with, trained by nmt (default 600; quick "
                         "30; 0: each decodes with the model it trained on --batches)")
    ap.add_argument("--retry-budget", type=float,
                    help="seconds to spend waiting for a quiet machine and repeating runs that "
                         "shared it (default 300; quick 30)")
    ap.add_argument("--raw", help="where the raw results go (default docs/bench/transformer.json, which "
                                  "docs/bench-transformer.md's section is rendered from; quick: a temporary file, and "
                                  "the rendering is printed instead)")
    ap.add_argument("--render", metavar="RAW.json", help="measure nothing: print the Markdown of RAW.json")
    ap.add_argument("--readme", action="store_true", help="with --render: README's summary instead")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--verbose", action="store_true", help="print each command")
    a = ap.parse_args()
    if a.render:
        with open(a.render, encoding="utf-8") as f:
            raw = json.load(f)
        print(render_readme(raw) if a.readme else render(raw))
        return 0
    a.rounds = a.rounds or (1 if a.quick else 3)
    a.batches = a.batches or (16 if a.quick else 100)
    a.sentences = a.sentences or (64 if a.quick else 2000)
    a.beam_sentences = a.beam_sentences or (16 if a.quick else 500)
    a.warmup = a.warmup if a.warmup is not None else (4 if a.quick else 10)
    a.decode_steps = a.decode_steps if a.decode_steps is not None else (30 if a.quick else 600)
    a.retry_budget = a.retry_budget if a.retry_budget is not None else (30 if a.quick else 300)
    if a.batches <= a.warmup + 1:
        sys.exit("bench_transformer.py: --batches must exceed --warmup + 1")
    if not os.access(NMT, os.X_OK):
        sys.exit(f"bench_transformer.py: {NMT} not found; run make first")
    started = datetime.datetime.utcnow()
    load_before = os.getloadavg()
    b = TransformerBench(a)
    t = time.time()
    try:
        b.export()
        b.train_decode_model()
        b.rounds()
        b.sgemm(b.kernel)
        raw = b.raw_results(started, load_before)
    finally:
        if a.keep:
            print(f"kept {b.tmp}")
        else:
            shutil.rmtree(b.tmp, ignore_errors=True)
    raw["minutes"] = round((time.time() - t) / 60, 1)
    path = a.raw or (os.path.join(tempfile.gettempdir(), "nmt-bench-transformer-quick.json") if a.quick else RAW)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=1, ensure_ascii=False)
        f.write("\n")
    rows, met, total = target_rows(raw, summary(raw))
    print("\n" + "\n".join(rows) + f"\n\n{met} of {total} targets met")
    print(f"\nwrote {os.path.relpath(path, ROOT) if path.startswith(ROOT + '/') else path}")
    if path == RAW:
        splice_into_benchmarks()
    else:
        print(render(raw))
    print(f"({raw['minutes']:.1f} minutes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
