from http import HTTPStatus
from typing import Any, Optional, Union
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...models.webhook_out import WebhookOut
from ...models.webhook_update_request import WebhookUpdateRequest
from ...types import Response


def _get_kwargs(
    webhook_id: UUID,
    *,
    body: WebhookUpdateRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/webhooks/{webhook_id}".format(
            webhook_id=webhook_id,
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    if response.status_code == 200:
        response_200 = WebhookOut.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

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
) -> Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    webhook_id: UUID,
    *,
    client: AuthenticatedClient,
    body: WebhookUpdateRequest,
) -> Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    """Changes an endpoint: its URL, types, description, or whether it is enabled.

     Enabling clears `disabled_reason` and makes the endpoint the key's that enables it; disabling
    fails the deliveries queued for it (they stay listed, and can be replayed).

    Needs a key with the scope `webhooks:manage`.

    Args:
        webhook_id (UUID):
        body (WebhookUpdateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    webhook_id: UUID,
    *,
    client: AuthenticatedClient,
    body: WebhookUpdateRequest,
) -> Optional[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    """Changes an endpoint: its URL, types, description, or whether it is enabled.

     Enabling clears `disabled_reason` and makes the endpoint the key's that enables it; disabling
    fails the deliveries queued for it (they stay listed, and can be replayed).

    Needs a key with the scope `webhooks:manage`.

    Args:
        webhook_id (UUID):
        body (WebhookUpdateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, WebhookOut]
    """

    return sync_detailed(
        webhook_id=webhook_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    webhook_id: UUID,
    *,
    client: AuthenticatedClient,
    body: WebhookUpdateRequest,
) -> Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    """Changes an endpoint: its URL, types, description, or whether it is enabled.

     Enabling clears `disabled_reason` and makes the endpoint the key's that enables it; disabling
    fails the deliveries queued for it (they stay listed, and can be replayed).

    Needs a key with the scope `webhooks:manage`.

    Args:
        webhook_id (UUID):
        body (WebhookUpdateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_id: UUID,
    *,
    client: AuthenticatedClient,
    body: WebhookUpdateRequest,
) -> Optional[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    """Changes an endpoint: its URL, types, description, or whether it is enabled.

     Enabling clears `disabled_reason` and makes the endpoint the key's that enables it; disabling
    fails the deliveries queued for it (they stay listed, and can be replayed).

    Needs a key with the scope `webhooks:manage`.

    Args:
        webhook_id (UUID):
        body (WebhookUpdateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, WebhookOut]
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            body=body,
        )
    ).parsed
