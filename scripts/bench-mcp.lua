-- wrk script: POST /mcp, a tools/call of get_me as a stateless MCP client sends it (protocol
-- 2025-11-25, JSON answers); the agent key comes with -H "Authorization: Bearer ...".
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_me","arguments":{}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
