"""bench_scaling.py — `make bench-scaling`: how nmt's speed grows with the cores (issue 30).

    /usr/bin/python3 scripts/bench/bench_scaling.py [--quick] [--rounds N] [--threads 1,2,...]
                     [--train-steps N] [--lines N] [--models DIR] [--no-torch]
                     [--no-timing] [--no-instructions] [--cg-workers 1,2,16] [--cg-steps 1] [--cg-jobs N]
                     [--no-blas] [--ceiling] [--out RAW]
    /usr/bin/python3 scripts/bench/bench_scaling.py --render docs/bench/scaling.json

Timing (--no-timing leaves it out): for 1, 2, 4, ... threads up to the machine's cores
(--threads chooses), measures

  training     target tokens/s of `nmt train` on data/mar.txt, batch 64, over --train-steps
               updates (the log's windows of 10, the first left out, their median): the
               recurrent model (GRU, embed 256, hidden 512, Bahdanau) and the Transformer
               (configs/transformer.json). N threads is train.workers N (one OpenBLAS thread
               each); for N > 1 also train.threads N with one worker (OpenBLAS's threads
               inside each product: nmt before workers; --no-blas leaves these out).
  translation  sentences/s of `nmt translate --batch 64` on --lines source lines of
               mar.txt (every 33rd line: all lengths; repeated as needed), greedy, with --workers N (and
               --threads N, one worker, for N > 1), after the startup (the same command on
               an empty input, measured each round) is taken off its time. The models
               are trained here first (200 updates each, on all the cores; --models DIR
               keeps them for the next run) so that their outputs have realistic lengths.
  PyTorch      (where it applies: training, --no-torch leaves it out) bench_torch.py and
               bench_torch_transformer.py on the very batches nmt trains on (`nmt train
               --export-batches`), torch.set_num_threads(N).
  CPU time     user + system seconds of each nmt command (getrusage of the children): N
               workers' over one worker's is the work that splitting adds.
  ceiling      (--ceiling) the machine's own limit: as many independent 1-thread nmt
               processes as cores, each pinned to its own core, started together on the
               same training job (their tokens/s added up) and the same translation (all
               their sentences over the wall time of the slowest, startup taken off).

The settings alternate within each round (1, 2, ..., then the next round), so that a shared
machine's load falls on all of them alike; a figure is the median over the rounds, and a
ratio the median of each round's ratio to that round's 1-thread figure. The load average is
recorded before, between the rounds and after.

Instructions (--no-instructions leaves them out; needs valgrind): callgrind counts a
training step's instructions with each of --cg-workers workers (the first --cg-steps steps,
each counted on its own: callgrind dumps its counts as each step begins), those of
the work the workers share out and the rest: the step's serial part. Callgrind runs a process's threads one at a time and its
counts do not depend on the machine's load, so a 16-worker step can be counted on any
machine; but slowly (OpenBLAS's AVX2 kernels run at a few million instructions per
CPU-second under callgrind: CPU-minutes per counted step of the models above), so
--cg-jobs runs them at once, one per core by default. From the counts, Amdahl's law predicts the speed-up on N cores, one worker's
instructions over (serial + parallel / N) of the N-worker step: a prediction, not a
measurement (it counts instructions, not time).

Writes docs/bench/scaling.json (--quick: /tmp/nmt_bench_scaling_quick.json; --out RAW:
that file, nothing regenerated), then renders BENCHMARKS.md's generated block scaling from
it (scripts/docs/docs.py regenerate scaling). --render RAW prints that block and measures
nothing. Where the tree has no git (a copy carried to another machine), NMT_BENCH_COMMIT
names the commit for the record.
"""

import argparse
import concurrent.futures
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NMT = os.path.join(ROOT, "nmt")
PYTHON = "/usr/bin/python3"
DATA = os.path.join(ROOT, "data", "mar.txt")
RAW = os.path.join(ROOT, "docs", "bench", "scaling.json")
BATCH = 64
# The work of a step that the workers share (train/parallel.c): their passes, the
# gradients' sum, the norm's blocks, Adam's slices; with one worker the norm and Adam are
# grad_norm and adam_update, called directly (the same work on one thread).
PARALLEL_WORK = ("worker_pass", "sum_slice", "norm_slice", "adam_slice", "grad_norm", "adam_update")
# A step's work, all of it: what train_step calls on the caller's thread (each of these
# includes the caller's share of the tasks and the starting and joining of them), and
# the tasks the pool's threads run (for_helper).
STEP_WORK = ("train_workers_gradients", "train_workers_grad_norm", "train_workers_adam", "for_helper")
MODELS = {
    "gru": {"title": "GRU (embed 256, hidden 512)", "config": os.path.join(ROOT, "configs", "default.json"),
            "sets": ["model.embed=256", "model.hidden=512"]},
    "transformer": {"title": "Transformer (configs/transformer.json)",
                    "config": os.path.join(ROOT, "configs", "transformer.json"), "sets": []},
}


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def cores():
    return len(os.sched_getaffinity(0))


def run(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"bench_scaling.py: {' '.join(argv)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return r


def git(*argv):
    """git's output in the repository, or "" where there is no git or no repository."""
    try:
        return subprocess.run(["git", *argv], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    except OSError:
        return ""


def run_pinned(argvs, stdin=None):
    """Runs the commands at once, the k-th pinned to the k-th core this process may use
    (one each), stdin from the file stdin or none; returns when all have ended, or exits
    naming the first that failed."""
    procs = []
    for argv, core in zip(argvs, sorted(os.sched_getaffinity(0))):
        with open(stdin or os.devnull) as f:
            procs.append((argv, subprocess.Popen(argv, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                                 text=True, preexec_fn=lambda c=core: os.sched_setaffinity(0, {c}))))
    failed = None
    for argv, p in procs:
        _, err = p.communicate()
        if p.returncode != 0 and failed is None:
            failed = f"bench_scaling.py: {' '.join(argv)} failed ({p.returncode}):\n{err[-2000:]}"
    if failed:
        sys.exit(failed)


def print_rendered(path, render):
    """--render RAW: prints render's rendering of the raw results in the file path."""
    with open(path, encoding="utf-8") as f:
        print(render(json.load(f)))


def require_nmt(script):
    """Exits, naming script, unless ./nmt is built."""
    if not os.access(NMT, os.X_OK):
        sys.exit(f"{script}: ./nmt not built (make)")


def children_cpu_seconds():
    """User + system CPU seconds of the children waited for so far."""
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def train_sets(name, steps, out, extra):
    s = MODELS[name]["sets"] + [f"train.max_steps={steps}", f"train.batch_size={BATCH}", "train.log_every=10",
                                "train.checkpoint_every=0", "train.valid_bleu_max=0", f"output.dir={out}"]
    argv = []
    for kv in s + extra:
        argv += ["--set", kv]
    return argv


def train_argv(nmt, name, steps, workers, threads, out):
    """The training job of model `name` (MODELS) run by the binary nmt, into out."""
    return [nmt, "train", MODELS[name]["config"]] + train_sets(
        name, steps, out, [f"train.workers={workers}", f"train.threads={threads}"])


class Bench:
    def __init__(self, args, tmp):
        self.args, self.tmp = args, tmp
        self.kernel = None

    # ---------------------------------------------------------------- nmt training
    def train_argv(self, name, workers, threads, out):
        return train_argv(NMT, name, self.args.train_steps, workers, threads, out)

    def nmt_train(self, name, workers, threads):
        out = os.path.join(self.tmp, "run")
        shutil.rmtree(out, ignore_errors=True)
        cpu = children_cpu_seconds()
        r = run(self.train_argv(name, workers, threads, out))
        cpu = children_cpu_seconds() - cpu
        m = re.search(r"OpenBLAS kernel (\S+?),", r.stderr)
        if m and not self.kernel:
            self.kernel = m.group(1)
        tps = train_log_tokens_per_s(out)
        shutil.rmtree(out, ignore_errors=True)
        return tps, cpu

    def ceiling_train(self, name):
        """Tokens/s of as many independent 1-thread training runs as cores, each pinned
        to its own core and started together: the sum of their figures."""
        outs = [os.path.join(self.tmp, f"ceiling{k}") for k in range(cores())]
        for out in outs:
            shutil.rmtree(out, ignore_errors=True)
        run_pinned([self.train_argv(name, 1, 1, out) for out in outs])
        total = sum(train_log_tokens_per_s(out) for out in outs)
        for out in outs:
            shutil.rmtree(out, ignore_errors=True)
        return total

    def ceiling_translate(self, name, src):
        """Seconds until as many independent 1-thread `nmt translate` runs as cores, each
        pinned to its own core and started together on the same lines, have all ended."""
        argv = [NMT, "translate", self.models[name], "--batch", str(BATCH), "--workers", "1", "--threads", "1"]
        t0 = time.perf_counter()
        run_pinned([argv] * cores(), stdin=src)
        return time.perf_counter() - t0

    # ---------------------------------------------------------------- translation
    def prepare_models(self):
        """A model of each kind with realistic output lengths, trained on every core."""
        d = self.args.models or os.path.join(self.tmp, "models")
        os.makedirs(d, exist_ok=True)
        steps = 20 if self.args.quick else 200
        paths, self.model_origin = {}, {}
        for name in MODELS:
            path = os.path.join(d, f"{name}.bin")
            self.model_origin[name] = f"trained here, {steps} updates"
            if os.path.exists(path):
                self.model_origin[name] = f"{path}, kept from an earlier run"
            else:
                out = os.path.join(self.tmp, "prep")
                shutil.rmtree(out, ignore_errors=True)
                run([NMT, "train", MODELS[name]["config"], "--quiet"] + train_sets(
                    name, steps, out, ["train.workers=0", "train.validate_every=0"]))
                shutil.move(os.path.join(out, "model.bin"), path)
                shutil.rmtree(out, ignore_errors=True)
            paths[name] = path
        self.models = paths
        src = os.path.join(self.tmp, "src.txt")
        with open(DATA, encoding="utf-8") as f, open(src, "w", encoding="utf-8") as out:
            lines = [line.split("\t")[0] for k, line in enumerate(f) if k % 33 == 0]
            # Repeated when --lines asks for more than mar.txt's 1,022 (a job for many workers).
            lines = (lines * (self.args.lines // len(lines) + 1))[:self.args.lines]
            out.write("\n".join(lines) + "\n")
        self.src = src
        self.empty = os.path.join(self.tmp, "empty.txt")
        open(self.empty, "w").close()

    def translate_seconds(self, name, src, workers, threads):
        argv = [NMT, "translate", self.models[name], "--batch", str(BATCH), "--workers", str(workers), "--threads",
                str(threads)]
        with open(src) as f:
            cpu = children_cpu_seconds()
            t0 = time.perf_counter()
            r = subprocess.run(argv, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            t = time.perf_counter() - t0
            cpu = children_cpu_seconds() - cpu
        if r.returncode != 0:
            sys.exit(f"bench_scaling.py: {' '.join(argv)} failed:\n{r.stderr[-2000:]}")
        return t, cpu

    # ---------------------------------------------------------------- PyTorch
    def export(self, name):
        path = os.path.join(self.tmp, f"{name}.batches.bin")
        out = os.path.join(self.tmp, "export")
        shutil.rmtree(out, ignore_errors=True)
        run([NMT, "train", MODELS[name]["config"], "--export-batches", path] +
            train_sets(name, self.args.train_steps, out, []))
        shutil.rmtree(out, ignore_errors=True)
        return path

    def torch_train(self, name, batches, threads):
        if name == "gru":
            argv = [PYTHON, os.path.join(HERE, "bench_torch.py"), "--embed", "256", "--hidden", "512"]
        else:
            argv = [PYTHON, os.path.join(HERE, "bench_torch_transformer.py"), "--dropout", "0.1"]
        argv += ["--mode", "train", "--data", batches, "--threads", str(threads), "--batches",
                 str(self.args.train_steps), "--warmup", "10"]
        env = dict(os.environ, OPENBLAS_CORETYPE=self.kernel) if self.kernel else None
        r = run(argv, env=env)
        return json.loads(r.stdout.strip().splitlines()[-1])["tokens_per_s"]

    # ---------------------------------------------------------------- instruction counts
    def step_instructions(self, name, workers):
        """callgrind's instruction counts (deterministic, whatever the machine's load) of
        the training steps of `nmt train` with this many workers, no validation, one
        OpenBLAS thread: callgrind writes its counts out each time a step begins
        (--dump-before), so each part between two such points is one step, its serial
        bookkeeping and its workers' tasks; the parts before the first step (the startup)
        and after the last (the final write) are left out. Returns the steps' mean counts:
        in all, and inclusive in the work the workers share (PARALLEL_WORK)."""
        steps = self.args.cg_steps
        out = os.path.join(self.tmp, f"cg_run_{name}_{workers}")
        cg_dir = os.path.join(self.tmp, f"cg_{name}_{workers}")
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(cg_dir, ignore_errors=True)
        os.makedirs(cg_dir)
        sets = MODELS[name]["sets"] + [f"train.max_steps={steps + 1}", f"train.batch_size={BATCH}",
                                       "train.checkpoint_every=0", "data.valid_fraction=0", f"output.dir={out}",
                                       f"train.workers={workers}", "train.threads=1"]
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg_dir}/out",
                "--dump-before=train_workers_gradients", NMT, "train", MODELS[name]["config"]]
        for kv in sets:
            argv += ["--set", kv]
        # out.1 is the startup (up to the first step), out.2 .. out.K+1 the K steps; once
        # the last of them is written whole, the rest (one more step and the final write,
        # minutes under callgrind) is not needed: the run is stopped there.
        last = os.path.join(cg_dir, f"out.{steps + 1}")
        err_path = os.path.join(cg_dir, "stderr")
        with open(err_path, "w") as err:
            p = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
            while p.poll() is None and not dump_complete(last):
                time.sleep(2)
            if p.poll() is None:
                p.kill()
            p.wait()
        with open(err_path) as f:
            stderr = f.read()
        if not dump_complete(last):
            sys.exit(f"bench_scaling.py: {' '.join(argv)} ended ({p.returncode}) before step {steps}:\n{stderr[-2000:]}")
        m = re.search(r"OpenBLAS kernel (\S+?),", stderr)
        self.cg_kernel = m.group(1) if m else "unknown"
        shutil.rmtree(out, ignore_errors=True)
        counts = [annotate(os.path.join(cg_dir, f"out.{k}")) for k in range(2, steps + 2)]
        shutil.rmtree(cg_dir, ignore_errors=True)
        if len(counts) != steps:
            sys.exit(f"bench_scaling.py: callgrind wrote {len(counts)} step parts, expected {steps}")
        total = statistics.mean(sum(c["functions"].get(f, 0) for f in STEP_WORK) for c in counts)
        parallel = statistics.mean(sum(c["functions"].get(f, 0) for f in PARALLEL_WORK) for c in counts)
        return {"steps": steps, "per_step": total, "parallel_per_step": parallel, "serial_per_step": total - parallel,
                "each_step": counts}


def train_log_tokens_per_s(out):
    """The median of a training run's train.log windows of tokens/s, the first left out."""
    windows = []
    with open(os.path.join(out, "train.log")) as f:
        for line in f:
            rec = json.loads(line)
            if "tokens_per_s" in rec:
                windows.append(rec["tokens_per_s"])
    return statistics.median(windows[1:] if len(windows) > 1 else windows)


def dump_complete(path):
    """Whether callgrind has finished writing the dump at path (its last line: totals)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - 200))
            return b"\ntotals:" in f.read()
    except OSError:
        return False


def annotate(path):
    """A callgrind file's total instructions and the inclusive counts of PARALLEL_WORK
    and STEP_WORK."""
    r = run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path])
    total, functions = None, {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*([0-9,]+)\s+(?:\([^)]*\)\s+)?(PROGRAM TOTALS|\S*:(\w+)\b)", line)
        if not m:
            continue
        count = int(m.group(1).replace(",", ""))
        if m.group(2) == "PROGRAM TOTALS":
            total = count
        elif m.group(3) in PARALLEL_WORK + STEP_WORK:
            functions[m.group(3)] = functions.get(m.group(3), 0) + count
    if total is None:
        sys.exit(f"bench_scaling.py: no PROGRAM TOTALS in callgrind_annotate {path}")
    return {"total": total, "functions": functions}


def thread_counts(args):
    if args.threads:
        return [int(x) for x in args.threads.split(",")]
    n, c = [], 1
    while c < cores():
        n.append(c)
        c *= 2
    return n + [cores()]


def measure(args):
    threads = thread_counts(args)
    tmp = tempfile.mkdtemp(prefix="nmt_bench_scaling_")
    b = Bench(args, tmp)
    raw = {"script": "python3 scripts/bench/bench_scaling.py " + " ".join(sys.argv[1:]), "provenance": "measured",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "commit": git("rev-parse", "--short", "HEAD") or os.environ.get("NMT_BENCH_COMMIT", "unknown"),
           "src_modified": bool(git("status", "--porcelain", "src")),
           "machine": {"cpu": cpu_model(), "cores": cores(), "load_before": load_average(), "load_rounds": []},
           "settings": {"rounds": args.rounds, "train_steps": args.train_steps, "lines": args.lines, "batch": BATCH,
                        "threads": threads, "torch": not args.no_torch, "timing": not args.no_timing,
                        "blas": not args.no_blas, "ceiling": args.ceiling,
                        "instructions": None if args.no_instructions else
                        {"workers": args.cg_workers, "steps": args.cg_steps}}}
    print(f"bench_scaling: threads {threads}, {args.rounds} rounds; load {raw['machine']['load_before']:.2f}",
          flush=True)
    if not args.no_timing:
        timing(args, b, threads, raw)
        raw["timing_run"] = {"script": raw["script"], "date": raw["date"], "commit": raw["commit"],
                             "cpu": cpu_model(), "cores": cores(), "load_before": raw["machine"]["load_before"],
                             "load_rounds": raw["machine"]["load_rounds"], "load_after": load_average(),
                             "openblas_kernel": f"OpenBLAS {b.kernel}" if b.kernel else "OpenBLAS"}
    if not args.no_instructions:
        # Counts do not depend on what else runs, so the callgrind runs may share the cores.
        runs = [(name, w) for name in MODELS for w in args.cg_workers]
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.cg_jobs) as pool:
            done = dict(zip(runs, pool.map(lambda nw: b.step_instructions(*nw), runs)))
        counts = {name: {} for name in MODELS}
        for (name, w), c in done.items():
            counts[name][str(w)] = c
            print(f"  instructions {name} workers {w}: {c['per_step']:,.0f} a step, "
                  f"{c['serial_per_step']:,.0f} serial", flush=True)
        raw["instructions"] = counts
        raw["instructions_run"] = {"script": raw["script"], "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                   "commit": raw["commit"], "cpu": cpu_model(),
                                   "openblas_kernel": f"OpenBLAS {b.cg_kernel}"}
    raw["machine"]["load_after"] = load_average()
    shutil.rmtree(tmp, ignore_errors=True)
    return raw


def timing(args, b, threads, raw):
    """The alternated rounds of wall-clock runs: training and translation, 1, 2, ... threads."""
    b.prepare_models()
    batches = {} if args.no_torch else {name: b.export(name) for name in MODELS}
    train = {n: {"workers": {}, "blas": {}, "torch": {}, "ceiling": {}} for n in MODELS}
    train_cpu = {n: {"workers": {}, "blas": {}} for n in MODELS}
    translate = {n: {"workers": {}, "blas": {}, "ceiling": {}, "startup": []} for n in MODELS}
    translate_cpu = {n: {"workers": {}, "blas": {}} for n in MODELS}

    def add(table, name, kind, t, value):
        table[name][kind].setdefault(str(t), []).append(value)

    for r in range(args.rounds):
        for name in MODELS:
            for t in threads:
                settings = [("workers", t, 1)] + ([("blas", 1, t)] if t > 1 and not args.no_blas else [])
                for kind, workers, blas in settings:
                    tps, cpu = b.nmt_train(name, workers, blas)
                    add(train, name, kind, t, tps)
                    add(train_cpu, name, kind, t, cpu)
                    print(f"  round {r + 1} train {name} {kind} {t}: {tps:.0f} tokens/s, {cpu:.1f} s CPU", flush=True)
                if batches:
                    tps = b.torch_train(name, batches[name], t)
                    add(train, name, "torch", t, tps)
                    print(f"  round {r + 1} train {name} torch {t}: {tps:.0f} tokens/s", flush=True)
            if args.ceiling:
                tps = b.ceiling_train(name)
                add(train, name, "ceiling", cores(), tps)
                print(f"  round {r + 1} train {name} {cores()} independent processes: {tps:.0f} tokens/s", flush=True)
            translate[name]["startup"].append(b.translate_seconds(name, b.empty, 1, 1)[0])
            for t in threads:
                settings = [("workers", t, 1)] + ([("blas", 1, t)] if t > 1 and not args.no_blas else [])
                for kind, workers, blas in settings:
                    sec, cpu = b.translate_seconds(name, b.src, workers, blas)
                    add(translate, name, kind, t, sec)
                    add(translate_cpu, name, kind, t, cpu)
                    print(f"  round {r + 1} translate {name} {kind} {t}: {sec:.2f} s, {cpu:.1f} s CPU", flush=True)
            if args.ceiling:
                sec = b.ceiling_translate(name, b.src)
                add(translate, name, "ceiling", cores(), sec)
                print(f"  round {r + 1} translate {name} {cores()} independent processes: {sec:.2f} s", flush=True)
        raw["machine"]["load_rounds"].append(load_average())
    raw["train_tokens_per_s"] = train
    raw["train_cpu_seconds"] = train_cpu
    raw["translate_seconds"] = translate
    raw["translate_cpu_seconds"] = translate_cpu
    raw["translate_models"] = b.model_origin


# ---------------------------------------------------------------- rendering

def ratios(values, base):
    """The median of each round's value over that round's base."""
    return statistics.median(v / b for v, b in zip(values, base))


def speeds(raw, name):
    """Sentences/s per round for each setting of a model: lines / (seconds - startup); for
    the independent processes (ceiling, keyed by their count), all their lines."""
    t = raw["translate_seconds"][name]
    lines = raw["settings"]["lines"]
    out = {}
    for kind in ("workers", "blas", "ceiling"):
        out[kind] = {k: [(int(k) if kind == "ceiling" else 1) * lines / max(s - st, 1e-9)
                         for s, st in zip(v, t["startup"])] for k, v in t.get(kind, {}).items()}
    return out


def render(raw):
    L = []
    if raw["settings"].get("timing", True):
        L += render_timing(raw)
    if raw.get("instructions"):
        if L:
            L.append("")
        L += render_instructions(raw)
    return "\n".join(L)


def render_timing(raw):
    s = raw["settings"]
    threads = s["threads"]
    names = list(MODELS)
    L = []
    head = "| threads | " + " | ".join(f"{MODELS[n]['title'].split(' (')[0]} training, tokens/s" for n in names)
    head += " | " + " | ".join(f"{MODELS[n]['title'].split(' (')[0]} translation, sentences/s" for n in names) + " |"
    L.append(head)
    L.append("|---:|" + "---:|" * (2 * len(names)))
    sp = {n: speeds(raw, n) for n in names}
    tr = raw["train_tokens_per_s"]

    def cell(values, base, t):
        med = statistics.median(values)
        return f"{med:,.0f}" if t == 1 else f"{med:,.0f} ({ratios(values, base):.2f}x)"

    def row(label, t, kind, base, cells):
        """A table row: cells(values, base values) for each model's training, then translation."""
        k = str(t)
        return (f"| {label} |" + "".join(f" {cells(tr[n][kind][k], tr[n][base]['1'])} |" for n in names)
                + "".join(f" {cells(sp[n][kind][k], sp[n][base]['1'])} |" for n in names))

    for t in threads:
        L.append(row(t, t, "workers", "workers", lambda v, b: cell(v, b, t)))
    if s.get("blas", True):
        for t in threads[1:]:
            L.append(row(f"{t}, OpenBLAS threads in one worker", t, "blas", "workers", lambda v, b: cell(v, b, t)))
    for k in tr[names[0]].get("ceiling", {}):
        L.append(row(f"{k} independent 1-thread processes, one a core (the machine's ceiling)", int(k), "ceiling",
                     "workers", lambda v, b: cell(v, b, int(k))))
    if s.get("torch"):
        for t in threads:
            k = str(t)
            L.append(f"| {t}, PyTorch |" + "".join(f" {cell(tr[n]['torch'][k], tr[n]['torch']['1'], t)} |"
                                                    for n in names) + " – |" * len(names))
    cpu_t, cpu_d = raw.get("train_cpu_seconds"), raw.get("translate_cpu_seconds")
    if cpu_t and cpu_d:
        tr, sp = cpu_t, cpu_d  # the same rows, of CPU seconds
        for t in threads[1:]:
            L.append(row(f"{t}: CPU seconds over 1 thread's", t, "workers", "workers",
                         lambda v, b: f"{ratios(v, b):.2f}x"))
    L.append("")
    L.append(f"N threads: `train.workers N` and `nmt translate --workers N` (one OpenBLAS thread each)"
             + (f"; \"OpenBLAS threads in one worker\": `train.threads N` and `--threads N` with one worker, as nmt "
                f"computed before workers" if s.get("blas", True) else "")
             + (f"; independent processes: as many 1-thread nmt processes as cores, each pinned to its own core "
                f"(sched_setaffinity) and started together on the same job, their tokens/s added up, their "
                f"sentences over the wall time until the last ended (startup taken off)" if s.get("ceiling") else "")
             + f". Ratios: each round's figure over the same round's 1-thread figure, the "
             f"median of those. Training: target tokens/s, the median of train.log's windows of 10 updates after "
             f"the first, {s['train_steps']} updates of batch {s['batch']} on data/mar.txt. Translation: "
             f"`nmt translate --batch {s['batch']}`, greedy, {s['lines']:,} lines of mar.txt (every 33rd: all "
             f"lengths), the startup (the same command on an empty input) taken off; the models: "
             + "; ".join(f"{MODELS[n]['title'].split(' (')[0]} {raw.get('translate_models', {}).get(n, '?')}"
                         for n in names)
             + (". PyTorch: the same batches (`nmt train --export-batches`), `torch.set_num_threads(N)`"
                if s.get("torch") else "")
             + f". CPU seconds: user + system time of the "
             f"whole command with N workers over that with one (the work that splitting adds; 1.00x: none).")
    L.append("")
    m = raw["timing_run"]
    loads = ", ".join(f"{x:.2f}" for x in m["load_rounds"])
    L.append(f"`{m['script']}` ({s['rounds']} rounds, each setting in turn within a round), {m['date']}, commit "
             f"{m['commit']}, on {m['cpu']}, {m['cores']} cores ({m['openblas_kernel']}); load average "
             f"{m['load_before']:.2f} before, {loads} after each round, {m['load_after']:.2f} after"
             f"{': the cores were shared with other jobs' if m['load_before'] > 0.5 else ''}"
             f"; `{raw.get('file', 'docs/bench/scaling.json')}`.")
    return L


def how_counted(steps):
    """How step_instructions counts: the words for the rendering."""
    return ((f"its first step" if steps == 1 else f"its first {steps} steps, each")
            + " counted between two of callgrind's dumps (`--dump-before=train_workers_gradients`)"
            + ("" if steps == 1 else ", their mean taken"))


def amdahl(f, n):
    return 1 / (f + (1 - f) / n)


def render_instructions(raw):
    """The callgrind counts: a step's instructions, its serial part, and what they predict."""
    cg, s, m = raw["instructions"], raw["settings"]["instructions"], raw["instructions_run"]
    names = list(MODELS)
    L = ["| model | workers | instructions a step | of them serial | serial fraction f | "
         "instructions over 1 worker's | predicted speed-up on as many cores |", "|---|---:|---:|---:|---:|---:|---:|"]
    for n in names:
        one = cg[n]["1"]["per_step"]
        for w in s["workers"]:
            c = cg[n][str(w)]
            f = c["serial_per_step"] / c["per_step"]
            # On w cores: the serial part, then the parallel part w ways (perfectly balanced).
            pred = one / (c["serial_per_step"] + c["parallel_per_step"] / w)
            L.append(f"| {MODELS[n]['title'].split(' (')[0]} | {w} | {c['per_step']:,.0f} | "
                     f"{c['serial_per_step']:,.0f} | {f:.4f} | {c['per_step'] / one:.3f}x | "
                     f"{'–' if w == 1 else f'{pred:.1f}x'} |")
    L.append("")
    steps = s["steps"]
    f1 = {n: cg[n]["1"]["serial_per_step"] / cg[n]["1"]["per_step"] for n in names}
    L.append(f"Instructions counted by callgrind (`valgrind --tool=callgrind`, deterministic, whatever the "
             f"machine's load; callgrind runs a process's threads one at a time, so any worker count can be "
             f"counted on any machine): `nmt train` on data/mar.txt, batch {raw['settings']['batch']}, no "
             f"validation, one OpenBLAS thread; {m.get('how') or how_counted(steps)}: the same "
             f"batch{'' if steps == 1 else 'es'} whatever the workers. A step: the inclusive counts of what "
             f"train_step calls, train_workers_gradients, train_workers_grad_norm and train_workers_adam (on the "
             f"caller's thread, with its share of the tasks), and of the pool's threads' tasks (for_helper). "
             f"Parallel: what the workers share out (train/parallel.c: each worker's forward and backward pass, "
             f"the gradients' sum, the norm's blocks, Adam's slices; one worker: the pass, grad_norm, "
             f"adam_update); serial: the rest of the step (starting and joining the tasks, adding up the "
             f"workers' losses and the norm's blocks; the loop's own bookkeeping between two steps, choosing "
             f"the batch, counting its tokens, the learning rate, the log line, is not counted). "
             f"Predicted speed-up on N cores: one worker's instructions a step "
             f"over (serial + parallel / N) of the N-worker run: Amdahl's law with the work that splitting "
             f"adds, counted. **A prediction, not a measurement**: it counts instructions, not time, so it "
             f"leaves out memory bandwidth, the products' lower efficiency on shards of "
             f"{raw['settings']['batch']} / N pairs, and shards of unequal lengths (the slowest worker sets the "
             f"pace). With one worker's serial fraction alone (f = "
             + ", ".join(f"{f1[n]:.4f} {MODELS[n]['title'].split(' (')[0]}" for n in names)
             + "), Amdahl's law would allow " + ", ".join(f"{amdahl(f1[n], 16):.1f}x" for n in names)
             + f" on 16 cores. `{m['script']}`, {m['date']}, commit {m['commit']}, on {m['cpu']} "
             f"(under valgrind, whose CPU has AVX2 but no AVX-512: {m['openblas_kernel']}).")
    return L


TIMING_KEYS = ("timing_run", "train_tokens_per_s", "train_cpu_seconds", "translate_seconds", "translate_cpu_seconds",
               "translate_models")
TIMING_SETTINGS = ("rounds", "train_steps", "lines", "threads", "torch", "timing")
INSTRUCTION_KEYS = ("instructions_run", "instructions")


def carry_over(raw, path):
    """Keeps the part of the earlier raw file at path that this run left out (each part
    names its own run: script, date, commit, machine)."""
    with open(path, encoding="utf-8") as f:
        old = json.load(f)
    if not raw["settings"]["timing"] and old.get("timing_run"):
        for k in TIMING_KEYS:
            raw[k] = old[k]
        for k in TIMING_SETTINGS:
            raw["settings"][k] = old["settings"][k]
    if raw["settings"]["instructions"] is None and old.get("instructions_run"):
        for k in INSTRUCTION_KEYS:
            raw[k] = old[k]
        raw["settings"]["instructions"] = old["settings"]["instructions"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny runs, /tmp output only")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", help="comma-separated thread counts (default 1, 2, 4, ... and the cores)")
    ap.add_argument("--train-steps", type=int, default=60)
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--models", help="a directory to keep the translation models in (reused when there)")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-timing", action="store_true", help="leave out the wall-clock rounds")
    ap.add_argument("--no-instructions", action="store_true", help="leave out the callgrind counts")
    ap.add_argument("--cg-workers", default="1,2,16",
                    help="worker counts whose instructions callgrind counts (any count: it runs them one at a time)")
    ap.add_argument("--cg-steps", type=int, default=1, help="steps counted in each callgrind run (stopped once they are written)")
    ap.add_argument("--cg-jobs", type=int, default=cores(), help="callgrind runs at once (default: the cores)")
    ap.add_argument("--no-blas", action="store_true", help="leave out OpenBLAS's threads in one worker")
    ap.add_argument("--ceiling", action="store_true",
                    help="also time as many independent 1-thread processes as cores (the machine's own limit)")
    ap.add_argument("--out", metavar="RAW", help="write the raw results here (default docs/bench/scaling.json)")
    ap.add_argument("--render", metavar="RAW")
    args = ap.parse_args()
    if args.render:
        print_rendered(args.render, render)
        return 0
    require_nmt("bench_scaling.py")
    args.cg_workers = [int(x) for x in args.cg_workers.split(",")]
    if args.cg_steps < 1:
        sys.exit("bench_scaling.py: --cg-steps must be at least 1")
    if args.quick:
        args.rounds, args.train_steps, args.lines, args.cg_workers, args.cg_steps = 1, 22, 100, [1, 2], 1
    raw = measure(args)
    path = os.path.abspath(args.out) if args.out else "/tmp/nmt_bench_scaling_quick.json" if args.quick else RAW
    raw["file"] = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else os.path.basename(path)
    if not args.quick and not args.out and (args.no_timing or args.no_instructions) and os.path.exists(RAW):
        carry_over(raw, RAW)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=1)
        f.write("\n")
    print(render(raw))
    print(f"wrote {path}")
    docs = [PYTHON, os.path.join(ROOT, "scripts", "docs", "docs.py"), "regenerate", "scaling"]
    if not args.quick and not args.out and subprocess.run(docs, cwd=ROOT).returncode != 0:
        print("bench_scaling.py: BENCHMARKS.md's block scaling was not regenerated: its markers are in "
              "BENCHMARKS.md's section \"Using the cores\" (put them in place, then: python3 scripts/docs/docs.py "
              "regenerate scaling)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
