from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.direction import Direction
from ...models.error_body import ErrorBody
from ...models.sms_message_out import SmsMessageOut
from ...models.validation_error_body import ValidationErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: Union[Unset, int] = UNSET,
    offset: Union[Unset, int] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    params["limit"] = limit

    params["offset"] = offset

    json_direction: Union[Unset, str] = UNSET
    if not isinstance(direction, Unset):
        json_direction = direction.value

    params["direction"] = json_direction

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/sms/messages",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ValidationErrorBody, list["SmsMessageOut"]]]:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = SmsMessageOut.from_dict(response_200_item_data)

            response_200.append(response_200_item)

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

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[Union[ErrorBody, ValidationErrorBody, list["SmsMessageOut"]]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    limit: Union[Unset, int] = UNSET,
    offset: Union[Unset, int] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> Response[Union[ErrorBody, ValidationErrorBody, list["SmsMessageOut"]]]:
    """The number's messages, newest first, as a bare array.

     The newest 100 messages at the provider are synced in first (stored once each, however often
    or concurrently this runs); then `offset` and `limit` apply to the stored messages. When the
    provider cannot be reached, the stored messages are served and `X-Sms-Sync: stale` says so
    (`synced` otherwise).

    Needs a key with the scope `sms:read`.

    Args:
        limit (Union[Unset, int]):
        offset (Union[Unset, int]):
        direction (Union[Unset, Direction]): Which way a message went: `inbound` (to the agent) or
            `outbound` (from it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, list['SmsMessageOut']]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        offset=offset,
        direction=direction,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    limit: Union[Unset, int] = UNSET,
    offset: Union[Unset, int] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> Optional[Union[ErrorBody, ValidationErrorBody, list["SmsMessageOut"]]]:
    """The number's messages, newest first, as a bare array.

     The newest 100 messages at the provider are synced in first (stored once each, however often
    or concurrently this runs); then `offset` and `limit` apply to the stored messages. When the
    provider cannot be reached, the stored messages are served and `X-Sms-Sync: stale` says so
    (`synced` otherwise).

    Needs a key with the scope `sms:read`.

    Args:
        limit (Union[Unset, int]):
        offset (Union[Unset, int]):
        direction (Union[Unset, Direction]): Which way a message went: `inbound` (to the agent) or
            `outbound` (from it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, list['SmsMessageOut']]
    """

    return sync_detailed(
        client=client,
        limit=limit,
        offset=offset,
        direction=direction,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    limit: Union[Unset, int] = UNSET,
    offset: Union[Unset, int] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> Response[Union[ErrorBody, ValidationErrorBody, list["SmsMessageOut"]]]:
    """The number's messages, newest first, as a bare array.

     The newest 100 messages at the provider are synced in first (stored once each, however often
    or concurrently this runs); then `offset` and `limit` apply to the stored messages. When the
    provider cannot be reached, the stored messages are served and `X-Sms-Sync: stale` says so
    (`synced` otherwise).

    Needs a key with the scope `sms:read`.

    Args:
        limit (Union[Unset, int]):
        offset (Union[Unset, int]):
        direction (Union[Unset, Direction]): Which way a message went: `inbound` (to the agent) or
            `outbound` (from it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, list['SmsMessageOut']]]
    """

    kwargs = _get_kwargs(
        limit=limit,
        offset=offset,
        direction=direction,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    limit: Union[Unset, int] = UNSET,
    offset: Union[Unset, int] = UNSET,
    direction: Union[Unset, Direction] = UNSET,
) -> Optional[Union[ErrorBody, ValidationErrorBody, list["SmsMessageOut"]]]:
    """The number's messages, newest first, as a bare array.

     The newest 100 messages at the provider are synced in first (stored once each, however often
    or concurrently this runs); then `offset` and `limit` apply to the stored messages. When the
    provider cannot be reached, the stored messages are served and `X-Sms-Sync: stale` says so
    (`synced` otherwise).

    Needs a key with the scope `sms:read`.

    Args:
        limit (Union[Unset, int]):
        offset (Union[Unset, int]):
        direction (Union[Unset, Direction]): Which way a message went: `inbound` (to the agent) or
            `outbound` (from it).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, list['SmsMessageOut']]
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            offset=offset,
            direction=direction,
        )
    ).parsed
