-- wrk script: POST /v1/wallet/send, each request with the next agent key of the file BENCH_KEYS.
local keys = {}
for line in io.lines(os.getenv("BENCH_KEYS")) do
  keys[#keys + 1] = line
end
local body = '{"to": "0x000000000000000000000000000000000000dEaD", "amount_atomic": "1"}'
local next_key = math.random(#keys)

request = function()
  next_key = next_key % #keys + 1
  local headers = { ["Authorization"] = "Bearer " .. keys[next_key], ["Content-Type"] = "application/json" }
  return wrk.format("POST", "/v1/wallet/send", headers, body)
end
