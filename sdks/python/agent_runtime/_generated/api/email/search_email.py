from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.direction import Direction
from ...models.email_inbox_page import EmailInboxPage
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    q: str,
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["q"] = q

    params["limit"] = limit

    params["cursor"] = cursor

    json_direction: Union[Unset, str] = UNSET
    if not isinstance(direction, Unset):
        json_direction = direction.value

    params["direction"] = json_direction

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/email/search",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[EmailInboxPage, ErrorBody, ValidationErrorBody]]:
    if response.status_code == 200:
        response_200 = EmailInboxPage.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

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
) -> Response[Union[EmailInboxPage, ErrorBody, ValidationErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    q: str,
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> Response[Union[EmailInboxPage, ErrorBody, ValidationErrorBody]]:
    """Searches the agent's inbox by words and filters.

     Answered in the inbox page's shape, best match first, ties newest first. `q` is words, all of
    which must match, in any order, in the subject, the sender, the recipients or the text (its
    first 100,000 characters), without regard to case or accents; and optionally `from:ADDRESS`,
    `to:ADDRESS` (To or Cc; an address or `@domain`), `has:attachment`, `after:YYYY-MM-DD` (that day
    or later) and `before:YYYY-MM-DD` (UTC). A cursor is bound to its query; results are paged to
    the 10,000th. A query matching more than 1,000 messages lists them newest first instead of best
    first. At most `EMAIL_SEARCHES_PER_AGENT` (4) searches of an agent run at once; each may take up
    to `EMAIL_SEARCH_TIMEOUT_MS` (3 s).

    Needs a key with the scope `email:read`.

    Args:
        q (str):
        limit (Union[Unset, int]):
        cursor (Union[Unset, str]):
        direction (Union[Unset, Direction]): Which way a message went: `inbound` (to the agent) or
            `outbound` (from it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EmailInboxPage, ErrorBody, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        q=q,
        limit=limit,
        cursor=cursor,
        direction=direction,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    q: str,
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> Optional[Union[EmailInboxPage, ErrorBody, ValidationErrorBody]]:
    """Searches the agent's inbox by words and filters.

     Answered in the inbox page's shape, best match first, ties newest first. `q` is words, all of
    which must match, in any order, in the subject, the sender, the recipients or the text (its
    first 100,000 characters), without regard to case or accents; and optionally `from:ADDRESS`,
    `to:ADDRESS` (To or Cc; an address or `@domain`), `has:attachment`, `after:YYYY-MM-DD` (that day
    or later) and `before:YYYY-MM-DD` (UTC). A cursor is bound to its query; results are paged to
    the 10,000th. A query matching more than 1,000 messages lists them newest first instead of best
    first. At most `EMAIL_SEARCHES_PER_AGENT` (4) searches of an agent run at once; each may take up
    to `EMAIL_SEARCH_TIMEOUT_MS` (3 s).

    Needs a key with the scope `email:read`.

    Args:
        q (str):
        limit (Union[Unset, int]):
        cursor (Union[Unset, str]):
        direction (Union[Unset, Direction]): Which way a message went: `inbound` (to the agent) or
            `outbound` (from it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EmailInboxPage, ErrorBody, ValidationErrorBody]
    """

    return sync_detailed(
        client=client,
        q=q,
        limit=limit,
        cursor=cursor,
        direction=direction,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    q: str,
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> Response[Union[EmailInboxPage, ErrorBody, ValidationErrorBody]]:
    """Searches the agent's inbox by words and filters.

     Answered in the inbox page's shape, best match first, ties newest first. `q` is words, all of
    which must match, in any order, in the subject, the sender, the recipients or the text (its
    first 100,000 characters), without regard to case or accents; and optionally `from:ADDRESS`,
    `to:ADDRESS` (To or Cc; an address or `@domain`), `has:attachment`, `after:YYYY-MM-DD` (that day
    or later) and `before:YYYY-MM-DD` (UTC). A cursor is bound to its query; results are paged to
    the 10,000th. A query matching more than 1,000 messages lists them newest first instead of best
    first. At most `EMAIL_SEARCHES_PER_AGENT` (4) searches of an agent run at once; each may take up
    to `EMAIL_SEARCH_TIMEOUT_MS` (3 s).

    Needs a key with the scope `email:read`.

    Args:
        q (str):
        limit (Union[Unset, int]):
        cursor (Union[Unset, str]):
        direction (Union[Unset, Direction]): Which way a message went: `inbound` (to the agent) or
            `outbound` (from it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EmailInboxPage, ErrorBody, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        q=q,
        limit=limit,
        cursor=cursor,
        direction=direction,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    q: str,
    limit: Union[Unset, int] = UNSET,
    cursor: Union[Unset, str] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> Optional[Union[EmailInboxPage, ErrorBody, ValidationErrorBody]]:
    """Searches the agent's inbox by words and filters.

     Answered in the inbox page's shape, best match first, ties newest first. `q` is words, all of
    which must match, in any order, in the subject, the sender, the recipients or the text (its
    first 100,000 characters), without regard to case or accents; and optionally `from:ADDRESS`,
    `to:ADDRESS` (To or Cc; an address or `@domain`), `has:attachment`, `after:YYYY-MM-DD` (that day
    or later) and `before:YYYY-MM-DD` (UTC). A cursor is bound to its query; results are paged to
    the 10,000th. A query matching more than 1,000 messages lists them newest first instead of best
    first. At most `EMAIL_SEARCHES_PER_AGENT` (4) searches of an agent run at once; each may take up
    to `EMAIL_SEARCH_TIMEOUT_MS` (3 s).

    Needs a key with the scope `email:read`.

    Args:
        q (str):
        limit (Union[Unset, int]):
        cursor (Union[Unset, str]):
        direction (Union[Unset, Direction]): Which way a message went: `inbound` (to the agent) or
            `outbound` (from it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EmailInboxPage, ErrorBody, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            client=client,
            q=q,
            limit=limit,
            cursor=cursor,
            direction=direction,
        )
    ).parsed
