#!/usr/bin/env python3
"""compare_case.py — what true case costs: the same recipe trained with data.lowercase
false (nmt's default since 0.2: the model reads and writes case) and true (both sides
case-folded, as before), epoch by epoch, on the Tatoeba corpora in ../shared/data.

    python3 scripts/bench/compare_case.py [--corpora mar,swe,fra] [--epochs 4] [--seeds 1,2]
                                    [--cap fra=35000] [--out docs/bench/case.json]

Each run is configs/mar-reference.json with data.train set to the corpus (a seeded
random sample of --cap pairs where given, written under runs/case/), train.epochs, a
checkpoint at every epoch end (all kept), and data.lowercase false or true. Both
settings hold out the same validation pairs (the split depends on train.seed only).

Per epoch it reports, from train.log, the validation loss (each model's own units: the
cased model has more word types, so its per-token loss is not directly comparable) and
its validation BLEU as training scores it (cased against the references as written for
the true-case model; lowercased, case:lc, for the lowercased one), and, by `nmt eval
-lc` on that epoch's checkpoint, the case-insensitive BLEU of both models: the one figure
that compares them directly. Greedy decoding, the first 1000 validation pairs
(train.valid_bleu_max). The JSON holds every number and the commands; a Markdown table is
printed.
"""
import argparse
import datetime
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (provenance)

NMT = os.environ.get("NMT", "./nmt")


def run(cmd):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout


def corpus_file(name, cap, workdir):
    path = os.path.join("..", "shared", "data", name + ".txt")
    if not os.path.exists(path):
        path = os.path.join("..", "..", "shared", "data", name + ".txt")
    if not cap:
        return path
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    random.Random(1).shuffle(lines)
    out = os.path.join(workdir, "%s-%d.txt" % (name, cap))
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(lines[:cap])
    return out


def validations(log):
    rows = []
    with open(log, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if e.get("event") == "validation":
                rows.append(e)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default="mar,swe,fra")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--cap", action="append", default=["fra=35000"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="docs/bench/case.json")
    a = ap.parse_args()
    caps = dict((k, int(v)) for k, v in (c.split("=") for c in a.cap))
    workdir = os.path.join("runs", "case")
    os.makedirs(workdir, exist_ok=True)
    load_before = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    result = {"script": "scripts/bench/compare_case.py", "provenance": "measured",
              "date": f"{started:%Y-%m-%d %H:%M} UTC", "settings": vars(a), "corpora": []}
    for name in a.corpora.split(","):
        data = corpus_file(name, caps.get(name), workdir)
        entry = {"name": name, "path": data, "cap": caps.get(name), "runs": []}
        for seed in [int(s) for s in a.seeds.split(",")]:
            for lowercase in (False, True):
                d = os.path.join(workdir, "%s-seed%d-%s" % (name, seed, "lc" if lowercase else "cased"))
                cmd = [NMT, "train", "configs/mar-reference.json", "--quiet",
                       "--set", "data.train=" + data,
                       "--set", "data.lowercase=" + ("true" if lowercase else "false"),
                       "--set", "train.epochs=%d" % a.epochs, "--set", "train.seed=%d" % seed,
                       "--set", "train.threads=%d" % a.threads,
                       "--set", "train.keep_checkpoints=0", "--set", "output.dir=" + d]
                run(cmd)
                info = json.loads(run([NMT, "info", os.path.join(d, "model.bin"), "--json"]))
                vals = validations(os.path.join(d, "train.log"))
                epochs = []
                for v in vals:
                    ckpt = os.path.join(d, "checkpoint-%d.bin" % v["step"])
                    ev = json.loads(run([NMT, "eval", ckpt, os.path.join(d, "valid.tsv"), "--json", "-lc",
                                         "--threads", str(a.threads)]))
                    epochs.append({"epoch": v["epoch"], "step": v["step"], "valid_loss": v["valid_loss"],
                                   "valid_bleu": v["valid_bleu"], "bleu_lc_all": ev["bleu"],
                                   "bleu_lc_signature": ev.get("bleu_signature"), "elapsed": v["elapsed"]})
                entry["runs"].append({"seed": seed, "lowercase": lowercase, "dir": d,
                                      "src_vocab": info["src_vocab"], "tgt_vocab": info["tgt_vocab"],
                                      "parameters": info["parameters"], "command": cmd, "epochs": epochs})
        result["corpora"].append(entry)
        commit, dirty, machine = bench.provenance(["src", "scripts"], load_before)
        result.update({"commit": commit, "src_modified": dirty, "machine": machine})
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    print(table(result))


def table(result):
    out = ["| corpus | seed | epoch | case-insensitive BLEU, true case / lowercased | "
           "true-case model's cased BLEU | validation loss, true case / lowercased | "
           "vocabulary (source, target), true case / lowercased |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for c in result["corpora"]:
        by = {}
        for r in c["runs"]:
            by[(r["seed"], r["lowercase"])] = r
        for seed in sorted(set(s for s, _ in by)):
            tc, lc = by[(seed, False)], by[(seed, True)]
            for e_tc, e_lc in zip(tc["epochs"], lc["epochs"]):
                out.append("| %s | %d | %d | %.2f / %.2f | %.2f | %.3f / %.3f | %d, %d / %d, %d |" % (
                    c["name"], seed, e_tc["epoch"], e_tc["bleu_lc_all"], e_lc["bleu_lc_all"],
                    e_tc["valid_bleu"], e_tc["valid_loss"], e_lc["valid_loss"],
                    tc["src_vocab"], tc["tgt_vocab"], lc["src_vocab"], lc["tgt_vocab"]))
    return "\n".join(out)


if __name__ == "__main__":
    main()
