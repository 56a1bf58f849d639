"""config_defaults.py — docs/configuration.md's table of where configs/default.json
differs from the built-in defaults is true: for every key configs/default.json gives,
the value it gives differs from the default column of the reference's row of that key
exactly when the key is in the table, with both values as the table says.

    python3 scripts/docs/config_defaults.py [--root DIR]

Prints one line per problem; exit 0 when there is none, 1 otherwise (tests/test_docs.sh).
"""

import json
import os
import re
import sys


def value(text):
    """A table cell as a JSON value: `"nfc"` -> "nfc", 0.1 -> 0.1, false -> False."""
    text = text.strip().strip("`")
    try:
        return json.loads(text)
    except ValueError:
        return text


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if argv[:1] == ["--root"] and len(argv) > 1:
        root = argv[1]
    with open(os.path.join(root, "docs", "configuration.md"), encoding="utf-8") as f:
        text = f.read()
    head, _, keys = text.partition("\n## The keys\n")
    defaults = {m.group(1): value(m.group(2))
                for m in re.finditer(r"^\| `([a-z_]+\.[a-z_]+)` \| ([^|]*) \|", keys, re.M)}
    table = {m.group(1): (value(m.group(2)), value(m.group(3)))
             for m in re.finditer(r"^\| ([a-z_]+\.[a-z_]+) \| ([^|]*) \| ([^|]*) \|$", head, re.M)}
    with open(os.path.join(root, "configs", "default.json"), encoding="utf-8") as f:
        config = json.load(f)
    given = {f"{s}.{k}": v for s, keys_ in config.items() for k, v in keys_.items()}
    problems = []
    for key, v in given.items():
        if key not in defaults:
            problems.append(f"{key}: configs/default.json gives it, the reference has no row of it")
            continue
        differs = v != defaults[key] and key not in ("data.train", "output.dir")
        if differs and key not in table:
            problems.append(f"{key}: configs/default.json has {v!r}, the default is {defaults[key]!r}, "
                            "and the table of differences does not say so")
        if key in table and table[key] != (defaults[key], v):
            problems.append(f"{key}: the table of differences says {table[key]!r}, "
                            f"the reference's default and configs/default.json say {(defaults[key], v)!r}")
    for key in table:
        if key not in given:
            problems.append(f"{key}: in the table of differences, but configs/default.json does not give it")
    for p in problems:
        print(f"config_defaults: {p}")
    print(f"config_defaults: {len(given)} keys of configs/default.json, {len(table)} differences, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
