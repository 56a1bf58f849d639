"""render_bench.py — Markdown for the speed tables that are not BENCHMARKS.md's, from
the raw results their scripts record in docs/bench/ (BENCHMARKS.md and docs/measurements.md's Speed
figures are rendered by scripts/bench/bench.py --render). A document's block is exactly
this script's output for the committed raw files, so a table cannot be edited by hand
and stay green under scripts/docs/check.sh.

    python3 scripts/docs/render_bench.py mpi docs/bench/mpi-batch64.json docs/bench/mpi-batch256.json
        docs/distributed.md's throughput table: scripts/bench/bench_mpi.sh's runs, one
        column group per file (RAW=FILE sh scripts/bench/bench_mpi.sh ROUNDS STEPS BATCH)
    python3 scripts/docs/render_bench.py family_speed docs/bench/family_speed.json
        docs/measurements.md's training speed of the model family against the baseline
        (RAW=FILE sh scripts/bench/family_speed.sh ROUNDS)

Raw files hold what was measured, per round, with the machine, date, commit and
command; medians and ratios are computed here. A file transcribed from an older
document (the script kept no raw results then) says so in "provenance", and the
rendering repeats it.
"""

import json
import statistics
import sys


def read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def rounds(n):
    return f"{n} round{'' if n == 1 else 's'}"


def thousands(x):
    return f"{x:,.0f}"


def machine(raw):
    m = raw["machine"]
    extra = [m[k] for k in ("openblas_kernel", "mpi") if m.get(k)]
    return f"{m['cpu']}, {m['cores']} cores" + (f" ({', '.join(extra)})" if extra else "")


def load(raw):
    m = raw["machine"]
    if m.get("load_before") is None:
        return ""
    return f"; load average {m['load_before']:.2f} before and {m['load_after']:.2f} after"


def provenance(raw):
    return "" if raw["provenance"] == "measured" else f" {raw['provenance']}"


# ---------------------------------------------------------------- docs/distributed.md

SETUPS = (("1x2", "1 x 2"), ("2x1", "2 x 1"), ("1x1", "1 x 1"))


def mpi(paths):
    """The throughput table of 1 rank x 2 threads, 2 ranks x 1 thread and 1 x 1, one
    column group per raw file (a global batch size each), then the per-round figures,
    where and when, and the bytes one step sums."""
    raws = [read(p) for p in paths]
    head = "| ranks x threads |"
    rule = "|---|"
    for r in raws:
        b = r["settings"]["batch"]
        head += f" batch {b}: target tokens/s | vs 1 x 1 | allreduce s/step |"
        rule += "---:|---:|---:|"
    L = [head, rule]
    med = [{k: statistics.median(r["tokens_per_s"][k]) for k, _ in SETUPS} for r in raws]
    for key, label in SETUPS:
        row = f"| {label} |"
        for r, m in zip(raws, med):
            ar = f"{statistics.median(r['allreduce_s']):.3f}" if key == "2x1" else "–"
            row += f" {thousands(m[key])} | {m[key] / m['1x1']:.2f} | {ar} |"
        L.append(row)
    L.append("")
    per_round = []
    for r in raws:
        per = "; ".join(f"{label} " + ", ".join(f"{x:.0f}" for x in r["tokens_per_s"][key])
                        for key, label in SETUPS)
        per += "; allreduce " + ", ".join(f"{x:.3f}" for x in r["allreduce_s"]) + " s"
        per_round.append(f"Per round (batch {r['settings']['batch']}): {per}.")
    L.append(" ".join(per_round))
    L.append("")
    for r, p in zip(raws, paths):
        s = r["settings"]
        L.append(f"- `{r['script']}` ({rounds(s['rounds'])} of {s['steps']} updates, global batch "
                 f"{s['batch']}): {r['date']}, commit {r['commit']}, on {machine(r)}{load(r)}; "
                 f"`{p}`.")
    notes = []
    for r in raws:
        if provenance(r) and provenance(r) not in notes:
            notes.append(provenance(r))
    if notes:
        L.append("")
        L.append("Note:" + "".join(notes))
    params = raws[0]["parameters"]
    mb = (params + 3) * 4 / 1e6
    L.append("")
    L.append(f"Bytes per step: ({params:,} + 3) × 4 = **{mb:.1f} MB** summed. A ring allreduce sends "
             f"(and receives) 2(N−1)/N of that per rank: {mb:.1f} MB at N = 2, {mb * 2 * 7 / 8:.1f} MB at "
             f"N = 8, {mb * 2 * 63 / 64:.1f} MB at N = 64.")
    return "\n".join(L)


# ---------------------------------------------------------------- docs/measurements.md: the family's speed

def family_speed(paths):
    """Each family config's training speed over the baseline's, measured back to back."""
    raw = read(paths[0])
    s = raw["settings"]
    measured = all(c.get("ratios") for c in raw["configs"])
    if measured:
        L = ["| config | target tokens/s | bahdanau, same rounds | speed vs bahdanau |", "|---|---:|---:|---:|"]
    else:
        L = ["| config | speed vs bahdanau |", "|---|---:|"]
    self_ratio = None
    for c in raw["configs"]:
        ratio = statistics.median(c["ratios"]) if c.get("ratios") else c["ratio_as_printed"]
        if c["name"] == "bahdanau":
            self_ratio = ratio
        if measured:
            L.append(f"| `{c['name']}` | {thousands(statistics.median(c['tokens_per_s']))} | "
                     f"{thousands(statistics.median(c['baseline_tokens_per_s']))} | {ratio:.2f} |")
        else:
            L.append(f"| `{c['name']}` | {ratio:.2f} |")
    L.append("")
    noise = ("" if self_ratio is None else
             f" The baseline against itself came out at {self_ratio:.2f}, which is the noise.")
    L.append(f"Each config's target tokens/s over {s['steps']} updates (the log windows after the first "
             f"{s['warmup_steps']}) divided by the baseline's, measured right after it; medians of "
             f"{rounds(s['rounds'])}. `{raw['script']}`, {raw['date']}, commit {raw['commit']}, on "
             f"{machine(raw)}; `{paths[0]}`.{noise}{provenance(raw)}")
    return "\n".join(L)


def main(argv):
    kinds = {"mpi": mpi, "family_speed": family_speed}
    if len(argv) < 2 or argv[0] not in kinds:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    print(kinds[argv[0]](argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
