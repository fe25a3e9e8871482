-- wrk script: POST /webhooks/email/inbound, each request the next pre-signed mail of the file
-- BENCH_WEBHOOKS (made by scripts/bench-email.py webhooks); past its end, mails come again and
-- are recognised as redeliveries.
local requests = {}
local next_request = 0

-- Built in init, not at load: wrk.format adds the Host header only once wrk knows the target.
init = function(args)
  for line in io.lines(os.getenv("BENCH_WEBHOOKS")) do
    local id, timestamp, signature, body = line:match("([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)")
    local headers = {
      ["webhook-id"] = id,
      ["webhook-timestamp"] = timestamp,
      ["webhook-signature"] = signature,
      ["Content-Type"] = "message/rfc822",
    }
    local raw = body:gsub("\\r\\n", "\r\n")
    requests[#requests + 1] = wrk.format("POST", "/webhooks/email/inbound", headers, raw)
  end
end

request = function()
  next_request = next_request % #requests + 1
  return requests[next_request]
end
