from http import HTTPStatus
from typing import Any, Optional, Union, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    message_id: str,
    attachment_id: str,
    *,
    if_none_match: Union[None, Unset, str] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_none_match, Unset):
        headers["If-None-Match"] = if_none_match

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/email/messages/{message_id}/attachments/{attachment_id}".format(
            message_id=message_id,
            attachment_id=attachment_id,
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[Any, ErrorBody]]:
    if response.status_code == 304:
        response_304 = cast(Any, None)
        return response_304

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 410:
        response_410 = ErrorBody.from_dict(response.json())

        return response_410

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
) -> Response[Union[Any, ErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    message_id: str,
    attachment_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: Union[None, Unset, str] = UNSET,
) -> Response[Union[Any, ErrorBody]]:
    """An attachment of a message of the agent's inbox: its bytes, streamed.

     Served with the stored `Content-Type` (or `application/octet-stream` when absent or not a
    valid media type), as an attachment to save (`Content-Disposition` with the name made safe:
    its last path segment, without control characters or marks that reorder text), never to
    render (`X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`). The `ETag` is
    the SHA-256 of the bytes; `If-None-Match` with it answers 304.

    Needs a key with the scope `email:read`.

    Args:
        message_id (str):
        attachment_id (str):
        if_none_match (Union[None, Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[Any, ErrorBody]]
    """

    kwargs = _get_kwargs(
        message_id=message_id,
        attachment_id=attachment_id,
        if_none_match=if_none_match,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    message_id: str,
    attachment_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: Union[None, Unset, str] = UNSET,
) -> Optional[Union[Any, ErrorBody]]:
    """An attachment of a message of the agent's inbox: its bytes, streamed.

     Served with the stored `Content-Type` (or `application/octet-stream` when absent or not a
    valid media type), as an attachment to save (`Content-Disposition` with the name made safe:
    its last path segment, without control characters or marks that reorder text), never to
    render (`X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`). The `ETag` is
    the SHA-256 of the bytes; `If-None-Match` with it answers 304.

    Needs a key with the scope `email:read`.

    Args:
        message_id (str):
        attachment_id (str):
        if_none_match (Union[None, Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[Any, ErrorBody]
    """

    return sync_detailed(
        message_id=message_id,
        attachment_id=attachment_id,
        client=client,
        if_none_match=if_none_match,
    ).parsed


async def asyncio_detailed(
    message_id: str,
    attachment_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: Union[None, Unset, str] = UNSET,
) -> Response[Union[Any, ErrorBody]]:
    """An attachment of a message of the agent's inbox: its bytes, streamed.

     Served with the stored `Content-Type` (or `application/octet-stream` when absent or not a
    valid media type), as an attachment to save (`Content-Disposition` with the name made safe:
    its last path segment, without control characters or marks that reorder text), never to
    render (`X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`). The `ETag` is
    the SHA-256 of the bytes; `If-None-Match` with it answers 304.

    Needs a key with the scope `email:read`.

    Args:
        message_id (str):
        attachment_id (str):
        if_none_match (Union[None, Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[Any, ErrorBody]]
    """

    kwargs = _get_kwargs(
        message_id=message_id,
        attachment_id=attachment_id,
        if_none_match=if_none_match,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    message_id: str,
    attachment_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: Union[None, Unset, str] = UNSET,
) -> Optional[Union[Any, ErrorBody]]:
    """An attachment of a message of the agent's inbox: its bytes, streamed.

     Served with the stored `Content-Type` (or `application/octet-stream` when absent or not a
    valid media type), as an attachment to save (`Content-Disposition` with the name made safe:
    its last path segment, without control characters or marks that reorder text), never to
    render (`X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`). The `ETag` is
    the SHA-256 of the bytes; `If-None-Match` with it answers 304.

    Needs a key with the scope `email:read`.

    Args:
        message_id (str):
        attachment_id (str):
        if_none_match (Union[None, Unset, str]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[Any, ErrorBody]
    """

    return (
        await asyncio_detailed(
            message_id=message_id,
            attachment_id=attachment_id,
            client=client,
            if_none_match=if_none_match,
        )
    ).parsed
