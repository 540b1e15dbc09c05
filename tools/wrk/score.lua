-- wrk script for vigil serve: POST /v1/score with a fresh transaction id per request, the
-- P0/P1/P2 mix of the serve benchmark (10/70/20), accounts drawn from a population of 20,000,
-- and event time moving forward one millisecond per request.
--
--   wrk -t1 -c32 -d10s -s tools/wrk/score.lua http://127.0.0.1:8080
--
-- Each wrk thread numbers its own requests; the thread id keeps ids distinct across threads.
-- thread_id is a global: setup() sets it in each thread's own Lua state (a local here would
-- shadow it, and every thread would send the same ids).
counter = 0
thread_id = 0
local threads = {}

function setup(thread)
  thread:set("thread_id", #threads)
  table.insert(threads, thread)
end

local base = os.time({year = 2022, month = 9, day = 1, hour = 0})
local priorities = {"P0", "P1", "P1", "P1", "P1", "P1", "P1", "P1", "P2", "P2"}

function request()
  counter = counter + 1
  local n = counter * 7919 + thread_id * 104729
  local orig = n % 20000
  local bene = (n * 31 + 17) % 20000
  local t = base + math.floor(counter / 1000)
  local body = string.format(
    '{"id":"wrk-%d-%d","timestamp":"%s","originator":{"account_id":"A%05d","bank_id":"B%03d"},' ..
    '"beneficiary":{"account_id":"A%05d","bank_id":"B%03d"},' ..
    '"amount":{"value":"%d.%02d","currency":"USD"},"payment_format":"wire","priority":"%s"}',
    thread_id, counter, os.date("!%Y-%m-%dT%H:%M:%SZ", t), orig, orig % 97, bene, bene % 97,
    (n % 9000) + 10, n % 100, priorities[(counter % 10) + 1])
  return wrk.format("POST", "/v1/score", {["Content-Type"] = "application/json"}, body)
end

local statuses = {}
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  io.write(string.format("wrk: %d requests, %d non-2xx/3xx, socket errors %d\n",
    summary.requests, summary.errors.status, summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout))
end
