#!/bin/sh
# test_serve.sh — nmt serve end to end: every endpoint and every error, translations the
# same bytes as nmt translate's (greedy, beam, n-best lists and scores, attention,
# Transformer heads and layers, an ensemble), labels as nmt classify's, each limit
# (body bytes, lines, the queue, the time limit, a client that stalls), and SIGTERM
# with a request in flight (it is answered, then exit 0); --compute-type int8.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_serve.sh
# Needs curl (sh scripts/install-deps.sh --test-tools) and $TOOLS/json_get (make test
# builds it). Trains its own small models (a few seconds). Nothing here depends on a
# clock: a server is waited for through its address line and GET /health, and the
# requests that must be in flight at a known point are held there by the test hook
# NMT_SERVE_GATE (src/base/testhook.h), a pipe the test writes to.

NAME=test_serve
. tests/lib.sh

JSON=${TOOLS:-build}/json_get
case $JSON in /*) ;; *) JSON=$(pwd)/$JSON ;; esac
if ! command -v curl >/dev/null 2>&1; then
    skip "nmt serve" "no curl (sh scripts/install-deps.sh --test-tools installs it)"
    finish
fi
[ -x "$JSON" ] || { bad "setup: $JSON (make $JSON)"; finish; }

# ---------------------------------------------------------------- models and lines

small_model gru "$T/gru"
small_model transformer "$T/tr"
small_model classifier "$T/cls"
GRU=$T/gru/model.bin TR=$T/tr/model.bin CLS=$T/cls/model.bin
# 40 source lines of all lengths, an empty one among them.
cut -f1 "$DATA" | awk 'NR % 97 == 0' | head -n 39 >"$T/src.txt"
printf '\n' >>"$T/src.txt"
cut -f1 data/sentiment.tsv | head -n 30 >"$T/cls_src.txt"

# lines_json FILE — FILE's lines as a JSON array of strings (\, " and tabs escaped).
lines_json() {
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e "s/$(printf '\t')/\\\\t/g" "$1" |
        awk 'BEGIN {printf "["} {printf "%s\"%s\"", (NR > 1 ? ", " : ""), $0} END {printf "]"}'
}
SRC=$(lines_json "$T/src.txt")

# show_diff — what differs between $T/want and $T/got, a few lines, after a failed check.
show_diff() { cmp -s "$T/want" "$T/got" || diff "$T/want" "$T/got" | head -n 6 | sed 's/^/    | /'; }

# ---------------------------------------------------------------- starting and asking

# The servers still running (a check that ends the test early leaves none behind).
SERVERS=
trap 'for p in $SERVERS; do kill -TERM $p 2>/dev/null; done; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT

# wait_server — waits for server $PID to exit: its status in $rc.
wait_server() {
    wait $PID
    rc=$?
    SERVERS=$(echo " $SERVERS " | sed "s/ $PID / /")
}

# start NAME ARGS... — nmt serve ARGS on a free port (port 0: the kernel picks one, and
# the server prints it), in the background: $PID, $URL; waits for the address line and
# for GET /health to answer 200.
start() {
    name=$1
    shift
    $LIMIT "$NMT" serve "$@" --listen 127.0.0.1:0 >"$T/$name.url" 2>"$T/$name.log" &
    PID=$!
    SERVERS="$SERVERS $PID"
    i=0
    while [ ! -s "$T/$name.url" ] && kill -0 $PID 2>/dev/null && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
    URL=$(head -n 1 "$T/$name.url")
    i=0
    while [ -n "$URL" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "${URL}health")" != 200 ] && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ -n "$URL" ] || { bad "setup: nmt serve $* printed no address"; sed 's/^/    | /' "$T/$name.log"; finish; }
}

# ask NAME METHOD PATH [BODY] — the answer's body in $T/NAME.json, its status in $code.
ask() {
    if [ -n "$4" ]; then printf '%s' "$4" >"$T/$1.req"; else : >"$T/$1.req"; fi
    if [ "$2" = POST ]; then
        code=$(curl -s -o "$T/$1.json" -w '%{http_code}' -H 'Content-Type: application/json' \
            --data-binary @"$T/$1.req" "$URL${3#/}")
    else
        code=$(curl -s -o "$T/$1.json" -w '%{http_code}' -X "$2" "$URL${3#/}")
    fi
}
get() { "$JSON" "$@" <"$T/$answer.json"; }
# error_is STATUS TEXT — the last answer was STATUS with {"error": "...TEXT..."}.
error_is() { [ "$code" = "$1" ] && get error | grep -qF -- "$2"; }
# health_is KEY VALUE — GET /health says KEY: VALUE now.
health_is() { curl -s "${URL}health" | "$JSON" "$1" | grep -qx "$2"; }
# wait_health KEY VALUE — waits (a condition, at most 5 minutes) until health_is.
wait_health() { i=0; while ! health_is "$1" "$2" && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done; health_is "$1" "$2"; }

# nbest_lines ANSWER — the n-best lists of /translate's answer as nmt translate --nbest
# writes them: "LINE ||| text ||| F0= LOGPROB ||| SCORE".
nbest_lines() {
    n=$("$JSON" count:translations.* <"$T/$1.json")
    i=0
    while [ $i -lt "$n" ]; do
        "$JSON" "translations.$i.nbest.*.text" <"$T/$1.json" >"$T/nb.text"
        "$JSON" "translations.$i.nbest.*.logprob" %.6f <"$T/$1.json" >"$T/nb.lp"
        "$JSON" "translations.$i.nbest.*.score" %.6f <"$T/$1.json" >"$T/nb.score"
        paste -d '\t' "$T/nb.text" "$T/nb.lp" "$T/nb.score" |
            awk -F '\t' -v i=$i '{printf "%d ||| %s ||| F0= %s ||| %s\n", i, $1, $2, $3}'
        i=$((i + 1))
    done
}

# ---------------------------------------------------------------- the endpoints

start main "$GRU" "$TR" "$CLS" --workers 2 --max-lines 100 --max-body-bytes 65536
answer=main
ask main GET /health
check "GET /health: 200, status ok, 3 models, 2 workers" \
    eval '[ $code = 200 ] && [ "$(get status)" = ok ] && [ "$(get models)" = 3 ] && [ "$(get workers)" = 2 ]'
ask main GET /models
check "GET /models: the three models by the paths given, their tasks" \
    eval '[ $code = 200 ] && [ "$(get "models.*.name" | tr "\n" " ")" = "$GRU $TR $CLS " ] &&
          [ "$(get "models.*.task" | tr "\n" " ")" = "translate translate classify " ]'
k=0
for m in "$GRU" "$TR" "$CLS"; do
    "$NMT" info --json "$m" >"$T/info.want"
    get "models.$k.info" >"$T/info.got"
    check "GET /models: model $k's info is nmt info --json's, byte for byte" cmp -s "$T/info.want" "$T/info.got"
    k=$((k + 1))
done
ask main GET /
check "GET /: 200, the page" eval '[ $code = 200 ] && has "$T/main.json" "<title>" && has "$T/main.json" "/translate"'
check "GET /: self-contained (no script, style, font or image from elsewhere)" \
    eval '! grep -Eiq "(src|href)=\"?(https?:)?//|@import|url\\((https?:)?//" "$T/main.json"'
curl -s -D "$T/head" -o /dev/null "$URL"
check "GET /: a Content-Security-Policy that lets nothing else in" \
    eval 'grep -qi "^content-security-policy: default-src .none.;" "$T/head"'
check "HEAD /: 200 without a body" eval '[ "$(curl -s -I -o /dev/null -w "%{http_code} %{size_download}" "$URL")" = "200 0" ]'

# /translate against nmt translate, byte for byte.
compare() {   # compare WHAT REQUEST-KEYS NMT-TRANSLATE-OPTIONS... (answer: the texts)
    what=$1 keys=$2
    shift 2
    ask main POST /translate "{\"text\": $SRC$keys}"
    get "translations.*.text" >"$T/got"
    $LIMIT "$NMT" translate "$@" "$T/src.txt" >"$T/want" 2>/dev/null
    check "POST /translate, $what: the text of nmt translate $* ($(lines "$T/want") lines)" \
        eval '[ $code = 200 ] && [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"'
    show_diff
}
compare "greedy (the default model, the default --batch 16)" "" "$GRU" --batch 16
compare "greedy, batch 1" ", \"batch\": 1" "$GRU" --batch 1
compare "beam 4" ", \"beam\": 4" "$GRU" --beam 4 --batch 16
compare "the Transformer, beam 3, length penalty 1" ", \"model\": \"$TR\", \"beam\": 3, \"length_penalty\": 1" \
    "$TR" --beam 3 --length-penalty 1 --batch 16
compare "length_penalty avg, max_len 5" ", \"beam\": 2, \"length_penalty\": \"avg\", \"max_len\": 5" \
    "$GRU" --beam 2 --length-penalty avg --max-len 5 --batch 16
compare "replace_unk" ", \"replace_unk\": true" "$GRU" --replace-unk --batch 16

for m in GRU TR; do
    eval M=\$$m
    ask main POST /translate "{\"text\": $SRC, \"model\": \"$M\", \"beam\": 4, \"nbest\": 3, \"batch\": 8}"
    nbest_lines main >"$T/got"
    $LIMIT "$NMT" translate "$M" --beam 4 --nbest 3 --batch 8 "$T/src.txt" >"$T/want" 2>/dev/null
    check "POST /translate $m, nbest 3: the n-best lists and scores of nmt translate --nbest 3 ($(lines "$T/want") lines)" \
        eval '[ $code = 200 ] && [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"'
    show_diff
done

# Attention: the matrix and tokens of --attention-json, the same digits.
for spec in "GRU:" "TR:" "TR:1"; do
    m=${spec%%:*} layer=${spec#*:}
    eval M=\$$m
    ask main POST /translate "{\"text\": $SRC, \"model\": \"$M\", \"attention\": true${layer:+, \"layer\": $layer}}"
    $LIMIT "$NMT" translate "$M" --attention-json --batch 16 ${layer:+--align-layer $layer} "$T/src.txt" >"$T/want.json" \
        2>/dev/null
    : >"$T/want"
    while IFS= read -r record; do
        printf '%s\n' "$record" | "$JSON" source
        printf '%s\n' "$record" | "$JSON" output
        printf '%s\n' "$record" | "$JSON" attention
    done <"$T/want.json" >"$T/want"
    get "translations.*.attention.*" | grep -v '^[0-9]*$' >"$T/got"
    check "POST /translate $m${layer:+ layer $layer}, attention: tokens and weights of --attention-json" \
        eval '[ $code = 200 ] && [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"'
    show_diff
done
ask main POST /translate "{\"text\": [\"मी घरी जातो.\"], \"model\": \"$TR\", \"heads\": true, \"layer\": 2}"
rows=$(get "translations.0.attention.weights.*" | wc -l)
check "POST /translate, heads: 4 heads of the layer asked, each an output x source matrix" \
    eval '[ $code = 200 ] && [ "$(get count:translations.0.attention.heads.*)" = 4 ] &&
          [ "$(get "translations.0.attention.heads.*.*" | wc -l)" = $((4 * rows)) ] && [ "$(get translations.0.attention.layer)" = 2 ]'

# /classify against nmt classify.
# classified — $T/got: the labels and probabilities of the last answer ($answer's), as
# nmt classify --probs writes them; $n its lines ($T/want's).
classified() {
    n=$(lines "$T/want")
    i=0
    : >"$T/got"
    while [ $i -lt "$n" ]; do
        label=$(get "classifications.$i.label")
        printf '%s\t%s\n' "$label" "$(get "classifications.$i.probabilities.$label" %.4f)" >>"$T/got"
        i=$((i + 1))
    done
}
answer=main
ask main POST /classify "{\"text\": $(lines_json "$T/cls_src.txt"), \"attention\": true}"
$LIMIT "$NMT" classify "$CLS" --probs "$T/cls_src.txt" >"$T/want" 2>/dev/null
classified
check "POST /classify: the labels and probabilities of nmt classify --probs ($n lines)" \
    eval '[ $code = 200 ] && [ "$n" -gt 0 ] && cmp -s "$T/want" "$T/got"'
show_diff
check "POST /classify, attention: a weight per token" \
    eval '[ "$(get count:classifications.0.attention.tokens.*)" -gt 0 ] &&
          [ "$(get count:classifications.0.attention.tokens.*)" = "$(get count:classifications.0.attention.weights.*)" ]'

# ---------------------------------------------------------------- errors

refused() {   # refused STATUS TEXT WHAT BODY — POST /translate BODY is refused so
    ask main POST /translate "$4"
    check "POST /translate, $3: $1 naming it" error_is "$1" "$2"
}
refused 400 "not JSON" "a body that is not JSON" '{"text": ["a"'
refused 400 "JSON object" "a JSON array" '["a"]'
refused 400 "goes on after" "bytes after the object" '{"text": "a"} {}'
refused 400 "missing \"text\"" "no text" '{"beam": 2}'
refused 400 "unknown key \"bem\"" "an unknown key" '{"text": "a", "bem": 2}'
refused 400 "\"beam\" must be an integer from 1 to 100" "beam 0" '{"text": "a", "beam": 0}'
refused 400 "\"beam\" must be an integer" "beam 2.5" '{"text": "a", "beam": 2.5}'
refused 400 "\"nbest\" must be" "nbest \"3\"" '{"text": "a", "nbest": "3"}'
refused 400 "\"length_penalty\" must be a number from 0 to 5 or avg" "length_penalty 9" '{"text": "a", "length_penalty": 9}'
refused 400 "\"attention\" must be true or false" "attention 1" '{"text": "a", "attention": 1}'
refused 400 "text[1] must be a string" "a number among the lines" '{"text": ["a", 3]}'
refused 400 "holds a line break" "a line break in a line" '{"text": ["a\nb"]}'
refused 400 "not valid UTF-8" "a line that is not UTF-8" "{\"text\": [\"$(printf '\377')\"]}"
refused 400 "applies only to a Transformer" "heads for a recurrent model" '{"text": "a", "heads": true}'
refused 400 "has 2 decoder layers" "layer 3 of a 2-layer Transformer" "{\"text\": \"a\", \"model\": \"$TR\", \"layer\": 3}"
refused 400 "unknown model" "an unknown model" '{"text": "a", "model": "nope.bin"}'
refused 400 "is not a translation model" "a classifier" "{\"text\": \"a\", \"model\": \"$CLS\"}"
refused 400 "cannot decode together" "an ensemble with a classifier among the models" '{"text": "a", "ensemble": true}'
refused 413 "at most 100" "101 lines (--max-lines 100)" "{\"text\": [$(seq 101 | sed 's/.*/"a"/' | paste -sd,)]}"
ask main POST /classify "{\"text\": \"good\", \"model\": \"$GRU\"}"
check "POST /classify with a translation model: 400 naming it" error_is 400 "is not a classifier"
ask main GET /nope
check "GET /nope: 404 naming the endpoints" error_is 404 "no such endpoint"
ask main GET /translate
check "GET /translate: 405, Allow: POST" error_is 405 "takes POST"
curl -s -D "$T/head" -o /dev/null -X DELETE "${URL}health"
check "DELETE /health: Allow: GET, HEAD" grep -qi "^allow: GET, HEAD" "$T/head"
head -c 70000 /dev/zero | tr '\0' a >"$T/big"
code=$(curl -s -o "$T/main.json" -w '%{http_code}' --data-binary @"$T/big" "${URL}translate")
check "a body over --max-body-bytes (Content-Length): 413 naming the limit" error_is 413 "at most 65536"
code=$(curl -s -o "$T/main.json" -w '%{http_code}' -H 'Transfer-Encoding: chunked' --data-binary @"$T/big" "${URL}translate")
check "a chunked body over --max-body-bytes: 413" error_is 413 "longer than 65536 bytes"
ask main GET /health
check "after all that: still 200, no worker lent, none waiting" \
    eval '[ $code = 200 ] && [ "$(get busy)" = 0 ] && [ "$(get waiting)" = 0 ]'
check "the access log: a line per request, method, path, status, size" \
    eval 'grep -Eq "^nmt: [0-9T:Z-]+ 127\.0\.0\.1 \"POST /translate\" 200 [0-9]+ B [0-9.]+ ms 40 lines$" "$T/main.log" &&
          grep -q "\"GET /nope\" 404" "$T/main.log"'

kill -TERM $PID
wait_server
check "SIGTERM with nothing in flight: exit 0, 'stopped'" eval '[ $rc = 0 ] && has "$T/main.log" "nmt: serve: stopped"'

# --compute-type int8 (issue 31): the models prepared once and shared by the workers;
# n-best lists and scores the bytes of nmt translate --compute-type int8, labels and
# probabilities those of nmt classify --compute-type int8.
start int8 "$GRU" "$TR" "$CLS" --workers 2 --compute-type int8
answer=int8
for m in GRU TR; do
    eval M=\$$m
    ask int8 POST /translate "{\"text\": $SRC, \"model\": \"$M\", \"beam\": 3, \"nbest\": 2, \"batch\": 8}"
    nbest_lines int8 >"$T/got"
    $LIMIT "$NMT" translate "$M" --beam 3 --nbest 2 --batch 8 --compute-type int8 "$T/src.txt" >"$T/want" 2>/dev/null
    check "--compute-type int8, POST /translate $m: nmt translate --compute-type int8's n-best lists and scores" \
        eval '[ $code = 200 ] && [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"'
    show_diff
done
ask int8 POST /classify "{\"text\": $(lines_json "$T/cls_src.txt"), \"model\": \"$CLS\"}"
$LIMIT "$NMT" classify "$CLS" --probs --compute-type int8 "$T/cls_src.txt" >"$T/want" 2>/dev/null
classified
check "--compute-type int8, POST /classify: nmt classify --compute-type int8's labels and probabilities ($n lines)" \
    eval '[ $code = 200 ] && [ "$n" -gt 0 ] && cmp -s "$T/want" "$T/got"'
show_diff
kill -TERM $PID
wait_server
check "--compute-type int8: exit 0 on SIGTERM" eval '[ $rc = 0 ]'

# A model file with int8 weights (nmt quantize): served with int8 products by default,
# the bytes of nmt translate on the same file.
"$NMT" quantize "$TR" -o "$T/tr.q8.bin" 2>/dev/null
start q8 "$T/tr.q8.bin"
answer=q8
ask q8 POST /translate "{\"text\": $SRC, \"beam\": 3, \"nbest\": 2, \"batch\": 8}"
nbest_lines q8 >"$T/got"
$LIMIT "$NMT" translate "$T/tr.q8.bin" --beam 3 --nbest 2 --batch 8 "$T/src.txt" >"$T/want" 2>/dev/null
check "an int8 file (nmt quantize), POST /translate: nmt translate's n-best lists and scores on it" \
    eval '[ $code = 200 ] && [ -s "$T/want" ] && cmp -s "$T/want" "$T/got"'
show_diff
kill -TERM $PID
wait_server

# --shortlist (issue 31): the served model scores only what the shortlist keeps, the
# bytes of nmt translate --shortlist; with two models, or a classifier, it is refused.
"$NMT" shortlist "$T/tr.q8.bin" "$DATA" -o "$T/tr.sl" --per-word 5 --frequent 20 2>/dev/null
start sl "$T/tr.q8.bin" --shortlist "$T/tr.sl" --workers 2
answer=sl
ask sl POST /translate "{\"text\": $SRC, \"beam\": 3, \"nbest\": 2, \"batch\": 8}"
nbest_lines sl >"$T/got"
$LIMIT "$NMT" translate "$T/tr.q8.bin" --shortlist "$T/tr.sl" --beam 3 --nbest 2 --batch 8 "$T/src.txt" >"$T/want" \
    2>/dev/null
$LIMIT "$NMT" translate "$T/tr.q8.bin" --beam 3 --nbest 2 --batch 8 "$T/src.txt" >"$T/full" 2>/dev/null
check "--shortlist, POST /translate: nmt translate --shortlist's n-best lists and scores (not the unrestricted ones)" \
    eval '[ $code = 200 ] && [ -s "$T/want" ] && cmp -s "$T/want" "$T/got" && ! cmp -s "$T/want" "$T/full"'
show_diff
kill -TERM $PID
wait_server
run serve "$GRU" "$TR" --shortlist "$T/tr.sl" --listen 127.0.0.1:0
check "--shortlist with two models: usage error (exit 2), saying to serve one" \
    eval '[ $rc = 2 ] && has "$T/err" "serve one MODEL.bin with it"'
run serve "$CLS" --shortlist "$T/tr.sl" --listen 127.0.0.1:0
check "--shortlist with a classifier: exit 1, naming it" eval '[ $rc = 1 ] && has "$T/err" "is a classifier"'
run serve "$TR" --shortlist "$T/missing.sl" --listen 127.0.0.1:0
check "--shortlist naming no file: exit 1, naming it" eval '[ $rc = 1 ] && has "$T/err" "missing.sl"'

# Two translation models: an ensemble. A client that sends half its body and stalls
# holds no worker (there is one, and another request is answered meanwhile), and is
# cut off after --timeout.
start slow "$GRU" "$TR" --workers 1 --timeout 2
answer=main
compare "an ensemble of both" ", \"ensemble\": true, \"beam\": 3" --models "$GRU" "$TR" --beam 3 --batch 16
mkfifo "$T/slow_in"
curl -s -o "$T/stalled.json" -w '%{http_code}' -X POST -H 'Transfer-Encoding: chunked' -T - "${URL}translate" <"$T/slow_in" \
    >"$T/stalled.code" 2>/dev/null &
slow=$!
exec 4>"$T/slow_in"
printf '{"text": ["a' >&4
answer=slow
ask slow POST /translate '{"text": ["मी घरी जातो."]}'
check "a client stalled in its body holds no worker: another request is answered meanwhile" \
    eval '[ $code = 200 ] && [ -n "$(get translations.0.text)" ]'
i=0
while ! has "$T/slow.log" "closed: timeout" && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
exec 4>&-
wait $slow
check "the stalled client is cut off after --timeout (its request gets no answer, logged as such)" \
    eval '! grep -qx 200 "$T/stalled.code" && grep -q "\"POST /translate\" - 0 B .* closed: timeout" "$T/slow.log"'
kill -TERM $PID
wait_server

# ---------------------------------------------------------------- the queue, the time limit, SIGTERM

# Requests held at the gate: A holds the one worker, B waits, C finds the queue full.
# The test holds the gate open for reading and writing: a request's open(2) of it never
# waits, and a byte written before the request reads it waits in the pipe (no SIGPIPE).
mkfifo "$T/gate"
NMT_SERVE_GATE=$T/gate start gate "$GRU" --workers 1 --queue 1 --timeout 2
exec 3<>"$T/gate"
post_bg() {   # post_bg NAME — POST /translate in the background; status in $T/NAME.code
    curl -s -o "$T/$1.json" -w '%{http_code}' --data-binary '{"text": ["मी घरी जातो."]}' "${URL}translate" \
        >"$T/$1.code" &
}
post_bg A
a=$!
check "a request holding the only worker: /health says busy 1" wait_health busy 1
post_bg B
b=$!
check "a second waits for it: /health says waiting 1" wait_health waiting 1
answer=C
ask C POST /translate '{"text": ["a"]}'
check "a third, with --queue 1 full: 503 at once, Retry-After" error_is 503 "too many requests are waiting"
printf x >&3
wait $a
check "the first, let go: 200" grep -qx 200 "$T/A.code"
check "the second takes the worker" wait_health busy 1
answer=D
ask D POST /translate '{"text": ["a"]}'
check "one that waits longer than --timeout 2 for a worker: 503" error_is 503 "no worker came free within the time limit"
kill -TERM $PID
i=0
while ! has "$T/gate.log" "finishing the requests in flight" && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
check "SIGTERM with a request in flight: the server says it finishes it" has "$T/gate.log" "finishing the requests in flight"
printf x >&3
wait $b
check "the request in flight when SIGTERM came is answered: 200" grep -qx 200 "$T/B.code"
wait_server
exec 3>&-
check "then nmt serve exits 0" eval '[ $rc = 0 ] && has "$T/gate.log" "nmt: serve: stopped"'

# ---------------------------------------------------------------- usage and start-up errors

run serve
check "nmt serve without a model: usage error" usage_error serve
run serve "$GRU" --listen nonsense
check "--listen nonsense: usage error naming ADDR:PORT" eval 'usage_error serve && has "$T/err" "ADDR:PORT"'
run serve "$GRU" --listen 127.0.0.1:70000
check "--listen 127.0.0.1:70000: usage error about the port" eval 'usage_error serve && has "$T/err" "0 to 65535"'
run serve "$GRU" "$GRU"
check "the same model twice: usage error" usage_error serve
run serve "$T/missing.bin"
check "a missing model: exit 1 naming it" eval 'exits 1 && has "$T/err" "missing.bin"'
start busy "$GRU"
port=${URL##*:}
port=${port%/}
run serve "$GRU" --listen "127.0.0.1:$port"
check "an address in use: exit 1, cannot listen there" eval 'exits 1 && has "$T/err" "cannot listen"'
kill -INT $PID
kill -INT $PID 2>/dev/null
wait_server
check "SIGINT, twice: exit 0 too (the second does not cut the stop short)" [ $rc = 0 ]

finish
