#!/bin/sh
# test_options.sh — nmt's options as a user types them (issue 34): every option takes
# its value as the next argument or after '=', "--" ends the options, a usage error is
# one line naming the problem and the command's --help with exit 2, every --set problem
# is a usage error; the man page agrees with the option tables and the version; make
# install-data installs the man page, the configs and the docs.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_options.sh
# NMT=path/to/nmt selects another binary. A few seconds: about 80 short nmt runs and one
# tiny training run.

NAME=test_options
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, usage_error, tiny_model

COMMANDS="train translate classify eval serve info score plot average bpe"

# ---------------------------------------------------------------- --opt=value, for every option

# The options each command's table has, as nmt --help-man lists them (its terms: the
# bold words). An option given as --name= reaches the option's own check: a flag says it
# takes no value, any other what its value needs; never "unknown option".
"$NMT" --help-man >"$T/man" || bad "nmt --help-man exits 0"
options_of() {   # options_of CMD: the option names of CMD's block, one a line
    sed -n "/^\.\\\\\" BEGIN OPTIONS $1\$/,/^\.\\\\\" END OPTIONS $1\$/p" "$T/man" |
        grep -o '\\fB[^\\]*\(\\-[^\\]*\)*\\fR' | sed -e 's/^\\fB//' -e 's/\\fR$//' -e 's/\\-/-/g' | sort -u
}
n_options=0
for cmd in $COMMANDS; do
    options=$(options_of $cmd)
    [ -n "$options" ] || bad "$cmd: --help-man lists its options"
    for opt in $options; do
        n_options=$((n_options + 1))
        # bpe's options belong to some of its actions: the first that knows it answers.
        for action in $( [ $cmd = bpe ] && echo learn apply join || echo - ); do
            if [ $action = - ]; then run $cmd "$opt="; else run $cmd $action "$opt="; fi
            has "$T/err" "unknown option" || break
        done
        check "$cmd $opt=: a usage error about $opt's value, not an unknown option" \
            eval 'usage_error $cmd && ! has "$T/err" "unknown option" && has "$T/err" ": $opt " &&
                  { has "$T/err" "$opt takes no value" || has "$T/err" "$opt needs"; }'
    done
done
check "--help-man lists 50 or more options of the 9 commands (listed $n_options)" [ "$n_options" -ge 50 ]

# What --opt=value does is what --opt value does.
tiny_model "$T/m"
M=$T/m/model.bin
printf 'hello\nhow are you?\n' >"$T/in.txt"
"$NMT" translate "$M" --beam 2 --max-len 5 "$T/in.txt" >"$T/space.txt" 2>/dev/null
run translate "$M" --beam=2 --max-len=5 "$T/in.txt"
check "translate --beam=2 --max-len=5: what --beam 2 --max-len 5 writes" eval 'exits 0 && cmp -s "$T/out" "$T/space.txt"'
run translate "$T/in.txt" --models="$M" "$M" -o="$T/ens.txt"
check "translate --models=A B -o=FILE: an ensemble of two, written to FILE" \
    eval 'exits 0 && [ "$(lines "$T/ens.txt")" = 2 ]'
printf 'a b c\n' >"$T/ref.txt"
printf 'a b d\n' >"$T/hyp.txt"
"$NMT" score "$T/ref.txt" -i "$T/hyp.txt" -tok char --json >"$T/space.json" 2>/dev/null
run score "$T/ref.txt" -i="$T/hyp.txt" -tok=char --json
check "score -i=HYP -tok=char: what -i HYP -tok char writes" eval 'exits 0 && cmp -s "$T/out" "$T/space.json"'
run train "$T/tiny.json" --quiet --set=train.max_steps=2 --set="output.dir=$T/eq"
check "train --set=KEY=VALUE: the override taken (a run of 2 steps)" \
    eval 'exits 0 && grep -q "\"max_steps\":	2" "$T/eq/config.json"'

# ---------------------------------------------------------------- --: the end of the options

printf 'low@@ er new@@ est\n' >"$T/-pieces.txt"
cd "$T" || exit 1
run bpe join -pieces.txt
check "bpe join -pieces.txt: an unknown option (a file starting with '-' needs --)" usage_error bpe
run bpe join -- -pieces.txt
check "bpe join -- -pieces.txt: the file read" eval 'exits 0 && [ "$(cat "$T/out")" = "lower newest" ]'
printf 'hello\n' >"$T/-x.txt"
run translate "$M" --batch 2 -- -x.txt
"$NMT" translate "$M" --batch 2 <"$T/-x.txt" >"$T/x.want" 2>/dev/null
check "translate MODEL -- -x.txt: the file translated" eval 'exits 0 && cmp -s "$T/out" "$T/x.want"'
run bpe join -- --help
check "bpe join -- --help: a file named --help (missing), not the help" \
    eval 'exits 1 && has "$T/err" "nmt: --help: No such file"'
cd - >/dev/null || exit 1

# ---------------------------------------------------------------- usage errors: one line, exit 2

# Each: one line on stderr, "nmt: ...; see 'nmt CMD --help'", exit 2; nothing on stdout.
usage_case() {   # usage_case CMD WHAT ARGS...: nmt CMD ARGS... is a usage error saying WHAT
    cmd=$1 says=$2   # (not $what: check's own)
    shift 2
    run $cmd "$@"
    check "nmt $cmd $*: a usage error, one line saying '$says'" \
        eval 'usage_error $cmd && has "$T/err" "$says" && [ ! -s "$T/out" ]'
}
usage_case train "unknown option --frob" c.json --frob
usage_case train "missing CONFIG.json"
usage_case train "unexpected argument b.json" a.json b.json
usage_case train "--init-from starts a new run" c.json --resume --init-from m.bin
usage_case translate "unknown option --beams" "$M" --beams 5
usage_case translate "--max-len needs a number from 1 to 10000" "$M" --max-len 0
usage_case translate "--batch needs a number from 1 to 4096" "$M" --batch=
usage_case translate "--align takes no value" "$M" --align=yes
usage_case translate "missing MODEL.bin"
usage_case translate "--models needs two or more MODEL.bin files" --models "$M" --beam 2
usage_case translate "--attention-heads draws heatmaps" "$M" --attention-heads
usage_case classify "--probs needs nothing or all" "$M" --probs=some
usage_case classify "missing MODEL.bin"
usage_case eval "needs MODEL.bin and TEST.tsv" "$M"
usage_case eval "--text-column needs a column number" "$M" t.tsv --text-column 0
usage_case info "unexpected argument b.bin" a.bin b.bin
usage_case score "unknown tokeniser intl" r.txt -tok intl
usage_case score "-i given twice" r.txt -i a -i b
usage_case plot "missing RUN_DIR"
usage_case average "needs -o AVERAGE.bin" a.bin b.bin
usage_case bpe "unknown action 'merge' (learn, apply or join)" merge
usage_case bpe "unknown option --merges" apply codes --merges 5
usage_case bpe "--codes-format needs nmt|subword-nmt" learn --codes-format=spm

run
check "nmt alone: one line naming the commands and nmt --help, exit 2" \
    eval 'usage_error "" && has "$T/err" "missing COMMAND (train, translate"'
run frobnicate
check "nmt frobnicate: one line, unknown command, exit 2" eval 'usage_error "" && has "$T/err" "unknown command" && has "$T/err" frobnicate'
run --frob
check "nmt --frob: one line, unknown option, exit 2" eval 'usage_error "" && has "$T/err" "unknown option" && has "$T/err" --frob'
for cmd in $COMMANDS; do
    run $cmd --help
    check "nmt $cmd --help: its help on stdout, exit 0 (not an error)" \
        eval 'exits 0 && grep -q "^usage: nmt $cmd" "$T/out" && [ ! -s "$T/err" ]'
done

# --beam 0 names --beam (it named --length-penalty too), --length-penalty its own range.
run translate "$M" --beam 0
check "translate --beam 0: the message is about --beam alone" \
    eval 'usage_error translate && has "$T/err" "nmt: translate: --beam needs a number from 1 to 100;" && ! has "$T/err" "length-penalty"'
run eval "$M" t.tsv --length-penalty 9
check "eval --length-penalty 9: the message is about --length-penalty" \
    eval 'usage_error eval && has "$T/err" "nmt: eval: --length-penalty needs a number from 0 to 5 or avg;"'

# ---------------------------------------------------------------- --set: every problem exit 2

set_case() {   # set_case WHAT ARGS...: nmt train tiny.json ARGS... is a usage error saying WHAT
    says=$1
    shift
    run train "$T/tiny.json" --set "output.dir=$T/never" "$@"
    check "train $*: a usage error (exit 2, one line) saying '$says', nothing written" \
        eval 'usage_error train && has "$T/err" "$says" && [ ! -e "$T/never" ]'
}
set_case "--set model.hidden: expected SECTION.KEY=VALUE" --set model.hidden
set_case "--set train.threads: expected SECTION.KEY=VALUE, one argument: --set train.threads=1 if 1 is its value" \
    --set train.threads 1
set_case "--set needs SECTION.KEY=VALUE" --set
set_case "unknown key train.batchsize (did you mean train.batch_size?)" --set train.batchsize=3
set_case "--set: train.batch_size must be" --set train.batch_size=0
set_case "--set: data.tokenizer must be one of" --set data.tokenizer=words
set_case "--set: model.window applies only to local attention kinds" --set model.window=5
set_case "--set: data.spm_type applies only to the spm tokenizer" --set data.spm_type=bpe
set_case "--set: model.hidden must be even" --set model.bidirectional=true --set model.hidden=7
set_case "--set: model.hidden must be even" --set model.hidden=7 --set model.bidirectional=true
# A file a --set names that cannot be read is a failed job, as any unreadable input.
run train "$T/tiny.json" --set "data.train=$T/missing.tsv" --set "output.dir=$T/never"
check "train --set data.train=MISSING: exit 1 (an unreadable input, not a usage error), naming it" \
    eval 'exits 1 && has "$T/err" "$T/missing.tsv: No such file"'

# ---------------------------------------------------------------- the man page

check "docs/nmt.1 agrees with nmt's option tables and version (sh scripts/docs/man.sh --check)" \
    eval 'NMT="$NMT" sh scripts/docs/man.sh --check >"$T/out" 2>&1'
[ -s "$T/out" ] && sed 's/^/    | /' "$T/out" | head -n 20
check "docs/nmt.1's .TH names nmt --version's version" \
    grep -q "^\.TH NMT 1 .*\"nmt $("$NMT" --version | sed 's/^nmt //')\"" docs/nmt.1
# The check fails where the page differs: an option's entry, the version, a command.
sed 's/^at most N output words/at most N words/' docs/nmt.1 >"$T/edited.1"
check "man.sh --check fails on an option's entry edited by hand" \
    eval '! NMT="$NMT" sh scripts/docs/man.sh --check "$T/edited.1" >"$T/out" 2>&1 && has "$T/out" "at most N words"'
sed 's/"nmt [0-9.]*"/"nmt 0.2.0"/' docs/nmt.1 >"$T/old.1"
check "man.sh --check fails on another version" \
    eval '! NMT="$NMT" sh scripts/docs/man.sh --check "$T/old.1" >"$T/out" 2>&1 && has "$T/out" "nmt 0.2.0"'
sed '/^\.\\" BEGIN OPTIONS score$/,/^\.\\" END OPTIONS score$/d' docs/nmt.1 >"$T/noscore.1"
check "man.sh --check fails on a command without its options, naming it" \
    eval '! NMT="$NMT" sh scripts/docs/man.sh --check "$T/noscore.1" >"$T/out" 2>&1 && has "$T/out" "no block for nmt score"'
for cmd in $COMMANDS; do
    grep -q "^\.SS $cmd\$" docs/nmt.1 || missing="$missing $cmd"
done
check "docs/nmt.1 describes every command (missing:${missing:- none})" [ -z "$missing" ]
for word in Transformer classifier ensemble '\-\-batch' '\-\-threads' '\-\-models' '\-\-set'; do
    check "docs/nmt.1 mentions $word" grep -qF -- "$word" docs/nmt.1
done

# ---------------------------------------------------------------- make install-data

if command -v make >/dev/null 2>&1; then
    make -s --no-print-directory install-data DESTDIR="$T/root" PREFIX=/usr >"$T/out" 2>&1
    D=$T/root/usr/share
    check "make install-data: the man page, the configs (family/ too), README.md and docs/" \
        eval 'cmp -s "$D/man/man1/nmt.1" docs/nmt.1 && cmp -s "$D/nmt/configs/default.json" configs/default.json &&
              cmp -s "$D/nmt/configs/transformer.json" configs/transformer.json &&
              [ -f "$D/nmt/configs/family/lstm.json" ] && cmp -s "$D/doc/nmt/README.md" README.md &&
              [ -f "$D/doc/nmt/docs/distributed.md" ]'
    # Every document of the top level and of docs/ (the ones README.md links), so that
    # the installed README's links lead somewhere.
    missing=
    for f in *.md docs/*.md docs/*.svg docs/nmt.1; do
        cmp -s "$f" "$D/doc/nmt/$f" || missing="$missing $f"
    done
    check "make install-data: every top-level document and docs/*.md, *.svg under share/doc/nmt (missing:${missing:- none})" \
        [ -z "$missing" ]
    check "make install-data: ... among them the ones issue 34 named" \
        eval '( for f in BENCHMARKS.md CHANGELOG.md CONTRIBUTING.md docs/configuration.md docs/commands.md docs/formats.md docs/troubleshooting.md; do [ -f "$D/doc/nmt/$f" ] || exit 1; done )'
else
    skip "make install-data" "no make here"
fi

finish
