"""sentiment_experiment.py -- nmt's sentence classifier against a published Keras result.

The seed experiment (a Keras demonstration of attention pooling): the UCI "Sentiment
Labelled Sentences" amazon + yelp files merged (data/sentiment.tsv, 2,000 sentences), an
80/20 train/validation split, embeddings of 32, an LSTM of 100, dropout 0.2, Adam, 10
epochs. It reports 77% validation accuracy from the last LSTM state and 81.25% with
attention pooling. configs/sentiment.json is that setting for nmt.

This script trains each setting below (configs/sentiment.json plus `--set` overrides)
once per seed (train.seed 1..--seeds; the seed also draws nmt's 80/20 split), each run in
its own directory under --work, and reads train.log: the accuracy of the last validation
(the final epoch), the best validation accuracy and its epoch, the final validation loss,
and the wall time of the `nmt train` process. It writes every run, the per-setting
summary (mean, sample sd, min, max over seeds), the machine and the reference numbers to
docs/bench/sentiment.json, and prints a markdown table.

Run from anywhere (relative defaults are the repository's; build ./nmt first):

    python3 scripts/bench/sentiment_experiment.py                  # 5 seeds, one run at a time
    python3 scripts/bench/sentiment_experiment.py --jobs 2 --seeds 10 --keep --work /tmp/sent

Each run gets train.threads=--threads (default 1) so that wall times compare; with
--jobs N, N runs share the machine. Any failed run stops everything (exit status 1).
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]   # scripts/bench/ is two levels down

# name -> `--set` overrides on top of --config. The first two are the seed experiment's.
SETTINGS = [
    ("attention", []),
    ("last", ["model.pooling=last"]),
]
# nmt's best setting(s): edit freely, same form as SETTINGS.
EXTRA_SETTINGS = [
    ("attention_lr0.001", ["train.learning_rate=0.001"]),   # the config before tuning the step size
    ("bi_attention", ["model.bidirectional=true", "model.hidden=200"]),   # 100 units per direction
    ("mean", ["model.pooling=mean"]),
    ("max", ["model.pooling=max"]),
]

# The Keras demonstration's validation accuracy, percent, by setting name.
REFERENCE = {"source": "Keras demonstration, amazon+yelp, 80/20, embed 32, LSTM 100, "
                       "dropout 0.2, Adam, 10 epochs",
             "last": 77.0, "attention": 81.25}


class RunFailed(Exception):
    pass


def train_one(nmt, config, work, threads, name, overrides, seed):
    """Trains one setting with one seed; returns the run's record."""
    out = Path(work) / f"{name}-seed{seed}"
    out.mkdir(parents=True)
    sets = [f"train.seed={seed}", f"train.threads={threads}", *overrides, f"output.dir={out}"]
    cmd = [nmt, "train", config] + [a for s in sets for a in ("--set", s)] + ["--quiet"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise RunFailed(f"{name} seed {seed}: exit status {proc.returncode}\n"
                        f"  command: {shlex.join(cmd)}\n  stderr tail:\n{tail}")
    log = out / "train.log"
    vals = [json.loads(line) for line in log.read_text().splitlines()
            if line.strip() and '"validation"' in line]
    vals = [v for v in vals if v.get("event") == "validation"]
    if not vals:
        raise RunFailed(f"{name} seed {seed}: no validation line in {log}")
    best = max(vals, key=lambda v: v["valid_accuracy"])  # the first epoch of the max
    last = vals[-1]
    return {"setting": name, "seed": seed, "overrides": overrides, "command": shlex.join(cmd),
            "final_accuracy": 100 * last["valid_accuracy"], "final_epoch": last["epoch"],
            "final_valid_loss": last["valid_loss"],
            "best_accuracy": 100 * best["valid_accuracy"], "best_epoch": best["epoch"],
            "accuracy_by_epoch": [100 * v["valid_accuracy"] for v in vals],
            "wall_seconds": round(wall, 3)}


def summarise(runs):
    acc = [r["final_accuracy"] for r in runs]
    return {"runs": len(runs),
            "final_accuracy_mean": statistics.mean(acc),
            "final_accuracy_sd": statistics.stdev(acc) if len(acc) > 1 else 0.0,
            "final_accuracy_min": min(acc), "final_accuracy_max": max(acc),
            "best_accuracy_mean": statistics.mean(r["best_accuracy"] for r in runs),
            "final_valid_loss_mean": statistics.mean(r["final_valid_loss"] for r in runs),
            "wall_seconds_mean": statistics.mean(r["wall_seconds"] for r in runs)}


def machine(nmt):
    info = {"cpu": None, "cores": os.cpu_count(), "avx512f": None}
    try:
        text = Path("/proc/cpuinfo").read_text()
        for line in text.splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and info["cpu"] is None:
                info["cpu"] = value.strip()
            if key.strip() == "flags" and info["avx512f"] is None:
                info["avx512f"] = "avx512f" in value.split()
    except OSError:
        pass
    ver = subprocess.run([nmt, "--version"], capture_output=True, text=True)
    info["nmt_version"] = (ver.stdout or ver.stderr).strip()
    info["nmt_sha256"] = hashlib.sha256(Path(nmt).read_bytes()).hexdigest()
    info["python"] = sys.version.split()[0]
    info["date"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    return info


def table(settings, summary):
    lines = ["| setting | final val. accuracy % mean ± sd (min–max) "
             "| best-epoch accuracy % mean | seconds per run |",
             "|---|---|---|---|"]
    for name, overrides in settings:
        s = summary[name]
        label = name + (f" (`{' '.join(overrides)}`)" if overrides else "")
        lines.append(f"| {label} | {s['final_accuracy_mean']:.2f} ± {s['final_accuracy_sd']:.2f} "
                     f"({s['final_accuracy_min']:.2f}–{s['final_accuracy_max']:.2f}) "
                     f"| {s['best_accuracy_mean']:.2f} | {s['wall_seconds_mean']:.2f} |")
    ref = ", ".join(f"{k} {REFERENCE[k]:g}% (here {summary[k]['final_accuracy_mean']:.2f}%, "
                    f"{summary[k]['final_accuracy_mean'] - REFERENCE[k]:+.2f})"
                    for k in ("last", "attention") if k in summary)
    return "\n".join(lines) + f"\n\nSeed experiment (Keras, one run): {ref}."


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5, help="train.seed 1..N (default 5)")
    ap.add_argument("--nmt", default=str(REPO / "nmt"), help="nmt binary (default ./nmt)")
    ap.add_argument("--config", default=str(REPO / "configs/sentiment.json"))
    ap.add_argument("--threads", type=int, default=1, help="train.threads of each run")
    ap.add_argument("--jobs", type=int, default=1, help="trainings at once (default 1)")
    ap.add_argument("--work", help="directory for the runs (default: a new temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep --work afterwards")
    ap.add_argument("--out", default=str(REPO / "docs/bench/sentiment.json"))
    args = ap.parse_args()
    if args.seeds < 1 or args.jobs < 1:
        ap.error("--seeds and --jobs must be at least 1")
    nmt, config = os.path.abspath(args.nmt), os.path.abspath(args.config)
    for path in (nmt, config):
        if not os.path.isfile(path):
            sys.exit(f"sentiment_experiment: {path} not found (build nmt with `make`)")
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="sentiment-")
    os.makedirs(work, exist_ok=True)
    settings = SETTINGS + EXTRA_SETTINGS
    info = machine(nmt)
    jobs = [(name, ov, seed) for name, ov in settings for seed in range(1, args.seeds + 1)]
    print(f"{len(jobs)} runs ({len(settings)} settings x {args.seeds} seeds), "
          f"{args.jobs} at a time, in {work}", file=sys.stderr)
    start = time.perf_counter()
    runs = []
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(train_one, nmt, config, work, args.threads, *j) for j in jobs]
            try:
                for fut in concurrent.futures.as_completed(futures):
                    r = fut.result()
                    runs.append(r)
                    print(f"  {r['setting']:>14} seed {r['seed']}: {r['final_accuracy']:.2f}% "
                          f"(best {r['best_accuracy']:.2f}% at epoch {r['best_epoch']}), "
                          f"{r['wall_seconds']:.1f} s", file=sys.stderr)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    except RunFailed as e:
        sys.exit(f"sentiment_experiment: training failed: {e}\n(runs kept in {work})")
    total = time.perf_counter() - start
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    order = {(n, s): i for i, (n, _, s) in enumerate(jobs)}
    runs.sort(key=lambda r: order[(r["setting"], r["seed"])])
    summary = {name: summarise([r for r in runs if r["setting"] == name]) for name, _ in settings}
    if hashlib.sha256(Path(nmt).read_bytes()).hexdigest() != info["nmt_sha256"]:
        print("warning: the nmt binary changed during the experiment", file=sys.stderr)
        info["nmt_changed_during_run"] = True
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    result = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
              "script": "scripts/bench/sentiment_experiment.py " + " ".join(sys.argv[1:]), "provenance": "measured",
              "command": shlex.join(getattr(sys, "orig_argv", [sys.executable] + sys.argv)),
              "cwd": os.getcwd(), "config": os.path.relpath(config, REPO),
              "seeds": list(range(1, args.seeds + 1)), "threads": args.threads,
              "jobs": args.jobs, "total_seconds": round(total, 1), "machine": info,
              "reference": REFERENCE,
              "settings": [{"name": n, "overrides": ov, **summary[n]} for n, ov in settings],
              "runs": runs}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(table(settings, summary))
    print(f"\n{len(runs)} runs in {total:.1f} s on {info['cpu']} ({info['cores']} cores), "
          f"{info['nmt_version']}; written to {args.out}")


if __name__ == "__main__":
    main()
