"""wall_budget.py — what the shipped configs give after a few minutes of wall-clock
training on this machine's cores (issue 29's first target: at 5 minutes on 2 cores, the
Transformer recipe against the recurrent default).

recipes.py measures quality per CPU minute on 1 thread, which hardly depends on the
machine's load. This script measures what a user gets: `nmt train CONFIG` with
train.max_minutes M (the elapsed time train.log counts: updates, validations and
checkpoints; reading the data before and the last validation after come on top) and
train.workers W, on ../shared/data's corpora (each whole; nmt's own split, the config's
valid_fraction). train.epochs is raised to 100 so that the budget, not the config's
epoch count, ends every run; the figures at the config's own epoch count ("as shipped")
are the validation after that epoch, which a run stopped there would have had (a
constant or warm-up schedule does not look at the epoch count). Nothing else runs meanwhile:
wall time is the point, so the load average before and after each run is recorded.

    python3 scripts/bench/wall_budget.py run     --work DIR [--minutes 5] [--workers 2]
                                                 [--corpora mar swe fra] [--config configs/X.json ...]
                                                 [--set KEY=VALUE ... --label NAME]
    python3 scripts/bench/wall_budget.py collect --work DIR [DIR ...] [--raw docs/bench/wall_budget.json]
    python3 scripts/bench/wall_budget.py render  docs/bench/wall_budget.json

Standard library only.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from bench_common import provenance  # noqa: E402
from recipes import data_dir, log_events  # noqa: E402

NMT = os.environ.get("NMT", os.path.join(ROOT, "nmt"))
RAW = os.path.join(ROOT, "docs", "bench", "wall_budget.json")
CONFIGS = ("configs/default.json", "configs/transformer-quick.json")
CORPORA = ("mar", "swe", "fra")


def fail(msg):
    sys.exit(f"wall_budget.py: {msg}")


def run_name(corpus, config, label=None):
    return f"{corpus}-{os.path.splitext(os.path.basename(config))[0]}" + (f"-{label}" if label else "")


def argv_of(config, corpus, minutes, workers, out, sets=()):
    argv = [NMT, "train", config, "--quiet", "--set", f"data.train={os.path.join(data_dir(), corpus + '.txt')}",
            "--set", f"train.max_minutes={minutes:g}", "--set", f"train.workers={workers}",
            "--set", "train.epochs=100", "--set", f"output.dir={out}"]
    for kv in sets:
        argv += ["--set", kv]
    return argv


def run(args):
    os.makedirs(args.work, exist_ok=True)
    for corpus in args.corpora:
        for config in args.config:
            out = os.path.join(args.work, run_name(corpus, config, args.label))
            if os.path.exists(out):
                fail(f"{out} exists: a run of its own is kept there (another --work, or remove it)")
            argv = argv_of(config, corpus, args.minutes, args.workers, out, args.set)
            load_before = os.getloadavg()[0]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode != 0:
                fail(f"{' '.join(argv)} failed (exit {proc.returncode}):\n{proc.stderr}")
            record = {"argv": [os.path.relpath(a, ROOT) if a.startswith(ROOT) else a for a in argv],
                      "commit": provenance([NMT], (load_before,))[0],
                      "config": config, "sets": args.set, "corpus": corpus, "minutes": args.minutes,
                      "workers": args.workers,
                      "wall_s": round(wall, 1), "load_before": round(load_before, 2),
                      "load_after": round(os.getloadavg()[0], 2),
                      "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1)}
            with open(os.path.join(out, "wall_budget.run.json"), "w") as f:
                json.dump(record, f, indent=1)
            print(f"{run_name(corpus, config)}: {wall:.0f} s", flush=True)


def validations(run_dir):
    events = log_events(os.path.join(run_dir, "train.log"))
    ends = {e["step"] for e in events if e.get("event") == "epoch"}
    keys = ("step", "epoch", "elapsed", "valid_loss", "valid_bleu")
    return [dict({k: e.get(k) for k in keys}, epoch_end=e["step"] in ends)
            for e in events if e.get("event") == "validation"]


def collect(args):
    runs = []
    for work in args.work:
        for name in sorted(os.listdir(work)):
            meta = os.path.join(work, name, "wall_budget.run.json")
            if not os.path.exists(meta):
                continue
            with open(meta) as f:
                record = json.load(f)
            with open(os.path.join(ROOT, record["config"])) as f:
                record["shipped_epochs"] = json.load(f)["train"].get("epochs", 10)
            record["validations"] = validations(os.path.join(work, name))
            runs.append(record)
    runs.sort(key=lambda r: (r["corpus"], r["config"], r.get("sets", [])))
    if not runs:
        fail(f"no runs in {args.work}")
    commit, dirty, machine = provenance([NMT], (os.getloadavg()[0],))
    raw = {"script": "scripts/bench/wall_budget.py", "provenance": "measured",
           "date": time.strftime("%Y-%m-%d"), "commit": commit + ("+changes" if dirty else ""),
           "machine": machine, "nmt": os.path.relpath(NMT, ROOT) if NMT.startswith(ROOT) else NMT,
           "runs": runs}
    with open(args.raw, "w") as f:
        json.dump(raw, f, indent=1)
        f.write("\n")
    print(f"wrote {args.raw}: {len(runs)} runs")


def fmt_bleu(v):
    return "–" if v is None else f"{v['valid_bleu']:.1f}"


def shown(r):
    """The config and the --set values of the run beyond the budget's."""
    return f"`{r['config']}`" + "".join(f", `{kv}`" for kv in r.get("sets", []))


def render(args):
    with open(args.raw) as f:
        raw = json.load(f)
    m = raw["machine"]
    minutes = {r["minutes"] for r in raw["runs"]}
    workers = {r["workers"] for r in raw["runs"]}
    L = [f"`python3 scripts/bench/wall_budget.py run --work DIR --minutes {'/'.join(f'{x:g}' for x in sorted(minutes))}"
         f" --workers {'/'.join(str(w) for w in sorted(workers))}`, then `collect`; nmt at commit"
         f" {', '.join(sorted({r.get('commit', raw['commit']) for r in raw['runs']}))}."
         f" Machine: {m['cpu']}, {m['cores']} cores ({', '.join(m['flags'])}); one run at a time, nothing"
         f" else running." + "".join(f" {note[0].upper()}{note[1:]}." for note in
                                       sorted({r["note"] for r in raw["runs"] if r.get("note")})),
         "",
         "| corpus | config | as shipped: epochs, minutes, BLEU | after the budget: epochs, updates, minutes,"
         " validation loss, BLEU | best BLEU within the budget | wall s (whole run) |",
         "|---|---|---|---|---:|---:|"]
    for r in raw["runs"]:
        v = r["validations"]
        shipped = next((x for x in v if x["epoch"] == r["shipped_epochs"] and x["epoch_end"]), None)
        last = v[-1] if v else None
        within = [x for x in v if x["valid_bleu"] is not None]
        best = max(within, key=lambda x: x["valid_bleu"]) if within else None
        ship = (f"{r['shipped_epochs']}, {shipped['elapsed'] / 60:.1f}, {fmt_bleu(shipped)}" if shipped
                else f"{r['shipped_epochs']}: not reached")
        partial = "" if last and last["epoch_end"] else " (partial)"
        after = (f"{last['epoch']}{partial}, {last['step']:,}, {last['elapsed'] / 60:.1f}, "
                 f"{last['valid_loss']:.3f}, **{fmt_bleu(last)}**" if last else "–")
        L.append(f"| {r['corpus']} | {shown(r)} | {ship} | {after} | {fmt_bleu(best)} | {r['wall_s']:.0f} |")
    L.append("")
    L.append("Epoch by epoch (minutes of `elapsed`, validation loss, BLEU):")
    L.append("")
    for r in raw["runs"]:
        cells = [f"{x['epoch']}{'' if x['epoch_end'] else ' (partial)'}: {x['elapsed'] / 60:.1f} min,"
                 f" {x['valid_loss']:.3f}, {fmt_bleu(x)}"
                 for x in r["validations"]]
        L.append(f"- {r['corpus']}, {shown(r)}: " + "; ".join(cells))
    print("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--work", required=True)
    r.add_argument("--minutes", type=float, default=5)
    r.add_argument("--workers", type=int, default=2)
    r.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    r.add_argument("--config", nargs="+", default=list(CONFIGS))
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="one more --set for every run (then --label names the runs)")
    r.add_argument("--label", help="added to the runs' directory names")
    c = sub.add_parser("collect")
    c.add_argument("--work", required=True, nargs="+")
    c.add_argument("--raw", default=RAW)
    d = sub.add_parser("render")
    d.add_argument("raw", nargs="?", default=RAW)
    args = ap.parse_args()
    if args.cmd == "run" and args.set and not args.label:
        ap.error("run --set needs --label (the runs' directories would be the plain runs')")
    {"run": run, "collect": collect, "render": render}[args.cmd](args)


if __name__ == "__main__":
    main()
