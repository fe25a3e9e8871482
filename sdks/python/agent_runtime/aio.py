"""AsyncAgentRuntime: AgentRuntime for asyncio, the same methods awaited."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable
from types import ModuleType
from typing import Any, Callable

import anyio
import httpx

from . import _sse
from ._generated.api.sms import wait_for_code_any_channel
from ._generated.api.wallet import get_wallet_intent
from ._generated.models import CodeOut, EventOut, TransferIntentOut
from ._retry import AsyncRetryTransport, RetryPolicy
from .client import (
    EventReader,
    api_clients,
    code_wait_body,
    decided,
    page_items,
    settings,
    stream_request,
    with_idempotency,
)
from .errors import RequestTimeoutError, WaitTimeout, error_for


class AsyncAgentRuntime:
    def __init__(
        self,
        key: str | None = None,
        base_url: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        key, self.base_url = settings(key, base_url)
        self.retry = retry or RetryPolicy()
        shared = AsyncRetryTransport(transport or httpx.AsyncHTTPTransport(), self.retry)

        self.api, self._waiting, self._streaming = api_clients(self.base_url, key, timeout, shared)

    async def call(self, operation: ModuleType, **kwargs: Any) -> Any:
        kwargs = with_idempotency(operation, kwargs)
        body = kwargs.get("body")
        waits = body is not None and isinstance(getattr(body, "timeout", None), int)
        response = await operation.asyncio_detailed(
            client=self._waiting if waits else self.api, **kwargs
        )
        if response.status_code >= 400:
            raise error_for(response.status_code, response.content, response.headers)
        return response.parsed

    async def paginate(self, operation: ModuleType, **kwargs: Any) -> AsyncIterator[Any]:
        following: dict[str, Any] | None = kwargs
        while following is not None:
            items, following = page_items(await self.call(operation, **following), following)
            for item in items:
                yield item

    async def wait_for_code(
        self,
        *,
        channels: Iterable[str] | None = None,
        service_name: str | None = None,
        timeout: float = 300.0,
    ) -> CodeOut:
        deadline = time.monotonic() + timeout
        while True:
            body = code_wait_body(channels, service_name, deadline - time.monotonic())
            try:
                return await self.call(wait_for_code_any_channel, body=body)
            except RequestTimeoutError:
                if time.monotonic() >= deadline - 0.5:
                    raise WaitTimeout(f"no code within {timeout} s") from None

    async def wait_for_transfer_decision(
        self,
        intent_id: str,
        *,
        timeout: float = 3600.0,
        interval: float = 1.0,
        until: Iterable[str] | None = None,
    ) -> TransferIntentOut:
        deadline = time.monotonic() + timeout
        while True:
            intent = await self.call(get_wallet_intent, intent_id=intent_id)
            if decided(intent, until):
                return intent
            if time.monotonic() + interval > deadline:
                raise WaitTimeout(f"intent {intent_id} still {intent.status} after {timeout} s")
            await anyio.sleep(interval)

    async def events(
        self,
        *,
        types: Iterable[str] | None = None,
        after: int | None = None,
        reconnect_delay: float | None = None,
        on_reset: Callable[[], None] | None = None,
    ) -> AsyncIterator[EventOut]:
        reader = EventReader(after, reconnect_delay)
        client = self._streaming.get_async_httpx_client()
        while True:
            request = stream_request(types, reader.last)
            try:
                async with client.stream(request.pop("method"), **request) as response:
                    if response.status_code != 200:
                        await response.aread()
                        raise error_for(response.status_code, response.content, response.headers)
                    parser = _sse.SseParser()
                    async for line in response.aiter_lines():
                        message = parser.feed(line.rstrip("\r\n"))
                        event = reader.read(message, on_reset) if message else None
                        if event is not None:
                            yield event
            except (httpx.TransportError, httpx.StreamError):
                pass
            await anyio.sleep(reader.delay)

    async def aclose(self) -> None:
        await self.api.get_async_httpx_client().aclose()

    async def __aenter__(self) -> AsyncAgentRuntime:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
