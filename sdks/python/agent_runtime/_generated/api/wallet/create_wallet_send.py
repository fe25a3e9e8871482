from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.transfer_intent_out import TransferIntentOut
from ...models.validation_error_body import ValidationErrorBody
from ...models.wallet_send_request import WalletSendRequest
from ...types import Response


def _get_kwargs(
    *,
    body: WalletSendRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/wallet/send",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, TransferIntentOut, ValidationErrorBody]]:
    if response.status_code == 200:
        response_200 = TransferIntentOut.from_dict(response.json())

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
) -> Response[Union[ErrorBody, TransferIntentOut, ValidationErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: WalletSendRequest,
) -> Response[Union[ErrorBody, TransferIntentOut, ValidationErrorBody]]:
    r"""Creates a transfer intent.

     It stays `pending_confirmation` until the operators it needs confirm it, unless the policy's
    auto-confirm tier confirms it at once (`confirmed`, `confirmed_by: policy`). Only USDC on Base
    is supported (`asset` and `chain` default to them). The amount is in atomic units: `\"100000000\"`
    is 100 USDC. The spend policy is checked in one atomic step per wallet: the recipient allowlist,
    the per-transfer limits (the wallet's and the recipient's), and the rolling daily, weekly and
    monthly limits and the recipient's daily one, over every intent still holding its amount; a
    violation is 403 with a detail naming the rule and what the window still allows. With an
    `idempotency_key`, a retry with the same parameters within 24 hours returns the original intent
    (`Idempotent-Replayed: true`); a reuse with other parameters, or while the first request is
    still in progress, is 409.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (WalletSendRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, TransferIntentOut, ValidationErrorBody]]
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
    body: WalletSendRequest,
) -> Optional[Union[ErrorBody, TransferIntentOut, ValidationErrorBody]]:
    r"""Creates a transfer intent.

     It stays `pending_confirmation` until the operators it needs confirm it, unless the policy's
    auto-confirm tier confirms it at once (`confirmed`, `confirmed_by: policy`). Only USDC on Base
    is supported (`asset` and `chain` default to them). The amount is in atomic units: `\"100000000\"`
    is 100 USDC. The spend policy is checked in one atomic step per wallet: the recipient allowlist,
    the per-transfer limits (the wallet's and the recipient's), and the rolling daily, weekly and
    monthly limits and the recipient's daily one, over every intent still holding its amount; a
    violation is 403 with a detail naming the rule and what the window still allows. With an
    `idempotency_key`, a retry with the same parameters within 24 hours returns the original intent
    (`Idempotent-Replayed: true`); a reuse with other parameters, or while the first request is
    still in progress, is 409.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (WalletSendRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, TransferIntentOut, ValidationErrorBody]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: WalletSendRequest,
) -> Response[Union[ErrorBody, TransferIntentOut, ValidationErrorBody]]:
    r"""Creates a transfer intent.

     It stays `pending_confirmation` until the operators it needs confirm it, unless the policy's
    auto-confirm tier confirms it at once (`confirmed`, `confirmed_by: policy`). Only USDC on Base
    is supported (`asset` and `chain` default to them). The amount is in atomic units: `\"100000000\"`
    is 100 USDC. The spend policy is checked in one atomic step per wallet: the recipient allowlist,
    the per-transfer limits (the wallet's and the recipient's), and the rolling daily, weekly and
    monthly limits and the recipient's daily one, over every intent still holding its amount; a
    violation is 403 with a detail naming the rule and what the window still allows. With an
    `idempotency_key`, a retry with the same parameters within 24 hours returns the original intent
    (`Idempotent-Replayed: true`); a reuse with other parameters, or while the first request is
    still in progress, is 409.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (WalletSendRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, TransferIntentOut, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: WalletSendRequest,
) -> Optional[Union[ErrorBody, TransferIntentOut, ValidationErrorBody]]:
    r"""Creates a transfer intent.

     It stays `pending_confirmation` until the operators it needs confirm it, unless the policy's
    auto-confirm tier confirms it at once (`confirmed`, `confirmed_by: policy`). Only USDC on Base
    is supported (`asset` and `chain` default to them). The amount is in atomic units: `\"100000000\"`
    is 100 USDC. The spend policy is checked in one atomic step per wallet: the recipient allowlist,
    the per-transfer limits (the wallet's and the recipient's), and the rolling daily, weekly and
    monthly limits and the recipient's daily one, over every intent still holding its amount; a
    violation is 403 with a detail naming the rule and what the window still allows. With an
    `idempotency_key`, a retry with the same parameters within 24 hours returns the original intent
    (`Idempotent-Replayed: true`); a reuse with other parameters, or while the first request is
    still in progress, is 409.

    Needs a key with the scope `wallet:pay`.

    Args:
        body (WalletSendRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, TransferIntentOut, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
