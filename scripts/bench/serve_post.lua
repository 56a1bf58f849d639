-- serve_post.lua — wrk's requests for scripts/bench/bench_serve.py: POST /translate with
-- LINES lines per request, cycling through the file LINES_FILE (each wrk thread from its
-- own start, so that the threads do not all ask the same thing at once).
--
--   LINES_FILE=src.txt LINES=1 SUMMARY=out.json wrk -t1 -c16 -d10s -s serve_post.lua URL
--
-- done() writes SUMMARY: requests, seconds, the non-2xx answers, socket errors, and the
-- latency percentiles (milliseconds) of wrk's histogram.
local lines, per, at = {}, tonumber(os.getenv("LINES") or "1"), 0
for line in io.lines(os.getenv("LINES_FILE")) do
    lines[#lines + 1] = '"' .. line:gsub('\\', '\\\\'):gsub('"', '\\"') .. '"'
end
local counter = 0

function setup(thread)
    thread:set("id", counter)
    counter = counter + 1
end

function init(args)
    at = (id or 0) * 997 % #lines
end

function request()
    local chunk = {}
    for k = 1, per do
        chunk[k] = lines[at % #lines + 1]
        at = at + 1
    end
    local body = '{"text": [' .. table.concat(chunk, ", ") .. ']}'
    return wrk.format("POST", "/translate", {["Content-Type"] = "application/json"}, body)
end

function done(summary, latency, requests)
    local e = summary.errors
    local f = io.open(os.getenv("SUMMARY"), "w")
    f:write(string.format('{"requests": %d, "seconds": %.3f, "non_2xx": %d, "socket_errors": %d, ' ..
        '"p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, "max_ms": %.3f}\n',
        summary.requests, summary.duration / 1e6, e.status, e.connect + e.read + e.write + e.timeout,
        latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3,
        latency.max / 1e3))
    f:close()
end
