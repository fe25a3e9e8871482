from http import HTTPStatus
from typing import Any, Optional, Union

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.thread_detail_out import ThreadDetailOut
from ...types import Response


def _get_kwargs(
    thread_id: str,
) -> dict[str, Any]:
    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/email/threads/{thread_id}".format(
            thread_id=thread_id,
        ),
    }

    return _kwargs


def _parse_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Optional[Union[ErrorBody, ThreadDetailOut]]:
    if response.status_code == 200:
        response_200 = ThreadDetailOut.from_dict(response.json())

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

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: Union[AuthenticatedClient, Client], response: httpx.Response
) -> Response[Union[ErrorBody, ThreadDetailOut]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    thread_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[Union[ErrorBody, ThreadDetailOut]]:
    """A thread of the agent's inbox, its messages oldest first.

     Its subject and participants as the list of threads gives them, and its messages with full
    bodies (the newest 100 of a longer thread, `earlier_messages_omitted` counting the rest).

    Needs a key with the scope `email:read`.

    Args:
        thread_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ThreadDetailOut]]
    """

    kwargs = _get_kwargs(
        thread_id=thread_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    thread_id: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[ErrorBody, ThreadDetailOut]]:
    """A thread of the agent's inbox, its messages oldest first.

     Its subject and participants as the list of threads gives them, and its messages with full
    bodies (the newest 100 of a longer thread, `earlier_messages_omitted` counting the rest).

    Needs a key with the scope `email:read`.

    Args:
        thread_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ThreadDetailOut]
    """

    return sync_detailed(
        thread_id=thread_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    thread_id: str,
    *,
    client: AuthenticatedClient,
) -> Response[Union[ErrorBody, ThreadDetailOut]]:
    """A thread of the agent's inbox, its messages oldest first.

     Its subject and participants as the list of threads gives them, and its messages with full
    bodies (the newest 100 of a longer thread, `earlier_messages_omitted` counting the rest).

    Needs a key with the scope `email:read`.

    Args:
        thread_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Union[ErrorBody, ThreadDetailOut]]
    """

    kwargs = _get_kwargs(
        thread_id=thread_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    thread_id: str,
    *,
    client: AuthenticatedClient,
) -> Optional[Union[ErrorBody, ThreadDetailOut]]:
    """A thread of the agent's inbox, its messages oldest first.

     Its subject and participants as the list of threads gives them, and its messages with full
    bodies (the newest 100 of a longer thread, `earlier_messages_omitted` counting the rest).

    Needs a key with the scope `email:read`.

    Args:
        thread_id (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Union[ErrorBody, ThreadDetailOut]
    """

    return (
        await asyncio_detailed(
            thread_id=thread_id,
            client=client,
        )
    ).parsed
