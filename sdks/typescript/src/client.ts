// The client: a key and a base URL over the generated route functions, with idempotency keys,
// bounded retries, typed errors, pages, the two wait loops and the resuming event stream.

import { createClient, createConfig, type Client } from './generated/client/index.js';
import * as sdk from './generated/sdk.gen.js';
import type { Channel, CodeOut, EventOut, TransferIntentOut } from './generated/types.gen.js';
import { AgentRuntimeError, RequestTimeoutError, WaitTimeout, errorFor } from './errors.js';
import { DEFAULT_RETRY, retryingFetch, sleep, type RetryPolicy } from './retry.js';
import { SseParser, lines } from './sse.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';
/** The longest a wait route holds a request: its `timeout` is at most 300 s. */
export const MAX_WAIT_SECONDS = 300;
/** An event stream sends a comment at least every 15 s: silence this long means a dead connection. */
export const STREAM_IDLE_MS = 45_000;
const FINAL_STATUSES = ['executed', 'failed', 'rejected', 'expired'];

// The routes that take an idempotency key, and where (the unit tests check this against
// docs/openapi.json): a generated function does not say so at run time.
const KEYED = new Map<unknown, 'header' | 'body'>([
  [sdk.sendEmail, 'header'],
  [sdk.replyEmail, 'header'],
  [sdk.forwardEmail, 'header'],
  [sdk.createKey, 'header'],
  [sdk.createWebhook, 'header'],
  [sdk.rotateWebhookSecret, 'header'],
  [sdk.replayWebhook, 'header'],
  [sdk.createWalletSend, 'body'],
  [sdk.authorizeX402Payment, 'body'],
  [sdk.fetchX402Resource, 'body'],
]);

/** A generated route function: it answers `{data, error, response}`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Operation = (options: any) => Promise<any>;
/** What the function takes, but for the client, which is this one's. */
export type Arguments<F extends Operation> = Omit<Parameters<F>[0], 'client'>;
/** What the function's call answers on success. */
export type Data<F extends Operation> = NonNullable<Awaited<ReturnType<F>>['data']>;
type Item<F extends Operation> = Data<F> extends { items: Array<infer I> } ? I : Data<F> extends Array<infer I> ? I : never;

export interface AgentRuntimeOptions {
  /** The agent key; AGENT_RUNTIME_KEY by default. */
  key?: string;
  /** AGENT_RUNTIME_URL, else http://127.0.0.1:8080. */
  baseUrl?: string;
  retry?: Partial<RetryPolicy>;
  /** The fetch under the retries (globalThis.fetch). */
  fetch?: typeof fetch;
}

export function newKey(): string {
  return globalThis.crypto.randomUUID();
}

function environment(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
}

/** `options` with an idempotency key where the route takes one and the caller gave none. */
export function withIdempotency<O extends { headers?: unknown; body?: unknown }>(operation: unknown, options: O): O {
  const where = KEYED.get(operation);
  if (where === 'header') {
    // A plain object: the generated functions spread the caller's headers into their own.
    const headers = Object.fromEntries(new Headers(options.headers as HeadersInit | undefined));
    headers['idempotency-key'] ??= newKey();
    return { ...options, headers };
  }
  const body = options.body as Record<string, unknown> | undefined;
  if (where === 'body' && body && !body.idempotency_key) {
    return { ...options, body: { ...body, idempotency_key: newKey() } };
  }
  return options;
}

/** A page's items and the arguments of the next page (undefined after the last). */
export function pageItems<T>(
  page: unknown,
  options: Record<string, unknown>,
): [T[], Record<string, unknown> | undefined] {
  const query = (options.query ?? {}) as Record<string, unknown>;
  if (Array.isArray(page)) {
    const limit = (query.limit as number | undefined) ?? 20;
    if (page.length === 0 || page.length < limit) return [page as T[], undefined];
    const offset = ((query.offset as number | undefined) ?? 0) + page.length;
    return [page as T[], { ...options, query: { ...query, offset } }];
  }
  const listing = page as { items: T[]; next_cursor?: string | null; next_after?: number | null };
  for (const [field, argument] of [
    ['next_cursor', 'cursor'],
    ['next_after', 'after'],
  ] as const) {
    if (field in listing) {
      const following = listing[field];
      if (following === null || following === undefined) return [listing.items, undefined];
      return [listing.items, { ...options, query: { ...query, [argument]: following } }];
    }
  }
  return [listing.items, undefined];
}

export function decided(intent: TransferIntentOut, until?: Iterable<string>): boolean {
  if (until === undefined) return intent.status !== 'pending_confirmation';
  return [...until].includes(intent.status) || FINAL_STATUSES.includes(intent.status);
}

/** What the stream said, kept across reconnections: the last `seq` read and the server's
 * reconnection delay. Events at or before the last `seq` are dropped, so none is read twice. */
export class EventReader {
  delayMs: number;
  constructor(
    public last: number | undefined,
    private readonly fixedDelayMs?: number,
  ) {
    this.delayMs = fixedDelayMs ?? 3000;
  }

  read(message: { event: string; data?: string; retry?: number }, onReset?: () => void): EventOut | undefined {
    if (message.retry !== undefined && this.fixedDelayMs === undefined) this.delayMs = message.retry;
    if (message.event === 'reset') {
      onReset?.();
      return undefined;
    }
    if (message.data === undefined) return undefined;
    const event = JSON.parse(message.data) as EventOut;
    if (this.last !== undefined && event.seq <= this.last) return undefined;
    this.last = event.seq;
    return event;
  }
}

export interface EventsOptions {
  types?: string[];
  after?: number;
  reconnectDelayMs?: number;
  onReset?: () => void;
  signal?: AbortSignal;
}

/** The API as one agent: `call` runs any generated route function and returns its data or throws
 * the typed error; the rest are the loops an agent writes around them. */
export class AgentRuntime {
  readonly baseUrl: string;
  readonly client: Client;
  readonly fetch: typeof fetch;
  private readonly key: string;

  constructor(options: AgentRuntimeOptions = {}) {
    const key = options.key ?? environment('AGENT_RUNTIME_KEY');
    if (!key) throw new AgentRuntimeError('no agent key: pass key or set AGENT_RUNTIME_KEY');
    this.key = key;
    this.baseUrl = (options.baseUrl ?? environment('AGENT_RUNTIME_URL') ?? DEFAULT_URL).replace(/\/+$/, '');
    const inner = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.fetch = retryingFetch(inner, { ...DEFAULT_RETRY, ...options.retry });
    this.client = createClient(createConfig({ baseUrl: this.baseUrl, auth: key, fetch: this.fetch }));
  }

  /** `operation(options)` with an idempotency key where the route takes one: its data on success,
   * else the typed error. */
  async call<F extends Operation>(operation: F, options?: Arguments<F>): Promise<Data<F>> {
    const prepared = withIdempotency(operation, { ...(options ?? {}) } as { headers?: unknown; body?: unknown });
    const answer = (await operation({ ...prepared, client: this.client })) as {
      data?: Data<F>;
      error?: unknown;
      response?: Response;
    };
    const response = answer.response;
    if (!response || !response.ok) {
      throw errorFor(response?.status ?? 0, answer.error, response?.headers);
    }
    return answer.data as Data<F>;
  }

  /** Every item of a listing, page after page. */
  async *paginate<F extends Operation>(operation: F, options?: Arguments<F>): AsyncGenerator<Item<F>> {
    let following: Record<string, unknown> | undefined = { ...(options ?? {}) };
    while (following !== undefined) {
      const page: unknown = await this.call(operation, following as Arguments<F>);
      const [items, next]: [Item<F>[], Record<string, unknown> | undefined] = pageItems(page, following);
      yield* items;
      following = next;
    }
  }

  /** The newest unseen verification code by SMS or mail, calling again until one comes or
   * `timeoutSeconds` pass (WaitTimeout). */
  async waitForCode(options: { channels?: Channel[]; serviceName?: string; timeoutSeconds?: number } = {}): Promise<CodeOut> {
    const timeout = options.timeoutSeconds ?? 300;
    const deadline = Date.now() + timeout * 1000;
    for (;;) {
      const remaining = Math.floor((deadline - Date.now()) / 1000);
      // Each call waits under a request_id of its own, which the client's retries repeat.
      const body = {
        channels: options.channels,
        service_name: options.serviceName,
        timeout: Math.max(0, Math.min(MAX_WAIT_SECONDS, remaining)),
        request_id: newKey(),
      };
      try {
        return await this.call(sdk.waitForCodeAnyChannel, { body });
      } catch (error) {
        if (!(error instanceof RequestTimeoutError)) throw error;
        if (Date.now() >= deadline - 500) throw new WaitTimeout(`no code within ${timeout} s`);
      }
    }
  }

  /** The intent once the operators decided (it left `pending_confirmation`), or once its status
   * is in `until` or final; WaitTimeout after `timeoutSeconds`. */
  async waitForTransferDecision(
    intentId: string,
    options: { timeoutSeconds?: number; intervalMs?: number; until?: string[] } = {},
  ): Promise<TransferIntentOut> {
    const timeout = options.timeoutSeconds ?? 3600;
    const interval = options.intervalMs ?? 1000;
    const deadline = Date.now() + timeout * 1000;
    for (;;) {
      const intent = await this.call(sdk.getWalletIntent, { path: { intent_id: intentId } });
      if (decided(intent, options.until)) return intent;
      if (Date.now() + interval > deadline) {
        throw new WaitTimeout(`intent ${intentId} still ${intent.status} after ${timeout} s`);
      }
      await sleep(interval);
    }
  }

  /** The agent's events from the live stream, until `signal` aborts: after a disconnect it
   * reconnects with `Last-Event-ID` and the server replays what was missed, so none is lost or
   * repeated. `onReset` is called when the asked position is older than what the server keeps. */
  async *events(options: EventsOptions = {}): AsyncGenerator<EventOut> {
    const reader = new EventReader(options.after, options.reconnectDelayMs);
    while (!options.signal?.aborted) {
      const url = new URL(`${this.baseUrl}/v1/events/stream`);
      if (options.types?.length) url.searchParams.set('types', options.types.join(','));
      const headers = new Headers({ Authorization: `Bearer ${this.key}`, Accept: 'text/event-stream' });
      if (reader.last !== undefined) headers.set('Last-Event-ID', String(reader.last));
      // Silence beyond STREAM_IDLE_MS aborts the connection, as a dead one.
      const idle = new AbortController();
      const stop = () => idle.abort();
      options.signal?.addEventListener('abort', stop);
      let timer = setTimeout(stop, STREAM_IDLE_MS);
      try {
        const response = await this.fetch(url, { headers, signal: idle.signal });
        if (response.status !== 200) {
          throw errorFor(response.status, await response.json().catch(() => undefined), response.headers);
        }
        const parser = new SseParser();
        for await (const line of lines(response.body!, idle.signal)) {
          clearTimeout(timer);
          timer = setTimeout(stop, STREAM_IDLE_MS);
          const message = parser.feed(line);
          const event = message ? reader.read(message, options.onReset) : undefined;
          if (event) yield event;
        }
      } catch (error) {
        if (error instanceof AgentRuntimeError) throw error;
        // The connection broke: reconnect below.
      } finally {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', stop);
      }
      if (!options.signal?.aborted) await sleep(reader.delayMs);
    }
  }
}
