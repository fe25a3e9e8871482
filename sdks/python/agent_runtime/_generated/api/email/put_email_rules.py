from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.sender_rules_out import SenderRulesOut
from ...models.sender_rules_request import SenderRulesRequest
from ...models.validation_error_body import ValidationErrorBody
from ...types import Response


def _get_kwargs(
    *,
    body: SenderRulesRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/email/rules",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, SenderRulesOut, ValidationErrorBody]]:
    if response.status_code == 200:
        response_200 = SenderRulesOut.from_dict(response.json())

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
) -> Response[Union[ErrorBody, SenderRulesOut, ValidationErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: SenderRulesRequest,
) -> Response[Union[ErrorBody, SenderRulesOut, ValidationErrorBody]]:
    """Replaces the agent's sender rules.

     With an `allow` list, inbound mail from anyone else is kept out of the inbox; mail from a
    `block`ed sender is kept out whatever `allow` says. An allow list matches the envelope sender
    the provider reports (`Return-Path`) where it reports one, else `From`; a block holds against
    both. Addresses compare without case, quotes around the local part or a trailing dot on the
    domain. Kept-out mail is counted
    (`kept_out_count`), not stored, and no event is emitted for it. Mail already stored stays.

    Needs a key with the scope `email:send`.

    Args:
        body (SenderRulesRequest): `PUT /v1/email/rules`: both lists replace the stored ones (a
            list left out is emptied).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, SenderRulesOut, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: SenderRulesRequest,
) -> Optional[Union[ErrorBody, SenderRulesOut, ValidationErrorBody]]:
    """Replaces the agent's sender rules.

     With an `allow` list, inbound mail from anyone else is kept out of the inbox; mail from a
    `block`ed sender is kept out whatever `allow` says. An allow list matches the envelope sender
    the provider reports (`Return-Path`) where it reports one, else `From`; a block holds against
    both. Addresses compare without case, quotes around the local part or a trailing dot on the
    domain. Kept-out mail is counted
    (`kept_out_count`), not stored, and no event is emitted for it. Mail already stored stays.

    Needs a key with the scope `email:send`.

    Args:
        body (SenderRulesRequest): `PUT /v1/email/rules`: both lists replace the stored ones (a
            list left out is emptied).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, SenderRulesOut, ValidationErrorBody]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: SenderRulesRequest,
) -> Response[Union[ErrorBody, SenderRulesOut, ValidationErrorBody]]:
    """Replaces the agent's sender rules.

     With an `allow` list, inbound mail from anyone else is kept out of the inbox; mail from a
    `block`ed sender is kept out whatever `allow` says. An allow list matches the envelope sender
    the provider reports (`Return-Path`) where it reports one, else `From`; a block holds against
    both. Addresses compare without case, quotes around the local part or a trailing dot on the
    domain. Kept-out mail is counted
    (`kept_out_count`), not stored, and no event is emitted for it. Mail already stored stays.

    Needs a key with the scope `email:send`.

    Args:
        body (SenderRulesRequest): `PUT /v1/email/rules`: both lists replace the stored ones (a
            list left out is emptied).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, SenderRulesOut, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: SenderRulesRequest,
) -> Optional[Union[ErrorBody, SenderRulesOut, ValidationErrorBody]]:
    """Replaces the agent's sender rules.

     With an `allow` list, inbound mail from anyone else is kept out of the inbox; mail from a
    `block`ed sender is kept out whatever `allow` says. An allow list matches the envelope sender
    the provider reports (`Return-Path`) where it reports one, else `From`; a block holds against
    both. Addresses compare without case, quotes around the local part or a trailing dot on the
    domain. Kept-out mail is counted
    (`kept_out_count`), not stored, and no event is emitted for it. Mail already stored stays.

    Needs a key with the scope `email:send`.

    Args:
        body (SenderRulesRequest): `PUT /v1/email/rules`: both lists replace the stored ones (a
            list left out is emptied).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, SenderRulesOut, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
