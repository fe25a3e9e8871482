from collections.abc import Mapping
from dataclasses import dataclass as _dataclass
from dataclasses import field as _dataclass_field
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from ..types import UNSET, Unset

T = TypeVar("T", bound="SmsRawPayload")


@_dataclass
class SmsRawPayload:
    """The provider's record of a message.

    Attributes:
        from_number (str):
        provider_message_id (str):
        raw_message (str):
        source (str): How it came in: `webhook`, `sync` or `sandbox`.
        to_number (str):
        parsed_code (Union[None, Unset, str]): The most likely verification code in the message.
        provider_received_at (Union[None, Unset, str]): When the provider received it (RFC 3339), when it says.
        service_name (Union[None, Unset, str]): The service the message names itself as coming from.
    """

    from_number: str
    provider_message_id: str
    raw_message: str
    source: str
    to_number: str
    parsed_code: Union[None, Unset, str] = UNSET
    provider_received_at: Union[None, Unset, str] = UNSET
    service_name: Union[None, Unset, str] = UNSET
    additional_properties: dict[str, Any] = _dataclass_field(init=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from_number = self.from_number

        provider_message_id = self.provider_message_id

        raw_message = self.raw_message

        source = self.source

        to_number = self.to_number

        parsed_code: Union[None, Unset, str]
        if isinstance(self.parsed_code, Unset):
            parsed_code = UNSET
        else:
            parsed_code = self.parsed_code

        provider_received_at: Union[None, Unset, str]
        if isinstance(self.provider_received_at, Unset):
            provider_received_at = UNSET
        else:
            provider_received_at = self.provider_received_at

        service_name: Union[None, Unset, str]
        if isinstance(self.service_name, Unset):
            service_name = UNSET
        else:
            service_name = self.service_name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "from_number": from_number,
                "provider_message_id": provider_message_id,
                "raw_message": raw_message,
                "source": source,
                "to_number": to_number,
            }
        )
        if parsed_code is not UNSET:
            field_dict["parsed_code"] = parsed_code
        if provider_received_at is not UNSET:
            field_dict["provider_received_at"] = provider_received_at
        if service_name is not UNSET:
            field_dict["service_name"] = service_name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        from_number = d.pop("from_number")

        provider_message_id = d.pop("provider_message_id")

        raw_message = d.pop("raw_message")

        source = d.pop("source")

        to_number = d.pop("to_number")

        def _parse_parsed_code(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        parsed_code = _parse_parsed_code(d.pop("parsed_code", UNSET))

        def _parse_provider_received_at(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        provider_received_at = _parse_provider_received_at(d.pop("provider_received_at", UNSET))

        def _parse_service_name(data: object) -> Union[None, Unset, str]:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(Union[None, Unset, str], data)

        service_name = _parse_service_name(d.pop("service_name", UNSET))

        sms_raw_payload = cls(
            from_number=from_number,
            provider_message_id=provider_message_id,
            raw_message=raw_message,
            source=source,
            to_number=to_number,
            parsed_code=parsed_code,
            provider_received_at=provider_received_at,
            service_name=service_name,
        )

        sms_raw_payload.additional_properties = d
        return sms_raw_payload

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
