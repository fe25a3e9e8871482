from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.key_create_request import KeyCreateRequest
from ...models.key_created_out import KeyCreatedOut
from ...models.validation_error_body import ValidationErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: KeyCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/keys",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]]:
    if response.status_code == 201:
        response_201 = KeyCreatedOut.from_dict(response.json())

        return response_201

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 409:
        response_409 = ErrorBody.from_dict(response.json())

        return response_409

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
) -> Response[Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: KeyCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]]:
    """Makes a narrower key from the one the request is made with.

     The new key holds a subset of its scopes (`agent:read` is always added) and expires no later
    than it (at its expiry when `expires_in_seconds` is omitted). The new `key` is shown in this
    answer only.

    At most 50 live keys per agent, the first key included (409 beyond); the first key is depth 0
    and a key of depth 4 cannot make another (422). A scope the key does not hold, or a lifetime
    past its own, is a 422 naming it.

    With an `Idempotency-Key` header, a retry with the same key, body and agent key within 24
    hours answers the key made first, `Idempotent-Replayed: true` (its secret is derived again
    from the agent key that asks, never stored); another body is a 409.

    Needs a key with the scope `keys:manage`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (KeyCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: KeyCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]]:
    """Makes a narrower key from the one the request is made with.

     The new key holds a subset of its scopes (`agent:read` is always added) and expires no later
    than it (at its expiry when `expires_in_seconds` is omitted). The new `key` is shown in this
    answer only.

    At most 50 live keys per agent, the first key included (409 beyond); the first key is depth 0
    and a key of depth 4 cannot make another (422). A scope the key does not hold, or a lifetime
    past its own, is a 422 naming it.

    With an `Idempotency-Key` header, a retry with the same key, body and agent key within 24
    hours answers the key made first, `Idempotent-Replayed: true` (its secret is derived again
    from the agent key that asks, never stored); another body is a 409.

    Needs a key with the scope `keys:manage`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (KeyCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: KeyCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]]:
    """Makes a narrower key from the one the request is made with.

     The new key holds a subset of its scopes (`agent:read` is always added) and expires no later
    than it (at its expiry when `expires_in_seconds` is omitted). The new `key` is shown in this
    answer only.

    At most 50 live keys per agent, the first key included (409 beyond); the first key is depth 0
    and a key of depth 4 cannot make another (422). A scope the key does not hold, or a lifetime
    past its own, is a 422 naming it.

    With an `Idempotency-Key` header, a retry with the same key, body and agent key within 24
    hours answers the key made first, `Idempotent-Replayed: true` (its secret is derived again
    from the agent key that asks, never stored); another body is a 409.

    Needs a key with the scope `keys:manage`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (KeyCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: KeyCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]]:
    """Makes a narrower key from the one the request is made with.

     The new key holds a subset of its scopes (`agent:read` is always added) and expires no later
    than it (at its expiry when `expires_in_seconds` is omitted). The new `key` is shown in this
    answer only.

    At most 50 live keys per agent, the first key included (409 beyond); the first key is depth 0
    and a key of depth 4 cannot make another (422). A scope the key does not hold, or a lifetime
    past its own, is a 422 naming it.

    With an `Idempotency-Key` header, a retry with the same key, body and agent key within 24
    hours answers the key made first, `Idempotent-Replayed: true` (its secret is derived again
    from the agent key that asks, never stored); another body is a 409.

    Needs a key with the scope `keys:manage`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (KeyCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, KeyCreatedOut, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
