from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
    Union,
    cast,
)

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.x402_fetch_request_headers_type_0 import X402FetchRequestHeadersType0


T = TypeVar("T", bound="X402FetchRequest")


@_dataclass
class X402FetchRequest:
    """A resource to fetch for the agent, paid from the wallet when it answers 402.

    Attributes:
        idempotency_key (str): The same key pays at most one authorization: a fetch repeated with it sends the same
            payment header.
        max_amount_atomic (str): The agent's own ceiling in atomic units: a challenge asking more is refused (403, rule
            `max_amount`) before the policy is asked.
        url (str): `https` (plain `http` only to private addresses, where those are allowed), no
            credentials, no fragment; at most 2,048 characters.
        body (Union[None, Unset, str]): The request's body, at most 1 MiB.
        headers (Union['X402FetchRequestHeadersType0', None, Unset]): Headers to send, at most 32; not `Authorization`,
            `Cookie`, `Host`, hop-by-hop headers,
            `Content-Length` or the payment headers.
        method (Union[None, Unset, str]): GET (the default), POST, PUT or DELETE.
    """

    idempotency_key: str
    max_amount_atomic: str
    url: str
    body: Union[None, Unset, str] = UNSET
    headers: Union["X402FetchRequestHeadersType0", None, Unset] = UNSET
    method: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.x402_fetch_request_headers_type_0 import (
            X402FetchRequestHeadersType0,
        )

        idempotency_key = self.idempotency_key

        max_amount_atomic = self.max_amount_atomic

        url = self.url

        body: Union[None, Unset, str]
        if isinstance(self.body, Unset):
            body = UNSET
        else:
            body = self.body

        headers: Union[None, Unset, dict[str, Any]]
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, X402FetchRequestHeadersType0):
            headers = self.headers.to_dict()
        else:
            headers = self.headers

        method: Union[None, Unset, str]
        if isinstance(self.method, Unset):
            method = UNSET
        else:
            method = self.method

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "idempotency_key": idempotency_key,
                "max_amount_atomic": max_amount_atomic,
                "url": url,
            }
        )
        if body is not UNSET:
            field_dict["body"] = body
        if headers is not UNSET:
            field_dict["headers"] = headers
        if method is not UNSET:
            field_dict["method"] = method

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.x402_fetch_request_headers_type_0 import (
            X402FetchRequestHeadersType0,
        )

        d = dict(src_dict)
        idempotency_key = d.pop("idempotency_key")

        max_amount_atomic = d.pop("max_amount_atomic")

        url = d.pop("url")

        def _parse_body(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        body = _parse_body(d.pop("body", UNSET))

        def _parse_headers(data: object) -> Union["X402FetchRequestHeadersType0", None, Unset]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                headers_type_0 = X402FetchRequestHeadersType0.from_dict(data)

                return headers_type_0
            except:  # noqa: E722
                pass
            return cast(Union["X402FetchRequestHeadersType0", None, Unset], data)

        headers = _parse_headers(d.pop("headers", UNSET))

        def _parse_method(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        method = _parse_method(d.pop("method", UNSET))

        x402_fetch_request = cls(
            idempotency_key=idempotency_key,
            max_amount_atomic=max_amount_atomic,
            url=url,
            body=body,
            headers=headers,
            method=method,
        )

        x402_fetch_request.additional_properties = d
        return x402_fetch_request

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
