#!/usr/bin/python3
"""subword_nmt_reference.py — an independent Python re-implementation of subword-nmt's
BPE (learn-bpe and apply-bpe, text mode), and the script that writes the fixtures in
tests/fixtures/subword_nmt/.

THIS IS NOT subword-nmt. subword-nmt (https://github.com/rsennrich/subword-nmt, Rico
Sennrich, MIT licence) cannot be installed here (no PyPI access, no Debian package), so
the expected output that tests/test_cli_subwords.sh pins for `nmt bpe apply --codes-format
subword-nmt` comes from this file: a second implementation, written from the
behaviour of subword-nmt 0.3.x's subword_nmt/apply_bpe.py (BPE.__init__ reading the
codes, BPE.process_line, segment, segment_tokens and encode(), without glossaries,
vocabulary or dropout) and subword_nmt/learn_bpe.py (get_vocabulary and the merge
loop's choice, max(stats, key=lambda x: (stats[x], x)) with --min-frequency 2). It
shares no code with src/text/subword.c or src/cli/bpetool.c. It uses only the standard library;
run it with /usr/bin/python3.

What it reproduces:
  reading codes  the first line "#version: V" gives the version (the line's last field,
                 trailing ".0" groups dropped); without it the version is 0.1 and the
                 first line is a merge. Every other line, stripped of "\\r\\n " at both
                 ends, is two symbols split at one space; a merge listed twice keeps
                 its first rank.
  encode         a word of one code point is left alone. Otherwise its code points,
                 "</w>" glued to the last (0.2) or a symbol of its own after it (0.1);
                 then, while some adjacent pair is a merge, the lowest-ranked one is
                 merged at every occurrence, left to right (an occurrence overlapping
                 the previous merged one is skipped); finally a last symbol "</w>" is
                 dropped, or "</w>" is cut from the end of the last symbol.
  lines          read as Python 3 reads standard input in text mode (UTF-8, universal
                 newlines: LF, CRLF and CR end a line, each becomes LF); each line's
                 leading "\\r\\n " run is written as it is, then the words (the line
                 stripped of "\\r\\n " and split at single spaces, empty words
                 dropped) as pieces joined by single spaces, "@@" ending each piece but
                 a word's last, then the trailing "\\r\\n " run unless the whole line
                 is that run.
  learning       words counted as in get_vocabulary (the same stripping and
                 splitting); each word its code points with "</w>" glued to the last;
                 each step merges, at every occurrence left to right, the pair with the
                 highest count weighted by word frequency, ties going to the greatest
                 pair (left, then right symbol, in code point order); stops when the
                 best count is below 2. The counts are recomputed from scratch every
                 step: subword-nmt's incremental updates and its pruning of rare pairs
                 are meant to give the same choices faster, and are not reproduced.

How it was checked: `self-test` runs the small cases worked by hand in
tests/test_subword.c (test_subword_nmt) and in tests/test_cli_subwords.sh.

Usage:
  /usr/bin/python3 scripts/reference/subword_nmt_reference.py self-test
  /usr/bin/python3 scripts/reference/subword_nmt_reference.py apply CODES < INPUT
        what `subword-nmt apply-bpe -c CODES < INPUT` writes
  /usr/bin/python3 scripts/reference/subword_nmt_reference.py learn MERGES < INPUT
        the codes `subword-nmt learn-bpe -s MERGES < INPUT` writes (see above)
  /usr/bin/python3 scripts/reference/subword_nmt_reference.py fixtures [MAR_TXT]
        rewrites tests/fixtures/subword_nmt/: mar.txt (200 Marathi lines of MAR_TXT,
        default data/mar.txt, every 168th pair's second column, then the hand-made
        lines of EDGE_LINES), mar.codes (learn 500 on mar.txt) and mar.pieces (apply
        mar.codes to mar.txt)
"""

import io
import os
import sys
from collections import Counter

EOW = "</w>"
STRIP = "\r\n "
FIXTURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "..", "..", "tests", "fixtures", "subword_nmt"))
FIXTURE_MERGES = 500
FIXTURE_LINES = 200
FIXTURE_STRIDE = 168

# Appended to the fixture input: the line handling apply must copy byte for byte.
EDGE_LINES = (
    "  दोन  शब्द  आणि  मोकळ्या   जागा  \n"   # leading, double and trailing spaces
    "\n"                                       # an empty line
    "   \n"                                    # spaces only
    "ते\n"                                     # a word of one grapheme cluster, two code points
    "क\n"                                      # a word of one code point
    "\ttab\tinside words\t\n"                  # a tab is a character, not a separator
    "CRLF ends this line\r\n"
    "a lone CR\rends a line too\n"
    "the last line has no line end"
)


# ============================================================================
# Codes
# ============================================================================

def parse_version(first_line):
    """The version tuple of a "#version: V" line, as BPE.__init__ computes it."""
    field = first_line.split()[-1]
    while True:   # re.sub(r'(\.0+)*$', '', field)
        head, dot, tail = field.rpartition(".")
        if dot and tail and set(tail) == {"0"}:
            field = head
        else:
            break
    return tuple(int(x) for x in field.split("."))


def read_codes(text):
    """(ranks, version) from codes text: ranks maps (left, right) to the merge's line
    index among the merges (the first of repeats)."""
    lines = text.split("\n")
    version = (0, 1)
    if lines and lines[0].startswith("#version:"):
        version = parse_version(lines[0])
        text = text.split("\n", 1)[1] if "\n" in text else ""
    ranks = {}
    body = text.rstrip("\n")
    items = body.split("\n") if body else []
    for i, item in enumerate(items):
        pair = tuple(item.strip(STRIP).split(" "))
        if len(pair) != 2:
            raise ValueError(f"invalid line {i + 1} in BPE codes: {item!r}")
        ranks.setdefault(pair, i)
    return ranks, version


# ============================================================================
# Applying
# ============================================================================

def encode(word, ranks, version):
    """The pieces of one word, without "@@"."""
    if len(word) == 1:
        return [word]
    if version == (0, 1):
        symbols = list(word) + [EOW]
    elif version == (0, 2):
        symbols = list(word[:-1]) + [word[-1] + EOW]
    else:
        raise ValueError(f"codes version {version} not handled")
    while len(symbols) > 1:
        found = [(ranks[p], i) for i, p in enumerate(zip(symbols, symbols[1:])) if p in ranks]
        if not found:
            break
        best = min(found)[0]
        merged, i = [], 0
        while i < len(symbols):
            if i + 1 < len(symbols) and ranks.get((symbols[i], symbols[i + 1])) == best:
                merged.append(symbols[i] + symbols[i + 1])
                i += 2
            else:
                merged.append(symbols[i])
                i += 1
        symbols = merged
    if symbols[-1] == EOW:
        symbols = symbols[:-1]
    elif symbols[-1].endswith(EOW):
        symbols[-1] = symbols[-1][:-len(EOW)]
    return symbols


def apply_line(line, ranks, version):
    """One line (with its line end) as apply-bpe writes it."""
    lead = len(line) - len(line.lstrip(STRIP))
    trail = len(line) - len(line.rstrip(STRIP))
    pieces = []
    for word in line.strip(STRIP).split(" "):
        if not word:
            continue
        parts = encode(word, ranks, version)
        pieces.extend(p + "@@" for p in parts[:-1])
        pieces.append(parts[-1])
    out = line[:lead] + " ".join(pieces)
    if trail and trail != len(line):
        out += line[len(line) - trail:]
    return out


def text_lines(data):
    """The lines of UTF-8 bytes as Python 3 reads standard input in text mode."""
    return list(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def apply_text(codes_text, data):
    ranks, version = read_codes(codes_text)
    return "".join(apply_line(line, ranks, version) for line in text_lines(data))


# ============================================================================
# Learning
# ============================================================================

def learn(lines, n_merges):
    """Up to n_merges merges from the text lines, in order."""
    vocab = Counter()
    for line in lines:
        for word in line.strip(STRIP).split(" "):
            if word:
                vocab[word] += 1
    words = [(list(w[:-1]) + [w[-1] + EOW], c) for w, c in vocab.items()]
    merges = []
    while len(merges) < n_merges:
        stats = Counter()
        for symbols, count in words:
            for pair in zip(symbols, symbols[1:]):
                stats[pair] += count
        if not stats:
            break
        best = max(stats, key=lambda p: (stats[p], p))
        if stats[best] < 2:
            break
        merges.append(best)
        for symbols, _ in words:
            i, out = 0, []
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            symbols[:] = out
    return merges


def codes_text(merges):
    return "#version: 0.2\n" + "".join(f"{l} {r}\n" for l, r in merges)


# ============================================================================
# Self-test: the hand-worked cases
# ============================================================================

def self_test():
    failures = 0

    def expect(what, got, want):
        nonlocal failures
        if got != want:
            failures += 1
            print(f"FAIL {what}: got {got!r}, want {want!r}")
        else:
            print(f"  ok {what}")

    codes = "#version: 0.2\nt h\nth e</w>\na n\nan d</w>\n"
    expect("the band and then", apply_text(codes, "the band  and then\n".encode()),
           "the b@@ and and th@@ e@@ n\n")
    expect("line ends and spaces", apply_text(codes, b"  a  \n\nthe\r\nxthe z\rand"),
           "  a  \n\nthe\nx@@ the z\nand")
    # Merge order: "b c</w>" (rank 0) before "a b" (rank 1), so "abc" is a + bc;
    # "abd" has no "b d</w>", so "a b" applies.
    order = "#version: 0.2\nb c</w>\na b\n"
    expect("merge order", apply_text(order, b"abc abd\n"), "a@@ bc ab@@ d\n")
    # Overlap: "a a" merged left to right, "aaa" -> "aa a".
    expect("overlapping pairs", apply_text("#version: 0.2\na a\n", b"aaa\n"), "aa@@ a\n")
    # Devanagari: "ते" is त + े (two code points); "त े</w>" merges them.
    dev = "#version: 0.2\nत े</w>\nत े\n"
    expect("ते is one piece from two code points", apply_text(dev, "ते तेच\n".encode()),
           "ते ते@@ च\n")
    # Version 0.1: "</w>" a symbol of its own; a bare "</w>" is dropped.
    v01 = "e </w>\nt h\nth e</w>\n"
    expect("version 0.1", apply_text(v01, b"the tea\n"), "the t@@ e@@ a\n")
    expect("version 0.1 from a #version line", read_codes("#version: 0.1\na b\n")[1], (0, 1))
    expect("version 0.2.0 is 0.2", read_codes("#version: 0.2.0\na b\n")[1], (0, 2))
    expect("a repeated merge keeps its first rank", read_codes("#version: 0.2\na b\nc d\na b\n")[0],
           {("a", "b"): 0, ("c", "d"): 1})
    # The Sennrich example, ties to the greatest pair.
    lines = ["low"] * 5 + ["lower"] * 2 + ["newest"] * 6 + ["widest"] * 3
    expect("learn: Sennrich's example", learn(lines, 4),
           [("s", "t</w>"), ("e", "st</w>"), ("l", "o"), ("w", "est</w>")])
    print(f"subword_nmt_reference self-test: {failures} failed")
    return 1 if failures else 0


# ============================================================================
# Fixtures
# ============================================================================

def write_fixtures(mar_txt):
    with open(mar_txt, encoding="utf-8") as f:
        pairs = f.read().split("\n")
    sample = [pairs[i].split("\t")[1] for i in range(0, FIXTURE_STRIDE * FIXTURE_LINES, FIXTURE_STRIDE)]
    text = "".join(line + "\n" for line in sample) + EDGE_LINES
    data = text.encode("utf-8")
    codes = codes_text(learn(text_lines(data), FIXTURE_MERGES))
    pieces = apply_text(codes, data)
    os.makedirs(FIXTURES, exist_ok=True)
    for name, content in (("mar.txt", data), ("mar.codes", codes.encode()), ("mar.pieces", pieces.encode())):
        with open(os.path.join(FIXTURES, name), "wb") as f:
            f.write(content)
    print(f"wrote {FIXTURES}: {len(sample)} + {EDGE_LINES.count(chr(10)) + 1} lines, "
          f"{codes.count(chr(10)) - 1} merges")


def main(argv):
    if len(argv) >= 1 and argv[0] == "self-test":
        return self_test()
    if len(argv) == 2 and argv[0] == "apply":
        with open(argv[1], encoding="utf-8", newline="") as f:
            codes = f.read()
        sys.stdout.buffer.write(apply_text(codes, sys.stdin.buffer.read()).encode("utf-8"))
        return 0
    if len(argv) == 2 and argv[0] == "learn":
        merges = learn(text_lines(sys.stdin.buffer.read()), int(argv[1]))
        sys.stdout.buffer.write(codes_text(merges).encode("utf-8"))
        return 0
    if len(argv) in (1, 2) and argv[0] == "fixtures":
        write_fixtures(argv[1] if len(argv) == 2 else "data/mar.txt")
        return 0
    print(__doc__.split("Usage:")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
