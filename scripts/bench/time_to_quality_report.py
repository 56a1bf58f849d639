"""The report of make bench-ttq (time_to_quality.py): docs/bench-time-to-quality.md's
time-to-quality section, rendered from a raw result alone (docs/bench/time_to_quality.json):
per corpus and epoch the validation loss, BLEU and training time, the time each recipe
takes to reach PyTorch's epoch-3 BLEU, the BLEU within fixed budgets, and the issue's
three targets checked with the numbers; and the recipes, corpora and targets it names.

    python3 scripts/bench/time_to_quality.py --render docs/bench/time_to_quality.json [--readme]

The standard library alone.
"""

import os
import statistics

LANGUAGES = {"mar": "English–Marathi", "swe": "English–Swedish", "fra": "English–French"}
# fra.txt (70,000 pairs) would take PyTorch well over 5 minutes an epoch. Measured on 2
# cores (AMD EPYC, OpenBLAS Cooperlake, load average 4 from other work): PyTorch trained on
# random batches of a 40,000-pair sample (11,526 target words) at 683 target tokens/s,
# and fra.txt's short sentences give 6.6 target tokens a pair (with <eos>). 35,000 pairs
# (31,500 for training, ~208,000 target tokens an epoch, about mar.txt's size) make an
# epoch of ~5 minutes at that speed, less on a quiet machine.
DEFAULT_CAP = {"fra": 35000}
LEVEL_EPOCH = 3                    # (b): the level is PyTorch's BLEU after this epoch
RECIPES = (("nmt_shuffled", "nmt, shuffled (default)"),
           ("nmt_bucketed", "nmt, train.bucket true"),
           ("pytorch", "PyTorch, random batches"))
TARGET_LOSS = 0.005                # equal-epoch loss at most 0.5% above random batching's
TARGET_BLEU = 5.0                  # at equal wall-clock, at least 5 BLEU above PyTorch
TARGET_TIME = 0.25                 # time to PyTorch's epoch-3 BLEU at most 1/4 of PyTorch's


# ---------------------------------------------------------------- the figures (from a raw result)

def median(xs):
    return statistics.median(xs) if xs else None


def runs_of(c, recipe):
    return [r for r in c["runs"] if r["recipe"] == recipe]


def at_clock(epochs, t):
    """The validation with the best BLEU among those at or before training time t (None:
    none yet): what a person who keeps the best model so far has by then."""
    done = [e for e in epochs if e["clock"] <= t + 1e-9]
    return max(done, key=lambda e: e["valid_bleu"]) if done else None


def time_to(epochs, level):
    """Training time at the first validation with BLEU >= level (inf: never)."""
    return next((e["clock"] for e in epochs if e["valid_bleu"] >= level - 1e-9), float("inf"))


def level_of(raw, c):
    """(b)'s level: PyTorch's BLEU after epoch LEVEL_EPOCH (the last, if fewer), median over seeds."""
    k = min(raw["settings"]["level_epoch"], raw["settings"]["epochs"])
    return median([r["epochs"][k - 1]["valid_bleu"] for r in runs_of(c, "pytorch")]), k


def spread(xs, fmt):
    """median (min–max) of the finite values; inf shown as 'not reached'."""
    if not xs:
        return "–"
    show = (lambda x: "not reached" if x == float("inf") else fmt.format(x))
    if show(min(xs)) == show(max(xs)):
        return show(median(xs))
    return f"{show(median(xs))} ({show(min(xs))}–{show(max(xs))})"


def seconds(x):
    return "not reached" if x == float("inf") else f"{x:,.0f} s"


def epochs_of(raw, recipe):
    """How many epochs a recipe trains: nmt shuffled --nmt-epochs, the others --epochs."""
    st = raw["settings"]
    return st.get("nmt_epochs", st["epochs"]) if recipe == "nmt_shuffled" else st["epochs"]


def figures(raw, c):
    """Everything the section shows about one corpus, computed from its runs."""
    E, seeds = raw["settings"]["epochs"], raw["settings"]["seeds"]
    f = {"per_epoch": {}, "level": None}
    for recipe, _ in RECIPES:
        rs = runs_of(c, recipe)
        f["per_epoch"][recipe] = [{key: [r["epochs"][k][key] for r in rs if len(r["epochs"]) > k]
                                   for key in ("valid_loss", "valid_bleu", "clock")}
                                  for k in range(epochs_of(raw, recipe))]
    level, k = level_of(raw, c)
    f["level"], f["level_epoch"] = level, k
    f["level_clock"] = [r["epochs"][k - 1]["clock"] for r in runs_of(c, "pytorch")]
    f["time_to"] = {recipe: [time_to(r["epochs"], level) for r in runs_of(c, recipe)] for recipe, _ in RECIPES}
    f["budgets"] = {}
    for minutes in raw["settings"]["budgets_min"]:
        row = {}
        for recipe, _ in RECIPES:
            vals, ended = [], 0
            for r in runs_of(c, recipe):
                e = at_clock(r["epochs"], 60 * minutes)
                vals.append(e["valid_bleu"] if e else None)
                ended += r["epochs"][-1]["clock"] < 60 * minutes
            row[recipe] = (vals, ended)
        f["budgets"][minutes] = row
    # Target 2 at PyTorch's epoch ends: for each seed, nmt's best BLEU among its
    # validations at or before PyTorch's training time there, minus PyTorch's best so far.
    f["equal_clock"] = {}
    for recipe in ("nmt_shuffled", "nmt_bucketed"):
        rows = []
        for k in range(E):
            diffs, times, nmt_bleu, torch_bleu, missing = [], [], [], [], 0
            for seed in seeds:
                p = next(r for r in runs_of(c, "pytorch") if r["seed"] == seed)
                t = p["epochs"][k]
                best_torch = at_clock(p["epochs"], t["clock"])["valid_bleu"]
                n = next(r for r in runs_of(c, recipe) if r["seed"] == seed)
                e = at_clock(n["epochs"], t["clock"])
                times.append(t["clock"])
                torch_bleu.append(best_torch)
                nmt_bleu.append(e["valid_bleu"] if e else 0.0)      # no validation yet: untrained
                diffs.append(nmt_bleu[-1] - best_torch)
                missing += e is None
            rows.append({"epoch": k + 1, "time": times, "nmt": nmt_bleu, "pytorch": torch_bleu, "diff": diffs,
                         "missing": missing})
        f["equal_clock"][recipe] = rows
    return f


def targets(raw, c, f):
    """The issue's three targets for one corpus: [(name, met, text)]."""
    E = raw["settings"]["epochs"]
    out = []
    # 1. Equal epochs: validation loss at most 0.5% above random batching's (PyTorch's
    #    random batches; nmt shuffled is random batching too, so all three are shown).
    pe = f["per_epoch"]
    loss = {r: [median(pe[r][k]["valid_loss"]) for k in range(E)] for r, _ in RECIPES}
    rel = {r: [loss[r][k] / loss["pytorch"][k] - 1 for k in range(E)] for r in ("nmt_shuffled", "nmt_bucketed")}
    worst = max(rel["nmt_shuffled"])
    out.append(("equal-epoch loss", worst <= TARGET_LOSS,
                f"nmt shuffled's validation loss against PyTorch's, epoch by epoch: "
                + ", ".join(f"{100 * x:+.1f}%" for x in rel["nmt_shuffled"])
                + f" (worst {100 * worst:+.1f}%, target at most +{100 * TARGET_LOSS:.1f}%); nmt bucketed: "
                + ", ".join(f"{100 * x:+.1f}%" for x in rel["nmt_bucketed"])
                + "; nmt bucketed against nmt shuffled: "
                + ", ".join(f"{100 * (loss['nmt_bucketed'][k] / loss['nmt_shuffled'][k] - 1):+.1f}%"
                            for k in range(E))))
    # 2. Equal wall-clock: nmt's BLEU at least 5 above PyTorch's, at PyTorch's epoch ends.
    rows = f["equal_clock"]["nmt_shuffled"]
    diffs = [median(r["diff"]) for r in rows]
    out.append(("BLEU at equal wall-clock", min(diffs) >= TARGET_BLEU,
                "at PyTorch's epoch ends, nmt shuffled's best BLEU by then minus PyTorch's best by then: "
                + ", ".join(f"epoch {r['epoch']} ({median(r['time']):,.0f} s): {median(r['nmt']):.1f} − "
                            f"{median(r['pytorch']):.1f} = {d:+.1f}" for r, d in zip(rows, diffs))
                + f" (least {min(diffs):+.1f}, target at least +{TARGET_BLEU:.0f}); nmt bucketed: "
                + ", ".join(f"{median(r['diff']):+.1f}" for r in f["equal_clock"]["nmt_bucketed"])
                + ("" if not sum(r["missing"] for r in rows) else
                   f"; where nmt had not validated yet ({sum(r['missing'] for r in rows)} seed-epochs) its BLEU "
                   "counts as 0")))
    # 3. Time to PyTorch's epoch-3 BLEU: at most a quarter of what PyTorch takes to get
    #    there, its 3 epochs (medians over the seeds).
    tn, tb, tt = (median(f["time_to"]["nmt_shuffled"]), median(f["time_to"]["nmt_bucketed"]),
                  median(f["level_clock"]))
    ratio = tn / tt
    k = f["level_epoch"]
    out.append(("time to PyTorch's BLEU", ratio <= TARGET_TIME,
                f"BLEU {f['level']:.1f} is PyTorch's after epoch {k}, and its {k} epochs took {seconds(tt)}; "
                + (f"nmt shuffled did not reach it within {epochs_of(raw, 'nmt_shuffled')} epochs" if tn == float("inf") else
                   f"nmt shuffled reached it in {seconds(tn)}, {ratio:.2f} of PyTorch's time")
                + f" (target at most {TARGET_TIME:.2f}); nmt bucketed "
                + ("did not reach it" if tb == float("inf") else f"in {seconds(tb)} ({tb / tt:.2f})")))
    return out


# ---------------------------------------------------------------- rendering

def corpus_title(c):
    lang = LANGUAGES.get(c["name"])
    return f"{os.path.basename(c['path'])}" + (f" ({lang})" if lang else "")


def render(raw):
    """docs/bench-time-to-quality.md's time-to-quality section (without the generated-block markers)."""
    st, m = raw["settings"], raw["machine"]
    E, seeds = st["epochs"], st["seeds"]
    names = dict(RECIPES)
    L = []
    w = L.append
    w("## Time to quality: nmt and PyTorch, BLEU against training time")
    w("")
    w(f"Written by `{raw['script']}` on {raw['date']}; nmt at commit {raw['commit']}"
      f"{' (src/ or scripts/ had uncommitted changes)' if raw['src_modified'] else ''}; "
      f"{raw['minutes']:.0f} minutes in all. Rendered from `docs/bench/time_to_quality.json` "
      "(`python3 scripts/bench/time_to_quality.py --render docs/bench/time_to_quality.json`).")
    if st["quick"]:
        w("")
        w("**A --quick run: tiny corpus slices and few epochs, to check the pipeline. Its figures say "
          "nothing about the recipes.**")
    w("")
    others = [r["others"] for c in raw["corpora"] for r in c["runs"]]
    w(f"- Machine: {m['cpu']}, {m['cores']} cores, OpenBLAS kernel {m['openblas_kernel']} for both "
      f"programs; load average {m['load_before']:.2f} before and {m['load_after']:.2f} after; other "
      f"processes kept {statistics.mean(others):.2f} cores busy on average during the runs (at most "
      f"{max(others):.2f}; each run's figure is in the raw file as \"others\").")
    tr = st["train"]
    py = st.get("pytorch") or {}
    w(f"- Model and training: `{st['reference']}`'s settings (embed {st['model']['embed']}, hidden "
      f"{st['model']['hidden']}, {st['model'].get('attention', 'bahdanau')} attention, batch "
      f"{tr['batch_size']}, Adam {tr['learning_rate']}, clip {tr['clip_norm']}, "
      f"{'lowercased, ' if st['lowercase'] else ''}max_len {st['max_len']}, {tr['threads']} threads), "
      f"{E} epochs (nmt shuffled {epochs_of(raw, 'nmt_shuffled')}, to cover PyTorch's training time), "
      f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}; PyTorch {py.get('torch', '?')} "
      f"(Debian python3-torch, {py.get('aten_cpu_capability', '?')} ATen kernels, OpenBLAS "
      f"{py.get('openblas_kernel', '?')}).")
    w(f"- Recipes: **{names['nmt_shuffled']}**: batches of {tr['batch_size']} random sentences, packed; "
      f"**{names['nmt_bucketed']}**: sorted by length within windows of 50 batches; "
      f"**{names['pytorch']}**: `scripts/bench/bench_torch.py --mode epochs`, trained on the batches nmt "
      "shuffled draws with the same seed (`nmt train --export-batches`), as a tutorial's "
      "`DataLoader(shuffle=True, batch_size=64)` would draw them (checked below).")
    w(f"- One split per corpus for every run: the pairs nmt keeps (≤ {st['max_len']} words a side), "
      f"{100 * st['valid_fraction']:.0f}% held out (split seed {st['split_seed']}). Validation after "
      f"each epoch on the held-out pairs: the loss per target token over all of them (teacher-forced), and "
      f"BLEU of greedy translations of up to {st['valid_bleu_max']:,} of them, every BLEU computed by "
      "nmt's code (src/eval/bleu.c, sacreBLEU's 13a BLEU) on the same references.")
    w("- Time is training wall-clock with the validations taken out, on both sides: nmt's is train.log's "
      "`elapsed` at each validation minus the earlier validations' `seconds` (it still holds nmt's "
      "epoch-end checkpoint writes); PyTorch's, the sum of its epochs' wall-clock.")
    w("")
    # The targets at a glance.
    w("### The issue's targets")
    w("")
    w("| target | " + " | ".join(corpus_title(c) for c in raw["corpora"]) + " |")
    w("|---|" + "---|" * len(raw["corpora"]))
    per = {c["name"]: targets(raw, c, figures(raw, c)) for c in raw["corpora"]}
    labels = [("equal-epoch loss", f"validation loss at equal epochs within {100 * TARGET_LOSS:.1f}% of "
               "random batching's (nmt shuffled ≤ 1.005 × PyTorch)"),
              ("BLEU at equal wall-clock", f"BLEU at equal wall-clock ≥ PyTorch's + {TARGET_BLEU:.0f}"),
              ("time to PyTorch's BLEU", f"time to PyTorch's epoch-{min(LEVEL_EPOCH, E)} BLEU ≤ "
               f"{TARGET_TIME:.2f} × PyTorch's")]
    for key, label in labels:
        cells = []
        for c in raw["corpora"]:
            met = next(x for x in per[c["name"]] if x[0] == key)[1]
            cells.append("met" if met else "**not met**")
        w(f"| {label} | " + " | ".join(cells) + " |")
    w("")
    w("The numbers behind each verdict are under each corpus.")
    for c in raw["corpora"]:
        f = figures(raw, c)
        w("")
        w(f"### {corpus_title(c)}")
        w("")
        cap = "" if c["cap"] is None else (
            f" (a seeded sample of {c['cap']:,} of them: `--max-pairs {c['name']}={c['cap']}`"
            + (", so that a PyTorch epoch takes at most about 5 minutes on 2 cores)"
               if c["cap"] == DEFAULT_CAP.get(c["name"]) else ")"))
        w(f"`{c['path']}`: {c['pairs_usable']:,} usable pairs{cap}: {c['train_pairs']:,} for training, "
          f"{c['valid_pairs']:,} held out, BLEU on {c['bleu_pairs']:,}; vocabularies {c['vocab'][0]:,} source / "
          f"{c['vocab'][1]:,} target words (held-out words outside them: {100 * c['valid_unk'][0]:.1f}% "
          f"source, {100 * c['valid_unk'][1]:.1f}% target); an epoch is {c['batches_per_epoch']:,} batches, "
          f"{c['target_tokens_per_epoch']:,} target tokens.")
        w("")
        w(f"(a) After each epoch (median over {len(seeds)} seed{'s' if len(seeds) > 1 else ''}, min–max in "
          "brackets):")
        w("")
        w("| epoch | recipe | validation loss | BLEU | training time |")
        w("|---:|---|---:|---:|---:|")
        for k in range(max(epochs_of(raw, r) for r, _ in RECIPES)):
            for recipe, label in RECIPES:
                if k >= len(f["per_epoch"][recipe]):
                    continue
                p = f["per_epoch"][recipe][k]
                w(f"| {k + 1} | {label} | {spread(p['valid_loss'], '{:.3f}')} | "
                  f"{spread(p['valid_bleu'], '{:.1f}')} | {spread(p['clock'], '{:,.0f} s')} |")
        w("")
        w(f"(b) Training time until validation BLEU first reaches **{f['level']:.1f}**, PyTorch's BLEU after "
          f"epoch {f['level_epoch']} (median over the seeds): "
          + "; ".join(f"{label} {spread(f['time_to'][recipe], '{:,.0f} s')}" for recipe, label in RECIPES)
          + f". PyTorch's {f['level_epoch']} epochs took {spread(f['level_clock'], '{:,.0f} s')}. "
          "(Not reached: not within the run's epochs.)")
        w("")
        w("(c) BLEU within a training-time budget (the best validation at or before it, what keeping the best "
          "model so far gives; – when none yet):")
        w("")
        w("| budget | " + " | ".join(label for _, label in RECIPES) + " |")
        w("|---:|" + "---:|" * len(RECIPES))
        notes = False
        for minutes, row in f["budgets"].items():
            cells = []
            for recipe, _ in RECIPES:
                vals, ended = row[recipe]
                got = [v for v in vals if v is not None]
                cell = spread(got, "{:.1f}") if len(got) == len(vals) else (
                    "–" if not got else spread(got, "{:.1f}") + f" ({len(vals) - len(got)} without)")
                if ended:
                    cell += " ‡"
                    notes = True
                cells.append(cell)
            w(f"| {minutes} min | " + " | ".join(cells) + " |")
        if notes:
            w("")
            w("‡ the run ended (its last epoch) before the budget: its best validation.")
        w("")
        w("Targets:")
        w("")
        for name, met, text in per[c["name"]]:
            w(f"- {name}: **{'met' if met else 'not met'}**. {text}.")
        w("")
        b = c["batches_check"]
        s, k = b["shuffled"], b["bucketed"]
        w(f"Random batches, checked on seed {seeds[0]}'s export: every epoch holds the same "
          f"{s['pairs_per_epoch']:,} pairs{'' if s['same_pairs_every_epoch'] else ' (NOT the same pairs)'}, "
          f"in batches of {s['batch_sizes'][-1]} (the last {s['last_batch']}), {s['distinct_orders']} of {E} "
          f"epochs in an order of their own; within a batch the target lengths spread "
          f"{s['within_batch_spread']:.2f} times as much as over the whole corpus (bucketed: "
          f"{k['within_batch_spread']:.2f}), and a batch's place in its epoch has a rank correlation of "
          f"{s['position_length_rank_correlation']:+.2f} with its mean target length over all "
          f"{E * s['batches_per_epoch']:,} batches (standard error {s['rank_correlation_standard_error']:.2f}; "
          f"bucketed {k['position_length_rank_correlation']:+.2f}; the files are sorted by length): "
          f"{'random batches' if b['random_batches'] else 'NOT random batches'}.")
        w("")
        sc = c["scoring_check"]
        w(f"Scoring, checked on nmt's model ({sc['run']}): train.log's BLEU {sc['train_log_bleu']:.2f}; "
          f"`nmt translate` of the BLEU sources scored by this script's path {sc['translate_score_bleu']:.2f}; "
          f"PyTorch's validation with nmt's weights: loss {sc['pytorch_loss']:.4f} (train.log "
          f"{sc['train_log_loss']:.4f}), BLEU {sc['pytorch_bleu']:.2f}, {sc['same_translations']:,} of "
          f"{sc['sentences']:,} translations identical to nmt's.")
    w("")
    w("### Commands")
    w("")
    w("`$TMP` is a fresh temporary directory; each corpus's split and configs are in `$TMP/NAME/`: the "
      f"settings of `{st['reference']}` with data.train and data.valid the split, train.epochs, train.seed, "
      "train.bucket, checkpoint_every 0 and keep_checkpoints 1. Every corpus and seed repeats the commands "
      "shown once here.")
    w("")
    w("```")
    L.extend(raw["commands"])
    w("```")
    return "\n".join(L)


def render_readme(raw):
    """README's headline: per corpus, BLEU within the middle budget and the time to
    PyTorch's epoch-k BLEU, for nmt shuffled and PyTorch."""
    k = min(raw["settings"]["level_epoch"], raw["settings"]["epochs"])
    minutes = raw["settings"]["budgets_min"][len(raw["settings"]["budgets_min"]) // 2]
    seeds = raw["settings"]["seeds"]
    L = [f"Measured {raw['date'].split()[0]} (commit {raw['commit']}; {raw['machine']['cpu']}, "
         f"{raw['machine']['cores']} cores; {'median of ' + str(len(seeds)) + ' seeds' if len(seeds) > 1 else 'one seed'}"
         ", every figure in [docs/bench-time-to-quality.md](bench-time-to-quality.md#time-to-quality-nmt-and-pytorch-bleu-against-training-time)):",
         "",
         f"| corpus | BLEU after {minutes} minutes of training: nmt / PyTorch | time to PyTorch's epoch-{k} BLEU: "
         f"nmt / PyTorch |", "|---|---:|---:|"]
    for c in raw["corpora"]:
        f = figures(raw, c)
        cells = []
        for recipe in ("nmt_shuffled", "pytorch"):
            vals, ended = f["budgets"][minutes][recipe]
            got = [v for v in vals if v is not None]
            cells.append((spread(got, "{:.1f}") if got else "–") + (" ‡" if ended else ""))
        tn, tt = median(f["time_to"]["nmt_shuffled"]), median(f["level_clock"])
        L.append(f"| {corpus_title(c)} | {cells[0]} / {cells[1]} | BLEU {f['level']:.1f}: {seconds(tn)} / "
                 f"{seconds(tt)} |")
    if any("‡" in line for line in L):
        L += ["", "‡ the run had ended before: its best validation."]
    return "\n".join(L)
