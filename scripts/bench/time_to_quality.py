"""time_to_quality.py — how soon nmt reaches a good translation, against PyTorch (issue 15).

Speed in tokens per second says little about what a person training a translator
wants: the best translation in the time they have. This script measures quality
against training time, for three recipes of the same model on the same data:

    nmt shuffled   nmt's default: batches of 64 random sentences (train.bucket false),
                   packed, so nothing is computed past a sentence's end
    nmt bucketed   train.bucket true, the old default: length-sorted within windows
    PyTorch        scripts/bench/bench_torch.py, the same model written the tutorials' way and
                   trained on random batches of 64 sentences: the very batches nmt
                   shuffled draws with the same seed (exported by `nmt train
                   --export-batches`), so that only the programs differ

For each corpus (../shared/data's mar.txt, swe.txt and fra.txt by default; fra.txt capped
by --max-pairs, see DEFAULT_CAP) and each seed (--seeds, default 2) it

 1. makes ONE split, the same for every run and seed: the usable pairs (those nmt keeps:
    at most data.max_len words a side, neither side empty, as `nmt bpe apply --char`
    tokenises them), a seeded sample of --max-pairs of them if capped, and a seeded
    valid_fraction of those held out; written as train.tsv and valid.tsv, given to nmt
    as data.train and data.valid (nmt's own split would change with train.seed);
 2. trains nmt in both recipes with the settings of
    configs/mar-reference.json (embed 256, hidden 512, Bahdanau, batch 64, Adam 1e-3,
    clip 5, lowercased, 2 threads), bucketed for --epochs (3) epochs and shuffled for
    --nmt-epochs (8: about the time PyTorch's 3 epochs take, so that BLEU at equal
    wall-clock compares models trained for the same time), validating after each
    epoch: the loss per target
    token over every held-out pair, and BLEU of greedy translations of up to
    train.valid_bleu_max (1,000) of them, read from train.log;
 3. trains PyTorch on the batches nmt exports for the same seed (2 threads, the OpenBLAS
    kernel nmt runs on, through OPENBLAS_CORETYPE), validating after each epoch with its
    clock stopped: the same loss over the same pairs as nmt's token ids, and greedy
    translations of the same BLEU pairs, turned into text by nmt (`nmt bpe join`: the
    words of nmt's target vocabulary, detokenised as `nmt translate` does) and scored by
    nmt (`nmt score`: src/eval/bleu.c against the references normalised as nmt's validation
    normalises them). Once per corpus this scoring path is checked against nmt's own
    figures for nmt's model (seed 1, shuffled, last epoch): its translations scored this
    way must give the BLEU train.log reports, and PyTorch's validation with nmt's
    weights the same loss (and nearly the same BLEU);
 4. writes every figure of every run to docs/bench/time_to_quality.json (--raw), and
    renders from it (--render RAW.json) docs/bench-time-to-quality.md's section: per corpus and epoch the
    validation loss, BLEU and training time (medians over the seeds, min–max), the time
    each recipe takes to reach PyTorch's epoch-3 BLEU, the BLEU within 2, 5 and 10
    minutes, and the issue's three targets checked with the numbers.

Time: the training wall-clock, validations excluded on both sides. nmt's train.log gives
each validation's start ("elapsed", the run's clock with every earlier validation in it)
and length ("seconds"); the clock here is elapsed minus the earlier validations. It still
holds nmt's epoch-end checkpoint and best.bin writes. PyTorch's is the sum of its epochs'
wall-clock (every batch a tensor before the clock starts).

The issue's targets, as checked here (medians over the seeds; where seeds are paired,
nmt's seed s against PyTorch's seed s, which train on the same batches):
  1. at equal epochs, nmt shuffled's validation loss at most 0.5% above PyTorch's (random
     batching; nmt shuffled is random batching too, so nmt bucketed is shown against both);
  2. at PyTorch's epoch ends, nmt shuffled's best BLEU by then at least 5
     above PyTorch's (the fixed budgets of (c) are shown beside);
  3. nmt shuffled's time to PyTorch's epoch-3 BLEU at most a quarter of the time PyTorch's
     3 epochs took.
Met or not, each is reported with its numbers.

    /usr/bin/python3 scripts/bench/time_to_quality.py           # the full run: hours; writes
                                                                # docs/bench/time_to_quality.json and
                                                                # docs/bench-time-to-quality.md's section
    /usr/bin/python3 scripts/bench/time_to_quality.py --quick   # every step on tiny slices, 2 epochs
                                                                # (~3 minutes); prints the rendering
    python3 scripts/bench/time_to_quality.py --render docs/bench/time_to_quality.json [--readme]

Torch is imported only by scripts/bench/bench_torch.py, in its own processes; numpy only while
measuring; --render needs the standard library alone.
"""

import argparse
import datetime
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))   # scripts/bench/ is two levels down
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts", "reference"))   # fixture.py, the batches' format
from bench import Runner, provenance  # noqa: E402  (one command at a time, its noise; the machine)
# The recipes, corpora and targets the report names, and the report itself.
from time_to_quality_report import (DEFAULT_CAP, LANGUAGES, LEVEL_EPOCH, RECIPES,  # noqa: E402,F401
                                    render, render_readme, spread)

PYTHON = "/usr/bin/python3"        # Debian's, where python3-torch is
NMT = os.path.join(ROOT, "nmt")
REFERENCE = os.path.join(ROOT, "configs", "mar-reference.json")
RAW = os.path.join(ROOT, "docs", "bench", "time_to_quality.json")
BENCHMARKS = os.path.join(ROOT, "docs", "bench-time-to-quality.md")   # where the section is
BLOCK = "time_to_quality"
CORPORA = ("mar", "swe", "fra")
QUICK_PAIRS = 800                  # --quick: every corpus sampled down to this
VALID_BLEU_MAX = 1000              # nmt's default train.valid_bleu_max
BUDGETS_MIN = (2, 5, 10)           # (c): BLEU within these minutes of training


# ---------------------------------------------------------------- nmt's files

def model_sections(path):
    """The sections of an nmt model file (src/files/modelfile.h), tag -> payload bytes."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"NMTMODEL":
        sys.exit(f"time_to_quality.py: {path}: not an nmt model file")
    count, pos, sections = struct.unpack_from("<I", raw, 16)[0], 20, {}
    for _ in range(count):
        tag, size = raw[pos:pos + 4].decode(), struct.unpack_from("<Q", raw, pos + 4)[0]
        sections[tag] = raw[pos + 16:pos + 16 + size]
        pos += 16 + size
    return sections


def vocabulary(payload):
    """An SVOC or TVOC section's words, by id (u32 count, then u32 length + UTF-8 each)."""
    n, at, words = struct.unpack_from("<I", payload, 0)[0], 4, []
    for _ in range(n):
        length = struct.unpack_from("<I", payload, at)[0]
        words.append(payload[at + 4:at + 4 + length].decode("utf-8"))
        at += 4 + length
    return words


def validation_lines(log_path):
    """train.log's validation lines as epoch records, with the training clock at each:
    elapsed (the run's clock when the validation began) minus the earlier validations."""
    epochs, spent = [], 0.0
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("event") != "validation":
                continue
            epochs.append({"epoch": rec["epoch"], "valid_loss": rec["valid_loss"],
                           "valid_bleu": rec.get("valid_bleu"), "clock": round(rec["elapsed"] - spent, 3),
                           "elapsed": rec["elapsed"], "valid_seconds": rec["seconds"]})
            spent += rec["seconds"]
    return epochs


def start_line(log_path):
    with open(log_path, encoding="utf-8") as f:
        return json.loads(f.readline())


# ---------------------------------------------------------------- the data

def read_pairs(path):
    """The sentence pairs of a file as nmt's reader keeps them (src/data/tsv.h): UTF-8 lines
    with a tab, columns 1 and 2, ASCII blanks trimmed, neither side empty."""
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    pairs = []
    for raw in data.split(b"\n"):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        cols = line.split("\t")
        if "\0" in line or len(cols) < 2:
            continue
        src, tgt = cols[0].strip(" \r\v\f"), cols[1].strip(" \r\v\f")
        if src.strip() and tgt.strip():
            pairs.append((src, tgt))
    return pairs


def words_of(pieces):
    """The words of a `nmt bpe apply --char` line: pieces ending in @@ continue the word."""
    words, word = [], ""
    for p in pieces.split(" "):
        if p.endswith("@@"):
            word += p[:-2]
        elif p:
            words.append(word + p)
            word = ""
    return words + ([word] if word else [])


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


# ---------------------------------------------------------------- the benchmark

class TimeToQuality:
    """One measurement: the corpora one after the other, every command through one
    Runner (one process at a time: the machine has two cores), all files in one
    temporary directory. corpus() returns a corpus's raw figures, raw_results() the
    whole file."""

    def __init__(self, args):
        self.a = args
        self.tmp = tempfile.mkdtemp(prefix="nmt-ttq-")
        self.run = Runner(self.tmp, args.verbose)
        self.kernel = os.environ.get("OPENBLAS_CORETYPE")
        with open(REFERENCE, encoding="utf-8") as f:
            self.reference = json.load(f)
        self.text_flags = (["--lowercase"] if self.reference["data"].get("lowercase", True) else []) + \
            (["--nfkc"] if self.reference["data"].get("normalization", "nfc") == "nfkc" else [])
        self.max_len = self.reference["data"].get("max_len", 20)
        self.valid_fraction = self.reference["data"].get("valid_fraction", 0.1)
        self.torch_info = {}

    def say(self, msg):
        print(msg, flush=True)

    def env(self):
        return {"OPENBLAS_CORETYPE": self.kernel} if self.kernel else {}

    def nmt(self, argv, label, stdout=None):
        return self.run.run([NMT] + argv, env=self.env(), stdout=stdout, label=label)

    # ---------------------------------------------------------- 1. the split

    def tokenise(self, lines, name):
        """Each line's words as nmt tokenises them, and the line normalised as nmt's
        validation normalises a reference (the words detokenised)."""
        raw, pieces, norm = (os.path.join(self.tmp, f"{name}.{x}") for x in ("txt", "pieces", "norm"))
        write_lines(raw, lines)
        self.nmt(["bpe", "apply", "--char"] + self.text_flags + ["-o", pieces, raw], "nmt bpe apply")
        self.nmt(["bpe", "join", "-o", norm, pieces], "nmt bpe join")
        return [words_of(p) for p in read_lines(pieces)], read_lines(norm)

    def split(self, name, path):
        """Writes the corpus's train.tsv, valid.tsv, the BLEU pairs' sources and
        references, and returns what the runs need to know about them."""
        a, d = self.a, os.path.join(self.tmp, name)
        os.makedirs(d)
        pairs = read_pairs(path)
        src_words, _ = self.tokenise([s for s, _ in pairs], f"{name}/all.src")
        tgt_words, tgt_norm = self.tokenise([t for _, t in pairs], f"{name}/all.tgt")
        usable = [i for i in range(len(pairs))
                  if 0 < len(src_words[i]) <= self.max_len and 0 < len(tgt_words[i]) <= self.max_len]
        rng = random.Random(a.split_seed)
        cap = a.caps.get(name)
        chosen = sorted(rng.sample(usable, cap)) if cap and cap < len(usable) else usable
        shuffled = list(chosen)
        rng.shuffle(shuffled)
        n_valid = round(self.valid_fraction * len(chosen))
        valid, train = sorted(shuffled[:n_valid]), sorted(shuffled[n_valid:])
        c = {"name": name, "path": os.path.relpath(path, ROOT), "pairs_read": len(pairs),
             "pairs_usable": len(usable), "cap": cap if cap and cap < len(usable) else None,
             "train_pairs": len(train), "valid_pairs": len(valid), "dir": d,
             "train_tsv": os.path.join(d, "train.tsv"), "valid_tsv": os.path.join(d, "valid.tsv")}
        write_lines(c["train_tsv"], [f"{pairs[i][0]}\t{pairs[i][1]}" for i in train])
        write_lines(c["valid_tsv"], [f"{pairs[i][0]}\t{pairs[i][1]}" for i in valid])
        # nmt's validation BLEU pairs (src/train/dataset.c, keep_bleu_pairs): n spread evenly
        # over the held-out set, in the order it decodes them, sorted by (target, source)
        # length; BLEU is a corpus score, the order only decides the batches.
        n = min(VALID_BLEU_MAX, len(valid))
        pick = sorted((k * len(valid) // n for k in range(n)),
                      key=lambda k: (len(tgt_words[valid[k]]), len(src_words[valid[k]])))
        c["bleu_index"] = pick
        c["bleu_pairs"] = n
        c["bleu_src"], c["bleu_ref"] = os.path.join(d, "bleu.src"), os.path.join(d, "bleu.ref")
        write_lines(c["bleu_src"], [pairs[valid[k]][0] for k in pick])
        write_lines(c["bleu_ref"], [tgt_norm[valid[k]] for k in pick])
        c["valid_words"] = [(src_words[i], tgt_words[i]) for i in valid]
        return c

    # ---------------------------------------------------------- nmt

    def config(self, c, name, seed, bucket, epochs, extra=None):
        cfg = json.loads(json.dumps(self.reference))
        cfg["data"].pop("valid_fraction", None)        # data.valid given: it does not apply
        cfg["data"].update({"train": c["train_tsv"], "valid": c["valid_tsv"]})
        cfg["train"].update({"epochs": epochs, "seed": seed, "bucket": bucket, "checkpoint_every": 0,
                             "keep_checkpoints": 1, "valid_bleu_max": VALID_BLEU_MAX})
        cfg["train"].update(extra or {})
        cfg["output"] = {"dir": os.path.join(c["dir"], name)}
        path = os.path.join(c["dir"], name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(cfg, f, indent=1)
        return path, cfg["output"]["dir"]

    def vocabularies(self, c):
        """A one-step run: nmt's vocabularies of this split (the same for every seed:
        they come from the training pairs alone), its OpenBLAS kernel, and a check that
        nmt keeps every pair of train.tsv and valid.tsv."""
        path, out = self.config(c, "vocab", 1, False, 1, {"max_steps": 1, "valid_bleu_max": 0})
        self.nmt(["train", path], "nmt train (vocabularies)")
        m = re.search(r"OpenBLAS kernel (\S+?),", self.run.last_stderr)
        if self.kernel is None and m:
            self.kernel = m.group(1)     # from now on set explicitly, for nmt and PyTorch alike
        start = start_line(os.path.join(out, "train.log"))
        if (start["train_pairs"], start["valid_pairs"]) != (c["train_pairs"], c["valid_pairs"]):
            sys.exit(f"time_to_quality.py: nmt kept {start['train_pairs']} training and {start['valid_pairs']} "
                     f"held-out pairs of {c['train_tsv']} and {c['valid_tsv']}, this script "
                     f"{c['train_pairs']} and {c['valid_pairs']}: the split's filter is not nmt's")
        sections = model_sections(os.path.join(out, "model.bin"))
        c["svoc"], c["tvoc"] = sections["SVOC"], sections["TVOC"]
        c["src_vocab"], c["tgt_vocab"] = vocabulary(sections["SVOC"]), vocabulary(sections["TVOC"])
        shutil.rmtree(out)

    def nmt_run(self, c, recipe, seed, keep_model=False):
        bucket = recipe == "nmt_bucketed"
        epochs = self.a.nmt_epochs if recipe == "nmt_shuffled" else self.a.epochs
        path, out = self.config(c, f"{recipe}.{seed}", seed, bucket, epochs)
        wall, rss, _ = self.nmt(["train", path, "--quiet"], f"nmt train ({recipe})")
        log = os.path.join(out, "train.log")
        run = {"recipe": recipe, "seed": seed, "wall_s": round(wall, 2), "rss_kib": rss,
               "others": round(self.run.others, 3), "epochs": validation_lines(log)}
        if keep_model:
            run["model"] = os.path.join(c["dir"], f"{recipe}.{seed}.bin")
            shutil.move(os.path.join(out, "model.bin"), run["model"])
        shutil.rmtree(out)
        return run

    # ---------------------------------------------------------- PyTorch

    def valid_file(self, c):
        """VALID.bin for bench_torch.py: the held-out pairs as nmt's token ids (unknown
        words <unk>, as nmt maps them) and the BLEU pairs' order."""
        import numpy as np                       # measuring only, not --render
        from fixture import write_fixture
        sid = {w: i for i, w in enumerate(c["src_vocab"])}
        tid = {w: i for i, w in enumerate(c["tgt_vocab"])}
        pairs = c["valid_words"]
        n = len(pairs)
        S = max(len(s) for s, _ in pairs)
        T = max(len(t) for _, t in pairs)
        src, tgt = np.zeros((n, S), np.int32), np.zeros((n, T), np.int32)
        for k, (s, t) in enumerate(pairs):
            src[k, :len(s)] = [sid.get(w, 1) for w in s]
            tgt[k, :len(t)] = [tid.get(w, 1) for w in t]
        c["valid_unk"] = [round(float((src == 1).sum()) / sum(len(s) for s, _ in pairs), 4),
                          round(float((tgt == 1).sum()) / sum(len(t) for _, t in pairs), 4)]
        c["valid_bin"] = os.path.join(c["dir"], "valid.bin")
        write_fixture(c["valid_bin"], [
            ("dims", np.array([len(c["src_vocab"]), len(c["tgt_vocab"]), n, len(c["bleu_index"])], np.int32)),
            ("valid.src", src), ("valid.src_len", np.array([len(s) for s, _ in pairs], np.int32)),
            ("valid.tgt", tgt), ("valid.tgt_len", np.array([len(t) for _, t in pairs], np.int32)),
            ("bleu.index", np.array(c["bleu_index"], np.int32))])

    def export(self, c, seed, bucket):
        path, out = self.config(c, f"export.{seed}.{int(bucket)}", seed, bucket, self.a.epochs)
        batches = os.path.join(c["dir"], f"batches.{seed}.{int(bucket)}.bin")
        self.nmt(["train", path, "--export-batches", batches, "--quiet"], "nmt train --export-batches")
        shutil.rmtree(out, ignore_errors=True)
        return batches

    def torch_run(self, c, seed):
        batches = self.export(c, seed, False)
        if seed == self.a.seeds[0]:
            c["batches_check"] = self.batches_check(c, batches)
        prefix = os.path.join(c["dir"], f"pytorch.{seed}")
        argv = [PYTHON, os.path.join(HERE, "bench_torch.py"), "--mode", "epochs", "--data", batches,
                "--epochs", str(self.a.epochs), "--valid", c["valid_bin"], "--threads", "2",
                "--seed", str(seed), "--output-prefix", prefix]
        for key, flag in (("embed", "--embed"), ("hidden", "--hidden")):
            argv += [flag, str(self.reference["model"][key])]
        argv += ["--lr", str(self.reference["train"]["learning_rate"]),
                 "--clip", str(self.reference["train"]["clip_norm"])]
        wall, rss, out = self.run.run(argv, env=self.env(), label="bench_torch.py --mode epochs")
        result = json.loads(out.strip().splitlines()[-1])
        self.torch_info = {k: result[k] for k in ("torch", "openblas_kernel", "aten_cpu_capability")}
        epochs = []
        for e in result["epochs"]:
            epochs.append({"epoch": e["epoch"], "valid_loss": e["valid_loss"],
                           "valid_bleu": self.score_ids(c, e["output"]), "clock": e["clock"],
                           "train_seconds": e["train_seconds"], "valid_seconds": e["valid_seconds"],
                           "train_loss": e["train_loss"]})
            os.remove(e["output"])
        os.remove(batches)
        c["batches_per_epoch"] = result["batches_per_epoch"]
        c["target_tokens_per_epoch"] = result["epochs"][0]["target_tokens"]
        return {"recipe": "pytorch", "seed": seed, "wall_s": round(wall, 2), "rss_kib": rss,
                "others": round(self.run.others, 3), "openblas_kernel": result["openblas_kernel"],
                "epochs": epochs}

    def score_ids(self, c, ids_path, keep_text=None):
        """BLEU of output ids as nmt's validation computes it: ids -> nmt's target words
        -> `nmt bpe join` (nmt translate's detokeniser) -> `nmt score` against the BLEU
        pairs' references (src/eval/bleu.c)."""
        words = os.path.join(self.tmp, "hyp.words")
        text = keep_text or os.path.join(self.tmp, "hyp.txt")
        vocab = c["tgt_vocab"]
        lines = [[vocab[int(i)] for i in line.split()] for line in read_lines(ids_path)]
        if any(w.endswith("@@") for line in lines for w in line):
            sys.exit(f"time_to_quality.py: {ids_path}: an output word ends in @@, which nmt bpe join would glue "
                     "to the next word; this scoring path cannot score it")
        write_lines(words, [" ".join(line) for line in lines])
        self.nmt(["bpe", "join", "-o", text, words], "nmt bpe join")
        return self.bleu(c, text)

    def bleu(self, c, hyp):
        _, _, out = self.nmt(["score", c["bleu_ref"], "-i", hyp, "--json"], "nmt score")
        return round(json.loads(out)["bleu"], 4)

    # ---------------------------------------------------------- checks

    def batches_check(self, c, shuffled_path):
        """Are the exported batches random batches of 64 sentences, as a tutorial's
        DataLoader(shuffle=True) draws them? Every epoch must hold the same pairs, each
        once, in batches of 64 (the last one smaller); lengths must be mixed within a
        batch (within-batch spread of target lengths close to the corpus's) and not
        follow the file's order (the rank correlation of a batch's place in its epoch with
        its mean target length, over every epoch's batches, within 3 standard errors of 0,
        1/sqrt(N - 1) for N batches; the files are sorted by length). The bucketed export
        of the same seed is measured alongside, for contrast."""
        import numpy as np                       # measuring only
        from fixture import read_fixture

        def stats(path):
            data = read_fixture(path)
            total = int(data["dims"][2])
            per = total // self.a.epochs
            pairs_by_epoch, orders, sizes, spread, places, means, lengths = [], set(), [], [], [], [], []
            for e in range(self.a.epochs):
                seen = []
                for k in range(e * per, (e + 1) * per):
                    src, out = data[f"batch.{k}.src"], data[f"batch.{k}.tgt_out"]
                    tl = (out != 0).sum(0)
                    for b in range(src.shape[1]):
                        seen.append((tuple(src[:, b][src[:, b] != 0]), tuple(out[:, b][out[:, b] != 0])))
                    places.append(k - e * per)
                    means.append(float(tl.mean()))
                    if e == 0:
                        sizes.append(src.shape[1])
                        spread.append(float(tl.std()))
                        lengths.extend(tl.tolist())
                orders.add(tuple(seen))
                pairs_by_epoch.append(sorted(seen))
            rank = (lambda x: np.argsort(np.argsort(x, kind="stable"), kind="stable"))
            rho = float(np.corrcoef(rank(places), rank(means))[0, 1]) if len(means) > 2 else 0.0
            return {"batches_per_epoch": per, "batch_sizes": sorted(set(sizes)),
                    "last_batch": sizes[-1], "same_pairs_every_epoch":
                        all(p == pairs_by_epoch[0] for p in pairs_by_epoch),
                    "pairs_per_epoch": len(pairs_by_epoch[0]),
                    "distinct_orders": len(orders),
                    "within_batch_spread": round(float(np.mean(spread)) / float(np.std(lengths)), 3),
                    "position_length_rank_correlation": round(rho, 3),
                    "rank_correlation_standard_error": round(1 / max(1, len(means) - 1) ** 0.5, 3)}

        bucketed = self.export(c, self.a.seeds[0], True)
        result = {"shuffled": stats(shuffled_path), "bucketed": stats(bucketed)}
        os.remove(bucketed)
        s = result["shuffled"]
        result["random_batches"] = bool(
            s["same_pairs_every_epoch"] and s["pairs_per_epoch"] == c["train_pairs"]
            and s["batch_sizes"][-1] == 64 and s["within_batch_spread"] > 0.8
            and abs(s["position_length_rank_correlation"]) < 3 * s["rank_correlation_standard_error"])
        return result

    def scoring_check(self, c, run):
        """nmt's model (the run's last epoch) through this script's scoring paths, against
        the figures nmt's own validation wrote to train.log for it."""
        model, last = run.pop("model"), run["epochs"][-1]
        sections = model_sections(model)
        if (sections["SVOC"], sections["TVOC"]) != (c["svoc"], c["tvoc"]):
            sys.exit(f"time_to_quality.py: {run['recipe']} seed {run['seed']} has other vocabularies than the "
                     "one-step run whose token ids PyTorch is given")
        hyp = os.path.join(c["dir"], "check.nmt.txt")
        self.nmt(["translate", model, c["bleu_src"], "--batch", "64", "-o", hyp], "nmt translate")
        translate_bleu = self.bleu(c, hyp)
        prefix = os.path.join(c["dir"], "check")
        argv = [PYTHON, os.path.join(HERE, "bench_torch.py"), "--mode", "validate", "--data", c["valid_bin"],
                "--nmt-weights", model, "--threads", "2", "--output-prefix", prefix]
        _, _, out = self.run.run(argv, env=self.env(), label="bench_torch.py --mode validate")
        r = json.loads(out.strip().splitlines()[-1])
        torch_hyp = os.path.join(c["dir"], "check.torch.txt")
        torch_bleu = self.score_ids(c, r["output"], keep_text=torch_hyp)
        same = sum(x == y for x, y in zip(read_lines(hyp), read_lines(torch_hyp)))
        check = {"run": f"{run['recipe']} seed {run['seed']} epoch {last['epoch']}",
                 "train_log_bleu": last["valid_bleu"], "translate_score_bleu": translate_bleu,
                 "train_log_loss": last["valid_loss"], "pytorch_loss": r["valid_loss"],
                 "pytorch_bleu": torch_bleu, "same_translations": same, "sentences": c["bleu_pairs"]}
        os.remove(model)
        if abs(translate_bleu - last["valid_bleu"]) > 0.01 or \
                abs(r["valid_loss"] - last["valid_loss"]) > 1e-4 * max(1.0, last["valid_loss"]):
            sys.exit(f"time_to_quality.py: the scoring path does not reproduce nmt's validation: {check}")
        return check

    # ---------------------------------------------------------- one corpus

    def corpus(self, name, path):
        a = self.a
        t0 = time.time()
        c = self.split(name, path)
        capped = "" if c["cap"] is None else f", a sample of {c['cap']:,}"
        self.say(f"{name}: {c['train_pairs']:,} training and {c['valid_pairs']:,} held-out pairs "
                 f"({c['pairs_usable']:,} usable of {c['pairs_read']:,}{capped}); BLEU on {c['bleu_pairs']:,}")
        self.vocabularies(c)
        self.valid_file(c)
        runs = []
        for k, seed in enumerate(a.seeds):
            # The machine drifts: each seed runs the recipes in another order.
            order = [r for r, _ in RECIPES]
            order = order[k % 3:] + order[:k % 3]
            for recipe in order:
                t = time.time()
                if recipe == "pytorch":
                    run = self.torch_run(c, seed)
                else:
                    first = recipe == "nmt_shuffled" and k == 0
                    run = self.nmt_run(c, recipe, seed, keep_model=first)
                    if first:           # before hours are spent on a broken scoring path
                        c["scoring_check"] = self.scoring_check(c, run)
                        self.say(f"  check: {c['scoring_check']}")
                runs.append(run)
                last = run["epochs"][-1]
                self.say(f"  seed {seed} {recipe}: epoch {last['epoch']} valid loss {last['valid_loss']:.4f} "
                         f"BLEU {last['valid_bleu']:.2f} at {last['clock']:.0f} s "
                         f"({time.time() - t:.0f} s with validations; others' CPU {run['others']:.2f})")
        self.say(f"  batches: {c['batches_check']['shuffled']}")
        keep = ("name", "path", "pairs_read", "pairs_usable", "cap", "train_pairs", "valid_pairs", "bleu_pairs",
                "batches_per_epoch", "target_tokens_per_epoch", "valid_unk", "batches_check", "scoring_check")
        out = {k: c.get(k) for k in keep}
        out["vocab"] = [len(c["src_vocab"]), len(c["tgt_vocab"])]
        out["runs"] = runs
        out["minutes"] = round((time.time() - t0) / 60, 1)
        shutil.rmtree(c["dir"], ignore_errors=True)
        self.run.recording = False      # the other corpora repeat these commands
        return out

    def raw_results(self, corpora, started, load_before):
        commit, dirty, machine = provenance(["src", "scripts"], load_before)
        machine["openblas_kernel"] = self.kernel
        a = self.a
        args = " ".join(a.argv)
        return {
            "script": "scripts/bench/time_to_quality.py" + (f" {args}" if args else ""),
            "provenance": "measured",
            "date": f"{started:%Y-%m-%d %H:%M} UTC",
            "commit": commit,
            "src_modified": dirty,
            "machine": machine,
            "settings": {"epochs": a.epochs, "nmt_epochs": a.nmt_epochs, "seeds": a.seeds, "split_seed": a.split_seed, "quick": a.quick,
                         "caps": a.caps, "valid_fraction": self.valid_fraction, "max_len": self.max_len,
                         "valid_bleu_max": VALID_BLEU_MAX, "budgets_min": list(BUDGETS_MIN),
                         "level_epoch": LEVEL_EPOCH, "reference": os.path.relpath(REFERENCE, ROOT),
                         "model": self.reference["model"],
                         "train": {k: v for k, v in self.reference["train"].items()
                                   if k in ("batch_size", "learning_rate", "clip_norm", "threads")},
                         "lowercase": self.reference["data"].get("lowercase", True),
                         "pytorch": self.torch_info},
            "corpora": corpora,
            "minutes": round((time.time() - self.t_start) / 60, 1),
            "commands": self.run.commands,
        }



def splice_into_benchmarks():
    """docs/bench-time-to-quality.md gets the section as a generated block (scripts/docs/docs.py)
    at its end, if it has none yet; then the block is regenerated."""
    with open(BENCHMARKS, encoding="utf-8") as f:
        text = f.read()
    if f"<!-- generated block {BLOCK}:" not in text:
        block = (f"<!-- generated block {BLOCK}: python3 scripts/bench/time_to_quality.py --render "
                 f"docs/bench/time_to_quality.json -->\n<!-- end of generated block {BLOCK} -->\n")
        with open(BENCHMARKS, "w", encoding="utf-8") as f:
            f.write(text.rstrip("\n") + "\n\n" + block)
    subprocess.run(["sh", os.path.join(ROOT, "scripts", "docs", "regenerate.sh"), BLOCK], cwd=ROOT, check=True)


# ---------------------------------------------------------------- main

def data_dir(given):
    if given:
        return given
    for d in (os.path.join(ROOT, "..", "shared", "data"), os.path.join(ROOT, "..", "..", "shared", "data")):
        if os.path.isdir(d):
            return os.path.normpath(d)
    sys.exit("time_to_quality.py: no ../shared/data next to the repository; give --data-dir")


def parse_caps(items, quick):
    caps = {name: QUICK_PAIRS for name in CORPORA} if quick else dict(DEFAULT_CAP)
    for item in items or []:
        name, _, n = item.partition("=")
        if not n.isdigit():
            sys.exit(f"time_to_quality.py: --max-pairs {item}: expected NAME=N (N = 0: no cap)")
        caps[name] = int(n) or None
    return {k: v for k, v in caps.items() if v}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"every step on {QUICK_PAIRS} pairs of each corpus, 2 epochs (a few minutes)")
    ap.add_argument("--corpora", nargs="+", help=f"corpus names in --data-dir (default {' '.join(CORPORA)})")
    ap.add_argument("--data-dir", help="where the corpora are (default ../shared/data)")
    ap.add_argument("--seeds", type=int, help="seeds 1..N per recipe (default 2)")
    ap.add_argument("--epochs", type=int, help="epochs of PyTorch and nmt bucketed (default 3; quick 2)")
    ap.add_argument("--nmt-epochs", type=int, help="epochs of nmt shuffled, enough to cover PyTorch's "
                                                   "training time (default 8; quick 3)")
    ap.add_argument("--max-pairs", action="append", metavar="NAME=N",
                    help="use a seeded sample of N usable pairs of corpus NAME (default fra=%d; "
                         "quick: %d of each; N = 0: all)" % (DEFAULT_CAP["fra"], QUICK_PAIRS))
    ap.add_argument("--split-seed", type=int, default=1, help="the seed of the split and the sample (default 1)")
    ap.add_argument("--raw", help="where the raw results go (default docs/bench/time_to_quality.json, which "
                                  "docs/bench-time-to-quality.md's section is rendered from; quick: a temporary file, and "
                                  "the rendering is printed instead)")
    ap.add_argument("--render", metavar="RAW.json", help="measure nothing: print the Markdown of RAW.json")
    ap.add_argument("--readme", action="store_true", help="with --render: README's short headline instead")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--verbose", action="store_true", help="print each command")
    a = ap.parse_args()
    a.argv = sys.argv[1:]
    if a.render:
        with open(a.render, encoding="utf-8") as f:
            raw = json.load(f)
        print(render_readme(raw) if a.readme else render(raw))
        return 0
    a.epochs = a.epochs or (2 if a.quick else 3)
    a.nmt_epochs = a.nmt_epochs or (3 if a.quick else 8)
    a.seeds = list(range(1, (a.seeds or 2) + 1))
    a.caps = parse_caps(a.max_pairs, a.quick)
    names = a.corpora or list(CORPORA)
    where = data_dir(a.data_dir)
    paths = [(n, n if os.path.isfile(n) else os.path.join(where, n + ".txt")) for n in names]
    for n, p in paths:
        if not os.path.isfile(p):
            sys.exit(f"time_to_quality.py: {p}: no such corpus")
    if not os.access(NMT, os.X_OK):
        sys.exit(f"time_to_quality.py: {NMT} not found; run make first")
    started = datetime.datetime.utcnow()
    load_before = os.getloadavg()
    t = TimeToQuality(a)
    t.t_start = time.time()
    try:
        corpora = [t.corpus(os.path.splitext(os.path.basename(n))[0], p) for n, p in paths]
        raw = t.raw_results(corpora, started, load_before)
    finally:
        if a.keep:
            print(f"kept {t.tmp}")
        else:
            shutil.rmtree(t.tmp, ignore_errors=True)
    path = a.raw or (os.path.join(tempfile.gettempdir(), "nmt-ttq-quick.json") if a.quick else RAW)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"\nwrote {os.path.relpath(path, ROOT) if path.startswith(ROOT + '/') else path}")
    if path == RAW:
        splice_into_benchmarks()
    else:
        print(render(raw))
    print(f"({raw['minutes']:.1f} minutes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
