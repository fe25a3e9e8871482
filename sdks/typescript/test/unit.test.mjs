// Unit tests of the hand-written layer, over a fetch of the test's own (the stream's abort: a local
// server), no agent-runtime server. Run with
// `node --test` where the package is installed (tests/it/sdks.rs installs the tarball).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { test } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

import * as sdk from 'agent-runtime';
import {
  AgentRuntime,
  PermissionDeniedError,
  PolicyError,
  RateLimitError,
  ServiceUnavailableError,
  SseParser,
  WaitTimeout,
  WebhookVerificationError,
  X402Client,
  backoff,
  errorFor,
  policyRule,
  retryingFetch,
  sign,
  verifySignature,
  verifyWebhook,
  withIdempotency,
} from 'agent-runtime';

const INTENT = {
  id: '0b6b7c2e-8a9c-4d5e-9f00-000000000001',
  kind: 'transfer',
  status: 'pending_confirmation',
  asset: 'USDC',
  chain: 'base',
  recipient_address: '0x000000000000000000000000000000000000dEaD',
  amount_atomic: '1000',
  created_at: '2026-11-25T10:00:00Z',
  updated_at: '2026-11-25T10:00:00Z',
  approvals: { required: 1, received: 0 },
};
const SEND = { to: '0x000000000000000000000000000000000000dEaD', amount_atomic: '1' };
const json = (status, body, headers = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A fetch answering from a list, keeping every request (and its body) it saw. */
function recorder(...answers) {
  const seen = [];
  const fetch = async (input, init) => {
    const request = new Request(input, init);
    seen.push({ request, body: request.body ? await request.text() : undefined });
    const answer = answers.shift();
    return typeof answer === 'function' ? answer(request) : answer;
  };
  return { fetch, seen };
}

const runtime = (fetch, retry = { baseDelayMs: 1, maxDelayMs: 5 }) =>
  new AgentRuntime({ key: 'ark_test', baseUrl: 'http://runtime.test/', fetch, retry });

test('the key and URL default to the environment', () => {
  process.env.AGENT_RUNTIME_KEY = 'ark_env';
  process.env.AGENT_RUNTIME_URL = 'http://env.test/';
  assert.equal(new AgentRuntime().baseUrl, 'http://env.test');
  delete process.env.AGENT_RUNTIME_KEY;
  delete process.env.AGENT_RUNTIME_URL;
  assert.throws(() => new AgentRuntime(), /AGENT_RUNTIME_KEY/);
});

test('a send gets an idempotency key that the retry after a 429 repeats', async () => {
  const { fetch, seen } = recorder(json(429, { detail: 'Too many sends' }, { 'retry-after': '0' }), json(200, INTENT));
  const intent = await runtime(fetch).call(sdk.createWalletSend, { body: SEND });
  assert.equal(intent.id, INTENT.id);
  const [first, second] = seen.map((s) => JSON.parse(s.body));
  assert.ok(first.idempotency_key);
  assert.deepEqual(first, second);
  assert.equal(seen[0].request.headers.get('authorization'), 'Bearer ark_test');
});

test('a caller key is kept and the mail routes get the header', () => {
  assert.equal(withIdempotency(sdk.createWalletSend, { body: { ...SEND, idempotency_key: 'mine' } }).body.idempotency_key, 'mine');
  assert.equal(withIdempotency(sdk.sendEmail, { body: {} }).headers['idempotency-key'].length, 36);
  assert.equal(withIdempotency(sdk.getAgentMe, {}).headers, undefined);
});

test('every route the document gives an idempotency key gets one', () => {
  const document = JSON.parse(readFileSync(process.env.OPENAPI_DOC ?? new URL('../../../docs/openapi.json', import.meta.url)));
  const schemas = document.components.schemas;
  for (const methods of Object.values(document.paths)) {
    for (const operation of Object.values(methods)) {
      const header = (operation.parameters ?? []).some((p) => p.name === 'Idempotency-Key');
      const ref = operation.requestBody?.content?.['application/json']?.schema?.$ref;
      const inBody = ref !== undefined && 'idempotency_key' in (schemas[ref.split('/').pop()].properties ?? {});
      if (!header && !inBody) continue;
      const name = operation.operationId.replace(/_(\w)/g, (_, c) => c.toUpperCase());
      const given = withIdempotency(sdk[name], { body: {} });
      assert.ok(given.headers?.['idempotency-key'] || given.body.idempotency_key, operation.operationId);
    }
  }
});

test('retries stop at their count and the error is typed', async () => {
  const { fetch, seen } = recorder(...Array.from({ length: 4 }, () => json(503, { detail: 'down' })));
  await assert.rejects(runtime(fetch).call(sdk.getAgentMe), (error) => {
    assert.ok(error instanceof ServiceUnavailableError);
    assert.equal(error.detail, 'down');
    return true;
  });
  assert.equal(seen.length, 4);
});

test('retries stop at their time budget', async () => {
  const { fetch, seen } = recorder(json(429, { detail: 'later' }, { 'retry-after': '90' }));
  await assert.rejects(runtime(fetch, { maxSeconds: 60 }).call(sdk.getAgentMe), (error) => {
    assert.ok(error instanceof RateLimitError);
    assert.equal(error.retryAfter, 90);
    return true;
  });
  assert.equal(seen.length, 1);
});

test('the backoff doubles up to its cap and honours Retry-After', () => {
  const policy = { maxRetries: 3, maxSeconds: 60, baseDelayMs: 500, maxDelayMs: 1000 };
  assert.ok(backoff(policy, 1) >= 250 && backoff(policy, 1) <= 500);
  assert.ok(backoff(policy, 5) <= 1000);
  assert.equal(backoff(policy, 1, 5), 5000);
});

test('a write without a key is not repeated after a 503 nor a broken answer', async () => {
  for (const failure of [json(503, { detail: 'down' }), () => Promise.reject(new TypeError('terminated'))]) {
    const { fetch, seen } = recorder(failure, json(200, {}));
    // PATCH /v1/webhooks/{id} takes no idempotency key.
    const options = { path: { webhook_id: '00000000-0000-4000-8000-000000000000' }, body: { enabled: true } };
    await assert.rejects(runtime(fetch).call(sdk.updateWebhook, options));
    assert.equal(seen.length, 1);
  }
});

test('a connection never made is retried for any request', async () => {
  const refused = () => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }));
  const { fetch, seen } = recorder(refused, json(201, { id: 'key_1' }));
  const wrapped = retryingFetch(fetch, { maxRetries: 3, maxSeconds: 60, baseDelayMs: 1, maxDelayMs: 1 });
  assert.equal((await wrapped('http://runtime.test/v1/keys', { method: 'POST', body: '{}' })).status, 201);
  assert.equal(seen.length, 2);
});

const POLICY_DETAILS = [
  ['Spend policy violation: amount 30 exceeds the per-transaction maximum of 25', 'max_per_tx', 25n, undefined],
  [
    'Spend policy violation: amount 30000000 exceeds the daily maximum of 50000000; 20000000 is still available in the rolling 24 hours',
    'max_daily',
    50000000n,
    20000000n,
  ],
  [
    'Spend policy violation (rule max_weekly): amount 9 exceeds the weekly maximum of 10; 1 is still available in the rolling 7 days',
    'max_weekly',
    10n,
    1n,
  ],
  ["Spend policy violation: recipient 0xdEaD is not on the wallet's allowlist", 'allowlist', undefined, undefined],
  ['Refused by rule max_amount: the payment asks 1500, above max_amount_atomic 1000', 'max_amount', 1000n, undefined],
];

test('a policy refusal names its rule, its limit and what is left', () => {
  for (const [detail, rule, limit, remaining] of POLICY_DETAILS) {
    const error = errorFor(403, { detail });
    assert.ok(error instanceof PolicyError, detail);
    assert.deepEqual([error.rule, error.limit, error.remaining], [rule, limit, remaining]);
    assert.deepEqual(policyRule(detail), { rule, limit, remaining });
  }
});

test('a missing scope is a permission error naming it', () => {
  const error = errorFor(403, { detail: 'This key lacks the scope wallet:pay' });
  assert.ok(error instanceof PermissionDeniedError && !(error instanceof PolicyError));
  assert.equal(error.scope, 'wallet:pay');
});

test('cursor pages are followed to the last', async () => {
  const second = { ...INTENT, id: '0b6b7c2e-8a9c-4d5e-9f00-000000000002' };
  const { fetch, seen } = recorder(
    json(200, { items: [INTENT], next_cursor: 'c1' }),
    json(200, { items: [second], next_cursor: null }),
  );
  const ids = [];
  for await (const intent of runtime(fetch).paginate(sdk.listWalletIntents, { query: { limit: 1 } })) ids.push(intent.id);
  assert.deepEqual(ids, [INTENT.id, second.id]);
  assert.equal(new URL(seen[1].request.url).searchParams.get('cursor'), 'c1');
});

test('offset lists stop at a short page', async () => {
  const { fetch, seen } = recorder(json(200, [{}, {}]), json(200, [{}]));
  let count = 0;
  for await (const _ of runtime(fetch).paginate(sdk.listSmsMessages, { query: { limit: 2 } })) count++;
  assert.equal(count, 3);
  assert.equal(new URL(seen[1].request.url).searchParams.get('offset'), '2');
});

test('a code wait calls again after a 408, each call under its own request_id', async () => {
  const code = { code: '385920', channel: 'email', message_id: 'm1', raw_message: 'x', received_at: 'now' };
  const { fetch, seen } = recorder(json(408, { detail: 'no code' }), json(200, code));
  assert.equal((await runtime(fetch).waitForCode({ channels: ['email'], timeoutSeconds: 30 })).code, '385920');
  const [first, second] = seen.map((s) => JSON.parse(s.body));
  assert.notEqual(first.request_id, second.request_id);
  assert.ok(first.timeout >= 28 && first.timeout <= 30);
});

test('a code wait ends at the callers deadline', async () => {
  const { fetch } = recorder(...Array.from({ length: 3 }, () => json(408, { detail: 'no code' })));
  await assert.rejects(runtime(fetch).waitForCode({ timeoutSeconds: 0.2 }), WaitTimeout);
});

test('a decision wait reads the intent until it leaves pending', async () => {
  const statuses = ['pending_confirmation', 'pending_confirmation', 'confirmed'];
  const { fetch, seen } = recorder(...statuses.map((status) => json(200, { ...INTENT, status })));
  const intent = await runtime(fetch).waitForTransferDecision(INTENT.id, { intervalMs: 5 });
  assert.equal(intent.status, 'confirmed');
  assert.equal(seen.length, 3);
});

const event = (seq) => ({
  id: `evt_${seq}`,
  seq,
  type: 'sms.received',
  timestamp: '2026-11-25T10:00:00Z',
  data: { message_id: INTENT.id, from_number: '+1555', to_number: '+1666', code: null },
});
const sse = (...events) =>
  'retry: 3000\n\n: keep-alive\n\n' +
  events.map((e) => `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');

test('SSE messages are read as the standard says', () => {
  const parser = new SseParser();
  const read = ['retry: 3000', '', ': c', 'id: 7', 'event: x', 'data: a', 'data: b', '', 'data: c', '']
    .map((line) => parser.feed(line))
    .filter(Boolean);
  assert.deepEqual(read, [
    { event: 'message', id: undefined, retry: 3000 },
    { event: 'x', id: '7', retry: undefined, data: 'a\nb' },
    { event: 'message', id: '7', retry: undefined, data: 'c' },
  ]);
});

test('the stream resumes after a disconnect with Last-Event-ID, losing and repeating nothing', async () => {
  // Two events, then the connection breaks (an error in the same step would drop them).
  const chunks = [new TextEncoder().encode(sse(event(1), event(2)))];
  const broken = new ReadableStream({
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk) controller.enqueue(chunk);
      else controller.error(new TypeError('terminated'));
    },
  });
  const { fetch, seen } = recorder(new Response(broken, { status: 200 }), new Response(sse(event(2), event(3))));
  const seqs = [];
  for await (const item of runtime(fetch).events({ types: ['sms.received'], reconnectDelayMs: 0 })) {
    seqs.push(item.seq);
    if (seqs.length === 3) break;
  }
  assert.deepEqual(seqs, [1, 2, 3]);
  assert.equal(seen[0].request.headers.get('last-event-id'), null);
  assert.equal(new URL(seen[0].request.url).searchParams.get('types'), 'sms.received');
  assert.equal(seen[1].request.headers.get('last-event-id'), '2');
});

test('a reset is reported and reading goes on', async () => {
  const resets = [];
  const { fetch, seen } = recorder(new Response('event: reset\ndata: {}\n\n' + sse(event(9))));
  for await (const item of runtime(fetch).events({ after: 1, onReset: () => resets.push(1) })) {
    assert.equal(item.seq, 9);
    break;
  }
  assert.deepEqual(resets, [1]);
  assert.equal(seen[0].request.headers.get('last-event-id'), '1');
});

/** A local server whose event stream never ends: a keep-alive comment every 50 ms. */
async function endlessStream() {
  const server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(sse(event(1)));
    const beat = setInterval(() => response.write(': keep-alive\n\n'), 50);
    request.on('close', () => clearInterval(beat));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

test('the stream ends when its signal aborts, even after a garbage collection', async () => {
  // Node's fetch loses a cloned request's abort once the clones are collected
  // (nodejs/undici#4068): the journey's stream outlived its stop.
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const { server, url } = await endlessStream();
  try {
    const stop = new AbortController();
    const reader = new AgentRuntime({ key: 'ark_test', baseUrl: url });
    const seqs = [];
    const following = (async () => {
      for await (const item of reader.events({ signal: stop.signal, reconnectDelayMs: 0 })) seqs.push(item.seq);
    })();
    while (seqs.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
    stop.abort();
    const ended = await Promise.race([following.then(() => true), new Promise((resolve) => setTimeout(resolve, 5000, false))]);
    assert.ok(ended, 'the stream went on after the abort');
    assert.deepEqual(seqs, [1]);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('the stream ends when its signal aborts, even under a fetch that ignores signals', async () => {
  const { server, url } = await endlessStream();
  try {
    const stop = new AbortController();
    const deaf = (input) => globalThis.fetch(new Request(input).url, { headers: new Request(input).headers });
    const seqs = [];
    const following = (async () => {
      const reader = new AgentRuntime({ key: 'ark_test', baseUrl: url, fetch: deaf });
      for await (const item of reader.events({ signal: stop.signal, reconnectDelayMs: 0 })) seqs.push(item.seq);
    })();
    while (seqs.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    stop.abort();
    const ended = await Promise.race([following.then(() => true), new Promise((resolve) => setTimeout(resolve, 5000, false))]);
    assert.ok(ended, 'the stream went on after the abort');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

// The Standard Webhooks specification's published example (as crates/standard-webhooks pins it).
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const HEADERS = {
  'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  'webhook-timestamp': '1614265330',
  'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const BODY = '{"test": 2432232314}';

test('the specifications vector verifies', async () => {
  assert.equal(await sign(SECRET, HEADERS['webhook-id'], 1614265330, BODY), HEADERS['webhook-signature']);
  await verifySignature(BODY, HEADERS, SECRET, { now: 1614265330 });
});

test('a changed body, a wrong secret, an old timestamp and missing headers are refused', async () => {
  const other = 'whsec_' + btoa('another secret of 32 bytes......');
  for (const [body, headers, secrets, now] of [
    ['{"test": 2432232315}', HEADERS, SECRET, 1614265330],
    [BODY, HEADERS, other, 1614265330],
    [BODY, HEADERS, SECRET, 1614265330 + 301],
    [BODY, { 'webhook-id': 'msg' }, SECRET, 1614265330],
  ]) {
    await assert.rejects(verifySignature(body, headers, secrets, { now }), WebhookVerificationError);
  }
});

test('any of several secrets verifies and the event is parsed', async () => {
  const fresh = 'whsec_' + btoa('x'.repeat(32));
  const body = JSON.stringify(event(4));
  const signatures = [await sign(fresh, 'evt_4', 1700000000, body), await sign(SECRET, 'evt_4', 1700000000, body)];
  const headers = new Headers({ 'Webhook-Id': 'evt_4', 'Webhook-Timestamp': '1700000000', 'Webhook-Signature': signatures.join(' ') });
  assert.equal((await verifyWebhook(body, headers, [SECRET], { now: 1700000000 })).seq, 4);
  assert.equal((await verifyWebhook(body, headers, [fresh, SECRET], { now: 1700000100 })).id, 'evt_4');
});

const CHALLENGE = {
  x402Version: 2,
  resource: { url: 'http://seller.test/report' },
  accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '1500', payTo: '0x1' }],
};
const AUTHORIZED = {
  status: 'authorized',
  header: 'PAYMENT-SIGNATURE',
  payment_signature: 'c2lnbmVk',
  valid_before: '2026-11-25T11:00:00Z',
  intent: { ...INTENT, kind: 'x402', status: 'authorized' },
};
const seller = async (input, init) => {
  const request = new Request(input, init);
  if (request.headers.get('payment-signature') === 'c2lnbmVk') {
    return json(200, { paid: true }, { 'payment-response': btoa('{"success": true, "transaction": "0xabc"}') });
  }
  return json(402, {}, { 'payment-required': btoa(JSON.stringify(CHALLENGE)) });
};

test('a 402 is authorized and the request repeated with the payment header', async () => {
  const { fetch, seen } = recorder(json(200, AUTHORIZED));
  const paid = await new X402Client(runtime(fetch), { maxAmountAtomic: 2000, fetch: seller }).fetch('http://seller.test/report');
  assert.deepEqual(await paid.response.json(), { paid: true });
  assert.deepEqual(paid.settlement, { success: true, transaction: '0xabc' });
  const sent = JSON.parse(seen[0].body);
  assert.deepEqual(sent.payment_required, CHALLENGE);
  assert.equal(sent.max_amount_atomic, '2000');
  assert.ok(sent.idempotency_key && !('resource_url' in sent));
});

test('a payment waiting for the operators is asked again under its key once approved', async () => {
  const pending = { status: 'pending_confirmation', intent: { ...INTENT, kind: 'x402' }, approval_url: 'http://runtime.test/a' };
  const { fetch, seen } = recorder(json(202, pending), json(200, { ...INTENT, status: 'confirmed' }), json(200, AUTHORIZED));
  const told = [];
  const client = new X402Client(runtime(fetch), { maxAmountAtomic: '2000', fetch: seller, onPending: (p) => told.push(p.approval_url) });
  assert.equal((await client.fetch('http://seller.test/report')).response.status, 200);
  assert.deepEqual(told, ['http://runtime.test/a']);
  assert.equal(seen[0].body, seen[2].body);
});

test('a free resource is not paid', async () => {
  const free = async () => new Response('free');
  const paid = await new X402Client(runtime(recorder().fetch), { maxAmountAtomic: 1, fetch: free }).fetch('http://seller.test/free');
  assert.equal(paid.authorization, undefined);
  assert.equal(await paid.response.text(), 'free');
});
