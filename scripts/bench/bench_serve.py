#!/usr/bin/env python3
"""bench_serve.py — nmt serve under load against nmt translate on the same lines (issue 33).

    python3 scripts/bench/bench_serve.py [--nmt ./nmt] [--model MODEL.bin] [--seconds 10] [--rounds 3]
                                         [--lines-per-request 1,16] [--soak 180]
                                         [--out docs/bench/serve.json]

`make bench-serve` runs it. Needs wrk (sh scripts/install-deps.sh --bench). Without
--model it trains a small Transformer on data/mar.txt first (under a minute on 2 cores).

For each lines-per-request count B, in each round (A B A B: the command line and the
server alternate, so that both see the same machine):
  - nmt translate MODEL LINES --workers W --batch B: sentences/s over 2,000 lines;
  - nmt serve MODEL --workers W --batch B, then wrk (scripts/bench/serve_post.lua) with
    1, 4 and 16 connections for --seconds each, every request POST /translate with B of
    the same lines: requests/s, sentences/s, latency p50/p90/p99 (wrk's histogram).
The ratio that matters is the server's sentences/s at 16 connections (saturation) over
the command line's, per round, and its median over the rounds. On a machine shared with
other work, wall-clock rates swing with the load; so each run also counts CPU seconds
(the command's from getrusage, the server's from /proc/PID/stat around each wrk run):
sentences per CPU second is what a saturated machine turns into sentences/s, and the
server's over the command line's is the ratio that the load disturbs least. Then a soak:
the server under 16 connections for --soak seconds, its VmRSS sampled every 2 s.

Writes the raw figures to --out (JSON) and prints the tables BENCHMARKS.md's "nmt serve
under load" section shows. The load average and the CPU model go with them: this
machine's 2 cores are shared, so only same-round ratios mean much.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NMT = os.path.join(ROOT, "nmt")
LUA = os.path.join(ROOT, "scripts", "bench", "serve_post.lua")


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "?"


def commit():
    """HEAD's short hash, marked when the tree has changes."""
    git = lambda *args: subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True).stdout
    head = git("rev-parse", "--short", "HEAD").strip() or "?"
    return head + (" (uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no").strip() else "")


def load():
    return float(open("/proc/loadavg").read().split()[0])


MODEL_DESCRIPTION = ("a Transformer (embed 64, 4 heads, ff 128, 2+2 layers) trained 3 epochs on every fifth pair of "
                     "data/mar.txt")


def train_model(tmp):
    src = os.path.join(ROOT, "data", "mar.txt")
    train = os.path.join(tmp, "train.tsv")
    with open(src) as f, open(train, "w") as out:
        for i, line in enumerate(f):
            if i % 5 == 0:
                out.write(line)
    cfg = os.path.join(tmp, "bench.json")
    with open(cfg, "w") as f:
        json.dump({"data": {"train": train},
                   "model": {"type": "transformer", "embed": 64, "heads": 4, "ff": 128, "layers": 2},
                   "train": {"batch_size": 64, "epochs": 3, "learning_rate": 0.002, "threads": 2, "valid_bleu_max": 0},
                   "output": {"dir": os.path.join(tmp, "model")}}, f)
    subprocess.run([NMT, "train", cfg, "--quiet"], check=True)
    return os.path.join(tmp, "model", "model.bin")


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cli_rate(model, lines_file, n_lines, workers, batch):
    """(sentences per second, CPU milliseconds per sentence) of nmt translate."""
    t0, c0 = time.monotonic(), children_cpu_s()
    subprocess.run([NMT, "translate", model, lines_file, "--workers", str(workers), "--batch", str(batch)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return n_lines / (time.monotonic() - t0), 1e3 * (children_cpu_s() - c0) / n_lines


class Server:
    def __init__(self, model, workers, batch, log):
        self.p = subprocess.Popen([NMT, "serve", model, "--listen", "127.0.0.1:0", "--workers", str(workers),
                                   "--batch", str(batch), "--queue", "64"],
                                  stdout=subprocess.PIPE, stderr=log, text=True)
        self.url = self.p.stdout.readline().strip()  # printed once listening
        if not self.url:
            raise RuntimeError("nmt serve printed no address")

    def cpu_s(self):
        """The server's user + system CPU seconds so far (all its threads)."""
        fields = open("/proc/%d/stat" % self.p.pid).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kib(self):
        m = re.search(r"^VmRSS:\s+(\d+) kB", open("/proc/%d/status" % self.p.pid).read(), re.M)
        return int(m.group(1))

    def stop(self):
        self.p.terminate()
        rc = self.p.wait(timeout=120)
        if rc != 0:
            raise RuntimeError("nmt serve exited %d after SIGTERM" % rc)


def wrk(srv, lines_file, per, connections, seconds, tmp):
    summary = os.path.join(tmp, "wrk.json")
    env = dict(os.environ, LINES_FILE=lines_file, LINES=str(per), SUMMARY=summary)
    c0 = srv.cpu_s()
    subprocess.run(["wrk", "-t1", "-c%d" % connections, "-d%ds" % seconds, "--timeout", "60s", "-s", LUA, srv.url],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    cpu = srv.cpu_s() - c0
    s = json.load(open(summary))
    s["cpu_ms_per_sentence"] = 1e3 * cpu / max(1, s["requests"] * per)
    s["connections"] = connections
    s["requests_per_s"] = s["requests"] / s["seconds"]
    s["sentences_per_s"] = s["requests"] * per / s["seconds"]
    return s


def main():
    global NMT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nmt", default=NMT, help="the nmt binary measured (default ./nmt; a copy keeps a rebuild "
                    "during the run out of the figures)")
    ap.add_argument("--model")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--lines-per-request", default="1,16")
    ap.add_argument("--soak", type=int, default=180)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "bench", "serve.json"))
    ap.add_argument("--render", metavar="RAW.json", help="print BENCHMARKS.md's section from a raw file, run nothing")
    a = ap.parse_args()
    if a.render:
        print(render(json.load(open(a.render))))
        return 0
    NMT = os.path.abspath(a.nmt)
    tmp = tempfile.mkdtemp(prefix="nmt-bench-serve-")
    model = a.model or train_model(tmp)
    lines_file = os.path.join(tmp, "src.txt")
    with open(os.path.join(ROOT, "data", "mar.txt")) as f, open(lines_file, "w") as out:
        picked = [line.split("\t")[0] for i, line in enumerate(f) if i % 13 == 0][:2000]
        out.write("\n".join(picked) + "\n")
    log = open(os.path.join(tmp, "serve.log"), "w")
    result = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit(),
              "script": "python3 scripts/bench/bench_serve.py" + "".join(" " + x for x in sys.argv[1:]),
              "provenance": "measured", "machine": {"cpu": cpu_model(), "cores": os.cpu_count()},
              "model": model, "model_description": "the given model" if a.model else MODEL_DESCRIPTION,
              "workers": a.workers, "seconds_per_run": a.seconds, "lines": len(picked), "runs": []}
    for per in [int(x) for x in a.lines_per_request.split(",")]:
        for r in range(a.rounds):
            run = {"lines_per_request": per, "round": r + 1, "load_before": load()}
            run["cli_sentences_per_s"], run["cli_cpu_ms_per_sentence"] = cli_rate(model, lines_file, len(picked),
                                                                                  a.workers, per)
            srv = Server(model, a.workers, per, log)
            run["server"] = [wrk(srv, lines_file, per, c, a.seconds, tmp) for c in (1, 4, 16)]
            srv.stop()
            run["load_after"] = load()
            run["ratio_at_16"] = run["server"][-1]["sentences_per_s"] / run["cli_sentences_per_s"]
            run["cpu_ratio_at_16"] = run["cli_cpu_ms_per_sentence"] / run["server"][-1]["cpu_ms_per_sentence"]
            result["runs"].append(run)
            print("B=%d round %d: cli %.1f sent/s %.3f CPU ms/sent; server %s; ratio %.3f, per CPU s %.3f "
                  "(load %.1f)" % (
                      per, r + 1, run["cli_sentences_per_s"], run["cli_cpu_ms_per_sentence"],
                      ", ".join("c%d %.1f sent/s %.3f CPU ms/sent p50 %.1f p99 %.1f ms" % (
                          s["connections"], s["sentences_per_s"], s["cpu_ms_per_sentence"], s["p50_ms"], s["p99_ms"])
                                for s in run["server"]),
                      run["ratio_at_16"], run["cpu_ratio_at_16"], run["load_before"]), flush=True)
    if a.soak > 0:
        srv = Server(model, a.workers, 1, log)
        env = dict(os.environ, LINES_FILE=lines_file, LINES="1", SUMMARY=os.path.join(tmp, "soak.json"))
        load_gen = subprocess.Popen(["wrk", "-t1", "-c16", "-d%ds" % a.soak, "--timeout", "60s", "-s", LUA, srv.url],
                                    env=env, stdout=subprocess.DEVNULL)
        samples, t0 = [], time.monotonic()
        while load_gen.poll() is None:
            samples.append([round(time.monotonic() - t0, 1), srv.rss_kib()])
            time.sleep(2)
        samples.append([round(time.monotonic() - t0, 1), srv.rss_kib()])
        srv.stop()
        soak = json.load(open(os.path.join(tmp, "soak.json")))
        quarter = max(1, len(samples) // 4)
        soak.update({"rss_kib": samples, "rss_first_quarter_kib": statistics.mean(s[1] for s in samples[:quarter]),
                     "rss_last_quarter_kib": statistics.mean(s[1] for s in samples[-quarter:]),
                     "rss_max_kib": max(s[1] for s in samples)})
        result["soak"] = soak
        print("soak %d s: %d requests, non-2xx %d; VmRSS first quarter %.0f KiB, last quarter %.0f KiB, max %d KiB" % (
            a.soak, soak["requests"], soak["non_2xx"], soak["rss_first_quarter_kib"], soak["rss_last_quarter_kib"],
            soak["rss_max_kib"]))
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print("wrote", a.out, "\n")
    print(render(result))


def render(raw):
    """BENCHMARKS.md's section "nmt serve under load" from the raw figures (medians over
    the rounds; each round's ratio too)."""
    m, out = raw["machine"], []
    out.append("Measured by `%s` on %s, nmt at %s: %s, %d cores, load average %.1f to %.1f during the "
               "runs (the machine is shared with other work). The model: %s; %d workers for both; %d "
               "source lines of data/mar.txt, each wrk run %d s (scripts/bench/serve_post.lua: POST "
               "/translate, the lines in turn). Raw figures: `docs/bench/serve.json`." % (
                   raw["script"], raw["date"], raw["commit"], m["cpu"], m["cores"],
                   min(r["load_before"] for r in raw["runs"]), max(r["load_after"] for r in raw["runs"]),
                   raw["model_description"], raw["workers"], raw["lines"], raw["seconds_per_run"]))
    for per in sorted({run["lines_per_request"] for run in raw["runs"]}):
        runs = [run for run in raw["runs"] if run["lines_per_request"] == per]
        out.append("")
        out.append("%d line%s per request (`nmt translate --batch %d` against `nmt serve --batch %d`), medians of "
                   "%d rounds:" % (per, "" if per == 1 else "s", per, per, len(runs)))
        out.append("")
        out.append("| clients | requests/s | sentences/s | CPU ms per sentence | p50 ms | p99 ms |")
        out.append("|---:|---:|---:|---:|---:|---:|")
        for k, c in enumerate((1, 4, 16)):
            med = lambda key: statistics.median(run["server"][k][key] for run in runs)
            out.append("| %d | %.1f | %.1f | %.3f | %.1f | %.1f |" % (
                c, med("requests_per_s"), med("sentences_per_s"), med("cpu_ms_per_sentence"), med("p50_ms"),
                med("p99_ms")))
        out.append("| nmt translate | | %.1f | %.3f | | |" % (
            statistics.median(run["cli_sentences_per_s"] for run in runs),
            statistics.median(run["cli_cpu_ms_per_sentence"] for run in runs)))
        out.append("")
        out.append("- server at 16 clients over nmt translate, sentences/s: %s (rounds); median %.2f" % (
            ", ".join("%.2f" % run["ratio_at_16"] for run in runs),
            statistics.median(run["ratio_at_16"] for run in runs)))
        out.append("- the same, sentences per CPU second: %s; median %.2f" % (
            ", ".join("%.2f" % run["cpu_ratio_at_16"] for run in runs),
            statistics.median(run["cpu_ratio_at_16"] for run in runs)))
    soak = raw.get("soak")
    if soak:
        out.append("")
        out.append("Soak: %d clients for %.0f s, one line per request: %d requests, %d not 2xx, %d socket errors, "
                   "p50 %.1f ms, p99 %.1f ms. VmRSS (every 2 s): %d KiB after 2 s, %.0f KiB over the first "
                   "quarter, %.0f KiB over the last, %d KiB at most." % (
                       16, soak["seconds"], soak["requests"], soak["non_2xx"], soak["socket_errors"],
                       soak["p50_ms"], soak["p99_ms"], soak["rss_kib"][1][1] if len(soak["rss_kib"]) > 1 else 0,
                       soak["rss_first_quarter_kib"], soak["rss_last_quarter_kib"], soak["rss_max_kib"]))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
