from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...models.webhook_create_request import WebhookCreateRequest
from ...models.webhook_out import WebhookOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: WebhookCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    if response.status_code == 201:
        response_201 = WebhookOut.from_dict(response.json())

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
) -> Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: WebhookCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    """Creates an endpoint; its secret is shown in this answer only.

     At most 10 endpoints per agent (409 beyond). Deliveries are signed per Standard Webhooks with
    the secret: `webhook-id`, `webhook-timestamp`, `webhook-signature`. The endpoint is the
    key's that creates it: when the operator rotates the agent's key, it is disabled
    (`disabled_reason` says so) until the new key enables it again. With an `Idempotency-Key`
    header, a retry with the same body by the same agent key within 24 hours makes nothing and
    answers the first answer again, secret included (`Idempotent-Replayed: true`); another body,
    or a first request still in progress, is 409.

    Needs a key with the scope `webhooks:manage`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (WebhookCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]
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
    body: WebhookCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    """Creates an endpoint; its secret is shown in this answer only.

     At most 10 endpoints per agent (409 beyond). Deliveries are signed per Standard Webhooks with
    the secret: `webhook-id`, `webhook-timestamp`, `webhook-signature`. The endpoint is the
    key's that creates it: when the operator rotates the agent's key, it is disabled
    (`disabled_reason` says so) until the new key enables it again. With an `Idempotency-Key`
    header, a retry with the same body by the same agent key within 24 hours makes nothing and
    answers the first answer again, secret included (`Idempotent-Replayed: true`); another body,
    or a first request still in progress, is 409.

    Needs a key with the scope `webhooks:manage`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (WebhookCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, WebhookOut]
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: WebhookCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    """Creates an endpoint; its secret is shown in this answer only.

     At most 10 endpoints per agent (409 beyond). Deliveries are signed per Standard Webhooks with
    the secret: `webhook-id`, `webhook-timestamp`, `webhook-signature`. The endpoint is the
    key's that creates it: when the operator rotates the agent's key, it is disabled
    (`disabled_reason` says so) until the new key enables it again. With an `Idempotency-Key`
    header, a retry with the same body by the same agent key within 24 hours makes nothing and
    answers the first answer again, secret included (`Idempotent-Replayed: true`); another body,
    or a first request still in progress, is 409.

    Needs a key with the scope `webhooks:manage`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (WebhookCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, WebhookOut]]
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
    body: WebhookCreateRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, ValidationErrorBody, WebhookOut]]:
    """Creates an endpoint; its secret is shown in this answer only.

     At most 10 endpoints per agent (409 beyond). Deliveries are signed per Standard Webhooks with
    the secret: `webhook-id`, `webhook-timestamp`, `webhook-signature`. The endpoint is the
    key's that creates it: when the operator rotates the agent's key, it is disabled
    (`disabled_reason` says so) until the new key enables it again. With an `Idempotency-Key`
    header, a retry with the same body by the same agent key within 24 hours makes nothing and
    answers the first answer again, secret included (`Idempotent-Replayed: true`); another body,
    or a first request still in progress, is 409.

    Needs a key with the scope `webhooks:manage`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (WebhookCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, WebhookOut]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
