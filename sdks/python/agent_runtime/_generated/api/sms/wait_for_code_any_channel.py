from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.code_out import CodeOut
from ...models.codes_wait_request import CodesWaitRequest
from ...models.error_body import ErrorBody
from ...models.validation_error_body import ValidationErrorBody
from ...types import Response


def _get_kwargs(
    *,
    body: CodesWaitRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/codes/wait",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[CodeOut, ErrorBody, ValidationErrorBody]]:
    if response.status_code == 200:
        response_200 = CodeOut.from_dict(response.json())

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
) -> Response[Union[CodeOut, ErrorBody, ValidationErrorBody]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CodesWaitRequest,
) -> Response[Union[CodeOut, ErrorBody, ValidationErrorBody]]:
    """Waits for a verification code by SMS or by mail, whichever comes first.

     Beyond the spec: sign-up flows send a code by SMS or by mail. Takes the body of
    `wait-for-code` plus `channels` (`sms`, `email`, or both; every channel the agent has when
    omitted) and answers with the newest unseen code from any of them, with its `channel` and the
    message's id; the same seen, `request_id`, `timeout` and 408 rules.

    Needs a key with the scope `codes:read`.

    Args:
        body (CodesWaitRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[CodeOut, ErrorBody, ValidationErrorBody]]
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
    body: CodesWaitRequest,
) -> Optional[Union[CodeOut, ErrorBody, ValidationErrorBody]]:
    """Waits for a verification code by SMS or by mail, whichever comes first.

     Beyond the spec: sign-up flows send a code by SMS or by mail. Takes the body of
    `wait-for-code` plus `channels` (`sms`, `email`, or both; every channel the agent has when
    omitted) and answers with the newest unseen code from any of them, with its `channel` and the
    message's id; the same seen, `request_id`, `timeout` and 408 rules.

    Needs a key with the scope `codes:read`.

    Args:
        body (CodesWaitRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[CodeOut, ErrorBody, ValidationErrorBody]
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CodesWaitRequest,
) -> Response[Union[CodeOut, ErrorBody, ValidationErrorBody]]:
    """Waits for a verification code by SMS or by mail, whichever comes first.

     Beyond the spec: sign-up flows send a code by SMS or by mail. Takes the body of
    `wait-for-code` plus `channels` (`sms`, `email`, or both; every channel the agent has when
    omitted) and answers with the newest unseen code from any of them, with its `channel` and the
    message's id; the same seen, `request_id`, `timeout` and 408 rules.

    Needs a key with the scope `codes:read`.

    Args:
        body (CodesWaitRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[CodeOut, ErrorBody, ValidationErrorBody]]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: CodesWaitRequest,
) -> Optional[Union[CodeOut, ErrorBody, ValidationErrorBody]]:
    """Waits for a verification code by SMS or by mail, whichever comes first.

     Beyond the spec: sign-up flows send a code by SMS or by mail. Takes the body of
    `wait-for-code` plus `channels` (`sms`, `email`, or both; every channel the agent has when
    omitted) and answers with the newest unseen code from any of them, with its `channel` and the
    message's id; the same seen, `request_id`, `timeout` and 408 rules.

    Needs a key with the scope `codes:read`.

    Args:
        body (CodesWaitRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[CodeOut, ErrorBody, ValidationErrorBody]
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
