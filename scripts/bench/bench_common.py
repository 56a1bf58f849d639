"""What the benchmark scripts of scripts/bench/ share: where nmt and Debian's Python are,
the settings of make bench's model and decoding (bench.py; bench_transformer.py reuses
them), running one command at a time on a shared machine with its wall time, peak RSS
and noise (Runner), what a raw result records about where it was measured (provenance),
and the median of a list of figures.

bench.py re-exports all of it, so that `from bench import Runner, provenance` keeps
working in the scripts that import it."""

import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))   # scripts/bench/ is two levels down

PYTHON = "/usr/bin/python3"       # Debian's, where python3-torch is
NMT = os.path.join(ROOT, "nmt")
E, H, BATCH, MAX_LEN, THREADS = 256, 512, 64, 20, 2
DECODE_BATCH = 64
BEAM, ALPHA = 5, 0.6    # beam search: beams, length penalty (nmt translate's default alpha)
QUIET = 0.25        # cores other processes may use during a run before it is repeated


# ---------------------------------------------------------------- running things

class Runner:
    """Runs commands one at a time, recording each (for BENCHMARKS.md) with its wall
    time and peak RSS. Never two at once: the machine has two cores."""

    def __init__(self, tmp, verbose):
        self.tmp, self.verbose, self.commands, self.env = tmp, verbose, [], dict(os.environ)
        self.recording = True      # off for rounds 2.., which repeat round 1's commands

    def run(self, argv, stdin=None, stdout=None, env=None, label=None):
        """Returns (wall seconds, peak RSS KiB, stdout text if stdout is None). Also sets
        self.others: the cores other processes kept busy meanwhile (the noise)."""
        shown = " ".join(self.shorten(a) for a in argv)
        if stdin:
            shown += " < " + self.shorten(stdin)
        if stdout:
            shown += " > " + self.shorten(stdout)
        environment = dict(self.env, **(env or {}))
        extra = {k: v for k, v in environment.items()
                 if k.startswith(("OPENBLAS_", "OMP_")) and v != os.environ.get(k)}
        prefix = " ".join(f"{k}={v}" for k, v in sorted(extra.items()))
        record = (prefix + " " + shown).strip()
        if self.recording and record not in self.commands:
            self.commands.append(record)
        if self.verbose:
            print(f"  $ {record}", flush=True)
        out_path = stdout or os.path.join(self.tmp, "stdout.txt")
        err_path = os.path.join(self.tmp, "stderr.txt")
        with open(stdin or os.devnull, "rb") as fin, open(out_path, "wb") as fout, \
                open(err_path, "wb") as ferr:
            busy, start = busy_cpu_seconds(), time.perf_counter()
            proc = subprocess.Popen(argv, stdin=fin, stdout=fout, stderr=ferr, env=environment, cwd=ROOT)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            busy = busy_cpu_seconds() - busy
        self.others = max(0.0, busy - usage.ru_utime - usage.ru_stime) / wall
        proc.returncode = os.waitstatus_to_exitcode(status)
        with open(err_path, encoding="utf-8", errors="replace") as f:
            self.last_stderr = f.read()
        if proc.returncode != 0:
            sys.exit(f"bench.py: {label or argv[0]} failed (exit {proc.returncode}):\n  {record}\n"
                     f"{self.last_stderr}")
        text = None
        if stdout is None:
            with open(out_path, encoding="utf-8") as f:
                text = f.read()
        return wall, usage.ru_maxrss, text

    def shorten(self, s):
        return s.replace(self.tmp, "$TMP").replace(ROOT + "/", "")


def provenance(paths, load_before):
    """What every raw result records about where it was measured: (commit, whether
    any of `paths` had uncommitted changes, the machine: CPU model, cores, the vector
    flags that matter, load average before and now)."""
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    cpu = next((ln.split(":", 1)[1].strip() for ln in lscpu.splitlines()
                if ln.startswith("Model name")), platform.processor())
    flags = next((ln.split(":", 1)[1].split() for ln in lscpu.splitlines() if ln.startswith("Flags")), [])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"] + list(paths), capture_output=True, text=True,
                           cwd=ROOT).stdout.strip()
    machine = {"cpu": cpu, "cores": os.cpu_count(),
               "flags": [f for f in flags if f in ("avx2", "fma", "avx512f", "avx512_bf16")],
               "load_before": round(load_before[0], 2), "load_after": round(os.getloadavg()[0], 2)}
    return commit, bool(dirty), machine


def busy_cpu_seconds():
    """CPU time spent by everything on the machine so far (from /proc/stat), seconds."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)   # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def median(xs):
    return statistics.median(xs) if xs else float("nan")
