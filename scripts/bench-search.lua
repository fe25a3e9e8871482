-- wrk script: GET /v1/email/search over the inboxes of the agents whose keys are in the file
-- BENCH_KEYS, one agent per wrk thread (run with as many threads as keys, so no agent has more
-- searches at once than its thread's connections). Each request asks the next query of a mix
-- written for the inboxes of bench.sh's seed_searchable_mail: words every message has, most,
-- some, hundreds, a few and one have, and a sender.
local next_thread = 0

function setup(thread)
  next_thread = next_thread + 1
  thread:set("agent", next_thread)
end

local queries = {
  "regards",                         -- every message
  "hello+regards",                   -- every message, two words
  "kakan",                           -- most
  "invoice",                         -- one subject in 16
  "julon",                           -- a body word of some
  "invoice+delta",                   -- hundreds
  "vafet",                           -- hundreds
  "refund+holot",                    -- a few
  "54321",                           -- one order number: one message
  "from%3Asender7%40travel.example", -- one sender's 200
}
local key
local next_query

function init(args)
  local keys = {}
  for line in io.lines(os.getenv("BENCH_KEYS")) do
    keys[#keys + 1] = line
  end
  key = keys[(agent - 1) % #keys + 1]
  -- The agents start at different queries, so the mix is spread at every moment.
  next_query = (agent - 1) % #queries
end

request = function()
  next_query = next_query % #queries + 1
  return wrk.format("GET", "/v1/email/search?q=" .. queries[next_query],
    { ["Authorization"] = "Bearer " .. key })
end
