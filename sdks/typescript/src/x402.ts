// Paying for HTTP resources that answer 402 (x402): a fetch wrapper that, on a 402, has the
// service authorize the payment from the agent's wallet (waiting for the operators when the
// policy asks them) and repeats the request with the payment header the service names.

import { authorizeX402Payment } from './generated/sdk.gen.js';
import type { X402AuthorizedOut, X402PendingOut } from './generated/types.gen.js';
import { AgentRuntimeError, PaymentNotApproved } from './errors.js';
import { newKey, type AgentRuntime } from './client.js';

/** After an approval the intent is `confirmed`; `authorized` once a signature was handed out. */
const APPROVED = ['confirmed', 'authorized'];

/** The resource's answer; `authorization` and the decoded `settlement` (its PAYMENT-RESPONSE)
 * when it was paid. */
export interface Paid {
  response: Response;
  authorization?: X402AuthorizedOut;
  settlement?: Record<string, unknown>;
}

export interface X402Options {
  maxAmountAtomic: string | number | bigint;
  /** The fetch that reaches the resource (globalThis.fetch). */
  fetch?: typeof fetch;
  approvalTimeoutSeconds?: number;
  /** Called when the payment waits for the operators (its `approval_url`). */
  onPending?: (pending: X402PendingOut) => unknown;
}

function decodeHeader(value: string): unknown {
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0))));
}

/** A 402's challenge: version 2's PAYMENT-REQUIRED header, else version 1's JSON body. */
async function challengeOf(response: Response): Promise<Record<string, unknown>> {
  const header = response.headers.get('payment-required');
  let challenge: unknown;
  try {
    challenge = header ? decodeHeader(header) : await response.json();
  } catch {
    challenge = undefined;
  }
  if (challenge === null || typeof challenge !== 'object') throw new AgentRuntimeError('a 402 without an x402 challenge');
  return challenge as Record<string, unknown>;
}

export class X402Client {
  private readonly fetcher: typeof fetch;
  constructor(
    private readonly runtime: AgentRuntime,
    private readonly options: X402Options,
  ) {
    this.fetcher = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** fetch(url, init), paying a 402 up to maxAmountAtomic under one idempotency key. */
  async fetch(url: string, init: RequestInit = {}, idempotencyKey: string = newKey()): Promise<Paid> {
    const first = await this.fetcher(url, init);
    if (first.status !== 402) return { response: first };
    const challenge = await challengeOf(first);
    const accepts = Array.isArray(challenge.accepts) ? (challenge.accepts as Array<Record<string, unknown>>) : [];
    // The challenge names its resource (version 2 on the whole, version 1 per entry); else the URL.
    const named = 'resource' in challenge || accepts.some((entry) => entry && 'resource' in entry);
    const body = {
      payment_required: challenge,
      idempotency_key: idempotencyKey,
      max_amount_atomic: String(this.options.maxAmountAtomic),
      ...(named ? {} : { resource_url: url }),
    };
    let answer = await this.runtime.call(authorizeX402Payment, { body });
    if (answer.status === 'pending_confirmation') {
      const pending = answer as X402PendingOut;
      await this.options.onPending?.(pending);
      const intent = await this.runtime.waitForTransferDecision(pending.intent.id, {
        timeoutSeconds: this.options.approvalTimeoutSeconds ?? 3600,
      });
      if (!APPROVED.includes(intent.status)) throw new PaymentNotApproved(intent);
      answer = await this.runtime.call(authorizeX402Payment, { body });
      if (answer.status === 'pending_confirmation') throw new PaymentNotApproved((answer as X402PendingOut).intent);
    }
    const authorization = answer as X402AuthorizedOut;
    const headers = new Headers(init.headers);
    headers.set(authorization.header, authorization.payment_signature);
    const response = await this.fetcher(url, { ...init, headers });
    const settlementHeader = response.headers.get('payment-response') ?? response.headers.get('x-payment-response');
    let settlement: Record<string, unknown> | undefined;
    try {
      settlement = settlementHeader ? (decodeHeader(settlementHeader) as Record<string, unknown>) : undefined;
    } catch {
      settlement = undefined;
    }
    return { response, authorization, settlement };
  }
}
