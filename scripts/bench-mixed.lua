-- wrk script: the mixed load of `make bench`, each request for the next agent key of the file
-- BENCH_KEYS (agents with a wallet and an inbox): of every 20 requests, 8 read /v1/agents/me, 4 the
-- spend policy, 3 the first page of intents, 3 the first page of the inbox and 2 send.
local keys = {}
for line in io.lines(os.getenv("BENCH_KEYS")) do
  keys[#keys + 1] = line
end
local send_body = '{"to": "0x000000000000000000000000000000000000dEaD", "amount_atomic": "1"}'
local mix = {
  "/v1/agents/me", "/v1/wallet/policy", "/v1/agents/me", "/v1/wallet/intents?limit=20",
  "/v1/email/inbox?limit=20", "/v1/agents/me", "send", "/v1/wallet/policy", "/v1/agents/me",
  "/v1/wallet/intents?limit=20", "/v1/email/inbox?limit=20", "/v1/agents/me", "/v1/wallet/policy",
  "/v1/agents/me", "send", "/v1/wallet/intents?limit=20", "/v1/email/inbox?limit=20",
  "/v1/agents/me", "/v1/wallet/policy", "/v1/agents/me",
}
local next_key = math.random(#keys)
local next_kind = math.random(#mix)

request = function()
  next_key = next_key % #keys + 1
  next_kind = next_kind % #mix + 1
  local headers = { ["Authorization"] = "Bearer " .. keys[next_key] }
  if mix[next_kind] == "send" then
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", "/v1/wallet/send", headers, send_body)
  end
  return wrk.format("GET", mix[next_kind], headers)
end
