// Bounded retries under every request, as a fetch: a retry sends the very request again, so an
// idempotency key it carries (header or body) is the one the first attempt carried.

import { retryAfterSeconds } from './errors.js';

/** At most `maxRetries` retries within `maxSeconds` of the first attempt; waits double from
 * `baseDelayMs` up to `maxDelayMs`, with jitter, unless `Retry-After` asks for more. */
export interface RetryPolicy {
  maxRetries: number;
  maxSeconds: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 3, maxSeconds: 60, baseDelayMs: 500, maxDelayMs: 8000 };

/** The wait before retry number `attempt` (1 for the first), in milliseconds. */
export function backoff(policy: RetryPolicy, attempt: number, retryAfter?: number): number {
  const doubled = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const jittered = doubled * (0.5 + Math.random() / 2);
  return retryAfter === undefined ? jittered : Math.max(jittered, retryAfter * 1000);
}

const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS'];

/** Whether sending the request twice does what sending it once does: a read, or a write under an
 * idempotency key (the header, or `idempotency_key` / a wait's `request_id` in its body). */
export function repeatable(request: Request, body: string | undefined): boolean {
  if (SAFE_METHODS.includes(request.method) || request.headers.has('idempotency-key')) return true;
  try {
    const parsed = JSON.parse(body ?? 'null') as Record<string, unknown> | null;
    return parsed !== null && typeof parsed === 'object' && Boolean(parsed.idempotency_key || parsed.request_id);
  } catch {
    return false;
  }
}

/** A connection never made: nothing was sent. */
function notConnected(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } })?.cause?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
}

/** undefined when the outcome stands; else the server's Retry-After in seconds, or 0. */
export function retryReason(
  request: Request,
  body: string | undefined,
  response: Response | undefined,
  error: unknown,
): number | undefined {
  // A 429 is refused before anything is done; a 503 may come after a write began.
  if (response !== undefined) {
    if (response.status === 429 || (response.status === 503 && repeatable(request, body))) {
      return retryAfterSeconds(response.headers.get('retry-after')) ?? 0;
    }
    return undefined;
  }
  if ((error as { name?: string })?.name === 'AbortError') return undefined;
  return notConnected(error) || repeatable(request, body) ? 0 : undefined;
}

export type Sleep = (ms: number) => Promise<void>;
export const sleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `inner` with retries. */
export function retryingFetch(inner: typeof fetch, policy: RetryPolicy, pause: Sleep = sleep): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.body ? await request.clone().text() : undefined;
    // Each attempt is given the caller's signal itself: a clone's signal only follows the
    // original's, and Node's fetch (undici, nodejs/undici#4068) drops that link once the
    // intermediate requests are garbage-collected, after which an abort never reaches the fetch.
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      let response: Response | undefined;
      let error: unknown;
      try {
        response = await inner(request.clone(), signal ? { signal } : undefined);
      } catch (failed) {
        error = failed;
      }
      const reason = retryReason(request, body, response, error);
      const wait = reason === undefined ? undefined : backoff(policy, attempt, reason || undefined);
      const spent = Date.now() - started;
      if (wait === undefined || attempt > policy.maxRetries || spent + wait > policy.maxSeconds * 1000) {
        if (response === undefined) throw error;
        return response;
      }
      await response?.body?.cancel();
      await pause(wait);
    }
  };
}
