// The conformance suite cannot send an Authorization header, and every request to /mcp needs an
// agent key: this reverse proxy adds it and changes nothing else.
//
//   MCP_AGENT_KEY=… node auth-proxy.mjs TARGET_URL [PORT]
//
// Listens on 127.0.0.1:PORT (0, the default, takes a free one) and prints the port it took as one
// line on stdout; forwards every request to TARGET_URL's host:port, same method, path and headers,
// plus `Authorization: Bearer $MCP_AGENT_KEY` when the request has none.
import http from 'node:http';

const [target, port = '0'] = process.argv.slice(2);
const key = process.env.MCP_AGENT_KEY;
if (!target || !key) {
  console.error('usage: MCP_AGENT_KEY=KEY node auth-proxy.mjs TARGET_URL [PORT]');
  process.exit(2);
}
const upstream = new URL(target);

const server = http.createServer((req, res) => {
  // Host and Origin stay as the client sent them: the DNS-rebinding scenario checks that the
  // server itself refuses a foreign Host or Origin, which rewriting them would hide.
  const headers = { ...req.headers };
  headers.authorization ??= `Bearer ${key}`;
  const forward = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
    (answer) => {
      // rawHeaders keeps the answer's headers as they came; flushing them at once and piping
      // the body lets an SSE stream through event by event instead of when it ends.
      res.writeHead(answer.statusCode, answer.rawHeaders);
      res.flushHeaders();
      answer.pipe(res);
    },
  );
  forward.on('error', (error) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`auth-proxy: ${error.message}\n`);
  });
  // A client that goes away (a scenario closing its SSE stream) closes the upstream request too.
  res.on('close', () => forward.destroy());
  req.pipe(forward);
});
server.listen(Number(port), '127.0.0.1', () => console.log(server.address().port));
