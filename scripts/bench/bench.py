"""make bench: nmt against PyTorch on the same CPU, same model, same data (issue #3).

    /usr/bin/python3 scripts/bench/bench.py            # the full run; writes docs/bench/pytorch.json,
                                                       # then renders BENCHMARKS.md and docs/measurements.md's Speed table
    /usr/bin/python3 scripts/bench/bench.py --quick    # a smoke run of every step (prints its rendering)
    python3 scripts/bench/bench.py --render docs/bench/pytorch.json [--readme]
                                                       # measures nothing: the Markdown of a raw result

The raw result holds every figure of every run (per round), the machine, the date, the
commit and every command, and the Markdown is rendered from it alone, so that
scripts/docs/check.sh can verify that BENCHMARKS.md and docs/measurements.md's Speed table are
exactly what the recorded measurements give (speed cannot be re-measured elsewhere).

What it does, in order (every command it runs is listed in BENCHMARKS.md):

 1. Export. `nmt train CONFIG --export-batches FILE` writes the first --batches training
    batches and 2,000 held-out sources as token ids (../shared/data/mar.txt, else
    data/mar.txt; max_len 20, embed 256, hidden 512, batch 64, Adam 1e-3, clip 5, 2
    threads). scripts/bench/bench_torch.py trains and decodes on exactly these.
 2. Rounds (--rounds, default 3), alternating the two programs for each figure, the
    order flipped every round (the machine is shared, so figures drift; medians of
    alternated runs, and ratios of the medians, are what is reported):
      training   `nmt train` with max_steps = the exported count and log_every 1, and
                 bench_torch.py --mode train: target tokens/s over the batches after
                 --warmup, step times only (nmt's from train.log, torch's from its clock)
      greedy     each program decodes the 2,000 sources with the model it just trained
                 (same batches, same number of steps), until <eos> or 2 * source length
                 + 10 words, line by line and in batches of 64; sentences/s, and the
                 decoder steps per sentence each actually ran, so that one can see
                 whether the work was comparable. nmt's time is the process's wall time
                 minus its start-up (the same command on empty input: loading the model);
                 torch's is its decoding loop. nmt's steps are counted by re-tokenising
                 its output (an approximation of src/text/text.c; exact for torch).
      beam 5     the same with beam search (5 beams, length penalty 0.6: `nmt translate
                 --beam 5`, bench_torch.py --mode beam, the same search rules), in
                 batches of 64 on the 2,000 sources and line by line on the first
                 --beam-sentences (500) of them.
      agreement  (round 1 only) PyTorch decoding with nmt's weights (--nmt-weights),
                 greedy and beam 5 in batches of 64, compared word for word with nmt
                 translate's output for that model: checks that both implement the same
                 search.
      memory     peak resident set of every process (wait4's ru_maxrss).
 3. Scaling. nmt on 25%, 50%, 100% of the batches (time per step and per token should
    not change), and 1 against 2 threads.
 4. The sgemm limit. scripts/bench/sgemm_rate.c measures OpenBLAS sgemm at the shapes of nmt's
    matrix products for a batch of mean length, with nmt's kernel and 2 threads; the
    FLOP-weighted mean rate (total FLOPs / total time at the measured rates) is the limit.
 5. The roofline. Matrix-product FLOPs per target token, counted from the exported batches
    (every product of the forward and backward pass, 2 M N K each, at the padded sizes
    nmt computes), times nmt's tokens/s, over the sgemm limit.
 6. Side notes: PyTorch and nmt on OpenBLAS's "Prescott" kernel (what Debian's OpenBLAS
    0.3.21 picks on this CPU when OPENBLAS_CORETYPE is not set), and the sgemm limit there.

The main comparison gives PyTorch the kernel nmt uses: OPENBLAS_CORETYPE is set, for
every process after the first nmt run, to the kernel nmt reported ("OpenBLAS kernel X"),
and torch's matrix products go through the same OpenBLAS (Debian's torch is built with
BLAS_INFO=generic and links libblas.so.3, which is OpenBLAS; bench_torch.py reports the
kernel it sees).
"""

import argparse
import datetime
import itertools
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The settings, Runner, provenance and median (bench_common.py) and the report (bench_report.py),
# here as before for the scripts that import them from bench.
from bench_common import (ALPHA, BATCH, BEAM, DECODE_BATCH, E, H, HERE, MAX_LEN, NMT, PYTHON,  # noqa: E402,F401
                          QUIET, ROOT, THREADS, Runner, busy_cpu_seconds, median, provenance)
from bench_report import agreement_sentence, headline_rows, render, render_readme, summary  # noqa: E402,F401

sys.path.insert(0, os.path.join(ROOT, "scripts", "reference"))   # fixture.py, the batches' format


# ---------------------------------------------------------------- counting work

def gemm_shapes(S, T, B, V):
    """nmt's matrix products for one batch (src/models/model.c, src/layers/gru.c), as
    (name, TA, TB, M, N, K, calls): cblas_sgemm row-major conventions, C (M, N)."""
    X = E + H
    SB, TB = S * B, T * B
    return [
        # forward
        ("enc input projection", "N", "T", SB, 3 * H, E, 1),
        ("enc recurrent (per step)", "N", "T", B, 3 * H, H, S),
        ("attention keys", "N", "T", SB, H, H, 1),
        ("dec input projection, embeddings", "N", "T", TB, 3 * H, E, 1),
        ("dec recurrent + query (per step)", "N", "T", B, 4 * H, H, T),
        ("dec input projection, context (per step)", "N", "T", B, 3 * H, H, T),
        ("output layer", "N", "T", TB, V, H, 1),
        # backward
        ("output layer dW", "T", "N", V, H, TB, 1),
        ("output layer dX", "N", "N", TB, H, V, 1),
        ("dec d context (per step)", "N", "N", B, H, 3 * H, T),
        ("dec d state (per step)", "N", "N", B, H, 4 * H, T),
        ("dec dW_hh + dW_query", "T", "N", 4 * H, H, TB, 1),
        ("dec dW_ih", "T", "N", 3 * H, X, TB, 1),
        ("dec d embeddings", "N", "N", TB, E, 3 * H, 1),
        ("attention dW_key", "T", "N", H, H, SB, 1),
        ("attention d encoder states", "N", "N", SB, H, H, 1),
        ("enc d state (per step)", "N", "N", B, H, 3 * H, S),
        ("enc dW_ih", "T", "N", 3 * H, E, SB, 1),
        ("enc dW_hh", "T", "N", 3 * H, H, SB, 1),
        ("enc d embeddings", "N", "N", SB, E, 3 * H, 1),
    ]


def gemm_flops(S, T, B, V):
    return sum(2.0 * M * N * K * calls for _, _, _, M, N, K, calls in gemm_shapes(S, T, B, V))


def attention_flops(S, T, B):
    """The attention's elementwise work, an estimate kept out of the GEMM count: per
    decoder step and (source position, sentence, unit): forward k + q, tanh, v-dot
    multiply-add, context multiply-add (~5, tanh counted as 1); backward ~10."""
    return 15.0 * T * S * B * H


def batch_stats(data):
    n = int(data["dims"][2])
    out = []
    for k in range(n):
        S, B = data[f"batch.{k}.src"].shape
        T = data[f"batch.{k}.tgt_out"].shape[0]
        tokens = int((data[f"batch.{k}.tgt_out"] != 0).sum())
        src_tokens = int((data[f"batch.{k}.src"] != 0).sum())
        out.append({"S": S, "T": T, "B": B, "tokens": tokens, "src_tokens": src_tokens})
    return out


# nmt's tokeniser (src/text/text.c), re-done in Python only to count the words nmt translate
# printed: whitespace splits; punctuation (P*) is a token of its own unless it sits
# between two letters/numbers/marks and is not one of the always-splitting marks.
ALWAYS_SPLITS = set("!?;\u00a1\u00bf\u2026\u0964\u0965\u060c\u061b\u061f\u3001\u3002\uff01\uff1b\uff1f")


def tokenize(line):
    text = unicodedata.normalize("NFC", line)
    tokens, in_word = [], False
    cats = [unicodedata.category(c) for c in text]
    for i, c in enumerate(text):
        cat = cats[i]
        if cat in ("Zs", "Zl", "Zp", "Cc"):
            in_word = False
        elif not cat.startswith("P") or (
                0 < i < len(text) - 1 and cats[i - 1][0] in "LMN" and cats[i + 1][0] in "LMN"
                and cat not in ("Ps", "Pe") and c not in ALWAYS_SPLITS):
            if in_word:
                tokens[-1] += c
            else:
                tokens.append(c)
                in_word = True
        else:
            tokens.append(c)
            in_word = False
    return tokens


def count_tokens(line):
    return len(tokenize(line))


def target_vocabulary(model_path):
    """The target words of an nmt model file, by id (its TVOC section, src/files/modelfile.h)."""
    with open(model_path, "rb") as f:
        raw = f.read()
    count, pos = struct.unpack_from("<I", raw, 16)[0], 20
    for _ in range(count):
        tag, size = raw[pos:pos + 4], struct.unpack_from("<Q", raw, pos + 4)[0]
        if tag == b"TVOC":
            n, at, words = struct.unpack_from("<I", raw, pos + 16)[0], pos + 20, []
            for _ in range(n):
                length = struct.unpack_from("<I", raw, at)[0]
                words.append(raw[at + 4:at + 4 + length].decode("utf-8"))
                at += 4 + length
            return words
        pos += 16 + size
    sys.exit(f"bench.py: {model_path} has no TVOC section")


def nmt_decode_steps(out_path, src_lens, batch):
    """Decoder steps nmt ran, from its output: per sentence, its words + 1 for <eos>, or
    its limit when it printed that many (no <eos> seen); per batch, the longest of
    those, or the batch's largest limit if a sentence was cut (src/decode/decode.c runs a
    batch until every sentence has emitted <eos>). For beam search only the first
    figure means something (the length of the hypothesis chosen, not of the search)."""
    with open(out_path, encoding="utf-8") as f:
        lines = f.read().split("\n")[:len(src_lens)]
    needed, cut = [], []
    for line, n in zip(lines, src_lens):
        limit = 2 * int(n) + 10
        words = count_tokens(line)
        needed.append(limit if words >= limit else words + 1)
        cut.append(words >= limit)
    rows = 0
    for start in range(0, len(needed), batch):
        limits = [2 * int(n) + 10 for n in src_lens[start:start + batch]]
        part = needed[start:start + batch]
        steps = max(limits) if any(cut[start:start + batch]) else max(part)
        rows += steps * len(part)
    return sum(needed) / len(needed), rows / len(needed)


# ---------------------------------------------------------------- the benchmark

class Bench:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="nmt-bench-")
        self.run = Runner(self.tmp, args.verbose)
        self.kernel = os.environ.get("OPENBLAS_CORETYPE")
        self.results = {"rounds": []}
        self.budget = args.retry_budget     # seconds to spend waiting for quiet and repeating
        self.repeats = 0
        self.ids = itertools.count()        # unique file names across repeated attempts
        data = os.path.join(ROOT, "..", "shared", "data", "mar.txt")
        self.data = os.path.normpath(data if os.path.exists(data) else os.path.join(ROOT, "data", "mar.txt"))

    def config(self, name, steps, threads=THREADS):
        cfg = {"data": {"train": self.data, "max_len": MAX_LEN, "valid_fraction": 0.06},
               "model": {"embed": E, "hidden": H},
               "train": {"batch_size": BATCH, "epochs": 1, "max_steps": steps, "log_every": 1,
                         "threads": threads, "checkpoint_every": 0, "learning_rate": 0.001,
                         "clip_norm": 5.0, "seed": 1},
               "output": {"dir": os.path.join(self.tmp, name)}}
        path = os.path.join(self.tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(cfg, f)
        return path, cfg["output"]["dir"]

    def say(self, msg):
        print(msg, flush=True)

    # ---------------------------------------------------------- noise

    def wait_quiet(self, longest=30):
        """Waits (up to `longest` s, within the budget) until other processes use under
        QUIET cores, sampled over a second."""
        start = time.time()
        while True:
            before = busy_cpu_seconds()
            time.sleep(1)
            others = busy_cpu_seconds() - before
            self.budget -= 1
            if others < QUIET or self.budget <= 0 or time.time() - start > longest:
                return

    def measured(self, fn, *args, **kwargs):
        """fn(...) after waiting for quiet; repeated (up to 3 attempts, within the budget)
        while other processes kept more than QUIET cores busy during it. Returns the
        attempt with the least interference, with the others' figures in "discarded"."""
        attempts = []
        while True:
            self.wait_quiet()
            attempts.append(fn(*args, **kwargs))
            if attempts[-1]["others"] < QUIET or len(attempts) == 3 or self.budget <= 0:
                break
            self.budget -= attempts[-1]["wall_s"]
            self.repeats += 1
        best = min(attempts, key=lambda x: x["others"])
        for x in attempts:
            if x is not best and "model" in x:
                os.remove(x["model"])
        best["discarded"] = [x for x in attempts if x is not best]
        return best

    # ---------------------------------------------------------- steps

    def export(self):
        a = self.args
        path, out = self.config("export", a.batches)
        self.batches_file = os.path.join(self.tmp, "batches.bin")
        self.run.run([NMT, "train", path, "--export-batches", self.batches_file], label="export")
        from fixture import read_fixture    # numpy: only for measuring, not for --render
        m = re.search(r"(\d+) training pairs", self.run.last_stderr)
        self.batches_per_epoch = -(-int(m.group(1)) // BATCH) if m else 0
        data = read_fixture(self.batches_file)
        self.vocab = (int(data["dims"][0]), int(data["dims"][1]))
        self.stats = batch_stats(data)
        self.test_len = [int(x) for x in data["test.len"][:a.sentences]]
        self.sources = os.path.join(self.tmp, "sources.txt")
        with open(os.path.join(out, "valid.tsv"), encoding="utf-8") as f, \
                open(self.sources, "w", encoding="utf-8") as g:
            lines = [line.split("\t")[0] for line in f.read().split("\n")[:a.sentences]]
            g.write("\n".join(lines) + "\n")
        self.empty = os.path.join(self.tmp, "empty.txt")
        open(self.empty, "w").close()
        help_text = subprocess.run([NMT, "translate", "--help"], capture_output=True, text=True).stdout
        self.nmt_has_batch = "--batch" in help_text
        tokens = sum(s["tokens"] for s in self.stats)
        self.say(f"exported {len(self.stats)} batches ({tokens} target tokens), vocabularies "
                 f"{self.vocab[0]} / {self.vocab[1]}, {len(self.test_len)} test sentences; "
                 f"nmt translate --batch: {'yes' if self.nmt_has_batch else 'no'}")

    def env(self, kernel=None):
        k = kernel or self.kernel
        return {"OPENBLAS_CORETYPE": k} if k else {}

    def nmt_train(self, name, steps, threads=THREADS, kernel=None):
        """Returns a dict: tokens_per_s after warm-up, step times, loss, peak RSS."""
        name = f"{name}.{next(self.ids)}"
        path, out = self.config(name, steps, threads)
        wall, rss, _ = self.run.run([NMT, "train", path], env=self.env(kernel), label="nmt train")
        m = re.search(r"OpenBLAS kernel (\S+?),", self.run.last_stderr)
        kernel_used = m.group(1) if m else None
        if self.kernel is None and kernel is None and kernel_used:
            self.kernel = kernel_used          # from now on, set explicitly for everyone
        tps, losses = [], []
        with open(os.path.join(out, "train.log")) as f:
            for line in f:
                rec = json.loads(line)
                if "tokens_per_s" in rec:
                    tps.append(rec["tokens_per_s"])
                    losses.append(rec["loss"])
        if len(tps) != steps:
            sys.exit(f"bench.py: {out}/train.log has {len(tps)} steps, expected {steps}")
        step_s = [self.stats[k]["tokens"] / tps[k] for k in range(steps)]
        warm = min(self.args.warmup, steps - 1)
        tokens = sum(self.stats[k]["tokens"] for k in range(warm, steps))
        model = os.path.join(self.tmp, name + ".bin")
        shutil.move(os.path.join(out, "model.bin"), model)
        shutil.rmtree(out)
        return {"tokens_per_s": tokens / sum(step_s[warm:]), "train_seconds": sum(step_s),
                "wall_s": wall, "rss_kib": rss, "others": self.run.others,
                "loss_last10": sum(losses[-10:]) / len(losses[-10:]),
                "kernel": kernel_used, "model": model, "steps": steps,
                "tokens": sum(self.stats[k]["tokens"] for k in range(steps))}

    def torch_train(self, name, batches, kernel=None, warmup=None):
        name = f"{name}.{next(self.ids)}"
        save = os.path.join(self.tmp, name + ".pt")
        argv = [PYTHON, os.path.join(HERE, "bench_torch.py"), "--mode", "train", "--data",
                self.batches_file, "--threads", str(THREADS), "--batches", str(batches),
                "--warmup", str(self.args.warmup if warmup is None else warmup), "--save", save]
        wall, rss, out = self.run.run(argv, env=self.env(kernel), label="bench_torch.py train")
        r = json.loads(out.strip().splitlines()[-1])
        return {"tokens_per_s": r["tokens_per_s"], "wall_s": wall, "rss_kib": rss, "others": self.run.others,
                "loss_last10": r["loss_last10"], "kernel": r["openblas_kernel"],
                "aten": r["aten_cpu_capability"], "model": save}

    def sentences(self, beam, batch):
        """How many of the test sentences a decoding figure uses: all, except for beam
        search line by line (--beam-sentences, the first ones), to keep the run short."""
        return len(self.test_len) if beam == 1 or batch > 1 else min(self.args.beam_sentences, len(self.test_len))

    def sources_file(self, n):
        if n == len(self.test_len):
            return self.sources
        path = os.path.join(self.tmp, f"sources{n}.txt")
        if not os.path.exists(path):
            with open(self.sources, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as g:
                g.write("".join(f.readlines()[:n]))
        return path

    def nmt_translate(self, model, batch, beam=1):
        argv = [NMT, "translate", model, "--threads", str(THREADS)] + (["--batch", str(batch)] if batch > 1 else []) + \
            (["--beam", str(beam), "--length-penalty", str(ALPHA)] if beam > 1 else [])
        startup, _, _ = self.run.run(argv, stdin=self.empty, env=self.env(), label="nmt translate")
        n = self.sentences(beam, batch)
        out = os.path.join(self.tmp, f"translation.beam{beam}.batch{batch}.txt")
        wall, rss, _ = self.run.run(argv, stdin=self.sources_file(n), stdout=out, env=self.env(),
                                    label="nmt translate")
        others = self.run.others
        steps, row_steps = nmt_decode_steps(out, self.test_len[:n], batch)
        return {"sentences_per_s": n / (wall - startup), "wall_s": wall, "startup_s": startup,
                "sentences": n, "steps_per_sentence": steps,
                "row_steps_per_sentence": row_steps if beam == 1 else None, "rss_kib": rss,
                "others": others, "output": out}

    def torch_decode(self, model, batch, beam=1, extra=()):
        n = self.sentences(beam, batch)
        mode = ["--mode", "greedy"] if beam == 1 else ["--mode", "beam", "--beam", str(beam),
                                                         "--length-penalty", str(ALPHA)]
        argv = [PYTHON, os.path.join(HERE, "bench_torch.py")] + mode + [
            "--data", self.batches_file, "--threads", str(THREADS), "--batch", str(batch),
            "--sentences", str(n)] + (["--load", model] if model else []) + list(extra)
        wall, rss, out = self.run.run(argv, env=self.env(), label=f"bench_torch.py {mode[1]}")
        r = json.loads(out.strip().splitlines()[-1])
        return {"sentences_per_s": r["sentences_per_s"], "steps_per_sentence": r["steps_per_sentence"],
                "row_steps_per_sentence": r["row_steps_per_sentence"] if beam == 1 else None,
                "search_steps_per_sentence": r.get("search_steps_per_sentence"),
                "sentences": n, "rss_kib": rss, "wall_s": wall, "others": self.run.others}

    def agreement(self, model, beam, nmt_output):
        """PyTorch decoding with nmt's own weights (bench_torch.py --nmt-weights), in
        batches of DECODE_BATCH, against nmt translate's output for the same model and
        options: how many of the sentences are word for word the same. Checks that the
        two programs implement the same search (and the same model), which the timed
        runs cannot show, since each decodes with the weights it trained."""
        ids = os.path.join(self.tmp, f"agreement.beam{beam}.txt")
        self.torch_decode(None, DECODE_BATCH, beam, ["--nmt-weights", model, "--output", ids])
        words = target_vocabulary(model)
        with open(ids, encoding="utf-8") as f:
            ours = [[words[int(i)] for i in line.split()] for line in f.read().split("\n")[:len(self.test_len)]]
        with open(nmt_output, encoding="utf-8") as f:
            theirs = [tokenize(line) for line in f.read().split("\n")[:len(self.test_len)]]
        same = sum(a == b for a, b in zip(ours, theirs))
        first = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
        example = None if first is None else {"line": first + 1, "pytorch": " ".join(ours[first]),
                                                "nmt": " ".join(theirs[first])}
        return {"same": same, "sentences": len(ours), "first_difference": example}

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
            for beam, batch in itertools.product((1, BEAM), (1, DECODE_BATCH)):
                kind = "greedy" if beam == 1 else "beam"
                for who in order:
                    if who == "nmt" and (batch == 1 or self.nmt_has_batch):
                        model = res["nmt_train"]["model"]
                        res[f"nmt_{kind}{batch}"] = self.measured(self.nmt_translate, model, batch, beam)
                    elif who == "torch":
                        model = res["torch_train"]["model"]
                        res[f"torch_{kind}{batch}"] = self.measured(self.torch_decode, model, batch, beam)
            if r == 0 and self.nmt_has_batch:
                self.say("  agreement: PyTorch decoding with nmt's weights against nmt translate")
                model = res["nmt_train"]["model"]
                self.results["agreement"] = {
                    kind: self.agreement(model, beam, res[f"nmt_{kind}{DECODE_BATCH}"]["output"])
                    for kind, beam in (("greedy", 1), ("beam", BEAM))}
                self.say("  " + "; ".join(f"{k}: {x['same']}/{x['sentences']} identical"
                                          for k, x in self.results["agreement"].items()))
            for key in ("nmt_train", "torch_train"):
                os.remove(res[key]["model"])
            self.results["rounds"].append(res)
            if r == 0:
                self.sgemm(self.kernel)
            line = (f"  training tok/s: nmt {res['nmt_train']['tokens_per_s']:.0f}, torch "
                    f"{res['torch_train']['tokens_per_s']:.0f}; greedy sent/s line by line: nmt "
                    f"{res['nmt_greedy1']['sentences_per_s']:.1f}, torch "
                    f"{res['torch_greedy1']['sentences_per_s']:.1f}")
            if "nmt_greedy64" in res:
                line += (f"; batch 64: nmt {res['nmt_greedy64']['sentences_per_s']:.0f}, "
                         f"torch {res['torch_greedy64']['sentences_per_s']:.0f}")
            line += (f"\n  beam {BEAM} sent/s line by line: nmt {res['nmt_beam1']['sentences_per_s']:.1f}, "
                     f"torch {res['torch_beam1']['sentences_per_s']:.1f}")
            if "nmt_beam64" in res:
                line += (f"; batch 64: nmt {res['nmt_beam64']['sentences_per_s']:.0f}, "
                         f"torch {res['torch_beam64']['sentences_per_s']:.0f}")
            self.say(line)
        self.run.recording = True

    def scaling(self):
        n = len(self.stats)
        self.say("scaling: nmt on 25%, 50% and 100% of the batches, and on 1 thread")
        rows = []
        for frac in (0.25, 0.5, 1.0):
            steps = max(2, round(n * frac))
            rows.append((frac, self.measured(self.nmt_train, f"scale{frac}", steps)))
            os.remove(rows[-1][1]["model"])
        self.results["scaling"] = rows
        one = self.measured(self.nmt_train, "threads1", n, threads=1)
        os.remove(one["model"])
        self.results["threads1"] = one

    def gemm_shapes(self, S, T):
        """The model's matrix products for a batch of S source and T target steps
        (scripts/bench/bench_transformer.py gives the Transformer's)."""
        return gemm_shapes(S, T, BATCH, self.vocab[1])

    def sgemm(self, kernel):
        """sgemm GFLOP/s at the shapes of a batch of mean length, per shape the best of
        this and any earlier pass on the same kernel (the machine is shared: the limit is
        measured twice, after the first round and at the end)."""
        self.say(f"sgemm rates at the model's shapes ({kernel})")
        S = round(statistics.mean(s["S"] for s in self.stats))
        T = round(statistics.mean(s["T"] for s in self.stats))
        shapes = self.gemm_shapes(S, T)
        binary, spec = os.path.join(self.tmp, "sgemm_rate"), os.path.join(self.tmp, "shapes.txt")
        if not os.path.exists(binary):
            # OpenBLAS's include path and library as the Makefile finds them (pkg-config).
            try:
                deps = subprocess.run(["pkg-config", "--cflags", "--libs", "openblas"], check=True,
                                      capture_output=True, text=True).stdout.split()
            except (OSError, subprocess.CalledProcessError):
                deps = ["-lopenblas"]
            build = ["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-o",
                     binary, os.path.join(HERE, "sgemm_rate.c")] + deps
            self.run.run(build, label="cc sgemm_rate.c")
            with open(spec, "w") as f:
                for i, (_, ta, tb, M, N, K, _) in enumerate(shapes):
                    f.write(f"p{i} {ta} {tb} {M} {N} {K}\n")
        trials = "3" if self.args.quick else "5"
        self.wait_quiet()
        _, _, text = self.run.run([binary, str(THREADS), "0.05", trials], stdin=spec,
                                  env=self.env(kernel), label="sgemm_rate")
        rates = [float(line.split()[-1]) for line in text.splitlines() if not line.startswith("#")]
        sg = self.results.setdefault("sgemm", {"S": S, "T": T, "shapes": shapes, "by_kernel": {}})
        entry = sg["by_kernel"].setdefault(kernel, {"rates": rates, "passes": [], "others": []})
        entry["rates"] = [max(a, b) for a, b in zip(entry["rates"], rates)]
        flops = [2.0 * M * N * K * c for _, _, _, M, N, K, c in shapes]

        def limit(rs):
            return sum(flops) / sum(f / (r * 1e9) for f, r in zip(flops, rs)) / 1e9

        entry["passes"].append(limit(rates))
        entry["others"].append(self.run.others)
        entry["limit_gflops"] = limit(entry["rates"])

    def prescott(self):
        n = min(len(self.stats), 30 if not self.args.quick else 15)
        warm = 10 if not self.args.quick else 5
        self.say(f"side note: both on the Prescott kernel, {n} batches")
        t = self.measured(self.torch_train, "prescott_torch", n, kernel="Prescott", warmup=warm)
        os.remove(t["model"])
        saved, self.args.warmup = self.args.warmup, warm
        m = self.measured(self.nmt_train, "prescott_nmt", n, kernel="Prescott")
        self.args.warmup = saved
        os.remove(m["model"])
        self.results["prescott"] = {"batches": n, "warmup": warm, "torch": t, "nmt": m}

    # ---------------------------------------------------------- the report

    # ---------------------------------------------------------- the raw results

    def raw_results(self, started, load_before):
        """Everything the report shows, as one JSON-able dict (docs/bench/pytorch.json):
        the machine, the settings, every run's figures (without temporary file names)
        and the commands. render() makes BENCHMARKS.md from this alone, so the
        document can be checked against it (scripts/docs/check.sh benchmarks)."""
        a = self.args
        commit, dirty, machine = provenance(["src"], load_before)
        tokens = sum(x["tokens"] for x in self.stats)
        slots = sum(x["T"] * x["B"] for x in self.stats)
        src_slots = sum(x["S"] * x["B"] for x in self.stats)

        def public(x):
            """A run's figures without its temporary files."""
            if isinstance(x, dict):
                return {k: public(v) for k, v in x.items() if k not in ("model", "output")}
            if isinstance(x, (list, tuple)):
                return [public(v) for v in x]
            return x

        return {
            "script": "scripts/bench/bench.py" + (" --quick" if a.quick else ""),
            "provenance": "measured",
            "date": f"{started:%Y-%m-%d %H:%M} UTC",
            "commit": commit,
            "src_modified": dirty,
            "machine": machine,
            "settings": {"rounds": a.rounds, "batches": a.batches, "sentences": a.sentences,
                         "beam_sentences": a.beam_sentences, "warmup": a.warmup,
                         "retry_budget": a.retry_budget, "quick": a.quick, "embed": E, "hidden": H,
                         "batch": BATCH, "max_len": MAX_LEN, "threads": THREADS,
                         "decode_batch": DECODE_BATCH, "beam": BEAM, "alpha": ALPHA, "quiet": QUIET,
                         "sgemm_trials": 3 if a.quick else 5},
            "data": {"path": os.path.relpath(self.data, ROOT), "batches": len(self.stats),
                     "target_tokens": tokens, "vocab": list(self.vocab),
                     "batches_per_epoch": self.batches_per_epoch, "test_sentences": len(self.test_len),
                     "gemm_flops_per_token": sum(gemm_flops(x["S"], x["T"], x["B"], self.vocab[1])
                                                 for x in self.stats) / tokens,
                     "att_flops_per_token": sum(attention_flops(x["S"], x["T"], x["B"])
                                                for x in self.stats) / tokens,
                     "tgt_fill": tokens / slots,
                     "src_fill": sum(x["src_tokens"] for x in self.stats) / src_slots,
                     "nmt_has_batch": self.nmt_has_batch},
            "kernel": self.kernel,
            "rounds": public(self.results["rounds"]),
            "agreement": self.results.get("agreement"),
            "sgemm": self.results["sgemm"],
            "scaling": public(self.results["scaling"]),
            "threads1": public(self.results["threads1"]),
            "prescott": public(self.results["prescott"]),
            "repeats": self.repeats,
            "commands": self.run.commands,
        }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a ~3 minute smoke run")
    ap.add_argument("--rounds", type=int, help="alternated rounds (default 3; quick 1)")
    ap.add_argument("--batches", type=int, help="training batches (default 100; quick 30)")
    ap.add_argument("--sentences", type=int, help="test sentences to decode (default 2000; quick 200)")
    ap.add_argument("--beam-sentences", type=int,
                    help="of those, for beam search line by line (default 500; quick 100)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed first batches")
    ap.add_argument("--retry-budget", type=float,
                    help="seconds to spend waiting for a quiet machine and repeating runs that "
                         "shared it (default 300; quick 60)")
    ap.add_argument("--raw", help="where the raw results go (default docs/bench/pytorch.json, which "
                                  "BENCHMARKS.md and README's Speed section are rendered from; quick: "
                                  "a temporary file, and the rendering is printed instead)")
    ap.add_argument("--render", metavar="RAW.json",
                    help="measure nothing: print the Markdown rendered from RAW.json "
                         "(BENCHMARKS.md's text, or with --readme README's Speed figures)")
    ap.add_argument("--readme", action="store_true", help="with --render: README's Speed figures")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--verbose", action="store_true", help="print each command")
    a = ap.parse_args()
    if a.render:
        with open(a.render, encoding="utf-8") as f:
            raw = json.load(f)
        print(render_readme(raw) if a.readme else render(raw))
        return 0
    a.rounds = a.rounds or (1 if a.quick else 3)
    a.batches = a.batches or (30 if a.quick else 100)
    a.sentences = a.sentences or (200 if a.quick else 2000)
    a.beam_sentences = a.beam_sentences or (100 if a.quick else 500)
    a.retry_budget = a.retry_budget if a.retry_budget is not None else (60 if a.quick else 300)
    if a.batches <= a.warmup + 1:
        sys.exit("bench.py: --batches must exceed --warmup + 1")
    if not os.access(NMT, os.X_OK):
        sys.exit(f"bench.py: {NMT} not found; run make first")
    started = datetime.datetime.utcnow()
    load_before = os.getloadavg()
    b = Bench(a)
    t = time.time()
    try:
        b.export()
        b.rounds()
        b.scaling()
        b.sgemm(b.kernel)
        b.sgemm("Prescott")
        b.prescott()
        raw = b.raw_results(started, load_before)
    finally:
        if a.keep:
            print(f"kept {b.tmp}")
        else:
            shutil.rmtree(b.tmp, ignore_errors=True)
    path = a.raw or (os.path.join(tempfile.gettempdir(), "nmt-bench-quick.json") if a.quick
                     else os.path.join(ROOT, "docs", "bench", "pytorch.json"))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print()
    print("\n".join(headline_rows(raw, summary(raw))))
    print(f"\nwrote {os.path.relpath(path, ROOT)}")
    if path == os.path.join(ROOT, "docs", "bench", "pytorch.json"):
        # BENCHMARKS.md and README's Speed figures are generated blocks rendered from it.
        subprocess.run(["sh", os.path.join(ROOT, "scripts", "docs", "regenerate.sh"), "benchmarks", "speed"],
                       cwd=ROOT, check=True)
    else:
        print(render(raw))
    print(f"({(time.time() - t) / 60:.1f} minutes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
