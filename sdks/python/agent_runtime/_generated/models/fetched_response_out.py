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
    from ..models.fetched_response_out_headers import FetchedResponseOutHeaders


T = TypeVar("T", bound="FetchedResponseOut")


@_dataclass
class FetchedResponseOut:
    """The resource's answer: its status, the headers shown (`content-type`, `content-length`,
    `payment-response`, `etag`, `cache-control`) and its body, as text or, when not UTF-8, in
    `body_base64`.

        Attributes:
            headers (FetchedResponseOutHeaders):
            status (int):
            body (Union[None, Unset, str]):
            body_base64 (Union[None, Unset, str]):
    """

    headers: "FetchedResponseOutHeaders"
    status: int
    body: Union[None, Unset, str] = UNSET
    body_base64: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        headers = self.headers.to_dict()

        status = self.status

        body: Union[None, Unset, str]
        if isinstance(self.body, Unset):
            body = UNSET
        else:
            body = self.body

        body_base64: Union[None, Unset, str]
        if isinstance(self.body_base64, Unset):
            body_base64 = UNSET
        else:
            body_base64 = self.body_base64

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "headers": headers,
                "status": status,
            }
        )
        if body is not UNSET:
            field_dict["body"] = body
        if body_base64 is not UNSET:
            field_dict["body_base64"] = body_base64

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.fetched_response_out_headers import FetchedResponseOutHeaders

        d = dict(src_dict)
        headers = FetchedResponseOutHeaders.from_dict(d.pop("headers"))

        status = d.pop("status")

        def _parse_body(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        body = _parse_body(d.pop("body", UNSET))

        def _parse_body_base64(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        body_base64 = _parse_body_base64(d.pop("body_base64", UNSET))

        fetched_response_out = cls(
            headers=headers,
            status=status,
            body=body,
            body_base64=body_base64,
        )

        fetched_response_out.additional_properties = d
        return fetched_response_out

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
