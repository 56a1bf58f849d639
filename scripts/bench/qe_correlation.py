"""qe_correlation.py — how well nmt's quality estimates rank bad translations (issue 32).

nmt translate --scores gives, besides log P(translation | source), Bergamot's
unsupervised quality estimate: a word's QE is the mean log-probability of its units, the
sentence's the mean of its words'. This script measures how well it tells good
translations from bad ones, on pairs the model never saw:

 1. for each corpus (../shared/data's mar.txt, swe.txt, fra.txt), trains the default
    recurrent model (configs/default.json: GRU 256, Bahdanau, 3 epochs; fra.txt capped
    at --max-pairs lines) unless OUT/LANG/model.bin exists; nmt holds out
    data.valid_fraction of the pairs (seed 1) and writes them to OUT/LANG/valid.tsv;
 2. translates the first --pairs held-out sources (greedy, and beam 5 with --nbest 1),
    with --scores: each line's LOGPROB, units, QE and the words' QE;
 3. scores each translation against its reference with sentence BLEU and sentence chrF2
    (`nmt score --sentence`, sacreBLEU's sentence_bleu and sentence_chrf);
 4. for each estimate, its Pearson and Spearman correlation with sentence BLEU and with
    sentence chrF, and how well it finds the bad translations: the worst quarter by
    sentence chrF counts as bad; AUC is the probability that a bad translation gets a
    lower estimate than a good one (0.5: no better than chance), and "bad in the lowest
    10%" the share of bad ones among the 10% of translations the estimate ranks lowest
    (chance: 25%).
The estimates compared: QE (the sentence's), the mean log-probability per unit
(LOGPROB / units, <eos> included), the minimum word QE, and the raw LOGPROB (which
falls with length, whatever the quality).

Writes --raw (every figure, with the machine, date, commit and command; default
docs/bench/qe.json) and prints BENCHMARKS.md's table, which --render prints again
from a raw file (BENCHMARKS.md's generated block). Deterministic: the same nmt and
data give the same figures; models already in OUT are reused.

    python3 scripts/bench/qe_correlation.py [--out runs/qe] [--raw FILE] [--pairs 1000] [--langs mar,swe,fra]
    python3 scripts/bench/qe_correlation.py --render docs/bench/qe.json

About 15 minutes a corpus on an idle 2-core machine (the training run; 25-30 minutes
on a busy one), a minute or two without it.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NMT = os.environ.get("NMT", os.path.join(ROOT, "nmt"))
# ../shared/data beside the checkout (a worktree one level deeper: ../../shared/data).
DATA = os.environ.get("NMT_SHARED_DATA") or next(
    (d for d in (os.path.join(ROOT, "..", "shared", "data"), os.path.join(ROOT, "..", "..", "shared", "data"))
     if os.path.isdir(d)), os.path.join(ROOT, "..", "shared", "data"))


def run(args, stdin=None):
    r = subprocess.run([NMT] + args, input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("nmt %s failed:\n%s" % (" ".join(args), r.stderr))
    return r.stdout


def train(lang, out, max_pairs):
    model = os.path.join(out, lang, "model.bin")
    if os.path.exists(model):
        return model
    os.makedirs(out, exist_ok=True)
    data = os.path.join(DATA, lang + ".txt")
    if max_pairs:
        capped = os.path.join(out, lang + "-capped.txt")
        with open(data, encoding="utf-8") as f, open(capped, "w", encoding="utf-8") as g:
            for i, line in enumerate(f):
                if i >= max_pairs:
                    break
                g.write(line)
        data = capped
    with open(os.path.join(ROOT, "configs", "default.json")) as f:
        config = json.load(f)
    config["data"]["train"] = data
    config["output"]["dir"] = os.path.join(out, lang)
    path = os.path.join(out, lang + ".json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    run(["train", "--quiet", path])
    return model


def rank(values):
    """Average ranks (ties share theirs), 1-based."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def pearson(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def spearman(x, y):
    return pearson(rank(x), rank(y))


def auc(estimate, bad):
    """P(a bad translation's estimate < a good one's), ties counting half."""
    r = rank(estimate)
    n_bad = sum(bad)
    n_good = len(bad) - n_bad
    if n_bad == 0 or n_good == 0:
        return float("nan")
    # Mann-Whitney: the good ones' rank sum against the bad ones'.
    good_ranks = sum(ri for ri, b in zip(r, bad) if not b)
    return (good_ranks - n_good * (n_good + 1) / 2) / (n_bad * n_good)


def lowest_share_bad(estimate, bad, share=0.10):
    n = max(1, int(round(len(estimate) * share)))
    order = sorted(range(len(estimate)), key=lambda i: (estimate[i], i))[:n]
    return sum(bad[i] for i in order) / n


def measure(lang, model, out, pairs, search):
    valid = os.path.join(out, lang, "valid.tsv")
    src, ref = [], []
    with open(valid, encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 2 and cols[0].strip() and cols[1].strip():
                src.append(cols[0])
                ref.append(cols[1])
            if len(src) == pairs:
                break
    nbest = run(["translate", model, "--nbest", "1", "--scores", "--batch", "32"] + search,
                stdin="\n".join(src) + "\n").splitlines()
    hyp, logprob, units, qe, min_word = [], [], [], [], []
    for line in nbest:
        fields = line.split(" ||| ")
        hyp.append(fields[1])
        feats = fields[2].split()
        logprob.append(float(feats[1]))
        qe.append(float(feats[3]))
        words = [float(v) for v in feats[5:]]
        min_word.append(min(words) if words else qe[-1])
    # The units each translation has (<eos> included): from the plain --scores output.
    plain = run(["translate", model, "--scores", "--batch", "32"] + search, stdin="\n".join(src) + "\n").splitlines()
    for line in plain:
        units.append(int(line.split("\t")[2]))
    hyp_path, ref_path = os.path.join(out, lang + "-hyp.txt"), os.path.join(out, lang + "-ref.txt")
    with open(hyp_path, "w", encoding="utf-8") as f:
        f.write("\n".join(hyp) + "\n")
    with open(ref_path, "w", encoding="utf-8") as f:
        f.write("\n".join(ref) + "\n")
    bleu, chrf = [], []
    for line in run(["score", ref_path, "-i", hyp_path, "--sentence"]).splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[1].startswith("BLEU = "):
            bleu.append(float(fields[1].split()[2]))
            chrf.append(float(fields[2].split()[2]))
    assert len(bleu) == len(hyp) == len(units), (len(bleu), len(hyp), len(units))
    cut = sorted(chrf)[len(chrf) // 4]
    bad = [c < cut for c in chrf]
    estimates = {
        "QE (mean over words)": qe,
        "log-probability per unit": [lp / u for lp, u in zip(logprob, units)],
        "lowest word QE": min_word,
        "log-probability (sum)": logprob,
    }
    result = {"pairs": len(hyp), "bad_below_chrf": cut, "estimates": {}}
    for name, est in estimates.items():
        result["estimates"][name] = {
            "pearson_bleu": pearson(est, bleu), "spearman_bleu": spearman(est, bleu),
            "pearson_chrf": pearson(est, chrf), "spearman_chrf": spearman(est, chrf),
            "auc_bad": auc(est, bad), "bad_in_lowest_10pct": lowest_share_bad(est, bad),
        }
    return result


def render(results):
    """BENCHMARKS.md's table, from a raw file's results."""
    lines = ["| corpus | search | estimate | Pearson (BLEU) | Spearman (BLEU) | Spearman (chrF) | AUC, bad | "
             "bad in lowest 10% |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for lang, by_search in results["langs"].items():
        for search, r in by_search.items():
            for name, e in r["estimates"].items():
                lines.append("| %s (%d pairs) | %s | %s | %.3f | %.3f | %.3f | %.3f | %.0f%% |" % (
                    lang, r["pairs"], search, name, e["pearson_bleu"], e["spearman_bleu"], e["spearman_chrf"],
                    e["auc_bad"], 100 * e["bad_in_lowest_10pct"]))
    m = results["machine"]
    lines.append("")
    lines.append("Measured %s at commit %s on %s (%d cores): `%s`." % (
        results["date"], results["commit"], m["cpu"], m["cores"], results["script"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "qe"))
    ap.add_argument("--raw", default=os.path.join(ROOT, "docs", "bench", "qe.json"))
    ap.add_argument("--render", metavar="FILE", help="print the table of a raw file, measuring nothing")
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--langs", default="mar,swe,fra")
    ap.add_argument("--max-pairs", type=int, default=40000, help="fra.txt's first N lines (0: all)")
    args = ap.parse_args()
    if args.render:
        with open(args.render, encoding="utf-8") as f:
            print(render(json.load(f)))
        return
    cpu = subprocess.run(["sh", "-c", "lscpu | grep 'Model name' | sed 's/.*: *//'"], capture_output=True,
                         text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    results = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
               "script": "python3 scripts/bench/qe_correlation.py " + " ".join(sys.argv[1:]),
               "provenance": "measured", "machine": {"cpu": cpu, "cores": os.cpu_count()},
               "pairs": args.pairs, "max_pairs": args.max_pairs, "langs": {}}
    for lang in args.langs.split(","):
        model = train(lang, args.out, args.max_pairs if lang == "fra" else 0)
        results["langs"][lang] = {"greedy": measure(lang, model, args.out, args.pairs, []),
                                  "beam 5": measure(lang, model, args.out, args.pairs, ["--beam", "5"])}
    with open(args.raw, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    print(render(results))


if __name__ == "__main__":
    main()
