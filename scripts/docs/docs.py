"""docs.py — the generated blocks of README.md, BENCHMARKS.md, CONTRIBUTING.md, CHANGELOG.md
and docs/*.md.

Every pasted program output or measured figure in those files sits between two
markers (HTML comments, invisible in rendered Markdown) that name the block and the
command that prints it:

    <!-- generated block worked_example: sh scripts/docs/worked_example.sh -->
    ...the block, exactly as the command prints it...
    <!-- end of generated block worked_example -->

    python3 scripts/docs/docs.py list                  # the blocks, their files and commands
    python3 scripts/docs/docs.py lint                  # markers, rules and raw files, running nothing
    python3 scripts/docs/docs.py regenerate [NAME ...]  # run the commands, splice their output in
    python3 scripts/docs/docs.py check [NAME ...]       # run them, compare within tolerance
    python3 scripts/docs/docs.py blocks                # CONTRIBUTING.md's table of them, with their times
    python3 scripts/docs/docs.py tolerances            # CONTRIBUTING.md's summary of tolerances.tsv
    python3 scripts/docs/docs.py show NAME             # a block as the document has it
    python3 scripts/docs/docs.py compare NAME DOC.txt NEW.txt   # the comparison alone

(`sh scripts/docs/regenerate.sh`, `sh scripts/docs/check.sh`, `make docs`, `make
check-docs` call the first three.) Without NAMEs, every block, in the order the files
show them (README.md, BENCHMARKS.md, CONTRIBUTING.md, CHANGELOG.md, docs/*.md), so that
a block that uses the demo's model (translation_examples, in docs/commands.md) runs after
the one that trains it (worked_example, in README.md).

A check fails, naming the file and line, the block, the figure and both values, when a
line of the block differs from what its command prints now: in its words at all, or in
a number by more than the tolerance scripts/docs/tolerances.tsv gives for it (exact
when it gives none). Commands run from the repository root with DOCS_ASSETS set to a
scratch directory, where a generator that also writes a file (an SVG the README shows)
puts it during a check; regenerating leaves DOCS_ASSETS unset, so such files go to
their place in the repository. Blocks rendered from raw measurements (docs/bench/*.json)
have no tolerances: they must equal the rendering exactly. Every raw file in
docs/bench/ must name the machine, the date, the commit and the command that measured it.

Exit status: 0 all selected blocks match (or were regenerated), 1 a block differs or
its command failed, 2 a usage error (unknown block, malformed markers or tolerances).
"""

import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Markers may be indented by up to 3 spaces (inside a list item, as deep as the item's
# text); 4 make a Markdown code block, where a marker is only an example of one.
BEGIN = re.compile(r"^ {0,3}<!-- generated block ([a-z0-9_]+): (.+) -->$")
END = re.compile(r"^ {0,3}<!-- end of generated block ([a-z0-9_]+) -->$")
MARKERISH = re.compile(r"^ {0,3}<!-- (generated block|end of generated block)")

# A number as the blocks print them: 8,802,546  2.0047  -0.334255  26.55  5%.
# Only ASCII digits (Devanagari digits are text). A minus belongs to the number only
# where it cannot be a hyphen or a range dash ("0-0 2-1" are pairs of numbers).
NUMBER = re.compile(r"(?:(?<![\w.])-)?(?:[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)(?:\.[0-9]+)?")
MASK = "\ufffc"     # stands for a masked word in both lines being compared


class Usage(Exception):
    """A malformed marker, tolerance rule or an unknown block name (exit 2)."""


# ---------------------------------------------------------------- finding blocks

class Block:
    def __init__(self, path, name, command, begin, end, lines):
        self.path, self.name, self.command = path, name, command
        self.begin, self.end = begin, end        # 0-based indices of the marker lines
        self.lines = lines                       # the content between them

    def where(self, k=0):
        """FILE:LINE of the block's k-th content line (1-based line numbers)."""
        rel = os.path.relpath(self.path, ROOT_NOW)
        return f"{self.path if rel.startswith('..') else rel}:{self.begin + 2 + k}"


ROOT_NOW = ROOT     # the repository being worked on (--root for the tests)


def doc_files(root):
    docs = os.path.join(root, "docs")
    files = [os.path.join(root, f) for f in ("README.md", "BENCHMARKS.md", "CONTRIBUTING.md", "CHANGELOG.md")]
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    return [f for f in files if os.path.exists(f)]


def read_blocks(path):
    """The generated blocks of one file, checking that the markers pair up."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, open_at = [], None
    rel = os.path.relpath(path, ROOT_NOW)
    for i, line in enumerate(lines):
        b, e = BEGIN.match(line), END.match(line)
        if MARKERISH.match(line) and not (b or e):
            raise Usage(f"{rel}:{i + 1}: malformed marker (expected '<!-- generated block NAME: COMMAND -->' "
                        "or '<!-- end of generated block NAME -->')")
        if b:
            if open_at is not None:
                raise Usage(f"{rel}:{i + 1}: block {b.group(1)} starts inside block "
                            f"{BEGIN.match(lines[open_at]).group(1)} (line {open_at + 1})")
            open_at = i
        elif e:
            if open_at is None:
                raise Usage(f"{rel}:{i + 1}: end of block {e.group(1)} without its start")
            name, command = BEGIN.match(lines[open_at]).groups()
            if e.group(1) != name:
                raise Usage(f"{rel}:{i + 1}: block {name} (line {open_at + 1}) ends as {e.group(1)}")
            blocks.append(Block(path, name, command, open_at, i, lines[open_at + 1:i]))
            open_at = None
    if open_at is not None:
        raise Usage(f"{rel}:{open_at + 1}: block {BEGIN.match(lines[open_at]).group(1)} has no end marker")
    return blocks


def all_blocks(root):
    blocks, seen = [], {}
    for path in doc_files(root):
        for b in read_blocks(path):
            if b.name in seen:
                raise Usage(f"{b.where(-1)}: block {b.name} is also at {seen[b.name].where(-1)}")
            seen[b.name] = b
            blocks.append(b)
    return blocks


def select(blocks, names):
    if not names:
        return blocks
    known = {b.name: b for b in blocks}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise Usage(f"no generated block named {', '.join(unknown)} (known: {', '.join(known)})")
    return [b for b in blocks if b.name in names]


# ---------------------------------------------------------------- tolerances

class Rule:
    """One line of tolerances.tsv: in block BLOCK, the number (NUM), word (WORD) or text
    (TEXT) that PATTERN, a regular expression, marks may differ by TOLERANCE: for a
    number an absolute amount (0.03) or a relative one (3%); for a word or text "N
    words" (at most N words inserted, deleted or replaced: a translation that another
    OpenBLAS kernel words differently); for any of them "any" (machine-dependent
    figures: not compared)."""

    def __init__(self, block, what, pattern, tolerance, where):
        self.block, self.what, self.tolerance, self.where = block, what, tolerance, where
        if sum(pattern.count(p) for p in ("NUM", "WORD", "TEXT")) != 1:
            raise Usage(f"{where}: the pattern must hold one NUM, WORD or TEXT: {pattern}")
        self.word = "NUM" not in pattern
        group = {"WORD": r"(?P<x>[^\s,;]+)", "TEXT": r"(?P<x>.+?)",
                 "NUM": r"(?P<x>-?[0-9][0-9,]*(?:\.[0-9]+)?)"}
        try:
            for p in group:
                pattern = pattern.replace(p, group[p])
            self.regex = re.compile(pattern)
        except re.error as err:
            raise Usage(f"{where}: bad pattern {pattern!r}: {err}")
        m = re.fullmatch(r"(any)|([0-9.]+)(%| words)?", tolerance)
        if not m or (m.group(1) is None and self.word != (m.group(3) == " words")):
            raise Usage(f"{where}: tolerance must be, for a number, an amount (0.03) or a percentage (3%), "
                        f"for a word or text 'N words', or 'any': {tolerance}")
        self.any = m.group(1) is not None
        self.amount = None if self.any else float(m.group(2))
        self.relative = not self.any and m.group(3) == "%"

    def allows(self, doc, new):
        if self.any:
            return True
        limit = self.amount * abs(doc) / 100 if self.relative else self.amount
        return abs(new - doc) <= limit + 1e-12

    def describe(self):
        return "any value" if self.any else f"up to {self.tolerance}" if self.word else f"±{self.tolerance}"


def read_rules(root):
    path = os.path.join(root, "scripts", "docs", "tolerances.tsv")
    rules = {}
    if not os.path.exists(path):
        return rules
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != 4:
                raise Usage(f"scripts/docs/tolerances.tsv:{n}: expected 4 tab-separated columns "
                            "(block, what, pattern, tolerance)")
            rules.setdefault(cols[0], []).append(Rule(*cols, where=f"scripts/docs/tolerances.tsv:{n}"))
    return rules


# ---------------------------------------------------------------- comparing

def mask_words(line, rules):
    """The line with the words and texts the rules mark replaced by MASK, and what was
    masked: [(rule, text)] in order."""
    masked = []
    for r in rules:
        if r.word:
            def sub(m, r=r):
                masked.append((r, m.group("x")))
                return m.group(0)[:m.start("x") - m.start()] + MASK + m.group(0)[m.end("x") - m.start():]
            line = r.regex.sub(sub, line)
    return line, masked


def words_apart(a, b):
    """Word-level edit distance: words inserted, deleted or replaced to turn a into b."""
    a, b = a.split(), b.split()
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def split_numbers(line):
    """The line as its text between numbers and the numbers: (texts, [(value, text, start)])."""
    texts, numbers, at = [], [], 0
    for m in NUMBER.finditer(line):
        texts.append(line[at:m.start()])
        numbers.append((float(m.group(0).replace(",", "")), m.group(0), m.start()))
        at = m.end()
    texts.append(line[at:])
    return texts, numbers


def rule_for(line, start, rules):
    """The first rule whose NUM covers the number starting at `start` of the document's line."""
    for r in rules:
        if r.word:
            continue
        for m in r.regex.finditer(line):
            if m.start("x") == start:
                return r
    return None


def compare_line(block, k, doc, new, rules):
    """The problems of one line pair (k: the line's index in the block)."""
    if doc == new:
        return []
    (dm, dw), (nm, nw) = mask_words(doc, rules), mask_words(new, rules)
    dt, dn = split_numbers(dm)
    nt, nn = split_numbers(nm)
    if dt != nt or [r for r, _ in dw] != [r for r, _ in nw]:
        return [f"{block.where(k)}: block {block.name}: the line differs beyond its numbers:\n"
                f"    document: {doc}\n    now:      {new}"]
    problems = []
    for (r, dtext), (_, ntext) in zip(dw, nw):
        if not r.any and words_apart(dtext, ntext) > r.amount:
            problems.append(f"{block.where(k)}: block {block.name}: {r.what}: {words_apart(dtext, ntext)} words "
                            f"differ (tolerance {r.describe()})\n    document: {doc}\n    now:      {new}")
    for (dv, dtext, start), (nv, ntext, _) in zip(dn, nn):
        if dtext == ntext:
            continue
        r = rule_for(dm, start, rules)
        if r is None or not r.allows(dv, nv):
            what = r.what if r else "a number with no tolerance (must be equal)"
            tol = f" (tolerance {r.describe()})" if r else ""
            problems.append(f"{block.where(k)}: block {block.name}: {what}: the document says {dtext}, "
                            f"the generator printed {ntext}{tol}\n    document: {doc}\n    now:      {new}")
    return problems


def compare(block, doc_lines, new_lines, rules):
    """The differences between a block as the document has it and as its command prints
    it now, beyond the rules' tolerances: a list of messages, empty when they match.
    Lines are paired as a diff pairs them, so that one line more or less is reported as
    that, not as every later line changed."""
    problems = []
    sm = difflib.SequenceMatcher(a=doc_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        n = min(i2 - i1, j2 - j1)
        for d in range(n):
            problems += compare_line(block, i1 + d, doc_lines[i1 + d], new_lines[j1 + d], rules)
        for i in range(i1 + n, i2):
            problems.append(f"{block.where(i)}: block {block.name}: a line only in the document: {doc_lines[i]}")
        for j in range(j1 + n, j2):
            problems.append(f"{block.where(i2)}: block {block.name}: a line only in the output, before this "
                            f"one: {new_lines[j]}")
    if len(doc_lines) != len(new_lines):
        problems.append(f"{block.where(0)}: block {block.name}: the document has {len(doc_lines)} lines, "
                        f"the generator printed {len(new_lines)}")
    return problems


# ---------------------------------------------------------------- raw measurement files

def check_raw(root):
    """Each docs/bench/*.json names the machine, date, commit and command it comes from."""
    problems, bench = [], os.path.join(root, "docs", "bench")
    if not os.path.isdir(bench):
        return problems
    for name in sorted(os.listdir(bench)):
        if not name.endswith(".json"):
            continue
        rel = os.path.join("docs", "bench", name)
        try:
            with open(os.path.join(bench, name), encoding="utf-8") as f:
                raw = json.load(f)
        except (OSError, ValueError) as err:
            problems.append(f"{rel}: not readable JSON: {err}")
            continue
        machine = raw.get("machine")
        if not isinstance(machine, dict) or not machine.get("cpu") or not machine.get("cores"):
            problems.append(f"{rel}: does not name the machine (\"machine\": {{\"cpu\": ..., \"cores\": ...}})")
        for key in ("date", "commit", "script", "provenance"):
            if not raw.get(key):
                problems.append(f"{rel}: has no \"{key}\"")
    return problems


# ---------------------------------------------------------------- running generators

def run(block, assets):
    """The block's command's output as lines (None if it failed), with the seconds it took."""
    env = dict(os.environ)
    env.pop("DOCS_ASSETS", None)
    if assets:
        env["DOCS_ASSETS"] = assets
    start = time.time()
    p = subprocess.run(block.command, shell=True, cwd=ROOT_NOW, env=env, stdout=subprocess.PIPE)
    seconds = time.time() - start
    if p.returncode != 0:
        return None, seconds
    text = p.stdout.decode("utf-8")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n"), seconds


def splice(block, new_lines):
    """Writes new_lines between the block's markers, found again by name: the file may
    have been edited elsewhere while a long generator ran, but not inside the block."""
    now = next((b for b in read_blocks(block.path) if b.name == block.name), None)
    if now is None or now.lines != block.lines:
        raise Usage(f"{block.where(-1)}: block {block.name} changed while it was generated; not written")
    with open(block.path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    lines[now.begin + 1:now.end] = new_lines
    tmp = block.path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.replace(tmp, block.path)


def lint(root, names=()):
    """What can be checked without running a generator: markers that pair up, a script
    for every command, tolerance rules that each match a line of their block (a rule
    that matches nothing is stale), and raw files that name their machine. With NAMEs,
    only those blocks' commands and rules (and every raw file)."""
    blocks = all_blocks(root)
    by_name = {b.name: b for b in blocks}
    problems = []
    for b in select(blocks, names):
        for word in shlex.split(b.command):
            if word.endswith((".sh", ".py", ".json")) and not os.path.exists(os.path.join(root, word)):
                problems.append(f"{b.where(-1)}: block {b.name}: {word} does not exist")
    for name, rules in read_rules(root).items():
        if names and name not in names:
            continue
        if name not in by_name:
            problems.append(f"scripts/docs/tolerances.tsv: rules for block {name}, which no document has")
            continue
        for r in rules:
            if not any(r.regex.search(line) for line in by_name[name].lines):
                problems.append(f"{r.where}: {r.what}: the pattern matches no line of block {name}")
    return problems + check_raw(root)


def cmd_lint(root):
    problems = lint(root)
    for p in problems:
        print(f"check-docs: {p}")
    return 1 if problems else 0


def cmd_show(root, names):
    """The content of one block, as the document has it (for the tests)."""
    if len(names) != 1:
        raise Usage("usage: docs.py show NAME")
    print("\n".join(select(all_blocks(root), names)[0].lines))
    return 0


def cmd_list(root, names):
    for b in select(all_blocks(root), names):
        print(f"{b.name}\t{os.path.relpath(b.path, root)}:{b.begin + 1}\t{b.command}")
    return 0


TIMINGS = os.path.join("docs", "bench", "docs-timing.json")


def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"cpu": cpu, "cores": os.cpu_count()}


def record_time(root, name, seconds, load_before):
    """Adds a regenerated block's time to docs/bench/docs-timing.json, which the table of
    blocks in CONTRIBUTING.md ("Docs that stay true") is rendered from."""
    path = os.path.join(root, TIMINGS)
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, ValueError):
        raw = {}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=root).stdout.strip() or "unknown"
    date = time.strftime("%Y-%m-%d", time.gmtime())
    m = machine()
    raw.update({"script": "sh scripts/docs/regenerate.sh (each block's command, timed)",
                "provenance": "measured", "machine": m, "date": date, "commit": commit})
    raw.setdefault("blocks", {})[name] = {"seconds": round(seconds), "date": date, "commit": commit,
                                          "cpu": m["cpu"], "cores": m["cores"],
                                          "load_before": round(load_before, 1)}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(raw, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(path + ".tmp", path)


def ci_blocks(root):
    """The blocks .ci/run checks: the words of its CI_DOCS_BLOCKS="..." assignment."""
    try:
        with open(os.path.join(root, ".ci", "run"), encoding="utf-8") as f:
            m = re.search(r'^CI_DOCS_BLOCKS="([^"]*)"', f.read(), re.M)
    except OSError:
        return set()
    return set(m.group(1).split()) if m else set()


def cmd_blocks(root):
    """CONTRIBUTING.md's table of the generated blocks: where each is, its command, whether CI
    checks it, and how long its command took when it was last regenerated (from
    docs/bench/docs-timing.json, with the machine and its load then)."""
    try:
        with open(os.path.join(root, TIMINGS), encoding="utf-8") as f:
            timings = json.load(f).get("blocks", {})
    except (OSError, ValueError):
        timings = {}
    ci = ci_blocks(root)
    print("| block | in | command | CI | last regenerated: seconds (machine, load average before) |")
    print("|---|---|---|---|---|")
    for b in all_blocks(root):
        t = timings.get(b.name)
        took = (f"{t['seconds']:,} ({t['date']}, {t['cpu']}, {t['cores']} cores, {t['load_before']})"
                if t else "not timed")
        print(f"| `{b.name}` | {os.path.relpath(b.path, root)} | `{b.command}` | "
              f"{'yes' if b.name in ci else 'by hand'} | {took} |")
    return 0


def cmd_tolerances(root):
    """CONTRIBUTING.md's summary of scripts/docs/tolerances.tsv: per block, each figure's
    tolerance (figures named twice, by two patterns, once)."""
    print("| block | tolerances (every other number must be equal, every other word the same) |")
    print("|---|---|")
    for name, rules in read_rules(root).items():
        seen = []
        for r in rules:
            said = f"{r.what} {'not compared' if r.any else r.describe()}"
            if said not in seen:
                seen.append(said)
        print(f"| `{name}` | {'; '.join(seen)} |")
    return 0


def cmd_regenerate(root, names):
    failed = 0
    chosen = select(all_blocks(root), names)
    # The table of blocks shows their times: rendered again after the others.
    table = [b for b in all_blocks(root) if b.command.endswith("docs.py blocks")]
    table_names = {b.name for b in table}     # by name: read_blocks makes new Block objects
    chosen = [b for b in chosen if b.name not in table_names] + table
    for b in chosen:
        # Re-read: an earlier block of the same file may have changed its length.
        b = next(x for x in read_blocks(b.path) if x.name == b.name)
        print(f"docs: {b.name}: {b.command}", file=sys.stderr, flush=True)
        load_before = os.getloadavg()[0]
        lines, seconds = run(b, None)
        if lines is None:
            print(f"docs: {b.name}: FAILED: the command exited non-zero ({seconds:.0f} s); "
                  f"{b.where(-1)} left as it was", file=sys.stderr)
            failed += 1
            continue
        if b.name not in table_names:
            record_time(root, b.name, seconds, load_before)
        same = lines == b.lines
        try:
            splice(b, lines)
        except Usage as err:
            print(f"docs: {b.name}: FAILED: {err}", file=sys.stderr)
            failed += 1
            continue
        print(f"docs: {b.name}: {'unchanged' if same else 'rewritten'} ({len(lines)} lines, {seconds:.0f} s)",
              file=sys.stderr, flush=True)
    return 1 if failed else 0


def cmd_check(root, names):
    rules = read_rules(root)
    blocks = select(all_blocks(root), names)
    problems = lint(root, names)
    for p in problems:
        print(f"check-docs: {p}")
    failed = 1 if problems else 0
    with tempfile.TemporaryDirectory(prefix="nmt-docs-") as assets:
        for b in blocks:
            print(f"check-docs: {b.name}: {b.command}", file=sys.stderr, flush=True)
            lines, seconds = run(b, assets)
            if lines is None:
                print(f"check-docs: {b.where(-1)}: block {b.name}: FAILED: `{b.command}` exited non-zero")
                failed += 1
                continue
            found = compare(b, b.lines, lines, rules.get(b.name, []))
            for p in found:
                print(f"check-docs: {p}")
            failed += bool(found)
            print(f"check-docs: {b.name}: {'ok' if not found else 'FAILED'} ({seconds:.0f} s)", flush=True)
    print(f"check-docs: {len(blocks)} blocks checked, {failed} failed")
    return 1 if failed else 0


def cmd_compare(root, args):
    """compare NAME DOC NEW: the comparison of two texts under NAME's rules, for the tests."""
    if len(args) != 3:
        raise Usage("usage: docs.py compare NAME DOCUMENT.txt NEW.txt")
    name, doc, new = args
    rules = read_rules(root).get(name, [])

    def lines(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return (text[:-1] if text.endswith("\n") else text).split("\n")
    block = Block(os.path.join(root, doc), name, "", -1, -1, [])
    found = compare(block, lines(doc), lines(new), rules)
    for p in found:
        print(f"check-docs: {p}")
    return 1 if found else 0


def main(argv):
    global ROOT_NOW
    args = list(argv)
    root = ROOT
    if args[:1] == ["--root"] and len(args) > 1:    # the tests work on a scratch repository
        root = os.path.abspath(args[1])
        args = args[2:]
    ROOT_NOW = root
    if not args or args[0] not in ("list", "blocks", "tolerances", "show", "lint", "regenerate", "check",
                                   "compare"):
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    try:
        if args[0] == "list":
            return cmd_list(root, args[1:])
        if args[0] == "lint":
            return cmd_lint(root)
        if args[0] == "show":
            return cmd_show(root, args[1:])
        if args[0] == "blocks":
            return cmd_blocks(root)
        if args[0] == "tolerances":
            return cmd_tolerances(root)
        if args[0] == "regenerate":
            return cmd_regenerate(root, args[1:])
        if args[0] == "check":
            return cmd_check(root, args[1:])
        return cmd_compare(root, args[1:])
    except Usage as err:
        print(f"docs: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
