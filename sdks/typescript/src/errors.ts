// Typed errors: one class per status the API answers, and the spend policy's refusals.

export class AgentRuntimeError extends Error {
  override name = 'AgentRuntimeError';
}

/** The API answered with an error status: `status`, its `detail` and the response's headers. */
export class ApiError extends AgentRuntimeError {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly headers: Headers = new Headers(),
  ) {
    super(`${status}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
  }
}

export class BadRequestError extends ApiError {}
export class AuthenticationError extends ApiError {}
/** 403: the key lacks the route's scope (`scope`), or a rule refused (see PolicyError). */
export class PermissionDeniedError extends ApiError {
  get scope(): string | undefined {
    return /lacks the scope (\S+)/.exec(String(this.detail))?.[1];
  }
}
/** 403 by a spend rule: `rule`, and for a window `remaining` and `limit`, in atomic units. */
export class PolicyError extends PermissionDeniedError {
  readonly rule?: string;
  readonly limit?: bigint;
  readonly remaining?: bigint;
  constructor(status: number, detail: unknown, headers?: Headers) {
    super(status, detail, headers);
    ({ rule: this.rule, limit: this.limit, remaining: this.remaining } = policyRule(String(detail)));
  }
}
export class NotFoundError extends ApiError {}
export class RequestTimeoutError extends ApiError {}
export class ConflictError extends ApiError {}
/** 422: `detail` is the list of `{loc, msg, type}` items naming each field. */
export class ValidationError extends ApiError {}
export class RateLimitError extends ApiError {
  get retryAfter(): number | undefined {
    return retryAfterSeconds(this.headers.get('retry-after'));
  }
}
export class BadGatewayError extends ApiError {}
export class ServiceUnavailableError extends ApiError {}

/** A wait loop reached the caller's deadline. */
export class WaitTimeout extends AgentRuntimeError {
  override name = 'WaitTimeout';
}
export class WebhookVerificationError extends AgentRuntimeError {
  override name = 'WebhookVerificationError';
}
/** An x402 payment the operators rejected, or that expired before an approval. */
export class PaymentNotApproved extends AgentRuntimeError {
  override name = 'PaymentNotApproved';
  constructor(readonly intent: { status?: string }) {
    super(`the payment's intent ended ${intent.status}`);
  }
}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  408: RequestTimeoutError,
  409: ConflictError,
  422: ValidationError,
  429: RateLimitError,
  502: BadGatewayError,
  503: ServiceUnavailableError,
};

// The policy's refusals as the server words them: the x402 routes name the rule ("(rule X)",
// "Refused by rule X"); a send's 403 does not, hence the phrases. Then the limit, and what is
// still available when the detail says so.
const NAMED_RULE = /\(rule (\w+)\)|Refused by rule (\w+)/;
const PHRASES: Array<[RegExp, string]> = [
  [/per-transaction maximum of (\d+) for this recipient/, 'recipient_max_per_tx'],
  [/per-transaction maximum of (\d+)/, 'max_per_tx'],
  [/daily maximum of (\d+) for this recipient/, 'recipient_max_daily'],
  [/auto_confirm_daily maximum of (\d+)/, 'auto_confirm_daily'],
  [/(?:^|\W)daily maximum of (\d+)/, 'max_daily'],
  [/weekly maximum of (\d+)/, 'max_weekly'],
  [/monthly maximum of (\d+)/, 'max_monthly'],
  [/not on the wallet's allowlist/, 'allowlist'],
  [/x402 payments are turned off/, 'x402_disabled'],
  [/above max_amount_atomic (\d+)/, 'max_amount'],
];

export function policyRule(detail: string): { rule?: string; limit?: bigint; remaining?: bigint } {
  const named = NAMED_RULE.exec(detail);
  let rule = named ? (named[1] ?? named[2]) : undefined;
  let limit: bigint | undefined;
  for (const [pattern, name] of PHRASES) {
    const found = pattern.exec(detail);
    if (found) {
      rule ??= name;
      limit = found[1] !== undefined ? BigInt(found[1]) : undefined;
      break;
    }
  }
  const available = /(\d+) is still available/.exec(detail);
  return { rule, limit, remaining: available ? BigInt(available[1]!) : undefined };
}

/** A `Retry-After` of seconds; undefined when absent or not a number. */
export function retryAfterSeconds(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? Math.max(0, seconds) : undefined;
}

/** The typed error of an error response, from its parsed body. */
export function errorFor(status: number, body: unknown, headers: Headers = new Headers()): ApiError {
  const detail =
    body !== null && typeof body === 'object' && 'detail' in body ? (body as { detail: unknown }).detail : body;
  let kind = BY_STATUS[status] ?? ApiError;
  if (status === 403 && typeof detail === 'string' && !detail.includes('lacks the scope')) {
    if (policyRule(detail).rule !== undefined || /policy/i.test(detail)) kind = PolicyError;
  }
  return new kind(status, detail, headers);
}
