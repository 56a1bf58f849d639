#!/bin/sh
# test_files.sh — nmt and the files around it: no output written over an input, no
# file it did not write replaced, no symbolic link followed in a run directory.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_files.sh

NAME=test_files
. tests/lib.sh

M=$T/tiny
tiny_model "$M"
printf 'Go.\nHi.\nRun!\nWho?\nWow!\n' >"$T/five.txt"

# ---------------------------------------------------------------- -o over an input

cp "$T/five.txt" "$T/in.txt"
run translate "$M/model.bin" "$T/in.txt" -o "$T/in.txt"
check "translate IN -o IN: exit 0" exits 0
check "translate IN -o IN: IN holds the 5 translations, not an empty file" \
    eval '[ "$(lines "$T/in.txt")" = 5 ] && ! cmp -s "$T/in.txt" "$T/five.txt"'
"$NMT" translate "$M/model.bin" "$T/five.txt" >"$T/expected.txt" 2>/dev/null
check "translate IN -o IN: the same translations as to standard output" cmp -s "$T/in.txt" "$T/expected.txt"

cp "$T/five.txt" "$T/in.txt"
run translate "$M/model.bin" -o "$T/in.txt" <"$T/in.txt"
check "translate -o IN < IN: exit 0, IN holds the translations" \
    eval 'exits 0 && cmp -s "$T/in.txt" "$T/expected.txt"'

# A run that fails leaves the old output whole (the second input is missing).
printf 'old output\n' >"$T/out.txt"
run translate "$M/model.bin" "$T/five.txt" "$T/missing.txt" -o "$T/out.txt"
check "translate failing on its second input: exit 1, naming it" \
    eval 'exits 1 && has "$T/err" "$T/missing.txt"'
check "... the old -o file whole, no temporary file left" \
    eval '[ "$(cat "$T/out.txt")" = "old output" ] && ! ls "$T" | grep -q "\.tmp-"'

# -o at a symbolic link: the link is replaced, its target untouched.
printf 'precious\n' >"$T/victim.txt"
ln -s "$T/victim.txt" "$T/link.txt"
run translate "$M/model.bin" "$T/five.txt" -o "$T/link.txt"
check "translate -o LINK: exit 0, LINK now a file with the translations, the target untouched" \
    eval 'exits 0 && [ ! -L "$T/link.txt" ] && cmp -s "$T/link.txt" "$T/expected.txt" && [ "$(cat "$T/victim.txt")" = precious ]'
run translate "$M/model.bin" "$T/five.txt" -o /dev/null
check "translate -o /dev/null: exit 0, /dev/null still a device" eval 'exits 0 && [ -c /dev/null ]'
run translate "$M/model.bin" "$T/five.txt" -o "$T"
check "translate -o DIRECTORY: exit 1, naming it" eval 'exits 1 && has "$T/err" "$T: cannot write: Is a directory"'

# nmt bpe: learn, apply and join with -o naming their input.
awk -F'\t' 'NR <= 300 {print $1}' "$DATA" >"$T/en.txt"
cp "$T/en.txt" "$T/learn.txt"
"$NMT" bpe learn --merges 50 "$T/en.txt" >"$T/codes.expected" 2>/dev/null
run bpe learn --merges 50 "$T/learn.txt" -o "$T/learn.txt"
check "bpe learn IN -o IN: exit 0, IN holds the codes" eval 'exits 0 && cmp -s "$T/learn.txt" "$T/codes.expected"'
"$NMT" bpe apply "$T/codes.expected" "$T/en.txt" >"$T/applied.expected" 2>/dev/null
cp "$T/en.txt" "$T/apply.txt"
run bpe apply "$T/codes.expected" "$T/apply.txt" -o "$T/apply.txt"
check "bpe apply CODES IN -o IN: exit 0, IN holds the segmented text" \
    eval 'exits 0 && cmp -s "$T/apply.txt" "$T/applied.expected"'
run bpe join "$T/apply.txt" -o "$T/apply.txt"
check "bpe join IN -o IN: exit 0, IN holds the text joined back" eval 'exits 0 && cmp -s "$T/apply.txt" "$T/en.txt"'
cp "$T/en.txt" "$T/codes-in.txt"
run bpe apply "$T/codes-in.txt" "$T/en.txt" -o "$T/codes-in.txt"
check "bpe apply with -o naming CODES: exit 1 (not codes), CODES untouched" \
    eval 'exits 1 && cmp -s "$T/codes-in.txt" "$T/en.txt"'

# ---------------------------------------------------------------- -o over what a command only reads

# -o may name a text the command transforms (above), never the model it reads, a codes
# file, a dictionary, a train.log, another model file or a run directory's file.
cp "$M/model.bin" "$T/m.bin"
cp "$M/model.bin" "$T/m.copy"
run translate "$T/m.bin" "$T/five.txt" -o "$T/m.bin"
check "translate M.bin -o M.bin: exit 1, naming the model; the model untouched" \
    eval 'exits 1 && has "$T/err" "$T/m.bin: -o names a model of the run" && cmp -s "$T/m.bin" "$T/m.copy"'
ln -s "$T/m.bin" "$T/m-link.bin"
run translate "$T/m-link.bin" "$T/five.txt" -o "$T/m.bin"
check "translate LINK -o M.bin (LINK leads to M.bin): exit 1; the model untouched" \
    eval 'exits 1 && has "$T/err" "names a model of the run ($T/m-link.bin)" && cmp -s "$T/m.bin" "$T/m.copy"'
ln "$T/m.bin" "$T/m-hard.bin"
run translate "$T/m.bin" "$T/five.txt" -o "$T/m-hard.bin"
check "translate M.bin -o HARDLINK: exit 1; the model untouched" eval 'exits 1 && cmp -s "$T/m-hard.bin" "$T/m.copy"'
run translate "$T/five.txt" --models "$T/m.bin" "$M/model.bin" -o "$M/model.bin"
check "translate --models A B -o B: exit 1, naming B" \
    eval 'exits 1 && has "$T/err" "$M/model.bin: -o names a model of the run"'
printf 'Go.\tजा.\n' >"$T/dict.tsv"
cp "$T/dict.tsv" "$T/dict.copy"
run translate "$T/m.bin" "$T/five.txt" --unk-dict "$T/dict.tsv" -o "$T/dict.tsv"
check "translate --unk-dict D -o D: exit 1, the dictionary untouched" \
    eval 'exits 1 && has "$T/err" "--unk-dict'"'"'s dictionary" && cmp -s "$T/dict.tsv" "$T/dict.copy"'
cp "$M/model.bin" "$T/other.bin"
run translate "$T/m.bin" "$T/five.txt" -o "$T/other.bin"
check "translate -o OTHER.bin (a model file it does not read): exit 1, the file untouched" \
    eval 'exits 1 && has "$T/err" "$T/other.bin: an nmt model file" && cmp -s "$T/other.bin" "$T/m.copy"'
cp "$M/train.log" "$T/log.copy"
run translate "$T/m.bin" "$T/five.txt" -o "$M/train.log"
check "translate -o RUN/train.log: exit 1, naming the run directory; train.log untouched" \
    eval 'exits 1 && has "$T/err" "$M/train.log: a file of an nmt run directory" && cmp -s "$M/train.log" "$T/log.copy"'
run bpe apply "$T/m.bin" "$T/five.txt" -o "$T/m.bin"
check "bpe apply MODEL.bin IN -o MODEL.bin: exit 1, the model untouched" \
    eval 'exits 1 && has "$T/err" "-o names CODES" && cmp -s "$T/m.bin" "$T/m.copy"'
cp "$T/codes.expected" "$T/codes.txt"
run bpe apply "$T/codes.txt" "$T/en.txt" -o "$T/codes.txt"
check "bpe apply CODES IN -o CODES (a codes file): exit 1, CODES untouched" \
    eval 'exits 1 && has "$T/err" "-o names CODES" && cmp -s "$T/codes.txt" "$T/codes.expected"'
run bpe learn "$T/en.txt" -o "$T/m.bin"
check "bpe learn -o MODEL.bin: exit 1, the model untouched" eval 'exits 1 && cmp -s "$T/m.bin" "$T/m.copy"'
run plot "$M" -o "$M/train.log"
check "plot RUN -o RUN/train.log: exit 1, naming the log it draws; train.log untouched" \
    eval 'exits 1 && has "$T/err" "-o names the run'"'"'s train.log" && cmp -s "$M/train.log" "$T/log.copy"'
run plot "$M" -o "$M/model.bin"
check "plot RUN -o RUN/model.bin: exit 1, model.bin untouched" \
    eval 'exits 1 && cmp -s "$M/model.bin" "$T/m.copy"'
run plot "$M" -o "$M/training.svg"
check "plot RUN -o RUN/training.svg (its own chart): exit 0" exits 0
mkdir "$T/notrun"
cp "$M/train.log" "$T/notrun/train.log"
printf '<svg>my own drawing</svg>\n' >"$T/notrun/training.svg"
run plot "$T/notrun"
check "plot DIR where DIR/training.svg is not nmt's chart: exit 1, the file untouched" \
    eval 'exits 1 && has "$T/err" "$T/notrun/training.svg: not a chart nmt drew" && [ "$(cat "$T/notrun/training.svg")" = "<svg>my own drawing</svg>" ]'
cp "$T/m.bin" "$T/avg-target.bin"
run average "$M/model.bin" "$T/m.bin" -o "$M/best.bin"
check "average ... -o RUN/best.bin (a run directory's file): exit 1" \
    eval 'exits 1 && has "$T/err" "$M/best.bin: a file of an nmt run directory"'
run average "$M/model.bin" "$T/m.bin" -o "$T/avg-target.bin"
check "average ... -o OTHER.bin (a model file, not an input): exit 0, written" exits 0

# --attention-svg DIR: the pictures replace only pictures nmt drew.
mkdir "$T/svgs"
printf 'my notes\n' >"$T/svgs/000002.svg"
run translate "$T/m.bin" "$T/five.txt" --attention-svg "$T/svgs"
check "translate --attention-svg DIR holding a user's 000002.svg: exit 1, naming it, untouched, nothing drawn" \
    eval 'exits 1 && has "$T/err" "$T/svgs/000002.svg: not a picture nmt drew" && [ "$(cat "$T/svgs/000002.svg")" = "my notes" ] && [ ! -e "$T/svgs/000001.svg" ]'
rm "$T/svgs/000002.svg"
run translate "$T/m.bin" "$T/five.txt" --attention-svg "$T/svgs"
run translate "$T/m.bin" "$T/five.txt" --attention-svg "$T/svgs"
check "translate --attention-svg DIR twice: exit 0, the pictures of the first run replaced" \
    eval 'exits 0 && [ -s "$T/svgs/000005.svg" ]'
run translate "$T/m.bin" "$T/five.txt" --attention-svg "$T/m.bin"
check "translate --attention-svg FILE: exit 1 (not a directory), the file untouched" \
    eval 'exits 1 && has "$T/err" "$T/m.bin: not a directory" && cmp -s "$T/m.bin" "$T/m.copy"'

# --export-batches FILE: not an input of the run, nor a file of output.dir.
cp "$T/tiny-train.tsv" "$T/tiny-train.copy"
run train "$T/tiny.json" --set output.dir="$T/runs/export" --export-batches "$T/tiny-train.tsv"
check "train --export-batches DATA.TRAIN: exit 1, naming data.train; the corpus untouched" \
    eval 'exits 1 && has "$T/err" "--export-batches names data.train" && cmp -s "$T/tiny-train.tsv" "$T/tiny-train.copy"'
run train "$T/tiny.json" --set output.dir="$T/runs/export" --export-batches "$T/runs/export/model.bin"
check "train --export-batches NEW_OUTPUT_DIR/model.bin: exit 1 (no such directory), nothing made" \
    eval 'exits 1 && has "$T/err" "$T/runs/export is not a directory" && [ ! -e "$T/runs/export" ]'
run train "$T/tiny.json" --set output.dir="$M" --export-batches "$M/model.bin"
check "train --export-batches OUTPUT_DIR/model.bin: exit 1, model.bin untouched" \
    eval 'exits 1 && has "$T/err" "$M/model.bin: an nmt model file" && cmp -s "$M/model.bin" "$T/m.copy"'
mkdir -p "$T/runs/export"
run train "$T/tiny.json" --set output.dir="$T/runs/export" --export-batches "$T/runs/export/train.log"
check "train --export-batches OUTPUT_DIR/train.log (a new directory): exit 1, nothing written there" \
    eval 'exits 1 && has "$T/err" "a file nmt train writes in output.dir" && [ -z "$(ls "$T/runs/export")" ]'

# -o - is standard output, as - is standard input: no file named "-" appears.
mkdir "$T/dash"
(cd "$T/dash" && $LIMIT "$NMT" translate "$M/model.bin" "$T/five.txt" -o - >"$T/out" 2>"$T/err")
rc=$?
check "translate -o -: exit 0, the translations on standard output, no file named -" \
    eval 'exits 0 && cmp -s "$T/out" "$T/expected.txt" && [ -z "$(ls -A "$T/dash")" ]'
(cd "$T/dash" && $LIMIT "$NMT" average "$M/model.bin" "$T/m.bin" -o - >"$T/out" 2>"$T/err")
rc=$?
check "average ... -o -: exit 0, a model file on standard output" \
    eval 'exits 0 && [ "$(head -c 8 "$T/out")" = NMTMODEL ] && [ -z "$(ls -A "$T/dash")" ]'

# ---------------------------------------------------------------- the run directory

# data.train inside output.dir at a name nmt writes: refused before anything is written.
R=$T/runs/r
cat >"$T/r.json" <<EOF
{"data": {"train": "$R/valid.tsv"}, "model": {"embed": 8, "hidden": 8},
 "train": {"epochs": 1, "threads": 1}, "output": {"dir": "$R"}}
EOF
"$NMT" train --quiet "$T/tiny.json" --set output.dir="$R" >/dev/null 2>&1  # makes $R a run directory
cp "$T/tiny-train.tsv" "$R/valid.tsv"
run train "$T/r.json"
check "data.train is output.dir's valid.tsv: exit 1, naming data.train and the file" \
    eval 'exits 1 && has "$T/err" "data.train: $R/valid.tsv is $R/valid.tsv, a file nmt train writes"'
check "... the corpus whole (200 lines)" eval '[ "$(lines "$R/valid.tsv")" = 200 ]'
cat >"$T/r2.json" <<EOF
{"data": {"train": "$T/tiny-train.tsv", "valid": "$R/train.log"}, "model": {"embed": 8, "hidden": 8},
 "train": {"epochs": 1, "threads": 1}, "output": {"dir": "$R"}}
EOF
cp "$R/train.log" "$T/log.before"
run train "$T/r2.json"
check "data.valid is output.dir's train.log: exit 1, naming data.valid; train.log untouched" \
    eval 'exits 1 && has "$T/err" "data.valid: $R/train.log is $R/train.log" && cmp -s "$R/train.log" "$T/log.before"'
cp "$R/config.json" "$T/config.before"
run train "$R/config.json"
check "nmt train RUN/config.json (not resuming): exit 1, the config file named, untouched" \
    eval 'exits 1 && has "$T/err" "the config file: $R/config.json is" && cmp -s "$R/config.json" "$T/config.before"'

# output.dir "." holding a user's own config.json: refused, nothing written.
mkdir "$T/here"
printf '{"my": "own"}\n' >"$T/here/config.json"
sed -e "s|\"dir\": \"$M\"|\"dir\": \".\"|" "$T/tiny.json" >"$T/here/mine.json"
(cd "$T/here" && $LIMIT "$NMT" train mine.json >"$T/out" 2>"$T/err")
rc=$?
check "output.dir \".\" with a user's config.json: exit 1, naming ./config.json" \
    eval 'exits 1 && has "$T/err" "./config.json: not written by nmt train"'
check "... nothing written: config.json as it was, no train.lock, train.log or valid.tsv" \
    eval '[ "$(cat "$T/here/config.json")" = "{\"my\": \"own\"}" ] && [ ! -e "$T/here/train.lock" ] && [ ! -e "$T/here/train.log" ] && [ ! -e "$T/here/valid.tsv" ]'
# The config itself named config.json in output.dir ".": the same refusal.
mkdir "$T/here2"
sed -e "s|\"dir\": \"$M\"|\"dir\": \".\"|" "$T/tiny.json" >"$T/here2/config.json"
cp "$T/here2/config.json" "$T/here2.before"
(cd "$T/here2" && $LIMIT "$NMT" train config.json >"$T/out" 2>"$T/err")
rc=$?
check "nmt train config.json with output.dir \".\": exit 1, config.json untouched" \
    eval 'exits 1 && has "$T/err" "config.json" && cmp -s "$T/here2/config.json" "$T/here2.before"'
# output.dir holding a user's own model.bin (a model kept there) and no train.lock: not
# a run directory, and the model not this run's to replace.
mkdir "$T/kept"
cp "$M/model.bin" "$T/kept/model.bin"
sed -e "s|\"dir\": \"$M\"|\"dir\": \"$T/kept\"|" "$T/tiny.json" >"$T/kept.json"
run train --quiet "$T/kept.json"
check "output.dir holding a user's model.bin and no train.lock: exit 1, naming it" \
    eval 'exits 1 && has "$T/err" "$T/kept/model.bin: an nmt model file, but not of a run here"'
check "... the model untouched, nothing written" \
    eval 'cmp -s "$T/kept/model.bin" "$M/model.bin" && [ "$(ls "$T/kept")" = model.bin ]'
# A directory of other files is fine: nmt writes only its own names.
mkdir "$T/here3"
printf 'notes\n' >"$T/here3/notes.txt"
sed -e "s|\"dir\": \"$M\"|\"dir\": \".\"|" "$T/tiny.json" >"$T/mine3.json"
(cd "$T/here3" && $LIMIT "$NMT" train --quiet "$T/mine3.json" >"$T/out" 2>"$T/err")
rc=$?
check "output.dir \".\" with only other files: exit 0, the user's file untouched, train.lock marks it" \
    eval 'exits 0 && [ "$(cat "$T/here3/notes.txt")" = notes ] && grep -q "^nmt run directory" "$T/here3/train.lock"'

# Symbolic links planted in a run directory: never followed.
L=$T/runs/linked
mkdir -p "$L"
printf 'precious\n' >"$T/victim2.txt"
ln -s "$T/victim2.txt" "$L/train.log"
sed -e "s|\"dir\": \"$M\"|\"dir\": \"$L\"|" "$T/tiny.json" >"$T/linked.json"
run train --quiet "$T/linked.json"
check "a symbolic link at train.log: exit 1, naming it" \
    eval 'exits 1 && has "$T/err" "$L/train.log: a symbolic link"'
check "... its target untouched, nothing written" \
    eval '[ "$(cat "$T/victim2.txt")" = precious ] && [ ! -e "$L/config.json" ] && [ ! -e "$L/train.lock" ]'
rm "$L/train.log"
ln -s "$T/victim2.txt" "$L/train.lock"
run train --quiet "$T/linked.json"
check "a symbolic link at train.lock: exit 1, its target untouched" \
    eval 'exits 1 && has "$T/err" "$L/train.lock" && [ "$(cat "$T/victim2.txt")" = precious ]'
rm "$L/train.lock"
# Links at the names temporary files once had (NAME.tmp) lead nowhere now.
for f in model.bin.tmp best.bin.tmp checkpoint.bin.tmp config.json.tmp valid.tsv.tmp; do
    ln -s "$T/victim2.txt" "$L/$f"
done
run train --quiet "$T/linked.json"
check "links at NAME.tmp: exit 0, their target untouched" \
    eval 'exits 0 && [ "$(cat "$T/victim2.txt")" = precious ] && [ -s "$L/model.bin" ]'

# --init-from LINK, LINK a symbolic link to a checkpoint of the finished run in
# output.dir (whose checkpoints a new run there deletes): refused, by the file it leads
# to, not by the spelling of its path; and so is a hard link to one.
cp -r "$M" "$T/runs/fin"
newest=$(ls "$T/runs/fin" | grep '^checkpoint-[0-9]*\.bin$' | tail -n 1)
ln -s "$T/runs/fin/$newest" "$T/init-link.bin"
ls "$T/runs/fin" >"$T/fin.before"
run train "$T/tiny.json" --init-from "$T/init-link.bin" --set output.dir="$T/runs/fin"
check "train --init-from LINK (to a checkpoint in output.dir): exit 1, naming it" \
    eval 'exits 1 && has "$T/err" "train.init_from: $T/init-link.bin is in output.dir $T/runs/fin"'
check "... the finished run's files all there, the link's target readable" \
    eval 'ls "$T/runs/fin" | cmp -s - "$T/fin.before" && "$NMT" info "$T/init-link.bin" >/dev/null 2>&1'
ln "$T/runs/fin/$newest" "$T/init-hard.bin"
run train "$T/tiny.json" --init-from "$T/init-hard.bin" --set output.dir="$T/runs/fin"
check "train --init-from HARDLINK (to a checkpoint in output.dir): exit 1; the run's files all there" \
    eval 'exits 1 && has "$T/err" "is in output.dir" && ls "$T/runs/fin" | cmp -s - "$T/fin.before"'

# A run directory of an older nmt (an empty train.lock) goes on being used.
: >"$L/train.lock"
run train --quiet "$T/linked.json"
check "a run directory with an empty train.lock (nmt 0.4): exit 0, marked now" \
    eval 'exits 0 && grep -q "^nmt run directory" "$L/train.lock"'

finish
