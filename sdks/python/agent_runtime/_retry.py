"""Bounded retries under every request, as an httpx transport: a retry sends the very request
again, so an idempotency key it carries (header or body) is the one the first attempt carried."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from typing import Callable

import anyio
import httpx

from .errors import retry_after_seconds

# Answers that mean "not done, try later". A 429 is refused before anything is done; a 503 may
# come after a write began, so only a request that is safe to repeat retries on it.
RETRY_STATUSES = (429, 503)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


@dataclass
class RetryPolicy:
    """At most `max_retries` retries within `max_seconds` of the first attempt; waits double
    from `base_delay` up to `max_delay`, with jitter, unless `Retry-After` asks for more."""

    max_retries: int = 3
    max_seconds: float = 60.0
    base_delay: float = 0.5
    max_delay: float = 8.0

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """The wait before retry number `attempt` (1 for the first retry)."""
        doubled = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        jittered = doubled * random.uniform(0.5, 1.0)
        return max(jittered, retry_after) if retry_after is not None else jittered


def repeatable(request: httpx.Request) -> bool:
    """Whether sending `request` twice does what sending it once does: a read, or a write under
    an idempotency key (the header, or `idempotency_key` / a wait's `request_id` in its body)."""
    if request.method in SAFE_METHODS or "idempotency-key" in request.headers:
        return True
    try:
        body = json.loads(request.content or b"null")
    except ValueError:
        return False
    return isinstance(body, dict) and bool(body.get("idempotency_key") or body.get("request_id"))


def retry_reason(
    request: httpx.Request,
    response: httpx.Response | None,
    error: Exception | None,
) -> float | None:
    """None when the outcome stands; else the server's `Retry-After` (or 0.0 when it gave none)."""
    if response is not None:
        if response.status_code == 429 or (response.status_code == 503 and repeatable(request)):
            return retry_after_seconds(response.headers.get("retry-after")) or 0.0
        return None
    # A connection never made sent nothing; any other failure may have reached the server.
    if isinstance(error, httpx.ConnectError) or (
        isinstance(error, httpx.TransportError) and repeatable(request)
    ):
        return 0.0
    return None


class _Attempts:
    """The retry budget of one request."""

    def __init__(self, policy: RetryPolicy, clock: Callable[[], float]):
        self.policy, self.clock = policy, clock
        self.started, self.count = clock(), 0

    def next_wait(self, retry_after: float) -> float | None:
        """The wait before the next attempt, or None when the budget is spent."""
        self.count += 1
        wait = self.policy.backoff(self.count, retry_after or None)
        spent = self.clock() - self.started
        if self.count > self.policy.max_retries or spent + wait > self.policy.max_seconds:
            return None
        return wait


class RetryTransport(httpx.BaseTransport):
    def __init__(
        self,
        inner: httpx.BaseTransport,
        policy: RetryPolicy,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.inner, self.policy, self.sleep, self.clock = inner, policy, sleep, clock

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        attempts = _Attempts(self.policy, self.clock)
        while True:
            response, error = None, None
            try:
                response = self.inner.handle_request(request)
            except httpx.TransportError as failed:
                error = failed
            reason = retry_reason(request, response, error)
            wait = attempts.next_wait(reason) if reason is not None else None
            if wait is None:
                if error is not None:
                    raise error
                assert response is not None
                return response
            if response is not None:
                response.close()
            self.sleep(wait)

    def close(self) -> None:
        self.inner.close()


class AsyncRetryTransport(httpx.AsyncBaseTransport):
    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        policy: RetryPolicy,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.inner, self.policy, self.clock = inner, policy, clock

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        attempts = _Attempts(self.policy, self.clock)
        while True:
            response, error = None, None
            try:
                response = await self.inner.handle_async_request(request)
            except httpx.TransportError as failed:
                error = failed
            reason = retry_reason(request, response, error)
            wait = attempts.next_wait(reason) if reason is not None else None
            if wait is None:
                if error is not None:
                    raise error
                assert response is not None
                return response
            if response is not None:
                await response.aclose()
            await anyio.sleep(wait)

    async def aclose(self) -> None:
        await self.inner.aclose()
