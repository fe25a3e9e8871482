from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.policy_verdict_out import PolicyVerdictOut
from ...models.validation_error_body import ValidationErrorBody
from ...models.wallet_send_request import WalletSendRequest
from ...models.x402_check_request import X402CheckRequest
from ...types import Response


def _get_kwargs(
    *,
    body: Union["WalletSendRequest", "X402CheckRequest"],
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/wallet/check",
    }

    _kwargs["json"]: dict[str, Any]
    if isinstance(body, WalletSendRequest):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]]:
    if response.status_code == 200:
        response_200 = PolicyVerdictOut.from_dict(response.json())

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
) -> Response[Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: Union["WalletSendRequest", "X402CheckRequest"],
) -> Response[Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]]:
    """The spend policy's verdict on a transfer or an x402 payment.

     Nothing is created or reserved. Takes the body of `POST /v1/wallet/send` (an `idempotency_key`
    is ignored), or an x402 challenge as `POST /v1/wallet/x402/authorize` takes it
    (`payment_required`, and `max_amount_atomic`), judged as a payment to its `payTo`. Answers
    whether the policy allows it now; if not, the rule that refuses it and why; where it would stand
    (`confirmed` by the auto-confirm tier, or `pending_confirmation`); and what each configured
    window holds. A later send or payment may be judged otherwise: others can take the allowance
    first.

    Needs a key with the scope `wallet:read`.

    Args:
        body (Union['WalletSendRequest', 'X402CheckRequest']): What `POST /v1/wallet/check`
            judges: a send's body, or an x402 challenge (a body with
            `payment_required`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]]
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
    body: Union["WalletSendRequest", "X402CheckRequest"],
) -> Optional[Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]]:
    """The spend policy's verdict on a transfer or an x402 payment.

     Nothing is created or reserved. Takes the body of `POST /v1/wallet/send` (an `idempotency_key`
    is ignored), or an x402 challenge as `POST /v1/wallet/x402/authorize` takes it
    (`payment_required`, and `max_amount_atomic`), judged as a payment to its `payTo`. Answers
    whether the policy allows it now; if not, the rule that refuses it and why; where it would stand
    (`confirmed` by the auto-confirm tier, or `pending_confirmation`); and what each configured
    window holds. A later send or payment may be judged otherwise: others can take the allowance
    first.

    Needs a key with the scope `wallet:read`.

    Args:
        body (Union['WalletSendRequest', 'X402CheckRequest']): What `POST /v1/wallet/check`
            judges: a send's body, or an x402 challenge (a body with
            `payment_required`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: Union["WalletSendRequest", "X402CheckRequest"],
) -> Response[Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]]:
    """The spend policy's verdict on a transfer or an x402 payment.

     Nothing is created or reserved. Takes the body of `POST /v1/wallet/send` (an `idempotency_key`
    is ignored), or an x402 challenge as `POST /v1/wallet/x402/authorize` takes it
    (`payment_required`, and `max_amount_atomic`), judged as a payment to its `payTo`. Answers
    whether the policy allows it now; if not, the rule that refuses it and why; where it would stand
    (`confirmed` by the auto-confirm tier, or `pending_confirmation`); and what each configured
    window holds. A later send or payment may be judged otherwise: others can take the allowance
    first.

    Needs a key with the scope `wallet:read`.

    Args:
        body (Union['WalletSendRequest', 'X402CheckRequest']): What `POST /v1/wallet/check`
            judges: a send's body, or an x402 challenge (a body with
            `payment_required`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: Union["WalletSendRequest", "X402CheckRequest"],
) -> Optional[Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]]:
    """The spend policy's verdict on a transfer or an x402 payment.

     Nothing is created or reserved. Takes the body of `POST /v1/wallet/send` (an `idempotency_key`
    is ignored), or an x402 challenge as `POST /v1/wallet/x402/authorize` takes it
    (`payment_required`, and `max_amount_atomic`), judged as a payment to its `payTo`. Answers
    whether the policy allows it now; if not, the rule that refuses it and why; where it would stand
    (`confirmed` by the auto-confirm tier, or `pending_confirmation`); and what each configured
    window holds. A later send or payment may be judged otherwise: others can take the allowance
    first.

    Needs a key with the scope `wallet:read`.

    Args:
        body (Union['WalletSendRequest', 'X402CheckRequest']): What `POST /v1/wallet/check`
            judges: a send's body, or an x402 challenge (a body with
            `payment_required`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, PolicyVerdictOut, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
