"""recipes.py — which recipe for which training budget, in CPU time (issue 29).

A person with B minutes of training wants the best translation B minutes give. This
script measures each recipe (a config) on ../shared/data's corpora (mar.txt, swe.txt,
fra.txt; fra.txt capped as scripts/bench/time_to_quality.py caps it) in two parts, neither
of which needs a quiet machine:

 1. Quality per update (`quality`). An update does the same arithmetic however loaded
    the machine is, so a recipe's validation figures at update N are the same on a
    shared machine as on a quiet one (to the bit, with the same thread count: 1 here).
    Each recipe trains to --steps updates (train.max_steps) with a validation every
    --every updates and at each epoch end: the loss per target unit over every held-out
    pair and the BLEU of greedy translations of up to 1,000 of them (train.log).
    --extend resumes a kept run to more updates (exactly as one longer run goes on).
 2. CPU time per update (`cost`). Runs of --short and --steps updates on 1 thread, each
    recipe's alternated with the others' (A B C, then C B A), the difference of their
    CPU time (user + system, getrusage of the child) over the difference of their
    updates: the median over the rounds. CPU time hardly depends on what else the
    machine runs (wall time does). The short run's CPU time less its updates' is the
    start-up (reading the data, learning BPE, building the model), reported apart.
 3. `collect` puts the results into docs/bench/recipes.json and `render` turns that into
    docs/bench-time-to-quality.md's section: a budget of B CPU minutes is B x 60 / (CPU seconds per
    update) updates; a recipe's figures at B are those of its last validation within
    them. Validations and the start-up are outside the budget (each recipe's start-up
    is listed). 1 thread: what 2 threads give depends on the neighbours.

The split is time_to_quality.py's (imported): the pairs nmt keeps (at most 20 words a
side), 10% held out with split seed 1, case kept (--lowercase: folded). BLEU is
sacreBLEU's 13a BLEU as nmt computes it, on the held-out (validation) pairs: nothing here
looks at a test set, and every recipe is chosen on these figures.

    python3 scripts/bench/recipes.py split   --work DIR [--corpora mar swe]
    python3 scripts/bench/recipes.py quality --work DIR --recipe NAME=CONFIG ... [--set NAME:KEY=VALUE]
                                             --steps N --every K [--jobs 2] [--corpora ...] [--extend]
    python3 scripts/bench/recipes.py cost    --work DIR --recipe NAME=CONFIG ... --reference NAME
                                             [--steps 120] [--short 20] [--rounds 2] [--corpora ...]
    python3 scripts/bench/recipes.py harvest --work DIR --corpus C --recipe NAME=CONFIG --every K
                                             (a quality run stopped early: its validations so far)
    python3 scripts/bench/recipes.py collect --work DIR --label NAME=SHOWN ... [--raw docs/bench/recipes.json]
    python3 scripts/bench/recipes.py render  docs/bench/recipes.json

Standard library only.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.dirname(HERE)
ROOT = os.path.dirname(SCRIPTS)
# time_to_quality.py and bench.py are in scripts/ or, once moved, beside this file.
sys.path[:0] = [HERE, SCRIPTS]
from bench import provenance  # noqa: E402
from time_to_quality import DEFAULT_CAP, TimeToQuality, read_lines  # noqa: E402

NMT = os.environ.get("NMT", os.path.join(ROOT, "nmt"))   # NMT=PATH: another binary
RAW = os.path.join(ROOT, "docs", "bench", "recipes.json")
CORPORA = ("mar", "swe", "fra")
BUDGETS_MIN = (1, 2, 3, 4, 5)    # CPU minutes of training (updates only)
VALID_BLEU_MAX = 1000


def fail(msg):
    sys.exit(f"recipes.py: {msg}")


def data_dir():
    for d in (os.path.join(ROOT, "..", "shared", "data"), os.path.join(ROOT, "..", "..", "shared", "data")):
        if os.path.isdir(d):
            return os.path.normpath(d)
    fail("no ../shared/data with mar.txt, swe.txt and fra.txt")


# ---------------------------------------------------------------- the split

class Split(TimeToQuality):
    """time_to_quality.py's split with these settings (its own __init__ reads
    configs/mar-reference.json and PyTorch's settings, which do not apply)."""

    def __init__(self, tmp, lowercase):
        from bench import Runner
        self.tmp, self.run, self.kernel = tmp, Runner(tmp, False), None
        self.a = argparse.Namespace(split_seed=1, caps=dict(DEFAULT_CAP))
        self.text_flags = ["--lowercase"] if lowercase else []
        self.max_len = 20
        self.valid_fraction = 0.1

    def say(self, msg):
        print(msg, flush=True)


def split(a):
    os.makedirs(a.work, exist_ok=True)
    tmp = os.path.join(a.work, "split-tmp")
    os.makedirs(tmp, exist_ok=True)
    s = Split(tmp, a.lowercase)
    for name in a.corpora or CORPORA:
        c = s.split(name, os.path.join(data_dir(), name + ".txt"))
        d = os.path.join(a.work, name)
        os.makedirs(d, exist_ok=True)
        for k in ("train_tsv", "valid_tsv"):
            shutil.copy(c[k], os.path.join(d, os.path.basename(c[k])))
        info = {k: c[k] for k in ("name", "path", "pairs_read", "pairs_usable", "cap", "train_pairs", "valid_pairs",
                                  "bleu_pairs")}
        info["lowercase"] = a.lowercase
        with open(os.path.join(d, "split.json"), "w") as f:
            json.dump(info, f, indent=1)
        print(f"{name}: {c['train_pairs']} training, {c['valid_pairs']} held-out pairs", flush=True)
    shutil.rmtree(tmp)


def corpus_info(work, name):
    with open(os.path.join(work, name, "split.json")) as f:
        return json.load(f)


# ---------------------------------------------------------------- recipes

def parse_recipes(items, sets):
    recipes = []
    for item in items:
        name, _, path = item.partition("=")
        if not path:
            fail(f"--recipe {item}: expected NAME=CONFIG.json")
        with open(os.path.join(ROOT, path) if not os.path.isabs(path) else path) as f:
            cfg = json.load(f)
        recipes.append({"name": name, "path": path, "config": cfg, "sets": []})
    for s in sets or []:
        target, _, kv = s.partition(":") if ":" in s.split("=")[0] else ("", "", s)
        for r in recipes:
            if not target or r["name"] == target:
                r["sets"].append(kv)
    return recipes


def run_config(r, work, corpus, out, **train):
    """The recipe's config on the split, with these train keys, written for nmt train."""
    cfg = json.loads(json.dumps(r["config"]))
    cfg.setdefault("data", {}).pop("valid_fraction", None)
    cfg["data"].update({"train": os.path.join(work, corpus, "train.tsv"),
                        "valid": os.path.join(work, corpus, "valid.tsv")})
    if corpus_info(work, corpus).get("lowercase"):
        cfg["data"]["lowercase"] = True
    # One worker: the threads given are OpenBLAS's (the shipped configs train with 2 workers).
    cfg.setdefault("train", {}).update(dict({"seed": 1, "checkpoint_every": 0, "keep_checkpoints": 1,
                                             "early_stop": 0, "workers": 1}, **train))
    cfg["output"] = {"dir": out}
    path = out + ".json"
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    return path


def nmt_train(path, sets, log_path):
    """nmt train PATH --set SET... (path None: sets are the whole argument list)."""
    argv = [NMT, "train", path, "--quiet"] + [x for s in sets for x in ("--set", s)] if path else \
        [NMT, "train", "--quiet"] + sets
    with open(log_path, "w") as err:
        t0 = time.time()
        rc = subprocess.run(argv, stderr=err, cwd=ROOT).returncode
    if rc != 0:
        fail(f"{' '.join(argv)} failed (exit {rc}); see {log_path}")
    return time.time() - t0


def log_events(path):
    return [json.loads(line) for line in read_lines(path)]


# ---------------------------------------------------------------- 1. quality per update

def run_results(out, corpus, r, steps, every, threads, wall):
    """A quality run's figures from its directory: train.log's validations, epoch ends
    and training losses, the effective config and the model's size."""
    events = log_events(os.path.join(out, "train.log"))
    start = next(e for e in events if e.get("event") == "start")
    with open(os.path.join(out, "config.json")) as f:
        effective = json.load(f)
    logged = [e for e in events if "event" not in e]
    return {"corpus": corpus, "recipe": r["name"], "path": r["path"], "sets": r["sets"], "threads": threads,
            "steps": steps, "every": every, "wall_s": round(wall, 1), "config": effective,
            "train_pairs": start["train_pairs"], "valid_pairs": start["valid_pairs"],
            "vocab": [start["src_vocab"], start["tgt_vocab"]], "parameters": start["parameters"],
            "validations": [{k: e.get(k) for k in ("step", "epoch", "valid_loss", "valid_bleu", "seconds", "elapsed")}
                            for e in events if e.get("event") == "validation"],
            "epochs": [{k: e.get(k) for k in ("epoch", "step", "target_tokens")}
                       for e in events if e.get("event") == "epoch"],
            "train_loss": [[e["step"], round(e["loss"], 4)] for e in logged]}


def harvest(a):
    """The figures of a quality run stopped before its --steps (killed, or still going):
    its validations so far, marked partial, with steps the last validated update."""
    r = parse_recipes(a.recipe, a.set)[0]
    out = os.path.join(a.work, "runs", f"{a.corpus}.{r['name']}")
    res = run_results(out, a.corpus, r, None, a.every, 1, 0)
    res["partial"] = True
    res["steps"] = res["validations"][-1]["step"] if res["validations"] else 0
    with open(os.path.join(a.work, "results", f"quality.{a.corpus}.{r['name']}.json"), "w") as f:
        json.dump(res, f)
    print(f"  {a.corpus} {r['name']}: partial, {len(res['validations'])} validations to step {res['steps']}")


def quality_one(a, r, corpus):
    results = os.path.join(a.work, "results")
    os.makedirs(results, exist_ok=True)
    dest = os.path.join(results, f"quality.{corpus}.{r['name']}.json")
    if os.path.exists(dest) and not a.again and not a.extend:
        print(f"  {corpus} {r['name']}: done already ({dest})", flush=True)
        return
    out = os.path.join(a.work, "runs", f"{corpus}.{r['name']}")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if a.extend and os.path.exists(os.path.join(out, "checkpoint.bin")):
        # A longer run of the same recipe: resumed with a raised train.max_steps, it goes
        # on exactly as one run of a.steps updates would have (README, "Training longer").
        wall = nmt_train(None, ["--resume", out, "--set", f"train.max_steps={a.steps}"], out + ".err")
    else:
        shutil.rmtree(out, ignore_errors=True)
        path = run_config(r, a.work, corpus, out, epochs=1000, max_steps=a.steps, validate_every=a.every,
                          valid_bleu_max=VALID_BLEU_MAX, threads=a.threads, log_every=50)
        wall = nmt_train(path, r["sets"], out + ".err")
    res = run_results(out, corpus, r, a.steps, a.every, a.threads, wall)
    with open(dest, "w") as f:
        json.dump(res, f)
    v = res["validations"][-1]
    print(f"  {corpus} {r['name']}: step {v['step']}: valid loss {v['valid_loss']:.3f}, BLEU {v['valid_bleu']:.2f} "
          f"({wall / 60:.0f} min)", flush=True)
    # Kept for --extend: the newest checkpoint (the run's state); the model files go.
    for name in os.listdir(out):
        if name in ("model.bin", "best.bin") or re.match(r"checkpoint-\d+\.bin$", name) and \
                not os.path.samefile(os.path.join(out, name), os.path.join(out, "checkpoint.bin")):
            os.remove(os.path.join(out, name))


def quality(a):
    recipes = parse_recipes(a.recipe, a.set)
    jobs = [(r, c) for c in (a.corpora or CORPORA) for r in recipes]
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not jobs:
                    return
                r, c = jobs.pop(0)
            quality_one(a, r, c)

    ts = [threading.Thread(target=worker) for _ in range(a.jobs)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


# ---------------------------------------------------------------- 2. CPU time per update

def cpu_run(r, work, corpus, out, steps):
    """CPU seconds (user + system) of `nmt train` to `steps` updates on 1 thread, with a
    loss-only validation at the end."""
    shutil.rmtree(out, ignore_errors=True)
    path = run_config(r, work, corpus, out, epochs=1000, max_steps=steps, validate_every=0, valid_bleu_max=0,
                      threads=1, log_every=steps)
    with open(out + ".err", "w") as err:
        proc = subprocess.Popen([NMT, "train", path, "--quiet"] + [x for s in r["sets"] for x in ("--set", s)],
                                stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        fail(f"{path}: nmt train failed; see {out}.err")
    shutil.rmtree(out)
    return usage.ru_utime + usage.ru_stime


def cost(a):
    """Each recipe's CPU seconds per update on 1 thread, as a ratio to the reference's:
    CPU time hardly depends on what else the machine runs (wall time does), so this
    ratio can be measured on a busy machine. Runs of --short and --steps updates,
    alternated between the recipes, the difference per update."""
    recipes = parse_recipes(a.recipe, a.set)
    ref = next((r for r in recipes if r["name"] == a.reference), None)
    if ref is None:
        fail(f"--reference {a.reference} is not among the recipes")
    results = os.path.join(a.work, "results")
    os.makedirs(results, exist_ok=True)
    os.makedirs(os.path.join(a.work, "runs"), exist_ok=True)
    for corpus in a.corpora or CORPORA:
        rec = {"corpus": corpus, "reference": ref["name"], "threads": 1, "steps": [a.short, a.steps], "rounds": [],
               "load_before": round(os.getloadavg()[0], 2)}
        startup = {}
        for k in range(a.rounds):
            round_ = {}
            for r in (recipes if k % 2 == 0 else recipes[::-1]):
                out = os.path.join(a.work, "runs", f"cost.{corpus}.{r['name']}")
                short = cpu_run(r, a.work, corpus, out, a.short)
                long_ = cpu_run(r, a.work, corpus, out, a.steps)
                per_update = (long_ - short) / (a.steps - a.short)
                round_[r["name"]] = round(per_update, 5)
                startup.setdefault(r["name"], []).append(short - a.short * per_update)
            rec["rounds"].append(round_)
            print(f"  {corpus} round {k + 1}: " + ", ".join(f"{n} {x * 1000:.0f} ms" for n, x in round_.items()),
                  flush=True)
        rec["load_after"] = round(os.getloadavg()[0], 2)
        rec["startup_s"] = {n: round(statistics.median(v), 2) for n, v in startup.items()}
        rec["cpu_s_per_update"] = {r["name"]: statistics.median(x[r["name"]] for x in rec["rounds"]) for r in recipes}
        rec["ratio"] = {n: round(rec["cpu_s_per_update"][ref["name"]] / v, 4) for n, v in rec["cpu_s_per_update"].items()}
        with open(os.path.join(results, f"cost.{corpus}.{'+'.join(r['name'] for r in recipes)}.json"), "w") as f:
            json.dump(rec, f)
        print(f"  {corpus}: pace ratios (CPU time) {rec['ratio']}", flush=True)


# ---------------------------------------------------------------- 3. the raw file and its rendering

def collect(a):
    """docs/bench/recipes.json from the results in --work: every quality run and every
    CPU-cost measurement, with the machine and the labels the tables show."""
    res = os.path.join(a.work, "results")
    quality_runs, costs = [], []
    for name in sorted(os.listdir(res)):
        with open(os.path.join(res, name)) as f:
            rec = json.load(f)
        if name.startswith("quality."):
            quality_runs.append(rec)
        elif name.startswith("cost."):
            costs.append(rec)
    corpora = sorted({r["corpus"] for r in quality_runs}, key=lambda c: CORPORA.index(c) if c in CORPORA else 9)
    commit, dirty, machine = provenance(["src", "scripts", "configs"], os.getloadavg())
    raw = {"script": "scripts/bench/recipes.py " + " ".join(a.argv), "provenance": "measured",
           "date": f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC",
           "commit": commit, "src_modified": dirty, "machine": machine, "budgets_cpu_min": list(BUDGETS_MIN),
           "labels": dict(x.split("=", 1) for x in a.label or []),
           "note": a.note,
           "cost_as": dict(x.split("=", 1) for x in a.cost_as or []),
           "corpora": [corpus_info(a.work, c) for c in corpora], "cost": costs, "quality": quality_runs}
    with open(a.raw, "w") as f:
        json.dump(raw, f, indent=1)
        f.write("\n")
    print(f"wrote {a.raw}: {len(quality_runs)} quality runs, {len(costs)} cost measurements")


def cpu_per_update(raw):
    """{(corpus, recipe): (CPU seconds per update, start-up CPU seconds or None)}: the
    median over every measurement of that recipe on that corpus; a recipe of
    raw["cost_as"] has its twin's (the same model and data, other optimizer settings:
    the same arithmetic per update)."""
    per, start = {}, {}
    for x in raw["cost"]:
        for r in x["rounds"]:
            for name, v in r.items():
                per.setdefault((x["corpus"], name), []).append(v)
        for name, v in x.get("startup_s", {}).items():
            start.setdefault((x["corpus"], name), []).append(v)
    out = {k: (statistics.median(v), statistics.median(start[k]) if k in start else None, min(v), max(v), len(v))
           for k, v in per.items()}
    for name, twin in raw.get("cost_as", {}).items():
        for (c, n), v in list(out.items()):
            if n == twin:
                out[(c, name)] = v
    return out


def at_budget(q, cost, minutes):
    """(updates in `minutes` of CPU time, the run's last validation within them or
    None, whether the run went that far): a run that stopped short of the budget's
    updates says nothing about it."""
    steps = int(60 * minutes / cost)
    v = q["validations"]
    if not v or steps > v[-1]["step"]:
        return steps, None, False
    done = [x for x in v if x["step"] <= steps]
    return steps, (done[-1] if done else None), True


def render(raw, raw_file):
    costs = cpu_per_update(raw)
    label = lambda n: raw["labels"].get(n, n)
    budgets = raw["budgets_cpu_min"]
    L = []
    w = L.append
    w("## Which recipe for which budget: quality per CPU minute (issue 29)")
    w("")
    w(f"Collected by `{raw['script']}`; nmt at commit {raw['commit']}"
      f"{' (with uncommitted changes)' if raw['src_modified'] else ''}. Rendered from `{raw_file}` "
      f"(`python3 scripts/bench/recipes.py render {raw_file}`). Machine: {raw['machine']['cpu']}, "
      f"{raw['machine']['cores']} cores, shared with other jobs (load average {raw['machine']['load_before']:.1f} "
      "when collected): hence CPU time, not wall time.")
    w("")
    w("- **Quality per update** is deterministic: each recipe trains to a fixed number of updates on 1 OpenBLAS "
      "thread, validating every 250 updates and at each epoch end: the loss per target unit over every held-out "
      "pair, and the BLEU of greedy translations of 1,000 of them (`train.valid_bleu_max`). The split is "
      "`scripts/bench/time_to_quality.py`'s (10% held out, split seed 1, case kept); nothing is tuned on a test set.")
    w("- **CPU seconds per update** on 1 thread (`recipes.py cost`): runs of 20 and 120 updates, alternated "
      "between the recipes (A B C, C B A), nice'd; the difference of the child's CPU time (getrusage: user + "
      "system) over the difference of updates, median over the rounds. The start-up (reading the data, BPE, "
      "building the model) is the 20-update run's CPU time less its updates'.")
    w("- **A budget of B CPU minutes** is B × 60 / (CPU seconds per update) updates; a recipe's figures at B are "
      "its last validation within them (validations and the start-up are outside the budget). \"–\": the run "
      "stopped before the budget's updates, so it says nothing there (and \"Highest BLEU\" leaves it out). Validation loss is per target unit: a BPE recipe's units are smaller "
      "than a word recipe's, so compare losses within one tokenisation; BLEU is on detokenised text either way.")
    if raw.get("note"):
        w(f"- {raw['note']}")
    w("- To measure again: `make bench-recipes` (the shipped configs on swe and mar; a recipe labelled "
      "\"CONFIG, ...\" is that config with the `--set`s its label names: `recipes.py quality --set NAME:KEY=VALUE`).")
    w("")
    for c in raw["corpora"]:
        cn = c["name"]
        runs = [q for q in raw["quality"] if q["corpus"] == cn and (cn, q["recipe"]) in costs]
        if not runs:
            continue
        w(f"### {cn}.txt")
        w("")
        w(f"{c['train_pairs']:,} training pairs, {c['valid_pairs']:,} held out (BLEU on {c['bleu_pairs']:,})"
          + (f"; a sample of {c['cap']:,} of the {c['pairs_usable']:,} usable pairs" if c.get("cap") else "") + ".")
        w("")
        best = []
        for b in budgets:
            figs = [at_budget(q, costs[(cn, q["recipe"])][0], b)[1:] + (q["recipe"],) for q in runs]
            known = [(v["valid_bleu"], n) for v, reached, n in figs if v is not None]
            unknown = [n for v, reached, n in figs if not reached]
            if known:
                top = max(known)
                best.append(f"{b:g} min: `{label(top[1])}` ({top[0]:.1f})" +
                            (f", not counting {', '.join(f'`{label(n)}`' for n in unknown)} (its run stopped earlier)" if unknown else ""))
        w("Highest BLEU per budget: " + "; ".join(best) + ".")
        w("")
        w("| recipe | parameters | CPU ms/update (range, rounds) | start-up CPU s | " +
          " | ".join(f"{b:g} CPU min: updates, loss, BLEU" for b in budgets) + " |")
        w("|---|---:|---:|---:|" + "---|" * len(budgets))
        for q in runs:
            cost, start, lo, hi, n = costs[(cn, q["recipe"])]
            cells = []
            for b in budgets:
                steps, v, reached = at_budget(q, cost, b)
                cells.append(f"{steps:,}: –" if not reached else f"{steps:,}: no validation yet" if v is None else
                             f"{steps:,}: {v['valid_loss']:.3f}, **{v['valid_bleu']:.1f}**")
            twin = raw.get("cost_as", {}).get(q["recipe"])
            w(f"| `{label(q['recipe'])}` | {q['parameters'] / 1e6:.1f}M | {cost * 1000:.0f}{'*' if twin else ''} "
              f"({lo * 1000:.0f}–{hi * 1000:.0f}, {n}) | "
              f"{'–' if start is None else f'{start:.0f}'} | " + " | ".join(cells) + " |")
        twins = [f"`{label(n)}`'s is `{label(t)}`'s" for n, t in raw.get("cost_as", {}).items()
                 if any(q["recipe"] == n for q in runs)]
        partial = [f"`{label(q['recipe'])}` stopped at update {q['steps']:,}" for q in runs if q.get("partial")]
        if twins or partial:
            w("")
            w("; ".join((["\\* CPU time per update: " + ", ".join(twins) + " (the same model and data)"] if twins else [])
                        + partial) + ".")
        w("")
        w("After each epoch (CPU minutes of updates, 1 thread):")
        w("")
        w("| recipe | epoch | updates | CPU min | validation loss | BLEU |")
        w("|---|---:|---:|---:|---:|---:|")
        for q in runs:
            cost = costs[(cn, q["recipe"])][0]
            ends = {e["step"] for e in q["epochs"]}
            for v in q["validations"]:
                if v["step"] in ends:
                    w(f"| `{label(q['recipe'])}` | {v['epoch']} | {v['step']:,} | {v['step'] * cost / 60:.1f} | "
                      f"{v['valid_loss']:.3f} | {v['valid_bleu']:.1f} |")
        w("")
    return "\n".join(L)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("split")
    sp.add_argument("--work", required=True)
    sp.add_argument("--lowercase", action="store_true")
    sp.add_argument("--corpora", nargs="+")
    for name in ("quality", "cost"):
        p = sub.add_parser(name)
        p.add_argument("--work", required=True)
        p.add_argument("--recipe", action="append", required=True, metavar="NAME=CONFIG")
        p.add_argument("--set", action="append", metavar="[NAME:]KEY=VALUE")
        p.add_argument("--corpora", nargs="+")
        p.add_argument("--steps", type=int, required=name == "quality", default=120)
    q = sub.choices["quality"]
    q.add_argument("--every", type=int, required=True)
    q.add_argument("--jobs", type=int, default=2)
    q.add_argument("--threads", type=int, default=1)
    q.add_argument("--again", action="store_true", help="redo runs that have results already")
    q.add_argument("--extend", action="store_true",
                   help="resume kept runs to --steps (a longer run of the same recipe) and rewrite their results")
    co = sub.choices["cost"]
    co.add_argument("--reference", required=True)
    co.add_argument("--rounds", type=int, default=2)
    co.add_argument("--short", type=int, default=20)
    h = sub.add_parser("harvest")
    h.add_argument("--work", required=True)
    h.add_argument("--corpus", required=True)
    h.add_argument("--recipe", action="append", required=True, metavar="NAME=CONFIG")
    h.add_argument("--set", action="append", metavar="[NAME:]KEY=VALUE")
    h.add_argument("--every", type=int, required=True)
    k = sub.add_parser("collect")
    k.add_argument("--work", required=True)
    k.add_argument("--raw", default=RAW)
    k.add_argument("--label", action="append", metavar="NAME=SHOWN", help="a recipe's name in the tables")
    k.add_argument("--note", help="a line the rendering adds (how the runs were made, where it matters)")
    k.add_argument("--cost-as", action="append", metavar="NAME=TWIN",
                   help="NAME's CPU time per update is TWIN's (the same model and data)")
    rd = sub.add_parser("render")
    rd.add_argument("raw")
    a = ap.parse_args()
    a.argv = sys.argv[1:]
    if a.cmd == "render":
        with open(a.raw) as f:
            print(render(json.load(f), os.path.relpath(os.path.abspath(a.raw), ROOT)))
        return
    {"split": split, "quality": quality, "cost": cost, "harvest": harvest, "collect": collect}[a.cmd](a)


if __name__ == "__main__":
    main()
