"""links.py — every relative link of the project's documents leads somewhere.

    python3 scripts/docs/links.py [--root DIR]

Reads README.md, BENCHMARKS.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md and checks,
outside code blocks and code spans:
  - each relative link or image, [text](PATH) or [text](PATH#ANCHOR), names a file or
    directory that exists (PATH relative to the document, as GitHub resolves it);
  - each ANCHOR, in the same document (#ANCHOR) or in another Markdown file, is the
    slug GitHub makes of one of its headings (lowercased, punctuation dropped, spaces
    to hyphens, "-1", "-2" ... for repeated headings);
and, inside code spans, that each repository path it names (`configs/...`,
`scripts/...`, `src/...`, `tests/...`, `data/...`, `docs/...` ending in a file
extension, with no placeholder such as NAME in it) exists, so that a moved or renamed
file does not leave the documents pointing at nothing.

Links to other sites (http:, https:, mailto:) are not followed. Prints one line per
problem, FILE:LINE: what; exit 0 when there is none, 1 otherwise (tests/test_docs.sh).
"""

import os
import re
import sys
import unicodedata

DOCS = ("README.md", "BENCHMARKS.md", "CONTRIBUTING.md", "CHANGELOG.md")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# A repository path in a code span: a known top folder, then a file name with an extension.
REPO_PATH = re.compile(r"^(?:configs|data|docs|scripts|src|tests)/[A-Za-z0-9_./-]+\.[a-z0-9]+$")
PLACEHOLDER = re.compile(r"[A-Z]{2,}")       # tests/test_NAME.c, docs/bench/mpi-batchN.json
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def documents(root):
    files = [os.path.join(root, f) for f in DOCS]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    return [f for f in files if os.path.exists(f)]


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if re.match(r"^ {0,3}(```|~~~)", line):
                fenced = not fenced
                continue
            if not fenced:
                yield n, line


def slug(text):
    """The anchor GitHub gives a heading of this text (github-slugger's rule)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)      # links: their text
    text = text.replace("`", "").replace("**", "")
    out = []
    for ch in text.lower():
        cat = unicodedata.category(ch)
        if ch in "-_" or ch.isalnum() or cat.startswith("M"):
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line in prose_lines(path):
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            found.add(s if k == 0 else f"{s}-{k}")
        cache[path] = found
    return cache[path]


def check(root):
    problems = []
    for doc in documents(root):
        rel_doc = os.path.relpath(doc, root)
        here = os.path.dirname(doc)
        for n, line in prose_lines(doc):
            for span in CODE_SPAN.finditer(line):
                word = span.group(2).strip()
                if (REPO_PATH.match(word) and not PLACEHOLDER.search(word)
                        and not os.path.exists(os.path.join(root, word))):
                    problems.append(f"{rel_doc}:{n}: `{word}`: no such file in the repository")
            text = CODE_SPAN.sub("", line)
            for m in LINK.finditer(text):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target) or target.startswith("<"):
                    continue
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(here, path)) if path else doc
                if not os.path.exists(full):
                    problems.append(f"{rel_doc}:{n}: link {target}: {path} does not exist")
                    continue
                if anchor and full.endswith(".md") and anchor not in anchors(full):
                    problems.append(f"{rel_doc}:{n}: link {target}: {os.path.relpath(full, root)} "
                                    f"has no heading whose anchor is #{anchor}")
    return problems


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if argv[:1] == ["--root"] and len(argv) > 1:
        root = os.path.abspath(argv[1])
        argv = argv[2:]
    if argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    problems = check(root)
    for p in problems:
        print(f"links: {p}")
    print(f"links: {len(documents(root))} documents checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
