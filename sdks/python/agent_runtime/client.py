"""The client: a key and a base URL over the generated route functions, with idempotency keys,
bounded retries, typed errors, pages, the two wait loops and the resuming event stream."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import time
import uuid
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any, Callable

import httpx

from . import _sse
from ._generated.api.events import stream_events
from ._generated.api.sms import wait_for_code_any_channel
from ._generated.api.wallet import get_wallet_intent
from ._generated.client import AuthenticatedClient
from ._generated.models import (
    Channel,
    CodeOut,
    CodesWaitRequest,
    EmailFailedData,
    EmailReceivedData,
    EmailSentData,
    EventOut,
    SmsReceivedData,
    TransferIntentOut,
)
from ._generated.types import UNSET, Unset
from ._retry import RetryPolicy, RetryTransport
from .errors import AgentRuntimeError, RequestTimeoutError, WaitTimeout, error_for

DEFAULT_URL = "http://127.0.0.1:8080"
# The longest a wait route holds a request (its `timeout` is at most 300 s), and the slack a
# waiting request's read timeout has beyond it.
MAX_WAIT_SECONDS = 300
WAIT_SLACK_SECONDS = 30
# An event stream sends a comment at least every 15 s: silence this long means a dead connection.
STREAM_IDLE_SECONDS = 45.0
# The statuses after which an intent's status no longer changes.
FINAL_STATUSES = frozenset({"executed", "failed", "rejected", "expired"})


def new_key() -> str:
    return str(uuid.uuid4())


def settings(key: str | None, base_url: str | None) -> tuple[str, str]:
    """The key and URL given, else from AGENT_RUNTIME_KEY and AGENT_RUNTIME_URL."""
    key = key or os.environ.get("AGENT_RUNTIME_KEY")
    if not key:
        raise AgentRuntimeError("no agent key: pass key= or set AGENT_RUNTIME_KEY")
    url = base_url or os.environ.get("AGENT_RUNTIME_URL") or DEFAULT_URL
    return key, url.rstrip("/")


def unset(value: Any) -> bool:
    return value is None or isinstance(value, Unset)


def with_idempotency(operation: ModuleType, kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` with an idempotency key where the route takes one and the caller gave none: the
    `Idempotency-Key` header parameter, or the body's `idempotency_key` field."""
    kwargs = dict(kwargs)
    if "idempotency_key" in inspect.signature(operation.sync_detailed).parameters:
        if unset(kwargs.get("idempotency_key")):
            kwargs["idempotency_key"] = new_key()
    body = kwargs.get("body")
    if dataclasses.is_dataclass(body) and hasattr(body, "idempotency_key"):
        if unset(body.idempotency_key):
            kwargs["body"] = dataclasses.replace(body, idempotency_key=new_key())
    return kwargs


def api_clients(
    base_url: str, key: str, timeout: float, transport: Any
) -> tuple[AuthenticatedClient, AuthenticatedClient, AuthenticatedClient]:
    """Three clients over one transport (one pool of connections), by how long a read may take:
    a call's, a wait's and an event stream's."""

    def api(read: float) -> AuthenticatedClient:
        return AuthenticatedClient(
            base_url=base_url,
            token=key,
            timeout=httpx.Timeout(timeout, read=read),
            httpx_args={"transport": transport},
        )

    return api(timeout), api(MAX_WAIT_SECONDS + WAIT_SLACK_SECONDS), api(STREAM_IDLE_SECONDS)


def page_items(page: Any, kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any] | None]:
    """A page's items and the arguments of the next page (None after the last): cursor pages
    (`next_cursor`), the event feed (`next_after`) and offset lists (the SMS history)."""
    if isinstance(page, list):
        limit = kwargs.get("limit")
        limit = 20 if unset(limit) else limit
        if len(page) < limit or not page:
            return page, None
        offset = kwargs.get("offset")
        return page, {**kwargs, "offset": (0 if unset(offset) else offset) + len(page)}
    items = list(page.items)
    for field, argument in (("next_cursor", "cursor"), ("next_after", "after")):
        if hasattr(page, field):
            following = getattr(page, field)
            return items, None if unset(following) else {**kwargs, argument: following}
    return items, None


def code_wait_body(
    channels: Iterable[str] | None, service_name: str | None, remaining: float
) -> CodesWaitRequest:
    """One call of a code wait: as long as the server allows or the deadline leaves, under a
    `request_id` of its own that the client's retries of this call repeat."""
    return CodesWaitRequest(
        channels=[Channel(channel) for channel in channels] if channels is not None else UNSET,
        service_name=service_name if service_name is not None else UNSET,
        timeout=max(0, min(MAX_WAIT_SECONDS, int(remaining))),
        request_id=new_key(),
    )


# An event's `data` by its `type`. The document's `EventData` is a oneOf without a discriminator,
# which the generated parser resolves by trying each shape in turn: an `sms.received` event's data
# fits `EmailSentData` first. The envelope's `type` says which it is.
DATA_BY_TYPE = {
    "email.received": EmailReceivedData,
    "email.sent": EmailSentData,
    "email.failed": EmailFailedData,
    "sms.received": SmsReceivedData,
}


def event_of(raw: dict[str, Any]) -> EventOut:
    """An event as the feed, the stream and webhooks carry it, its `data` parsed by its type."""
    event = EventOut.from_dict(raw)
    shape = DATA_BY_TYPE.get(raw["type"], TransferIntentOut)
    return dataclasses.replace(event, data=shape.from_dict(raw["data"]))


def decided(intent: TransferIntentOut, until: Iterable[str] | None) -> bool:
    status = str(intent.status)
    if until is None:
        return status != "pending_confirmation"
    return status in set(until) or status in FINAL_STATUSES


def stream_request(types: Iterable[str] | None, after: int | None) -> dict[str, Any]:
    """The generated route's request of the event stream, resuming after `after`: the
    `Last-Event-ID` a reconnecting reader sends."""
    request = stream_events._get_kwargs(types=",".join(types) if types else UNSET)
    if after is not None:
        request["headers"]["Last-Event-ID"] = str(after)
    request["headers"]["Accept"] = "text/event-stream"
    return request


class EventReader:
    """What the stream said, kept across reconnections: the last `seq` read and the server's
    reconnection delay. Events at or before the last `seq` are dropped, so none is read twice."""

    def __init__(self, after: int | None, reconnect_delay: float | None):
        self.last = after
        self.fixed_delay = reconnect_delay
        self.delay = 3.0 if reconnect_delay is None else reconnect_delay

    def read(self, message: _sse.Message, on_reset: Callable[[], None] | None) -> EventOut | None:
        if message.retry is not None and self.fixed_delay is None:
            self.delay = message.retry / 1000
        if message.event == "reset":
            if on_reset is not None:
                on_reset()
            return None
        if message.data is None:
            return None
        event = event_of(json.loads(message.data))
        if self.last is not None and event.seq <= self.last:
            return None
        self.last = event.seq
        return event


class AgentRuntime:
    """The API as one agent: `call` runs any generated route function and returns its parsed
    answer or raises the typed error; the rest are the loops an agent writes around them."""

    def __init__(
        self,
        key: str | None = None,
        base_url: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ):
        key, self.base_url = settings(key, base_url)
        self.retry = retry or RetryPolicy()
        shared = RetryTransport(transport or httpx.HTTPTransport(), self.retry)

        self.api, self._waiting, self._streaming = api_clients(self.base_url, key, timeout, shared)

    def call(self, operation: ModuleType, **kwargs: Any) -> Any:
        """`operation.sync_detailed(**kwargs)` with an idempotency key where the route takes one:
        its parsed answer on success, else the typed error."""
        kwargs = with_idempotency(operation, kwargs)
        body = kwargs.get("body")
        waits = body is not None and isinstance(getattr(body, "timeout", None), int)
        response = operation.sync_detailed(client=self._waiting if waits else self.api, **kwargs)
        if response.status_code >= 400:
            raise error_for(response.status_code, response.content, response.headers)
        return response.parsed

    def paginate(self, operation: ModuleType, **kwargs: Any) -> Iterator[Any]:
        """Every item of a listing, page after page."""
        following: dict[str, Any] | None = kwargs
        while following is not None:
            items, following = page_items(self.call(operation, **following), following)
            yield from items

    def wait_for_code(
        self,
        *,
        channels: Iterable[str] | None = None,
        service_name: str | None = None,
        timeout: float = 300.0,
    ) -> CodeOut:
        """The newest unseen verification code by SMS or mail, calling again until one comes or
        `timeout` seconds pass (WaitTimeout)."""
        deadline = time.monotonic() + timeout
        while True:
            body = code_wait_body(channels, service_name, deadline - time.monotonic())
            try:
                return self.call(wait_for_code_any_channel, body=body)
            except RequestTimeoutError:
                if time.monotonic() >= deadline - 0.5:
                    raise WaitTimeout(f"no code within {timeout} s") from None

    def wait_for_transfer_decision(
        self,
        intent_id: str,
        *,
        timeout: float = 3600.0,
        interval: float = 1.0,
        until: Iterable[str] | None = None,
    ) -> TransferIntentOut:
        """The intent once the operators decided (it left `pending_confirmation`), or once its
        status is in `until` or final; WaitTimeout after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            intent = self.call(get_wallet_intent, intent_id=intent_id)
            if decided(intent, until):
                return intent
            if time.monotonic() + interval > deadline:
                raise WaitTimeout(f"intent {intent_id} still {intent.status} after {timeout} s")
            time.sleep(interval)

    def events(
        self,
        *,
        types: Iterable[str] | None = None,
        after: int | None = None,
        reconnect_delay: float | None = None,
        on_reset: Callable[[], None] | None = None,
    ) -> Iterator[EventOut]:
        """The agent's events from the live stream, forever: after a disconnect it reconnects
        with `Last-Event-ID` and the server replays what was missed, so none is lost or repeated.
        `on_reset` is called when the asked position is older than what the server keeps."""
        reader = EventReader(after, reconnect_delay)
        client = self._streaming.get_httpx_client()
        while True:
            request = stream_request(types, reader.last)
            try:
                with client.stream(request.pop("method"), **request) as response:
                    if response.status_code != 200:
                        response.read()
                        raise error_for(response.status_code, response.content, response.headers)
                    for message in _sse.messages(response.iter_lines()):
                        event = reader.read(message, on_reset)
                        if event is not None:
                            yield event
            except (httpx.TransportError, httpx.StreamError):
                pass  # the connection broke: reconnect below
            time.sleep(reader.delay)

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def __enter__(self) -> AgentRuntime:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
