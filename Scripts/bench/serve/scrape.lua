-- wrk script for the serve benchmark: each connection waits DELAY_MS between requests, so that
-- wrk's closed loop approximates a fixed scrape rate (connections x 1000 / (DELAY_MS + latency)
-- per second); prints the achieved rate and latency percentiles as one JSON line at the end.
-- ACCEPT_ENCODING is sent as Accept-Encoding (Prometheus sends "gzip" with every scrape); empty sends none.
local delay_ms = tonumber(os.getenv("DELAY_MS") or "200")
local accept_encoding = os.getenv("ACCEPT_ENCODING") or "gzip"
if accept_encoding ~= "" then
    wrk.headers["Accept-Encoding"] = accept_encoding
end

function delay()
    return delay_ms
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(
        '{"requests": %d, "duration_s": %.3f, "bytes": %d, "errors": %d, "non_2xx": %d, ' ..
        '"p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, "max_ms": %.3f}\n',
        summary.requests, summary.duration / 1e6, summary.bytes,
        e.connect + e.read + e.write + e.timeout, e.status,
        latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3,
        latency.max / 1e3))
end
