from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.event_page import EventPage
from ...models.validation_error_body import ValidationErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    after: Union[Unset, int] = UNSET,
    limit: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["after"] = after

    params["limit"] = limit

    params["types"] = types

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, EventPage, ValidationErrorBody]]:
    if response.status_code == 200:
        response_200 = EventPage.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[Union[ErrorBody, EventPage, ValidationErrorBody]]:
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
    limit: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
) -> Response[Union[ErrorBody, EventPage, ValidationErrorBody]]:
    """The agent's events, oldest first.

     Events with `seq` greater than `after`, of the `types` asked for. `next_after` is the last
    item's `seq` when more may follow: pass it as `after` for the next page.

    Needs a key with the scope `events:read`.

    Args:
        after (Union[Unset, int]):
        limit (Union[Unset, int]):
        types (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, EventPage, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        after=after,
        limit=limit,
        types=types,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    after: Union[Unset, int] = UNSET,
    limit: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, EventPage, ValidationErrorBody]]:
    """The agent's events, oldest first.

     Events with `seq` greater than `after`, of the `types` asked for. `next_after` is the last
    item's `seq` when more may follow: pass it as `after` for the next page.

    Needs a key with the scope `events:read`.

    Args:
        after (Union[Unset, int]):
        limit (Union[Unset, int]):
        types (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, EventPage, ValidationErrorBody]
    """

    return sync_detailed(
        client=client,
        after=after,
        limit=limit,
        types=types,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    after: Union[Unset, int] = UNSET,
    limit: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
) -> Response[Union[ErrorBody, EventPage, ValidationErrorBody]]:
    """The agent's events, oldest first.

     Events with `seq` greater than `after`, of the `types` asked for. `next_after` is the last
    item's `seq` when more may follow: pass it as `after` for the next page.

    Needs a key with the scope `events:read`.

    Args:
        after (Union[Unset, int]):
        limit (Union[Unset, int]):
        types (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, EventPage, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        after=after,
        limit=limit,
        types=types,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    after: Union[Unset, int] = UNSET,
    limit: Union[Unset, int] = UNSET,
    types: Union[Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, EventPage, ValidationErrorBody]]:
    """The agent's events, oldest first.

     Events with `seq` greater than `after`, of the `types` asked for. `next_after` is the last
    item's `seq` when more may follow: pass it as `after` for the next page.

    Needs a key with the scope `events:read`.

    Args:
        after (Union[Unset, int]):
        limit (Union[Unset, int]):
        types (Union[Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, EventPage, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            client=client,
            after=after,
            limit=limit,
            types=types,
        )
    ).parsed
