from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...models.verification_code_response import VerificationCodeResponse
from ...models.wait_for_code_request import WaitForCodeRequest
from ...types import Response


def _get_kwargs(
    *,
    body: WaitForCodeRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sms/wait-for-code",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]]:
    if response.status_code == 200:
        response_200 = VerificationCodeResponse.from_dict(response.json())

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

    if response.status_code == 408:
        response_408 = ErrorBody.from_dict(response.json())

        return response_408

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
) -> Response[Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: WaitForCodeRequest,
) -> Response[Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]]:
    """Waits for a verification code by SMS.

     The newest message no wait has returned yet (of `service_name`, when given) is returned at
    once and counts as seen; otherwise the call blocks until one arrives, on any instance, or
    `timeout` seconds pass (408). With `request_id`, a retry returns what the first call returned,
    and one made while the first still waits joins it.

    Needs a key with the scope `sms:read`.

    Args:
        body (WaitForCodeRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]]
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
    body: WaitForCodeRequest,
) -> Optional[Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]]:
    """Waits for a verification code by SMS.

     The newest message no wait has returned yet (of `service_name`, when given) is returned at
    once and counts as seen; otherwise the call blocks until one arrives, on any instance, or
    `timeout` seconds pass (408). With `request_id`, a retry returns what the first call returned,
    and one made while the first still waits joins it.

    Needs a key with the scope `sms:read`.

    Args:
        body (WaitForCodeRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: WaitForCodeRequest,
) -> Response[Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]]:
    """Waits for a verification code by SMS.

     The newest message no wait has returned yet (of `service_name`, when given) is returned at
    once and counts as seen; otherwise the call blocks until one arrives, on any instance, or
    `timeout` seconds pass (408). With `request_id`, a retry returns what the first call returned,
    and one made while the first still waits joins it.

    Needs a key with the scope `sms:read`.

    Args:
        body (WaitForCodeRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: WaitForCodeRequest,
) -> Optional[Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]]:
    """Waits for a verification code by SMS.

     The newest message no wait has returned yet (of `service_name`, when given) is returned at
    once and counts as seen; otherwise the call blocks until one arrives, on any instance, or
    `timeout` seconds pass (408). With `request_id`, a retry returns what the first call returned,
    and one made while the first still waits joins it.

    Needs a key with the scope `sms:read`.

    Args:
        body (WaitForCodeRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ValidationErrorBody, VerificationCodeResponse]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
