"""transformer_quality.py — time to quality of nmt's Transformer against the best recurrent model (issue 17).

Which model gives the better translation in the training time one has: nmt's Transformer
(configs/transformer.json) or the best recurrent model of README's family table
(configs/family/luong_concat.json: GRU, Luong concat attention, input feeding)? For each
corpus (../shared/data's mar.txt, swe.txt and fra.txt by default; fra.txt capped as
scripts/bench/time_to_quality.py caps it) this script

 1. makes ONE split, shared by every recipe: time_to_quality.py's (imported, not copied):
    the usable pairs (at most data.max_len words a side, neither side empty, as nmt
    tokenises them), a seeded sample if capped, a seeded valid_fraction held out;
    train.tsv and valid.tsv, given to nmt as data.train and data.valid;
 2. trains each recipe epoch by epoch: `nmt train CONFIG.json` with train.epochs 1, then
    `nmt train --resume RUN_DIR --set train.epochs=K` (a raised epoch limit continues a
    finished run exactly as one longer run would have gone on: README, "Training longer");
 3. after each epoch, with the training clock stopped, records train.log's validation
    (the loss per target token over every held-out pair, and BLEU of greedy translations
    of up to train.valid_bleu_max = 1,000 of them, spread evenly over the held-out set)
    and the BLEU of beam-5 translations of the SAME pairs: `nmt eval RUN_DIR/model.bin
    bleu.tsv --beam 5`, where bleu.tsv holds the held-out pairs nmt's validation
    translates (so greedy and beam 5 are scored on the same sentences, the same way;
    checked once per run: `nmt eval` greedy on bleu.tsv must give train.log's BLEU);
 4. stops a recipe at --epochs, or when its training clock has passed --max-minutes
    (default: the largest budget) or its next epoch would end past it at its pace so far;
 5. at each wall-clock budget (--budgets, minutes of training), takes each recipe's last
    epoch that finished within it and says which recipe is ahead (by greedy BLEU, beam-5
    BLEU and validation loss);
 6. writes every figure to docs/bench/transformer_quality.json (--raw) and renders from it
    alone (--render RAW.json) a section for docs/bench-time-to-quality.md and a short table for README
    (--readme).

The training clock is time_to_quality.py's: train.log's `elapsed` at each validation minus
the earlier validations' `seconds`. A resume restores the clock from the checkpoint, so
the restarts, the beam-5 evaluations and this script's work are outside it; it holds the
training steps and best.bin writes (and, in a run that is not resumed, the epoch-end
checkpoint writes, which the resumes here leave out).

Recipes are configs: `rnn` (configs/family/luong_concat.json) and `transformer`
(configs/transformer.json) by default; --recipe NAME=CONFIG.json gives others (then only
the recipes given run; --recipe rnn or --recipe transformer names a default one), and
--set [NAME:]SECTION.KEY=VALUE overrides a key for every recipe or for recipe NAME
(passed to `nmt train --set`, which validates it). Every recipe gets the split, the
seed (train.seed, default 1), train.threads (--threads, default 2), train.valid_bleu_max
1,000 and checkpoints at epoch ends only; the rest is the config's (this script does not
look at model.dropout or any other model key).

--parallel trains two recipes at once, each with 1 thread (both under the same
conditions: each shares the machine with the other); the raw file records which was used.

    /usr/bin/python3 scripts/bench/transformer_quality.py           # the full run (hours); writes
                                                                    # docs/bench/transformer_quality.json
    /usr/bin/python3 scripts/bench/transformer_quality.py --quick   # every step on tiny slices (~1 min)
    /usr/bin/python3 scripts/bench/transformer_quality.py --parallel  # the same, two recipes at a time,
                                                                    # 1 thread each (about half the time)
    /usr/bin/python3 scripts/bench/transformer_quality.py --corpora mar --epochs 2 --max-minutes 60 \\
        --recipe rnn --recipe t1=configs/transformer.json \\
        --recipe t2=configs/transformer.json --set t2:train.learning_rate=0.001 \\
        --set t2:train.warmup_steps=400 --raw /tmp/trial.json
                                          # a trial (docs/bench/transformer_lr_trial.json was one)
    python3 scripts/bench/transformer_quality.py --render docs/bench/transformer_quality.json [--readme]

Standard library only.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))   # scripts/bench/ is two levels down
sys.path.insert(0, HERE)
from bench import Runner, provenance  # noqa: E402  (a command with its wall time and noise; the machine)
from time_to_quality import (DEFAULT_CAP, LANGUAGES, QUICK_PAIRS, VALID_BLEU_MAX,  # noqa: E402
                             TimeToQuality, data_dir, read_lines, start_line, validation_lines, write_lines)

NMT = os.path.join(ROOT, "nmt")
RAW = os.path.join(ROOT, "docs", "bench", "transformer_quality.json")
BENCHMARKS = os.path.join(ROOT, "docs", "bench-time-to-quality.md")   # where the section is
BLOCK = "transformer_quality"
CORPORA = ("mar", "swe", "fra")
DEFAULT_RECIPES = {"rnn": "configs/family/luong_concat.json", "transformer": "configs/transformer.json"}
BUDGETS_MIN = (2, 5, 10, 15)       # minutes of training (the largest also each recipe's limit)
QUICK_BUDGETS_MIN = (0.05, 0.1, 0.2, 0.5)
MAX_EPOCHS = 100                   # a safety limit; the budgets stop a recipe first
QUICK_EPOCHS = 2
BEAM = 5
PACE = 0.8                         # stop when the next epoch, even this fraction of the mean
                                   # epoch so far, would end past --max-minutes
# The data keys that decide which pairs nmt keeps and how it counts their words: every
# recipe must agree on them (nmt's defaults where a config leaves them out), since they
# share one split.
SPLIT_KEYS = {"max_len": 20, "lowercase": False, "normalization": "nfc", "tokenizer": "word"}


def fail(msg):
    sys.exit(f"transformer_quality.py: {msg}")


# ---------------------------------------------------------------- the split

class Split(TimeToQuality):
    """time_to_quality.py's split (TimeToQuality.split) with the data settings of this
    script's recipes: only what split() reads is set here (TimeToQuality's own __init__
    reads configs/mar-reference.json and PyTorch's settings, neither of which apply)."""

    def __init__(self, tmp, runner, data, split_seed, caps):
        self.tmp, self.run, self.kernel = tmp, runner, os.environ.get("OPENBLAS_CORETYPE")
        self.a = argparse.Namespace(split_seed=split_seed, caps=caps)
        self.text_flags = (["--lowercase"] if data["lowercase"] else []) + \
            (["--nfkc"] if data["normalization"] == "nfkc" else [])
        self.max_len = data["max_len"]
        self.valid_fraction = data["valid_fraction"]

    def say(self, msg):
        print(msg, flush=True)


def bleu_tsv(c):
    """bleu.tsv: the held-out pairs nmt's validation translates for its BLEU (split()'s
    bleu_index into valid.tsv), in that order, for `nmt eval`."""
    valid = read_lines(c["valid_tsv"])
    path = os.path.join(c["dir"], "bleu.tsv")
    write_lines(path, [valid[k] for k in c["bleu_index"]])
    return path


# ---------------------------------------------------------------- one recipe on one corpus

class ShownRunner(Runner):
    """A Runner whose scratch files (stdout.txt, stderr.txt) are in a directory of its own,
    so that two can run at once, and whose recorded commands still show the measurement's
    temporary directory as $TMP."""

    def __init__(self, shown_tmp, files_dir, verbose):
        os.makedirs(files_dir, exist_ok=True)
        super().__init__(files_dir, verbose)
        self.shown_tmp = shown_tmp

    def shorten(self, s):
        return s.replace(self.shown_tmp, "$TMP").replace(ROOT + "/", "")


class RecipeRun:
    """Trains one recipe on one corpus epoch by epoch and measures it after each epoch."""

    def __init__(self, q, c, recipe, threads, runner):
        self.q, self.c, self.r, self.threads, self.run = q, c, recipe, threads, runner
        self.out = os.path.join(c["dir"], recipe["name"])

    def nmt(self, argv, label):
        return self.run.run([NMT] + argv, label=label)

    def config(self):
        """The recipe's config with the split, the seed, the threads, validation BLEU on
        VALID_BLEU_MAX pairs, checkpoints only at epoch ends, and 1 epoch."""
        cfg = json.loads(json.dumps(self.r["config_json"]))
        cfg.setdefault("data", {})
        cfg["data"].pop("valid_fraction", None)          # data.valid given: it does not apply
        cfg["data"].update({"train": self.c["train_tsv"], "valid": self.c["valid_tsv"]})
        cfg.setdefault("train", {})
        # One worker on self.threads OpenBLAS threads (the shipped configs say 2 workers).
        cfg["train"].update({"epochs": 1, "max_steps": 0, "seed": self.q.a.seed, "threads": self.threads, "workers": 1,
                             "valid_bleu_max": VALID_BLEU_MAX, "checkpoint_every": 0, "keep_checkpoints": 1,
                             "validate_every": 0, "early_stop": 0})
        cfg["output"] = {"dir": self.out}
        path = os.path.join(self.c["dir"], self.r["name"] + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(cfg, f, indent=1)
        return path

    def eval(self, tsv, beam):
        argv = ["eval", os.path.join(self.out, "model.bin"), tsv, "--json", "--threads", str(self.threads)]
        if beam > 1:
            argv += ["--beam", str(beam)]
        wall, _, out = self.nmt(argv, f"nmt eval ({self.r['name']})")
        return json.loads(out), wall

    def train(self):
        c, name, a = self.c, self.r["name"], self.q.a
        log = os.path.join(self.out, "train.log")
        epochs, stopped, first = [], None, {}
        limit_s = 60 * self.r["max_minutes"]
        for k in range(1, self.r["epochs"] + 1):
            if k == 1:
                sets = [x for key in self.r["sets"] for x in ("--set", key)]
                argv = ["train", self.config()] + sets       # not --quiet: the model line
            else:
                argv = ["train", "--resume", self.out, "--set", f"train.epochs={k}", "--quiet"]
            wall, rss, _ = self.nmt(argv, f"nmt train ({name}, epoch {k})")
            others = self.run.others
            if k == 1:
                first = self.first_epoch(log)
            v = validation_lines(log)
            if len(v) != k or v[-1]["epoch"] != k:
                fail(f"{name} on {c['name']}: after epoch {k}, train.log has {len(v)} epoch-end validations")
            rec = next(json.loads(line) for line in reversed(read_lines(log))
                       if json.loads(line).get("event") == "validation")
            beam, beam_wall = self.eval(c["bleu_tsv"], BEAM)
            e = v[-1]
            e.update({"step": rec["step"], "learning_rate": rec.get("learning_rate"),
                      "train_seconds": round(e["clock"] - (epochs[-1]["clock"] if epochs else 0.0), 3),
                      "beam_bleu": round(beam["bleu"], 4), "beam_chrf": round(beam["chrf"], 4),
                      "beam_hyp_len": beam["hyp_len"], "beam_ref_len": beam["ref_len"],
                      "beam_seconds": round(beam_wall, 2), "beam_pairs": beam["pairs"],
                      "process_wall_s": round(wall, 2), "rss_kib": rss, "others": round(others, 3)})
            epochs.append(e)
            self.q.say(f"  {c['name']} {name} epoch {k}: valid loss {e['valid_loss']:.4f}, BLEU greedy "
                       f"{e['valid_bleu']:.2f}, beam {BEAM} {e['beam_bleu']:.2f}; training {e['train_seconds']:.0f} s "
                       f"(clock {e['clock']:.0f} s), validation {e['valid_seconds']:.0f} s, beam {beam_wall:.0f} s; "
                       f"others' CPU {others:.2f}")
            clock = e["clock"]
            pace = clock / k
            if k == self.r["epochs"]:
                stopped = f"--epochs {k}"
            elif clock >= limit_s:
                stopped = f"training clock {clock:.0f} s reached --max-minutes {self.r['max_minutes']:g}"
            elif clock + PACE * pace > limit_s:
                stopped = (f"the next epoch would end past --max-minutes {self.r['max_minutes']:g} "
                           f"({clock:.0f} s + {PACE} x the mean epoch {pace:.0f} s)")
            if stopped:
                break
        check = self.greedy_check(epochs[-1])
        shutil.rmtree(self.out)
        return {"recipe": name, "threads": self.threads, "stopped": stopped, "epochs": epochs,
                "greedy_check": check, **first}

    def first_epoch(self, log):
        """What the first epoch tells about the run: the start line (pairs, vocabularies,
        parameters), nmt's model line and OpenBLAS kernel; the pairs checked against the
        split (nmt must keep every pair of train.tsv and valid.tsv)."""
        c, st = self.c, start_line(log)
        if (st["train_pairs"], st["valid_pairs"]) != (c["train_pairs"], c["valid_pairs"]):
            fail(f"nmt kept {st['train_pairs']} training and {st['valid_pairs']} held-out pairs of "
                 f"{c['train_tsv']} and {c['valid_tsv']}, the split {c['train_pairs']} and {c['valid_pairs']}: "
                 "the split's filter is not nmt's (do the recipes' data keys agree with SPLIT_KEYS?)")
        m = re.search(r"^nmt: model: (.*?); OpenBLAS kernel (\S+?), (\d+) threads?", self.run.last_stderr, re.M)
        with open(os.path.join(self.out, "config.json"), encoding="utf-8") as f:
            effective = json.load(f)
        return {"train_pairs": st["train_pairs"], "valid_pairs": st["valid_pairs"],
                "vocab": [st["src_vocab"], st["tgt_vocab"]], "parameters": st["parameters"],
                "unigram_valid_loss": st.get("unigram_valid_loss"), "bleu_signature": st.get("bleu_signature"),
                "model_line": m.group(1) if m else None, "openblas_kernel": m.group(2) if m else None,
                "config": {k: effective[k] for k in ("model", "train") if k in effective}}

    def greedy_check(self, last):
        """`nmt eval` greedy on bleu.tsv must give the BLEU train.log reports for the same
        model: then beam 5 and greedy are scored on the same sentences, the same way."""
        greedy, _ = self.eval(self.c["bleu_tsv"], 1)
        check = {"epoch": last["epoch"], "train_log_bleu": last["valid_bleu"], "eval_bleu": round(greedy["bleu"], 4),
                 "pairs": greedy["pairs"]}
        if abs(greedy["bleu"] - last["valid_bleu"]) > 0.01 or greedy["pairs"] != self.c["bleu_pairs"]:
            fail(f"{self.r['name']} on {self.c['name']}: nmt eval greedy on bleu.tsv does not reproduce train.log's "
                 f"validation BLEU: {check}")
        return check


# ---------------------------------------------------------------- the measurement

class Measurement:
    def __init__(self, a, recipes):
        self.a, self.recipes = a, recipes
        self.tmp = tempfile.mkdtemp(prefix="nmt-tq-")
        self.runner = ShownRunner(self.tmp, os.path.join(self.tmp, "main"), a.verbose)
        self.runners = [self.runner]
        self.lock = threading.Lock()
        data = dict(SPLIT_KEYS, valid_fraction=0.1)
        for k in data:
            data[k] = recipes[0]["config_json"].get("data", {}).get(k, data[k])
        self.data = data

    def say(self, msg):
        with self.lock:
            print(msg, flush=True)

    def recipe_runner(self, c, name):
        r = ShownRunner(self.tmp, os.path.join(self.tmp, "runner", c["name"], name), self.a.verbose)
        r.recording = c["record"]
        self.runners.append(r)
        return r

    def corpus(self, name, path, record):
        a, t0 = self.a, time.time()
        self.runner.recording = record
        split = Split(self.tmp, self.runner, self.data, a.split_seed, a.caps)
        c = split.split(name, path)
        c["record"] = record
        c["bleu_tsv"] = bleu_tsv(c)
        capped = "" if c["cap"] is None else f", a sample of {c['cap']:,}"
        self.say(f"{name}: {c['train_pairs']:,} training and {c['valid_pairs']:,} held-out pairs "
                 f"({c['pairs_usable']:,} usable of {c['pairs_read']:,}{capped}); BLEU on {c['bleu_pairs']:,}")
        threads = 1 if a.parallel else a.threads
        jobs = [RecipeRun(self, c, r, threads, self.recipe_runner(c, r["name"])) for r in self.recipes]
        runs = {}
        if a.parallel:
            for i in range(0, len(jobs), 2):
                pair = jobs[i:i + 2]
                results = [None] * len(pair)

                def work(j, job):
                    try:
                        results[j] = job.train()
                    except BaseException as exc:     # Runner's sys.exit included
                        results[j] = exc

                ts = [threading.Thread(target=work, args=(j, job)) for j, job in enumerate(pair)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                for res in results:
                    if isinstance(res, BaseException):
                        raise res
                    runs[res["recipe"]] = res
        else:
            for job in jobs:
                res = job.train()
                runs[res["recipe"]] = res
        keep = ("name", "path", "pairs_read", "pairs_usable", "cap", "train_pairs", "valid_pairs", "bleu_pairs")
        out = {k: c.get(k) for k in keep}
        out["runs"] = [runs[r["name"]] for r in self.recipes]
        out["minutes"] = round((time.time() - t0) / 60, 1)
        shutil.rmtree(c["dir"], ignore_errors=True)
        return out

    def commands(self):
        seen = []
        for r in self.runners:
            for cmd in r.commands:
                if cmd not in seen:
                    seen.append(cmd)
        return seen

    def raw_results(self, corpora, started, load_before, t_start):
        commit, dirty, machine = provenance(["src", "scripts", "configs"], load_before)
        machine["avx512"] = "avx512f" in machine["flags"]
        kernels = {r.get("openblas_kernel") for c in corpora for r in c["runs"]}
        machine["openblas_kernel"] = ", ".join(sorted(k for k in kernels if k)) or None
        a = self.a
        args = " ".join(a.argv)
        return {
            "script": "scripts/bench/transformer_quality.py" + (f" {args}" if args else ""),
            "provenance": "measured",
            "date": f"{started:%Y-%m-%d %H:%M} UTC",
            "commit": commit,
            "src_modified": dirty,
            "machine": machine,
            "settings": {"budgets_min": a.budgets, "threads": 1 if a.parallel else a.threads,
                         "parallel": a.parallel, "quick": a.quick, "caps": a.caps, "split_seed": a.split_seed,
                         "seed": a.seed, "valid_fraction": self.data["valid_fraction"], "max_len": self.data["max_len"],
                         "lowercase": self.data["lowercase"], "valid_bleu_max": VALID_BLEU_MAX, "beam": BEAM,
                         "pace": PACE},
            "recipes": [{k: r[k] for k in ("name", "path", "sets", "epochs", "max_minutes")} for r in self.recipes],
            "corpora": corpora,
            "minutes": round((time.time() - t_start) / 60, 1),
            "commands": self.commands(),
        }


# ---------------------------------------------------------------- the figures (from a raw result)

def at_budget(run, minutes):
    """The run's last epoch finished within `minutes` of training (None: none yet)."""
    done = [e for e in run["epochs"] if e["clock"] <= 60 * minutes + 1e-9]
    return done[-1] if done else None


METRICS = (("valid_bleu", "BLEU greedy", max), ("beam_bleu", f"BLEU beam {BEAM}", max), ("valid_loss", "loss", min))


def ahead(runs, minutes):
    """{metric: the recipe ahead at the budget, or None}: the best figure among the
    recipes with an epoch within it (ties: None)."""
    got = [(r["recipe"], at_budget(r, minutes)) for r in runs]
    got = [(name, e) for name, e in got if e]
    out = {}
    for key, _, best in METRICS:
        if not got:
            out[key] = None
            continue
        value = best(e[key] for _, e in got)
        winners = [name for name, e in got if e[key] == value]
        out[key] = winners[0] if len(winners) == 1 else None
    return out


def corpus_title(c):
    lang = LANGUAGES.get(c["name"])
    return os.path.basename(c["path"]) + (f" ({lang})" if lang else "")


def minutes_label(m):
    return f"{m:g} min"


def describe_recipe(r, run):
    """A recipe in words from what its first epoch recorded (the effective config)."""
    m, t = run["config"]["model"], run["config"]["train"]
    if m.get("type") == "transformer":
        what = (f"Transformer, {m.get('layers')} layers (encoder {m.get('encoder_layers') or m.get('layers')}, "
                f"decoder {m.get('decoder_layers') or m.get('layers')}), d_model {m.get('embed')}, "
                f"{m.get('heads')} heads, feed-forward {m.get('ff')} ({m.get('activation')}), {m.get('norm')}-norm")
    else:
        what = (f"{m.get('cell', 'gru').upper()}, {m.get('layers', 1)} layer{'s' if m.get('layers', 1) > 1 else ''}, "
                f"embed {m.get('embed')}, hidden {m.get('hidden')}, {m.get('attention')} attention"
                + (", input feeding" if m.get("input_feed") else "")
                + (", bidirectional" if m.get("bidirectional") else ""))
    what += f", dropout {m.get('dropout', 0):g}"
    sched = t.get("lr_schedule", "constant")
    lr = f"Adam {t.get('learning_rate'):g}" + (
        f" peak, inverse_sqrt after {t.get('warmup_steps')} warm-up steps" if sched == "inverse_sqrt" else
        (f", {sched}" if sched != "constant" else "") + (f", warm-up {t['warmup_steps']}" if t.get("warmup_steps") else ""))
    ls = t.get("label_smoothing", 0)
    return (f"{what}; batch {t.get('batch_size')}, {lr}, clip {t.get('clip_norm'):g}"
            + (f", label smoothing {ls:g}" if ls else "") + f"; {run['parameters']:,} parameters")


def fmt(e, key, spec):
    return "–" if e is None else spec.format(e[key])


def render(raw):
    """docs/bench-time-to-quality.md's section (without the generated-block markers)."""
    st, m = raw["settings"], raw["machine"]
    L = []
    w = L.append
    w("## Time to quality: the Transformer against the best recurrent model")
    w("")
    w(f"Written by `{raw['script']}` on {raw['date']}; nmt at commit {raw['commit']}"
      f"{' (src/, scripts/ or configs/ had uncommitted changes)' if raw['src_modified'] else ''}; "
      f"{raw['minutes']:.0f} minutes in all. Rendered from `{raw['raw_file']}` "
      f"(`python3 scripts/bench/transformer_quality.py --render {raw['raw_file']}`).")
    if st["quick"]:
        w("")
        w("**A --quick run: tiny corpus slices and budgets of seconds, to check the pipeline. Its figures say "
          "nothing about the recipes.**")
    w("")
    others = [e["others"] for c in raw["corpora"] for r in c["runs"] for e in r["epochs"]]
    w(f"- Machine: {m['cpu']}, {m['cores']} cores, AVX-512 {'yes' if m.get('avx512') else 'no'}, OpenBLAS kernel "
      f"{m.get('openblas_kernel')}; load average {m['load_before']:.2f} before and {m['load_after']:.2f} after; "
      f"other processes kept {sum(others) / max(1, len(others)):.2f} cores busy on average while nmt trained "
      f"(at most {max(others, default=0):.2f}; per epoch in the raw file as \"others\""
      + ("; with --parallel the other recipe is among them" if st["parallel"] else "") + ").")
    w(f"- Runs: {st['threads']} OpenBLAS thread{'s' if st['threads'] > 1 else ''} each (train.threads, and "
      f"`nmt eval --threads`), "
      + ("two recipes at a time (--parallel), so that each shares the machine with the other alike"
         if st["parallel"] else "one process at a time")
      + f"; train.seed {st['seed']}.")
    first = raw["corpora"][0]["runs"]
    w("- Recipes:")
    for r, run in zip(raw["recipes"], first):
        sets = "".join(f" `--set {s}`" for s in r["sets"])
        w(f"  - **{r['name']}**: `{r['path']}`{sets}: {describe_recipe(r, run)}.")
    w(f"- One split per corpus for every recipe: the pairs nmt keeps (≤ {st['max_len']} words a side), "
      f"{100 * st['valid_fraction']:.0f}% held out (split seed {st['split_seed']}), as "
      "`scripts/bench/time_to_quality.py` makes it. Each recipe trains one epoch at a time (`nmt train` with "
      "train.epochs 1, then `nmt train --resume RUN_DIR --set train.epochs=K`), and after each epoch: the "
      "validation loss per target token over every held-out pair and the BLEU of greedy translations of "
      f"up to {st['valid_bleu_max']:,} of them (train.log), and the BLEU of beam-{st['beam']} translations of the "
      f"same pairs (`nmt eval model.bin bleu.tsv --beam {st['beam']}`; `nmt eval` greedy on them reproduces "
      "train.log's BLEU, checked for every run). BLEU is sacreBLEU's 13a BLEU as nmt computes it, case kept"
      + (", of lowercased text" if st["lowercase"] else "") + ".")
    w("- Training time is train.log's `elapsed` at each validation minus the earlier validations' "
      "`seconds`: the training steps and best.bin writes; not the restarts, validations or beam evaluations. "
      "At a budget, each recipe's figures are those of its last epoch that ended within it (– when none had). "
      f"A recipe stops at its epoch limit, or when its training time passes the limit (the largest budget by "
      f"default) or its next epoch would end past it at {st['pace']} × its mean epoch so far.")
    w("")
    # Who is ahead, everywhere at once.
    w("### Ahead at each budget")
    w("")
    budgets = st["budgets_min"]
    w("| corpus | " + " | ".join(minutes_label(b) for b in budgets) + " |")
    w("|---|" + "---|" * len(budgets))
    for c in raw["corpora"]:
        cells = []
        for b in budgets:
            h = ahead(c["runs"], b)
            cells.append(" / ".join(h[k] or "–" for k, _, _ in METRICS))
        w(f"| {corpus_title(c)} | " + " | ".join(cells) + " |")
    w("")
    w(f"Each cell: the recipe ahead by greedy BLEU / beam-{st['beam']} BLEU / validation loss (– none yet, or a tie).")
    for c in raw["corpora"]:
        w("")
        w(f"### {corpus_title(c)}")
        w("")
        cap = "" if c["cap"] is None else f" (a seeded sample of {c['cap']:,} of them: `--max-pairs {c['name']}={c['cap']}`)"
        vocabs = {tuple(run["vocab"]) for run in c["runs"]}
        vocab = (f"{c['runs'][0]['vocab'][0]:,} / {c['runs'][0]['vocab'][1]:,}" if len(vocabs) == 1 else
                 "; ".join(f"{run['recipe']} {run['vocab'][0]:,} / {run['vocab'][1]:,}" for run in c["runs"]))
        w(f"`{c['path']}`: {c['pairs_usable']:,} usable pairs{cap}: {c['train_pairs']:,} for training, "
          f"{c['valid_pairs']:,} held out, BLEU on {c['bleu_pairs']:,}; vocabularies (source / target words) {vocab}.")
        w("")
        w("After each epoch:")
        w("")
        w(f"| recipe | epoch | training time | epoch time | others' CPU | validation loss | BLEU greedy | "
          f"BLEU beam {st['beam']} |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|")
        for run in c["runs"]:
            for e in run["epochs"]:
                w(f"| {run['recipe']} | {e['epoch']} | {e['clock']:,.0f} s | {e['train_seconds']:,.0f} s | "
                  f"{e['others']:.2f} | {e['valid_loss']:.3f} | {e['valid_bleu']:.2f} | {e['beam_bleu']:.2f} |")
        w("")
        w("(Others' CPU: the cores other processes kept busy while the epoch's `nmt train` ran; the machine is "
          "shared, and an epoch's time grows with it.)")
        w("")
        w("Stopped: " + "; ".join(f"{run['recipe']} after epoch {run['epochs'][-1]['epoch']} ({run['stopped']})"
                                  for run in c["runs"]) + ".")
        w("")
        w("At each budget (the last epoch that ended within it):")
        w("")
        w(f"| budget | recipe | epochs | training time | validation loss | BLEU greedy | BLEU beam {st['beam']} |")
        w("|---:|---|---:|---:|---:|---:|---:|")
        ended = False
        for b in budgets:
            h = ahead(c["runs"], b)
            for run in c["runs"]:
                e = at_budget(run, b)
                cells = []
                for key, _, _ in METRICS:
                    spec = "{:.3f}" if key == "valid_loss" else "{:.2f}"
                    cell = fmt(e, key, spec)
                    cells.append(f"**{cell}**" if e is not None and h[key] == run["recipe"] and len(c["runs"]) > 1
                                 else cell)
                mark = ""
                if run["epochs"][-1]["clock"] < 60 * b:
                    mark, ended = " ‡", True
                w(f"| {minutes_label(b)} | {run['recipe']} | {fmt(e, 'epoch', '{}')}{mark} | "
                  f"{fmt(e, 'clock', '{:,.0f} s')} | {cells[2]} | {cells[0]} | {cells[1]} |")
        w("")
        w("Bold: ahead at that budget." + (" ‡ the run had stopped before the budget." if ended else ""))
    w("")
    w("### Commands")
    w("")
    w("`$TMP` is a fresh temporary directory; each corpus's split and configs are in `$TMP/NAME/`: the recipe's "
      "config with data.train and data.valid the split, train.epochs 1, train.seed, train.threads, "
      "train.valid_bleu_max, checkpoints at epoch ends only, one kept. Every corpus repeats the commands shown "
      "once here, and every epoch after the second its resume and evaluation.")
    w("")
    w("```")
    L.extend(raw["commands"])
    w("```")
    return "\n".join(L)


def render_readme(raw):
    """README's short table: per corpus, each recipe's beam-5 BLEU at each budget."""
    st, m = raw["settings"], raw["machine"]
    names = [r["name"] for r in raw["recipes"]]
    budgets = st["budgets_min"]
    L = [f"Measured {raw['date'].split()[0]} (commit {raw['commit']}; {m['cpu']}, {m['cores']} cores, "
         f"{st['threads']} thread{'s' if st['threads'] > 1 else ''} per run"
         + (", two runs at a time" if st["parallel"] else "")
         + "; every figure in [docs/bench-time-to-quality.md](bench-time-to-quality.md#time-to-quality-the-transformer-against-the-best-recurrent-model)). "
         f"BLEU (beam {st['beam']}) on held-out pairs after the last epoch that ended within each training time, "
         + " / ".join(names) + ":", "",
         "| corpus | " + " | ".join(minutes_label(b) for b in budgets) + " |",
         "|---|" + "---:|" * len(budgets)]
    for c in raw["corpora"]:
        cells = []
        for b in budgets:
            h = ahead(c["runs"], b)["beam_bleu"]
            parts = []
            for run in c["runs"]:
                e = at_budget(run, b)
                v = fmt(e, "beam_bleu", "{:.1f}")
                parts.append(f"**{v}**" if e is not None and h == run["recipe"] and len(c["runs"]) > 1 else v)
            cells.append(" / ".join(parts))
        L.append(f"| {corpus_title(c)} | " + " | ".join(cells) + " |")
    return "\n".join(L)


def splice_into_benchmarks():
    """docs/bench-time-to-quality.md gets the section as a generated block (scripts/docs/docs.py)
    at its end if it has none yet; then the block is regenerated from the raw file."""
    with open(BENCHMARKS, encoding="utf-8") as f:
        text = f.read()
    if f"<!-- generated block {BLOCK}:" not in text:
        block = (f"<!-- generated block {BLOCK}: python3 scripts/bench/transformer_quality.py --render "
                 f"docs/bench/transformer_quality.json -->\n<!-- end of generated block {BLOCK} -->\n")
        with open(BENCHMARKS, "w", encoding="utf-8") as f:
            f.write(text.rstrip("\n") + "\n\n" + block)
    subprocess.run(["sh", os.path.join(ROOT, "scripts", "docs", "regenerate.sh"), BLOCK], cwd=ROOT, check=True)


# ---------------------------------------------------------------- main

def parse_caps(items, quick):
    caps = {name: QUICK_PAIRS for name in CORPORA} if quick else dict(DEFAULT_CAP)
    for item in items or []:
        name, _, n = item.partition("=")
        if not n.isdigit():
            fail(f"--max-pairs {item}: expected NAME=N (N = 0: no cap)")
        caps[name] = int(n) or None
    return {k: v for k, v in caps.items() if v}


def per_recipe(items, names, default, kind, flag):
    """--epochs / --max-minutes: `N` for every recipe, `NAME=N` for one."""
    out = {n: default for n in names}
    for item in items or []:
        name, eq, value = item.rpartition("=")
        try:
            v = kind(value)
        except ValueError:
            fail(f"{flag} {item}: expected N or NAME=N")
        if not eq:
            out = {n: v for n in names}
        elif name in out:
            out[name] = v
        else:
            fail(f"{flag} {item}: no recipe {name} (recipes: {', '.join(names)})")
    return out


def parse_recipes(a):
    given = a.recipe or list(DEFAULT_RECIPES)
    recipes, seen = [], set()
    for item in given:
        name, eq, path = item.partition("=")
        if not eq:
            if name not in DEFAULT_RECIPES:
                fail(f"--recipe {item}: expected NAME=CONFIG.json (or one of {', '.join(DEFAULT_RECIPES)})")
            path = DEFAULT_RECIPES[name]
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name in seen or name in ("main", "runner"):
            fail(f"--recipe {item}: a recipe needs a new name of letters, digits, '_', '.', '-'")
        seen.add(name)
        full = path if os.path.isabs(path) else os.path.join(ROOT, path)
        try:
            with open(full, encoding="utf-8") as f:
                cfg = json.load(f)
        except (OSError, ValueError) as exc:
            fail(f"--recipe {item}: {exc}")
        recipes.append({"name": name, "path": os.path.relpath(full, ROOT) if full.startswith(ROOT + "/") else path,
                        "config_json": cfg, "sets": []})
    names = [r["name"] for r in recipes]
    for item in a.set or []:
        target, colon, key = item.partition(":")
        if not colon:
            target, key = None, item
        if "=" not in key or "." not in key.split("=")[0]:
            fail(f"--set {item}: expected [NAME:]SECTION.KEY=VALUE")
        if target is not None and target not in names:
            fail(f"--set {item}: no recipe {target} (recipes: {', '.join(names)})")
        for r in recipes:
            if target in (None, r["name"]):
                r["sets"].append(key)
    # One split for all: the keys that decide it must agree.
    for k, default in SPLIT_KEYS.items():
        values = {r["name"]: r["config_json"].get("data", {}).get(k, default) for r in recipes}
        for r in recipes:
            for s in r["sets"]:
                if s.startswith(f"data.{k}="):
                    fail(f"--set {s}: data.{k} decides the shared split; give it in the configs")
        if len(set(map(str, values.values()))) > 1:
            fail(f"data.{k} differs between the recipes ({values}): they share one split")
    epochs = per_recipe(a.epochs, names, QUICK_EPOCHS if a.quick else MAX_EPOCHS, int, "--epochs")
    limit = per_recipe(a.max_minutes, names, max(a.budgets), float, "--max-minutes")
    for r in recipes:
        r["epochs"], r["max_minutes"] = epochs[r["name"]], limit[r["name"]]
        if r["epochs"] < 1 or r["max_minutes"] <= 0:
            fail(f"{r['name']}: --epochs must be at least 1 and --max-minutes above 0")
    return recipes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"every step on {QUICK_PAIRS} pairs of each corpus, {QUICK_EPOCHS} epochs, budgets of "
                         "seconds (a few minutes)")
    ap.add_argument("--corpora", nargs="+", help=f"corpus names in --data-dir, or files (default {' '.join(CORPORA)})")
    ap.add_argument("--data-dir", help="where the corpora are (default ../shared/data)")
    ap.add_argument("--max-pairs", action="append", metavar="NAME=N",
                    help="use a seeded sample of N usable pairs of corpus NAME (default fra=%d; quick: %d of "
                         "each; N = 0: all)" % (DEFAULT_CAP["fra"], QUICK_PAIRS))
    ap.add_argument("--recipe", action="append", metavar="NAME=CONFIG.json",
                    help="a recipe (repeatable; then only those given run); a bare rnn or transformer is the "
                         "default one (%s)" % ", ".join(f"{k}: {v}" for k, v in DEFAULT_RECIPES.items()))
    ap.add_argument("--set", action="append", metavar="[NAME:]SECTION.KEY=VALUE",
                    help="override a config key for every recipe, or for recipe NAME (nmt train --set)")
    ap.add_argument("--budgets", nargs="+", type=float, metavar="MINUTES",
                    help="training-time budgets in minutes (default %s; quick %s)"
                         % (" ".join(map(str, BUDGETS_MIN)), " ".join(map(str, QUICK_BUDGETS_MIN))))
    ap.add_argument("--epochs", action="append", metavar="[NAME=]N",
                    help=f"at most N epochs (for recipe NAME; default {MAX_EPOCHS}, quick {QUICK_EPOCHS})")
    ap.add_argument("--max-minutes", action="append", metavar="[NAME=]M",
                    help="stop a recipe once its training time passes M minutes, or its next epoch would end "
                         "past them (default: the largest budget)")
    ap.add_argument("--threads", type=int, default=2, help="OpenBLAS threads per run (train.threads; default 2)")
    ap.add_argument("--parallel", action="store_true",
                    help="two recipes at once, 1 thread each (the same conditions for both)")
    ap.add_argument("--seed", type=int, default=1, help="train.seed of every recipe (default 1)")
    ap.add_argument("--split-seed", type=int, default=1, help="the seed of the split and the sample (default 1)")
    ap.add_argument("--raw", help="where the raw results go (default docs/bench/transformer_quality.json, and "
                                  "docs/bench-time-to-quality.md's section is rendered from it; with --quick, other --recipe, "
                                  "--set, --corpora or --budgets: a temporary file, and the rendering is printed)")
    ap.add_argument("--render", metavar="RAW.json", help="measure nothing: print the Markdown of RAW.json")
    ap.add_argument("--readme", action="store_true", help="with --render: README's short table instead")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--verbose", action="store_true", help="print each command")
    a = ap.parse_args()
    a.argv = sys.argv[1:]
    if a.render:
        with open(a.render, encoding="utf-8") as f:
            raw = json.load(f)
        print(render_readme(raw) if a.readme else render(raw))
        return 0
    a.budgets = sorted(a.budgets or (QUICK_BUDGETS_MIN if a.quick else BUDGETS_MIN))
    if a.threads < 1:
        fail("--threads must be at least 1")
    a.caps = parse_caps(a.max_pairs, a.quick)
    recipes = parse_recipes(a)
    names = a.corpora or list(CORPORA)
    where = data_dir(a.data_dir)
    paths = [(n, n if os.path.isfile(n) else os.path.join(where, n + ".txt")) for n in names]
    for _, p in paths:
        if not os.path.isfile(p):
            fail(f"{p}: no such corpus")
    if not os.access(NMT, os.X_OK):
        fail(f"{NMT} not found; run make first")
    # The shipped figures come only from the default measurement.
    default_run = not (a.quick or a.recipe or a.set or a.corpora or a.budgets != sorted(BUDGETS_MIN))
    path = a.raw or (RAW if default_run else os.path.join(tempfile.gettempdir(), "nmt-tq.json"))
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = os.getloadavg()
    t_start = time.time()
    q = Measurement(a, recipes)
    try:
        corpora = [q.corpus(os.path.splitext(os.path.basename(n))[0], p, record=(i == 0))
                   for i, (n, p) in enumerate(paths)]
        raw = q.raw_results(corpora, started, load_before, t_start)
    finally:
        if a.keep:
            print(f"kept {q.tmp}")
        else:
            shutil.rmtree(q.tmp, ignore_errors=True)
    raw["raw_file"] = os.path.relpath(path, ROOT) if path.startswith(ROOT + "/") else path
    with open(path, "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"\nwrote {os.path.relpath(path, ROOT) if path.startswith(ROOT + '/') else path}")
    if path == RAW:
        splice_into_benchmarks()
    else:
        print(render(raw))
        print()
        print(render_readme(raw))
    print(f"({raw['minutes']:.1f} minutes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
