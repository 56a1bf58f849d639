"""kernel_spread.py — how far the worked example's figures move with the OpenBLAS kernel
and the thread count, which is what scripts/docs/tolerances.tsv's amounts rest on.

    python3 scripts/docs/kernel_spread.py      (trains the demo 4 times: about 12 minutes
                                                on 2 quiet cores; needs an AVX-512 CPU)

Trains configs/default.json (what `make demo` trains) under each setting below into
runs/kernel_spread/KERNEL-THREADS, and runs on each model what the documents' blocks run:
`nmt eval` greedy and with beam 5, the five data/examples.txt translations, `--nbest 2`
and `--align` of "I am hungry.", the attention example's sentence with beam 5, and a
greedy translation of all held-out sources. Prints a Markdown table, one row per
setting, then the largest difference between rows of each figure the worked example
and the translation examples show. A run directory whose model.bin is newer than
./nmt, the config and the data is reused, not trained again.

nmt's own loops sum in a fixed order, so a setting gives the same bits on any CPU that
can run its kernel; the rows differ because OpenBLAS's kernels and thread splits round
differently.
"""

import json
import os
import shutil
import subprocess
import sys

from docs import words_apart  # scripts/docs/docs.py, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SETTINGS = [("Cooperlake", 2), ("SkylakeX", 2), ("Haswell", 2), ("Cooperlake", 1)]
CONFIG = "configs/default.json"
SENTENCE = "I don't know where my keys are."


def nmt(args, kernel, stdin=None):
    env = dict(os.environ, OPENBLAS_CORETYPE=kernel)
    p = subprocess.run(["./nmt"] + args, input=stdin, capture_output=True, text=True, env=env, cwd=ROOT)
    if p.returncode != 0:
        sys.exit(f"kernel_spread.py: nmt {' '.join(args)} failed:\n{p.stderr}")
    return p.stdout, p.stderr


def fresh(run):
    """The run's model is newer than everything it was made from."""
    model = os.path.join(ROOT, run, "model.bin")
    if not os.path.exists(model):
        return False
    made = os.path.getmtime(model)
    return all(os.path.getmtime(os.path.join(ROOT, f)) < made for f in ("nmt", CONFIG, "data/mar.txt"))


def measure(kernel, threads):
    run = f"runs/kernel_spread/{kernel}-{threads}"
    if not fresh(run):
        print(f"kernel_spread.py: training {run}", file=sys.stderr, flush=True)
        shutil.rmtree(os.path.join(ROOT, run), ignore_errors=True)    # an unfinished run would be refused
        nmt(["train", CONFIG, "--quiet", "--set", f"train.threads={threads}", "--set", "train.workers=1",
             "--set", f"output.dir={run}"],
            kernel)
    model, valid = f"{run}/model.bin", f"{run}/valid.tsv"
    r = {"kernel": kernel, "threads": threads, "valid_loss": [], "valid_bleu": None, "train_loss": []}
    with open(os.path.join(ROOT, run, "train.log"), encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if "event" not in e and "loss" in e:
                r["train_loss"].append(e["loss"])
            if e.get("event") == "validation":
                r["valid_loss"].append(e["valid_loss"])
                r["valid_bleu"] = e.get("valid_bleu")
    r["eval"] = json.loads(nmt(["eval", model, valid, "--json"], kernel)[0])
    r["beam"] = json.loads(nmt(["eval", model, valid, "--json", "--beam", "5"], kernel)[0])
    with open(os.path.join(ROOT, "data", "examples.txt"), encoding="utf-8") as f:
        r["examples"] = nmt(["translate", model], kernel, f.read())[0].splitlines()
    nbest = [x.split(" ||| ") for x in nmt(["translate", model, "--nbest", "2"], kernel, "I am hungry.\n")[0].splitlines()]
    r["nbest"] = [float(x[2]) for x in nbest]
    r["nbest_text"] = [x[1] for x in nbest]
    r["align"] = nmt(["translate", model, "--align"], kernel, "I am hungry.\n")[0].strip()
    r["sentence"] = nmt(["translate", model, "--beam", "5"], kernel, SENTENCE + "\n")[0].strip()
    with open(os.path.join(ROOT, valid), encoding="utf-8") as f:
        sources = "".join(line.split("\t")[0] + "\n" for line in f if line.strip())
    r["held_out"] = nmt(["translate", model, "--batch", "64"], kernel, sources)[0].splitlines()
    return r


def translations(r, first):
    """The pairs of a row's translations and row 1's that the documents' blocks show."""
    return (list(zip(r["examples"], first["examples"])) + list(zip(r["nbest_text"], first["nbest_text"])) +
            [(r["sentence"], first["sentence"]), (r["align"].split(" ||| ")[0], first["align"].split(" ||| ")[0])])


def main():
    rows = [measure(k, t) for k, t in SETTINGS]
    first = rows[0]
    print("| OPENBLAS_CORETYPE | threads | validation loss, epochs 1-3 | validation BLEU | nmt eval: "
          "loss, BLEU, chrF2 | BLEU beam 5 | n-best scores of \"I am hungry.\" | examples.txt "
          "translations unlike row 1's | held-out greedy translations unlike row 1's | the attention "
          "example: words unlike row 1's |")
    print("|---|---:|---|---:|---|---:|---|---:|---:|---:|")
    for r in rows:
        e = r["eval"]
        held = sum(a != b for a, b in zip(r["held_out"], first["held_out"]))
        print(f"| {r['kernel']} | {r['threads']} | {', '.join(f'{x:.4f}' for x in r['valid_loss'])} | "
              f"{r['valid_bleu']:.2f} | {e['loss']:.4f}, {e['bleu']:.2f}, {e['chrf']:.2f} | "
              f"{r['beam']['bleu']:.2f} | {', '.join(f'{x:.6f}' for x in r['nbest'])} | "
              f"{sum(a != b for a, b in zip(r['examples'], first['examples']))} of {len(r['examples'])} | "
              f"{held} of {len(r['held_out'])} ({100 * held / len(r['held_out']):.0f}%) | "
              f"{words_apart(r['sentence'], first['sentence'])} |")

    def spread(f):
        xs = [f(r) for r in rows]
        return max(xs) - min(xs)
    print()
    print("Largest difference between the rows: validation loss "
          f"{max(spread(lambda r, i=i: r['valid_loss'][i]) for i in range(len(first['valid_loss']))):.4f}, "
          f"validation BLEU {spread(lambda r: r['valid_bleu']):.2f}, "
          f"training loss (of a log line) "
          f"{max(spread(lambda r, i=i: r['train_loss'][i]) for i in range(len(first['train_loss']))):.4f}, "
          f"nmt eval loss {spread(lambda r: r['eval']['loss']):.4f}, "
          f"perplexity {100 * spread(lambda r: r['eval']['perplexity']) / first['eval']['perplexity']:.2f}%, "
          f"BLEU {spread(lambda r: r['eval']['bleu']):.2f}, "
          f"chrF2 {spread(lambda r: r['eval']['chrf']):.2f}, "
          f"BLEU beam 5 {spread(lambda r: r['beam']['bleu']):.2f}, "
          f"BLEU n-gram precision {max(spread(lambda r, i=i: r['eval']['bleu_precisions'][i]) for i in range(4)):.2f}, "
          f"brevity penalty {spread(lambda r: r['eval']['bleu_bp']):.3f}, "
          f"length ratio {spread(lambda r: r['eval']['bleu_ratio']):.3f}, "
          f"hypothesis length {100 * spread(lambda r: r['eval']['hyp_len']) / first['eval']['hyp_len']:.2f}%, "
          f"n-best scores {max(spread(lambda r, i=i: r['nbest'][i]) for i in range(2)):.3f}; "
          f"a translation (examples.txt, the n-best lists, the attention example and the alignment's) "
          f"{max(words_apart(a, b) for r in rows for a, b in translations(r, first))} words at most "
          f"(insertions, deletions, replacements); the alignment of \"I am hungry.\" "
          f"{max(words_apart(r['align'].split(' ||| ')[1], first['align'].split(' ||| ')[1]) for r in rows)} "
          "pairs at most.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
