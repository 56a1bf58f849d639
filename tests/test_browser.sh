#!/bin/sh
# test_browser.sh — nmt serve's page in a real browser: headless Chromium, driven through
# chromedriver by tests/tools/page_check.py, loads GET / from a running nmt serve, types a
# sentence, and finds the translation POST /translate gives, the heatmap with its cells
# and per-head maps, a source word's weights under the pointer; the screenshot is
# checked by content (size, not blank, the heatmap in viridis colours), not by pixels.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_browser.sh
# Needs chromium, chromium-driver and python3 (sh scripts/install-deps.sh --browser);
# skipped without them. SCREENSHOT=FILE.png keeps the screenshot. About half a minute:
# a small Transformer trained, one browser started. Waits for conditions, never a clock.

NAME=test_browser
. tests/lib.sh

for tool in chromium chromedriver python3; do
    if ! command -v $tool >/dev/null 2>&1; then
        skip "nmt serve's page in Chromium" "no $tool (sh scripts/install-deps.sh --browser installs it)"
        finish
    fi
done

small_model transformer "$T/tr"

# Port 0: the kernel picks a free one, and nmt serve prints it once it listens.
$LIMIT "$NMT" serve "$T/tr/model.bin" --listen 127.0.0.1:0 >"$T/url" 2>"$T/serve.log" &
pid=$!
# A check that ends the test early leaves no server behind.
trap 'kill -TERM $pid 2>/dev/null; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
i=0
while [ ! -s "$T/url" ] && kill -0 $pid 2>/dev/null && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
URL=$(head -n 1 "$T/url")
[ -n "$URL" ] || { bad "setup: nmt serve printed no address"; sed 's/^/    | /' "$T/serve.log"; finish; }

$LIMIT python3 tests/tools/page_check.py "$URL" "I am going home." "${SCREENSHOT:-$T/page.png}" >"$T/checks" 2>&1
pc=$?
cat "$T/checks"
passed=$((passed + $(grep -c '^  ok ' "$T/checks")))
failed=$((failed + $(grep -c '^FAIL ' "$T/checks")))
check "page_check.py ran to its end (its last check printed, its exit status its failures)" \
    eval 'grep -q "viridis" "$T/checks" && [ $pc = $(grep -c "^FAIL " "$T/checks") ]'
kill -TERM $pid
wait $pid
rc=$?
pid=
check "nmt serve, after the browser: SIGTERM, exit 0" [ $rc = 0 ]
check "the access log has the page and the translations" \
    eval 'grep -q "\"GET /\" 200" "$T/serve.log" && grep -q "\"POST /translate\" 200" "$T/serve.log"'
finish
