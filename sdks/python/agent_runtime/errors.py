"""Typed errors: one class per status the API answers, and the spend policy's refusals."""

from __future__ import annotations

import json
import re
from typing import Any


class AgentRuntimeError(Exception):
    """Every error of this library."""


class ApiError(AgentRuntimeError):
    """The API answered with an error status: `status`, its `detail` and the response's headers."""

    def __init__(self, status: int, detail: Any, headers: dict[str, str] | None = None):
        self.status = status
        self.detail = detail
        self.headers = headers or {}
        super().__init__(f"{status}: {detail}")


class BadRequestError(ApiError):
    """400: a business rule, e.g. no wallet provisioned or an invalid cursor."""


class AuthenticationError(ApiError):
    """401: the key is invalid, revoked or expired."""


class PermissionDeniedError(ApiError):
    """403: the key lacks the route's scope (`scope`), or a rule refused (see PolicyError)."""

    @property
    def scope(self) -> str | None:
        found = re.search(r"lacks the scope (\S+)", str(self.detail))
        return found.group(1) if found else None


class PolicyError(PermissionDeniedError):
    """403 by a spend rule: `rule` (max_per_tx, max_daily, allowlist, max_amount, ...), and for a
    window `remaining`, what it still allows, and `limit`, all in atomic units."""

    def __init__(self, status: int, detail: Any, headers: dict[str, str] | None = None):
        super().__init__(status, detail, headers)
        self.rule, self.limit, self.remaining = policy_rule(str(detail))


class NotFoundError(ApiError):
    """404: no such resource for this agent."""


class RequestTimeoutError(ApiError):
    """408: a wait ended with nothing found."""


class ConflictError(ApiError):
    """409: an idempotency key reused with other parameters, or one still in progress."""


class ValidationError(ApiError):
    """422: `detail` is the list of `{loc, msg, type}` items naming each field."""


class RateLimitError(ApiError):
    """429 after the client's own retries; `retry_after` in seconds when the server said."""

    @property
    def retry_after(self) -> float | None:
        return retry_after_seconds(self.headers.get("retry-after"))


class BadGatewayError(ApiError):
    """502: an x402 resource failed after it was paid; the detail names the intent."""


class ServiceUnavailableError(ApiError):
    """503 after the client's own retries."""


class WaitTimeout(AgentRuntimeError, TimeoutError):
    """A wait loop reached the caller's deadline."""


class WebhookVerificationError(AgentRuntimeError):
    """A webhook's signature, timestamp or headers do not verify."""


class PaymentNotApproved(AgentRuntimeError):
    """An x402 payment the operators rejected, or that expired before an approval."""

    def __init__(self, intent: Any):
        self.intent = intent
        super().__init__(f"the payment's intent ended {getattr(intent, 'status', intent)}")


_BY_STATUS = {
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
}

# The policy's refusals as the server words them (crates/domain/src/policy/evaluation.rs and the
# x402 routes' "(rule X)" / "Refused by rule X"): the rule, then the limit and what is still
# available when the detail says so. A send's 403 does not name its rule, hence the phrases.
_NAMED_RULE = re.compile(r"\(rule (\w+)\)|Refused by rule (\w+)")
_PHRASES = [
    (re.compile(r"per-transaction maximum of (\d+) for this recipient"), "recipient_max_per_tx"),
    (re.compile(r"per-transaction maximum of (\d+)"), "max_per_tx"),
    (re.compile(r"daily maximum of (\d+) for this recipient"), "recipient_max_daily"),
    (re.compile(r"auto_confirm_daily maximum of (\d+)"), "auto_confirm_daily"),
    (re.compile(r"(?:^|\W)daily maximum of (\d+)"), "max_daily"),
    (re.compile(r"weekly maximum of (\d+)"), "max_weekly"),
    (re.compile(r"monthly maximum of (\d+)"), "max_monthly"),
    (re.compile(r"not on the wallet's allowlist"), "allowlist"),
    (re.compile(r"x402 payments are turned off"), "x402_disabled"),
    (re.compile(r"above max_amount_atomic (\d+)"), "max_amount"),
]
_AVAILABLE = re.compile(r"(\d+) is still available")


def policy_rule(detail: str) -> tuple[str | None, int | None, int | None]:
    """(rule, limit, remaining) of a policy refusal's detail; None for what it does not say."""
    named = _NAMED_RULE.search(detail)
    rule = next((group for group in named.groups() if group), None) if named else None
    limit = None
    for pattern, name in _PHRASES:
        found = pattern.search(detail)
        if found:
            rule = rule or name
            limit = int(found.group(1)) if found.groups() else None
            break
    available = _AVAILABLE.search(detail)
    return rule, limit, int(available.group(1)) if available else None


def retry_after_seconds(value: str | None) -> float | None:
    """A `Retry-After` of seconds; None when absent or not a number (HTTP dates are not sent)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def error_for(status: int, content: bytes, headers: Any) -> ApiError:
    """The typed error of an error response."""
    try:
        detail: Any = json.loads(content).get("detail")
    except (ValueError, AttributeError):
        detail = content.decode("utf-8", "replace")
    plain = {name.lower(): value for name, value in dict(headers).items()}
    cls = _BY_STATUS.get(status, ApiError)
    if status == 403 and isinstance(detail, str) and "lacks the scope" not in detail:
        if policy_rule(detail)[0] is not None or "policy" in detail.lower():
            cls = PolicyError
    return cls(status, detail, plain)
