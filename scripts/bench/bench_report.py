"""The report of make bench (bench.py): BENCHMARKS.md's text and README's Speed figures,
rendered from a raw result alone (docs/bench/pytorch.json), so that scripts/docs/check.sh
can verify that the documents are exactly what the recorded measurements give.

    python3 scripts/bench/bench.py --render docs/bench/pytorch.json [--readme]
"""

from bench_common import ALPHA, BATCH, BEAM, DECODE_BATCH, E, H, MAX_LEN, THREADS, median


# ---------------------------------------------------------------- the report

def summary(raw):
    """The medians and derived figures of a raw result (see Bench.raw_results)."""
    R, d = raw["rounds"], raw["data"]
    s = {}

    def pair(key, field):
        def med(who):
            xs = [r[f"{who}_{key}"].get(field) for r in R if f"{who}_{key}" in r]
            xs = [x for x in xs if x is not None]
            if not xs and field in raw.get("medians_only", {}).get(key, {}):
                return raw["medians_only"][key][field][0 if who == "nmt" else 1]
            return median(xs)
        return med("nmt"), med("torch")

    s["train"] = pair("train", "tokens_per_s")
    s["train_rss"] = pair("train", "rss_kib")
    s["loss"] = pair("train", "loss_last10")
    for b in (1, DECODE_BATCH):
        s[f"greedy{b}"] = pair(f"greedy{b}", "sentences_per_s")
        s[f"steps{b}"] = pair(f"greedy{b}", "steps_per_sentence")
        s[f"greedy_rss{b}"] = pair(f"greedy{b}", "rss_kib")
        s[f"beam{b}"] = pair(f"beam{b}", "sentences_per_s")
        s[f"beam_steps{b}"] = pair(f"beam{b}", "steps_per_sentence")
        s[f"beam_rss{b}"] = pair(f"beam{b}", "rss_kib")
    s["startup"] = pair("greedy1", "startup_s")[0]
    s["gemm_flops_per_token"] = d["gemm_flops_per_token"]
    limit = raw["sgemm"]["by_kernel"][raw["kernel"]]["limit_gflops"]
    s["limit"] = limit
    s["roofline"] = tuple(tps * s["gemm_flops_per_token"] / (limit * 1e9) for tps in s["train"])
    return s


def ratio(p):
    return p[0] / p[1] if p[1] else float("nan")


def headline_rows(raw, s):
    """The headline table's rows: BENCHMARKS.md's, or (readme=True) README's shorter one."""
    R = raw["rounds"]
    mib = 1 / 1024
    rows = [
        "| figure | nmt | PyTorch | nmt / PyTorch |",
        "| --- | ---: | ---: | ---: |",
        f"| training, target tokens/s | {s['train'][0]:,.0f} | {s['train'][1]:,.0f} | "
        f"{ratio(s['train']):.2f} |",
        f"| greedy, sentences/s, line by line | {s['greedy1'][0]:,.1f} | {s['greedy1'][1]:,.1f} | "
        f"{ratio(s['greedy1']):.2f} |",
    ]
    if "nmt_greedy64" in R[0]:
        rows.append(f"| greedy, sentences/s, batches of {DECODE_BATCH} | {s['greedy64'][0]:,.0f} | "
                    f"{s['greedy64'][1]:,.0f} | {ratio(s['greedy64']):.2f} |")
    else:
        rows.append(f"| greedy, sentences/s, batches of {DECODE_BATCH} | (no --batch) | "
                    f"{s['greedy64'][1]:,.0f} | |")
    n_beam1 = R[0]["nmt_beam1"]["sentences"]
    rows.append(f"| beam {BEAM}, sentences/s, line by line (first {n_beam1:,} sentences) | "
                f"{s['beam1'][0]:,.1f} | {s['beam1'][1]:,.1f} | {ratio(s['beam1']):.2f} |")
    if "nmt_beam64" in R[0]:
        rows.append(f"| beam {BEAM}, sentences/s, batches of {DECODE_BATCH} | {s['beam64'][0]:,.1f} | "
                    f"{s['beam64'][1]:,.1f} | {ratio(s['beam64']):.2f} |")
    else:
        rows.append(f"| beam {BEAM}, sentences/s, batches of {DECODE_BATCH} | (no --batch) | "
                    f"{s['beam64'][1]:,.1f} | |")
    beam_steps = s["beam_steps64"] if "nmt_beam64" in R[0] else s["beam_steps1"]
    rows += [
        f"| decoder steps per sentence (greedy, own trained model) | {s['steps1'][0]:.2f} | "
        f"{s['steps1'][1]:.2f} | {ratio(s['steps1']):.2f} |",
        f"| output words + 1 per sentence (beam {BEAM}, own trained model) | {beam_steps[0]:.2f} | "
        f"{beam_steps[1]:.2f} | {ratio(beam_steps):.2f} |",
        f"| peak RSS, training, MiB | {s['train_rss'][0] * mib:,.0f} | {s['train_rss'][1] * mib:,.0f} | "
        f"{ratio(s['train_rss']):.2f} |",
        f"| peak RSS, translating line by line, MiB | {s['greedy_rss1'][0] * mib:,.0f} | "
        f"{s['greedy_rss1'][1] * mib:,.0f} | {ratio(s['greedy_rss1']):.2f} |",
    ]
    if "nmt_beam64" in R[0]:
        rows.append(f"| peak RSS, beam {BEAM} in batches of {DECODE_BATCH}, MiB | "
                    f"{s['beam_rss64'][0] * mib:,.0f} | {s['beam_rss64'][1] * mib:,.0f} | "
                    f"{ratio(s['beam_rss64']):.2f} |")
    rows.append(f"| training, fraction of the sgemm limit ({s['limit']:.0f} GFLOP/s) | "
                f"{100 * s['roofline'][0]:.0f}% | {100 * s['roofline'][1]:.0f}% | |")
    return rows


def machine_line(raw):
    m = raw["machine"]
    return f"{m['cpu']}, {m['cores']} cores"


def agreement_sentence(ag):
    def said(x):
        d = x["first_difference"]
        return f"{x['same']:,} of {x['sentences']:,} sentences identical" + (
            "" if d is None else f" (first difference, line {d['line']}: PyTorch `{d['pytorch']}`, "
            f"nmt `{d['nmt']}`)")
    return (f"greedy: {said(ag['greedy'])}; beam {BEAM}: {said(ag['beam'])}")


def render(raw):
    """BENCHMARKS.md's text (without the generated-block markers) from a raw result."""
    s, R, d, st = summary(raw), raw["rounds"], raw["data"], raw["settings"]
    mib = 1 / 1024
    kernel = raw["kernel"]
    L = []
    w = L.append
    w("# Benchmarks: nmt against PyTorch on the same CPU")
    w("")
    w(f"Written by `{raw['script']}` on {raw['date']}; nmt at commit {raw['commit']}"
      f"{' (src/ has uncommitted changes)' if raw['src_modified'] else ''}. "
      "This page is rendered from the raw results in `docs/bench/pytorch.json` "
      "(`python3 scripts/bench/bench.py --render docs/bench/pytorch.json`).")
    if raw.get("provenance", "measured") != "measured":
        w("")
        w(f"Note: {raw['provenance']}")
    w("")
    w(f"- Machine: {machine_line(raw)}; load average "
      f"{raw['machine']['load_before']:.2f} before the run and {raw['machine']['load_after']:.2f} after "
      "(the machine is shared: figures are medians of runs alternating the two programs).")
    w(f"- Data: `{d['path']}`, the first {d['batches']} training batches "
      f"of nmt's own order (batch {BATCH}, max_len {MAX_LEN}; {d['target_tokens']:,} "
      f"target tokens; vocabularies {d['vocab'][0]:,} source / {d['vocab'][1]:,} target words), "
      f"exported with `nmt train --export-batches`; {d['test_sentences']:,} held-out sentences for "
      "decoding.")
    w(f"- Model: embed {E}, hidden {H}, Bahdanau attention; Adam 1e-3, clip 5; {THREADS} threads each.")
    t0 = R[0]["torch_train"]
    w(f"- BLAS: both on OpenBLAS with `OPENBLAS_CORETYPE={kernel}` (nmt's own choice; "
      f"PyTorch {t0['kernel']!r} as it reported it; torch {t0.get('aten', '?')} "
      "ATen kernels). PyTorch: Debian python3-torch, `OMP_WAIT_POLICY=PASSIVE`, "
      "`torch.set_num_threads(2)`, `OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=2`.")
    w(f"- {st['rounds']} round{'s' if st['rounds'] > 1 else ''}; training figures exclude the first "
      f"{st['warmup']} batches and count step time only; decoding (greedy and beam {BEAM}) uses the model "
      "each program has just trained on the same batches.")
    w("")
    w("## Headline (medians)")
    w("")
    L.extend(headline_rows(raw, s))
    w("")
    w(f"Ratios are of the medians. The losses after training (mean of the last 10 batches) agree, "
      f"which says the two programs train the same model: nmt {s['loss'][0]:.3f}, PyTorch "
      f"{s['loss'][1]:.3f}.")
    w("")
    n_beam1 = R[0]["nmt_beam1"]["sentences"]
    w(f"Beam search: {BEAM} beams, length penalty lp(n) = ((5 + n) / 6)^{ALPHA} (n counts the <eos>), "
      "by nmt's rules (src/decode/decode.c, decode_beam): all beams of the sentences decoded together form one "
      "batch of rows; each step extends every live beam by every word but <pad> and <sos>, walks the "
      f"{2 * BEAM} best candidates of each sentence best first, an <eos> finishing a hypothesis "
      f"(log-probability / lp) and any other word continuing as a beam, at most {BEAM} of each; a "
      f"sentence stops when {BEAM} hypotheses have finished, no beam continues or its limit "
      "2 * source length + 10 is reached. scripts/bench/bench_torch.py --mode beam is the same search "
      "in PyTorch (topk over each sentence's beams x vocabulary, decoder states reordered by "
      "index_select). Line by line (no `--batch`), beam search is timed on the first "
      f"{n_beam1:,} sentences only, to keep the run short; every other decoding figure uses all "
      f"{d['test_sentences']:,}.")
    if raw.get("agreement"):
        w("")
        w("Same search, checked: PyTorch decoding with the weights of round 1's nmt model "
          "(`bench_torch.py --nmt-weights`, in batches of 64) against `nmt translate` with that model, "
          f"word for word (nmt's output re-tokenised): {agreement_sentence(raw['agreement'])}.")
    w("")
    w("## Raw figures per round")
    w("")
    cols = ["train tok/s", "train RSS MiB", "greedy/1 sent/s", "steps/sent", "greedy/1 RSS MiB",
            f"greedy/{DECODE_BATCH} sent/s", f"greedy/{DECODE_BATCH} row steps/sent",
            "others' CPU (train, greedy/1)"]
    w("| round | program | " + " | ".join(cols) + " |")
    w("| --- | --- |" + " ---: |" * len(cols))
    for i, r in enumerate(R):
        for who in ("nmt", "torch"):
            tr, g1, g64 = r[f"{who}_train"], r[f"{who}_greedy1"], r.get(f"{who}_greedy64")
            cells = [f"{tr['tokens_per_s']:.0f}", f"{tr['rss_kib'] * mib:.0f}",
                     f"{g1['sentences_per_s']:.1f}", f"{g1['steps_per_sentence']:.2f}",
                     f"{g1['rss_kib'] * mib:.0f}",
                     f"{g64['sentences_per_s']:.0f}" if g64 else "-",
                     f"{g64['row_steps_per_sentence']:.2f}" if g64 else "-",
                     f"{tr['others']:.2f}, {g1['others']:.2f}"]
            w(f"| {i + 1} | {'nmt' if who == 'nmt' else 'PyTorch'} | " + " | ".join(cells) + " |")
    w("")
    w("Per-round ratios nmt/PyTorch, training: " + ", ".join(
        f"{r['nmt_train']['tokens_per_s'] / r['torch_train']['tokens_per_s']:.2f}" for r in R) +
      "; greedy line by line: " + ", ".join(
        f"{r['nmt_greedy1']['sentences_per_s'] / r['torch_greedy1']['sentences_per_s']:.2f}" for r in R) +
      f"; beam {BEAM} line by line: " + ", ".join(
        f"{r['nmt_beam1']['sentences_per_s'] / r['torch_beam1']['sentences_per_s']:.2f}" for r in R) +
      ("" if "nmt_beam64" not in R[0] else f"; beam {BEAM} in batches of {DECODE_BATCH}: " + ", ".join(
          f"{r['nmt_beam64']['sentences_per_s'] / r['torch_beam64']['sentences_per_s']:.2f}" for r in R)) +
      ".")
    w("")
    cols = ["beam/1 sent/s", "beam/1 RSS MiB", f"beam/{DECODE_BATCH} sent/s",
            f"beam/{DECODE_BATCH} words+1/sent", f"beam/{DECODE_BATCH} search steps/sent",
            f"beam/{DECODE_BATCH} RSS MiB", f"others' CPU (beam/1, beam/{DECODE_BATCH})"]
    w(f"Beam {BEAM}:")
    w("")
    w("| round | program | " + " | ".join(cols) + " |")
    w("| --- | --- |" + " ---: |" * len(cols))
    for i, r in enumerate(R):
        for who in ("nmt", "torch"):
            b1, b64 = r[f"{who}_beam1"], r.get(f"{who}_beam{DECODE_BATCH}")
            search = b64 and b64.get("search_steps_per_sentence")
            cells = [f"{b1['sentences_per_s']:.1f}", f"{b1['rss_kib'] * mib:.0f}",
                     f"{b64['sentences_per_s']:.1f}" if b64 else "-",
                     f"{b64['steps_per_sentence']:.2f}" if b64 else "-",
                     f"{search:.2f}" if search else "-",
                     f"{b64['rss_kib'] * mib:.0f}" if b64 else "-",
                     f"{b1['others']:.2f}, {b64['others']:.2f}" if b64 else f"{b1['others']:.2f}"]
            w(f"| {i + 1} | {'nmt' if who == 'nmt' else 'PyTorch'} | " + " | ".join(cells) + " |")
    w("")
    w("\"Others' CPU\" is how many cores other processes kept busy during that run (from /proc/stat, "
      f"minus the run's own CPU time). Every run waited for a quiet second first, and a run during "
      f"which others used {st['quiet']} cores or more was repeated (at most 3 attempts, "
      f"{st['retry_budget']:.0f} s of waiting and repeating in all); the quietest attempt is kept. "
      f"Repeated runs: {raw['repeats']}.")
    gone = []
    for i, r in enumerate(R):
        for key, x in r.items():
            for dis in x.get("discarded", []):
                fig = dis.get("tokens_per_s", dis.get("sentences_per_s"))
                gone.append(f"round {i + 1} {key.replace('_', ' ')} {fig:.0f} (others {dis['others']:.2f})")
    if gone:
        w("Discarded attempts: " + "; ".join(gone) + ".")
    w("")
    w(f"nmt translate's start-up (loading the model; subtracted from its time): "
      f"{s['startup']:.2f} s. Decoder steps per sentence: "
      "words + 1 for <eos>, or the limit 2 * source length + 10; for nmt they are counted by "
      "re-tokenising its output (a Python copy of src/text/text.c's rule), for PyTorch exactly. "
      "\"Row steps\" are the decoder steps a batch runs (until its last sentence ends) per sentence. "
      "For beam search the output shows only the chosen hypothesis, so \"words + 1\" is its length "
      "(with <eos>, or the limit); the search itself runs on until its stopping rule, which PyTorch "
      "counts (\"search steps\": the steps each sentence's search ran).")
    w("")
    w("## Roofline")
    w("")
    sg = raw["sgemm"]
    w(f"Matrix-product work, counted from the exported batches (every product of the forward and "
      f"backward pass, 2·M·N·K, at the padded sizes nmt computes): "
      f"**{s['gemm_flops_per_token'] / 1e6:.1f} MFLOP per target token**. Padding: "
      f"{100 * d['tgt_fill']:.0f}% of target slots and {100 * d['src_fill']:.0f}% of source slots "
      "hold real tokens. Not counted: the attention's elementwise work, roughly "
      f"{d['att_flops_per_token'] / 1e6:.2f} MFLOP per token (~15 operations per decoder step, source "
      "position, sentence and unit, tanh counted as one).")
    w("")
    w(f"OpenBLAS sgemm at those shapes (a batch of mean length: S = {sg['S']}, T = {sg['T']}, "
      f"B = {BATCH}), {THREADS} threads, best of {st['sgemm_trials']} trials of 0.05 s or more:")
    w("")
    w(f"| product | op | M | N | K | calls | GFLOP/s {kernel} | GFLOP/s Prescott |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    rk, rp = sg["by_kernel"][kernel]["rates"], sg["by_kernel"]["Prescott"]["rates"]
    for (name, ta, tb, M, N, K, c), x, y in zip(sg["shapes"], rk, rp):
        w(f"| {name} | {ta}{tb} | {M} | {N} | {K} | {c} | {x:.0f} | {y:.0f} |")
    w("")
    w(f"FLOP-weighted mean (total FLOPs over total time at these rates), **the sgemm limit: "
      f"{s['limit']:.0f} GFLOP/s** ({sg['by_kernel']['Prescott']['limit_gflops']:.0f} on Prescott). "
      f"The two passes alone gave " + " and ".join(
          f"{x:.0f} (others' CPU {o:.2f} cores)" for x, o in
          zip(sg['by_kernel'][kernel]['passes'], sg['by_kernel'][kernel]['others'])) +
      "; the table and the limit take each shape's better rate. "
      f"At that rate the matrix products alone would allow "
      f"{s['limit'] * 1e9 / s['gemm_flops_per_token']:,.0f} target tokens/s.")
    w("")
    w(f"nmt trains at {s['train'][0]:,.0f} tokens/s x {s['gemm_flops_per_token'] / 1e6:.1f} MFLOP = "
      f"{s['train'][0] * s['gemm_flops_per_token'] / 1e9:.0f} GFLOP/s: **{100 * s['roofline'][0]:.0f}% "
      f"of the sgemm limit**; PyTorch {100 * s['roofline'][1]:.0f}% (counting the same work; its "
      "packed encoder skips the source padding, so it does slightly less).")
    w("")
    w("## Scaling (nmt)")
    w("")
    w("| batches | target tokens | step time, s | s per step | µs per token | epoch-equivalent, s | "
      "others' CPU |")
    w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    per_epoch = d["batches_per_epoch"]
    for frac, r in raw["scaling"]:
        w(f"| {r['steps']} ({100 * frac:.0f}%) | {r['tokens']:,} | {r['train_seconds']:.1f} | "
          f"{r['train_seconds'] / r['steps']:.3f} | {1e6 * r['train_seconds'] / r['tokens']:.0f} | "
          f"{r['train_seconds'] / r['steps'] * per_epoch:.0f} | {r['others']:.2f} |")
    w("")
    w(f"Three fresh runs one after the other, so that they share the machine's conditions. Step time "
      f"is the sum of nmt's per-step times from train.log (data loading, validation and "
      f"checkpoints excluded); epoch-equivalent = time per step x {per_epoch} batches (one epoch of "
      "this split). Linear scaling means constant µs per token; the 25% and 50% runs use the first "
      "batches of the same order, whose lengths differ a little from the whole.")
    one = raw["threads1"]
    two = raw["scaling"][-1][1]
    w("")
    w(f"Threads (after the first {st['warmup']} batches): 1 thread {one['tokens_per_s']:,.0f} tokens/s, "
      f"2 threads {two['tokens_per_s']:,.0f} (the 100% run just before it; median of the rounds "
      f"{s['train'][0]:,.0f}): speed-up {two['tokens_per_s'] / one['tokens_per_s']:.2f}x. Others' CPU "
      f"during the two runs: {one['others']:.2f} and {two['others']:.2f} cores.")
    w("")
    p = raw["prescott"]
    w("## Side note: the Prescott kernel")
    w("")
    w(f"Without `OPENBLAS_CORETYPE`, Debian's OpenBLAS 0.3.21 runs its SSE3 \"Prescott\" kernel on this "
      f"CPU. nmt avoids that by itself; PyTorch does not. One run each on {p['batches']} batches "
      f"(first {p['warmup']} not timed): PyTorch {p['torch']['tokens_per_s']:,.0f} tokens/s, nmt "
      f"{p['nmt']['tokens_per_s']:,.0f} tokens/s. So against PyTorch as Debian ships it, nmt's "
      f"training ratio would be about {s['train'][0] / p['torch']['tokens_per_s']:.1f}x rather than "
      f"{ratio(s['train']):.2f}x.")
    w("")
    w("## Commands")
    w("")
    w("`$TMP` is a fresh temporary directory; the configs it holds are those of "
      "`scripts/bench/bench.py` (`config()`): the data above, `valid_fraction` 0.06, `epochs` 1, "
      "`max_steps` the number of batches, `log_every` 1, `checkpoint_every` 0, seed 1. Rounds 2 and "
      "later repeat round 1's commands (with their own file names) except the agreement check "
      "(`--nmt-weights`), PyTorch first in even rounds; round 1 is followed by the first sgemm pass.")
    w("")
    w("```")
    L.extend(raw["commands"])
    w("```")
    return "\n".join(L)


def render_readme(raw):
    """README's Speed figures (without the generated-block markers) from the same raw
    result: where and when, the headline table, and the statements derived from it."""
    s, R, d = summary(raw), raw["rounds"], raw["data"]
    p = raw["prescott"]
    L = [f"Measured {raw['date'].split()[0]} (commit {raw['commit']}) on {machine_line(raw)}, "
         f"OpenBLAS kernel {raw['kernel']} (`docs/bench/pytorch.json`; every figure and command in "
         "[BENCHMARKS.md](../BENCHMARKS.md)):", ""]
    L += headline_rows(raw, s)
    L.append("")
    same = ""
    if raw.get("agreement"):
        ag = raw["agreement"]
        same = (f", and decoding with the same weights (nmt's, round 1) they agree word for word on "
                f"{ag['greedy']['same']:,} of {ag['greedy']['sentences']:,} test sentences greedy and "
                f"{ag['beam']['same']:,} of {ag['beam']['sentences']:,} with beam {BEAM}")
    L.append(f"Both programs train the same model (their losses after the same {d['batches']} batches "
             f"agree: {s['loss'][0]:.3f} and {s['loss'][1]:.3f}){same}.")
    L.append("")
    L.append(f"- **The roofline**: the model does {s['gemm_flops_per_token'] / 1e6:.1f} MFLOP of matrix "
             f"products per target token (forward and backward, counted from the batches). OpenBLAS "
             f"reaches {s['limit']:.0f} GFLOP/s at the model's own matrix shapes on that machine, so the "
             f"products alone would allow about {s['limit'] * 1e9 / s['gemm_flops_per_token']:,.0f} "
             f"tokens/s; nmt's training runs at {100 * s['roofline'][0]:.0f}% of that, PyTorch at "
             f"{100 * s['roofline'][1]:.0f}%.")
    L.append(f"- On Debian's OpenBLAS as PyTorch gets it by default (the Prescott kernel on that CPU), "
             f"PyTorch trains at {p['torch']['tokens_per_s']:,.0f} tokens/s ({p['batches']} batches, one "
             f"run), so nmt as shipped is about {s['train'][0] / p['torch']['tokens_per_s']:.1f}x faster "
             f"than PyTorch as shipped; nmt itself on Prescott: {p['nmt']['tokens_per_s']:,.0f} tokens/s.")
    return "\n".join(L)
