-- wrk script: POST /v1/wallet/x402/authorize, each request with the next agent key of the file
-- BENCH_KEYS and an idempotency key of its own (BENCH_RUN, the second wrk started, the thread and
-- a count: a warm-up and the run after it never share one): every request admits a payment of 1
-- atomic unit and, under the auto-confirm tier, signs its authorization.
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

local keys = {}
for line in io.lines(os.getenv("BENCH_KEYS")) do
  keys[#keys + 1] = line
end
local run = (os.getenv("BENCH_RUN") or "0") .. "-" .. tostring(os.time())
-- The sandbox's token (USDC on Base) and its EIP-712 domain.
local challenge = '{"x402Version": 2, "resource": {"url": "https://bench.example.com/report"}, '
  .. '"accepts": [{"scheme": "exact", "network": "eip155:8453", "amount": "1", '
  .. '"asset": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", '
  .. '"payTo": "0x000000000000000000000000000000000000dEaD", "maxTimeoutSeconds": 60, '
  .. '"extra": {"name": "USD Coin", "version": "2"}}]}'
local next_key = 0
local sent = 0

request = function()
  next_key = next_key % #keys + 1
  sent = sent + 1
  local idempotency_key = "bench-" .. run .. "-" .. tostring(thread_id) .. "-" .. sent
  local body = '{"payment_required": ' .. challenge .. ', "idempotency_key": "' .. idempotency_key .. '"}'
  local headers = { ["Authorization"] = "Bearer " .. keys[next_key], ["Content-Type"] = "application/json" }
  return wrk.format("POST", "/v1/wallet/x402/authorize", headers, body)
end
