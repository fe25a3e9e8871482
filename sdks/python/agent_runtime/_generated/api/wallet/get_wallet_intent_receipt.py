from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.receipt_out import ReceiptOut
from ...types import Response


def _get_kwargs(
    intent_id: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/wallet/intents/{intent_id}/receipt".format(
            intent_id=intent_id,
        ),
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ReceiptOut]]:
    if response.status_code == 200:
        response_200 = ReceiptOut.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[Union[ErrorBody, ReceiptOut]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    intent_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[Union[ErrorBody, ReceiptOut]]:
    """The signed receipt of one of the agent's executed intents.

     The intent is a transfer or an x402 payment. `signature` is the Ed25519 signature, by the key
    `receipt.receipt_key_id` (see `GET /v1/wallet/receipt-keys`), over the RFC 8785 canonical JSON
    of `receipt`.

    Needs a key with the scope `wallet:read`.

    Args:
        intent_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ReceiptOut]]
    """

    kwargs = _get_kwargs(
        intent_id=intent_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    intent_id: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[ErrorBody, ReceiptOut]]:
    """The signed receipt of one of the agent's executed intents.

     The intent is a transfer or an x402 payment. `signature` is the Ed25519 signature, by the key
    `receipt.receipt_key_id` (see `GET /v1/wallet/receipt-keys`), over the RFC 8785 canonical JSON
    of `receipt`.

    Needs a key with the scope `wallet:read`.

    Args:
        intent_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ReceiptOut]
    """

    return sync_detailed(
        intent_id=intent_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    intent_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[Union[ErrorBody, ReceiptOut]]:
    """The signed receipt of one of the agent's executed intents.

     The intent is a transfer or an x402 payment. `signature` is the Ed25519 signature, by the key
    `receipt.receipt_key_id` (see `GET /v1/wallet/receipt-keys`), over the RFC 8785 canonical JSON
    of `receipt`.

    Needs a key with the scope `wallet:read`.

    Args:
        intent_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ReceiptOut]]
    """

    kwargs = _get_kwargs(
        intent_id=intent_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    intent_id: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[ErrorBody, ReceiptOut]]:
    """The signed receipt of one of the agent's executed intents.

     The intent is a transfer or an x402 payment. `signature` is the Ed25519 signature, by the key
    `receipt.receipt_key_id` (see `GET /v1/wallet/receipt-keys`), over the RFC 8785 canonical JSON
    of `receipt`.

    Needs a key with the scope `wallet:read`.

    Args:
        intent_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ReceiptOut]
    """

    return (
        await asyncio_detailed(
            intent_id=intent_id,
            client=client,
        )
    ).parsed
