"""extend_vocab.py — fine-tuning on new data with and without a growing vocabulary
(train.extend_vocab, issue 32).

A model fine-tuned on data whose words it never saw reads them as <unk>. This script
measures how much of the new data that is, and what growing the vocabularies does to the
translations of held-out new pairs:

 1. base: the default recurrent model (configs/default.json: GRU 256, Bahdanau) trained
    for 3 epochs on the first --base lines of fra.txt (the manythings files are sorted
    by English length: these are the short sentences);
 2. the new data: lines --new-from.. of the file (longer sentences, many new words),
    every 25th held out as the test set (data.valid of every run below, and the pairs
    scored at the end);
 3. fine-tuned for --epochs epochs on the new data from base (train.init_from), without
    and with train.extend_vocab (data.min_count 2: the new units seen twice or more); and,
    for reference, the same model trained from scratch on the new data alone;
 4. nmt eval of each on the test set: BLEU, chrF2 and the share of words that are <unk>
    on each side; and from the fine-tuning runs' own messages, the share of the new
    training data's units that are <unk> under the model's vocabularies, before and
    after growing them.

Writes --raw (every figure, with the machine, date, commit and command; default
docs/bench/extend_vocab.json) and prints BENCHMARKS.md's table, which --render prints
again from a raw file (BENCHMARKS.md's generated block). Epochs, not seconds, fix the
budget: the figures do not depend on the machine's speed. Runs already in OUT are
reused.

    python3 scripts/bench/extend_vocab.py [--out runs/extend_vocab] [--raw FILE]
    python3 scripts/bench/extend_vocab.py --render docs/bench/extend_vocab.json

About 20 minutes on an idle 2-core machine, 45 on a busy one.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NMT = os.environ.get("NMT", os.path.join(ROOT, "nmt"))
DATA = os.environ.get("NMT_SHARED_DATA") or next(
    (d for d in (os.path.join(ROOT, "..", "shared", "data"), os.path.join(ROOT, "..", "..", "shared", "data"))
     if os.path.isdir(d)), os.path.join(ROOT, "..", "shared", "data"))


def nmt(args):
    r = subprocess.run([NMT] + args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("nmt %s failed:\n%s" % (" ".join(args), r.stderr))
    return r


def write_config(path, config):
    with open(path, "w") as f:
        json.dump(config, f, indent=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "extend_vocab"))
    ap.add_argument("--corpus", default="fra.txt")
    ap.add_argument("--raw", default=os.path.join(ROOT, "docs", "bench", "extend_vocab.json"))
    ap.add_argument("--render", metavar="FILE", help="print the table of a raw file, measuring nothing")
    ap.add_argument("--base", type=int, default=20000, help="the base model's lines: the first N")
    ap.add_argument("--new-from", type=int, default=50001, help="the new data: this line on")
    ap.add_argument("--epochs", type=int, default=2, help="fine-tuning epochs")
    args = ap.parse_args()
    if args.render:
        with open(args.render, encoding="utf-8") as f:
            print(render(json.load(f)))
        return
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(DATA, args.corpus), encoding="utf-8") as f:
        lines = f.readlines()
    base, new = lines[:args.base], lines[args.new_from - 1:]
    files = {"base": base, "new-train": [l for i, l in enumerate(new) if i % 25 != 24],
             "new-test": [l for i, l in enumerate(new) if i % 25 == 24]}
    for name, ls in files.items():
        with open(os.path.join(args.out, name + ".tsv"), "w", encoding="utf-8") as f:
            f.writelines(ls)
    with open(os.path.join(ROOT, "configs", "default.json")) as f:
        default = json.load(f)
    path = lambda name: os.path.join(args.out, name)
    if not os.path.exists(path("base/model.bin")):
        cfg = json.loads(json.dumps(default))
        cfg["data"].update({"train": path("base.tsv"), "valid_fraction": 0.05})
        cfg["output"]["dir"] = path("base")
        write_config(path("base.json"), cfg)
        nmt(["train", "--quiet", path("base.json")])
    runs = {}
    for name, extra in (("fine-tuned", {}), ("fine-tuned, extend_vocab", {"extend_vocab": True}),
                        ("from scratch", None)):
        d = re.sub(r"[^a-z]+", "-", name).strip("-")
        if extra is None:
            cfg = json.loads(json.dumps(default))
            cfg["data"].update({"train": path("new-train.tsv"), "valid": path("new-test.tsv")})
            cfg["data"].pop("valid_fraction", None)
            cfg["train"]["epochs"] = args.epochs
        else:
            cfg = {"data": {"train": path("new-train.tsv"), "valid": path("new-test.tsv"), "min_count": 2},
                   "train": dict(default["train"], epochs=args.epochs, **extra)}
        cfg["output"] = {"dir": path(d)}
        write_config(path(d + ".json"), cfg)
        log = ""
        if not os.path.exists(path(d + "/model.bin")):
            train = ["train", path(d + ".json")] + (["--init-from", path("base/model.bin")] if extra is not None else [])
            log = nmt(train).stderr
            with open(path(d + ".log"), "w") as f:
                f.write(log)
        elif os.path.exists(path(d + ".log")):
            log = open(path(d + ".log")).read()
        r = {"eval": json.loads(nmt(["eval", path(d + "/model.bin"), path("new-test.tsv"), "--json"]).stdout)}
        info = nmt(["info", path(d + "/model.bin")]).stdout
        m = re.search(r"vocabularies: (\d+) source, (\d+) target", info)
        r["vocab"] = [int(m.group(1)), int(m.group(2))]
        m = re.search(r"source ([\d.]+)% -> ([\d.]+)%, target ([\d.]+)% -> ([\d.]+)%", log)
        if m:
            r["train_unk_before"] = [float(m.group(1)), float(m.group(3))]
            r["train_unk_after"] = [float(m.group(2)), float(m.group(4))]
        m = re.search(r"([\d.]+)% of the training source units and ([\d.]+)% of the target units are <unk>", log)
        if m:
            r["train_unk_before"] = r["train_unk_after"] = [float(m.group(1)), float(m.group(2))]
        runs[name] = r
    base_eval = json.loads(nmt(["eval", path("base/model.bin"), path("new-test.tsv"), "--json"]).stdout)
    cpu = subprocess.run(["sh", "-c", "lscpu | grep 'Model name' | sed 's/.*: *//'"], capture_output=True,
                         text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
           "script": "python3 scripts/bench/extend_vocab.py " + " ".join(sys.argv[1:]), "provenance": "measured",
           "machine": {"cpu": cpu, "cores": os.cpu_count()}, "corpus": args.corpus, "base_lines": args.base,
           "new_from": args.new_from, "epochs": args.epochs, "new_train_pairs": len(files["new-train"]),
           "test_pairs": len(files["new-test"]), "base": base_eval, "runs": runs}
    with open(args.raw, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(render(out))


def render(out):
    """BENCHMARKS.md's table, from a raw file."""
    base_eval = out["base"]
    lines = ["| model | vocabularies (source, target) | new training units <unk> (source, target) | "
             "test words <unk> (source, target) | BLEU | chrF2 |", "|---|---:|---:|---:|---:|---:|"]
    lines.append("| base (the short sentences only) | | | %.1f%%, %.1f%% | %.2f | %.2f |" % (
        100 * base_eval["unk_words"][0], 100 * base_eval["unk_words"][1], base_eval["bleu"], base_eval["chrf"]))
    for name, r in out["runs"].items():
        e = r["eval"]
        unk = r.get("train_unk_after")
        before = r.get("train_unk_before")
        cell = "" if not unk else ("%.1f%%, %.1f%%" % tuple(unk) if unk == before else
                                   "%.1f%% -> %.1f%%, %.1f%% -> %.1f%%" % (before[0], unk[0], before[1], unk[1]))
        lines.append("| %s | %d, %d | %s | %.1f%%, %.1f%% | %.2f | %.2f |" % (
            name, r["vocab"][0], r["vocab"][1], cell, 100 * e["unk_words"][0], 100 * e["unk_words"][1], e["bleu"],
            e["chrf"]))
    m = out["machine"]
    lines.append("")
    lines.append("%s: the base model on its first %d lines, the new data from line %d on (%d training pairs, %d "
                 "held out), %d epochs of fine-tuning. Measured %s at commit %s on %s (%d cores): `%s`." % (
                     out["corpus"], out["base_lines"], out["new_from"], out["new_train_pairs"], out["test_pairs"],
                     out["epochs"], out["date"], out["commit"], m["cpu"], m["cores"], out["script"]))
    return "\n".join(lines)

if __name__ == "__main__":
    main()
