from http import HTTPStatus
from typing import Any, Optional, Union
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...models.webhook_replay_request import WebhookReplayRequest
from ...models.webhook_replay_response import WebhookReplayResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    webhook_id: UUID,
    *,
    body: WebhookReplayRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/webhooks/{webhook_id}/replay".format(
            webhook_id=webhook_id,
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]]:
    if response.status_code == 202:
        response_202 = WebhookReplayResponse.from_dict(response.json())

        return response_202

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

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
) -> Response[Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]]:
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
    body: WebhookReplayRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]]:
    """Delivers the endpoint's kept events again, now.

     Every kept event of a type the endpoint wants with `seq` greater than `after`, whatever
    became of its delivery; a delivery still waiting for its next attempt is made due at once
    rather than queued twice.

    An agent may replay an endpoint three times at once, then once a minute (429 with
    `Retry-After` beyond). With an `Idempotency-Key` header, a retry with the same endpoint and
    body by the same agent key within 24 hours delivers nothing more, takes none of the replays
    and answers the first count again (`Idempotent-Replayed: true`); another request under the
    key, or while its first is in progress, is 409.

    Needs a key with the scope `webhooks:manage`.

    Args:
        webhook_id (UUID):
        idempotency_key (Union[None, Unset, str]):
        body (WebhookReplayRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    webhook_id: UUID,
    *,
    client: AuthenticatedClient,
    body: WebhookReplayRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]]:
    """Delivers the endpoint's kept events again, now.

     Every kept event of a type the endpoint wants with `seq` greater than `after`, whatever
    became of its delivery; a delivery still waiting for its next attempt is made due at once
    rather than queued twice.

    An agent may replay an endpoint three times at once, then once a minute (429 with
    `Retry-After` beyond). With an `Idempotency-Key` header, a retry with the same endpoint and
    body by the same agent key within 24 hours delivers nothing more, takes none of the replays
    and answers the first count again (`Idempotent-Replayed: true`); another request under the
    key, or while its first is in progress, is 409.

    Needs a key with the scope `webhooks:manage`.

    Args:
        webhook_id (UUID):
        idempotency_key (Union[None, Unset, str]):
        body (WebhookReplayRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]
    """

    return sync_detailed(
        webhook_id=webhook_id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    webhook_id: UUID,
    *,
    client: AuthenticatedClient,
    body: WebhookReplayRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]]:
    """Delivers the endpoint's kept events again, now.

     Every kept event of a type the endpoint wants with `seq` greater than `after`, whatever
    became of its delivery; a delivery still waiting for its next attempt is made due at once
    rather than queued twice.

    An agent may replay an endpoint three times at once, then once a minute (429 with
    `Retry-After` beyond). With an `Idempotency-Key` header, a retry with the same endpoint and
    body by the same agent key within 24 hours delivers nothing more, takes none of the replays
    and answers the first count again (`Idempotent-Replayed: true`); another request under the
    key, or while its first is in progress, is 409.

    Needs a key with the scope `webhooks:manage`.

    Args:
        webhook_id (UUID):
        idempotency_key (Union[None, Unset, str]):
        body (WebhookReplayRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]]
    """

    kwargs = _get_kwargs(
        webhook_id=webhook_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    webhook_id: UUID,
    *,
    client: AuthenticatedClient,
    body: WebhookReplayRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]]:
    """Delivers the endpoint's kept events again, now.

     Every kept event of a type the endpoint wants with `seq` greater than `after`, whatever
    became of its delivery; a delivery still waiting for its next attempt is made due at once
    rather than queued twice.

    An agent may replay an endpoint three times at once, then once a minute (429 with
    `Retry-After` beyond). With an `Idempotency-Key` header, a retry with the same endpoint and
    body by the same agent key within 24 hours delivers nothing more, takes none of the replays
    and answers the first count again (`Idempotent-Replayed: true`); another request under the
    key, or while its first is in progress, is 409.

    Needs a key with the scope `webhooks:manage`.

    Args:
        webhook_id (UUID):
        idempotency_key (Union[None, Unset, str]):
        body (WebhookReplayRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, WebhookReplayResponse]
    """

    return (
        await asyncio_detailed(
            webhook_id=webhook_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
