from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.email_send_request import EmailSendRequest
from ...models.email_send_response import EmailSendResponse
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: EmailSendRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/email/send",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    if response.status_code == 200:
        response_200 = EmailSendResponse.from_dict(response.json())

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
) -> Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: EmailSendRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    """Sends a message from the agent's inbox.

     The message is stored `queued` before the answer; a background job hands it to the email
    provider and retries while the provider is unavailable, so an accepted message is never lost.
    Only `transactional` mail; `reply_to` and `body_html` are unavailable. The sponsor's agents
    share a send rate: beyond it the answer is 429 with `Retry-After: 5` and nothing is stored.
    With an `Idempotency-Key` header, a retry with the same body within 24 hours returns the
    original message (`Idempotent-Replayed: true`); another body, or a first request still in
    progress, is 409.

    Needs a key with the scope `email:send`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (EmailSendRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]
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
    body: EmailSendRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    """Sends a message from the agent's inbox.

     The message is stored `queued` before the answer; a background job hands it to the email
    provider and retries while the provider is unavailable, so an accepted message is never lost.
    Only `transactional` mail; `reply_to` and `body_html` are unavailable. The sponsor's agents
    share a send rate: beyond it the answer is 429 with `Retry-After: 5` and nothing is stored.
    With an `Idempotency-Key` header, a retry with the same body within 24 hours returns the
    original message (`Idempotent-Replayed: true`); another body, or a first request still in
    progress, is 409.

    Needs a key with the scope `email:send`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (EmailSendRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EmailSendResponse, ErrorBody, ValidationErrorBody]
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: EmailSendRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    """Sends a message from the agent's inbox.

     The message is stored `queued` before the answer; a background job hands it to the email
    provider and retries while the provider is unavailable, so an accepted message is never lost.
    Only `transactional` mail; `reply_to` and `body_html` are unavailable. The sponsor's agents
    share a send rate: beyond it the answer is 429 with `Retry-After: 5` and nothing is stored.
    With an `Idempotency-Key` header, a retry with the same body within 24 hours returns the
    original message (`Idempotent-Replayed: true`); another body, or a first request still in
    progress, is 409.

    Needs a key with the scope `email:send`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (EmailSendRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]
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
    body: EmailSendRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    """Sends a message from the agent's inbox.

     The message is stored `queued` before the answer; a background job hands it to the email
    provider and retries while the provider is unavailable, so an accepted message is never lost.
    Only `transactional` mail; `reply_to` and `body_html` are unavailable. The sponsor's agents
    share a send rate: beyond it the answer is 429 with `Retry-After: 5` and nothing is stored.
    With an `Idempotency-Key` header, a retry with the same body within 24 hours returns the
    original message (`Idempotent-Replayed: true`); another body, or a first request still in
    progress, is 409.

    Needs a key with the scope `email:send`.

    Args:
        idempotency_key (Union[None, Unset, str]):
        body (EmailSendRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EmailSendResponse, ErrorBody, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
