"""Paying for HTTP resources that answer 402 (x402): an HTTP client wrapper that, on a 402, has
the service authorize the payment from the agent's wallet (waiting for the operators when the
policy asks them) and repeats the request with the payment header the service names."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import httpx

from ._generated.api.wallet import authorize_x402_payment
from ._generated.models import (
    X402AuthorizedOut,
    X402AuthorizeRequest,
    X402AuthorizeRequestPaymentRequired,
    X402PendingOut,
)
from ._generated.types import UNSET
from .client import new_key
from .errors import AgentRuntimeError, PaymentNotApproved

if TYPE_CHECKING:
    from .aio import AsyncAgentRuntime
    from .client import AgentRuntime

# After an approval the intent is `confirmed`; `authorized` once a signature was handed out.
APPROVED = ("confirmed", "authorized")


@dataclass
class Paid:
    """The resource's answer; `authorization` and the decoded `settlement` (its
    `PAYMENT-RESPONSE`) when it was paid, None when it was free."""

    response: httpx.Response
    authorization: X402AuthorizedOut | None = None
    settlement: dict[str, Any] | None = None


def decode_header(value: str) -> Any:
    return json.loads(base64.b64decode(value))


def challenge_of(response: httpx.Response) -> dict[str, Any]:
    """A 402's challenge: version 2's `PAYMENT-REQUIRED` header, else version 1's JSON body."""
    header = response.headers.get("payment-required")
    try:
        challenge = decode_header(header) if header else response.json()
    except ValueError as invalid:
        raise AgentRuntimeError("a 402 without an x402 challenge") from invalid
    if not isinstance(challenge, dict):
        raise AgentRuntimeError("a 402 without an x402 challenge")
    return challenge


def authorize_body(
    challenge: dict[str, Any], url: str, key: str, ceiling: int | str
) -> X402AuthorizeRequest:
    accepts = challenge.get("accepts") or []
    # The challenge names its resource (version 2 on the whole, version 1 per entry); else the URL.
    named = "resource" in challenge or any(
        isinstance(entry, dict) and "resource" in entry for entry in accepts
    )
    return X402AuthorizeRequest(
        payment_required=X402AuthorizeRequestPaymentRequired.from_dict(challenge),
        idempotency_key=key,
        max_amount_atomic=str(ceiling),
        resource_url=UNSET if named else url,
    )


def with_payment(kwargs: dict[str, Any], authorization: X402AuthorizedOut) -> dict[str, Any]:
    headers = dict(kwargs.get("headers") or {})
    headers[authorization.header] = authorization.payment_signature
    return {**kwargs, "headers": headers}


def paid(response: httpx.Response, authorization: X402AuthorizedOut) -> Paid:
    header = response.headers.get("payment-response") or response.headers.get("x-payment-response")
    try:
        settlement = decode_header(header) if header else None
    except ValueError:
        settlement = None
    return Paid(response, authorization, settlement)


class X402Client:
    """`request` (and `get`, `post`) as httpx's, paying a 402 up to `max_amount_atomic`.
    `on_pending(pending)` is called when the payment waits for the operators (its
    `approval_url`); the wait lasts at most `approval_timeout` seconds."""

    def __init__(
        self,
        runtime: AgentRuntime,
        *,
        max_amount_atomic: int | str,
        http: httpx.Client | None = None,
        approval_timeout: float = 3600.0,
        on_pending: Callable[[X402PendingOut], None] | None = None,
    ):
        self.runtime, self.ceiling = runtime, max_amount_atomic
        self.http = http or httpx.Client(timeout=30.0)
        self.approval_timeout, self.on_pending = approval_timeout, on_pending

    def request(
        self, method: str, url: str, *, idempotency_key: str | None = None, **kwargs: Any
    ) -> Paid:
        first = self.http.request(method, url, **kwargs)
        if first.status_code != 402:
            return Paid(first)
        # One key for the purchase: the call after an approval answers the same intent.
        body = authorize_body(challenge_of(first), url, idempotency_key or new_key(), self.ceiling)
        answer = self.runtime.call(authorize_x402_payment, body=body)
        if isinstance(answer, X402PendingOut):
            if self.on_pending is not None:
                self.on_pending(answer)
            intent = self.runtime.wait_for_transfer_decision(
                str(answer.intent.id), timeout=self.approval_timeout
            )
            if str(intent.status) not in APPROVED:
                raise PaymentNotApproved(intent)
            answer = self.runtime.call(authorize_x402_payment, body=body)
            if isinstance(answer, X402PendingOut):
                raise PaymentNotApproved(answer.intent)
        return paid(self.http.request(method, url, **with_payment(kwargs, answer)), answer)

    def get(self, url: str, **kwargs: Any) -> Paid:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> Paid:
        return self.request("POST", url, **kwargs)


class AsyncX402Client:
    """X402Client over httpx.AsyncClient and AsyncAgentRuntime."""

    def __init__(
        self,
        runtime: AsyncAgentRuntime,
        *,
        max_amount_atomic: int | str,
        http: httpx.AsyncClient | None = None,
        approval_timeout: float = 3600.0,
        on_pending: Callable[[X402PendingOut], Any] | None = None,
    ):
        self.runtime, self.ceiling = runtime, max_amount_atomic
        self.http = http or httpx.AsyncClient(timeout=30.0)
        self.approval_timeout, self.on_pending = approval_timeout, on_pending

    async def request(
        self, method: str, url: str, *, idempotency_key: str | None = None, **kwargs: Any
    ) -> Paid:
        first = await self.http.request(method, url, **kwargs)
        if first.status_code != 402:
            return Paid(first)
        body = authorize_body(challenge_of(first), url, idempotency_key or new_key(), self.ceiling)
        answer = await self.runtime.call(authorize_x402_payment, body=body)
        if isinstance(answer, X402PendingOut):
            if self.on_pending is not None:
                pending = self.on_pending(answer)
                if hasattr(pending, "__await__"):
                    await pending
            intent = await self.runtime.wait_for_transfer_decision(
                str(answer.intent.id), timeout=self.approval_timeout
            )
            if str(intent.status) not in APPROVED:
                raise PaymentNotApproved(intent)
            answer = await self.runtime.call(authorize_x402_payment, body=body)
            if isinstance(answer, X402PendingOut):
                raise PaymentNotApproved(answer.intent)
        return paid(await self.http.request(method, url, **with_payment(kwargs, answer)), answer)

    async def get(self, url: str, **kwargs: Any) -> Paid:
        return await self.request("GET", url, **kwargs)
