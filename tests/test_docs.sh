#!/bin/sh
# test_docs.sh — the machinery that keeps README.md, BENCHMARKS.md, CONTRIBUTING.md and
# docs/*.md true (scripts/docs/): their links, config keys and options checked against
# the files, config.c's key table and the commands' option tables; the comparison of a
# generated block fails beyond a tolerance and only then, naming the block, the figure
# and both values; regenerating splices a block in and nothing else;
# broken markers, stale tolerance rules and raw results without a machine are refused;
# and the repository's own documents pass the checks that need no training: their
# markers and rules are sound, every block rendered from docs/bench/*.json is exactly
# that rendering (no hand edits), and the examples that need no trained model print
# exactly what the documents show. The blocks that train (the worked example, ...) are
# checked by `make check-docs` and CI, not here.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_docs.sh.
# Needs python3 (any; standard library only). About a second.
passed=0
failed=0
ok()   { passed=$((passed + 1)); echo "  ok $1"; }
bad()  { failed=$((failed + 1)); echo "FAIL $1"; }
# check WHAT COMMAND...: on failure also shows $T/out, the last docs.py output.
check() { what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; [ -s "$T/out" ] && sed 's/^/    | /' "$T/out"; fi; }
skipped=0
finish() {
    echo "test_docs: $passed passed, $failed failed, $skipped skipped"
    [ "$failed" -eq 0 ] && exit 0
    exit 1
}
if ! command -v python3 >/dev/null 2>&1; then
    echo "skip test_docs: no python3 (sh scripts/install-deps.sh --test-tools installs it)"
    skipped=1
    finish
fi
DOCS="python3 $(pwd)/scripts/docs/docs.py"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP
has() { grep -qF -- "$2" "$1"; }

# ---------------------------------------------------------------- 1. the repository's documents

check "lint: markers pair up, every command's script and raw file exists, every tolerance rule matches a line of its block, every raw file names its machine" \
    eval '$DOCS lint >"$T/out" 2>&1'
# Rendered from raw results (docs/bench/*.json) and deterministic examples: exactly.
for block in benchmarks speed mpi_throughput family_speed time_to_quality time_to_quality_readme docs_blocks docs_tolerances \
        score_example bpe_example; do
    check "$block: the document is exactly what its command prints now" \
        eval '$DOCS check $block >"$T/out" 2>"$T/err"'
done

# Every relative link and anchor of README.md, BENCHMARKS.md, CONTRIBUTING.md,
# CHANGELOG.md and docs/*.md leads to a file and heading that exist, and every
# repository path in their code spans exists (scripts/docs/links.py).
check "links: every relative link, anchor and repository path of the documents exists" \
    eval 'python3 scripts/docs/links.py >"$T/out" 2>&1'

# The configuration reference lists every key of src/files/config.c's table, and no
# other: a key added to the table without its row (or a row left of a key removed) fails.
sed -n '/^static const KeySpec keys\[\]/,/^};/p' src/files/config.c |
    grep -oE 'K(_OPEN)?\("[a-z]+", "[a-z_]+"' | sed -E 's/K(_OPEN)?\("([a-z]+)", "([a-z_]+)"/\2.\3/' |
    sort >"$T/keys"
sed -n '/^## The keys/,$p' docs/configuration.md | grep -oE '^\| `[a-z_]+\.[a-z_]+`' |
    sed -E 's/^\| `(.*)`/\1/' | sort >"$T/rows"
check "configuration.md: config.c's table has keys ($(wc -l <"$T/keys") of them) for this test to compare" \
    [ "$(wc -l <"$T/keys")" -gt 50 ]
missing=$(comm -23 "$T/keys" "$T/rows" | tr '\n' ' ')
check "configuration.md: a row for every key of config.c's table (missing: ${missing:-none})" [ -z "$missing" ]
extra=$(comm -13 "$T/keys" "$T/rows" | tr '\n' ' ')
check "configuration.md: no row of a key config.c does not have (extra: ${extra:-none})" [ -z "$extra" ]
dup=$(uniq -d "$T/rows" | tr '\n' ' ')
check "configuration.md: each key once (twice: ${dup:-none})" [ -z "$dup" ]

# The configs the documents show (a line of a code block that is a JSON object with a
# "data" section) are JSON whose every key is one of config.c's.
cat README.md docs/*.md | grep -E '^    \{"data"' >"$T/configs"
check "documents: configs to check ($(wc -l <"$T/configs") of them)" [ -s "$T/configs" ]
python3 -c '
import json, sys
keys = set(open(sys.argv[1]).read().split())
bad = 0
for line in open(sys.argv[2]):
    try:
        c = json.loads(line)
    except ValueError as e:
        print("not JSON:", line.strip(), e); bad = 1; continue
    for s, kv in c.items():
        for k in kv:
            if s + "." + k not in keys:
                print("no key", s + "." + k, "in", line.strip()); bad = 1
sys.exit(bad)' "$T/keys" "$T/configs" >"$T/out" 2>&1
check "documents: every config they show is JSON of known keys" [ $? -eq 0 ]

# The README's table of which model for which budget quotes measured figures only: each
# is in the section its row links to; a figure changed in the table fails.
check "README: every figure of the which-model table is in the section it links to" \
    eval 'python3 scripts/docs/budget_table.py >"$T/out" 2>&1'
B=$T/budget
mkdir -p "$B/docs"
cp docs/measurements.md docs/bench-time-to-quality.md "$B/docs/"
sed 's/| 29\.21 \/ 30\.43 |/| 29.21 \/ 31.43 |/' README.md >"$B/README.md"
python3 scripts/docs/budget_table.py --root "$B" >"$T/out" 2>&1
rc=$?
check "README: ... a figure that is not in its source fails, naming it" \
    eval '[ $rc -eq 1 ] && has "$T/out" "31.43 (row \`configs/family/luong_concat.json\`"'

# The README's two commands are the ones it has always given, and make has their targets.
check "README: the install-and-demo command and the test command, as before" \
    eval 'grep -qxF "    sh scripts/install-deps.sh && make demo     # install, build, train the default, translate, score" README.md &&
          grep -qx "    make test  *# the test suite" README.md'
check "README: make knows demo and test, and scripts/install-deps.sh exists" \
    eval 'make -n demo >/dev/null 2>&1 && make -n test >/dev/null 2>&1 && [ -f scripts/install-deps.sh ]'

# Its table of where configs/default.json differs from the built-in defaults is true,
# and a config that changes, or a default that changes, makes it fail.
check "configuration.md: the table of configs/default.json's differences from the defaults is true" \
    eval 'python3 scripts/docs/config_defaults.py >"$T/out" 2>&1'
C=$T/cfgroot
mkdir -p "$C/docs" "$C/configs"
cp docs/configuration.md "$C/docs/"
sed 's/"epochs": 3,/"epochs": 4,/' configs/default.json >"$C/configs/default.json"
python3 scripts/docs/config_defaults.py --root "$C" >"$T/out" 2>&1
rc=$?
check "configuration.md: ... a changed value in configs/default.json fails, naming the key" \
    eval '[ $rc -eq 1 ] && has "$T/out" "train.epochs: the table of differences says (10, 3)"'
sed 's/"clip_norm": 5.0,/"clip_norm": 1.0,/' configs/default.json >"$C/configs/default.json"
python3 scripts/docs/config_defaults.py --root "$C" >"$T/out" 2>&1
rc=$?
check "configuration.md: ... a new difference the table does not list fails, naming it" \
    eval '[ $rc -eq 1 ] && has "$T/out" "train.clip_norm: configs/default.json has 1.0, the default is 5.0"'

# docs/commands.md against the option tables (`nmt CMD --help`, which the man page is
# generated from): a row for every command, every option it names one some command
# takes, every option a command takes named on it.
NMT=${NMT:-./nmt}
case $NMT in /*) ;; *) NMT=$(pwd)/$NMT ;; esac    # make test gives "nmt"
if [ -x "$NMT" ]; then
    cmds=$("$NMT" --help | sed -n '/^commands:/,/^$/p' | grep -oE '^  [a-z]+' | tr -d ' ' | sort -u)
    : >"$T/helpopts"
    missing=
    for c in $cmds; do
        grep -q "^| \`nmt $c[ \`]" docs/commands.md || missing="$missing $c"
        "$NMT" $c --help >>"$T/helpopts" 2>&1
    done
    for c in learn apply join; do "$NMT" bpe $c --help >>"$T/helpopts" 2>&1; done
    "$NMT" --help >>"$T/helpopts" 2>&1
    grep -oE -- '--[a-z][a-z0-9-]*' "$T/helpopts" | sort -u >"$T/known"
    grep -oE -- '(^|[^a-z0-9-])--[a-z][a-z0-9-]*' docs/commands.md | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u >"$T/named"
    check "commands.md: nmt --help lists commands ($(echo $cmds)) and they have options for this test" \
        eval '[ "$(echo $cmds | wc -w)" -ge 8 ] && [ "$(wc -l <"$T/known")" -gt 30 ]'
    check "commands.md: a row for every command nmt --help lists (missing:${missing:- none})" [ -z "$missing" ]
    unknown=$(comm -13 "$T/known" "$T/named" | tr '\n' ' ')
    check "commands.md: every option it names is one a command takes (unknown: ${unknown:-none})" [ -z "$unknown" ]
    unnamed=$(comm -23 "$T/known" "$T/named" | tr '\n' ' ')
    check "commands.md: names every option the commands take (not named: ${unnamed:-none})" [ -z "$unnamed" ]
else
    echo "skip commands.md against the option tables: no $NMT (run make first)"
    skipped=$((skipped + 1))
fi

# The real rules of the worked example, against the README's own block: the last
# validation loss moved by 0.0041 (the issue's 2.0047 against 2.0088) passes; by 0.06
# fails, naming it.
$DOCS show worked_example >"$T/doc.txt"
loss=$(sed -n 's/.*epoch [0-9]* done.*validation loss \([0-9.]*\) .*/\1/p' "$T/doc.txt" | tail -n 1)
near=$(awk -v x="$loss" 'BEGIN { printf "%.4f", x + 0.0041 }')
far=$(awk -v x="$loss" 'BEGIN { printf "%.4f", x + 0.06 }')
sed "s/validation loss $loss (/validation loss $near (/" "$T/doc.txt" >"$T/near.txt"
sed "s/validation loss $loss (/validation loss $far (/" "$T/doc.txt" >"$T/far.txt"
check "worked_example: the README's block has a last validation loss ($loss) for this test to move" \
    eval '[ -n "$loss" ] && ! cmp -s "$T/doc.txt" "$T/near.txt"'
check "worked_example: a validation loss 0.0041 away passes" $DOCS compare worked_example "$T/doc.txt" "$T/near.txt"
$DOCS compare worked_example "$T/doc.txt" "$T/far.txt" >"$T/out" 2>&1
rc=$?
check "worked_example: a validation loss 0.06 away fails (exit 1)" [ $rc -eq 1 ]
check "worked_example: ... naming the block, the figure, both values and the tolerance" \
    has "$T/out" "block worked_example: validation loss: the document says $loss, the generator printed $far (tolerance ±"
# Machine-dependent figures are not compared.
sed -e 's/[0-9][0-9]* tok\/s/1 tok\/s/' -e 's/kernel [A-Za-z]*,/kernel Prescott,/' "$T/doc.txt" >"$T/machine.txt"
check "worked_example: other tokens/s and another OpenBLAS kernel pass" \
    $DOCS compare worked_example "$T/doc.txt" "$T/machine.txt"

# ---------------------------------------------------------------- 2. a scratch repository

# R is a repository of its own: one README with a generated block whose command prints
# $R/out.txt, a tolerances file, a raw results file.
R=$T/repo
mkdir -p "$R/scripts/docs" "$R/docs/bench"
cat >"$R/gen.sh" <<'GEN'
#!/bin/sh
cat out.txt
GEN
cat >"$R/out.txt" <<'OUT'
```
nmt: epoch 3 done at step 1425: validation loss 2.0047 (perplexity 7.42), 5000 tok/s, OpenBLAS kernel SkylakeX, 132s
मला भूक लागली आहे.
```
OUT
{
    echo "# Demo"
    echo
    echo "Some text."
    echo
    echo "<!-- generated block demo: sh gen.sh -->"
    cat "$R/out.txt"
    echo "<!-- end of generated block demo -->"
    echo
    echo "More text."
} >"$R/README.md"
printf '%s\t%s\t%s\t%s\n' \
    demo "validation loss" "validation loss NUM" 0.01 \
    demo "perplexity" "perplexity NUM" "1%" \
    demo "speed" "NUM tok/s" any \
    demo "kernel" "kernel WORD," any \
    demo "seconds" ", NUMs$" any \
    demo "translation" '^(?=[^\x00-\x7F])TEXT$' "1 words" >"$R/scripts/docs/tolerances.tsv"
echo '{"machine": {"cpu": "Test CPU", "cores": 2}, "date": "2026-01-01", "commit": "abc1234", "script": "gen.sh", "provenance": "measured"}' \
    >"$R/docs/bench/raw.json"
D="$DOCS --root $R"
cp "$R/README.md" "$T/README.orig"

# doc_after SED: rewrites what the generator prints (out.txt) with SED, then checks.
output() { sed "$1" "$T/README.orig" | sed -n '/^```$/,/^```$/p' >"$R/out.txt"; }
checks() { $D check demo >"$T/out" 2>"$T/err"; rc=$?; }

output 's/x/x/'
checks
check "scratch: unchanged output passes (exit 0)" [ $rc -eq 0 ]
check "scratch: ... and says so" has "$T/out" "check-docs: 1 blocks checked, 0 failed"

output 's/2\.0047/2.0140/; s/7\.42/7.49/; s/5000 tok/3 tok/; s/SkylakeX/Haswell/; s/132s/999s/'
checks
check "scratch: numbers within their tolerance and machine figures pass" [ $rc -eq 0 ]

output 's/2\.0047/2.0160/'
checks
check "scratch: a number 0.0113 away with a tolerance of 0.01 fails (exit 1)" [ $rc -eq 1 ]
check "scratch: ... naming file, line, block, figure, both values and the tolerance" \
    has "$T/out" "README.md:7: block demo: validation loss: the document says 2.0047, the generator printed 2.0160 (tolerance ±0.01)"

output 's/7\.42/7.52/'
checks
check "scratch: a relative tolerance (1% of 7.42) is exceeded by 7.52" \
    eval '[ $rc -eq 1 ] && has "$T/out" "perplexity: the document says 7.42, the generator printed 7.52 (tolerance ±1%)"'

output 's/step 1425/step 1426/'
checks
check "scratch: a number no rule covers must be equal" \
    eval '[ $rc -eq 1 ] && has "$T/out" "a number with no tolerance (must be equal): the document says 1425, the generator printed 1426"'

output 's/validation loss/valid loss/'
checks
check "scratch: a changed word fails, showing both lines" \
    eval '[ $rc -eq 1 ] && has "$T/out" "README.md:7: block demo: the line differs beyond its numbers" && has "$T/out" "now:      nmt: epoch 3 done at step 1425: valid loss"'

output 's/भूक/तहान/'
checks
check "scratch: a translation one word apart passes a tolerance of 1 word" [ $rc -eq 0 ]
output 's/भूक लागली/तहान लागणार/'
checks
check "scratch: ... two words apart fails, naming the figure and the distance" \
    eval '[ $rc -eq 1 ] && has "$T/out" "README.md:8: block demo: translation: 2 words differ (tolerance up to 1 words)"'

output 's/^मला.*/&\nएक ओळ जास्त/'
checks
check "scratch: an extra line fails, naming it" \
    eval '[ $rc -eq 1 ] && has "$T/out" "README.md:9: block demo: a line only in the output, before this one: एक ओळ जास्त" && has "$T/out" "the document has 4 lines, the generator printed 5"'

printf 'exit 3\n' >"$R/gen.sh"
checks
check "scratch: a generator that fails fails the check" \
    eval '[ $rc -eq 1 ] && has "$T/out" "FAILED: \`sh gen.sh\` exited non-zero"'
$D regenerate demo 2>"$T/err"
rc=$?
check "scratch: ... and regenerating leaves the block as it was (exit 1)" \
    eval '[ $rc -eq 1 ] && cmp -s "$R/README.md" "$T/README.orig"'
printf '#!/bin/sh\ncat out.txt\n' >"$R/gen.sh"

# Regenerating splices the output between the markers and touches nothing else.
printf '```\nnew line 1\nnew line 2\n```\n' >"$R/out.txt"
$D regenerate demo 2>"$T/err"
rc=$?
check "regenerate: exit 0" [ $rc -eq 0 ]
{ sed -n '1,5p' "$T/README.orig"; cat "$R/out.txt"; sed -n '/^<!-- end of generated block demo -->$/,$p' "$T/README.orig"; } >"$T/expected"
check "regenerate: the block is the output, the rest of the file unchanged" cmp -s "$R/README.md" "$T/expected"
$D regenerate demo 2>"$T/err"
check "regenerate: a second run changes nothing" eval 'cmp -s "$R/README.md" "$T/expected" && has "$T/err" "unchanged"'
# The new block has no validation loss: the rule for it is stale, and lint says so.
$D lint >"$T/out" 2>&1
rc=$?
check "lint: a tolerance rule that matches no line of its block fails (exit 1), naming it" \
    eval '[ $rc -eq 1 ] && has "$T/out" "tolerances.tsv:1: validation loss: the pattern matches no line of block demo"'
cp "$T/README.orig" "$R/README.md"
sed -n '/^```$/,/^```$/p' "$T/README.orig" >"$R/out.txt"

# Refusals (exit 2): markers that do not pair up, unknown names, bad rules.
sed 's/<!-- end of generated block demo -->/<!-- end of generated block other -->/' "$T/README.orig" >"$R/README.md"
$D check >"$T/out" 2>&1
rc=$?
check "markers: an end marker naming another block is refused (exit 2)" \
    eval '[ $rc -eq 2 ] && has "$T/out" "README.md:10: block demo (line 5) ends as other"'
grep -v '<!-- end of generated' "$T/README.orig" >"$R/README.md"
$D lint >"$T/out" 2>&1
rc=$?
check "markers: a block without its end is refused (exit 2)" eval '[ $rc -eq 2 ] && has "$T/out" "block demo has no end marker"'
cp "$T/README.orig" "$R/README.md"
$D check nosuch >"$T/out" 2>&1
rc=$?
check "check NAME: an unknown block is a usage error (exit 2)" eval '[ $rc -eq 2 ] && has "$T/out" "no generated block named nosuch"'
cp "$R/scripts/docs/tolerances.tsv" "$T/tol"
printf 'demo\tbroken\tno placeholder\t1\n' >>"$R/scripts/docs/tolerances.tsv"
$D lint >"$T/out" 2>&1
rc=$?
check "rules: a pattern without NUM, WORD or TEXT is refused (exit 2)" eval '[ $rc -eq 2 ] && has "$T/out" "tolerances.tsv:7: the pattern must hold one NUM, WORD or TEXT"'
cp "$T/tol" "$R/scripts/docs/tolerances.tsv"
printf 'demo\tbroken\tloss NUM\t2 words\n' >>"$R/scripts/docs/tolerances.tsv"
$D lint >"$T/out" 2>&1
rc=$?
check "rules: a number's tolerance in words is refused (exit 2)" eval '[ $rc -eq 2 ] && has "$T/out" "tolerances.tsv:7: tolerance must be"'
cp "$T/tol" "$R/scripts/docs/tolerances.tsv"

# Raw results must name their machine.
echo '{"date": "2026-01-01", "commit": "abc1234", "script": "gen.sh", "provenance": "measured"}' >"$R/docs/bench/raw.json"
$D lint >"$T/out" 2>&1
rc=$?
check "raw results: a file that names no machine fails lint (exit 1)" \
    eval '[ $rc -eq 1 ] && has "$T/out" "docs/bench/raw.json: does not name the machine"'
$D check demo >"$T/out" 2>&1
rc=$?
check "raw results: ... and fails any check too" [ $rc -eq 1 ]

# ---------------------------------------------------------------- 3. links.py on a scratch repository

L=$T/links
mkdir -p "$L/docs" "$L/configs"
echo '{}' >"$L/configs/a.json"
{
    echo "# Title"; echo; echo "## A section: with \`code\`, punctuation (and more)"; echo
    echo "See [the guide](docs/guide.md#the-part), [here](#a-section-with-code-punctuation-and-more),"
    echo "\`configs/a.json\`, [a picture](docs/pic.svg) and [a site](https://example.org/x)."
    echo '```'; echo "[inside a code block](nowhere.md) is not a link"; echo '```'
} >"$L/README.md"
printf '# Guide\n\n## The part\n\nBack to [the README](../README.md#title).\n' >"$L/docs/guide.md"
echo '<svg/>' >"$L/docs/pic.svg"
python3 scripts/docs/links.py --root "$L" >"$T/out" 2>&1
rc=$?
check "links scratch: files, anchors (punctuation and code in a heading), code-span paths that exist pass (exit 0)" [ $rc -eq 0 ]
cp "$L/README.md" "$T/links.orig"
sed -i 's|docs/guide.md#the-part|docs/guide.md#the-whole|' "$L/README.md"
python3 scripts/docs/links.py --root "$L" >"$T/out" 2>&1
rc=$?
check "links scratch: an anchor no heading has fails (exit 1), naming the file, line and anchor" \
    eval '[ $rc -eq 1 ] && has "$T/out" "README.md:5: link docs/guide.md#the-whole: docs/guide.md has no heading whose anchor is #the-whole"'
cp "$T/links.orig" "$L/README.md"
rm "$L/docs/pic.svg"
python3 scripts/docs/links.py --root "$L" >"$T/out" 2>&1
rc=$?
check "links scratch: a link to a file that does not exist fails, naming it" \
    eval '[ $rc -eq 1 ] && has "$T/out" "README.md:6: link docs/pic.svg: docs/pic.svg does not exist"'
echo '<svg/>' >"$L/docs/pic.svg"
rm "$L/configs/a.json"
python3 scripts/docs/links.py --root "$L" >"$T/out" 2>&1
rc=$?
check "links scratch: a repository path in a code span that does not exist fails, naming it" \
    eval '[ $rc -eq 1 ] && has "$T/out" "README.md:6: \`configs/a.json\`: no such file in the repository"'

finish
