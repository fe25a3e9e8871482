from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...models.x402_authorize_request import X402AuthorizeRequest
from ...models.x402_authorized_out import X402AuthorizedOut
from ...models.x402_pending_out import X402PendingOut
from ...types import Response


def _get_kwargs(
    *,
    body: X402AuthorizeRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/wallet/x402/authorize",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]]:
    if response.status_code == 200:
        response_200 = X402AuthorizedOut.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: X402AuthorizeRequest,
) -> Response[Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]]:
    """Pays an x402 challenge from the wallet, under the spend policy.

     Takes the challenge a server answered `402 Payment Required` with. The `accepts` entry this
    wallet can pay (scheme `exact`, this chain's network, the configured USDC) becomes a transfer
    intent of kind `x402` to its `payTo`, judged by every rule of the spend policy as a send is.
    Confirmed at once by the auto-confirm tier, an EIP-3009 authorization is signed, recorded and
    answered (200): repeat the request with `header` set to `payment_signature`. Otherwise the
    answer is 202 with the intent and an `approval_url`; once operators approve, the same call
    with the same `idempotency_key` answers 200 with an authorization signed then. The same key
    with the same terms (payTo, asset, amount, network, resource) answers the same authorization
    while it is valid; with other terms, 409.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (X402AuthorizeRequest): An x402 challenge for the wallet to pay.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]]
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
    body: X402AuthorizeRequest,
) -> Optional[Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]]:
    """Pays an x402 challenge from the wallet, under the spend policy.

     Takes the challenge a server answered `402 Payment Required` with. The `accepts` entry this
    wallet can pay (scheme `exact`, this chain's network, the configured USDC) becomes a transfer
    intent of kind `x402` to its `payTo`, judged by every rule of the spend policy as a send is.
    Confirmed at once by the auto-confirm tier, an EIP-3009 authorization is signed, recorded and
    answered (200): repeat the request with `header` set to `payment_signature`. Otherwise the
    answer is 202 with the intent and an `approval_url`; once operators approve, the same call
    with the same `idempotency_key` answers 200 with an authorization signed then. The same key
    with the same terms (payTo, asset, amount, network, resource) answers the same authorization
    while it is valid; with other terms, 409.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (X402AuthorizeRequest): An x402 challenge for the wallet to pay.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: X402AuthorizeRequest,
) -> Response[Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]]:
    """Pays an x402 challenge from the wallet, under the spend policy.

     Takes the challenge a server answered `402 Payment Required` with. The `accepts` entry this
    wallet can pay (scheme `exact`, this chain's network, the configured USDC) becomes a transfer
    intent of kind `x402` to its `payTo`, judged by every rule of the spend policy as a send is.
    Confirmed at once by the auto-confirm tier, an EIP-3009 authorization is signed, recorded and
    answered (200): repeat the request with `header` set to `payment_signature`. Otherwise the
    answer is 202 with the intent and an `approval_url`; once operators approve, the same call
    with the same `idempotency_key` answers 200 with an authorization signed then. The same key
    with the same terms (payTo, asset, amount, network, resource) answers the same authorization
    while it is valid; with other terms, 409.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (X402AuthorizeRequest): An x402 challenge for the wallet to pay.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: X402AuthorizeRequest,
) -> Optional[Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]]:
    """Pays an x402 challenge from the wallet, under the spend policy.

     Takes the challenge a server answered `402 Payment Required` with. The `accepts` entry this
    wallet can pay (scheme `exact`, this chain's network, the configured USDC) becomes a transfer
    intent of kind `x402` to its `payTo`, judged by every rule of the spend policy as a send is.
    Confirmed at once by the auto-confirm tier, an EIP-3009 authorization is signed, recorded and
    answered (200): repeat the request with `header` set to `payment_signature`. Otherwise the
    answer is 202 with the intent and an `approval_url`; once operators approve, the same call
    with the same `idempotency_key` answers 200 with an authorization signed then. The same key
    with the same terms (payTo, asset, amount, network, resource) answers the same authorization
    while it is valid; with other terms, 409.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (X402AuthorizeRequest): An x402 challenge for the wallet to pay.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, X402AuthorizedOut, X402PendingOut]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
