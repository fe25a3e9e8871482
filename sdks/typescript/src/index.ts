// The agent-runtime client library. The route functions and types are generated from
// docs/openapi.json (src/generated, by `make sdks`); the rest is the hand-written layer.

export * from './generated/sdk.gen.js';
export type * from './generated/types.gen.js';
export { AgentRuntime, EventReader, newKey, withIdempotency, pageItems } from './client.js';
export type { AgentRuntimeOptions, EventsOptions } from './client.js';
export * from './errors.js';
export { DEFAULT_RETRY, backoff, retryingFetch, type RetryPolicy } from './retry.js';
export { SseParser } from './sse.js';
export { sign, verifySignature, verifyWebhook } from './webhooks.js';
export { X402Client, type Paid, type X402Options } from './x402.js';
