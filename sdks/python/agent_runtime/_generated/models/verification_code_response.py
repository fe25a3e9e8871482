import datetime
from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from ..types import UNSET, Unset, isoparse

T = TypeVar("T", bound="VerificationCodeResponse")


@_dataclass
class VerificationCodeResponse:
    """A verification code that arrived by SMS.

    Attributes:
        from_number (str):
        raw_message (str):
        received_at (datetime.datetime):
        code (Union[None, Unset, str]): The code found in the message; null when the message holds none.
        request_id (Union[None, Unset, str]):
    """

    from_number: str
    raw_message: str
    received_at: datetime.datetime
    code: Union[None, Unset, str] = UNSET
    request_id: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from_number = self.from_number

        raw_message = self.raw_message

        received_at = self.received_at.isoformat()

        code: Union[None, Unset, str]
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        request_id: Union[None, Unset, str]
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "from_number": from_number,
                "raw_message": raw_message,
                "received_at": received_at,
            }
        )
        if code is not UNSET:
            field_dict["code"] = code
        if request_id is not UNSET:
            field_dict["request_id"] = request_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        from_number = d.pop("from_number")

        raw_message = d.pop("raw_message")

        received_at = isoparse(d.pop("received_at"))

        def _parse_code(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        code = _parse_code(d.pop("code", UNSET))

        def _parse_request_id(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        request_id = _parse_request_id(d.pop("request_id", UNSET))

        verification_code_response = cls(
            from_number=from_number,
            raw_message=raw_message,
            received_at=received_at,
            code=code,
            request_id=request_id,
        )

        verification_code_response.additional_properties = d
        return verification_code_response

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
