#!/usr/bin/env python3
"""page_check.py — nmt serve's page in a real browser, for tests/test_browser.sh.

    page_check.py URL SENTENCE SCREENSHOT.png

Drives Debian's headless Chromium through chromedriver (the W3C WebDriver protocol,
spoken here over urllib: no package beyond python3's own library): loads the page from
a running `nmt serve`, waits for its models, types SENTENCE into the source box, waits
for the translation and the heatmap, points at a source word, and saves a screenshot.
Each check prints "ok WHAT" or "FAIL WHAT"; the exit status is the count of failures
(0: all passed). Every wait is for a condition in the page, bounded (60 s), never a
sleep of a guessed length.

The checks are on content, not pixels: the translation shown is the one POST
/translate answers for the same line and options; the heatmap has one cell per
(output, source) pair with the weights of the answer, and a map per head; pointing at
a source word lists its weights; the screenshot is a PNG of the page's size, not blank,
and the heatmap's own picture is in viridis colours (decoded here with zlib).
"""
import base64
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zlib

failures = 0


def check(what, ok):
    global failures
    print(("  ok " if ok else "FAIL ") + what)
    failures += 0 if ok else 1
    return ok


def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:  # the driver's or the server's own words
        raise RuntimeError("%s %s: %s %s" % (method, path, e.code, e.read()[:300].decode(errors="replace")))


def start_driver():
    """chromedriver on a port the kernel picks (--port=0: no port is chosen here and
    then raced for), read from its own line "... started successfully on port N.".
    (process, port), or (process, None) when it exits before saying so."""
    p = subprocess.Popen(["chromedriver", "--port=0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout:
        m = re.search(r"started successfully on port (\d+)", line)
        if m:
            # Its later output drained, so that a full pipe never stalls it.
            threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
            return p, int(m.group(1))
    return p, None


def wait_for(what, test, limit=60.0):
    """Polls test() until it returns something true (a condition), for at most limit s."""
    end = time.monotonic() + limit
    while True:
        try:
            value = test()
        except Exception:  # the page or driver not ready yet
            value = None
        if value or time.monotonic() > end:
            check(what, bool(value))
            return value
        time.sleep(0.1)


def png_pixels(png):
    """(width, height, rows of RGB(A) byte strings) of a PNG (8-bit RGB or RGBA, as
    Chromium writes screenshots)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, width = 8, b"", 0
    while at < len(png):
        n, kind = struct.unpack(">I4s", png[at:at + 8])
        chunk = png[at + 8:at + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and color in (2, 6), "8-bit RGB or RGBA"
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        at += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


VIRIDIS = [(0x44, 0x01, 0x54), (0x47, 0x2d, 0x7b), (0x3b, 0x52, 0x8b), (0x2c, 0x72, 0x8e), (0x21, 0x90, 0x8c),
           (0x27, 0xad, 0x81), (0x5d, 0xc8, 0x63), (0xaa, 0xdc, 0x32), (0xfd, 0xe7, 0x25)]


def near_viridis(rgb):
    """Whether a colour lies on the viridis ramp (within a few steps of a point between two stops)."""
    for a, b in zip(VIRIDIS, VIRIDIS[1:]):
        for k in range(9):
            p = [a[i] + (b[i] - a[i]) * k / 8 for i in range(3)]
            if sum(abs(rgb[i] - p[i]) for i in range(3)) <= 12:
                return True
    return False


def main():
    url, sentence, shot = sys.argv[1], sys.argv[2], sys.argv[3]
    driver, port = start_driver()
    if not check("chromedriver starts and says its port", port is not None):
        driver.wait()
        return failures
    base = "http://127.0.0.1:%d" % port
    profile = tempfile.mkdtemp(prefix="nmt-page-")
    session = None
    try:
        wait_for("chromedriver answers", lambda: call(base, "GET", "/status")["value"]["ready"])
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--user-data-dir=" + profile, "--window-size=1400,1100"]
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": os.environ.get("CHROMIUM", "/usr/bin/chromium"), "args": args}}}}
        session = call(base, "POST", "/session", caps)["value"]["sessionId"]
        s = "/session/" + session

        def js(script, *args):
            return call(base, "POST", s + "/execute/sync", {"script": script, "args": list(args)})["value"]

        def find(css):
            found = call(base, "POST", s + "/element", {"using": "css selector", "value": css})["value"]
            return list(found.values())[0]

        call(base, "POST", s + "/url", {"url": url})
        check("the page loads, titled nmt serve", js("return document.title") == "nmt serve")
        wait_for("the models are listed (GET /models)",
                 lambda: js("return document.querySelectorAll('#model option').length") >= 1)
        # A Transformer if one is served: its maps per head and layer.
        js("const s = document.getElementById('model');"
           "const t = [...s.options].find(o => o.textContent.includes('(transformer)'));"
           "if (t) { s.value = t.value; s.dispatchEvent(new Event('change')); }")
        model = js("return document.getElementById('model').value")
        call(base, "POST", s + "/element/" + find("#source") + "/value", {"text": sentence})
        wait_for("typing a sentence brings its translation and a heatmap",
                 lambda: js("return document.querySelector('#results li .out') &&"
                            " document.querySelectorAll('#heat td[data-weight]').length > 0"))
        shown = js("return document.querySelector('#results li .out').textContent")
        layers = js("return +document.getElementById('layer').value || 0")
        body = {"text": [sentence], "model": model, "attention": True}
        if layers:
            body.update({"layer": layers, "heads": True})
        want = call(url.rstrip("/"), "POST", "/translate", body)["translations"][0]
        check("the translation shown is POST /translate's: %r" % want["text"], shown == (want["text"] or "(empty)"))
        a = want["attention"]
        cells = js("return [...document.querySelectorAll('#heat td[data-weight]')].map(c => +c.dataset.weight)")
        check("the heatmap has a cell per (output, source) pair: %d x %d" % (len(a["output"]), len(a["source"])),
              len(cells) == len(a["output"]) * len(a["source"]))
        check("the cells hold the answer's weights", all(abs(c - w) < 1e-6 for c, w in
                                                        zip(cells, [w for row in a["weights"] for w in row])))
        heads = js("return document.querySelectorAll('#headmaps figure').length")
        check("a map per head (%d)" % len(a.get("heads", [])), heads == len(a.get("heads", [])))
        word = call(base, "GET", s + "/element/" + find("#heat thead th") + "/rect")["value"]
        call(base, "POST", s + "/actions", {"actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
                {"type": "pointerMove", "duration": 0, "origin": "viewport",
                 "x": int(word["x"] + word["width"] / 2), "y": int(word["y"] + word["height"] / 2)}]}]})
        wait_for("pointing at a source word lists its weights (%s)" % a["source"][0],
                 lambda: js("return document.getElementById('weights').textContent").startswith(a["source"][0] + " →"))
        if heads:
            js("document.querySelectorAll('#mapbar button')[1].click()")
            wait_for("choosing head 1 draws its map",
                     lambda: "head 1" in js("return document.querySelector('#heat caption').textContent"))
            js("document.querySelectorAll('#mapbar button')[0].click()")
        # The pointer off the map, which it dims but for the word under it.
        call(base, "POST", s + "/actions", {"actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
                {"type": "pointerMove", "duration": 0, "origin": "viewport", "x": 5, "y": 5}]}]})
        png = base64.b64decode(call(base, "GET", s + "/screenshot")["value"])
        with open(shot, "wb") as f:
            f.write(png)
        width, height = struct.unpack(">II", png[16:24])
        check("the screenshot is the page (%dx%d), not blank (%d bytes of PNG)" % (width, height, len(png)),
              png[:8] == b"\x89PNG\r\n\x1a\n" and width >= 1000 and height >= 800 and len(png) > 30000)
        heat = base64.b64decode(call(base, "GET", s + "/element/" + find("#heat") + "/screenshot")["value"])
        width, height, bpp, rows = png_pixels(heat)
        counts = {}
        for row in rows:
            for x in range(0, width * bpp, bpp):
                rgb = row[x:x + 3]
                counts[rgb] = counts.get(rgb, 0) + 1
        viridis = sum(n for rgb, n in counts.items() if near_viridis(tuple(rgb)))
        area = js("return [...document.querySelectorAll('#heat td[data-weight]')].reduce((s, c) =>"
                  " s + c.getBoundingClientRect().width * c.getBoundingClientRect().height, 0)"
                  " * window.devicePixelRatio ** 2")
        check("the heatmap's cells are drawn in viridis colours (%d pixels of %d)" % (viridis, area),
              area > 0 and viridis >= 0.9 * area)
    finally:
        if session:
            try:
                call(base, "DELETE", "/session/" + session)
            except Exception:
                pass
        driver.terminate()
        driver.wait()
        subprocess.run(["rm", "-rf", profile])
    return failures


if __name__ == "__main__":
    sys.exit(min(main(), 100))
