"""budget_table.py — README's "Which model for which budget" quotes its figures: every
number in the table's BLEU columns is in the section its row links to (the default's
column may also quote the README's worked example), so that the table cannot drift from
the measurements or hold a figure nobody measured.

    python3 scripts/docs/budget_table.py [--root DIR]

Prints one line per figure not found; exit 0 when all are, 1 otherwise (tests/test_docs.sh).
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from links import slug, HEADING   # noqa: E402  (GitHub's anchors, as links.py checks them)

FIGURE = re.compile(r"\b[0-9]+\.[0-9]+\b")


def section(path, anchor):
    """The text of the section whose heading's anchor is `anchor` (to the next heading of
    its level or above); the whole file for no anchor."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if not anchor:
        return "\n".join(lines)
    out, level = None, 0
    for line in lines:
        m = HEADING.match(line)
        if m and out is not None and len(m.group(1)) <= level:
            break
        if m and out is None and slug(m.group(2)) == anchor:
            out, level = [], len(m.group(1))
        elif out is not None:
            out.append(line)
    return "\n".join(out or [])


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if argv[:1] == ["--root"] and len(argv) > 1:
        root = argv[1]
    readme = os.path.join(root, "README.md")
    table = section(readme, "which-model-for-which-budget")
    worked = section(readme, "a-worked-example")
    rows = [r for r in table.split("\n") if r.startswith("| ") and not r.startswith("| budget")]
    problems, checked = [], 0
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split("|")]
        link = re.search(r"\]\(([^)#]*)(?:#([^)]*))?\)", cells[-1])
        if len(cells) < 5 or not link:
            problems.append(f"a row without its five columns and a link: {r}")
            continue
        path = os.path.join(root, link.group(1)) if link.group(1) else readme
        if not os.path.isfile(path):
            problems.append(f"{cells[-1]}: no such file")
            continue
        source = section(path, link.group(2) or "")
        if not source:
            problems.append(f"{cells[-1]}: no such section")
            continue
        for col, text in ((2, source), (3, source + worked)):
            for figure in FIGURE.findall(cells[col]):
                checked += 1
                if figure not in text:
                    problems.append(f"{figure} (row {cells[1]}): not in the section it links to")
    for p in problems:
        print(f"budget_table: {p}")
    print(f"budget_table: {len(rows)} rows, {checked} figures checked, {len(problems)} problems")
    return 1 if problems or checked < 10 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
