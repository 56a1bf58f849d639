"""naive_bayes.py — nmt's sentence classifier against a bag-of-words naive Bayes (issue 29).

Is the attention classifier worth its training? A multinomial naive Bayes over
lowercased word counts (each word counted once per sentence, Laplace smoothing: the
"binarized" NB of Wang & Manning 2012, the usual baseline for short sentiment texts),
trained on the very lines nmt trains on, is the bar. On ../shared/data/sentiment's
amazon_cells_labelled.txt and yelp_labelled.txt (1,000 sentences each, half of each
label), for seeds 1..--seeds:

  split     each file shuffled with the seed: 80% for training, 20% held out (test);
            of the training lines 10% are nmt's validation lines (data.valid: they pick
            best.bin, and nothing else); naive Bayes trains on the other 90%, the lines
            nmt's updates see
  in-domain train on a file's training lines, test on its held-out lines
  cross     train on amazon's training lines, test on every yelp line; and the reverse

nmt trains each config given (--config NAME=CONFIG.json, several allowed; default
configs/sentiment.json, the demonstration's setting, and configs/classifier.json, the
bag of words beside a small encoder) with data.train and data.valid the split's files and train.seed
the seed, and `nmt eval best.bin TEST.tsv --json` gives its accuracy. The raw results
go to docs/bench/naive_bayes.json (--raw), and --render RAW.json prints BENCHMARKS.md's
section from it alone.

    python3 scripts/bench/naive_bayes.py [--seeds 5] [--config NAME=CONFIG.json ...]
    python3 scripts/bench/naive_bayes.py --render docs/bench/naive_bayes.json

Standard library only; nmt's runs use one thread each, --jobs at a time.
"""

import argparse
import concurrent.futures
import datetime
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
sys.path[:0] = [HERE, SCRIPTS]
from bench import provenance  # noqa: E402

NMT = os.environ.get("NMT", os.path.join(ROOT, "nmt"))
RAW = os.path.join(ROOT, "docs", "bench", "naive_bayes.json")
DOMAINS = {"amazon": "amazon_cells_labelled.txt", "yelp": "yelp_labelled.txt"}
TASKS = (("amazon", "amazon"), ("yelp", "yelp"), ("amazon", "yelp"), ("yelp", "amazon"))
TEST_SHARE, VALID_SHARE = 0.2, 0.1


def fail(msg):
    sys.exit(f"naive_bayes.py: {msg}")


def read_pairs(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            text, sep, label = line.rstrip("\n").rpartition("\t")
            if not sep or not text.strip():
                fail(f"{path}:{n}: not TEXT<TAB>LABEL")
            out.append((text, label))
    return out


def write_pairs(path, pairs):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{t}\t{y}\n" for t, y in pairs)


# ---------------------------------------------------------------- naive Bayes

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def words(text):
    """The sentence's distinct lowercased words (letters and digits, with an inner
    apostrophe: "don't")."""
    return set(WORD.findall(text.lower()))


class NaiveBayes:
    """Multinomial naive Bayes over binarized word counts, add-one smoothed."""

    def __init__(self, pairs):
        self.labels = sorted({y for _, y in pairs})
        self.prior = {y: math.log(sum(1 for _, z in pairs if z == y) / len(pairs)) for y in self.labels}
        counts = {y: {} for y in self.labels}
        for text, y in pairs:
            for w in words(text):
                counts[y][w] = counts[y].get(w, 0) + 1
        self.vocab = set().union(*counts.values())
        self.logp = {}
        for y in self.labels:
            total = sum(counts[y].values()) + len(self.vocab)
            self.logp[y] = {w: math.log((counts[y].get(w, 0) + 1) / total) for w in self.vocab}

    def predict(self, text):
        ws = [w for w in words(text) if w in self.vocab]   # unseen words say nothing
        return max(self.labels, key=lambda y: (self.prior[y] + sum(self.logp[y][w] for w in ws), y))

    def accuracy(self, pairs):
        return sum(self.predict(t) == y for t, y in pairs) / len(pairs)


# ---------------------------------------------------------------- the splits

def split(pairs, seed):
    """(fit, valid, test): the shuffled file's last 20% held out, 10% of the rest nmt's
    validation lines."""
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    n_test = round(TEST_SHARE * len(pairs))
    train, test = order[n_test:], order[:n_test]
    n_valid = round(VALID_SHARE * len(train))
    return ([pairs[i] for i in train[n_valid:]], [pairs[i] for i in train[:n_valid]], [pairs[i] for i in test])


def nmt_run(work, name, config, seed, task, fit, valid, test, threads):
    """Trains config on fit (valid picks best.bin) and returns best.bin's accuracy on test."""
    d = os.path.join(work, f"{name}.{seed}.{task}")
    os.makedirs(d)
    files = {k: os.path.join(d, k + ".tsv") for k in ("fit", "valid", "test")}
    for k, pairs in (("fit", fit), ("valid", valid), ("test", test)):
        write_pairs(files[k], pairs)
    with open(os.path.join(ROOT, config), encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["data"].pop("valid_fraction", None)      # data.valid given: it does not apply
    cfg["data"].update({"train": files["fit"], "valid": files["valid"]})
    cfg.setdefault("train", {}).update({"seed": seed, "threads": threads})
    cfg["output"] = {"dir": f"{d}/run"}
    with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f)
    argv = [NMT, "train", os.path.join(d, "config.json"), "--quiet"]
    t0 = time.time()
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(argv)}: exit {p.returncode}\n{p.stderr}")
    wall = time.time() - t0
    p = subprocess.run([NMT, "eval", f"{d}/run/best.bin", files["test"], "--json", "--threads", str(threads)],
                       cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"nmt eval: exit {p.returncode}\n{p.stderr}")
    acc = json.loads(p.stdout)["accuracy"]
    shutil.rmtree(d)
    return acc, wall


# ---------------------------------------------------------------- measure

def measure(a):
    places = [os.path.normpath(os.path.join(ROOT, *up, "shared", "data", "sentiment")) for up in (("..",), ("..", ".."))]
    data = next((d for d in places if os.path.isdir(d)), None)
    if data is None:
        fail(f"no ../shared/data/sentiment (looked in {', '.join(places)})")
    corpus = {k: read_pairs(os.path.join(data, v)) for k, v in DOMAINS.items()}
    configs = [c.partition("=")[::2] for c in a.config] if a.config else [("sentiment", "configs/sentiment.json"),
                                                                           ("classifier", "configs/classifier.json")]
    work = tempfile.mkdtemp(prefix="nmt-nb-")
    t_start, started, load = time.time(), datetime.datetime.utcnow(), os.getloadavg()
    runs = []
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for seed in range(1, a.seeds + 1):
            parts = {k: split(v, seed) for k, v in corpus.items()}
            for src, dst in TASKS:
                fit, valid, test = parts[src]
                if dst != src:
                    test = corpus[dst]          # every line of the other file
                rec = {"seed": seed, "train": src, "test": dst, "fit_lines": len(fit), "valid_lines": len(valid),
                       "test_lines": len(test), "naive_bayes": round(NaiveBayes(fit).accuracy(test), 4)}
                runs.append(rec)
                for name, config in configs:
                    jobs.append((rec, name, pool.submit(nmt_run, work, name, config, seed, f"{src}-{dst}", fit,
                                                        valid, test, a.threads)))
        for rec, name, fut in jobs:
            acc, wall = fut.result()
            rec[name] = round(acc, 4)
            rec[name + "_wall_s"] = round(wall, 1)
            print(f"  seed {rec['seed']} {rec['train']} -> {rec['test']}: naive Bayes {rec['naive_bayes']:.3f}, "
                  f"{name} {acc:.3f}", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    commit, dirty, machine = provenance(["src", "scripts", "configs"], load)
    raw = {"script": "scripts/bench/naive_bayes.py" + (" " + " ".join(a.argv) if a.argv else ""),
           "provenance": "measured", "date": f"{started:%Y-%m-%d %H:%M} UTC", "commit": commit,
           "src_modified": dirty, "machine": machine, "seeds": a.seeds, "threads": a.threads,
           "configs": [{"name": n, "path": c} for n, c in configs], "test_share": TEST_SHARE,
           "valid_share": VALID_SHARE, "runs": runs, "minutes": round((time.time() - t_start) / 60, 1)}
    with open(a.raw, "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=1)
        f.write("\n")
    print(render(raw, os.path.relpath(a.raw, ROOT)))


# ---------------------------------------------------------------- render

def mean_sd(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def render(raw, raw_file):
    names = [c["name"] for c in raw["configs"]]
    L = []
    w = L.append
    w("## The sentence classifier against naive Bayes")
    w("")
    w(f"Written by `{raw['script']}` on {raw['date']}; nmt at commit {raw['commit']}"
      f"{' (with uncommitted changes)' if raw['src_modified'] else ''}; {raw['minutes']:.1f} minutes. Rendered from "
      f"`{raw_file}` (`python3 scripts/bench/naive_bayes.py --render {raw_file}`).")
    w("")
    w(f"- Data: ../shared/data/sentiment's amazon and yelp files (1,000 sentences each, half positive). Per seed "
      f"(1 to {raw['seeds']}) each file is shuffled: {100 * raw['test_share']:.0f}% held out for testing, of the rest "
      f"{100 * raw['valid_share']:.0f}% nmt's validation lines (they choose best.bin) and the others the training "
      "lines, which both classifiers learn from. In-domain: test on the same file's held-out lines; cross-domain: "
      "train on one file, test on every line of the other.")
    w("- Naive Bayes: multinomial, over each sentence's distinct lowercased words, add-one smoothing "
      "(\"binarized\" NB, Wang & Manning 2012), in the script itself.")
    for c in raw["configs"]:
        w(f"- nmt **{c['name']}**: `{c['path']}`, best.bin scored by `nmt eval` ({raw['threads']} thread).")
    w(f"- Machine: {raw['machine']['cpu']}, {raw['machine']['cores']} cores.")
    w("")
    w("Accuracy on the test lines, mean ± sample standard deviation over the seeds:")
    w("")
    w("| train → test | lines (train / test) | naive Bayes | " + " | ".join(f"nmt {n}" for n in names) + " |")
    w("|---|---:|---:|" + "---:|" * len(names))
    summary = {}
    for src, dst in TASKS:
        rs = [r for r in raw["runs"] if r["train"] == src and r["test"] == dst]
        if not rs:
            continue
        cells = []
        for key in ["naive_bayes"] + names:
            m, s = mean_sd([r[key] for r in rs])
            summary[(src, dst, key)] = m
            cells.append(f"{100 * m:.1f}% ± {100 * s:.1f}")
        w(f"| {src} → {dst} | {rs[0]['fit_lines']} / {rs[0]['test_lines']} | " + " | ".join(cells) + " |")
    w("")
    for key in names:
        for kind, tasks in (("in-domain", TASKS[:2]), ("cross-domain", TASKS[2:])):
            nb = statistics.mean(summary[(s, d, "naive_bayes")] for s, d in tasks)
            mine = statistics.mean(summary[(s, d, key)] for s, d in tasks)
            w(f"- nmt {key}, {kind} mean {100 * mine:.1f}% against naive Bayes's {100 * nb:.1f}%: "
              + ("**at least as accurate**." if mine >= nb else f"**{100 * (nb - mine):.1f} points below**."))
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--config", action="append", metavar="NAME=CONFIG.json")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--raw", default=RAW)
    ap.add_argument("--render", metavar="RAW.json")
    a = ap.parse_args()
    # The command as recorded: without --raw and its value (where the figures went).
    argv, a.argv = sys.argv[1:], []
    while argv:
        x = argv.pop(0)
        if x == "--raw" and argv:
            argv.pop(0)
        elif not x.startswith("--raw="):
            a.argv.append(x)
    if a.render:
        with open(a.render, encoding="utf-8") as f:
            print(render(json.load(f), os.path.relpath(os.path.abspath(a.render), ROOT)))
        return
    measure(a)


if __name__ == "__main__":
    main()
