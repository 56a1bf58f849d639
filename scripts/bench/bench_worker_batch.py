"""bench_worker_batch.py — what batch to give many training workers (issue 30): the speed
and the time to quality of `nmt train` with train.workers N, when N workers split a
batch of 64 and when each has a batch of 64 of its own (batch_size 64 N), against one.

    python3 scripts/bench/bench_worker_batch.py [--workers N] [--steps 40] [--minutes 1]
            [--recipes 64:0.001:500,1024:0.004:32] [--no-speed] [--no-quality] [--out RAW]
    python3 scripts/bench/bench_worker_batch.py --render RAW

Speed: target tokens/s as bench_scaling.py measures it (its training jobs: data/mar.txt,
the GRU with embed 256 and hidden 512, and configs/transformer.json; --steps updates,
the median of train.log's windows of 10 after the first) with 1 worker and batch 64,
N workers (default: the cores) and batch 64, and N workers and batch 64 N. The last
is the same work per worker as one worker's, so it shows what the workers cost besides
their shards: the gradients' sum, the norm and Adam, once per update.

Time to quality (the Transformer): data/mar.txt's every 10th pair held out, the rest
trained on for --minutes of wall-clock time each (train.max_minutes: the clock runs
from the first update, validations on the held-out pairs at each epoch's end
included), by one worker with the shipped recipe (batch 64, learning rate 0.001,
500 warm-up updates), then by N workers with each of --recipes (BATCH:LEARNING_RATE:
WARMUP, inverse square-root schedule as configs/transformer.json). Each run's best.bin
(the lowest held-out loss) is scored by `nmt eval --json` on the held-out pairs, greedy:
BLEU, chrF2 and the loss. A bigger batch is fewer updates an epoch; whether it pays is
what the minutes say.

Writes RAW (default docs/bench/worker-batch.json) and prints its rendering; --render RAW
prints that and measures nothing. NMT_BENCH_COMMIT names the commit where the tree has
no git.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_scaling import BATCH, MODELS, NMT, ROOT, cores, cpu_model, git, load_average, print_rendered, require_nmt, \
    run, train_argv, train_log_tokens_per_s

RAW = os.path.join(ROOT, "docs", "bench", "worker-batch.json")
SHIPPED = (64, 0.001, 500)  # configs/transformer.json's batch, learning rate and warm-up


def parse_recipes(text):
    recipes = []
    for item in text.split(","):
        try:
            b, lr, w = item.split(":")
            recipes.append((int(b), float(lr), int(w)))
        except ValueError:
            sys.exit(f"bench_worker_batch.py: --recipes: {item!r} is not BATCH:LEARNING_RATE:WARMUP")
    return recipes


def speed(args, tmp):
    """tokens/s of each model and setting: {model: {setting: tokens/s}}."""
    out = os.path.join(tmp, "speed")
    settings = {"1 x 64": (1, BATCH), f"{args.workers} x 64 split": (args.workers, BATCH),
                f"{args.workers} x 64 each": (args.workers, BATCH * args.workers)}
    result = {}
    for name in MODELS:
        result[name] = {}
        for label, (workers, batch) in settings.items():
            shutil.rmtree(out, ignore_errors=True)
            run(train_argv(NMT, name, args.steps, workers, 1, out) + ["--set", f"train.batch_size={batch}"],
                cwd=ROOT)
            result[name][label] = {"workers": workers, "batch": batch, "tokens_per_s": train_log_tokens_per_s(out)}
            print(f"speed {name} {label}: {result[name][label]['tokens_per_s']:,.0f} tokens/s", flush=True)
    shutil.rmtree(out, ignore_errors=True)
    return result


def split_data(tmp):
    """data/mar.txt's every 10th line held out; returns the paths of the Transformer's
    config for the rest (configs/transformer.json with data.train and data.valid
    those) and of the held-out pairs."""
    train, held = os.path.join(tmp, "train.tsv"), os.path.join(tmp, "heldout.tsv")
    with open(os.path.join(ROOT, "data", "mar.txt"), encoding="utf-8") as f, \
            open(train, "w", encoding="utf-8") as t, open(held, "w", encoding="utf-8") as h:
        for i, line in enumerate(f, 1):
            (h if i % 10 == 0 else t).write(line)
    with open(os.path.join(ROOT, "configs", "transformer.json"), encoding="utf-8") as f:
        config = json.load(f)
    config["data"].pop("valid_fraction", None)
    config["data"].update({"train": train, "valid": held})
    path = os.path.join(tmp, "transformer.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f)
    return path, held


def quality_run(args, tmp, config, held, workers, recipe):
    batch, lr, warmup = recipe
    out = os.path.join(tmp, f"q{workers}_{batch}")
    shutil.rmtree(out, ignore_errors=True)
    sets = [f"train.workers={workers}", "train.threads=1",
            f"train.batch_size={batch}", f"train.learning_rate={lr}", f"train.warmup_steps={warmup}",
            "train.epochs=1000", f"train.max_minutes={args.minutes}", "train.valid_bleu_max=0",
            "train.checkpoint_every=0", f"output.dir={out}"]
    argv = [NMT, "train", config]
    for kv in sets:
        argv += ["--set", kv]
    run(argv, cwd=ROOT)
    steps = epochs = 0
    validations = []  # (seconds since the first update, update, held-out loss) at each
    with open(os.path.join(out, "train.log"), encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            if "step" in e:
                steps, epochs = max(steps, e["step"]), max(epochs, e.get("epoch", 0))
            if e.get("event") == "validation":
                validations.append((e["elapsed"], e["step"], e["valid_loss"]))
    r = run([NMT, "eval", os.path.join(out, "best.bin"), held, "--json", "--workers", str(args.workers)])
    score = json.loads(r.stdout)
    shutil.rmtree(out, ignore_errors=True)
    row = {"workers": workers, "batch": batch, "learning_rate": lr, "warmup": warmup, "updates": steps,
           "epochs": epochs, "bleu": score["bleu"], "chrf": score["chrf"], "loss": score["loss"],
           "validations": validations}
    print(f"quality {workers} workers {recipe}: {row['updates']} updates, {row['epochs']} epochs, loss "
          f"{row['loss']:.3f}, BLEU {row['bleu']:.2f}", flush=True)
    return row


def quality(args, tmp):
    config, held = split_data(tmp)
    rows = [quality_run(args, tmp, config, held, 1, SHIPPED)]
    for recipe in args.recipes:
        rows.append(quality_run(args, tmp, config, held, args.workers, recipe))
    return rows


def render(raw):
    m, w = raw["run"], raw["settings"]["workers"]
    L = []
    if raw.get("speed"):
        labels = list(next(iter(raw["speed"].values())))  # 1 x 64, N x 64 split, N x 64 each
        L += [f"| model | 1 worker, batch 64 | {w} workers splitting a batch of 64 | {w} workers, 64 pairs each |",
              "|---|---:|---:|---:|"]
        for name, s in raw["speed"].items():
            one = s[labels[0]]["tokens_per_s"]
            cells = [f"{s[lab]['tokens_per_s']:,.0f}" + ("" if i == 0 else f" ({s[lab]['tokens_per_s'] / one:.2f}x)")
                     for i, lab in enumerate(labels)]
            L.append(f"| {MODELS[name]['title'].split(' (')[0]} | " + " | ".join(cells) + " |")
        L += ["", f"Training target tokens/s, {raw['settings']['steps']} updates a run (the median of train.log's "
              f"windows of 10 updates after the first), one OpenBLAS thread a worker; 64 pairs each: "
              f"batch_size {BATCH * w}.", ""]
    if raw.get("quality"):
        L += [f"| workers | batch | learning rate | warm-up | updates in {raw['settings']['minutes']:g} min | "
              "epochs | held-out loss | BLEU | chrF2 |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for q in raw["quality"]:
            L.append(f"| {q['workers']} | {q['batch']} | {q['learning_rate']:g} | {q['warmup']} | {q['updates']:,} | "
                     f"{q['epochs']} | {q['loss']:.3f} | {q['bleu']:.2f} | {q['chrf']:.2f} |")
        L += ["", f"The Transformer (configs/transformer.json) trained for {raw['settings']['minutes']:g} minutes of "
              f"wall-clock time (train.max_minutes, validations included) on data/mar.txt less its every 10th pair, "
              f"which are held out: best.bin (the lowest held-out loss at an epoch's end) scored on them by "
              f"`nmt eval --json`, greedy.", ""]
    L.append(f"`{m['script']}`, {m['date']}, commit {m['commit']}, on {m['cpu']}, {m['cores']} cores; load average "
             f"{m['load_before']:.2f} before, {m['load_after']:.2f} after; `{raw['file']}`.")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=cores())
    ap.add_argument("--steps", type=int, default=40, help="updates a speed run")
    ap.add_argument("--minutes", type=float, default=1.0, help="training time of a quality run")
    ap.add_argument("--recipes", default="64:0.001:500,1024:0.004:32",
                    help="BATCH:LEARNING_RATE:WARMUP,... trained by the N workers for --minutes")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--out", metavar="RAW", default=RAW)
    ap.add_argument("--render", metavar="RAW")
    args = ap.parse_args()
    if args.render:
        print_rendered(args.render, render)
        return 0
    require_nmt("bench_worker_batch.py")
    args.recipes = parse_recipes(args.recipes)
    argv = " ".join(["python3 scripts/bench/bench_worker_batch.py"] + sys.argv[1:])
    load_before = load_average()
    tmp = tempfile.mkdtemp(prefix="nmt_bench_worker_batch_")
    try:
        result_speed = None if args.no_speed else speed(args, tmp)
        result_quality = None if args.no_quality else quality(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    path = os.path.abspath(args.out)
    raw = {"run": {"script": argv, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "commit": os.environ.get("NMT_BENCH_COMMIT") or git("rev-parse", "--short", "HEAD") or "unknown",
                   "cpu": cpu_model(), "cores": cores(), "load_before": load_before, "load_after": load_average()},
           "settings": {"workers": args.workers, "steps": args.steps, "minutes": args.minutes,
                        "recipes": args.recipes},
           "speed": result_speed, "quality": result_quality,
           "file": os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else os.path.basename(path)}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=1)
        f.write("\n")
    print(render(raw))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
