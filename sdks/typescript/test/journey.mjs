// The README walkthrough's journey through the SDK, against a real server (tests/it/sdks.rs runs
// it where the tarball is installed): mail, a code wait, a transfer to execution, the event
// stream across a forced disconnect, a 429 retried under the same idempotency key, a verified
// webhook and an x402 payment to the official x402 resource server. The operator's steps run
// `agentctl` ($AGENTCTL). Prints one JSON line of what it saw; any failed check throws.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import net from 'node:net';

import * as sdk from 'agent-runtime';
import { AgentRuntime, PolicyError, WebhookVerificationError, X402Client, verifyWebhook } from 'agent-runtime';

const { RECIPIENT, PAID_URL, AGENTCTL } = process.env;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const started = Date.now();
/** Progress on stderr: where a journey that does not end stopped. */
const step = (what) => console.error(`journey +${((Date.now() - started) / 1000).toFixed(1)}s ${what}`);

function agentctl(...args) {
  step(`agentctl ${args.slice(0, 2).join(' ')}`);
  const out = execFileSync(AGENTCTL, args, { encoding: 'utf8' });
  return out.trim() ? JSON.parse(out) : {};
}

async function eventually(what, found, deadlineMs = 30_000) {
  const started = Date.now();
  while (Date.now() - started < deadlineMs) {
    const value = await found();
    if (value) return value;
    await sleep(100);
  }
  throw new Error(`${what} never came`);
}

/** A TCP proxy in front of the server whose cut() breaks every open connection, as a network
 * would; it keeps the first bytes of each connection (the request head). */
async function cuttingProxy(target) {
  const { hostname, port } = new URL(target);
  const open = new Set();
  const heads = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    open.add(client).add(upstream);
    client.once('data', (chunk) => heads.push(chunk.toString('latin1')));
    client.pipe(upstream).pipe(client);
    for (const end of [client, upstream]) end.on('error', () => {}).on('close', () => open.delete(end));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    heads,
    cut: () => open.forEach((socket) => socket.destroy()),
  };
}

/** The fetch under the client's retries: it sees every attempt. */
function recording() {
  const attempts = [];
  const fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await globalThis.fetch(request);
    attempts.push([new URL(request.url).pathname, response.status, request.headers.get('idempotency-key')]);
    return response;
  };
  return { fetch, attempts };
}

async function webhookReceiver() {
  const received = [];
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      received.push([Buffer.concat(chunks).toString('utf8'), request.headers]);
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, received };
}

step('the agent');
const { fetch, attempts } = recording();
const client = new AgentRuntime({ fetch }); // AGENT_RUNTIME_KEY and AGENT_RUNTIME_URL
const me = await client.call(sdk.getAgentMe);
const address = me.email_inbox.address;
const number = me.phone_number.number;
const summary = { agent: me.id };

step('the event stream, through the cutting proxy');
// The event stream, through a proxy that will cut it.
const proxy = await cuttingProxy(client.baseUrl);
const streamed = [];
const types = ['sms.received', 'transfer_intent.created', 'transfer_intent.executed'];
const stop = new AbortController();
const following = (async () => {
  const reader = new AgentRuntime({ baseUrl: proxy.url });
  for await (const event of reader.events({ types, reconnectDelayMs: 500, signal: stop.signal })) streamed.push(event);
})();

step('a webhook endpoint');
// A webhook endpoint of the agent's, for executed transfers.
const hook = await webhookReceiver();
const webhook = await client.call(sdk.createWebhook, { body: { url: hook.url, types: ['transfer_intent.executed'] } });

step('two mails, the second over the burst');
// Mail: the second send is over the agent's burst of one, 429 with Retry-After, and the client's
// retry sends it again under the same Idempotency-Key.
const mail = { to: ['bob@example.org'], subject: 'Hello', body_text: 'Hi Bob' };
const sent = await client.call(sdk.sendEmail, { body: mail });
assert.equal(sent.data.status, 'queued');
const again = await client.call(sdk.sendEmail, { body: mail });
const sends = attempts.filter(([path]) => path === '/v1/email/send');
assert.deepEqual(sends.map(([, status]) => status), [200, 429, 200]);
assert.ok(sends[1][2] === sends[2][2] && sends[1][2] !== sends[0][2], JSON.stringify(sends));
const replayed = await client.call(sdk.sendEmail, { body: mail, headers: { 'Idempotency-Key': sends[2][2] } });
assert.equal(replayed.data.id, again.data.id, 'the same key answers the same message');
summary.retried_429_with_key = sends[2][2];

step('inbound mail, its pages and the code wait');
// Inbound mail with a code, read page by page, and the code wait.
agentctl('sandbox', 'email', '--to', address, '--from', 'alice@example.org', '--subject', 'Your code', '--text', 'Your verification code is 385920');
const inbound = [];
for await (const message of client.paginate(sdk.listEmailInbox, { query: { limit: 1 } })) {
  if (message.direction === 'inbound') inbound.push(message.subject);
}
assert.deepEqual(inbound, ['Your code']);
assert.equal((await client.waitForCode({ channels: ['email'], timeoutSeconds: 30 })).code, '385920');

step('the SMS code wait');
// An SMS that arrives while the wait is under way.
setTimeout(() => agentctl('sandbox', 'sms', '--to', number, '--from', '+15550001111', '--body', 'code 482913'), 1500);
assert.equal((await client.waitForCode({ channels: ['sms'], timeoutSeconds: 30 })).code, '482913');
await eventually('the SMS on the stream', () => streamed.length > 0);

step('the cut and the reconnection');
// The network cuts the stream; an SMS arrives meanwhile, and the stream resumes.
const connections = proxy.heads.length;
proxy.cut();
agentctl('sandbox', 'sms', '--to', number, '--from', '+15550001111', '--body', 'code 111111');
await eventually('a reconnection', () => proxy.heads.length > connections);
assert.match(proxy.heads.at(-1).toLowerCase(), /last-event-id:/);

step('a transfer and two refusals');
// A transfer inside the policy, and two outside it.
const intent = await client.call(sdk.createWalletSend, { body: { to: RECIPIENT, amount_atomic: '10000000' } });
assert.equal(intent.status, 'pending_confirmation');
const refusals = {};
for (const amount of ['46000000', '45000000']) {
  await assert.rejects(client.call(sdk.createWalletSend, { body: { to: RECIPIENT, amount_atomic: amount } }), (error) => {
    assert.ok(error instanceof PolicyError, String(error));
    refusals[error.rule] = [String(error.limit), error.remaining === undefined ? null : String(error.remaining)];
    return true;
  });
}
assert.deepEqual(refusals, { max_per_tx: ['45000000', null], max_daily: ['50000000', '40000000'] });
summary.refusals = refusals;

step('the confirmation and the execution');
// The operator confirms; the transfer executes on the chain.
agentctl('intents', 'confirm', intent.id);
const executed = await client.waitForTransferDecision(intent.id, { timeoutSeconds: 60, until: ['executed'] });
assert.ok(executed.status === 'executed' && executed.tx_hash, JSON.stringify(executed));
const listed = [];
for await (const item of client.paginate(sdk.listWalletIntents, { query: { limit: 2 } })) listed.push(item.id);
assert.ok(listed.includes(intent.id));

step('the webhook delivery');
// The webhook of the execution, verified with the endpoint's secret.
const [body, headers] = await eventually('the webhook delivery', () => hook.received[0]);
const event = await verifyWebhook(body, headers, [webhook.secret]);
assert.ok(event.type === 'transfer_intent.executed' && event.data.id === intent.id);
await assert.rejects(verifyWebhook(body.replace('executed', 'rejected'), headers, [webhook.secret]), WebhookVerificationError);

step('the x402 payment');
// An x402 payment to the official resource server: above the auto-confirm tier (none is set) it
// waits for the operator, whom onPending tells.
const pending = [];
const buyer = new X402Client(client, {
  maxAmountAtomic: 2000,
  onPending: (waiting) => {
    pending.push(waiting.approval_url);
    agentctl('intents', 'confirm', waiting.intent.id);
  },
});
const paid = await buyer.fetch(PAID_URL);
step(`paid: ${paid.response.status}`);
assert.equal(paid.response.status, 200);
assert.deepEqual(await paid.response.json(), { paid: true });
assert.equal(paid.settlement?.success, true);
assert.ok(pending.length === 1 && paid.authorization.header === 'PAYMENT-SIGNATURE');
step('the payment\'s execution');
const payment = await client.waitForTransferDecision(paid.authorization.intent.id, { timeoutSeconds: 60, until: ['executed'] });
assert.equal(payment.status, 'executed');
summary.x402_intent = payment.id;

step('the feed against the stream');
// Every event of those types the feed holds came on the stream, once, in order.
const feed = [];
for await (const item of client.paginate(sdk.listEvents, { query: { types: types.join(',') } })) feed.push(item.seq);
await eventually("the stream's events", () => JSON.stringify(streamed.slice(0, feed.length).map((e) => e.seq)) === JSON.stringify(feed));
const seqs = streamed.map((e) => e.seq);
assert.deepEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b));
summary.streamed = seqs.length;
summary.stream_connections = proxy.heads.length;
step('stopping the stream');
stop.abort();
await following.catch(() => {});
step('done');
console.log(JSON.stringify(summary));
process.exit(0);
