from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.email_forward_request import EmailForwardRequest
from ...models.email_send_response import EmailSendResponse
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    message_id: str,
    *,
    body: EmailForwardRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/email/forward/{message_id}".format(
            message_id=message_id,
        ),
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
) -> Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    message_id: str,
    *,
    client: AuthenticatedClient,
    body: EmailForwardRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    """Forwards a message of the inbox to new recipients.

     A new outbound message in a thread of its own: the subject prefixed `Fwd:` (once),
    `body_text` above the original quoted under a `Forwarded message` line (its sender, date,
    subject, recipients and text), and the original's stored attachments attached, then those
    given. Same outbox, throttle and `Idempotency-Key` rules as a send.

    Needs a key with the scope `email:send`.

    Args:
        message_id (str):
        idempotency_key (Union[None, Unset, str]):
        body (EmailForwardRequest): `POST /v1/email/forward/{message_id}`: the message goes to
            these recipients under `Fwd:`, with
            `body_text` above it and its stored attachments, then these, attached.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        message_id=message_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    message_id: str,
    *,
    client: AuthenticatedClient,
    body: EmailForwardRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    """Forwards a message of the inbox to new recipients.

     A new outbound message in a thread of its own: the subject prefixed `Fwd:` (once),
    `body_text` above the original quoted under a `Forwarded message` line (its sender, date,
    subject, recipients and text), and the original's stored attachments attached, then those
    given. Same outbox, throttle and `Idempotency-Key` rules as a send.

    Needs a key with the scope `email:send`.

    Args:
        message_id (str):
        idempotency_key (Union[None, Unset, str]):
        body (EmailForwardRequest): `POST /v1/email/forward/{message_id}`: the message goes to
            these recipients under `Fwd:`, with
            `body_text` above it and its stored attachments, then these, attached.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EmailSendResponse, ErrorBody, ValidationErrorBody]
    """

    return sync_detailed(
        message_id=message_id,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    message_id: str,
    *,
    client: AuthenticatedClient,
    body: EmailForwardRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    """Forwards a message of the inbox to new recipients.

     A new outbound message in a thread of its own: the subject prefixed `Fwd:` (once),
    `body_text` above the original quoted under a `Forwarded message` line (its sender, date,
    subject, recipients and text), and the original's stored attachments attached, then those
    given. Same outbox, throttle and `Idempotency-Key` rules as a send.

    Needs a key with the scope `email:send`.

    Args:
        message_id (str):
        idempotency_key (Union[None, Unset, str]):
        body (EmailForwardRequest): `POST /v1/email/forward/{message_id}`: the message goes to
            these recipients under `Fwd:`, with
            `body_text` above it and its stored attachments, then these, attached.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        message_id=message_id,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    message_id: str,
    *,
    client: AuthenticatedClient,
    body: EmailForwardRequest,
    idempotency_key: Union[None, Unset, str] = UNSET,
) -> Optional[Union[EmailSendResponse, ErrorBody, ValidationErrorBody]]:
    """Forwards a message of the inbox to new recipients.

     A new outbound message in a thread of its own: the subject prefixed `Fwd:` (once),
    `body_text` above the original quoted under a `Forwarded message` line (its sender, date,
    subject, recipients and text), and the original's stored attachments attached, then those
    given. Same outbox, throttle and `Idempotency-Key` rules as a send.

    Needs a key with the scope `email:send`.

    Args:
        message_id (str):
        idempotency_key (Union[None, Unset, str]):
        body (EmailForwardRequest): `POST /v1/email/forward/{message_id}`: the message goes to
            these recipients under `Fwd:`, with
            `body_text` above it and its stored attachments, then these, attached.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[EmailSendResponse, ErrorBody, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            message_id=message_id,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
