from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.server_sent_event import ServerSentEvent
from ...models.validation_error_body import ValidationErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    after: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
    last_event_id: Union[None, Unset, int] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    params: dict[str, Any] = {}

    params["after"] = after

    params["types"] = types

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events/stream",
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ServerSentEvent, ValidationErrorBody]]:
    if response.status_code == 200:
        response_200 = ServerSentEvent.from_dict(response.text)

        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 422:
        response_422 = ValidationErrorBody.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[Union[ErrorBody, ServerSentEvent, ValidationErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    after: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
    last_event_id: Union[None, Unset, int] = UNSET,
) -> Response[Union[ErrorBody, ServerSentEvent, ValidationErrorBody]]:
    """The agent's events as they commit (Server-Sent Events).

     `retry: 3000` first; then what the agent missed after `Last-Event-ID` (or `after`), then each
    event as it commits on any instance: `id: <seq>`, `event: <type>`, `data: <the event>`. A
    comment line comes at least every 15 s. When the position asked for is older than what is
    kept, the first message is `event: reset` and the stream goes on from the oldest kept event.
    A reader too slow to keep up is disconnected; it resumes with `Last-Event-ID`. At most
    `EVENT_STREAMS_PER_AGENT` (8) streams per agent at once; beyond, 429. A stream ends after an
    hour (`EVENT_STREAM_MAX_SECS`); its client reconnects with `Last-Event-ID`.

    Needs a key with the scope `events:read`.

    Args:
        after (Union[Unset, int]):
        types (Union[Unset, str]):
        last_event_id (Union[None, Unset, int]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ServerSentEvent, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        after=after,
        types=types,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    after: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
    last_event_id: Union[None, Unset, int] = UNSET,
) -> Optional[Union[ErrorBody, ServerSentEvent, ValidationErrorBody]]:
    """The agent's events as they commit (Server-Sent Events).

     `retry: 3000` first; then what the agent missed after `Last-Event-ID` (or `after`), then each
    event as it commits on any instance: `id: <seq>`, `event: <type>`, `data: <the event>`. A
    comment line comes at least every 15 s. When the position asked for is older than what is
    kept, the first message is `event: reset` and the stream goes on from the oldest kept event.
    A reader too slow to keep up is disconnected; it resumes with `Last-Event-ID`. At most
    `EVENT_STREAMS_PER_AGENT` (8) streams per agent at once; beyond, 429. A stream ends after an
    hour (`EVENT_STREAM_MAX_SECS`); its client reconnects with `Last-Event-ID`.

    Needs a key with the scope `events:read`.

    Args:
        after (Union[Unset, int]):
        types (Union[Unset, str]):
        last_event_id (Union[None, Unset, int]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ServerSentEvent, ValidationErrorBody]
    """

    return sync_detailed(
        client=client,
        after=after,
        types=types,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    after: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
    last_event_id: Union[None, Unset, int] = UNSET,
) -> Response[Union[ErrorBody, ServerSentEvent, ValidationErrorBody]]:
    """The agent's events as they commit (Server-Sent Events).

     `retry: 3000` first; then what the agent missed after `Last-Event-ID` (or `after`), then each
    event as it commits on any instance: `id: <seq>`, `event: <type>`, `data: <the event>`. A
    comment line comes at least every 15 s. When the position asked for is older than what is
    kept, the first message is `event: reset` and the stream goes on from the oldest kept event.
    A reader too slow to keep up is disconnected; it resumes with `Last-Event-ID`. At most
    `EVENT_STREAMS_PER_AGENT` (8) streams per agent at once; beyond, 429. A stream ends after an
    hour (`EVENT_STREAM_MAX_SECS`); its client reconnects with `Last-Event-ID`.

    Needs a key with the scope `events:read`.

    Args:
        after (Union[Unset, int]):
        types (Union[Unset, str]):
        last_event_id (Union[None, Unset, int]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ServerSentEvent, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        after=after,
        types=types,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    after: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
    last_event_id: Union[None, Unset, int] = UNSET,
) -> Optional[Union[ErrorBody, ServerSentEvent, ValidationErrorBody]]:
    """The agent's events as they commit (Server-Sent Events).

     `retry: 3000` first; then what the agent missed after `Last-Event-ID` (or `after`), then each
    event as it commits on any instance: `id: <seq>`, `event: <type>`, `data: <the event>`. A
    comment line comes at least every 15 s. When the position asked for is older than what is
    kept, the first message is `event: reset` and the stream goes on from the oldest kept event.
    A reader too slow to keep up is disconnected; it resumes with `Last-Event-ID`. At most
    `EVENT_STREAMS_PER_AGENT` (8) streams per agent at once; beyond, 429. A stream ends after an
    hour (`EVENT_STREAM_MAX_SECS`); its client reconnects with `Last-Event-ID`.

    Needs a key with the scope `events:read`.

    Args:
        after (Union[Unset, int]):
        types (Union[Unset, str]):
        last_event_id (Union[None, Unset, int]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ServerSentEvent, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            client=client,
            after=after,
            types=types,
            last_event_id=last_event_id,
        )
    ).parsed
