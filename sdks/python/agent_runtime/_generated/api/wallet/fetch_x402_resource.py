from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...models.x402_fetch_failed_out import X402FetchFailedOut
from ...models.x402_fetch_out import X402FetchOut
from ...models.x402_fetch_request import X402FetchRequest
from ...models.x402_pending_out import X402PendingOut
from ...types import Response


def _get_kwargs(
    *,
    body: X402FetchRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/wallet/x402/fetch",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]]:
    if response.status_code == 200:
        response_200 = X402FetchOut.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = X402PendingOut.from_dict(response.json())

        return response_202

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

    if response.status_code == 502:
        response_502 = X402FetchFailedOut.from_dict(response.json())

        return response_502

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: X402FetchRequest,
) -> Response[Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]]:
    """Fetches a resource for the agent, paying it from the wallet when it answers 402.

     The service makes the request (`url`, `method`, `headers`, `body`); the target passes the
    webhooks' guard at every connection (https; no private, loopback, link-local or metadata
    address unless the deployment allows private targets), redirects are followed only within
    the origin, and the resource has 15 s to answer and 30 s in all. Answered 402, its challenge
    is paid as `POST /v1/wallet/x402/authorize` pays it (under `max_amount_atomic` and the spend
    policy; one authorization per `idempotency_key`) and the request is made again with the
    payment header. 200 with the resource's answer (`status` `paid` or `free`; the body at most
    4 MiB, as text or `body_base64`); 202 while operators decide; 502 when the resource fails,
    after payment with the payment's intent.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (X402FetchRequest): A resource to fetch for the agent, paid from the wallet when it
            answers 402.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]]
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
    body: X402FetchRequest,
) -> Optional[Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]]:
    """Fetches a resource for the agent, paying it from the wallet when it answers 402.

     The service makes the request (`url`, `method`, `headers`, `body`); the target passes the
    webhooks' guard at every connection (https; no private, loopback, link-local or metadata
    address unless the deployment allows private targets), redirects are followed only within
    the origin, and the resource has 15 s to answer and 30 s in all. Answered 402, its challenge
    is paid as `POST /v1/wallet/x402/authorize` pays it (under `max_amount_atomic` and the spend
    policy; one authorization per `idempotency_key`) and the request is made again with the
    payment header. 200 with the resource's answer (`status` `paid` or `free`; the body at most
    4 MiB, as text or `body_base64`); 202 while operators decide; 502 when the resource fails,
    after payment with the payment's intent.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (X402FetchRequest): A resource to fetch for the agent, paid from the wallet when it
            answers 402.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: X402FetchRequest,
) -> Response[Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]]:
    """Fetches a resource for the agent, paying it from the wallet when it answers 402.

     The service makes the request (`url`, `method`, `headers`, `body`); the target passes the
    webhooks' guard at every connection (https; no private, loopback, link-local or metadata
    address unless the deployment allows private targets), redirects are followed only within
    the origin, and the resource has 15 s to answer and 30 s in all. Answered 402, its challenge
    is paid as `POST /v1/wallet/x402/authorize` pays it (under `max_amount_atomic` and the spend
    policy; one authorization per `idempotency_key`) and the request is made again with the
    payment header. 200 with the resource's answer (`status` `paid` or `free`; the body at most
    4 MiB, as text or `body_base64`); 202 while operators decide; 502 when the resource fails,
    after payment with the payment's intent.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (X402FetchRequest): A resource to fetch for the agent, paid from the wallet when it
            answers 402.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: X402FetchRequest,
) -> Optional[Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]]:
    """Fetches a resource for the agent, paying it from the wallet when it answers 402.

     The service makes the request (`url`, `method`, `headers`, `body`); the target passes the
    webhooks' guard at every connection (https; no private, loopback, link-local or metadata
    address unless the deployment allows private targets), redirects are followed only within
    the origin, and the resource has 15 s to answer and 30 s in all. Answered 402, its challenge
    is paid as `POST /v1/wallet/x402/authorize` pays it (under `max_amount_atomic` and the spend
    policy; one authorization per `idempotency_key`) and the request is made again with the
    payment header. 200 with the resource's answer (`status` `paid` or `free`; the body at most
    4 MiB, as text or `body_base64`); 202 while operators decide; 502 when the resource fails,
    after payment with the payment's intent.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (X402FetchRequest): A resource to fetch for the agent, paid from the wallet when it
            answers 402.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, X402FetchFailedOut, X402FetchOut, X402PendingOut]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
