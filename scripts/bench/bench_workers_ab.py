"""bench_workers_ab.py — two nmt binaries' training speed on workers, side by side (issue
30): target tokens/s of `nmt train` with train.workers N (one OpenBLAS thread each), the
training job of bench_scaling.py (data/mar.txt, batch 64; the GRU with embed 256 and
hidden 512, and configs/transformer.json), measured as it measures it (the median of
train.log's windows of 10 updates after the first).

    python3 scripts/bench/bench_workers_ab.py OLD_NMT NEW_NMT [--rounds 3] [--workers 1,2,CORES] [--steps 40]

Each round runs every setting in turn, the two binaries one after the other (their order
alternating round by round). Prints the CPU, one line a run (round, model, binary,
workers, tokens/s), then each setting's median over the rounds and NEW over OLD (the
median of the rounds' ratios). Writes only a temporary directory.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile

from bench_scaling import MODELS, ROOT, cores, cpu_model, load_average, run, train_argv, train_log_tokens_per_s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", default=f"1,2,{cores()}", help="comma-separated worker counts")
    ap.add_argument("--steps", type=int, default=40, help="updates a run")
    args = ap.parse_args()
    binaries = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    workers = [int(w) for w in args.workers.split(",")]
    print(f"CPU: {cpu_model()}, {cores()} cores; load average at the start {load_average():.2f}; "
          f"{args.rounds} rounds, {args.steps} updates a run", flush=True)
    tps = {}
    tmp = tempfile.mkdtemp(prefix="nmt_bench_ab_")
    out = os.path.join(tmp, "run")
    try:
        for r in range(1, args.rounds + 1):
            for name in MODELS:
                for w in workers:
                    for b in ("old", "new") if r % 2 else ("new", "old"):
                        shutil.rmtree(out, ignore_errors=True)
                        # From the root: the configs name data/mar.txt from there.
                        run(train_argv(binaries[b], name, args.steps, w, 1, out), cwd=ROOT)
                        tps[(name, w, b, r)] = train_log_tokens_per_s(out)
                        print(f"{r} {name} {b} {w} {tps[(name, w, b, r)]:.0f}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rounds = range(1, args.rounds + 1)
    print("| model | workers | old tokens/s | new tokens/s | new / old |")
    print("|---|---:|---:|---:|---:|")
    for name in MODELS:
        for w in workers:
            old = [tps[(name, w, "old", r)] for r in rounds]
            new = [tps[(name, w, "new", r)] for r in rounds]
            ratio = statistics.median(n / o for n, o in zip(new, old))
            print(f"| {name} | {w} | {statistics.median(old):,.0f} | {statistics.median(new):,.0f} | {ratio:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
