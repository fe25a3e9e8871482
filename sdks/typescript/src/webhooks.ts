// Verifying the webhooks the service posts (Standard Webhooks 1.0): `webhook-id`,
// `webhook-timestamp` and `webhook-signature`, one `v1,<base64>` HMAC-SHA256 of
// `id.timestamp.body` per live secret; any of the endpoint's secrets may have signed.

import type { EventOut } from './generated/types.gen.js';
import { WebhookVerificationError } from './errors.js';

export const TOLERANCE_SECONDS = 300;

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}

function toBase64(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

/** The `v1,<base64>` signature of `body` under `secret` (`whsec_` and base64). */
export async function sign(secret: string, webhookId: string, timestamp: number, body: string | Uint8Array): Promise<string> {
  const key = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  const hmac = await globalThis.crypto.subtle.importKey('raw', key as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const raw = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const signed = new Uint8Array([...new TextEncoder().encode(`${webhookId}.${timestamp}.`), ...raw]);
  return `v1,${toBase64(new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', hmac, signed)))}`;
}

/** Compares in a time that does not depend on where the texts differ. */
function same(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let differs = 0;
  for (let i = 0; i < a.length; i++) differs |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return differs === 0;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(found) ? found[0] : found;
}

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** Unix seconds; the clock by default. */
  now?: number;
}

/** Throws WebhookVerificationError unless one of `secrets` signed `body` within the tolerance. */
export async function verifySignature(
  body: string | Uint8Array,
  headers: HeaderSource,
  secrets: string | string[],
  options: VerifyOptions = {},
): Promise<void> {
  const id = header(headers, 'webhook-id');
  const stamp = header(headers, 'webhook-timestamp') ?? '';
  const signatures = header(headers, 'webhook-signature');
  if (!id || !signatures || !/^\d+$/.test(stamp)) {
    throw new WebhookVerificationError('missing or malformed webhook headers');
  }
  const timestamp = Number(stamp);
  const now = options.now ?? Date.now() / 1000;
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError("the webhook's timestamp is outside the tolerance");
  }
  const offered = signatures.split(' ').filter((part) => part.startsWith('v1,'));
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const expected = await sign(secret, id, timestamp, body);
    if (offered.some((candidate) => same(expected, candidate))) return;
  }
  throw new WebhookVerificationError("no signature matches the webhook's secrets");
}

/** The event a verified webhook carries; WebhookVerificationError when it does not verify. */
export async function verifyWebhook(
  body: string | Uint8Array,
  headers: HeaderSource,
  secrets: string | string[],
  options: VerifyOptions = {},
): Promise<EventOut> {
  await verifySignature(body, headers, secrets, options);
  return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as EventOut;
}
